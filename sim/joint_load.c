/* sim/joint_load.c: the joints of a body in a robot description: one "joint" or a list of
 * "joints", their types, axes, anchors, springs, limits and friction (docs/robot-format.md). */
#include "sim/load_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

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
  if (sim_json_read_solref(L, obj, path, "solref_limit", j->solref_limit) ||
      sim_json_read_solimp(L, obj, path, "solimp_limit", j->solimp_limit) ||
      sim_json_read_number(L, obj, path, "frictionloss", &j->frictionloss, 0) ||
      sim_json_check_min(L, path, "frictionloss", j->frictionloss, 0, 0) ||
      sim_json_read_solref(L, obj, path, "solref_friction", j->solref_friction) ||
      sim_json_read_solimp(L, obj, path, "solimp_friction", j->solimp_friction)) {
    return -1;
  }
  return 0;
}

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

int sim_joints_parse(const sim_json_ctx *L, const cJSON *obj, const char *path, raw_body *rb) {
  char p[SIM_JSON_PATH_MAX];
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
  return 0;
}
