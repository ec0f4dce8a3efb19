/* sim/import/mjcf_actuator.c: MJCF <motor>, <position> and <velocity> actuators into native
 * actuators. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "sim/import/mjcf_state.h"

const char *const mjcf__actuator_read[] = {"name",        "class",       "joint", "tendon", "gear",
                                           "ctrlrange",   "ctrllimited", "kp",    "kv",
                                           "forcerange", "forcelimited", NULL};

/* A position actuator's kv (newer MuJoCo: force = kp·(ctrl − q) − kv·q̇) is the native kd; a
 * servo's symmetric forcerange, when limited (forcelimited, or autolimits and a range), is its
 * force_limit. A motor's forcerange is reported: the native motor has no output clamp. */
static int servo_extras(mjcf *m, const xmlNode *a, const char *kind, cJSON *o) {
  double kv = 0, range[2];
  const int nkv = strcmp(kind, "position") == 0 ? mjcf__numbers(m, a, kind, NULL, "kv", &kv, 1, 1) : 0;
  const int nrange = mjcf__numbers(m, a, kind, NULL, "forcerange", range, 2, 2);
  if (nkv < 0 || nrange < 0) {
    return -1;
  }
  if (nkv == 1 && kv != 0) {
    cJSON_AddNumberToObject(o, "kd", kv);
  }
  const char *limited = mjcf__attr(m, a, kind, NULL, "forcelimited");
  if (nrange != 2 || !(limited ? strcmp(limited, "true") == 0 : m->autolimits)) {
    return 0;
  }
  if (range[0] != -range[1] || !(range[1] > 0)) {
    return imp__report(m->c, a, "<%s forcerange=\"%g %g\"> not converted: only a symmetric "
                                "range -f..f is (the native force_limit)", kind, range[0], range[1]);
  }
  cJSON_AddNumberToObject(o, "force_limit", range[1]);
  return 0;
}

/* a transmission other than a joint or a tendon: named before the attributes it brings are
 * noted */
int mjcf__other_transmission(mjcf *m, const xmlNode *a, const char *kind) {
  static const char *const via[][2] = {{"site", "a site"},
                                       {"cranksite", "a slider-crank"},
                                       {"jointinparent", "a joint in its parent's frame"}};
  for (int k = 0; k < 3; k++) {
    const char *v = imp__attr(a, via[k][0]);
    if (v) {
      return imp__fail(m->c, a, "<%s %s=\"%s\">: actuators on %s are not imported (only on a "
                                "joint or a tendon: joint=..., tendon=...)", kind, via[k][0], v,
                       via[k][1]);
    }
  }
  return 0;
}

int mjcf__convert_actuator(mjcf *m, const xmlNode *a, int index) {
  const char *kind = imp__name(a);
  if (strcmp(kind, "muscle") == 0 || strcmp(kind, "general") == 0) {
    return mjcf__convert_muscle(m, a, index);
  }
  const char *type = strcmp(kind, "motor") == 0      ? "motor"
                     : strcmp(kind, "position") == 0 ? "position_servo"
                     : strcmp(kind, "velocity") == 0 ? "velocity_servo"
                                                     : NULL;
  if (!type) {
    return imp__report(m->c, a, "<%s> actuator ignored: only motor, position, velocity and "
                                "muscle actuators are imported", kind);
  }
  if (mjcf__other_transmission(m, a, kind) != 0) {
    return -1;
  }
  if (imp__check_attrs(m->c, a, mjcf__actuator_read, "not modelled") != 0) {
    return -1;
  }
  const char *joint = imp__attr(a, "joint"), *tendon = imp__attr(a, "tendon");
  if (!joint == !tendon) {
    return imp__fail(m->c, a, "<%s>: actuators on a joint or a tendon are imported (joint=... "
                              "or tendon=..., one of them)", kind);
  }
  double gear[6] = {1, 0, 0, 0, 0, 0}, range[2], gain[1];
  int ngear = mjcf__numbers(m, a, kind, NULL, "gear", gear, 1, 6);
  int nrange = mjcf__numbers(m, a, kind, NULL, "ctrlrange", range, 2, 2);
  if (ngear < 0 || nrange < 0) {
    return -1;
  }
  for (int i = 1; i < 6; i++) {
    if (gear[i] != 0) {
      return imp__fail(m->c, a, "<%s gear>: only the first (joint) component may be non-zero",
                       kind);
    }
  }
  cJSON *o = cJSON_CreateObject();
  const char *name = imp__attr(a, "name");
  char generated[32];
  if (!name) {
    snprintf(generated, sizeof generated, "actuator%d", index);
    name = generated;
  }
  cJSON_AddStringToObject(o, "name", name);
  cJSON_AddStringToObject(o, joint ? "joint" : "tendon", joint ? joint : tendon);
  cJSON_AddStringToObject(o, "type", type);
  if (strcmp(type, "motor") == 0) {
    cJSON_AddNumberToObject(o, "gear", gear[0]);
    if (mjcf__attr(m, a, kind, NULL, "forcerange") &&
        imp__report(m->c, a, "<motor forcerange> ignored: a native motor has no output clamp "
                             "(use ctrlrange, or a dc_motor's force_limit)") != 0) {
      cJSON_Delete(o);
      return -1;
    }
  } else if (gear[0] != 1) {
    cJSON_Delete(o);
    return imp__fail(m->c, a, "<%s gear>: servos are imported with gear 1 only", kind);
  } else {
    const char *key = strcmp(kind, "position") == 0 ? "kp" : "kv";
    gain[0] = 1; /* MuJoCo's default gain */
    if (mjcf__numbers(m, a, kind, NULL, key, gain, 1, 1) < 0 || servo_extras(m, a, kind, o) != 0) {
      cJSON_Delete(o);
      return -1;
    }
    cJSON_AddNumberToObject(o, key, gain[0]);
  }
  const char *limited = mjcf__attr(m, a, kind, NULL, "ctrllimited");
  if (nrange == 2 && (limited ? strcmp(limited, "true") == 0 : m->autolimits)) {
    cJSON_AddItemToObject(o, "ctrlrange", imp__json_vector(range, 2));
  }
  cJSON_AddItemToArray(m->actuators, o);
  return 0;
}
