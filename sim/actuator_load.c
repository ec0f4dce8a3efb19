/* sim/actuator_load.c: the "actuators" section of a robot description (docs/robot-format.md). */
#include "sim/load_internal.h"
#include "sim/servo_spec.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

typedef struct actuator_kind {
  const char *name;
  sim_actuator_type type;
  const char *const *keys; /* keys allowed for this type, NULL-terminated */
} actuator_kind;

#define COMMON_KEYS "name", "joint", "tendon", "type", "ctrlrange", "comment"
static const char *const motor_keys[] = {COMMON_KEYS, "gear", "force_limit", NULL};
static const char *const dc_keys[] = {COMMON_KEYS,  "input",      "supply_voltage", "resistance",
                                      "inductance", "kt",         "ke",             "gear",
                                      "efficiency", "current_limit", "force_limit",  NULL};
static const char *const position_keys[] = {COMMON_KEYS, "kp", "kd", "force_limit", NULL};
static const char *const velocity_keys[] = {COMMON_KEYS, "kv", "force_limit", NULL};
/* a smart servo on a bus: its "servo" block (ID, model, motor) belongs to hil/servo */
static const char *const smart_servo_keys[] = {COMMON_KEYS, "servo", NULL};
static const char *const muscle_keys[] = {COMMON_KEYS, "gear", "range", "force", "scale", "lmin", "lmax",
                                          "vmax", "fpmax", "fvmax", "timeconst", "lengthrange",
                                          "force_limit", NULL};

static const actuator_kind kinds[] = {
    {"motor", SIM_ACT_MOTOR, motor_keys},
    {"dc_motor", SIM_ACT_DC_MOTOR, dc_keys},
    {"position_servo", SIM_ACT_POSITION_SERVO, position_keys},
    {"velocity_servo", SIM_ACT_VELOCITY_SERVO, velocity_keys},
    {"servo", SIM_ACT_SMART_SERVO, smart_servo_keys},
    {"muscle", SIM_ACT_MUSCLE, muscle_keys},
};

static const actuator_kind *find_kind(const cJSON *type) {
  for (size_t k = 0; cJSON_IsString(type) && k < sizeof kinds / sizeof kinds[0]; k++) {
    if (strcmp(type->valuestring, kinds[k].name) == 0) {
      return &kinds[k];
    }
  }
  return NULL;
}

static int parse_dc_motor(const sim_json_ctx *L, const cJSON *obj, const char *path,
                          sim_actuator *a) {
  char p[SIM_JSON_PATH_MAX];
  const cJSON *input = cJSON_GetObjectItemCaseSensitive(obj, "input");
  if (input) {
    int duty = cJSON_IsString(input) && strcmp(input->valuestring, "duty") == 0;
    int volt = cJSON_IsString(input) && strcmp(input->valuestring, "voltage") == 0;
    if (!duty && !volt) {
      sim_json_path_join(p, path, "input");
      return sim_json_fail(L, p, "expected \"duty\" or \"voltage\"");
    }
    a->dc_input_voltage = volt;
  }
  a->efficiency = 1;
  if (sim_json_read_number(L, obj, path, "supply_voltage", &a->supply_voltage, 1) ||
      sim_json_check_min(L, path, "supply_voltage", a->supply_voltage, 0, 1) ||
      sim_json_read_number(L, obj, path, "resistance", &a->resistance, 1) ||
      sim_json_check_min(L, path, "resistance", a->resistance, 0, 1) ||
      sim_json_read_number(L, obj, path, "inductance", &a->inductance, 0) ||
      sim_json_check_min(L, path, "inductance", a->inductance, 0, 0) ||
      sim_json_read_number(L, obj, path, "kt", &a->kt, 1) ||
      sim_json_check_min(L, path, "kt", a->kt, 0, 1)) {
    return -1;
  }
  a->ke = a->kt; /* in SI units the back-EMF constant equals the torque constant */
  a->current_limit = a->supply_voltage / a->resistance; /* stall current */
  if (sim_json_read_number(L, obj, path, "ke", &a->ke, 0) ||
      sim_json_check_min(L, path, "ke", a->ke, 0, 1) ||
      sim_json_read_number(L, obj, path, "efficiency", &a->efficiency, 0) ||
      sim_json_check_min(L, path, "efficiency", a->efficiency, 0, 1) ||
      sim_json_read_number(L, obj, path, "current_limit", &a->current_limit, 0) ||
      sim_json_check_min(L, path, "current_limit", a->current_limit, 0, 1)) {
    return -1;
  }
  if (a->efficiency > 1) {
    sim_json_path_join(p, path, "efficiency");
    return sim_json_fail(L, p, "must be <= 1 (got %g)", a->efficiency);
  }
  double full = a->dc_input_voltage ? a->supply_voltage : 1.0;
  a->ctrlrange[0] = -full, a->ctrlrange[1] = full;
  return 0;
}

