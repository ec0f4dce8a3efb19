/* sim/body_load.c: the "bodies" of a robot description: placement, inertia, unique names and
 * the kinematic tree's order (docs/robot-format.md). Their joints: sim/joint_load.c. */
#include "sim/load_internal.h"
#include "sim/name_index.h"
#include "sim/spatial.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- inertia ------------------------------------------------------------------------------ */

/* Eigenvalues of a symmetric 3×3 matrix, ascending (trigonometric closed form). */
static void symmetric_eigenvalues(double out[3], const double a[9]) {
  double p1 = a[1] * a[1] + a[2] * a[2] + a[5] * a[5];
  double q = (a[0] + a[4] + a[8]) / 3;
  if (p1 == 0) {
    out[0] = a[0], out[1] = a[4], out[2] = a[8];
  } else {
    double p2 = (a[0] - q) * (a[0] - q) + (a[4] - q) * (a[4] - q) + (a[8] - q) * (a[8] - q) +
                2 * p1;
    double p = sqrt(p2 / 6), b[9];
    for (int i = 0; i < 9; i++) {
      b[i] = (a[i] - (i % 4 == 0 ? q : 0)) / p;
    }
    double det = b[0] * (b[4] * b[8] - b[5] * b[7]) - b[1] * (b[3] * b[8] - b[5] * b[6]) +
                 b[2] * (b[3] * b[7] - b[4] * b[6]);
    double r = fmax(-1.0, fmin(1.0, det / 2));
    double phi = acos(r) / 3;
    out[2] = q + 2 * p * cos(phi);
    out[0] = q + 2 * p * cos(phi + 2.0943951023931954923 /* 2π/3 */);
    out[1] = 3 * q - out[0] - out[2];
  }
  for (int i = 0; i < 2; i++) { /* sort ascending */
    for (int j = 0; j < 2 - i; j++) {
      if (out[j] > out[j + 1]) {
        double t = out[j];
        out[j] = out[j + 1], out[j + 1] = t;
      }
    }
  }
}

/* Accepts [ixx, iyy, izz, ixy, ixz, iyz] or a 3×3 array of arrays. */
static int inertia_values(const sim_json_ctx *L, const cJSON *item, const char *path, double I[9]) {
  if (cJSON_IsArray(item) && cJSON_GetArraySize(item) == 6) {
    double v[6];
    if (sim_json_array_values(L, item, path, v, 6)) {
      return -1;
    }
    const double full[9] = {v[0], v[3], v[4], v[3], v[1], v[5], v[4], v[5], v[2]};
    memcpy(I, full, sizeof full);
    return 0;
  }
  if (cJSON_IsArray(item) && cJSON_GetArraySize(item) == 3) {
    int r = 0;
    for (const cJSON *row = item->child; row; row = row->next, r++) {
      char p[SIM_JSON_PATH_MAX];
      sim_json_path_index(p, path, r);
      if (sim_json_array_values(L, row, p, I + 3 * r, 3)) {
        return -1;
      }
    }
    return 0;
  }
  return sim_json_fail(L, path, "expected [ixx, iyy, izz, ixy, ixz, iyz] or a 3x3 array");
}

static int check_inertia(const sim_json_ctx *L, const char *path, const double I[9]) {
  double scale = 0;
  for (int i = 0; i < 9; i++) {
    scale = fmax(scale, fabs(I[i]));
  }
  if (scale > SIM_JSON_INERTIA_MAX) {
    return sim_json_fail(L, path, "elements must be <= %g in magnitude (got %g)",
                         SIM_JSON_INERTIA_MAX, scale);
  }
  for (int i = 0; i < 3; i++) {
    for (int j = i + 1; j < 3; j++) {
      if (fabs(I[3 * i + j] - I[3 * j + i]) > 1e-12 * scale) {
        return sim_json_fail(L, path, "not symmetric (element [%d][%d] = %g, [%d][%d] = %g)", i, j,
                    I[3 * i + j], j, i, I[3 * j + i]);
      }
    }
  }
  double ev[3];
  symmetric_eigenvalues(ev, I);
  if (!(ev[0] > 1e-15 * fmax(scale, 1e-300))) {
    return sim_json_fail(L, path, "not positive definite (smallest principal moment %g)", ev[0]);
  }
  /* a rigid body's principal moments obey the triangle inequality (the mass lies in space) */
  if (ev[0] + ev[1] < ev[2] * (1 - 1e-9)) {
    return sim_json_fail(L, path,
                "violates the triangle inequality (principal moments %g + %g < %g)", ev[0], ev[1],
                ev[2]);
  }
  return 0;
}

/* --- soft-constraint parameters ------------------------------------------------------------- */

/* --- bodies ------------------------------------------------------------------------------- */

