/* sim/deriv/param.c: model parameters by name — parsing KIND/NAME/FIELD lists, their values,
 * units and names (deriv.h). */
#include "sim/deriv/deriv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const struct field_info {
  sim_param_kind kind;
  const char *name;
  const char *unit;
} fields[SIM_PARAM_NFIELD] = {
#define SIM_PARAM_INFO(kind, field, unit) {SIM_PARAM_##kind, #field, unit},
    SIM_PARAM_FIELDS(SIM_PARAM_INFO)
#undef SIM_PARAM_INFO
};

static const char *const kind_names[3] = {"body", "joint", "actuator"};

sim_param_kind sim_param_kind_of(sim_param_field field) {
  return fields[field].kind;
}

const char *sim_param_unit(sim_param_field field) {
  return (int)field >= 0 && field < SIM_PARAM_NFIELD ? fields[field].unit : "";
}

static const char *element_name(const sim_model *m, sim_param_kind kind, int index) {
  return kind == SIM_PARAM_BODY    ? m->bodies[index].name
         : kind == SIM_PARAM_JOINT ? m->joints[index].name
                                   : m->actuators[index].name;
}

static int element_count(const sim_model *m, sim_param_kind kind) {
  return kind == SIM_PARAM_BODY ? m->nbody : kind == SIM_PARAM_JOINT ? m->njnt : m->nu;
}

void sim_param_name(const sim_model *m, sim_param p, char *buf, size_t buf_sz) {
  sim_param_kind kind = sim_param_kind_of(p.field);
  snprintf(buf, buf_sz, "%s/%s/%s", kind_names[kind], element_name(m, kind, p.index),
           fields[p.field].name);
}

/* --- which fields an element has -------------------------------------------------------- */

/* NULL when field applies to element index, else why not */
static const char *not_applicable(const sim_model *m, sim_param_field field, int index) {
  switch (sim_param_kind_of(field)) {
  case SIM_PARAM_BODY:
    return index == 0 ? "the world has no mass properties" : NULL;
  case SIM_PARAM_JOINT: {
    const sim_joint *j = &m->joints[index];
    if (j->type == SIM_JOINT_FIXED) {
      return "a fixed joint has no degree of freedom";
    }
    int scalar = j->type == SIM_JOINT_HINGE || j->type == SIM_JOINT_SLIDE;
    if (!scalar && (field == SIM_PARAM_JOINT_stiffness || field == SIM_PARAM_JOINT_springref ||
                    field == SIM_PARAM_JOINT_frictionloss)) {
      return "not modelled on ball and free joints";
    }
    if (field == SIM_PARAM_JOINT_frictionloss && !(j->frictionloss > 0)) {
      return "frictionloss is 0: the joint has no friction row to differentiate (give it a "
             "positive value)";
    }
    return NULL;
  }
  case SIM_PARAM_ACTUATOR: {
    const sim_actuator *a = &m->actuators[index];
    switch (field) {
    case SIM_PARAM_ACTUATOR_gear:
      return a->type == SIM_ACT_MOTOR || a->type == SIM_ACT_DC_MOTOR
                 ? NULL
                 : "only motors and DC motors have a gear";
    case SIM_PARAM_ACTUATOR_kp:
    case SIM_PARAM_ACTUATOR_kd:
      return a->type == SIM_ACT_POSITION_SERVO ? NULL : "only position servos have kp and kd";
    case SIM_PARAM_ACTUATOR_kv:
      return a->type == SIM_ACT_VELOCITY_SERVO ? NULL : "only velocity servos have kv";
    case SIM_PARAM_ACTUATOR_inductance:
      if (a->type == SIM_ACT_DC_MOTOR && a->actadr < 0) {
        return "the DC motor has no winding state (inductance 0): its inductance has no "
               "derivative";
      }
      /* fall through */
    default:
      return a->type == SIM_ACT_DC_MOTOR ? NULL : "only DC motors have this field";
    }
  }
  }
  return "unknown";
}

/* --- parsing ------------------------------------------------------------------------------ */

static int add(sim_param *out, int max, int n, sim_param p) {
  for (int k = 0; k < n && k < max; k++) {
    if (out && out[k].field == p.field && out[k].index == p.index) {
      return n; /* kept once */
    }
  }
  if (out && n < max) {
    out[n] = p;
  }
  return n + 1;
}