/* MuJoCo 2.2.2's <muscle> defaults, each overridable; a positive force or scale, 0 < lmin < 1 <
 * lmax, range[0] < range[1], positive vmax, fpmax >= 0, fvmax >= 1, positive time constants;
 * a lengthrange [lo < hi], or none: found at load (sim/muscle_range.c) */
static int parse_muscle(const sim_json_ctx *L, const cJSON *obj, const char *path, sim_actuator *a) {
  sim_muscle *u = &a->muscle;
  const sim_muscle defaults = {{0.75, 1.05}, -1, 200, 0.5, 1.6, 1.5, 1.3, 1.2, {0.01, 0.04}};
  char p[SIM_JSON_PATH_MAX];
  *u = defaults;
  if (sim_json_read_vector(L, obj, path, "range", u->range, 2, 0) ||
      sim_json_read_number(L, obj, path, "force", &u->force, 0) ||
      sim_json_read_number(L, obj, path, "scale", &u->scale, 0) ||
      sim_json_check_min(L, path, "scale", u->scale, 0, 1) ||
      sim_json_read_number(L, obj, path, "lmin", &u->lmin, 0) ||
      sim_json_check_min(L, path, "lmin", u->lmin, 0, 0) ||
      sim_json_read_number(L, obj, path, "lmax", &u->lmax, 0) ||
      sim_json_check_min(L, path, "lmax", u->lmax, 1, 1) ||
      sim_json_check_max(L, path, "lmin", u->lmin, 1) ||
      sim_json_read_number(L, obj, path, "vmax", &u->vmax, 0) ||
      sim_json_check_min(L, path, "vmax", u->vmax, 0, 1) ||
      sim_json_read_number(L, obj, path, "fpmax", &u->fpmax, 0) ||
      sim_json_check_min(L, path, "fpmax", u->fpmax, 0, 0) ||
      sim_json_read_number(L, obj, path, "fvmax", &u->fvmax, 0) ||
      sim_json_check_min(L, path, "fvmax", u->fvmax, 1, 0) ||
      sim_json_read_vector(L, obj, path, "timeconst", u->timeconst, 2, 0) ||
      sim_json_read_vector(L, obj, path, "lengthrange", a->lengthrange, 2, 0)) {
    return -1;
  }
  if (u->force == 0 || !(u->range[0] < u->range[1]) || !(u->timeconst[0] > 0) ||
      !(u->timeconst[1] > 0)) {
    sim_json_path_join(p, path, u->force == 0 ? "force" : !(u->range[0] < u->range[1]) ? "range"
                                                                                       : "timeconst");
    return sim_json_fail(L, p, u->force == 0 ? "must be positive (or negative: scale/acc0)"
                               : !(u->range[0] < u->range[1]) ? "expected [lo, hi] with lo < hi"
                                                              : "expected two positive time constants");
  }
  if (cJSON_HasObjectItem(obj, "lengthrange") && !(a->lengthrange[0] < a->lengthrange[1])) {
    sim_json_path_join(p, path, "lengthrange");
    return sim_json_fail(L, p, "expected [lo, hi] with lo < hi (or leave it out: found at load)");
  }
  return 0;
}

