/* sim/import/mjcf_joint.c: MJCF <joint>s and <freejoint> into the native joints of a body. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "sim/import/mjcf_state.h"

const char *const mjcf__joint_read[] = {"name",      "class",     "type",    "axis",
                                        "pos",       "range",     "limited", "damping",
                                        "armature",  "stiffness", "springref", "ref",
                                        "frictionloss", "solreflimit", "solimplimit",
                                        "solreffriction", "solimpfriction", NULL};

static const char *const freejoint_read[] = {"name", NULL};

static int joint_number(mjcf *m, const xmlNode *j, const char *cls, const char *name, double *v) {
  return mjcf__numbers(m, j, "joint", cls, name, v, 1, 1) < 0 ? -1 : 0;
}

static const char *joint_name(mjcf *m, const xmlNode *j, char generated[32]) {
  const char *name = imp__attr(j, "name");
  if (!name) {
    snprintf(generated, 32, "joint%d", m->unnamed_joints++);
    name = generated;
  }
  return name;
}

/* <joint type="ball|free"> or <freejoint>: damping and armature; the one-coordinate properties
 * (springs, limits, friction loss) are not modelled on them: a nonzero one refuses the
 * conversion, a range that does not limit is reported and dropped */
static cJSON *convert_rotation_joint(mjcf *m, const xmlNode *j, const char *cls, const char *type,
                                     double p[3]) {
  static const char *const scalar_only[] = {"stiffness", "frictionloss", "ref", NULL};
  double damping = 0, armature = 0, v[2];
  int is_free = strcmp(type, "free") == 0, freejoint = imp__is(j, "freejoint");
  p[0] = p[1] = p[2] = 0;
  if (freejoint) { /* MuJoCo's shortcut for a free joint with every coefficient 0 */
    char generated[32];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", joint_name(m, j, generated));
    cJSON_AddStringToObject(o, "type", "free");
    return o;
  }
  int nrange = 0;
  if (imp__check_attrs(m->c, j, mjcf__joint_read, "not modelled") != 0 ||
      mjcf__numbers(m, j, "joint", cls, "pos", p, 3, 3) < 0 ||
      joint_number(m, j, cls, "damping", &damping) ||
      joint_number(m, j, cls, "armature", &armature) ||
      (nrange = mjcf__numbers(m, j, "joint", cls, "range", v, 2, 2)) < 0) {
    return NULL;
  }
  for (int k = 0; scalar_only[k]; k++) {
    double x = 0;
    if (joint_number(m, j, cls, scalar_only[k], &x)) {
      return NULL;
    }
    if (x != 0) {
      imp__fail(m->c, j, "<joint %s>: not modelled on %s joints (hinge and slide only)",
                scalar_only[k], type);
      return NULL;
    }
  }
  const char *limited = mjcf__attr(m, j, "joint", cls, "limited");
  if (limited ? strcmp(limited, "true") == 0 : (nrange == 2 && m->autolimits)) {
    imp__fail(m->c, j, "<joint range>: limits of %s joints are not modelled", type);
    return NULL;
  }
  if (nrange == 2 && imp__report(m->c, j, "<joint range> ignored: not limited (%s joint)", type)) {
    return NULL;
  }
  if (is_free && (p[0] != 0 || p[1] != 0 || p[2] != 0)) {
    imp__fail(m->c, j, "<joint type=\"free\" pos>: a free joint sits at the body origin");
    return NULL;
  }
  char generated[32];
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", joint_name(m, j, generated));
  cJSON_AddStringToObject(o, "type", type);
  if (damping != 0) {
    cJSON_AddNumberToObject(o, "damping", damping);
  }
  if (armature != 0) {
    cJSON_AddNumberToObject(o, "armature", armature);
  }
  return o;
}

