/* tests/fuzz/fuzz_obj.c: libFuzzer harness for the OBJ reader and the mesh mass properties
 * (sim/mesh_inertia.c).
 *
 * Properties: any text either gives triangles or is refused with a message naming the file,
 * never a crash, leak, read past the input or undefined behaviour; accepted triangles, in both
 * of MuJoCo's modes (equivalent box, exact volume), either give a finite centre of mass, a
 * positive volume and a symmetric inertia, or are refused with a message naming the file. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/mesh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) {
    return 0;
  }
  memcpy(text, data, size);
  text[size] = '\0';
  float *tri = NULL;
  int ntri = 0;
  char err[512] = "";
  const int rc = sim_obj_parse(&tri, &ntri, text, "fuzz.obj", err, sizeof err);
  free(text);
  if (rc != 0) {
    if (!strstr(err, "fuzz.obj") || tri) {
      abort();
    }
    return 0;
  }
  const double scale[3] = {1, -2, 0.5};
  for (int exact = 0; exact < 2; exact++) {
    sim_mesh_mass mm;
    if (sim_mesh_inertia(&mm, tri, ntri, scale, exact, "fuzz.obj", err, sizeof err) == 0) {
      for (int k = 0; k < 3; k++) {
        if (!isfinite(mm.com[k])) {
          abort();
        }
      }
      if (!(mm.volume > 0) || !(mm.box_volume >= 0) || mm.inertia[1] != mm.inertia[3]) {
        abort();
      }
    } else if (!strstr(err, "fuzz.obj")) {
      abort();
    }
  }
  free(tri);
  return 0;
}