static int parse_type_parameters(const sim_json_ctx *L, const cJSON *obj, const char *path,
                                 sim_actuator *a) {
  a->gear = 1;
  /* a muscle's gear scales its transmission and may be negative (an antagonist on a joint) */
  const int muscle = a->type == SIM_ACT_MUSCLE;
  char p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, "gear");
  if (sim_json_read_number(L, obj, path, "gear", &a->gear, 0) ||
      (muscle ? a->gear == 0 && sim_json_fail(L, p, "must not be 0")
              : sim_json_check_min(L, path, "gear", a->gear, 0, 1)) ||
      sim_json_read_number(L, obj, path, "force_limit", &a->force_limit, 0) ||
      sim_json_check_min(L, path, "force_limit", a->force_limit, 0, 0)) {
    return -1;
  }
  switch (a->type) {
  case SIM_ACT_DC_MOTOR:
    return parse_dc_motor(L, obj, path, a);
  case SIM_ACT_POSITION_SERVO:
    return sim_json_read_number(L, obj, path, "kp", &a->kp, 1) ||
                   sim_json_check_min(L, path, "kp", a->kp, 0, 1) ||
                   sim_json_read_number(L, obj, path, "kd", &a->kd, 0) ||
                   sim_json_check_min(L, path, "kd", a->kd, 0, 0)
               ? -1
               : 0;
  case SIM_ACT_VELOCITY_SERVO:
    return sim_json_read_number(L, obj, path, "kv", &a->kv, 1) ||
                   sim_json_check_min(L, path, "kv", a->kv, 0, 1)
               ? -1
               : 0;
  case SIM_ACT_MUSCLE:
    return parse_muscle(L, obj, path, a);
  case SIM_ACT_MOTOR:
  default:
    return 0;
  }
}

/* "tendon": the actuator pulls along it; motors, servos and muscles only (a DC motor's and a
 * smart servo's models are of a rotor at a joint) */
static int parse_tendon_ref(const sim_json_ctx *L, const cJSON *obj, const char *path,
                            const sim_model *m, sim_actuator *a) {
  char name[SIM_NAME_MAX] = "", p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, "tendon");
  if (sim_json_read_name(L, obj, path, "tendon", name, 1)) {
    return -1;
  }
  if (cJSON_HasObjectItem(obj, "joint")) {
    return sim_json_fail(L, p, "an actuator drives a joint or a tendon, not both");
  }
  if (a->type == SIM_ACT_DC_MOTOR || a->type == SIM_ACT_SMART_SERVO) {
    return sim_json_fail(L, p, "a %s drives a joint, not a tendon",
                         a->type == SIM_ACT_DC_MOTOR ? "dc_motor" : "servo");
  }
  a->tendon = sim_model_tendon(m, name);
  if (a->tendon < 0) {
    return sim_json_fail(L, p, "unknown tendon \"%s\"", name);
  }
  a->joint = a->dof = a->qposadr = -1;
  return 0;
}

static int parse_joint_ref(const sim_json_ctx *L, const cJSON *obj, const char *path,
                           const sim_model *m, sim_actuator *a) {
  char name[SIM_NAME_MAX] = "", p[SIM_JSON_PATH_MAX];
  if (sim_json_read_name(L, obj, path, "joint", name, 1)) {
    return -1;
  }
  a->joint = sim_model_joint(m, name);
  sim_json_path_join(p, path, "joint");
  if (a->joint < 0 || m->joints[a->joint].dofadr < 0) {
    return sim_json_fail(L, p, a->joint < 0 ? "unknown joint \"%s\""
                                            : "joint \"%s\" is fixed (nothing to drive)",
                         name);
  }
  if (sim_joint_nv(m->joints[a->joint].type) != 1) {
    return sim_json_fail(L, p, "joint \"%s\" has several degrees of freedom (an actuator drives "
                               "one hinge or slide)", name);
  }
  a->dof = m->joints[a->joint].dofadr;
  a->qposadr = m->joints[a->joint].qposadr;
  return 0;
}

static int parse_ctrlrange(const sim_json_ctx *L, const cJSON *obj, const char *path,
                           sim_actuator *a) {
  if (!cJSON_GetObjectItemCaseSensitive(obj, "ctrlrange")) {
    return 0;
  }
  char p[SIM_JSON_PATH_MAX];
  if (sim_json_read_vector(L, obj, path, "ctrlrange", a->ctrlrange, 2, 1)) {
    return -1;
  }
  if (!(a->ctrlrange[0] < a->ctrlrange[1])) {
    sim_json_path_join(p, path, "ctrlrange");
    return sim_json_fail(L, p, "lower bound %g must be below upper bound %g", a->ctrlrange[0],
                         a->ctrlrange[1]);
  }
  return 0;
}

