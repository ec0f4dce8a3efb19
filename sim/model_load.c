/* sim/model_load.c: builds a sim_model from a JSON robot description (format: docs/robot-format.md).
 *
 * Everything is validated before anything is built: on the first error the loader writes one
 * message naming the source, the JSON path and what was expected, and returns NULL. No partial
 * model ever escapes.
 */
#include "sim/model.h"
#include "sim/json_read.h"
#include "sim/mesh.h"
#include "sim/collision.h"
#include "sim/spatial.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One body as described, before topological ordering. */
typedef struct raw_body {
  sim_body body;
  sim_joint joints[SIM_BODY_DOF_MAX]; /* every listed joint has at least one dof */
  int njoint;
  char parent[SIM_NAME_MAX];
  double initial[SIM_BODY_DOF_MAX][7]; /* each joint's initial qpos (its nq values) */
} raw_body;

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

/* MuJoCo's defaults: a critically damped 20 ms spring, impedance 0.9 → 0.95 over 1 mm */
static const double default_solref[SIM_NREF] = {0.02, 1};
static const double default_solimp[SIM_NIMP] = {0.9, 0.95, 0.001, 0.5, 2};

/* solref: [timeconst > 0, dampratio > 0] or direct [-stiffness <= 0, -damping <= 0] */
static int read_solref(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                       double ref[SIM_NREF]) {
  char p[SIM_JSON_PATH_MAX];
  memcpy(ref, default_solref, sizeof default_solref);
  if (sim_json_read_vector(L, obj, path, key, ref, SIM_NREF, 0)) {
    return -1;
  }
  if ((ref[0] > 0) != (ref[1] > 0)) {
    sim_json_path_join(p, path, key);
    return sim_json_fail(L, p, "expected [timeconst > 0, dampratio > 0] or [-stiffness <= 0, "
                         "-damping <= 0], not a mix (got [%g, %g])", ref[0], ref[1]);
  }
  return 0;
}

/* solimp: [dmin, dmax, width, midpoint, power], dmin, dmax and midpoint in [0, 1] (the
 * constraint stage clamps them to [0.0001, 0.9999] as MuJoCo does, which accepts the ends: its
 * own humanoid.xml writes dmin 0), width >= 0, power >= 1 */
static int read_solimp(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                       double imp[SIM_NIMP]) {
  char p[SIM_JSON_PATH_MAX];
  memcpy(imp, default_solimp, sizeof default_solimp);
  if (sim_json_read_vector(L, obj, path, key, imp, SIM_NIMP, 0)) {
    return -1;
  }
  if (!(imp[0] >= 0 && imp[0] <= 1 && imp[1] >= 0 && imp[1] <= 1 && imp[2] >= 0 &&
        imp[3] >= 0 && imp[3] <= 1 && imp[4] >= 1)) {
    sim_json_path_join(p, path, key);
    return sim_json_fail(L, p, "expected [dmin, dmax, width, midpoint, power] with dmin, dmax "
                         "and midpoint in [0, 1], width >= 0, power >= 1");
  }
  return 0;
}

/* limited, range, solref_limit, solimp_limit, frictionloss, solref_friction, solimp_friction */
static int parse_joint_constraints(const sim_json_ctx *L, const cJSON *obj, const char *path,
                                   sim_joint *j) {
  char p[SIM_JSON_PATH_MAX];
  const cJSON *limited = cJSON_GetObjectItemCaseSensitive(obj, "limited");
  if (limited && !cJSON_IsBool(limited)) {
    sim_json_path_join(p, path, "limited");
    return sim_json_fail(L, p, "expected true or false");
  }
  if (cJSON_GetObjectItemCaseSensitive(obj, "range")) {
    if (sim_json_read_vector(L, obj, path, "range", j->range, 2, 1)) {
      return -1;
    }
    if (!(j->range[0] < j->range[1])) {
      sim_json_path_join(p, path, "range");
      return sim_json_fail(L, p, "lower bound %g must be below upper bound %g", j->range[0], j->range[1]);
    }
  }
  j->limited = cJSON_IsTrue(limited);
  if (j->limited && !cJSON_GetObjectItemCaseSensitive(obj, "range")) {
    sim_json_path_join(p, path, "range");
    return sim_json_fail(L, p, "missing (\"limited\": true needs [lo, hi])");
  }
  if (read_solref(L, obj, path, "solref_limit", j->solref_limit) ||
      read_solimp(L, obj, path, "solimp_limit", j->solimp_limit) ||
      sim_json_read_number(L, obj, path, "frictionloss", &j->frictionloss, 0) ||
      sim_json_check_min(L, path, "frictionloss", j->frictionloss, 0, 0) ||
      read_solref(L, obj, path, "solref_friction", j->solref_friction) ||
      read_solimp(L, obj, path, "solimp_friction", j->solimp_friction)) {
    return -1;
  }
  return 0;
}

