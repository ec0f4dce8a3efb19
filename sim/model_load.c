/* sim/model_load.c: builds a sim_model from a JSON robot description (format: docs/robot-format.md).
 *
 * Everything is validated before anything is built: on the first error the loader writes one
 * message naming the source, the JSON path and what was expected, and returns NULL. No partial
 * model ever escapes.
 */
#include "sim/model.h"
#include "sim/spatial.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_MAX_LEN 160
#define UNIT_TOL 1e-6 /* how far from 1 the norm of an axis or quaternion may be */

typedef struct loader {
  const char *source;
  char *err;
  size_t err_sz;
} loader;

/* One body as described, before topological ordering. */
typedef struct raw_body {
  sim_body body;
  sim_joint joint;
  char parent[SIM_NAME_MAX];
  double qpos_initial;
} raw_body;

static int fail(const loader *L, const char *path, const char *fmt, ...) {
  if (L->err && L->err_sz > 0) {
    int n = snprintf(L->err, L->err_sz, "%s: %s%s", L->source, path, path[0] ? ": " : "");
    if (n >= 0 && (size_t)n < L->err_sz) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(L->err + n, L->err_sz - (size_t)n, fmt, ap);
      va_end(ap);
    }
  }
  return -1;
}

static void path_join(char out[PATH_MAX_LEN], const char *path, const char *key) {
  snprintf(out, PATH_MAX_LEN, "%s%s%s", path, path[0] ? "." : "", key);
}

static void path_index(char out[PATH_MAX_LEN], const char *path, int index) {
  snprintf(out, PATH_MAX_LEN, "%s[%d]", path, index);
}

/* Every key of obj must be in `allowed` (NULL-terminated), so that typos are caught. */
static int check_keys(const loader *L, const cJSON *obj, const char *path,
                      const char *const *allowed) {
  for (const cJSON *item = obj->child; item; item = item->next) {
    int known = 0;
    for (const char *const *k = allowed; *k; k++) {
      known |= strcmp(item->string, *k) == 0;
    }
    if (!known) {
      char p[PATH_MAX_LEN], list[256] = "";
      path_join(p, path, item->string);
      for (const char *const *k = allowed; *k; k++) {
        strncat(list, *k, sizeof list - strlen(list) - 3);
        if (k[1]) {
          strncat(list, ", ", sizeof list - strlen(list) - 1);
        }
      }
      return fail(L, p, "unknown key (expected one of: %s)", list);
    }
  }
  return 0;
}

static int expect_object(const loader *L, const cJSON *item, const char *path) {
  return cJSON_IsObject(item) ? 0 : fail(L, path, "expected an object");
}

static int number_value(const loader *L, const cJSON *item, const char *path, double *out) {
  if (!cJSON_IsNumber(item)) {
    return fail(L, path, "expected a number");
  }
  if (!isfinite(item->valuedouble)) {
    return fail(L, path, "must be finite (got %g)", item->valuedouble);
  }
  *out = item->valuedouble;
  return 0;
}

/* Reads obj[key] as a number; absent and optional leaves *out unchanged. */
static int read_number(const loader *L, const cJSON *obj, const char *path, const char *key,
                       double *out, int required) {
  char p[PATH_MAX_LEN];
  path_join(p, path, key);
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!item) {
    return required ? fail(L, p, "missing (expected a number)") : 0;
  }
  return number_value(L, item, p, out);
}

static int array_values(const loader *L, const cJSON *item, const char *path, double *out,
                        int n) {
  if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != n) {
    return fail(L, path, "expected an array of %d numbers", n);
  }
  int i = 0;
  for (const cJSON *e = item->child; e; e = e->next, i++) {
    char p[PATH_MAX_LEN];
    path_index(p, path, i);
    if (number_value(L, e, p, &out[i])) {
      return -1;
    }
  }
  return 0;
}

static int read_vector(const loader *L, const cJSON *obj, const char *path, const char *key,
                       double *out, int n, int required) {
  char p[PATH_MAX_LEN];
  path_join(p, path, key);
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!item) {
    return required ? fail(L, p, "missing (expected an array of %d numbers)", n) : 0;
  }
  return array_values(L, item, p, out, n);
}