static int parse_actuator(const sim_json_ctx *L, const cJSON *obj, const char *path,
                          const sim_model *m, sim_actuator *a) {
  char p[SIM_JSON_PATH_MAX];
  if (sim_json_expect_object(L, obj, path)) {
    return -1;
  }
  const actuator_kind *kind = find_kind(cJSON_GetObjectItemCaseSensitive(obj, "type"));
  if (!kind) {
    sim_json_path_join(p, path, "type");
    return sim_json_fail(L, p, "missing or unknown (expected \"motor\", \"dc_motor\", "
                               "\"position_servo\", \"velocity_servo\", \"servo\" or \"muscle\")");
  }
  a->type = kind->type;
  a->ctrlrange[0] = -DBL_MAX, a->ctrlrange[1] = DBL_MAX;
  a->actadr = -1;
  a->tendon = -1;
  const int on_tendon = cJSON_HasObjectItem(obj, "tendon");
  return sim_json_check_keys(L, obj, path, kind->keys) ||
                 sim_json_read_name(L, obj, path, "name", a->name, 1) ||
                 (on_tendon ? parse_tendon_ref(L, obj, path, m, a)
                            : parse_joint_ref(L, obj, path, m, a)) ||
                 parse_type_parameters(L, obj, path, a) || parse_ctrlrange(L, obj, path, a)
             ? -1
             : 0;
}

/* A smart servo's gearbox at the joint it drives (sim/servo_spec.h): the rotor's inertia
 * through the gear adds to the armature, the gear train's friction to frictionloss (Coulomb)
 * and damping (viscous). The block's figures override the model's. */
static int add_servo_gearbox(const sim_json_ctx *L, const cJSON *obj, const char *path,
                             sim_model *m, const sim_actuator *a) {
  char p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, "servo");
  const cJSON *block = cJSON_GetObjectItemCaseSensitive(obj, "servo");
  if (!block) {
    return sim_json_fail(L, p, "missing (a servo needs {\"id\", \"model\"})");
  }
  const sim_servo_spec *spec = sim_servo_block_read(L, block, p);
  if (!spec) {
    return -1;
  }
  sim_servo_spec g = *spec;
  if (sim_json_read_number(L, block, p, "gear_ratio", &g.gear_ratio, 0) ||
      sim_json_check_min(L, p, "gear_ratio", g.gear_ratio, 0, 1) ||
      sim_json_read_number(L, block, p, "rotor_inertia", &g.rotor_inertia, 0) ||
      sim_json_check_min(L, p, "rotor_inertia", g.rotor_inertia, 0, 0) ||
      sim_json_read_number(L, block, p, "gear_friction", &g.gear_friction, 0) ||
      sim_json_check_min(L, p, "gear_friction", g.gear_friction, 0, 0) ||
      sim_json_read_number(L, block, p, "gear_damping", &g.gear_damping, 0) ||
      sim_json_check_min(L, p, "gear_damping", g.gear_damping, 0, 0)) {
    return -1;
  }
  sim_joint *j = &m->joints[a->joint];
  j->armature += sim_servo_reflected_inertia(&g);
  j->frictionloss += g.gear_friction;
  j->damping += g.gear_damping;
  return 0;
}

int sim_actuators_parse(const sim_json_ctx *L, const cJSON *root, sim_model *m) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "actuators");
  if (!list) {
    return 0;
  }
  if (!cJSON_IsArray(list)) {
    return sim_json_fail(L, "actuators", "expected an array of actuator objects");
  }
  m->nu = cJSON_GetArraySize(list);
  m->actuators = calloc((size_t)m->nu + 1, sizeof *m->actuators);
  if (!m->actuators) {
    return sim_json_fail(L, "actuators", "out of memory");
  }
  int i = 0;
  for (const cJSON *item = list->child; item; item = item->next, i++) {
    char p[SIM_JSON_PATH_MAX];
    sim_actuator *a = &m->actuators[i];
    sim_json_path_index(p, "actuators", i);
    if (parse_actuator(L, item, p, m, a) ||
        (a->type == SIM_ACT_SMART_SERVO && add_servo_gearbox(L, item, p, m, a))) {
      return -1;
    }
    for (int k = 0; k < i; k++) {
      if (strcmp(m->actuators[k].name, a->name) == 0) {
        return sim_json_fail(L, p, "duplicate actuator name \"%s\" (also actuators[%d])",
                             a->name, k);
      }
    }
    if ((a->type == SIM_ACT_DC_MOTOR && a->inductance > 0) || a->type == SIM_ACT_MUSCLE) {
      a->actadr = m->na++;
    }
  }
  return 0;
}
