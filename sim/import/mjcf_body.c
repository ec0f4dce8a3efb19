/* sim/import/mjcf_body.c: the MJCF body tree into native bodies: frames moved to the joint, mass
 * from <inertial> or geoms, merged frame-only bodies, sites (see mjcf.c's top comment). */
#include <cjson/cJSON.h>
#include <stdio.h>

#include "sim/import/mjcf_state.h"

const char *const mjcf__site_read[] = {"name", "class", "pos", NULL};

/* --- one body ------------------------------------------------------------------------------ */

/* <inertial>: mass, centre and inertia in the body's MJCF frame */
static int inertial_of(mjcf *m, const xmlNode *el, imp_mass *out) {
  static const char *const read[] = {"pos", "quat", "axisangle", "euler", "xyaxes", "zaxis",
                                     "mass", "diaginertia", "fullinertia", NULL};
  double v[6], q[4], R[9];
  if (imp__check_attrs(m->c, el, read, "not an inertial attribute") != 0 ||
      imp__numbers(m->c, el, "pos", imp__attr(el, "pos") ? imp__attr(el, "pos") : "0 0 0",
                   out->com, 3, 3) < 0 ||
      mjcf__orientation(m, el, "inertial", NULL, q) != 0) {
    return -1;
  }
  const char *mass = imp__attr(el, "mass");
  if (!mass || imp__numbers(m->c, el, "mass", mass, &out->mass, 1, 1) < 0) {
    return mass ? -1 : imp__fail(m->c, el, "<inertial>: mass is required");
  }
  const char *diag = imp__attr(el, "diaginertia"), *full = imp__attr(el, "fullinertia");
  if (!diag == !full) {
    return imp__fail(m->c, el, "<inertial>: give one of diaginertia and fullinertia");
  }
  if (diag) {
    if (imp__numbers(m->c, el, "diaginertia", diag, v, 3, 3) < 0) {
      return -1;
    }
    double D[9] = {v[0], 0, 0, 0, v[1], 0, 0, 0, v[2]};
    imp__quat_to_mat(R, q);
    imp__rotate_inertia(out->inertia, R, D);
    return 0;
  }
  if (imp__numbers(m->c, el, "fullinertia", full, v, 6, 6) < 0) {
    return -1;
  }
  /* MJCF order: ixx iyy izz ixy ixz iyz, in the inertial frame */
  double F[9] = {v[0], v[3], v[4], v[3], v[1], v[5], v[4], v[5], v[2]};
  imp__quat_to_mat(R, q);
  imp__rotate_inertia(out->inertia, R, F);
  return 0;
}

/* The body's mass: its <inertial>, else its geoms (compiler inertiafromgeom). *has is 0 when
 * the body has neither. */
static int body_mass(mjcf *m, const xmlNode *b, const char *cls, imp_mass *mass, int *has) {
  const xmlNode *inertial = NULL;
  int geoms = 0;
  for (const xmlNode *k = b->children; k; k = k->next) {
    inertial = imp__is(k, "inertial") ? k : inertial;
    geoms += imp__is(k, "geom");
  }
  imp__mass_clear(mass);
  *has = 0;
  if (inertial && m->geom_inertia != 1) {
    *has = 1;
    return inertial_of(m, inertial, mass);
  }
  if (!geoms || m->geom_inertia == 0) {
    return 0;
  }
  for (const xmlNode *k = b->children; k; k = k->next) {
    if (imp__is(k, "geom") && mjcf__geom_mass(m, k, cls, mass) != 0) {
      return -1;
    }
  }
  if (mass->nparts == 0) { /* only planes */
    return 0;
  }
  if (imp__mass_finish(mass) != 0) {
    return imp__fail(m->c, b, "<body>: its geoms have no mass (or more than %d geoms)",
                     IMP_MASS_PARTS_MAX);
  }
  *has = 1;
  return 0;
}

static int convert_site(mjcf *m, const xmlNode *s, const char *cls, const char *body,
                        const mjcf_frame *f) {
  double pos[3] = {0, 0, 0}, at[3];
  const char *name = imp__attr(s, "name");
  if (imp__check_attrs(m->c, s, mjcf__site_read, "a site is a point here (no size, frame or look)") ||
      mjcf__numbers(m, s, "site", cls, "pos", pos, 3, 3) < 0) {
    return -1;
  }
  if (!name) {
    return imp__report(m->c, s, "<site> without a name ignored: sites are found by name");
  }
  mjcf__frame_point(at, f, pos);
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", name);
  cJSON_AddStringToObject(o, "body", body ? body : "world"); /* a world site: a tendon's anchor */
  cJSON_AddItemToObject(o, "pos", imp__json_vector(at, 3));
  cJSON_AddItemToArray(m->sites, o);
  return 0;
}

static const char *const body_read[] = {"name", "childclass", "pos", "quat", "axisangle",
                                        "euler", "xyaxes", "zaxis", NULL};

/* A body with a joint or a mass becomes a native body; one with neither is merged into its
 * parent (f: the parent's native frame to the MJCF frame this body sits in). */
