/* sim/equality_load.c: the "equality" constraints of a robot description (MuJoCo's <equality>
 * connect, weld and joint; docs/robot-format.md, "Equality constraints"), on the assembled
 * bodies and joints. What MuJoCo's compiler derives at qpos0 (a connect's point on body2, a
 * weld's relative pose when not given) is completed by sim_constraint_setconst. */
#include "sim/load_internal.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#define EQ_MAX SIM_BODIES_MAX /* equality constraints per model: a bound on the rows' memory */

static int parse_type(const sim_json_ctx *L, const cJSON *obj, const char *path,
                      sim_equality_type *type) {
  char t[16] = "", p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, "type");
  if (!cJSON_GetObjectItemCaseSensitive(obj, "type")) {
    return sim_json_fail(L, p, "missing (expected \"connect\", \"weld\", \"joint\" or \"tendon\")");
  }
  if (sim_json_read_string(L, obj, path, "type", t, sizeof t)) {
    return -1;
  }
  static const char *const names[] = {"connect", "weld", "joint", "tendon"};
  for (int k = 0; k < 4; k++) {
    if (strcmp(t, names[k]) == 0) {
      *type = (sim_equality_type)k;
      return 0;
    }
  }
  return sim_json_fail(L, p, "unknown type \"%s\" (expected \"connect\", \"weld\", \"joint\" or "
                       "\"tendon\")", t);
}

/* body1 (required) and body2 (default the world), distinct */
static int parse_bodies(const sim_json_ctx *L, const cJSON *obj, const char *path,
                        const sim_model *m, sim_equality *q) {
  char b1[SIM_NAME_MAX] = "", b2[SIM_NAME_MAX] = "world", p[SIM_JSON_PATH_MAX];
  if (sim_json_read_name(L, obj, path, "body1", b1, 1) ||
      sim_json_read_name(L, obj, path, "body2", b2, 0)) {
    return -1;
  }
  q->obj1 = sim_model_body(m, b1);
  q->obj2 = sim_model_body(m, b2);
  if (q->obj1 < 0 || q->obj2 < 0) {
    sim_json_path_join(p, path, q->obj1 < 0 ? "body1" : "body2");
    return sim_json_fail(L, p, "unknown body \"%s\"", q->obj1 < 0 ? b1 : b2);
  }
  if (q->obj1 == q->obj2) {
    sim_json_path_join(p, path, "body2");
    return sim_json_fail(L, p, "the same body as body1 (\"%s\"; an absent body2 is the world)",
                         b1);
  }
  return 0;
}

/* a hinge or slide joint named at obj.key; -1 when absent and not required */
static int parse_joint(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                       const sim_model *m, int required, int *out) {
  char name[SIM_NAME_MAX] = "", p[SIM_JSON_PATH_MAX];
  *out = -1;
  if (sim_json_read_name(L, obj, path, key, name, required)) {
    return -1;
  }
  if (!name[0]) {
    return 0;
  }
  sim_json_path_join(p, path, key);
  *out = sim_model_joint(m, name);
  if (*out < 0) {
    return sim_json_fail(L, p, "unknown joint \"%s\"", name);
  }
  const sim_joint_type t = m->joints[*out].type;
  if (t != SIM_JOINT_HINGE && t != SIM_JOINT_SLIDE) {
    return sim_json_fail(L, p, "joint \"%s\" is not a hinge or a slide (a joint equality couples "
                         "scalar joints)", name);
  }
  return 0;
}

/* a tendon named at obj.key; -1 when absent and not required */
static int parse_tendon(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                        const sim_model *m, int required, int *out) {
  char name[SIM_NAME_MAX] = "", p[SIM_JSON_PATH_MAX];
  *out = -1;
  if (sim_json_read_name(L, obj, path, key, name, required)) {
    return -1;
  }
  if (!name[0]) {
    return 0;
  }
  *out = sim_model_tendon(m, name);
  if (*out < 0) {
    sim_json_path_join(p, path, key);
    return sim_json_fail(L, p, "unknown tendon \"%s\"", name);
  }
  return 0;
}