static int read_name(const loader *L, const cJSON *obj, const char *path, const char *key,
                     char out[SIM_NAME_MAX], int required) {
  char p[PATH_MAX_LEN];
  path_join(p, path, key);
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!item) {
    return required ? fail(L, p, "missing (expected a name)") : 0;
  }
  if (!cJSON_IsString(item) || item->valuestring[0] == '\0') {
    return fail(L, p, "expected a non-empty string");
  }
  if (strlen(item->valuestring) >= SIM_NAME_MAX) {
    return fail(L, p, "longer than %d characters", SIM_NAME_MAX - 1);
  }
  strcpy(out, item->valuestring);
  return 0;
}

static int check_min(const loader *L, const char *path, const char *key, double value,
                     double min, int strict) {
  if (strict ? value > min : value >= min) {
    return 0;
  }
  char p[PATH_MAX_LEN];
  path_join(p, path, key);
  return fail(L, p, "must be %s %g (got %g)", strict ? ">" : ">=", min, value);
}

static int check_unit(const loader *L, const char *path, const char *key, const double *v,
                      int n) {
  double norm2 = 0;
  for (int i = 0; i < n; i++) {
    norm2 += v[i] * v[i];
  }
  if (fabs(sqrt(norm2) - 1) <= UNIT_TOL) {
    return 0;
  }
  char p[PATH_MAX_LEN];
  path_join(p, path, key);
  if (norm2 == 0) {
    return fail(L, p, "must not be zero (expected a unit vector)");
  }
  return fail(L, p, "must have unit length (norm is %.9g)", sqrt(norm2));
}

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
static int inertia_values(const loader *L, const cJSON *item, const char *path, double I[9]) {
  if (cJSON_IsArray(item) && cJSON_GetArraySize(item) == 6) {
    double v[6];
    if (array_values(L, item, path, v, 6)) {
      return -1;
    }
    const double full[9] = {v[0], v[3], v[4], v[3], v[1], v[5], v[4], v[5], v[2]};
    memcpy(I, full, sizeof full);
    return 0;
  }
  if (cJSON_IsArray(item) && cJSON_GetArraySize(item) == 3) {
    int r = 0;
    for (const cJSON *row = item->child; row; row = row->next, r++) {
      char p[PATH_MAX_LEN];
      path_index(p, path, r);
      if (array_values(L, row, p, I + 3 * r, 3)) {
        return -1;
      }
    }
    return 0;
  }
  return fail(L, path, "expected [ixx, iyy, izz, ixy, ixz, iyz] or a 3x3 array");
}

static int check_inertia(const loader *L, const char *path, const double I[9]) {
  double scale = 0;
  for (int i = 0; i < 9; i++) {
    scale = fmax(scale, fabs(I[i]));
  }
  for (int i = 0; i < 3; i++) {
    for (int j = i + 1; j < 3; j++) {
      if (fabs(I[3 * i + j] - I[3 * j + i]) > 1e-12 * scale) {
        return fail(L, path, "not symmetric (element [%d][%d] = %g, [%d][%d] = %g)", i, j,
                    I[3 * i + j], j, i, I[3 * j + i]);
      }
    }
  }
  double ev[3];
  symmetric_eigenvalues(ev, I);
  if (!(ev[0] > 1e-15 * fmax(scale, 1e-300))) {
    return fail(L, path, "not positive definite (smallest principal moment %g)", ev[0]);
  }
  /* a rigid body's principal moments obey the triangle inequality (the mass lies in space) */
  if (ev[0] + ev[1] < ev[2] * (1 - 1e-9)) {
    return fail(L, path,
                "violates the triangle inequality (principal moments %g + %g < %g)", ev[0], ev[1],
                ev[2]);
  }
  return 0;
}

/* --- bodies ------------------------------------------------------------------------------- */