/* <joint> into the native joint object; p gets the joint's position in the body frame */
static cJSON *convert_joint(mjcf *m, const xmlNode *j, const char *cls, double p[3]) {
  if (imp__is(j, "freejoint")) {
    return imp__check_attrs(m->c, j, freejoint_read, "not modelled") != 0
               ? NULL
               : convert_rotation_joint(m, j, cls, "free", p);
  }
  const char *type = mjcf__attr(m, j, "joint", cls, "type");
  int slide = type && strcmp(type, "slide") == 0;
  if (type && (strcmp(type, "ball") == 0 || strcmp(type, "free") == 0)) {
    return convert_rotation_joint(m, j, cls, type, p);
  }
  if (type && !slide && strcmp(type, "hinge") != 0) {
    imp__fail(m->c, j, "<joint type=\"%s\">: unknown joint type (hinge, slide, ball or free)",
              type);
    return NULL;
  }
  double axis[3] = {0, 0, 1}, range[2] = {0, 0}, damping = 0, armature = 0, stiffness = 0;
  double springref = 0, ref = 0, friction = 0;
  p[0] = p[1] = p[2] = 0;
  int nrange = 0;
  if (imp__check_attrs(m->c, j, mjcf__joint_read, "not modelled") != 0 ||
      mjcf__numbers(m, j, "joint", cls, "axis", axis, 3, 3) < 0 ||
      mjcf__numbers(m, j, "joint", cls, "pos", p, 3, 3) < 0 ||
      (nrange = mjcf__numbers(m, j, "joint", cls, "range", range, 2, 2)) < 0 ||
      joint_number(m, j, cls, "damping", &damping) || joint_number(m, j, cls, "armature", &armature) ||
      joint_number(m, j, cls, "stiffness", &stiffness) ||
      joint_number(m, j, cls, "springref", &springref) || joint_number(m, j, cls, "ref", &ref) ||
      joint_number(m, j, cls, "frictionloss", &friction)) {
    return NULL;
  }
  if (ref != 0) {
    imp__fail(m->c, j, "<joint ref>: a reference position other than 0 is not imported");
    return NULL;
  }
  const char *limited = mjcf__attr(m, j, "joint", cls, "limited");
  int is_limited = limited ? strcmp(limited, "true") == 0 : (nrange == 2 && m->autolimits);
  mjcf__normalize(axis, 3);
  cJSON *o = cJSON_CreateObject();
  char generated[32];
  cJSON_AddStringToObject(o, "name", joint_name(m, j, generated));
  cJSON_AddStringToObject(o, "type", slide ? "slide" : "hinge");
  cJSON_AddItemToObject(o, "axis", imp__json_vector(axis, 3));
  if (nrange == 2) {
    double r[2] = {slide ? range[0] : mjcf__angle(m, range[0]), slide ? range[1] : mjcf__angle(m, range[1])};
    cJSON_AddItemToObject(o, "range", imp__json_vector(r, 2));
    if (is_limited && !m->no_limits) {
      cJSON_AddBoolToObject(o, "limited", 1);
    }
  }
  if (friction != 0 && !m->no_friction) {
    cJSON_AddNumberToObject(o, "frictionloss", friction);
  }
  /* the soft-constraint parameters keep MuJoCo's meaning and defaults in the native format */
  static const char *const soft[4][2] = {{"solreflimit", "solref_limit"},
                                         {"solimplimit", "solimp_limit"},
                                         {"solreffriction", "solref_friction"},
                                         {"solimpfriction", "solimp_friction"}};
  for (int k = 0; k < 4; k++) {
    double v[5];
    const int want = k % 2 == 0 ? 2 : 5;
    int n = mjcf__numbers(m, j, "joint", cls, soft[k][0], v, 1, want);
    if (n < 0) {
      cJSON_Delete(o);
      return NULL;
    }
    if (n > 0) {
      n = mjcf__soft_values(m, j, soft[k][0], v, n, want);
    }
    if (n < 0) {
      cJSON_Delete(o);
      return NULL;
    }
    if (n == want) {
      cJSON_AddItemToObject(o, soft[k][1], imp__json_vector(v, want));
    }
  }
  if (damping != 0) {
    cJSON_AddNumberToObject(o, "damping", damping);
  }
  if (armature != 0) {
    cJSON_AddNumberToObject(o, "armature", armature);
  }
  if (stiffness != 0) {
    cJSON_AddNumberToObject(o, "stiffness", stiffness);
  }
  if (springref != 0) {
    cJSON_AddNumberToObject(o, "springref", slide ? springref : mjcf__angle(m, springref));
  }
  return o;
}

/* A body's joints: "joint" for one, "joints" (in order) for several. The native frame moves to
 * the first joint's position (p gets it); a later hinge or slide elsewhere keeps its own anchor
 * ("pos", relative to the first). */
int mjcf__body_joints(mjcf *m, cJSON *o, const xmlNode *const *joints, int n, const char *cls,
                      double p[3]) {
  cJSON *list = n > 1 ? cJSON_CreateArray() : NULL;
  for (int k = 0; k < n; k++) {
    double pk[3];
    cJSON *jo = convert_joint(m, joints[k], cls, k == 0 ? p : pk);
    if (!jo) {
      cJSON_Delete(list);
      return -1;
    }
    if (k > 0 && (pk[0] != p[0] || pk[1] != p[1] || pk[2] != p[2])) {
      const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(jo, "type"));
      if (!type || (strcmp(type, "hinge") != 0 && strcmp(type, "slide") != 0)) {
        cJSON_Delete(jo);
        cJSON_Delete(list);
        return imp__fail(m->c, joints[k], "<joint pos>: only hinge and slide joints of a body "
                                          "may sit away from its first joint");
      }
      const double anchor[3] = {pk[0] - p[0], pk[1] - p[1], pk[2] - p[2]};
      cJSON_AddItemToObject(jo, "pos", imp__json_vector(anchor, 3));
    }
    if (list) {
      cJSON_AddItemToArray(list, jo);
    } else {
      cJSON_AddItemToObject(o, "joint", jo);
    }
  }
  if (list) {
    cJSON_AddItemToObject(o, "joints", list);
  }
  return 0;
}