static int parse_inertial(const sim_json_ctx *L, const cJSON *obj, const char *path, sim_body *b) {
  static const char *const keys[] = {"mass", "com", "inertia", "comment", NULL};
  char p[SIM_JSON_PATH_MAX];
  if (sim_json_expect_object(L, obj, path) || sim_json_check_keys(L, obj, path, keys) ||
      sim_json_read_number(L, obj, path, "mass", &b->mass, 1) ||
      sim_json_check_min(L, path, "mass", b->mass, SIM_JSON_MASS_MIN, 0) ||
      sim_json_check_max(L, path, "mass", b->mass, SIM_JSON_MASS_MAX) ||
      sim_json_read_vector(L, obj, path, "com", b->com, 3, 0)) {
    return -1;
  }
  sim_json_path_join(p, path, "inertia");
  const cJSON *inertia = cJSON_GetObjectItemCaseSensitive(obj, "inertia");
  if (!inertia) {
    return sim_json_fail(L, p, "missing (expected [ixx, iyy, izz, ixy, ixz, iyz] about the COM)");
  }
  return inertia_values(L, inertia, p, b->inertia) || check_inertia(L, p, b->inertia) ? -1 : 0;
}

static int parse_placement(const sim_json_ctx *L, const cJSON *obj, const char *path, sim_body *b) {
  const double identity[4] = {1, 0, 0, 0};
  memcpy(b->quat, identity, sizeof identity);
  int has_quat = cJSON_GetObjectItemCaseSensitive(obj, "quat") != NULL;
  int has_rpy = cJSON_GetObjectItemCaseSensitive(obj, "rpy") != NULL;
  if (has_quat && has_rpy) {
    return sim_json_fail(L, path, "give either \"quat\" or \"rpy\", not both");
  }
  if (sim_json_read_vector(L, obj, path, "pos", b->pos, 3, 0)) {
    return -1;
  }
  if (has_quat) {
    return sim_json_read_vector(L, obj, path, "quat", b->quat, 4, 1) ||
                   sim_json_normalize_unit(L, path, "quat", b->quat, 4)
               ? -1
               : 0;
  }
  if (has_rpy) {
    double rpy[3];
    if (sim_json_read_vector(L, obj, path, "rpy", rpy, 3, 1)) {
      return -1;
    }
    sim_rpy_to_quat(b->quat, rpy);
  }
  return 0;
}

static int parse_body(const sim_json_ctx *L, const cJSON *obj, const char *path, raw_body *rb) {
  static const char *const keys[] = {"name", "parent",   "pos",     "quat", "rpy",
                                     "joint", "joints", "inertial", "comment", NULL};
  char p[SIM_JSON_PATH_MAX];
  memset(rb, 0, sizeof *rb);
  if (sim_json_expect_object(L, obj, path) || sim_json_check_keys(L, obj, path, keys) ||
      sim_json_read_name(L, obj, path, "name", rb->body.name, 1) ||
      sim_json_read_name(L, obj, path, "parent", rb->parent, 1) || parse_placement(L, obj, path, &rb->body)) {
    return -1;
  }
  if (strcmp(rb->body.name, "world") == 0) {
    sim_json_path_join(p, path, "name");
    return sim_json_fail(L, p, "\"world\" is reserved for the fixed base");
  }
  if (sim_joints_parse(L, obj, path, rb)) {
    return -1;
  }
  sim_json_path_join(p, path, "inertial");
  const cJSON *inertial = cJSON_GetObjectItemCaseSensitive(obj, "inertial");
  if (!inertial) {
    return sim_json_fail(L, p, "missing (expected {\"mass\", \"com\", \"inertia\"})");
  }
  return parse_inertial(L, inertial, p, &rb->body);
}

/* the path of body i's joint a, for messages */
static void joint_path(char p[SIM_JSON_PATH_MAX], const raw_body *rb, int i, int a) {
  if (rb[i].njoint > 1) {
    snprintf(p, SIM_JSON_PATH_MAX, "bodies[%d].joints[%d].name", i, a);
  } else {
    snprintf(p, SIM_JSON_PATH_MAX, "bodies[%d].joint.name", i);
  }
}

/* Body names and joint names are each unique, checked through name indices (a model of n
 * bodies compared n² pairs of names). bodies: filled with body name → description index. */
