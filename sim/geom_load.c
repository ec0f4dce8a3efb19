/* sim/geom_load.c: the collision geometry of a robot description: "geoms" (meshes through
 * their convex hulls, sim/mesh.c), "max_contacts" and the "exclude" filter (docs/robot-format.md). */
#include "sim/load_internal.h"
#include "sim/mesh.h"
#include "sim/spatial.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const char *const geom_type_names[] = {"plane", "sphere", "capsule", "box", "cylinder",
                                              "mesh"};
static const int geom_nsize[] = {0, 1, 2, 3, 2, 0};
#define GEOM_NTYPES ((int)(sizeof geom_nsize / sizeof geom_nsize[0]))

static int parse_geom_type(const sim_json_ctx *L, const cJSON *obj, const char *path,
                           sim_geom *g) {
  char p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, "type");
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(obj, "type");
  for (int t = 0; cJSON_IsString(type) && t < GEOM_NTYPES; t++) {
    if (strcmp(type->valuestring, geom_type_names[t]) == 0) {
      g->type = (sim_geom_type)t;
      return 0;
    }
  }
  return sim_json_fail(L, p, "missing or unknown (expected \"plane\", \"sphere\", \"capsule\", "
                       "\"box\", \"cylinder\" or \"mesh\")");
}

/* a contact group bitmask: an integer from 0 to 2³¹ − 1, default 1 (MuJoCo's) */
static int read_mask(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                     int *out) {
  double v = 1;
  if (sim_json_read_number(L, obj, path, key, &v, 0)) {
    return -1;
  }
  if (v != floor(v) || v < 0 || v > 2147483647.0) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_join(p, path, key);
    return sim_json_fail(L, p, "expected an integer bitmask from 0 to 2147483647 (got %g)", v);
  }
  *out = (int)v;
  return 0;
}

/* the radius of the sphere about the geom's origin that holds it (MuJoCo's rbound; a plane's 0,
 * a mesh's is set from its hull) */
static double geom_rbound(const sim_geom *g) {
  const double *s = g->size;
  switch (g->type) {
  case SIM_GEOM_SPHERE:
    return s[0];
  case SIM_GEOM_CAPSULE:
    return s[0] + s[1];
  case SIM_GEOM_BOX:
    return sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
  case SIM_GEOM_CYLINDER:
    return sqrt(s[0] * s[0] + s[1] * s[1]);
  default:
    return 0;
  }
}

/* "file" and "scale" belong to a mesh, "size" does not (its file gives it) */
static int check_mesh_keys(const sim_json_ctx *L, const cJSON *obj, const char *path, int type) {
  static const char *const mesh_only[] = {"file", "scale"};
  char p[SIM_JSON_PATH_MAX];
  for (int k = 0; k < 2 && type != SIM_GEOM_MESH; k++) {
    if (cJSON_GetObjectItemCaseSensitive(obj, mesh_only[k])) {
      sim_json_path_join(p, path, mesh_only[k]);
      return sim_json_fail(L, p, "only a \"mesh\" geom has a \"%s\"", mesh_only[k]);
    }
  }
  if (type == SIM_GEOM_MESH && cJSON_GetObjectItemCaseSensitive(obj, "size")) {
    sim_json_path_join(p, path, "size");
    return sim_json_fail(L, p, "a mesh takes its size from its file (use \"scale\")");
  }
  return 0;
}

/* the mesh file's path: as written when absolute, else relative to the robot file's directory
 * (the source's, when it names a path; else the working directory) */
static void mesh_path(char *out, size_t out_sz, const char *source, const char *file) {
  const char *slash = strrchr(source, '/');
  if (file[0] == '/' || !slash) {
    snprintf(out, out_sz, "%s", file);
  } else {
    snprintf(out, out_sz, "%.*s/%s", (int)(slash - source), source, file);
  }
}

/* appends hull h to the model's hull arrays as geom g's */
static int append_hull(sim_model *m, sim_geom *g, const sim_hull *h) {
  double *vert = realloc(m->hull_vert, 3 * (size_t)(m->nhull_vert + h->nvert) * sizeof *vert);
  if (vert) {
    m->hull_vert = vert;
  }
  int *graph = realloc(m->hull_graph, (size_t)(m->nhull_graph + h->ngraph) * sizeof *graph);
  if (graph) {
    m->hull_graph = graph;
  }
  if (!vert || !graph) {
    return -1;
  }
  memcpy(m->hull_vert + 3 * m->nhull_vert, h->vert, 3 * (size_t)h->nvert * sizeof *vert);
  memcpy(m->hull_graph + m->nhull_graph, h->graph, (size_t)h->ngraph * sizeof *graph);
  g->hull_adr = m->nhull_vert;
  g->hull_nvert = h->nvert;
  g->graph_adr = m->nhull_graph;
  m->nhull_vert += h->nvert;
  m->nhull_graph += h->ngraph;
  memcpy(g->center, h->center, sizeof g->center);
  g->rbound = h->rbound;
  g->hull_rbound = h->rbound_center;
  return 0;
}