static int parse_joint(const loader *L, const cJSON *obj, const char *path, raw_body *rb) {
  static const char *const keys[] = {"name",     "type",      "axis",  "damping", "armature",
                                     "stiffness", "springref", "range", "initial", "comment",
                                     NULL};
  sim_joint *j = &rb->joint;
  char p[PATH_MAX_LEN];
  if (expect_object(L, obj, path) || check_keys(L, obj, path, keys)) {
    return -1;
  }
  path_join(p, path, "type");
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(obj, "type");
  if (!cJSON_IsString(type)) {
    return fail(L, p, "missing or not a string (expected \"hinge\", \"slide\" or \"fixed\")");
  }
  if (strcmp(type->valuestring, "hinge") == 0) {
    j->type = SIM_JOINT_HINGE;
  } else if (strcmp(type->valuestring, "slide") == 0) {
    j->type = SIM_JOINT_SLIDE;
  } else if (strcmp(type->valuestring, "fixed") == 0) {
    j->type = SIM_JOINT_FIXED;
  } else {
    return fail(L, p, "unknown joint type \"%s\" (expected \"hinge\", \"slide\" or \"fixed\")",
                type->valuestring);
  }
  int moving = j->type != SIM_JOINT_FIXED;
  if (read_name(L, obj, path, "name", j->name, moving) ||
      read_vector(L, obj, path, "axis", j->axis, 3, moving) ||
      read_number(L, obj, path, "damping", &j->damping, 0) ||
      read_number(L, obj, path, "armature", &j->armature, 0) ||
      read_number(L, obj, path, "stiffness", &j->stiffness, 0) ||
      read_number(L, obj, path, "springref", &j->springref, 0) ||
      read_number(L, obj, path, "initial", &rb->qpos_initial, 0)) {
    return -1;
  }
  if ((moving && check_unit(L, path, "axis", j->axis, 3)) ||
      check_min(L, path, "damping", j->damping, 0, 0) ||
      check_min(L, path, "armature", j->armature, 0, 0) ||
      check_min(L, path, "stiffness", j->stiffness, 0, 0)) {
    return -1;
  }
  if (cJSON_GetObjectItemCaseSensitive(obj, "range")) {
    if (read_vector(L, obj, path, "range", j->range, 2, 1)) {
      return -1;
    }
    if (!(j->range[0] < j->range[1])) {
      path_join(p, path, "range");
      return fail(L, p, "lower bound %g must be below upper bound %g", j->range[0], j->range[1]);
    }
    j->limited = 1;
  }
  return 0;
}

static int parse_inertial(const loader *L, const cJSON *obj, const char *path, sim_body *b) {
  static const char *const keys[] = {"mass", "com", "inertia", "comment", NULL};
  char p[PATH_MAX_LEN];
  if (expect_object(L, obj, path) || check_keys(L, obj, path, keys) ||
      read_number(L, obj, path, "mass", &b->mass, 1) ||
      check_min(L, path, "mass", b->mass, 0, 1) ||
      read_vector(L, obj, path, "com", b->com, 3, 0)) {
    return -1;
  }
  path_join(p, path, "inertia");
  const cJSON *inertia = cJSON_GetObjectItemCaseSensitive(obj, "inertia");
  if (!inertia) {
    return fail(L, p, "missing (expected [ixx, iyy, izz, ixy, ixz, iyz] about the COM)");
  }
  return inertia_values(L, inertia, p, b->inertia) || check_inertia(L, p, b->inertia) ? -1 : 0;
}

static int parse_placement(const loader *L, const cJSON *obj, const char *path, sim_body *b) {
  const double identity[4] = {1, 0, 0, 0};
  memcpy(b->quat, identity, sizeof identity);
  int has_quat = cJSON_GetObjectItemCaseSensitive(obj, "quat") != NULL;
  int has_rpy = cJSON_GetObjectItemCaseSensitive(obj, "rpy") != NULL;
  if (has_quat && has_rpy) {
    return fail(L, path, "give either \"quat\" or \"rpy\", not both");
  }
  if (read_vector(L, obj, path, "pos", b->pos, 3, 0)) {
    return -1;
  }
  if (has_quat) {
    return read_vector(L, obj, path, "quat", b->quat, 4, 1) ||
                   check_unit(L, path, "quat", b->quat, 4)
               ? -1
               : 0;
  }
  if (has_rpy) {
    double rpy[3];
    if (read_vector(L, obj, path, "rpy", rpy, 3, 1)) {
      return -1;
    }
    sim_rpy_to_quat(b->quat, rpy);
  }
  return 0;
}