static int parse_equality(const sim_json_ctx *L, const cJSON *obj, const char *path,
                          const sim_model *m, sim_equality *q) {
  static const char *const keys[] = {"type", "name", "body1", "body2", "anchor", "relpose",
                                     "torquescale", "joint1", "joint2", "tendon1", "tendon2",
                                     "polycoef", "active", "solref", "solimp", "comment", NULL};
  char p[SIM_JSON_PATH_MAX];
  if (sim_json_expect_object(L, obj, path) || parse_type(L, obj, path, &q->type) ||
      sim_json_check_keys(L, obj, path, keys) || sim_json_read_name(L, obj, path, "name", q->name, 0) ||
      sim_json_read_solref(L, obj, path, "solref", q->solref) ||
      sim_json_read_solimp(L, obj, path, "solimp", q->solimp)) {
    return -1;
  }
  const cJSON *active = cJSON_GetObjectItemCaseSensitive(obj, "active");
  if (active && !cJSON_IsBool(active)) {
    sim_json_path_join(p, path, "active");
    return sim_json_fail(L, p, "expected true or false");
  }
  q->active = !active || cJSON_IsTrue(active);
  /* the keys of the other types are errors, so a misplaced one is not silently ignored */
  static const char *const own[4][6] = {{"body1", "body2", "anchor", NULL},
                                        {"body1", "body2", "anchor", "relpose", "torquescale", NULL},
                                        {"joint1", "joint2", "polycoef", NULL},
                                        {"tendon1", "tendon2", "polycoef", NULL}};
  static const char *const typed[] = {"body1", "body2", "anchor", "relpose", "torquescale",
                                      "joint1", "joint2", "tendon1", "tendon2", "polycoef", NULL};
  for (int k = 0; typed[k]; k++) {
    int allowed = 0;
    for (int t = 0; own[q->type][t]; t++) {
      allowed |= strcmp(own[q->type][t], typed[k]) == 0;
    }
    if (!allowed && cJSON_GetObjectItemCaseSensitive(obj, typed[k])) {
      sim_json_path_join(p, path, typed[k]);
      static const char *const names[] = {"connect", "weld", "joint", "tendon"};
      return sim_json_fail(L, p, "not a key of a \"%s\" equality", names[q->type]);
    }
  }
  memset(q->data, 0, sizeof q->data);
  if (q->type == SIM_EQ_TENDON) {
    q->data[1] = 1; /* MuJoCo's default polycoef [0 1 0 0 0] */
    if (parse_tendon(L, obj, path, "tendon1", m, 1, &q->obj1) ||
        parse_tendon(L, obj, path, "tendon2", m, 0, &q->obj2) ||
        sim_json_read_vector(L, obj, path, "polycoef", q->data, 5, 0)) {
      return -1;
    }
    if (q->obj1 == q->obj2) {
      sim_json_path_join(p, path, "tendon2");
      return sim_json_fail(L, p, "the same tendon as tendon1");
    }
    return 0;
  }
  if (q->type == SIM_EQ_JOINT) {
    q->data[1] = 1; /* MuJoCo's default polycoef [0 1 0 0 0]: q1 = q2 */
    if (parse_joint(L, obj, path, "joint1", m, 1, &q->obj1) ||
        parse_joint(L, obj, path, "joint2", m, 0, &q->obj2) ||
        sim_json_read_vector(L, obj, path, "polycoef", q->data, 5, 0)) {
      return -1;
    }
    if (q->obj1 == q->obj2) {
      sim_json_path_join(p, path, "joint2");
      return sim_json_fail(L, p, "the same joint as joint1");
    }
    return 0;
  }
  if (parse_bodies(L, obj, path, m, q)) {
    return -1;
  }
  if (q->type == SIM_EQ_CONNECT) {
    return sim_json_read_vector(L, obj, path, "anchor", q->data, 3, 1);
  }
  q->data[10] = 1; /* torquescale */
  double relpose[7] = {0};
  if (sim_json_read_vector(L, obj, path, "anchor", q->data, 3, 0) ||
      sim_json_read_vector(L, obj, path, "relpose", relpose, 7, 0) ||
      sim_json_read_number(L, obj, path, "torquescale", &q->data[10], 0)) {
    return -1;
  }
  if (cJSON_GetObjectItemCaseSensitive(obj, "relpose")) {
    if (relpose[3] == 0 && relpose[4] == 0 && relpose[5] == 0 && relpose[6] == 0) {
      sim_json_path_join(p, path, "relpose");
      return sim_json_fail(L, p, "the quaternion (the last 4 numbers) is 0: give the orientation "
                           "to hold, or leave relpose out to hold the initial one");
    }
    memcpy(q->data + 3, relpose, sizeof relpose); /* normalized by the constants' pass */
  }
  return 0;
}

int sim_equalities_parse(const sim_json_ctx *L, const cJSON *root, sim_model *m) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "equality");
  if (!list) {
    return 0;
  }
  if (!cJSON_IsArray(list)) {
    return sim_json_fail(L, "equality", "expected an array of equality constraint objects");
  }
  const int n = cJSON_GetArraySize(list);
  if (n > EQ_MAX) {
    return sim_json_fail(L, "equality", "%d equality constraints, more than the limit of %d", n,
                         EQ_MAX);
  }
  m->equalities = calloc((size_t)n + 1, sizeof *m->equalities);
  if (!m->equalities) {
    return sim_json_fail(L, "equality", "out of memory");
  }
  int i = 0;
  for (const cJSON *e = list->child; e; e = e->next, i++) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_index(p, "equality", i);
    if (parse_equality(L, e, p, m, &m->equalities[i])) {
      return -1;
    }
    m->neq = i + 1;
    for (int k = 0; k < i && m->equalities[i].name[0]; k++) {
      if (strcmp(m->equalities[k].name, m->equalities[i].name) == 0) {
        return sim_json_fail(L, p, "duplicate equality name \"%s\" (also equality[%d])",
                             m->equalities[i].name, k);
      }
    }
  }
  return 0;
}