static int convert_body(mjcf *m, const xmlNode *b, const char *parent, const mjcf_frame *f,
                        const char *cls) {
  const char *childclass = imp__attr(b, "childclass");
  const char *inner = childclass ? childclass : cls;
  double pos[3] = {0, 0, 0}, q[4];
  if (imp__check_attrs(m->c, b, body_read, "not modelled") != 0 ||
      mjcf__numbers(m, b, "body", NULL, "pos", pos, 3, 3) < 0 ||
      mjcf__orientation(m, b, "body", NULL, q) != 0) {
    return -1;
  }
  const xmlNode *joints[SIM_BODY_DOF_MAX];
  int njoint = 0;
  for (const xmlNode *k = b->children; k; k = k->next) {
    if (mjcf__unbuilt(k) && mjcf__refuse_unbuilt(m, k) != 0) { /* before its mass is judged */
      return -1;
    }
    if (imp__is(k, "freejoint") || imp__is(k, "joint")) {
      if (njoint == SIM_BODY_DOF_MAX) {
        return imp__fail(m->c, k, "<body>: more than %d joints on one body", SIM_BODY_DOF_MAX);
      }
      joints[njoint++] = k;
    }
  }
  const xmlNode *joint = njoint > 0 ? joints[0] : NULL;
  imp_mass mass;
  int has_mass;
  if (body_mass(m, b, inner, &mass, &has_mass) != 0) {
    return -1;
  }
  mjcf_frame here;
  mjcf__frame_child(&here, f, pos, q);
  if (!joint && !has_mass) { /* a frame only: its contents belong to the parent */
    return mjcf__convert_children(m, b, parent, &here, inner);
  }
  if (!has_mass) {
    return imp__fail(m->c, b, "<body>: a moving body needs mass (an <inertial> or geoms)");
  }
  char name[SIM_NAME_MAX + 16];
  const char *given = imp__attr(b, "name");
  if (given) {
    snprintf(name, sizeof name, "%s", given);
  } else {
    snprintf(name, sizeof name, "body%d", m->unnamed_bodies++);
  }
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", name);
  cJSON_AddStringToObject(o, "parent", parent ? parent : "world");
  double p[3] = {0, 0, 0}, origin[3];
  if (mjcf__body_joints(m, o, joints, njoint, inner, p) != 0) {
    cJSON_Delete(o);
    return -1;
  }
  mjcf__frame_point(origin, &here, p); /* the native frame sits at the joint */
  cJSON_AddItemToObject(o, "pos", imp__json_vector(origin, 3));
  cJSON_AddItemToObject(o, "quat", imp__json_vector(here.q, 4));
  double com[3] = {mass.com[0] - p[0], mass.com[1] - p[1], mass.com[2] - p[2]};
  const double *I = mass.inertia;
  double six[6] = {I[0], I[4], I[8], I[1], I[2], I[5]};
  cJSON *in = cJSON_CreateObject();
  cJSON_AddNumberToObject(in, "mass", mass.mass);
  cJSON_AddItemToObject(in, "com", imp__json_vector(com, 3));
  cJSON_AddItemToObject(in, "inertia", imp__json_vector(six, 6));
  cJSON_AddItemToObject(o, "inertial", in);
  cJSON_AddItemToArray(m->bodies, o);
  mjcf_frame inside = mjcf__identity_frame;
  for (int i = 0; i < 3; i++) {
    inside.t[i] = -p[i];
  }
  return mjcf__convert_children(m, b, name, &inside, inner);
}

/* what a body (or the worldbody) holds */
int mjcf__convert_children(mjcf *m, const xmlNode *b, const char *parent, const mjcf_frame *f,
                           const char *cls) {
  for (const xmlNode *k = b->children; k; k = k->next) {
    if (k->type != XML_ELEMENT_NODE || imp__is(k, "joint") || imp__is(k, "freejoint") ||
        imp__is(k, "inertial")) {
      continue;
    }
    int rc = 0;
    if (imp__is(k, "body")) {
      rc = convert_body(m, k, parent, f, cls);
    } else if (imp__is(k, "site")) {
      rc = convert_site(m, k, cls, parent, f);
    } else if (imp__is(k, "geom")) {
      /* its mass was taken in body_mass; here it becomes a collision shape */
      rc = imp__check_attrs(m->c, k, mjcf__geom_read, "not modelled");
      if (rc == 0) {
        rc = mjcf__convert_geom(m, k, cls, parent, f);
      }
    } else if (imp__is(k, "camera") || imp__is(k, "light")) {
      rc = imp__report(m->c, k, "<%s> ignored: visual only", imp__name(k));
    } else if (mjcf__unbuilt(k)) {
      rc = mjcf__refuse_unbuilt(m, k);
    } else {
      rc = imp__report(m->c, k, "<%s> ignored: not modelled", imp__name(k));
    }
    if (rc != 0) {
      return -1;
    }
  }
  return 0;
}