static int parse_body(const loader *L, const cJSON *obj, const char *path, raw_body *rb) {
  static const char *const keys[] = {"name", "parent",   "pos",     "quat", "rpy",
                                     "joint", "inertial", "comment", NULL};
  char p[PATH_MAX_LEN];
  memset(rb, 0, sizeof *rb);
  if (expect_object(L, obj, path) || check_keys(L, obj, path, keys) ||
      read_name(L, obj, path, "name", rb->body.name, 1) ||
      read_name(L, obj, path, "parent", rb->parent, 1) || parse_placement(L, obj, path, &rb->body)) {
    return -1;
  }
  if (strcmp(rb->body.name, "world") == 0) {
    path_join(p, path, "name");
    return fail(L, p, "\"world\" is reserved for the fixed base");
  }
  const cJSON *joint = cJSON_GetObjectItemCaseSensitive(obj, "joint");
  rb->joint.type = SIM_JOINT_FIXED;
  if (joint) {
    path_join(p, path, "joint");
    if (parse_joint(L, joint, p, rb)) {
      return -1;
    }
  }
  path_join(p, path, "inertial");
  const cJSON *inertial = cJSON_GetObjectItemCaseSensitive(obj, "inertial");
  if (!inertial) {
    return fail(L, p, "missing (expected {\"mass\", \"com\", \"inertia\"})");
  }
  return parse_inertial(L, inertial, p, &rb->body);
}

static int check_unique_names(const loader *L, const raw_body *rb, int n) {
  char p[PATH_MAX_LEN];
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < i; k++) {
      if (strcmp(rb[i].body.name, rb[k].body.name) == 0) {
        snprintf(p, sizeof p, "bodies[%d].name", i);
        return fail(L, p, "duplicate body name \"%s\" (also bodies[%d])", rb[i].body.name, k);
      }
      if (rb[i].joint.name[0] && strcmp(rb[i].joint.name, rb[k].joint.name) == 0) {
        snprintf(p, sizeof p, "bodies[%d].joint.name", i);
        return fail(L, p, "duplicate joint name \"%s\" (also bodies[%d])", rb[i].joint.name, k);
      }
    }
  }
  return 0;
}

static int find_raw(const raw_body *rb, int n, const char *name) {
  for (int i = 0; i < n; i++) {
    if (strcmp(rb[i].body.name, name) == 0) {
      return i;
    }
  }
  return -1;
}

/* Orders bodies so that each parent precedes its children, keeping description order where
 * the description already allows it. order[k] = description index of model body k + 1. */
static int order_bodies(const loader *L, const raw_body *rb, int n, int *order) {
  char p[PATH_MAX_LEN];
  int *placed = calloc((size_t)n, sizeof *placed), count = 0;
  if (!placed) {
    return fail(L, "", "out of memory");
  }
  for (int i = 0; i < n; i++) {
    if (strcmp(rb[i].parent, "world") != 0 && find_raw(rb, n, rb[i].parent) < 0) {
      free(placed);
      snprintf(p, sizeof p, "bodies[%d].parent", i);
      return fail(L, p, "unknown body \"%s\" (expected \"world\" or a body name)", rb[i].parent);
    }
  }
  for (int progress = 1; progress && count < n;) {
    progress = 0;
    for (int i = 0; i < n; i++) {
      int parent = find_raw(rb, n, rb[i].parent);
      if (!placed[i] && (parent < 0 || placed[parent])) {
        placed[i] = 1, order[count++] = i, progress = 1;
      }
    }
  }
  int stuck = -1;
  for (int i = 0; i < n && stuck < 0; i++) {
    stuck = placed[i] ? -1 : i;
  }
  free(placed);
  if (stuck >= 0) {
    snprintf(p, sizeof p, "bodies[%d].parent", stuck);
    return fail(L, p, "cycle in the kinematic tree (body \"%s\" is its own ancestor, or descends "
                      "from a cycle)", rb[stuck].body.name);
  }
  return 0;
}

/* --- options and sites -------------------------------------------------------------------- */