/* one entry KIND/NAME/FIELD; returns the new count or -1 */
static int parse_entry(const sim_model *m, const char *entry, sim_param *out, int max, int n,
                       char *err, size_t err_sz) {
  const char *slash1 = strchr(entry, '/'), *slash2 = strrchr(entry, '/');
  if (!slash1 || slash1 == slash2) {
    snprintf(err, err_sz, "parameter '%s': expected KIND/NAME/FIELD (body/NAME/mass, ...)", entry);
    return -1;
  }
  size_t klen = (size_t)(slash1 - entry), nlen = (size_t)(slash2 - slash1 - 1);
  const char *field = slash2 + 1;
  int kind = -1;
  for (int k = 0; k < 3; k++) {
    if (strlen(kind_names[k]) == klen && strncmp(entry, kind_names[k], klen) == 0) {
      kind = k;
    }
  }
  if (kind < 0) {
    snprintf(err, err_sz, "parameter '%s': unknown kind (expected body, joint or actuator)", entry);
    return -1;
  }
  int any_name = nlen == 1 && slash1[1] == '*', any_field = strcmp(field, "*") == 0, found = 0;
  for (int i = 0; i < element_count(m, (sim_param_kind)kind); i++) {
    const char *name = element_name(m, (sim_param_kind)kind, i);
    if (!any_name && (strlen(name) != nlen || strncmp(name, slash1 + 1, nlen) != 0)) {
      continue;
    }
    if (any_name && kind == SIM_PARAM_BODY && i == 0) {
      continue;
    }
    found = 1;
    int matched = 0;
    for (int f = 0; f < SIM_PARAM_NFIELD; f++) {
      if (fields[f].kind != (sim_param_kind)kind || (!any_field && strcmp(field, fields[f].name))) {
        continue;
      }
      matched = 1;
      const char *why = not_applicable(m, (sim_param_field)f, i);
      if (!why) {
        n = add(out, max, n, (sim_param){(sim_param_field)f, i});
      } else if (!any_name && !any_field) {
        snprintf(err, err_sz, "parameter '%s': %s", entry, why);
        return -1;
      }
    }
    if (!matched) {
      char list[512] = "";
      for (int f = 0; f < SIM_PARAM_NFIELD; f++) {
        if (fields[f].kind == (sim_param_kind)kind) {
          size_t len = strlen(list);
          snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", fields[f].name);
        }
      }
      snprintf(err, err_sz, "parameter '%s': unknown field '%s' (expected one of: %s)", entry,
               field, list);
      return -1;
    }
  }
  if (!found && !any_name) {
    snprintf(err, err_sz, "parameter '%s': the model has no %s named '%.*s'", entry,
             kind_names[kind], (int)nlen, slash1 + 1);
    return -1;
  }
  return n;
}

int sim_param_parse(const sim_model *m, const char *list, sim_param *out, int max, char *err,
                    size_t err_sz) {
  int n = 0;
  char entry[3 * SIM_NAME_MAX + 16];
  for (const char *p = list; p && *p;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    while (len > 0 && (*p == ' ')) {
      p++, len--;
    }
    while (len > 0 && p[len - 1] == ' ') {
      len--;
    }
    if (len >= sizeof entry) {
      snprintf(err, err_sz, "parameter '%.*s...': too long", 32, p);
      return -1;
    }
    if (len > 0) {
      memcpy(entry, p, len);
      entry[len] = '\0';
      n = parse_entry(m, entry, out, max, n, err, err_sz);
      if (n < 0) {
        return -1;
      }
    }
    p = comma ? comma + 1 : NULL;
  }
  return n;
}

/* --- values ---------------------------------------------------------------------------------- */

/* the model field a parameter names (inertia products: the upper entry; sim_param_set keeps
 * the lower one equal) */