/* --- bodies ------------------------------------------------------------------------------- */

static int joint_type(const sim_json_ctx *L, const cJSON *obj, const char *path,
                      sim_joint_type *out) {
  static const char *const names[] = {"fixed", "hinge", "slide", "ball", "free"};
  char p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, "type");
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(obj, "type");
  for (int t = 0; cJSON_IsString(type) && t < 5; t++) {
    if (strcmp(type->valuestring, names[t]) == 0) {
      *out = (sim_joint_type)t;
      return 0;
    }
  }
  return sim_json_fail(L, p, "%s%s%s (expected \"hinge\", \"slide\", \"ball\", \"free\" or \"fixed\")",
                       cJSON_IsString(type) ? "unknown joint type \"" : "missing or not a string",
                       cJSON_IsString(type) ? type->valuestring : "", cJSON_IsString(type) ? "\"" : "");
}

/* Ball and free joints: a quaternion of initial orientation (free: after the position), no
 * axis, and none of the one-coordinate properties (springs, limits, friction loss). */
static int parse_rotation_joint(const sim_json_ctx *L, const cJSON *obj, const char *path,
                                const sim_body *b, sim_joint *j, double initial[7]) {
  static const char *const scalar_only[] = {"axis", "stiffness", "springref", "limited", "range",
                                            "frictionloss", "solref_limit", "solimp_limit",
                                            "solref_friction", "solimp_friction", NULL};
  char p[SIM_JSON_PATH_MAX];
  for (int k = 0; scalar_only[k]; k++) {
    if (cJSON_GetObjectItemCaseSensitive(obj, scalar_only[k])) {
      sim_json_path_join(p, path, scalar_only[k]);
      return sim_json_fail(L, p, "not supported on a %s joint (only on hinge and slide joints)",
                           j->type == SIM_JOINT_BALL ? "ball" : "free");
    }
  }
  int is_free = j->type == SIM_JOINT_FREE, nq = is_free ? 7 : 4;
  double *quat = initial + (is_free ? 3 : 0);
  if (is_free) { /* qpos0: the placement */
    memcpy(initial, b->pos, 3 * sizeof(double));
    memcpy(quat, b->quat, 4 * sizeof(double));
  } else {
    quat[0] = 1, quat[1] = quat[2] = quat[3] = 0;
  }
  if (sim_json_read_vector(L, obj, path, "initial", initial, nq, 0)) {
    return -1;
  }
  sim_json_path_join(p, path, "initial");
  double norm = sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
  if (!(norm > 1e-9) || !isfinite(norm)) {
    return sim_json_fail(L, p, "the quaternion [w x y z]%s must have a nonzero length",
                         is_free ? " (elements 3 to 6)" : "");
  }
  for (int k = 0; k < 4; k++) {
    quat[k] /= norm;
  }
  return 0;
}

