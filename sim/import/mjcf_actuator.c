/* sim/import/mjcf_actuator.c: MJCF <motor>, <position> and <velocity> actuators into native
 * actuators. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "sim/import/mjcf_state.h"

const char *const mjcf__actuator_read[] = {"name",        "class",       "joint", "tendon", "gear",
                                           "ctrlrange",   "ctrllimited", "kp",    "kv",
                                           "forcerange", "forcelimited", "cranksite",
                                           "slidersite", "cranklength", NULL};

/* a slider-crank transmission (cranksite, slidersite, cranklength) as the native "slider_crank"
 * block: the slider's direction is the slider site's z axis in its body's frame */
static int crank_of(mjcf *m, const xmlNode *a, const char *kind, cJSON *o) {
  const char *crank = imp__attr(a, "cranksite"), *slider = imp__attr(a, "slidersite");
  double r = 0;
  if (imp__attr(a, "joint")) {
    return imp__fail(m->c, a, "<%s cranksite=\"%s\">: a joint too (a slider-crank drives no "
                     "joint)", kind, crank);
  }
  if (!slider) { /* MuJoCo's compiler: "missing base site for slider-crank" */
    return imp__fail(m->c, a, "<%s cranksite=\"%s\">: slidersite is required", kind, crank);
  }
  if (mjcf__numbers(m, a, kind, NULL, "cranklength", &r, 1, 1) < 0) {
    return -1;
  }
  if (!(r > 0)) { /* as MuJoCo's compiler */
    return imp__fail(m->c, a, "<%s cranksite=\"%s\">: cranklength must be positive", kind,
                     crank);
  }
  const cJSON *axis = cJSON_GetObjectItemCaseSensitive(m->site_axes, slider);
  if (!cJSON_GetObjectItemCaseSensitive(m->site_axes, crank) || !axis) {
    return imp__fail(m->c, a, "<%s>: unknown site \"%s\"", kind,
                     axis ? crank : slider);
  }
  cJSON *b = cJSON_AddObjectToObject(o, "slider_crank");
  cJSON_AddStringToObject(b, "crank_site", crank);
  cJSON_AddStringToObject(b, "slider_site", slider);
  cJSON_AddItemToObject(b, "slider_axis", cJSON_Duplicate(axis, 1));
  cJSON_AddNumberToObject(b, "length", r);
  return 0;
}

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

/* <adhesion body gain ctrlrange> (MuJoCo 2.2.2's shortcut): a native motor of gear = gain on
 * the body's adhesion; gain >= 0 and a nonnegative ctrlrange are required, as MuJoCo's parser
 * requires them, and the range always limits. As that parser, gain and ctrlrange are the
 * element's own: it resets the gain to 1 before reading the element's (a class's is lost) and
 * requires ctrlrange on the element. */
const char *const mjcf__adhesion_read[] = {"name",      "class",       "body", "gain",
                                           "ctrlrange", "ctrllimited", NULL};

static int adhesion_of(mjcf *m, const xmlNode *a, int index) {
  const char *const *read = mjcf__adhesion_read;
  double gain = 1, range[2];
  const char *body = mjcf__attr(m, a, "adhesion", NULL, "body");
  const char *g = imp__attr(a, "gain"), *cr = imp__attr(a, "ctrlrange");
  if (imp__check_attrs(m->c, a, read, "not modelled") != 0 ||
      (g && imp__numbers(m->c, a, "gain", g, &gain, 1, 1) < 0)) {
    return -1;
  }
  const int nrange = cr ? imp__numbers(m->c, a, "ctrlrange", cr, range, 2, 2) : 0;
  if (nrange < 0) {
    return -1;
  }
  if (!body || nrange != 2) {
    return imp__fail(m->c, a, "<adhesion>: %s is required", body ? "ctrlrange" : "body");
  }
  if (gain < 0 || range[0] < 0 || range[1] < 0) {
    return imp__fail(m->c, a, "<adhesion>: adhesion %s cannot be negative",
                     gain < 0 ? "gain" : "control range");
  }
  if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(m->frames, body))) {
    return imp__fail(m->c, a, "<adhesion body=\"%s\">: not a moving body here (unknown, or "
                     "merged into its parent: no joint and no mass)", body);
  }
  cJSON *o = cJSON_CreateObject();
  char generated[32];
  const char *name = imp__attr(a, "name");
  if (!name) {
    snprintf(generated, sizeof generated, "actuator%d", index);
    name = generated;
  }
  cJSON_AddStringToObject(o, "name", name);
  cJSON_AddStringToObject(o, "type", "motor");
  cJSON_AddNumberToObject(o, "gear", gain);
  cJSON_AddItemToObject(o, "ctrlrange", imp__json_vector(range, 2));
  cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "adhesion"), "body", body);
  cJSON_AddItemToArray(m->actuators, o);
  return 0;
}

/* a transmission other than a joint or a tendon: named before the attributes it brings are
 * noted */
int mjcf__other_transmission(mjcf *m, const xmlNode *a, const char *kind) {
  static const char *const via[][2] = {{"site", "a site"},
                                       {"jointinparent", "a joint in its parent's frame"}};
  for (int k = 0; k < 2; k++) { /* cranksite: a slider-crank (crank_of) */
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
  if (strcmp(kind, "adhesion") == 0) {
    return adhesion_of(m, a, index);
  }
  const char *type = strcmp(kind, "motor") == 0      ? "motor"
                     : strcmp(kind, "position") == 0 ? "position_servo"
                     : strcmp(kind, "velocity") == 0 ? "velocity_servo"
                                                     : NULL;
  if (!type) {
    return imp__report(m->c, a, "<%s> actuator ignored: only motor, position, velocity and "
                                "adhesion and muscle actuators are imported", kind);
  }
  if (mjcf__other_transmission(m, a, kind) != 0) {
    return -1;
  }
  if (imp__check_attrs(m->c, a, mjcf__actuator_read, "not modelled") != 0) {
    return -1;
  }
  const char *joint = imp__attr(a, "joint"), *tendon = imp__attr(a, "tendon");
  const char *crank = imp__attr(a, "cranksite");
  if ((joint != NULL) + (tendon != NULL) + (crank != NULL) != 1) {
    return imp__fail(m->c, a, "<%s>: actuators on a joint, a tendon or a slider-crank are "
                              "imported (joint=..., tendon=... or cranksite=..., one of them)",
                     kind);
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
  if (crank) {
    if (crank_of(m, a, kind, o) != 0) {
      cJSON_Delete(o);
      return -1;
    }
  } else {
    cJSON_AddStringToObject(o, joint ? "joint" : "tendon", joint ? joint : tendon);
  }
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
