/* sysid/robot_patch.c: fitted values into a robot JSON document (robot_patch.h). */
#include "sysid/robot_patch.h"

#include <stdio.h>
#include <string.h>

#include "sim/servo_spec.h"

static int named(const cJSON *o, const char *name) {
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "name");
  return cJSON_IsString(n) && strcmp(n->valuestring, name) == 0;
}

/* the object of `list` (an array under doc) whose "name" is name */
static cJSON *find_named(cJSON *doc, const char *list, const char *name) {
  cJSON *e;
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, list)) {
    if (named(e, name)) {
      return e;
    }
  }
  return NULL;
}

/* the joint object named `name`: a body's "joint", or an entry of its "joints" */
static cJSON *find_joint(cJSON *doc, const char *name) {
  cJSON *b;
  cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(doc, "bodies")) {
    cJSON *j = cJSON_GetObjectItemCaseSensitive(b, "joint");
    if (cJSON_IsObject(j) && named(j, name)) {
      return j;
    }
    cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(b, "joints")) {
      if (named(e, name)) {
        return e;
      }
    }
  }
  return NULL;
}

static int set_number(cJSON *obj, const char *key, double v) {
  cJSON *old = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (old) {
    return cJSON_ReplaceItemInObjectCaseSensitive(obj, key, cJSON_CreateNumber(v)) ? 0 : -1;
  }
  return cJSON_AddNumberToObject(obj, key, v) ? 0 : -1;
}

static double get_number(const cJSON *obj, const char *key, double dflt) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* element k of the array obj[key] (created as `fill` of n zeros when absent) */
static int set_array_item(cJSON *obj, const char *key, int k, int n, double v) {
  cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!a) {
    a = cJSON_AddArrayToObject(obj, key);
    for (int i = 0; a && i < n; i++) {
      cJSON_AddItemToArray(a, cJSON_CreateNumber(0));
    }
  }
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) <= k) {
    return -1;
  }
  return cJSON_ReplaceItemInArray(a, k, cJSON_CreateNumber(v)) ? 0 : -1;
}

static int patch_body(cJSON *doc, const sysid_param_result *p) {
  static const char *const com[] = {"com_x", "com_y", "com_z"};
  static const char *const inertia[] = {"ixx", "iyy", "izz", "ixy", "ixz", "iyz"};
  cJSON *b = find_named(doc, "bodies", p->element);
  cJSON *in = b ? cJSON_GetObjectItemCaseSensitive(b, "inertial") : NULL;
  if (b && !in) {
    in = cJSON_AddObjectToObject(b, "inertial");
  }
  if (!in) {
    return -1;
  }
  if (strcmp(p->field, "mass") == 0) {
    return set_number(in, "mass", p->value);
  }
  for (int k = 0; k < 3; k++) {
    if (strcmp(p->field, com[k]) == 0) {
      return set_array_item(in, "com", k, 3, p->value);
    }
  }
  for (int k = 0; k < 6; k++) {
    if (strcmp(p->field, inertia[k]) == 0) {
      return set_array_item(in, "inertia", k, 6, p->value);
    }
  }
  return -1;
}

/* the smart servo driving joint `name` in m0, or -1 */
static int servo_of_joint(const sim_model *m0, const char *name) {
  const int j = sim_model_joint(m0, name);
  for (int a = 0; j >= 0 && a < m0->nu; a++) {
    if (m0->actuators[a].joint == j && m0->actuators[a].type == SIM_ACT_SMART_SERVO) {
      return a;
    }
  }
  return -1;
}

/* The fitted total of a smart servo's joint (armature or frictionloss) split as the loader adds
 * it up: the joint's own key stays and the servo block's rotor_inertia (÷ ratio²) or
 * gear_friction takes the rest; a total below the joint's own figure lowers that instead. */
static int patch_servo(cJSON *doc, const sim_model *m0, int a, const char *key, double fitted) {
  const sim_actuator *act = &m0->actuators[a];
  cJSON *obj = find_named(doc, "actuators", act->name);
  cJSON *block = obj ? cJSON_GetObjectItemCaseSensitive(obj, "servo") : NULL;
  cJSON *joint = find_joint(doc, m0->joints[act->joint].name);
  const cJSON *model = block ? cJSON_GetObjectItemCaseSensitive(block, "model") : NULL;
  const sim_servo_spec *spec = cJSON_IsString(model) ? sim_servo_spec_find(model->valuestring)
                                                     : NULL;
  if (!spec || !joint) {
    return -1;
  }
  const int rotor = strcmp(key, "armature") == 0;
  const char *share_key = rotor ? "rotor_inertia"
                          : strcmp(key, "damping") == 0 ? "gear_damping" : "gear_friction";
  const double own = get_number(joint, key, 0);
  const double ratio = get_number(block, "gear_ratio", spec->gear_ratio);
  const double share = fitted - own;
  if (share < 0 && set_number(joint, key, fitted) != 0) {
    return -1;
  }
  const double v = share < 0 ? 0 : share;
  return set_number(block, share_key, rotor ? v / (ratio * ratio) : v);
}

static int patch_joint(cJSON *doc, const sysid_param_result *p, const sim_model *m0) {
  cJSON *j = find_joint(doc, p->element);
  if (!j) {
    return -1;
  }
  const int geared = strcmp(p->field, "armature") == 0 || strcmp(p->field, "damping") == 0 ||
                     strcmp(p->field, "frictionloss") == 0;
  const int servo = servo_of_joint(m0, p->element);
  if (geared && servo >= 0) {
    return patch_servo(doc, m0, servo, p->field, p->value); /* the gearbox's share moves */
  }
  return set_number(j, p->field, p->value);
}

static int patch_one(cJSON *doc, const sysid_param_result *p, const sim_model *m0) {
  switch (p->kind) {
  case SIM_PARAM_BODY:
    return patch_body(doc, p);
  case SIM_PARAM_JOINT:
    return patch_joint(doc, p, m0);
  case SIM_PARAM_ACTUATOR: {
    if (strcmp(p->field, "rotor_inertia") == 0 || strcmp(p->field, "gear_friction") == 0) {
      /* value: the joint's total, as the loader folds the gearbox in */
      const int a = sim_model_actuator(m0, p->element);
      const char *key = p->field[0] == 'r' ? "armature" : "frictionloss";
      return a >= 0 ? patch_servo(doc, m0, a, key, p->value) : -1;
    }
    cJSON *a = find_named(doc, "actuators", p->element);
    return a ? set_number(a, p->field, p->value) : -1;
  }
  default:
    return -1;
  }
}

int sysid_robot_patch(cJSON *doc, const sysid_report *r, const sim_model *m0, char *err,
                      size_t err_sz) {
  for (int i = 0; i < r->np; i++) {
    if (patch_one(doc, &r->param[i], m0) != 0) {
      snprintf(err, err_sz, "%s: the robot document has no place for it (no %s \"%s\" with a "
               "\"%s\")", r->param[i].name,
               r->param[i].kind == SIM_PARAM_BODY    ? "body"
               : r->param[i].kind == SIM_PARAM_JOINT ? "joint"
                                                     : "actuator",
               r->param[i].element, r->param[i].field);
      return -1;
    }
  }
  return 0;
}
