/* sim/import/mjcf_muscle.c: MJCF <muscle>, and <general> with dyntype, gaintype and biastype all
 * "muscle", into native muscle actuators (docs/robot-format.md, "Muscles").
 *
 * <muscle>'s attributes (timeconst, range, force, scale, lmin, lmax, vmax, fpmax, fvmax) keep
 * MuJoCo 2.2.2's defaults when absent (the native loader has the same ones); a <general>
 * muscle gives them as dynprm = (timeconst) and gainprm = biasprm = (range, force, scale, lmin,
 * lmax, vmax, fpmax, fvmax). A lengthrange given (lo < hi) is kept, else the loader finds it as
 * MuJoCo's compiler does. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "sim/import/mjcf_state.h"

const char *const mjcf__muscle_read[] = {
    "name",   "class",    "joint",   "tendon",      "ctrllimited", "ctrlrange", "forcelimited",
    "forcerange", "lengthrange", "gear", "timeconst", "range", "force", "scale", "lmin", "lmax",
    "vmax",   "fpmax",    "fvmax",   "dyntype",     "gaintype",    "biastype",  "dynprm",
    "gainprm", "biasprm", "group",   "actlimited",  "actrange",    NULL};

/* the muscle's nine gain parameters and two time constants from <muscle>'s own attributes */
static int muscle_attributes(mjcf *m, const xmlNode *a, double prm[9], double tau[2]) {
  static const char *const names[] = {"force", "scale", "lmin", "lmax", "vmax", "fpmax", "fvmax"};
  if (mjcf__numbers(m, a, "muscle", NULL, "range", prm, 2, 2) < 0 ||
      mjcf__numbers(m, a, "muscle", NULL, "timeconst", tau, 2, 2) < 0) {
    return -1;
  }
  for (int k = 0; k < 7; k++) {
    if (mjcf__numbers(m, a, "muscle", NULL, names[k], prm + 2 + k, 1, 1) < 0) {
      return -1;
    }
  }
  return 0;
}

/* the same from a <general> muscle's dynprm, gainprm and biasprm (which must agree: the native
 * muscle has one set) */
static int general_attributes(mjcf *m, const xmlNode *a, double prm[9], double tau[2]) {
  static const char *const types[] = {"dyntype", "gaintype", "biastype"};
  for (int k = 0; k < 3; k++) {
    const char *t = mjcf__attr(m, a, "general", NULL, types[k]);
    if (!t || strcmp(t, "muscle") != 0) {
      return imp__fail(m->c, a, "<general %s=\"%s\">: a general actuator is imported only as a "
                       "muscle (dyntype, gaintype and biastype \"muscle\")", types[k],
                       t ? t : "(default)");
    }
  }
  double dyn[10] = {0}, gain[10] = {0}, bias[10] = {0};
  const int nd = mjcf__numbers(m, a, "general", NULL, "dynprm", dyn, 1, 10);
  const int ng = mjcf__numbers(m, a, "general", NULL, "gainprm", gain, 1, 10);
  const int nb = mjcf__numbers(m, a, "general", NULL, "biasprm", bias, 1, 10);
  if (nd < 0 || ng < 0 || nb < 0) {
    return -1;
  }
  if (nd < 2 || ng < 9 || memcmp(gain, bias, sizeof gain) != 0) {
    return imp__fail(m->c, a, "<general> muscle: expected dynprm (2 time constants) and gainprm "
                     "= biasprm (range, force, scale, lmin, lmax, vmax, fpmax, fvmax)");
  }
  memcpy(prm, gain, 9 * sizeof(double));
  tau[0] = dyn[0], tau[1] = dyn[1];
  return 0;
}