static double *field_address(sim_model *m, sim_param p) {
  static const int entry[6] = {0, 4, 8, 1, 2, 5};
  sim_body *b = &m->bodies[p.index];
  sim_joint *j = &m->joints[p.index];
  sim_actuator *a = &m->actuators[p.index];
  switch (p.field) {
  case SIM_PARAM_BODY_mass: return &b->mass;
  case SIM_PARAM_BODY_com_x: return &b->com[0];
  case SIM_PARAM_BODY_com_y: return &b->com[1];
  case SIM_PARAM_BODY_com_z: return &b->com[2];
  case SIM_PARAM_BODY_ixx:
  case SIM_PARAM_BODY_iyy:
  case SIM_PARAM_BODY_izz:
  case SIM_PARAM_BODY_ixy:
  case SIM_PARAM_BODY_ixz:
  case SIM_PARAM_BODY_iyz: return &b->inertia[entry[p.field - SIM_PARAM_BODY_ixx]];
  case SIM_PARAM_JOINT_damping: return &j->damping;
  case SIM_PARAM_JOINT_stiffness: return &j->stiffness;
  case SIM_PARAM_JOINT_springref: return &j->springref;
  case SIM_PARAM_JOINT_armature: return &j->armature;
  case SIM_PARAM_JOINT_frictionloss: return &j->frictionloss;
  case SIM_PARAM_ACTUATOR_gear: return &a->gear;
  case SIM_PARAM_ACTUATOR_kp: return &a->kp;
  case SIM_PARAM_ACTUATOR_kd: return &a->kd;
  case SIM_PARAM_ACTUATOR_kv: return &a->kv;
  case SIM_PARAM_ACTUATOR_resistance: return &a->resistance;
  case SIM_PARAM_ACTUATOR_kt: return &a->kt;
  case SIM_PARAM_ACTUATOR_ke: return &a->ke;
  case SIM_PARAM_ACTUATOR_inductance: return &a->inductance;
  case SIM_PARAM_NFIELD: break;
  }
  return NULL;
}

double sim_param_get(const sim_model *m, sim_param p) {
  return *field_address((sim_model *)m, p);
}

/* the inertia with entry (a, b) and (b, a) set to value: positive definite with the triangle
 * inequality (the loader's test, by the eigenvalues' bounds through Sylvester's criterion and
 * the moments) */
static int inertia_valid(const double I[9]) {
  double d1 = I[0], d2 = I[0] * I[4] - I[1] * I[3];
  double d3 = I[0] * (I[4] * I[8] - I[5] * I[7]) - I[1] * (I[3] * I[8] - I[5] * I[6]) +
              I[2] * (I[3] * I[7] - I[4] * I[6]);
  return d1 > 0 && d2 > 0 && d3 > 0;
}

int sim_param_set(sim_model *m, sim_param p, double value, char *err, size_t err_sz) {
  char name[3 * SIM_NAME_MAX + 16];
  sim_param_name(m, p, name, sizeof name);
  const char *why = !isfinite(value) ? "not a finite number" : NULL;
  if (!why && (p.field == SIM_PARAM_BODY_mass || p.field == SIM_PARAM_ACTUATOR_resistance ||
               p.field == SIM_PARAM_ACTUATOR_inductance) && !(value > 0)) {
    why = "must be > 0";
  }
  if (!why && sim_param_kind_of(p.field) == SIM_PARAM_JOINT && p.field != SIM_PARAM_JOINT_springref &&
      value < 0) {
    why = "must be >= 0";
  }
  if (!why && p.field == SIM_PARAM_JOINT_frictionloss && !(value > 0)) {
    why = "must be > 0 (a joint's friction row exists only while frictionloss > 0)";
  }
  sim_body *b = sim_param_kind_of(p.field) == SIM_PARAM_BODY ? &m->bodies[p.index] : NULL;
  double inertia[9];
  if (!why && p.field >= SIM_PARAM_BODY_ixx && p.field <= SIM_PARAM_BODY_iyz) {
    static const int ra[6] = {0, 1, 2, 0, 0, 1}, rb[6] = {0, 1, 2, 1, 2, 2};
    int e = p.field - SIM_PARAM_BODY_ixx;
    memcpy(inertia, b->inertia, sizeof inertia);
    inertia[3 * ra[e] + rb[e]] = inertia[3 * rb[e] + ra[e]] = value;
    double i1 = inertia[0], i2 = inertia[4], i3 = inertia[8];
    if (!inertia_valid(inertia) || i1 + i2 < i3 || i1 + i3 < i2 || i2 + i3 < i1) {
      why = "the inertia would not be positive definite with the triangle inequality";
    }
  }
  if (why) {
    snprintf(err, err_sz, "%s = %g: %s", name, value, why);
    return -1;
  }
  if (b && p.field >= SIM_PARAM_BODY_ixx && p.field <= SIM_PARAM_BODY_iyz) {
    memcpy(b->inertia, inertia, sizeof inertia);
    b->diagonal_inertia = b->inertia[1] == 0 && b->inertia[2] == 0 && b->inertia[5] == 0 &&
                          b->inertia[3] == 0 && b->inertia[6] == 0 && b->inertia[7] == 0;
    return 0;
  }
  *field_address(m, p) = value;
  return 0;
}