static int parse_joint(const sim_json_ctx *L, const cJSON *obj, const char *path,
                       const sim_body *b, sim_joint *j, double initial[7]) {
  static const char *const keys[] = {"name",     "type",      "axis",  "damping", "armature",
                                     "stiffness", "springref", "range", "initial", "comment",
                                     "pos",
                                     "limited", "solref_limit", "solimp_limit", "frictionloss",
                                     "solref_friction", "solimp_friction", NULL};
  if (sim_json_expect_object(L, obj, path) || sim_json_check_keys(L, obj, path, keys) ||
      joint_type(L, obj, path, &j->type)) {
    return -1;
  }
  int moving = j->type != SIM_JOINT_FIXED;
  int scalar = j->type == SIM_JOINT_HINGE || j->type == SIM_JOINT_SLIDE;
  if (sim_json_read_name(L, obj, path, "name", j->name, moving) ||
      sim_json_read_number(L, obj, path, "damping", &j->damping, 0) ||
      sim_json_read_number(L, obj, path, "armature", &j->armature, 0) ||
      sim_json_check_min(L, path, "damping", j->damping, 0, 0) ||
      sim_json_check_min(L, path, "armature", j->armature, 0, 0) ||
      sim_json_check_max(L, path, "damping", j->damping, SIM_JSON_JOINT_COEF_MAX) ||
      sim_json_check_max(L, path, "armature", j->armature, SIM_JSON_JOINT_COEF_MAX)) {
    return -1;
  }
  if (moving && !scalar) {
    return parse_rotation_joint(L, obj, path, b, j, initial);
  }
  if (sim_json_read_vector(L, obj, path, "axis", j->axis, 3, moving) ||
      sim_json_read_number(L, obj, path, "stiffness", &j->stiffness, 0) ||
      sim_json_read_number(L, obj, path, "springref", &j->springref, 0) ||
      sim_json_read_number(L, obj, path, "initial", &initial[0], 0)) {
    return -1;
  }
  if ((moving && sim_json_normalize_unit(L, path, "axis", j->axis, 3)) ||
      sim_json_check_min(L, path, "stiffness", j->stiffness, 0, 0) ||
      sim_json_check_max(L, path, "stiffness", j->stiffness, SIM_JSON_JOINT_COEF_MAX)) {
    return -1;
  }
  return parse_joint_constraints(L, obj, path, j);
}

/* "pos" of a hinge or slide in a list of several joints: its anchor in the body frame (MuJoCo's
 * joint pos; a single joint sits at its body's origin, where the importers put it) */
static int parse_joint_anchor(const sim_json_ctx *L, const cJSON *obj, const char *path,
                              sim_joint *j, int njoint) {
  if (!cJSON_GetObjectItemCaseSensitive(obj, "pos")) {
    return 0;
  }
  char p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, "pos");
  if (njoint < 2) {
    return sim_json_fail(L, p, "only a joint in a list of several takes an anchor (a single "
                         "joint sits at its body's origin: move the body)");
  }
  if (j->type != SIM_JOINT_HINGE && j->type != SIM_JOINT_SLIDE) {
    return sim_json_fail(L, p, "only hinge and slide joints take an anchor");
  }
  return sim_json_read_vector(L, obj, path, "pos", j->pos, 3, 0);
}

/* "joints": several joints acting in order, at most SIM_BODY_DOF_MAX dofs in all: hinges and
 * slides, or at most one ball with slides (a hinge beside a ball repeats one of its rotations,
 * and the ball's velocity axes are the body's final axes, as in MuJoCo); free and fixed joints
 * stand alone ("joint"). */
static int parse_joint_list(const sim_json_ctx *L, const cJSON *list, const char *path,
                            raw_body *rb) {
  char p[SIM_JSON_PATH_MAX];
  int n = cJSON_GetArraySize(list), dofs = 0, ball = 0, hinge = 0;
  if (!cJSON_IsArray(list) || n < 1 || n > SIM_BODY_DOF_MAX) {
    return sim_json_fail(L, path, "expected an array of 1 to %d joint objects", SIM_BODY_DOF_MAX);
  }
  rb->njoint = n;
  for (int k = 0; k < n; k++) {
    sim_joint *j = &rb->joints[k];
    sim_json_path_index(p, path, k);
    if (parse_joint(L, cJSON_GetArrayItem(list, k), p, &rb->body, j, rb->initial[k]) ||
        parse_joint_anchor(L, cJSON_GetArrayItem(list, k), p, j, n)) {
      return -1;
    }
    if (n > 1 && (j->type == SIM_JOINT_FIXED || j->type == SIM_JOINT_FREE)) {
      return sim_json_fail(L, p, "a %s joint must be alone on its body (use \"joint\")",
                           j->type == SIM_JOINT_FREE ? "free" : "fixed");
    }
    hinge += j->type == SIM_JOINT_HINGE;
    ball += j->type == SIM_JOINT_BALL;
    if (ball && hinge) { /* the ball's rotations include the hinge's: a singular inertia */
      return sim_json_fail(L, p, "a ball and a hinge cannot share a body");
    }
    if (ball > 1) {
      return sim_json_fail(L, p, "at most one ball joint per body");
    }
    dofs += sim_joint_nv(j->type);
    if (dofs > SIM_BODY_DOF_MAX) {
      return sim_json_fail(L, p, "a body has at most %d degrees of freedom", SIM_BODY_DOF_MAX);
    }
  }
  return 0;
}

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
  const cJSON *joint = cJSON_GetObjectItemCaseSensitive(obj, "joint");
  const cJSON *joints = cJSON_GetObjectItemCaseSensitive(obj, "joints");
  rb->joints[0].type = SIM_JOINT_FIXED;
  rb->njoint = 1;
  if (joint && joints) {
    return sim_json_fail(L, path, "give either \"joint\" or \"joints\", not both");
  }
  if (joint) {
    sim_json_path_join(p, path, "joint");
    if (parse_joint(L, joint, p, &rb->body, &rb->joints[0], rb->initial[0]) ||
        parse_joint_anchor(L, joint, p, &rb->joints[0], 1)) {
      return -1;
    }
  }
  if (joints) {
    sim_json_path_join(p, path, "joints");
    if (parse_joint_list(L, joints, p, rb)) {
      return -1;
    }
  }
  if (rb->joints[0].type == SIM_JOINT_FREE && strcmp(rb->parent, "world") != 0) {
    sim_json_path_join(p, path, "parent");
    return sim_json_fail(L, p, "a body with a free joint must be a child of \"world\"");
  }
  sim_json_path_join(p, path, "inertial");
  const cJSON *inertial = cJSON_GetObjectItemCaseSensitive(obj, "inertial");
  if (!inertial) {
    return sim_json_fail(L, p, "missing (expected {\"mass\", \"com\", \"inertia\"})");
  }
  return parse_inertial(L, inertial, p, &rb->body);
}