/* ctrlrange (when limited), a symmetric forcerange as force_limit, the gear, no actlimited */
static int muscle_limits(mjcf *m, const xmlNode *a, const char *kind, cJSON *o) {
  double range[2], force[2], gear[6] = {1, 0, 0, 0, 0, 0}, lr[2];
  const int nrange = mjcf__numbers(m, a, kind, NULL, "ctrlrange", range, 2, 2);
  const int nforce = mjcf__numbers(m, a, kind, NULL, "forcerange", force, 2, 2);
  const int ngear = mjcf__numbers(m, a, kind, NULL, "gear", gear, 1, 6);
  const int nlr = mjcf__numbers(m, a, kind, NULL, "lengthrange", lr, 2, 2);
  if (nrange < 0 || nforce < 0 || ngear < 0 || nlr < 0) {
    return -1;
  }
  for (int i = 1; i < 6; i++) {
    if (gear[i] != 0 || gear[0] == 0) {
      return imp__fail(m->c, a, "<%s gear>: a muscle's gear is its first component, non-zero "
                       "(the others are for site transmissions)", kind);
    }
  }
  if (gear[0] != 1) {
    cJSON_AddNumberToObject(o, "gear", gear[0]);
  }
  const char *actlimited = mjcf__attr(m, a, kind, NULL, "actlimited");
  if (actlimited && strcmp(actlimited, "true") == 0) {
    return imp__fail(m->c, a, "<%s actlimited=\"true\">: a muscle's activation range is not "
                     "built (MuJoCo 2.2.2's muscles leave it unclamped)", kind);
  }
  const char *limited = mjcf__attr(m, a, kind, NULL, "ctrllimited");
  if (nrange == 2 && (limited ? strcmp(limited, "true") == 0 : m->autolimits)) {
    cJSON_AddItemToObject(o, "ctrlrange", imp__json_vector(range, 2));
  }
  limited = mjcf__attr(m, a, kind, NULL, "forcelimited");
  if (nforce == 2 && (limited ? strcmp(limited, "true") == 0 : m->autolimits)) {
    if (force[0] != -force[1] || !(force[1] > 0)) {
      return imp__fail(m->c, a, "<%s forcerange=\"%g %g\">: only a symmetric range -f..f is "
                       "imported (the native force_limit)", kind, force[0], force[1]);
    }
    cJSON_AddNumberToObject(o, "force_limit", force[1]);
  }
  if (nlr == 2 && lr[0] < lr[1]) {
    cJSON_AddItemToObject(o, "lengthrange", imp__json_vector(lr, 2));
  }
  return 0;
}

int mjcf__convert_muscle(mjcf *m, const xmlNode *a, int index) {
  const char *kind = imp__name(a);
  const int general = strcmp(kind, "general") == 0;
  if (mjcf__other_transmission(m, a, kind) != 0 ||
      imp__check_attrs(m->c, a, mjcf__muscle_read, "not modelled") != 0) {
    return -1;
  }
  const char *joint = imp__attr(a, "joint"), *tendon = imp__attr(a, "tendon");
  if (!joint == !tendon) {
    return imp__fail(m->c, a, "<%s>: a muscle pulls a joint or a tendon (joint=... or "
                              "tendon=..., one of them)", kind);
  }
  /* MuJoCo 2.2.2's defaults: range, force, scale, lmin, lmax, vmax, fpmax, fvmax; timeconst */
  double prm[9] = {0.75, 1.05, -1, 200, 0.5, 1.6, 1.5, 1.3, 1.2}, tau[2] = {0.01, 0.04};
  if ((general ? general_attributes(m, a, prm, tau) : muscle_attributes(m, a, prm, tau)) != 0) {
    return -1;
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
  cJSON_AddStringToObject(o, "type", "muscle");
  cJSON_AddItemToObject(o, "range", imp__json_vector(prm, 2));
  static const char *const keys[] = {"force", "scale", "lmin", "lmax", "vmax", "fpmax", "fvmax"};
  for (int k = 0; k < 7; k++) {
    cJSON_AddNumberToObject(o, keys[k], prm[2 + k]);
  }
  cJSON_AddItemToObject(o, "timeconst", imp__json_vector(tau, 2));
  if (muscle_limits(m, a, kind, o) != 0) {
    cJSON_Delete(o);
    return -1;
  }
  cJSON_AddItemToArray(m->actuators, o);
  return 0;
}