/* a mesh geom's "file" (STL) and "scale" ([sx, sy, sz], default 1, none zero): its hull */
static int load_mesh(const sim_json_ctx *L, const cJSON *obj, const char *path, sim_model *m,
                     sim_geom *g) {
  char file[1024] = "", full[2048], p[SIM_JSON_PATH_MAX], why[1024];
  double scale[3] = {1, 1, 1};
  sim_json_path_join(p, path, "file");
  if (!cJSON_GetObjectItemCaseSensitive(obj, "file")) {
    return sim_json_fail(L, p, "missing (a mesh geom names its STL file)");
  }
  if (sim_json_read_string(L, obj, path, "file", file, sizeof file) ||
      sim_json_read_vector(L, obj, path, "scale", scale, 3, 0)) {
    return -1;
  }
  for (int k = 0; k < 3; k++) {
    if (!(isfinite(scale[k]) && scale[k] != 0)) {
      sim_json_path_join(p, path, "scale");
      return sim_json_fail(L, p, "expected three finite, non-zero factors (element %d is %g)", k,
                           scale[k]);
    }
  }
  mesh_path(full, sizeof full, L->source, file);
  sim_hull h;
  if (sim_hull_from_stl(&h, full, scale, why, sizeof why)) {
    return sim_json_fail(L, p, "%s", why);
  }
  const int rc = append_hull(m, g, &h);
  sim_hull_free(&h);
  return rc ? sim_json_fail(L, p, "out of memory") : 0;
}

static int parse_geom(const sim_json_ctx *L, const cJSON *obj, const char *path,
                      const sim_model *m, sim_geom *g) {
  static const char *const keys[] = {"name",   "body",   "type",    "pos",         "quat",
                                     "size",   "friction", "solref", "solimp",     "contype",
                                     "conaffinity", "condim", "priority", "comment", "file", "scale",
                                     "margin", "gap", NULL};
  char body[SIM_NAME_MAX] = "", p[SIM_JSON_PATH_MAX];
  const double identity[4] = {1, 0, 0, 0}, friction[3] = {1, 0.005, 0.0001};
  memcpy(g->quat, identity, sizeof identity);
  memcpy(g->friction, friction, sizeof friction);
  g->condim = 3;
  if (sim_json_expect_object(L, obj, path) || sim_json_check_keys(L, obj, path, keys) ||
      sim_json_read_name(L, obj, path, "name", g->name, 1) ||
      sim_json_read_name(L, obj, path, "body", body, 1) || parse_geom_type(L, obj, path, g) ||
      sim_json_read_vector(L, obj, path, "pos", g->pos, 3, 0) ||
      sim_json_read_vector(L, obj, path, "quat", g->quat, 4, 0) ||
      sim_json_normalize_unit(L, path, "quat", g->quat, 4) ||
      check_mesh_keys(L, obj, path, g->type) ||
      sim_json_read_vector(L, obj, path, "size", g->size, geom_nsize[g->type],
                           geom_nsize[g->type] > 0) ||
      sim_json_read_vector(L, obj, path, "friction", g->friction, 3, 0) ||
      sim_json_read_solref(L, obj, path, "solref", g->solref) ||
      sim_json_read_solimp(L, obj, path, "solimp", g->solimp) ||
      read_mask(L, obj, path, "contype", &g->contype) ||
      read_mask(L, obj, path, "conaffinity", &g->conaffinity) ||
      sim_json_read_int(L, obj, path, "condim", 1, 6, &g->condim) ||
      sim_json_read_number(L, obj, path, "margin", &g->margin, 0) ||
      sim_json_check_min(L, path, "margin", g->margin, 0, 0) ||
      sim_json_read_number(L, obj, path, "gap", &g->gap, 0) ||
      sim_json_check_min(L, path, "gap", g->gap, 0, 0) ||
      sim_json_read_int(L, obj, path, "priority", -1000000, 1000000, &g->priority)) {
    return -1;
  }
  if (g->condim != 1 && g->condim != 3) {
    sim_json_path_join(p, path, "condim");
    return sim_json_fail(L, p, "expected 1 (frictionless) or 3 (sliding friction); condim %d "
                         "(torsional or rolling friction) is not modelled", g->condim);
  }
  g->body = sim_model_body(m, body);
  sim_json_path_join(p, path, "body");
  if (g->body < 0) {
    return sim_json_fail(L, p, "unknown body \"%s\"", body);
  }
  if (g->type == SIM_GEOM_PLANE && g->body != 0) {
    return sim_json_fail(L, p, "a plane belongs to \"world\" (got \"%s\")", body);
  }
  for (int k = 0; k < geom_nsize[g->type]; k++) {
    if (!(g->size[k] > 0)) {
      sim_json_path_join(p, path, "size");
      return sim_json_fail(L, p, "expected positive sizes (element %d is %g)", k, g->size[k]);
    }
  }
  if (!(g->friction[0] >= 0 && g->friction[1] >= 0 && g->friction[2] >= 0)) {
    sim_json_path_join(p, path, "friction");
    return sim_json_fail(L, p, "expected [sliding, torsional, rolling] >= 0");
  }
  sim_quat_to_mat(g->mat, g->quat);
  g->rbound = geom_rbound(g); /* a mesh's: from its hull (load_mesh) */
  return 0;
}