/* joint a of body i against every joint of bodies 0..i (earlier joints only on body i) */
static int check_joint_name(const sim_json_ctx *L, const raw_body *rb, int i, int a) {
  const char *name = rb[i].joints[a].name;
  for (int k = 0; name[0] && k <= i; k++) {
    for (int b = 0; b < (k < i ? rb[k].njoint : a); b++) {
      if (strcmp(name, rb[k].joints[b].name) == 0) {
        char p[SIM_JSON_PATH_MAX];
        if (rb[i].njoint > 1) {
          snprintf(p, sizeof p, "bodies[%d].joints[%d].name", i, a);
        } else {
          snprintf(p, sizeof p, "bodies[%d].joint.name", i);
        }
        return sim_json_fail(L, p, "duplicate joint name \"%s\" (also bodies[%d])", name, k);
      }
    }
  }
  return 0;
}

static int check_unique_names(const sim_json_ctx *L, const raw_body *rb, int n) {
  char p[SIM_JSON_PATH_MAX];
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < i; k++) {
      if (strcmp(rb[i].body.name, rb[k].body.name) == 0) {
        snprintf(p, sizeof p, "bodies[%d].name", i);
        return sim_json_fail(L, p, "duplicate body name \"%s\" (also bodies[%d])", rb[i].body.name, k);
      }
    }
    for (int a = 0; a < rb[i].njoint; a++) {
      if (check_joint_name(L, rb, i, a)) {
        return -1;
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
static int order_bodies(const sim_json_ctx *L, const raw_body *rb, int n, int *order) {
  char p[SIM_JSON_PATH_MAX];
  int *placed = calloc((size_t)n, sizeof *placed), count = 0;
  if (!placed) {
    return sim_json_fail(L, "", "out of memory");
  }
  for (int i = 0; i < n; i++) {
    if (strcmp(rb[i].parent, "world") != 0 && find_raw(rb, n, rb[i].parent) < 0) {
      free(placed);
      snprintf(p, sizeof p, "bodies[%d].parent", i);
      return sim_json_fail(L, p, "unknown body \"%s\" (expected \"world\" or a body name)", rb[i].parent);
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
    return sim_json_fail(L, p, "cycle in the kinematic tree (body \"%s\" is its own ancestor, or descends "
                      "from a cycle)", rb[stuck].body.name);
  }
  return 0;
}

/* --- options and sites -------------------------------------------------------------------- */

static int check_gravity(const sim_json_ctx *L, const double g[3]) {
  for (int i = 0; i < 3; i++) {
    if (fabs(g[i]) > SIM_JSON_GRAVITY_MAX) {
      char p[SIM_JSON_PATH_MAX];
      sim_json_path_index(p, "gravity", i);
      return sim_json_fail(L, p, "must be within +-%g m/s^2 (got %g)", SIM_JSON_GRAVITY_MAX, g[i]);
    }
  }
  return 0;
}

static int parse_options(const sim_json_ctx *L, const cJSON *root, sim_option *opt) {
  opt->timestep = 0.002;
  opt->gravity[0] = 0, opt->gravity[1] = 0, opt->gravity[2] = -9.81;
  opt->integrator = SIM_INTEGRATOR_EULER;
  opt->midpoint_iterations = 4;
  opt->solver_iterations = 20;
  opt->solver_tolerance = 1e-8;
  opt->impratio = 1;
  double iterations = 4, solver_iterations = 20;
  if (sim_json_read_number(L, root, "", "timestep", &opt->timestep, 0) ||
      sim_json_check_min(L, "", "timestep", opt->timestep, SIM_JSON_TIMESTEP_MIN, 0) ||
      sim_json_check_max(L, "", "timestep", opt->timestep, SIM_JSON_TIMESTEP_MAX) ||
      sim_json_read_vector(L, root, "", "gravity", opt->gravity, 3, 0) ||
      check_gravity(L, opt->gravity) ||
      sim_json_read_number(L, root, "", "midpoint_iterations", &iterations, 0) ||
      sim_json_read_number(L, root, "", "solver_iterations", &solver_iterations, 0) ||
      sim_json_read_number(L, root, "", "solver_tolerance", &opt->solver_tolerance, 0) ||
      sim_json_check_min(L, "", "solver_tolerance", opt->solver_tolerance, 0, 0)) {
    return -1;
  }
  if (solver_iterations != floor(solver_iterations) || solver_iterations < 1 ||
      solver_iterations > 1000) {
    return sim_json_fail(L, "solver_iterations", "expected an integer from 1 to 1000 (got %g)",
                         solver_iterations);
  }
  opt->solver_iterations = (int)solver_iterations;
  if (iterations != floor(iterations) || iterations < 1 || iterations > 1000) {
    return sim_json_fail(L, "midpoint_iterations", "expected an integer from 1 to 1000 (got %g)",
                iterations);
  }
  opt->midpoint_iterations = (int)iterations;
  const cJSON *integ = cJSON_GetObjectItemCaseSensitive(root, "integrator");
  if (integ) {
    int k = cJSON_IsString(integ) ? sim_integrator_parse(integ->valuestring) : -1;
    if (k < 0) {
      return sim_json_fail(L, "integrator", "expected \"euler\", \"verlet\", \"midpoint\" or \"rk4\"");
    }
    opt->integrator = (sim_integrator)k;
  }
  return 0;
}

static int parse_site(const sim_json_ctx *L, const cJSON *obj, const char *path, const sim_model *m,
                      sim_site *s) {
  static const char *const keys[] = {"name", "body", "pos", "comment", NULL};
  char body[SIM_NAME_MAX] = "", p[SIM_JSON_PATH_MAX];
  if (sim_json_expect_object(L, obj, path) || sim_json_check_keys(L, obj, path, keys) ||
      sim_json_read_name(L, obj, path, "name", s->name, 1) || sim_json_read_name(L, obj, path, "body", body, 1) ||
      sim_json_read_vector(L, obj, path, "pos", s->pos, 3, 0)) {
    return -1;
  }
  s->body = sim_model_body(m, body);
  if (s->body < 0) {
    sim_json_path_join(p, path, "body");
    return sim_json_fail(L, p, "unknown body \"%s\"", body);
  }
  return 0;
}

static int parse_sites(const sim_json_ctx *L, const cJSON *root, sim_model *m) {
  const cJSON *sites = cJSON_GetObjectItemCaseSensitive(root, "sites");
  if (!sites) {
    return 0;
  }
  if (!cJSON_IsArray(sites)) {
    return sim_json_fail(L, "sites", "expected an array");
  }
  m->nsite = cJSON_GetArraySize(sites);
  m->sites = calloc((size_t)m->nsite + 1, sizeof *m->sites);
  if (!m->sites) {
    return sim_json_fail(L, "sites", "out of memory");
  }
  int i = 0;
  for (const cJSON *s = sites->child; s; s = s->next, i++) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_index(p, "sites", i);
    if (parse_site(L, s, p, m, &m->sites[i])) {
      return -1;
    }
    for (int k = 0; k < i; k++) {
      if (strcmp(m->sites[k].name, m->sites[i].name) == 0) {
        return sim_json_fail(L, p, "duplicate site name \"%s\" (also sites[%d])", m->sites[i].name, k);
      }
    }
  }
  return 0;
}

/* --- collision geometry --------------------------------------------------------------------- */

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
                                     "conaffinity", "comment", "file", "scale", NULL};
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
      read_solref(L, obj, path, "solref", g->solref) ||
      read_solimp(L, obj, path, "solimp", g->solimp) ||
      read_mask(L, obj, path, "contype", &g->contype) ||
      read_mask(L, obj, path, "conaffinity", &g->conaffinity)) {
    return -1;
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

static int parse_geoms(const sim_json_ctx *L, const cJSON *root, sim_model *m) {
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
static int parse_excludes(const sim_json_ctx *L, const cJSON *root, sim_model *m) {
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

/* Box–box contacts are not detected: a model where two boxes could touch is refused rather than
 * let them pass through each other silently. */
static int check_box_pairs(const sim_json_ctx *L, const sim_model *m) {
  for (int i = 0; i < m->ngeom; i++) {
    for (int j = i + 1; j < m->ngeom && m->geoms[i].type == SIM_GEOM_BOX; j++) {
      if (m->geoms[j].type == SIM_GEOM_BOX && !sim_collision_filtered(m, i, j)) {
        char p[SIM_JSON_PATH_MAX];
        sim_json_path_index(p, "geoms", j);
        return sim_json_fail(L, p, "box \"%s\" may touch box \"%s\" (geoms[%d]), but box–box "
                             "contacts are not supported yet: list their bodies in \"exclude\" "
                             "or give them disjoint contype/conaffinity",
                             m->geoms[j].name, m->geoms[i].name, i);
      }
    }
  }
  return 0;
}

/* --- assembly ----------------------------------------------------------------------------- */

static int allocate_model(sim_model *m, const raw_body *rb, int n) {
  int njnt = 0, nq = 0, nv = 0;
  for (int i = 0; i < n; i++) {
    njnt += rb[i].njoint;
    for (int k = 0; k < rb[i].njoint; k++) {
      nq += sim_joint_nq(rb[i].joints[k].type);
      nv += sim_joint_nv(rb[i].joints[k].type);
    }
  }
  m->nbody = n + 1;
  m->njnt = njnt;
  m->bodies = calloc((size_t)n + 1, sizeof *m->bodies);
  m->joints = calloc((size_t)njnt + 1, sizeof *m->joints);
  m->dof_joint = calloc((size_t)nv + 1, sizeof *m->dof_joint);
  m->dof_body = calloc((size_t)nv + 1, sizeof *m->dof_body);
  m->qpos0 = calloc((size_t)nq + 1, sizeof *m->qpos0);
  return m->bodies && m->joints && m->dof_joint && m->dof_body && m->qpos0 ? 0 : -1;
}

/* joint k of src as model joint `index` on body `body`: coordinates appended */
static void assemble_joint(sim_model *m, const raw_body *src, int k, int index, int body) {
  sim_joint *j = &m->joints[index];
  *j = src->joints[k];
  j->body = body;
  j->qposadr = j->dofadr = -1;
  int nq = sim_joint_nq(j->type), nv = sim_joint_nv(j->type);
  if (nv == 0) {
    return;
  }
  j->qposadr = m->nq;
  j->dofadr = m->nv;
  memcpy(m->qpos0 + m->nq, src->initial[k], (size_t)nq * sizeof(double));
  for (int v = 0; v < nv; v++) {
    m->dof_joint[m->nv + v] = index;
    m->dof_body[m->nv + v] = body;
  }
  m->nq += nq;
  m->nv += nv;
}

static void assemble(sim_model *m, const raw_body *rb, const int *order, int n) {
  sim_body *world = &m->bodies[0];
  strcpy(world->name, "world");
  world->parent = -1;
  world->joint = -1;
  world->dofadr = -1;
  world->described = -1;
  world->quat[0] = 1;
  sim_quat_to_mat(world->mat, world->quat);
  int njnt = 0;
  for (int k = 0; k < n; k++) {
    const raw_body *src = &rb[order[k]];
    sim_body *b = &m->bodies[k + 1];
    *b = src->body;
    b->parent = strcmp(src->parent, "world") == 0 ? 0 : sim_model_body(m, src->parent);
    b->joint = njnt;
    b->jntnum = src->njoint;
    b->described = order[k];
    int nv0 = m->nv;
    for (int a = 0; a < src->njoint; a++) {
      assemble_joint(m, src, a, njnt++, k + 1);
    }
    b->dofnum = m->nv - nv0;
    b->dofadr = b->dofnum > 0 ? nv0 : -1;
    b->multi_dof = b->dofnum > 1 || b->jntnum > 1; /* else one hinge or slide, or welded */
    sim_quat_to_mat(b->mat, b->quat);
    b->identity_quat = b->quat[0] == 1 && b->quat[1] == 0 && b->quat[2] == 0 && b->quat[3] == 0;
    b->diagonal_inertia = b->inertia[1] == 0 && b->inertia[2] == 0 && b->inertia[5] == 0;
  }
  for (int i = 0; i <= n; i++) { /* parents come first: the last child wins */
    m->bodies[i].last_child = -1;
  }
  for (int i = 1; i <= n; i++) {
    m->bodies[m->bodies[i].parent].last_child = i;
  }
}

static const char *const root_keys[] = {
    "name", "comment", "timestep", "integrator", "midpoint_iterations", "solver_iterations",
    "solver_tolerance", "max_contacts", "gravity", "bodies", "geoms", "exclude",
    "sites", "actuators",
    /* sections owned by other modules, validated there */
    "sensors", "runtime", "transports", NULL};

static sim_model *build_model(const sim_json_ctx *L, const cJSON *root) {
  if (sim_json_expect_object(L, root, "") || sim_json_check_keys(L, root, "", root_keys)) {
    return NULL;
  }
  const cJSON *bodies = cJSON_GetObjectItemCaseSensitive(root, "bodies");
  if (!cJSON_IsArray(bodies) || cJSON_GetArraySize(bodies) < 1) {
    sim_json_fail(L, "bodies", "missing or empty (expected an array of body objects)");
    return NULL;
  }
  int n = cJSON_GetArraySize(bodies);
  sim_model *m = calloc(1, sizeof *m);
  raw_body *rb = calloc((size_t)n, sizeof *rb);
  int *order = calloc((size_t)n, sizeof *order);
  int ok = m && rb && order;
  if (!ok) {
    sim_json_fail(L, "", "out of memory");
  }
  int i = 0;
  for (const cJSON *b = bodies->child; ok && b; b = b->next, i++) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_index(p, "bodies", i);
    ok = parse_body(L, b, p, &rb[i]) == 0;
  }
  ok = ok && check_unique_names(L, rb, n) == 0 && order_bodies(L, rb, n, order) == 0 &&
       parse_options(L, root, &m->opt) == 0;
  if (ok && allocate_model(m, rb, n)) {
    ok = sim_json_fail(L, "", "out of memory") == 0;
  }
  if (ok) {
    assemble(m, rb, order, n);
    snprintf(m->name, sizeof m->name, "robot");
    ok = sim_json_read_name(L, root, "", "name", m->name, 0) == 0 && parse_sites(L, root, m) == 0 &&
         sim_actuators_parse(L, root, m) == 0 && parse_geoms(L, root, m) == 0;
  }
  ok = ok && parse_excludes(L, root, m) == 0;
  if (ok && sim_constraint_setconst(m)) {
    ok = sim_json_fail(L, "", "out of memory") == 0;
  }
  ok = ok && check_box_pairs(L, m) == 0; /* after the welds are known (setconst) */
  free(rb);
  free(order);
  if (!ok) {
    sim_model_free(m);
    return NULL;
  }
  return m;
}

sim_model *sim_model_load_string(const char *json, const char *source, char *err,
                                 size_t err_sz) {
  const sim_json_ctx L = {source ? source : "<string>", err, err_sz};
  if (err && err_sz) {
    err[0] = '\0';
  }
  cJSON *root = sim_json_parse_text(json, L.source, err, err_sz);
  if (!root) {
    return NULL;
  }
  sim_model *m = build_model(&L, root);
  cJSON_Delete(root);
  return m;
}

sim_model *sim_model_load_file(const char *path, char *err, size_t err_sz) {
  char scratch[8];
  if (!err || err_sz == 0) {
    err = scratch, err_sz = sizeof scratch;
  }
  char *text = sim_json_read_file(path, err, err_sz);
  if (!text) {
    return NULL;
  }
  sim_model *m = sim_model_load_string(text, path, err, err_sz);
  free(text);
  return m;
}
