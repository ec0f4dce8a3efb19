/* tests/fuzz/fuzz_stl.c: libFuzzer harness for the STL reader and the hull builder (sim/mesh.c).
 *
 * Properties: any bytes either give triangles whose hull is built or refused with a message
 * naming the file, never a crash, leak, read past the input or undefined behaviour; an accepted
 * hull has 4 to SIM_HULL_VERT_MAX vertices, each listed with neighbours that are hull vertices. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/mesh.h"
#include "sim/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  float *tri = NULL;
  int ntri = 0;
  char err[512] = "";
  if (sim_stl_parse(&tri, &ntri, data, size, "fuzz.stl", err, sizeof err) != 0) {
    if (!strstr(err, "fuzz.stl") || tri) {
      abort();
    }
    return 0;
  }
  const double scale[3] = {1, -2, 0.5};
  sim_hull h;
  if (sim_hull_build(&h, tri, ntri, scale, "fuzz.stl", err, sizeof err) == 0) {
    if (h.nvert < 4 || h.nvert > SIM_HULL_VERT_MAX) {
      abort();
    }
    for (int i = 0; i < h.nvert; i++) {
      for (int e = h.graph[i]; h.graph[h.nvert + e] >= 0; e++) {
        const int v = h.graph[h.nvert + e];
        if (v >= h.nvert || v == i || h.nvert + e >= h.ngraph) {
          abort();
        }
      }
    }
    sim_hull_free(&h);
  } else if (!strstr(err, "fuzz.stl")) {
    abort();
  }
  free(tri);
  return 0;
}
