/* sim/mesh.c: STL files read, their convex hulls built (see mesh.h). */
#include "sim/mesh.h"
#include "sim/file_read.h"

#include "sim/model.h"

#include <ctype.h>
#include <errno.h>
#include <libqhull_r/qhull_ra.h>
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* largest coordinate accepted (MuJoCo's bound: 2³⁰) */
#define MESH_COORD_MAX 1073741824.0

/* --- STL -------------------------------------------------------------------------------------- */

static uint32_t read_u32le(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float read_f32le(const unsigned char *p) {
  const uint32_t bits = read_u32le(p);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static int finite_coord(double v) {
  return isfinite(v) && fabs(v) <= MESH_COORD_MAX;
}

/* binary: an 80-byte header, the triangle count, then 50 bytes per triangle (normal, three
 * vertices, attribute count) */
static int parse_binary(float *vert, const unsigned char *data, uint32_t ntri, const char *name,
                        char *err, size_t err_sz) {
  for (uint32_t t = 0; t < ntri; t++) {
    const unsigned char *tri = data + 84 + 50 * (size_t)t + 12;
    for (int k = 0; k < 9; k++) {
      const float v = read_f32le(tri + 4 * k);
      if (!finite_coord(v)) {
        snprintf(err, err_sz, "%s: triangle %u: vertex coordinate %g is not a finite number "
                 "within ±2^30", name, t, (double)v);
        return -1;
      }
      vert[9 * (size_t)t + k] = v;
    }
  }
  return 0;
}

/* a cursor over ASCII STL text: words separated by white space, lines counted */
typedef struct stl_text {
  const unsigned char *p, *end;
  int line;
  char word[64];
} stl_text;

/* the next word into t->word; 0 at the end of the text */
static int next_word(stl_text *t) {
  while (t->p < t->end && isspace(*t->p)) {
    t->line += *t->p == '\n';
    t->p++;
  }
  size_t n = 0;
  while (t->p < t->end && !isspace(*t->p)) {
    if (n + 1 < sizeof t->word) {
      t->word[n++] = (char)*t->p;
    }
    t->p++;
  }
  t->word[n] = '\0';
  return n > 0;
}

static void skip_line(stl_text *t) {
  while (t->p < t->end && *t->p != '\n') {
    t->p++;
  }
}

static int expect_word(stl_text *t, const char *want, const char *name, char *err, size_t err_sz) {
  if (next_word(t) && strcmp(t->word, want) == 0) {
    return 0;
  }
  snprintf(err, err_sz, "%s:%d: expected \"%s\" (got %s%s%s)", name, t->line, want,
           t->word[0] ? "\"" : "the end of the file", t->word, t->word[0] ? "\"" : "");
  return -1;
}

static int read_number(stl_text *t, float *out, const char *name, char *err, size_t err_sz) {
  char *end = NULL;
  errno = 0;
  const double v = next_word(t) ? strtod(t->word, &end) : NAN;
  if (!end || *end != '\0' || !finite_coord(v) || errno == ERANGE) {
    snprintf(err, err_sz, "%s:%d: expected a finite number within ±2^30 (got \"%s\")", name,
             t->line, t->word);
    return -1;
  }
  *out = (float)v;
  return 0;
}

/* one "facet normal n n n outer loop vertex x y z (3×) endloop endfacet" */
static int parse_facet(stl_text *t, float tri[9], const char *name, char *err, size_t err_sz) {
  float normal[3];
  if (expect_word(t, "normal", name, err, err_sz)) {
    return -1;
  }
  for (int k = 0; k < 3; k++) {
    if (read_number(t, &normal[k], name, err, err_sz)) {
      return -1;
    }
  }
  if (expect_word(t, "outer", name, err, err_sz) || expect_word(t, "loop", name, err, err_sz)) {
    return -1;
  }
  for (int v = 0; v < 3; v++) {
    if (expect_word(t, "vertex", name, err, err_sz)) {
      return -1;
    }
    for (int k = 0; k < 3; k++) {
      if (read_number(t, &tri[3 * v + k], name, err, err_sz)) {
        return -1;
      }
    }
  }
  return expect_word(t, "endloop", name, err, err_sz) ||
                 expect_word(t, "endfacet", name, err, err_sz)
             ? -1
             : 0;
}

/* ASCII: "solid NAME", facets, "endsolid [NAME]" (several solids are read in turn). With
 * vert NULL only counts the triangles. */
static int parse_ascii(float *vert, size_t *ntri, const unsigned char *data, size_t size,
                       const char *name, char *err, size_t err_sz) {
  stl_text t = {data, data + size, 1, ""};
  *ntri = 0;
  int solids = 0;
  while (next_word(&t)) {
    if (strcmp(t.word, "solid") != 0) {
      snprintf(err, err_sz, "%s:%d: expected \"solid\" (got \"%s\")", name, t.line, t.word);
      return -1;
    }
    skip_line(&t); /* the solid's name */
    solids++;
    for (;;) {
      if (!next_word(&t)) {
        snprintf(err, err_sz, "%s:%d: the file ends inside a solid (expected \"facet\" or "
                 "\"endsolid\")", name, t.line);
        return -1;
      }
      if (strcmp(t.word, "endsolid") == 0) {
        skip_line(&t);
        break;
      }
      if (strcmp(t.word, "facet") != 0) {
        snprintf(err, err_sz, "%s:%d: expected \"facet\" or \"endsolid\" (got \"%s\")", name,
                 t.line, t.word);
        return -1;
      }
      float tri[9];
      if (parse_facet(&t, tri, name, err, err_sz)) {
        return -1;
      }
      if (*ntri >= SIM_STL_TRIANGLES_MAX) {
        snprintf(err, err_sz, "%s: more than %d triangles", name, SIM_STL_TRIANGLES_MAX);
        return -1;
      }
      if (vert) {
        memcpy(vert + 9 * *ntri, tri, sizeof tri);
      }
      (*ntri)++;
    }
  }
  if (solids == 0 || *ntri == 0) {
    snprintf(err, err_sz, "%s: no triangles", name);
    return -1;
  }
  return 0;
}

/* merges repeated vertices (exactly equal), keeping each first one in file order */
static const float *sort_base;
static int cmp_vertex(const void *a, const void *b) {
  const int i = *(const int *)a, j = *(const int *)b;
  for (int k = 0; k < 3; k++) {
    const float x = sort_base[3 * i + k], y = sort_base[3 * j + k];
    if (x != y) {
      return x < y ? -1 : 1;
    }
  }
  return (i > j) - (i < j);
}

static int merge_repeated(float *vert, int n) {
  int *order = malloc((size_t)n * sizeof *order);
  unsigned char *drop = calloc((size_t)n, 1);
  if (!order || !drop) {
    free(order);
    free(drop);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    order[i] = i;
  }
  sort_base = vert;
  qsort(order, (size_t)n, sizeof *order, cmp_vertex);
  for (int i = 1; i < n; i++) { /* within a run of equal vertices the first has the least index */
    const float *a = vert + 3 * order[i - 1], *b = vert + 3 * order[i];
    drop[order[i]] = a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
  }
  int kept = 0;
  for (int i = 0; i < n; i++) {
    if (!drop[i]) {
      memmove(vert + 3 * kept++, vert + 3 * i, 3 * sizeof *vert);
    }
  }
  free(order);
  free(drop);
  return kept;
}

int sim_stl_parse(float **tri, int *ntri_out, const unsigned char *data, size_t size,
                  const char *name, char *err, size_t err_sz) {
  *tri = NULL;
  *ntri_out = 0;
  const uint32_t nbin = size >= 84 ? read_u32le(data + 80) : 0;
  const int binary = size >= 84 && nbin > 0 && (size - 84) / 50 == nbin && (size - 84) % 50 == 0;
  size_t ntri = nbin;
  size_t start = 0;
  while (start < size && isspace(data[start])) {
    start++;
  }
  const int ascii = !binary && size - start >= 5 && memcmp(data + start, "solid", 5) == 0;
  if (!binary && !ascii) {
    if (size < 84) {
      snprintf(err, err_sz, "%s: not an STL file (%zu bytes: a binary STL has an 84-byte header, "
               "an ASCII one starts with \"solid\")", name, size);
    } else {
      snprintf(err, err_sz, "%s: not an STL file: as binary its header counts %u triangles, "
               "which take %.0f bytes, but the file has %zu (and it does not start with "
               "\"solid\" as ASCII STL does)", name, nbin, 84 + 50.0 * nbin, size);
    }
    return -1;
  }
  if (binary && nbin > SIM_STL_TRIANGLES_MAX) {
    snprintf(err, err_sz, "%s: %u triangles, more than %d", name, nbin, SIM_STL_TRIANGLES_MAX);
    return -1;
  }
  if (ascii && parse_ascii(NULL, &ntri, data, size, name, err, err_sz)) {
    return -1;
  }
  float *v = malloc(9 * ntri * sizeof *v);
  if (!v) {
    snprintf(err, err_sz, "%s: out of memory for %zu triangles", name, ntri);
    return -1;
  }
  const int rc = binary ? parse_binary(v, data, nbin, name, err, err_sz)
                        : parse_ascii(v, &ntri, data, size, name, err, err_sz);
  if (rc) {
    free(v);
    return -1;
  }
  *tri = v;
  *ntri_out = (int)ntri;
  return 0;
}

/* --- hull --------------------------------------------------------------------------------------- */

void sim_hull_free(sim_hull *h) {
  free(h->vert);
  free(h->graph);
  memset(h, 0, sizeof *h);
}

/* the hull's vertices (Qhull's vertex order) and its graph, unscaled; 0 or -1 (out of memory) */
static int copy_hull(sim_hull *h, qhT *qh, int npoints) {
  int *local = malloc((size_t)npoints * sizeof *local);
  h->nvert = qh->num_vertices;
  h->ngraph = h->nvert + h->nvert + 3 * qh->num_facets; /* edges: at most 3 per face, plus −1s */
  h->vert = malloc(3 * (size_t)h->nvert * sizeof *h->vert);
  h->graph = malloc((size_t)h->ngraph * sizeof *h->graph);
  if (!local || !h->vert || !h->graph) {
    free(local);
    return -1;
  }
  vertexT *vertex;
  int i = 0;
  FORALLvertices {
    const int pid = qh_pointid(qh, vertex->point);
    local[pid] = i;
    memcpy(h->vert + 3 * i, vertex->point, 3 * sizeof *h->vert);
    i++;
  }
  int *edgeadr = h->graph, *edges = h->graph + h->nvert, adr = 0;
  i = 0;
  FORALLvertices {
    const int self = i++, start = adr;
    edgeadr[self] = adr;
    facetT *facet, **facetp;
    FOREACHfacet_(vertex->neighbors) {
      vertexT *other, **otherp;
      FOREACHsetelement_(vertexT, facet->vertices, other) {
        const int id = local[qh_pointid(qh, other->point)];
        int seen = id == self;
        for (int e = start; e < adr && !seen; e++) {
          seen = edges[e] == id;
        }
        if (!seen && adr < h->ngraph - h->nvert - 1) {
          edges[adr++] = id;
        }
      }
    }
    edges[adr++] = -1;
  }
  h->ngraph = h->nvert + adr;
  free(local);
  return 0;
}

/* area and unit normal of a triangle (0 when degenerate), its centre into cen */
double sim__mesh_triangle(double nrm[3], double cen[3], const float *a, const float *b,
                          const float *c) {
  for (int k = 0; k < 3; k++) {
    cen[k] = (a[k] + b[k] + c[k]) / 3; /* float sums, as MuJoCo's compiler */
  }
  const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
  const double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
  nrm[0] = u[1] * v[2] - u[2] * v[1];
  nrm[1] = u[2] * v[0] - u[0] * v[2];
  nrm[2] = u[0] * v[1] - u[1] * v[0];
  const double len = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
  if (len < 1e-15) {
    return 0;
  }
  for (int k = 0; k < 3; k++) {
    nrm[k] /= len;
  }
  return len / 2;
}

/* The mesh's centre as MuJoCo 2.2.2's compiler computes it (the geom frame it collides from):
 * pyramids from the area-weighted centre of the faces to each face, weighted by their unsigned
 * volumes. A convex combination of points of the hull, so inside it; the true centroid for a
 * closed convex mesh. -1 when the mesh has no area or no volume. */
static int mesh_centre(double out[3], const float *tri, int ntri) {
  double facecen[3] = {0, 0, 0}, area = 0, volume = 0, com[3] = {0, 0, 0}, nrm[3], cen[3];
  for (int t = 0; t < ntri; t++) {
    const float *p = tri + 9 * t;
    const double a = sim__mesh_triangle(nrm, cen, p, p + 3, p + 6);
    for (int k = 0; k < 3; k++) {
      facecen[k] += a * cen[k];
    }
    area += a;
  }
  if (area < 1e-15) {
    return -1;
  }
  for (int k = 0; k < 3; k++) {
    facecen[k] /= area;
  }
  for (int t = 0; t < ntri; t++) {
    const float *p = tri + 9 * t;
    const double a = sim__mesh_triangle(nrm, cen, p, p + 3, p + 6);
    const double vec[3] = {cen[0] - facecen[0], cen[1] - facecen[1], cen[2] - facecen[2]};
    const double vol = fabs((vec[0] * nrm[0] + vec[1] * nrm[1] + vec[2] * nrm[2]) * a / 3);
    volume += vol;
    for (int k = 0; k < 3; k++) {
      com[k] += vol * (cen[k] * 3.0 / 4.0 + facecen[k] / 4.0);
    }
  }
  if (volume < 1e-15) {
    return -1;
  }
  for (int k = 0; k < 3; k++) {
    out[k] = com[k] / volume;
  }
  return 0;
}

/* What a Qhull run keeps of the hull it found: 0, or -1 with a message. */
typedef int (*hull_collect)(void *out, qhT *qh, int npoints, const char *name, char *err,
                            size_t err_sz);

/* the hull for collisions: its vertices and graph */
static int collect_hull(void *out, qhT *qh, int npoints, const char *name, char *err,
                        size_t err_sz) {
  if (qh->num_vertices > SIM_HULL_VERT_MAX) {
    snprintf(err, err_sz, "%s: its convex hull has %d vertices, more than %d: simplify the mesh",
             name, qh->num_vertices, SIM_HULL_VERT_MAX);
    return -1;
  }
  if (copy_hull(out, qh, npoints)) {
    snprintf(err, err_sz, "%s: out of memory", name);
    return -1;
  }
  return 0;
}

/* Qhull with MuJoCo 2.2.2's options and calls; its error text (first line) into err */
static int run_qhull(void *out, hull_collect collect, double *points, int n, const char *name,
                     char *err, size_t err_sz) {
  char *text = NULL;
  size_t text_sz = 0;
  FILE *errfile = open_memstream(&text, &text_sz);
  if (!errfile) {
    snprintf(err, err_sz, "%s: out of memory", name);
    return -1;
  }
  qhT qh_qh;
  qhT *qh = &qh_qh;
  qh_zero(qh, errfile);
  qh_init_A(qh, stdin, errfile, errfile, 0, NULL);
  volatile int rc = -1, stage = 0; /* volatile: set after setjmp, read after a longjmp */
  if (setjmp(qh->errexit) == 0) {
    qh->NOerrexit = False;
    char options[] = "qhull Qt";
    qh_initflags(qh, options);
    qh_init_B(qh, points, n, 3, False);
    qh_qhull(qh);
    qh_triangulate(qh);
    qh_vertexneighbors(qh);
    stage = 1;
    rc = collect(out, qh, n, name, err, err_sz);
  }
  qh->NOerrexit = True;
  int curlong, totlong;
  qh_freeqhull(qh, !qh_ALL);
  qh_memfreeshort(qh, &curlong, &totlong);
  fclose(errfile);
  if (stage == 0) {
    const size_t line = text ? strcspn(text, "\n") : 0;
    snprintf(err, err_sz, "%s: no convex hull (the vertices may be fewer than 4 or all in one "
             "plane): Qhull says %.*s", name, (int)line, text ? text : "nothing");
  }
  free(text);
  return rc;
}

/* the hull's bounds: about the file's origin, and about its centre */
static void hull_bounds(sim_hull *h) {
  for (int i = 0; i < h->nvert; i++) {
    const double *v = h->vert + 3 * i;
    const double d[3] = {v[0] - h->center[0], v[1] - h->center[1], v[2] - h->center[2]};
    h->rbound = fmax(h->rbound, sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
    h->rbound_center = fmax(h->rbound_center, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
  }
}

int sim_hull_build(sim_hull *h, const float *tri, int ntri, const double scale[3],
                   const char *name, char *err, size_t err_sz) {
  memset(h, 0, sizeof *h);
  float *vert = malloc(9 * (size_t)ntri * sizeof *vert);
  double *points = malloc(9 * (size_t)ntri * sizeof *points);
  const int nvert = vert && points ? (memcpy(vert, tri, 9 * (size_t)ntri * sizeof *vert),
                                      merge_repeated(vert, 3 * ntri))
                                   : -1;
  int rc = -1;
  if (nvert < 0) {
    snprintf(err, err_sz, "%s: out of memory", name);
  } else if (nvert < 4) {
    snprintf(err, err_sz, "%s: %d distinct vertices, a solid needs at least 4", name, nvert);
  } else {
    for (int i = 0; i < 3 * nvert; i++) {
      points[i] = vert[i];
    }
    rc = run_qhull(h, collect_hull, points, nvert, name, err, err_sz); /* unscaled, as MuJoCo */
  }
  free(points);
  if (rc == 0) { /* scaled vertices, then the centre of the scaled mesh */
    for (int i = 0; i < 9 * ntri; i++) {
      vert[i] = (float)(tri[i] * scale[i % 3]);
    }
    for (int i = 0; i < 3 * h->nvert; i++) {
      h->vert[i] *= scale[i % 3];
    }
    if (mesh_centre(h->center, vert, ntri)) {
      snprintf(err, err_sz, "%s: the mesh has no volume", name);
      rc = -1;
    }
  }
  free(vert);
  if (rc) {
    sim_hull_free(h);
    return -1;
  }
  hull_bounds(h);
  return 0;
}

/* --- faces, for drawing --------------------------------------------------------------------------- */

typedef struct hull_faces {
  const double *vert;
  int *tri, ntri;
} hull_faces;

/* every (triangulated) facet, its vertices as indices of the input points, wound so that the
 * facet's outward normal is (b - a) x (c - a) */
static int collect_faces(void *out, qhT *qh, int npoints, const char *name, char *err,
                         size_t err_sz) {
  (void)npoints;
  hull_faces *f = out;
  f->tri = malloc(3 * (size_t)(qh->num_facets > 0 ? qh->num_facets : 1) * sizeof *f->tri);
  if (!f->tri) {
    snprintf(err, err_sz, "%s: out of memory", name);
    return -1;
  }
  facetT *facet;
  FORALLfacets {
    int id[3], k = 0;
    vertexT *vertex, **vertexp;
    FOREACHvertex_(facet->vertices) {
      if (k < 3) {
        id[k++] = qh_pointid(qh, vertex->point);
      }
    }
    if (k < 3) {
      continue;
    }
    const double *a = f->vert + 3 * id[0], *b = f->vert + 3 * id[1], *c = f->vert + 3 * id[2];
    const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    const double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                         u[0] * v[1] - u[1] * v[0]};
    if (n[0] * facet->normal[0] + n[1] * facet->normal[1] + n[2] * facet->normal[2] < 0) {
      const int t = id[1];
      id[1] = id[2], id[2] = t;
    }
    memcpy(f->tri + 3 * f->ntri++, id, sizeof id);
  }
  return 0;
}

int sim_hull_faces(int **tri, int *ntri, const double *vert, int nvert, char *err,
                   size_t err_sz) {
  hull_faces f = {vert, NULL, 0};
  double *points = malloc(3 * (size_t)(nvert > 0 ? nvert : 1) * sizeof *points);
  int rc = -1;
  if (!points) {
    snprintf(err, err_sz, "hull faces: out of memory");
  } else {
    memcpy(points, vert, 3 * (size_t)nvert * sizeof *points);
    rc = run_qhull(&f, collect_faces, points, nvert, "hull faces", err, err_sz);
  }
  free(points);
  if (rc != 0) {
    free(f.tri);
    return -1;
  }
  *tri = f.tri;
  *ntri = f.ntri;
  return 0;
}

int sim_hull_from_stl(sim_hull *h, const char *path, const double scale[3], char *err,
                      size_t err_sz) {
  memset(h, 0, sizeof *h);
  FILE *f = sim_file_open(path, 0, 0, err, err_sz);
  if (!f) {
    return -1;
  }
  unsigned char *data = NULL;
  size_t size = 0, cap = 0;
  for (;;) {
    if (size == cap) {
      const size_t next = cap ? 2 * cap : 65536;
      unsigned char *grown = next <= (size_t)84 + 50 * (size_t)SIM_STL_TRIANGLES_MAX * 4
                                 ? realloc(data, next)
                                 : NULL;
      if (!grown) {
        snprintf(err, err_sz, "%s: too large to read", path);
        free(data);
        fclose(f);
        return -1;
      }
      data = grown;
      cap = next;
    }
    const size_t got = fread(data + size, 1, cap - size, f);
    size += got;
    if (got == 0) {
      break;
    }
  }
  const int failed = ferror(f);
  fclose(f);
  if (failed) {
    snprintf(err, err_sz, "%s: read error", path);
    free(data);
    return -1;
  }
  float *tri = NULL;
  int ntri = 0;
  int rc = sim_stl_parse(&tri, &ntri, data, size, path, err, err_sz);
  free(data);
  if (rc == 0) {
    rc = sim_hull_build(h, tri, ntri, scale, path, err, err_sz);
  }
  free(tri);
  return rc;
}