int sim_geoms_parse(const sim_json_ctx *L, const cJSON *root, sim_model *m) {
  double max_contacts = 64;
  if (sim_json_read_number(L, root, "", "max_contacts", &max_contacts, 0)) {
    return -1;
  }
  if (max_contacts != floor(max_contacts) || max_contacts < 0 || max_contacts > 100000) {
    return sim_json_fail(L, "max_contacts", "expected an integer from 0 to 100000 (got %g)",
                         max_contacts);
  }
  const cJSON *geoms = cJSON_GetObjectItemCaseSensitive(root, "geoms");
  if (!geoms) {
    return 0;
  }
  if (!cJSON_IsArray(geoms)) {
    return sim_json_fail(L, "geoms", "expected an array");
  }
  m->ngeom = cJSON_GetArraySize(geoms);
  m->geoms = calloc((size_t)m->ngeom + 1, sizeof *m->geoms);
  if (!m->geoms) {
    return sim_json_fail(L, "geoms", "out of memory");
  }
  int i = 0;
  for (const cJSON *g = geoms->child; g; g = g->next, i++) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_index(p, "geoms", i);
    if (parse_geom(L, g, p, m, &m->geoms[i]) ||
        (m->geoms[i].type == SIM_GEOM_MESH && load_mesh(L, g, p, m, &m->geoms[i]))) {
      return -1;
    }
  }
  m->max_contacts = m->ngeom > 0 ? (int)max_contacts : 0;
  return 0;
}

static int cmp_pair(const void *a, const void *b) {
  const int *x = a, *y = b;
  return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* "exclude": [{"body1": A, "body2": B}, ...]: body pairs whose geoms never touch, stored as
 * sorted (smaller, larger) index pairs for the collision filter's binary search */
int sim_excludes_parse(const sim_json_ctx *L, const cJSON *root, sim_model *m) {
  static const char *const keys[] = {"body1", "body2", "comment", NULL};
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "exclude");
  if (!list) {
    return 0;
  }
  if (!cJSON_IsArray(list)) {
    return sim_json_fail(L, "exclude", "expected an array of {\"body1\", \"body2\"} objects");
  }
  m->nexclude = cJSON_GetArraySize(list);
  m->exclude = calloc(2 * (size_t)m->nexclude + 2, sizeof *m->exclude);
  if (!m->exclude) {
    return sim_json_fail(L, "exclude", "out of memory");
  }
  int i = 0;
  for (const cJSON *e = list->child; e; e = e->next, i++) {
    char p[SIM_JSON_PATH_MAX], b1[SIM_NAME_MAX] = "", b2[SIM_NAME_MAX] = "";
    sim_json_path_index(p, "exclude", i);
    if (sim_json_expect_object(L, e, p) || sim_json_check_keys(L, e, p, keys) ||
        sim_json_read_name(L, e, p, "body1", b1, 1) ||
        sim_json_read_name(L, e, p, "body2", b2, 1)) {
      return -1;
    }
    const int x = sim_model_body(m, b1), y = sim_model_body(m, b2);
    if (x < 0 || y < 0 || x == y) {
      return sim_json_fail(L, p, x < 0 || y < 0 ? "unknown body \"%s\""
                                                : "a body with itself (\"%s\")",
                           x < 0 ? b1 : y < 0 ? b2 : b1);
    }
    m->exclude[2 * i] = x < y ? x : y;
    m->exclude[2 * i + 1] = x < y ? y : x;
  }
  qsort(m->exclude, (size_t)m->nexclude, 2 * sizeof *m->exclude, cmp_pair);
  return 0;
}