static int parse_options(const loader *L, const cJSON *root, sim_option *opt) {
  opt->timestep = 0.002;
  opt->gravity[0] = 0, opt->gravity[1] = 0, opt->gravity[2] = -9.81;
  opt->integrator = SIM_INTEGRATOR_EULER;
  opt->midpoint_iterations = 4;
  double iterations = 4;
  if (read_number(L, root, "", "timestep", &opt->timestep, 0) ||
      check_min(L, "", "timestep", opt->timestep, 0, 1) ||
      read_vector(L, root, "", "gravity", opt->gravity, 3, 0) ||
      read_number(L, root, "", "midpoint_iterations", &iterations, 0)) {
    return -1;
  }
  if (iterations != floor(iterations) || iterations < 1 || iterations > 1000) {
    return fail(L, "midpoint_iterations", "expected an integer from 1 to 1000 (got %g)",
                iterations);
  }
  opt->midpoint_iterations = (int)iterations;
  const cJSON *integ = cJSON_GetObjectItemCaseSensitive(root, "integrator");
  if (integ) {
    int k = cJSON_IsString(integ) ? sim_integrator_parse(integ->valuestring) : -1;
    if (k < 0) {
      return fail(L, "integrator", "expected \"euler\", \"verlet\", \"midpoint\" or \"rk4\"");
    }
    opt->integrator = (sim_integrator)k;
  }
  return 0;
}

static int parse_site(const loader *L, const cJSON *obj, const char *path, const sim_model *m,
                      sim_site *s) {
  static const char *const keys[] = {"name", "body", "pos", "comment", NULL};
  char body[SIM_NAME_MAX] = "", p[PATH_MAX_LEN];
  if (expect_object(L, obj, path) || check_keys(L, obj, path, keys) ||
      read_name(L, obj, path, "name", s->name, 1) || read_name(L, obj, path, "body", body, 1) ||
      read_vector(L, obj, path, "pos", s->pos, 3, 0)) {
    return -1;
  }
  s->body = sim_model_body(m, body);
  if (s->body < 0) {
    path_join(p, path, "body");
    return fail(L, p, "unknown body \"%s\"", body);
  }
  return 0;
}

static int parse_sites(const loader *L, const cJSON *root, sim_model *m) {
  const cJSON *sites = cJSON_GetObjectItemCaseSensitive(root, "sites");
  if (!sites) {
    return 0;
  }
  if (!cJSON_IsArray(sites)) {
    return fail(L, "sites", "expected an array");
  }
  m->nsite = cJSON_GetArraySize(sites);
  m->sites = calloc((size_t)m->nsite + 1, sizeof *m->sites);
  if (!m->sites) {
    return fail(L, "sites", "out of memory");
  }
  int i = 0;
  for (const cJSON *s = sites->child; s; s = s->next, i++) {
    char p[PATH_MAX_LEN];
    path_index(p, "sites", i);
    if (parse_site(L, s, p, m, &m->sites[i])) {
      return -1;
    }
    for (int k = 0; k < i; k++) {
      if (strcmp(m->sites[k].name, m->sites[i].name) == 0) {
        return fail(L, p, "duplicate site name \"%s\" (also sites[%d])", m->sites[i].name, k);
      }
    }
  }
  return 0;
}

/* --- assembly ----------------------------------------------------------------------------- */

static int allocate_model(sim_model *m, int nbody) {
  m->nbody = nbody;
  m->njnt = nbody - 1;
  m->bodies = calloc((size_t)nbody, sizeof *m->bodies);
  m->joints = calloc((size_t)nbody, sizeof *m->joints);
  m->dof_joint = calloc((size_t)nbody, sizeof *m->dof_joint);
  m->dof_body = calloc((size_t)nbody, sizeof *m->dof_body);
  m->qpos0 = calloc((size_t)nbody, sizeof *m->qpos0);
  return m->bodies && m->joints && m->dof_joint && m->dof_body && m->qpos0 ? 0 : -1;
}

static void assemble(sim_model *m, const raw_body *rb, const int *order, int n) {
  sim_body *world = &m->bodies[0];
  strcpy(world->name, "world");
  world->parent = -1;
  world->joint = -1;
  world->quat[0] = 1;
  sim_quat_to_mat(world->mat, world->quat);
  for (int k = 0; k < n; k++) {
    const raw_body *src = &rb[order[k]];
    sim_body *b = &m->bodies[k + 1];
    sim_joint *j = &m->joints[k];
    *b = src->body;
    *j = src->joint;
    b->parent = strcmp(src->parent, "world") == 0 ? 0 : sim_model_body(m, src->parent);
    b->joint = k;
    j->body = k + 1;
    j->qposadr = j->dofadr = -1;
    if (sim_joint_nv(j->type) > 0) {
      j->qposadr = m->nq;
      j->dofadr = m->nv;
      m->qpos0[m->nq] = src->qpos_initial;
      m->dof_joint[m->nv] = k;
      m->dof_body[m->nv] = k + 1;
      m->nq += sim_joint_nq(j->type);
      m->nv += sim_joint_nv(j->type);
    }
    sim_quat_to_mat(b->mat, b->quat);
    sim_spatial_inertia(b->sinertia, b->mass, b->com, b->inertia);
  }
}