static int check_unique_names(const sim_json_ctx *L, const raw_body *rb, int n,
                              sim_name_index *bodies) {
  sim_name_index joints;
  int njoint = 0;
  for (int i = 0; i < n; i++) {
    njoint += rb[i].njoint;
  }
  if (sim_name_index_init(bodies, (size_t)n) || sim_name_index_init(&joints, (size_t)njoint)) {
    sim_name_index_free(bodies);
    return sim_json_fail(L, "", "out of memory");
  }
  int rc = 0;
  char p[SIM_JSON_PATH_MAX];
  for (int i = 0; i < n && rc == 0; i++) {
    const int first = sim_name_index_add(bodies, rb[i].body.name, i);
    if (first >= 0) {
      snprintf(p, sizeof p, "bodies[%d].name", i);
      rc = sim_json_fail(L, p, "duplicate body name \"%s\" (also bodies[%d])", rb[i].body.name,
                         first);
    }
    for (int a = 0; a < rb[i].njoint && rc == 0; a++) {
      const char *name = rb[i].joints[a].name;
      const int k = name[0] ? sim_name_index_add(&joints, name, i) : -1;
      if (k >= 0) {
        joint_path(p, rb, i, a);
        rc = sim_json_fail(L, p, "duplicate joint name \"%s\" (also bodies[%d])", name, k);
      }
    }
  }
  sim_name_index_free(&joints);
  if (rc) {
    sim_name_index_free(bodies);
  }
  return rc;
}

/* The pass in which body i is placed when the descriptions are scanned again and again, each
 * body placed once its parent is: a root's is 1, a child's its parent's, or the next when the
 * parent comes later in the description. 0 for a body in a cycle or below one. pass[k] < 0: not
 * known yet; stack: room for n indices. Each body's pass is found once, so all of them cost
 * O(n). */
static int placing_pass(const int *parent, int *pass, int *stack, int i, int n) {
  int top = 0, k = i;
  while (k >= 0 && pass[k] < 0 && top <= n) { /* climb to a root or a body already placed */
    stack[top++] = k;
    k = parent[k];
  }
  if (top > n) { /* around a cycle: everything on the way is in it or below it */
    for (int t = 0; t < n; t++) {
      pass[stack[t]] = 0;
    }
    return 0;
  }
  while (top > 0) { /* then down again, each pass from its parent's */
    const int c = stack[--top], p = parent[c];
    const int from = p < 0 ? 1 : pass[p];
    pass[c] = from == 0 ? 0 : (p > c ? from + 1 : from);
  }
  return pass[i];
}

/* Orders bodies so that each parent precedes its children, keeping description order where
 * the description allows it: by pass (placing_pass), then by description index, as the scans
 * would. order[k] = description index of model body k + 1. */
static int order_bodies(const sim_json_ctx *L, const raw_body *rb, int n, int *order,
                        const sim_name_index *bodies) {
  char p[SIM_JSON_PATH_MAX];
  int *parent = malloc(4 * ((size_t)n + 1) * sizeof *parent);
  if (!parent) {
    return sim_json_fail(L, "", "out of memory");
  }
  int *pass = parent + n + 1, *count = pass + n + 1, *stack = count + n + 1;
  for (int i = 0; i < n; i++) {
    parent[i] = strcmp(rb[i].parent, "world") == 0 ? -1 : sim_name_index_find(bodies, rb[i].parent);
    if (parent[i] < 0 && strcmp(rb[i].parent, "world") != 0) {
      free(parent);
      snprintf(p, sizeof p, "bodies[%d].parent", i);
      return sim_json_fail(L, p, "unknown body \"%s\" (expected \"world\" or a body name)", rb[i].parent);
    }
    pass[i] = -1;
  }
  int stuck = -1, last = 0;
  for (int i = 0; i < n; i++) {
    const int k = placing_pass(parent, pass, stack, i, n);
    stuck = k == 0 && stuck < 0 ? i : stuck;
    last = k > last ? k : last;
  }
  if (stuck >= 0) {
    free(parent);
    snprintf(p, sizeof p, "bodies[%d].parent", stuck);
    return sim_json_fail(L, p, "cycle in the kinematic tree (body \"%s\" is its own ancestor, or descends "
                      "from a cycle)", rb[stuck].body.name);
  }
  /* counting sort by pass, stable in description order (passes run 1 .. last <= n) */
  memset(count, 0, ((size_t)n + 1) * sizeof *count);
  for (int i = 0; i < n; i++) {
    count[pass[i] - 1]++;
  }
  for (int q = 0, at = 0; q < last; q++) {
    const int c = count[q];
    count[q] = at;
    at += c;
  }
  for (int i = 0; i < n; i++) {
    order[count[pass[i] - 1]++] = i;
  }
  free(parent);
  return 0;
}

int sim_bodies_parse(const sim_json_ctx *L, const cJSON *bodies, raw_body *rb, int n, int *order) {
  if (n < 1) { /* the model loader refuses an empty list before it allocates rb */
    return sim_json_fail(L, "bodies", "expected at least one body");
  }
  int i = 0;
  for (const cJSON *b = bodies->child; b && i < n; b = b->next, i++) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_index(p, "bodies", i);
    if (parse_body(L, b, p, &rb[i])) {
      return -1;
    }
  }
  sim_name_index names;
  if (check_unique_names(L, rb, n, &names)) {
    return -1;
  }
  const int rc = order_bodies(L, rb, n, order, &names);
  sim_name_index_free(&names);
  return rc ? -1 : 0;
}