static const char *const root_keys[] = {
    "name", "comment", "timestep", "integrator", "midpoint_iterations", "gravity", "bodies",
    "sites",
    /* sections owned by other modules, validated there */
    "sensors", "actuators", "runtime", "transports", NULL};

static sim_model *build_model(const loader *L, const cJSON *root) {
  if (expect_object(L, root, "") || check_keys(L, root, "", root_keys)) {
    return NULL;
  }
  const cJSON *bodies = cJSON_GetObjectItemCaseSensitive(root, "bodies");
  if (!cJSON_IsArray(bodies) || cJSON_GetArraySize(bodies) < 1) {
    fail(L, "bodies", "missing or empty (expected an array of body objects)");
    return NULL;
  }
  int n = cJSON_GetArraySize(bodies);
  sim_model *m = calloc(1, sizeof *m);
  raw_body *rb = calloc((size_t)n, sizeof *rb);
  int *order = calloc((size_t)n, sizeof *order);
  int ok = m && rb && order;
  if (!ok) {
    fail(L, "", "out of memory");
  }
  int i = 0;
  for (const cJSON *b = bodies->child; ok && b; b = b->next, i++) {
    char p[PATH_MAX_LEN];
    path_index(p, "bodies", i);
    ok = parse_body(L, b, p, &rb[i]) == 0;
  }
  ok = ok && check_unique_names(L, rb, n) == 0 && order_bodies(L, rb, n, order) == 0 &&
       parse_options(L, root, &m->opt) == 0;
  if (ok && allocate_model(m, n + 1)) {
    ok = fail(L, "", "out of memory") == 0;
  }
  if (ok) {
    assemble(m, rb, order, n);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    snprintf(m->name, sizeof m->name, "%s", cJSON_IsString(name) ? name->valuestring : "robot");
    ok = parse_sites(L, root, m) == 0;
  }
  free(rb);
  free(order);
  if (!ok) {
    sim_model_free(m);
    return NULL;
  }
  return m;
}

static void line_and_column(const char *text, const char *at, int *line, int *col) {
  *line = 1, *col = 1;
  for (const char *c = text; c < at && *c; c++) {
    if (*c == '\n') {
      (*line)++, *col = 1;
    } else {
      (*col)++;
    }
  }
}

sim_model *sim_model_load_string(const char *json, const char *source, char *err,
                                 size_t err_sz) {
  const loader L = {source ? source : "<string>", err, err_sz};
  if (err && err_sz) {
    err[0] = '\0';
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(json, &end, 1);
  if (!root) {
    int line, col;
    line_and_column(json, end ? end : json, &line, &col);
    char where[64];
    snprintf(where, sizeof where, "line %d, column %d", line, col);
    fail(&L, where, "invalid JSON");
    return NULL;
  }
  sim_model *m = build_model(&L, root);
  cJSON_Delete(root);
  return m;
}

static char *read_file(const char *path, char *err, size_t err_sz) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, err_sz, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  char *text = NULL;
  size_t size = 0, cap = 0;
  for (;;) {
    if (size + 4096 + 1 > cap) {
      cap = 2 * cap + 8192;
      char *grown = realloc(text, cap);
      if (!grown) {
        free(text);
        fclose(f);
        snprintf(err, err_sz, "%s: out of memory", path);
        return NULL;
      }
      text = grown;
    }
    size_t got = fread(text + size, 1, 4096, f);
    size += got;
    if (got < 4096) {
      break;
    }
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(text);
    snprintf(err, err_sz, "%s: read error", path);
    return NULL;
  }
  text[size] = '\0';
  return text;
}

sim_model *sim_model_load_file(const char *path, char *err, size_t err_sz) {
  char scratch[8];
  if (!err || err_sz == 0) {
    err = scratch, err_sz = sizeof scratch;
  }
  char *text = read_file(path, err, err_sz);
  if (!text) {
    return NULL;
  }
  sim_model *m = sim_model_load_string(text, path, err, err_sz);
  free(text);
  return m;
}
