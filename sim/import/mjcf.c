/* sim/import/mjcf.c: MuJoCo's MJCF (the subset in docs/import.md) into the native robot JSON.
 *
 * Frames. An MJCF joint may sit anywhere in its body (attribute pos); a native joint sits at the
 * body frame origin. The converter therefore moves each body's frame to its joint, a pure
 * translation p in the body's axes, and expresses everything inside the body (inertial, sites,
 * child bodies) in the moved frame: x_native = x_mjcf − p. A body without joint and without mass
 * (a frame for sites or children) is merged into its parent, its children and sites carried over
 * with the composed transform.
 *
 * Attribute values come from the element, else from its class's defaults, walking up the
 * nested <default> classes; the class is the element's `class`, else the nearest enclosing
 * body's `childclass`, else the top-level default ("main").
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/import/import_internal.h"
#include "sim/import/mass.h"
#include "sim/import/xml_read.h"

#define PI 3.14159265358979323846

#define MJCF_TOP_DEFAULTS 16

typedef struct mjcf {
  imp_ctx *c;
  int degree;        /* compiler angle="degree" (MJCF's default) */
  char eulerseq[4];  /* compiler eulerseq, default "xyz" */
  int geom_inertia;  /* compiler inertiafromgeom: 0 false, 1 true, 2 auto (default) */
  int autolimits;    /* a range without `limited` limits the joint (newer MuJoCo's default) */
  int no_limits;     /* <option><flag limit="disable">: ranges are kept, not enforced */
  int no_friction;   /* <option><flag frictionloss="disable"> */
  int no_contact;    /* <option><flag contact="disable">: geoms give mass only */
  /* the top-level <default> elements: together class "main" (MuJoCo merges them, later ones
   * overriding earlier ones), each holding its own nested classes */
  xmlNode *defaults[MJCF_TOP_DEFAULTS];
  int ndefaults;
  char meshdir[1024]; /* compiler meshdir */
  cJSON *meshes;     /* <asset><mesh>s by name: {"file": absolute path, "scale": [3]} */
  cJSON *bodies, *sites, *actuators, *geoms;
  int unnamed_bodies, unnamed_joints, unnamed_geoms;
} mjcf;

/* A transform from a native parent body's frame to an MJCF frame inside it: x = t + R·x_mjcf. */
typedef struct frame {
  double t[3];
  double R[9];
  double q[4];
} frame;

static const frame identity_frame = {{0, 0, 0}, {1, 0, 0, 0, 1, 0, 0, 0, 1}, {1, 0, 0, 0}};

/* --- defaults classes ------------------------------------------------------------------------ */

/* the <default class=name> at or below d (a top-level <default> is class "main") */
static xmlNode *find_class_below(xmlNode *d, const char *name) {
  const char *cls = imp__attr(d, "class");
  if ((cls && strcmp(cls, name) == 0) || (!cls && strcmp(name, "main") == 0)) {
    return d;
  }
  for (xmlNode *k = d->children; k; k = k->next) {
    if (imp__is(k, "default")) {
      xmlNode *hit = find_class_below(k, name);
      if (hit) {
        return hit;
      }
    }
  }
  return NULL;
}

static xmlNode *find_class(const mjcf *m, const char *name) {
  for (int i = 0; i < m->ndefaults; i++) {
    xmlNode *hit = find_class_below(m->defaults[i], name);
    if (hit) {
      return hit;
    }
  }
  return NULL;
}

/* the value a <default> element gives attribute `name` of elements of this kind, or NULL */
static const char *default_attr(const xmlNode *d, const char *kind, const char *name) {
  for (xmlNode *k = d->children; k; k = k->next) {
    const char *v;
    if (imp__is(k, kind) && (v = imp__attr(k, name)) != NULL) {
      return v;
    }
  }
  return NULL;
}

/* The element's attribute, else its class chain's default for elements of this kind; the chain
 * ends in class "main", which every top-level <default> sets (the last one that sets a value
 * wins, as in MuJoCo). */
static const char *attr_of(const mjcf *m, const xmlNode *el, const char *kind, const char *cls,
                           const char *name) {
  const char *v = imp__attr(el, name);
  if (v) {
    return v;
  }
  const char *own = imp__attr(el, "class");
  xmlNode *d = find_class(m, own ? own : cls ? cls : "main");
  for (; d && imp__is(d, "default") && imp__is(d->parent, "default"); d = d->parent) {
    if ((v = default_attr(d, kind, name)) != NULL) {
      return v;
    }
  }
  for (int i = d ? m->ndefaults - 1 : -1; i >= 0; i--) {
    if ((v = default_attr(m->defaults[i], kind, name)) != NULL) {
      return v;
    }
  }
  return NULL;
}

/* numbers of an attribute (element or defaults); returns the count read, 0 when absent */
static int numbers_of(mjcf *m, const xmlNode *el, const char *kind, const char *cls,
                      const char *name, double *out, int min_n, int max_n) {
  const char *v = attr_of(m, el, kind, cls, name);
  return v ? imp__numbers(m->c, el, name, v, out, min_n, max_n) : 0;
}

/* A solref (2 numbers) or solimp (5) given in part, as MuJoCo reads it: the numbers not given
 * keep MuJoCo's defaults (solref 0.02 1, solimp 0.9 0.95 0.001 0.5 2); returns want. */
static int soft_defaults(double *v, int n, int want) {
  static const double solref[2] = {0.02, 1}, solimp[5] = {0.9, 0.95, 0.001, 0.5, 2};
  for (int i = n; i < want; i++) {
    v[i] = want == 2 ? solref[i] : solimp[i];
  }
  return want;
}

/* --- orientation --------------------------------------------------------------------------- */

static double angle_of(const mjcf *m, double a) { return m->degree ? a / 180.0 * PI : a; }

static void normalize(double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    s += v[i] * v[i];
  }
  s = sqrt(s);
  for (int i = 0; i < n && s > 0; i++) {
    v[i] /= s;
  }
}

/* the minimal rotation taking z to v (v unit), as MuJoCo builds a frame from one axis */
static void z_to_quat(double q[4], const double v[3]) {
  double axis[3] = {-v[1], v[0], 0}; /* z × v */
  double s = sqrt(axis[0] * axis[0] + axis[1] * axis[1]);
  if (s < 1e-10) {
    axis[0] = 1, axis[1] = 0;
  } else {
    axis[0] /= s, axis[1] /= s;
  }
  double a = atan2(s, v[2]);
  q[0] = cos(a / 2);
  q[1] = axis[0] * sin(a / 2), q[2] = axis[1] * sin(a / 2), q[3] = 0;
}

static int euler_to_quat(mjcf *m, const xmlNode *el, double q[4], const double e[3]) {
  q[0] = 1, q[1] = q[2] = q[3] = 0;
  for (int i = 0; i < 3; i++) {
    const char axis = m->eulerseq[i];
    double a = angle_of(m, e[i]), r[4] = {cos(a / 2), 0, 0, 0};
    const int k = axis == 'x' || axis == 'X' ? 1 : axis == 'y' || axis == 'Y' ? 2 : 3;
    r[k] = sin(a / 2);
    if (axis >= 'a') { /* lower case: moving axes, post-multiply */
      imp__quat_mul(q, q, r);
    } else {
      imp__quat_mul(q, r, q);
    }
  }
  (void)el;
  normalize(q, 4);
  return 0;
}

/* quat, axisangle, euler, xyaxes or zaxis (at most one), or the identity */
static int orientation_of(mjcf *m, const xmlNode *el, const char *kind, const char *cls,
                          double q[4]) {
  static const char *const alts[] = {"quat", "axisangle", "euler", "xyaxes", "zaxis"};
  int given = 0;
  for (int i = 0; i < 5; i++) {
    given += imp__attr(el, alts[i]) != NULL;
  }
  if (given > 1) {
    return imp__fail(m->c, el, "<%s>: give one of quat, axisangle, euler, xyaxes, zaxis",
                     imp__name(el));
  }
  double v[6];
  q[0] = 1, q[1] = q[2] = q[3] = 0;
  if (given) { /* the element's own choice hides every alternative its defaults give */
    kind = "";
  }
  if (numbers_of(m, el, kind, cls, "quat", v, 4, 4) == 4) {
    memcpy(q, v, 4 * sizeof *v);
    normalize(q, 4);
  } else if (numbers_of(m, el, kind, cls, "axisangle", v, 4, 4) == 4) {
    normalize(v, 3);
    double a = angle_of(m, v[3]);
    q[0] = cos(a / 2), q[1] = v[0] * sin(a / 2), q[2] = v[1] * sin(a / 2), q[3] = v[2] * sin(a / 2);
  } else if (numbers_of(m, el, kind, cls, "euler", v, 3, 3) == 3) {
    euler_to_quat(m, el, q, v);
  } else if (numbers_of(m, el, kind, cls, "zaxis", v, 3, 3) == 3) {
    normalize(v, 3);
    z_to_quat(q, v);
  } else if (numbers_of(m, el, kind, cls, "xyaxes", v, 6, 6) == 6) {
    double *x = v, *y = v + 3, z[3], R[9];
    normalize(x, 3);
    double d = x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
    for (int i = 0; i < 3; i++) {
      y[i] -= d * x[i];
    }
    normalize(y, 3);
    z[0] = x[1] * y[2] - x[2] * y[1], z[1] = x[2] * y[0] - x[0] * y[2];
    z[2] = x[0] * y[1] - x[1] * y[0];
    for (int i = 0; i < 3; i++) { /* axes are the columns */
      R[3 * i] = x[i], R[3 * i + 1] = y[i], R[3 * i + 2] = z[i];
    }
    imp__mat_to_quat(q, R);
  }
  return m->c->failed ? -1 : 0;
}

/* frame f followed by a child placed at (pos, q) in it */
static void frame_child(frame *out, const frame *f, const double pos[3], const double q[4]) {
  double p[3];
  imp__rotate(p, f->R, pos);
  for (int i = 0; i < 3; i++) {
    out->t[i] = f->t[i] + p[i];
  }
  imp__quat_mul(out->q, f->q, q);
  normalize(out->q, 4);
  imp__quat_to_mat(out->R, out->q);
}

static void frame_point(double out[3], const frame *f, const double x[3]) {
  imp__rotate(out, f->R, x);
  for (int i = 0; i < 3; i++) {
    out[i] += f->t[i];
  }
}

/* --- geoms: mass properties ---------------------------------------------------------------- */

static const char *const geom_read[] = {"name", "class", "type", "size", "fromto", "pos",
                                        "quat", "axisangle", "euler", "xyaxes", "zaxis",
                                        "mass", "density", "group", "friction", "solref",
                                        "solimp", "contype", "conaffinity", "mesh", NULL};
static const char *const site_read[] = {"name", "class", "pos", NULL};
static const char *const actuator_read[] = {"name",        "class",       "joint", "gear",
                                            "ctrlrange",   "ctrllimited", "kp",    "kv",
                                            "forcerange", "forcelimited", NULL};

static int shape_of(mjcf *m, const xmlNode *g, const char *cls, imp_shape *shape, int *massless) {
  const char *type = attr_of(m, g, "geom", cls, "type");
  static const char *const names[] = {"sphere", "capsule", "cylinder", "ellipsoid", "box"};
  *massless = 0;
  if (!type) {
    type = "sphere";
  }
  for (int i = 0; i < 5; i++) {
    if (strcmp(type, names[i]) == 0) {
      *shape = (imp_shape)i;
      return 0;
    }
  }
  if (strcmp(type, "plane") == 0) {
    *massless = 1;
    return 0;
  }
  return imp__fail(m->c, g, "<geom type=\"%s\">: its mass is not computed here (mesh, hfield, "
                            "sdf): give the body an <inertial>", type);
}

/* adds one geom's mass to the sum, in the body's MJCF frame */
static int geom_mass(mjcf *m, const xmlNode *g, const char *cls, imp_mass *sum) {
  imp_shape shape = IMP_SHAPE_SPHERE;
  int massless;
  if (shape_of(m, g, cls, &shape, &massless) != 0) {
    return -1;
  }
  if (massless) {
    return 0;
  }
  double size[3] = {0, 0, 0}, pos[3] = {0, 0, 0}, q[4], ft[6], v[1];
  int nsize = numbers_of(m, g, "geom", cls, "size", size, 1, 3);
  if (nsize < 0 || numbers_of(m, g, "geom", cls, "pos", pos, 3, 3) < 0 ||
      orientation_of(m, g, "geom", cls, q) != 0) {
    return -1;
  }
  if (numbers_of(m, g, "geom", cls, "fromto", ft, 6, 6) == 6) {
    double d[3] = {ft[3] - ft[0], ft[4] - ft[1], ft[5] - ft[2]};
    double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (len < 1e-14) {
      return imp__fail(m->c, g, "<geom fromto>: the two points coincide");
    }
    for (int i = 0; i < 3; i++) {
      pos[i] = (ft[i] + ft[i + 3]) / 2;
      d[i] /= len;
    }
    if (shape == IMP_SHAPE_BOX || shape == IMP_SHAPE_ELLIPSOID) {
      size[2] = len / 2, size[1] = size[0];
    } else {
      size[1] = len / 2;
    }
    z_to_quat(q, d);
  }
  double volume = imp__shape_volume(shape, size);
  if (!(volume > 0)) {
    return imp__fail(m->c, g, "<geom>: its size gives no volume");
  }
  double mass = 1000 * volume; /* density default 1000 kg/m³ (water) */
  if (numbers_of(m, g, "geom", cls, "mass", v, 1, 1) == 1) {
    mass = v[0];
  } else if (numbers_of(m, g, "geom", cls, "density", v, 1, 1) == 1) {
    mass = v[0] * volume;
  }
  if (m->c->failed || !(mass >= 0)) {
    return m->c->failed ? -1 : imp__fail(m->c, g, "<geom>: mass must not be negative");
  }
  double diag[3], R[9];
  imp__shape_inertia(diag, shape, size, mass);
  imp__quat_to_mat(R, q);
  imp__mass_add(sum, mass, pos, R, diag);
  return 0;
}

/* --- one body ------------------------------------------------------------------------------ */

/* <inertial>: mass, centre and inertia in the body's MJCF frame */
static int inertial_of(mjcf *m, const xmlNode *el, imp_mass *out) {
  static const char *const read[] = {"pos", "quat", "axisangle", "euler", "xyaxes", "zaxis",
                                     "mass", "diaginertia", "fullinertia", NULL};
  double v[6], q[4], R[9];
  if (imp__check_attrs(m->c, el, read, "not an inertial attribute") != 0 ||
      imp__numbers(m->c, el, "pos", imp__attr(el, "pos") ? imp__attr(el, "pos") : "0 0 0",
                   out->com, 3, 3) < 0 ||
      orientation_of(m, el, "inertial", NULL, q) != 0) {
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
    if (imp__is(k, "geom") && geom_mass(m, k, cls, mass) != 0) {
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

static const char *const joint_read[] = {"name",      "class",     "type",    "axis",
                                         "pos",       "range",     "limited", "damping",
                                         "armature",  "stiffness", "springref", "ref",
                                         "frictionloss", "solreflimit", "solimplimit",
                                         "solreffriction", "solimpfriction", NULL};

static const char *const freejoint_read[] = {"name", NULL};

static int joint_number(mjcf *m, const xmlNode *j, const char *cls, const char *name, double *v) {
  return numbers_of(m, j, "joint", cls, name, v, 1, 1) < 0 ? -1 : 0;
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
  if (imp__check_attrs(m->c, j, joint_read, "not modelled") != 0 ||
      numbers_of(m, j, "joint", cls, "pos", p, 3, 3) < 0 ||
      joint_number(m, j, cls, "damping", &damping) ||
      joint_number(m, j, cls, "armature", &armature) ||
      (nrange = numbers_of(m, j, "joint", cls, "range", v, 2, 2)) < 0) {
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
  const char *limited = attr_of(m, j, "joint", cls, "limited");
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
  const char *type = attr_of(m, j, "joint", cls, "type");
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
  if (imp__check_attrs(m->c, j, joint_read, "not modelled") != 0 ||
      numbers_of(m, j, "joint", cls, "axis", axis, 3, 3) < 0 ||
      numbers_of(m, j, "joint", cls, "pos", p, 3, 3) < 0 ||
      (nrange = numbers_of(m, j, "joint", cls, "range", range, 2, 2)) < 0 ||
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
  const char *limited = attr_of(m, j, "joint", cls, "limited");
  int is_limited = limited ? strcmp(limited, "true") == 0 : (nrange == 2 && m->autolimits);
  normalize(axis, 3);
  cJSON *o = cJSON_CreateObject();
  char generated[32];
  cJSON_AddStringToObject(o, "name", joint_name(m, j, generated));
  cJSON_AddStringToObject(o, "type", slide ? "slide" : "hinge");
  cJSON_AddItemToObject(o, "axis", imp__json_vector(axis, 3));
  if (nrange == 2) {
    double r[2] = {slide ? range[0] : angle_of(m, range[0]), slide ? range[1] : angle_of(m, range[1])};
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
    int n = numbers_of(m, j, "joint", cls, soft[k][0], v, 1, want);
    if (n < 0) {
      cJSON_Delete(o);
      return NULL;
    }
    if (n > 0) {
      n = soft_defaults(v, n, want);
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
    cJSON_AddNumberToObject(o, "springref", slide ? springref : angle_of(m, springref));
  }
  return o;
}

static int convert_site(mjcf *m, const xmlNode *s, const char *cls, const char *body,
                        const frame *f) {
  double pos[3] = {0, 0, 0}, at[3];
  const char *name = imp__attr(s, "name");
  if (imp__check_attrs(m->c, s, site_read, "a site is a point here (no size, frame or look)") ||
      numbers_of(m, s, "site", cls, "pos", pos, 3, 3) < 0) {
    return -1;
  }
  if (!name) {
    return imp__report(m->c, s, "<site> without a name ignored: sites are found by name");
  }
  if (!body) {
    return imp__report(m->c, s, "<site> on the world ignored: sites belong to moving bodies");
  }
  frame_point(at, f, pos);
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", name);
  cJSON_AddStringToObject(o, "body", body);
  cJSON_AddItemToObject(o, "pos", imp__json_vector(at, 3));
  cJSON_AddItemToArray(m->sites, o);
  return 0;
}

/* A geom as a native collision shape (docs/robot-format.md, "Geoms"), placed in the native frame
 * of `body` through f. Plane, sphere, capsule, box, cylinder and (STL) mesh convert; a geom that
 * collides with nothing (contype and conaffinity 0, MuJoCo's visual geoms) and the other types
 * are reported. */
static int convert_geom(mjcf *m, const xmlNode *g, const char *cls, const char *body,
                        const frame *f) {
  static const char *const types[] = {"plane", "sphere", "capsule", "box", "cylinder", "mesh"};
  const char *type = attr_of(m, g, "geom", cls, "type");
  type = type ? type : "sphere";
  double ct = 1, ca = 1, size[3] = {0, 0, 0}, pos[3] = {0, 0, 0}, q[4], ft[6], v[5];
  if (numbers_of(m, g, "geom", cls, "contype", &ct, 1, 1) < 0 ||
      numbers_of(m, g, "geom", cls, "conaffinity", &ca, 1, 1) < 0) {
    return -1;
  }
  if (m->no_contact || (ct == 0 && ca == 0)) {
    return 0; /* collides with nothing: its mass (if any) was taken in body_mass */
  }
  int t = -1;
  for (int k = 0; k < 6; k++) {
    t = strcmp(type, types[k]) == 0 ? k : t;
  }
  if (t < 0) {
    return imp__report(m->c, g, "<geom type=\"%s\"> not converted to a collision shape (plane, "
                                "sphere, capsule, box, cylinder and mesh are)", type);
  }
  const char *mesh_name = t == 5 ? attr_of(m, g, "geom", cls, "mesh") : NULL;
  const cJSON *mesh = mesh_name ? cJSON_GetObjectItemCaseSensitive(m->meshes, mesh_name) : NULL;
  if (t == 5 && !mesh) {
    return imp__report(m->c, g, "<geom type=\"mesh\" mesh=\"%s\"> not converted: no such STL "
                                "mesh among the assets read", mesh_name ? mesh_name : "");
  }
  if (numbers_of(m, g, "geom", cls, "size", size, 1, 3) < 0 ||
      numbers_of(m, g, "geom", cls, "pos", pos, 3, 3) < 0 ||
      orientation_of(m, g, "geom", cls, q) != 0) {
    return -1;
  }
  if ((t == 2 || t == 4) && numbers_of(m, g, "geom", cls, "fromto", ft, 6, 6) == 6) {
    double d[3] = {ft[3] - ft[0], ft[4] - ft[1], ft[5] - ft[2]};
    const double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    for (int i = 0; i < 3; i++) {
      pos[i] = (ft[i] + ft[i + 3]) / 2;
      d[i] /= len > 0 ? len : 1;
    }
    size[1] = len / 2;
    z_to_quat(q, d);
  } else if (t == 3 && numbers_of(m, g, "geom", cls, "fromto", ft, 6, 6) == 6) {
    return imp__report(m->c, g, "<geom type=\"box\" fromto> not converted to a collision shape");
  }
  frame at;
  frame_child(&at, f, pos, q);
  cJSON *o = cJSON_CreateObject();
  const char *name = imp__attr(g, "name");
  char generated[32];
  if (!name) {
    snprintf(generated, sizeof generated, "geom%d", m->unnamed_geoms++);
    name = generated;
  }
  cJSON_AddStringToObject(o, "name", name);
  cJSON_AddStringToObject(o, "body", body ? body : "world");
  cJSON_AddStringToObject(o, "type", types[t]);
  if (t == 5) {
    cJSON_AddItemToObject(o, "file", cJSON_Duplicate(cJSON_GetObjectItem(mesh, "file"), 1));
    const cJSON *scale = cJSON_GetObjectItem(mesh, "scale");
    if (scale) {
      cJSON_AddItemToObject(o, "scale", cJSON_Duplicate(scale, 1));
    }
  } else if (t > 0) {
    cJSON_AddItemToObject(o, "size",
                          imp__json_vector(size, t == 1 ? 1 : t == 2 || t == 4 ? 2 : 3));
  }
  cJSON_AddItemToObject(o, "pos", imp__json_vector(at.t, 3));
  cJSON_AddItemToObject(o, "quat", imp__json_vector(at.q, 4));
  static const char *const soft[3] = {"friction", "solref", "solimp"};
  static const int counts[3] = {3, 2, 5};
  for (int k = 0; k < 3; k++) {
    int n = numbers_of(m, g, "geom", cls, soft[k], v, 1, counts[k]);
    if (n < 0) {
      cJSON_Delete(o);
      return -1;
    }
    if (k == 0 && n > 0 && n < 3) { /* MuJoCo fills the rest of friction with its defaults */
      const double dflt[3] = {1, 0.005, 0.0001};
      for (int i = n; i < 3; i++) {
        v[i] = dflt[i];
      }
      n = 3;
    } else if (k > 0 && n > 0) {
      n = soft_defaults(v, n, counts[k]);
    }
    if (n == counts[k]) {
      cJSON_AddItemToObject(o, soft[k], imp__json_vector(v, n));
    }
  }
  if (ct != 1 || ca != 1) { /* contact groups other than MuJoCo's default */
    cJSON_AddNumberToObject(o, "contype", ct);
    cJSON_AddNumberToObject(o, "conaffinity", ca);
  }
  cJSON_AddItemToArray(m->geoms, o);
  return 0;
}

static int convert_children(mjcf *m, const xmlNode *b, const char *parent, const frame *f,
                            const char *cls);

/* A body's joints: "joint" for one, "joints" (in order) for several. The native frame moves to
 * the first joint's position (p gets it); a later hinge or slide elsewhere keeps its own anchor
 * ("pos", relative to the first). */
static int body_joints(mjcf *m, cJSON *o, const xmlNode *const *joints, int n, const char *cls,
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

static const char *const body_read[] = {"name", "childclass", "pos", "quat", "axisangle",
                                        "euler", "xyaxes", "zaxis", NULL};

/* A body with a joint or a mass becomes a native body; one with neither is merged into its
 * parent (f: the parent's native frame to the MJCF frame this body sits in). */
static int convert_body(mjcf *m, const xmlNode *b, const char *parent, const frame *f,
                        const char *cls) {
  const char *childclass = imp__attr(b, "childclass");
  const char *inner = childclass ? childclass : cls;
  double pos[3] = {0, 0, 0}, q[4];
  if (imp__check_attrs(m->c, b, body_read, "not modelled") != 0 ||
      numbers_of(m, b, "body", NULL, "pos", pos, 3, 3) < 0 ||
      orientation_of(m, b, "body", NULL, q) != 0) {
    return -1;
  }
  const xmlNode *joints[SIM_BODY_DOF_MAX];
  int njoint = 0;
  for (const xmlNode *k = b->children; k; k = k->next) {
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
  frame here;
  frame_child(&here, f, pos, q);
  if (!joint && !has_mass) { /* a frame only: its contents belong to the parent */
    return convert_children(m, b, parent, &here, inner);
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
  if (body_joints(m, o, joints, njoint, inner, p) != 0) {
    cJSON_Delete(o);
    return -1;
  }
  frame_point(origin, &here, p); /* the native frame sits at the joint */
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
  frame inside = identity_frame;
  for (int i = 0; i < 3; i++) {
    inside.t[i] = -p[i];
  }
  return convert_children(m, b, name, &inside, inner);
}

/* what a body (or the worldbody) holds */
static int convert_children(mjcf *m, const xmlNode *b, const char *parent, const frame *f,
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
      rc = imp__check_attrs(m->c, k, geom_read, "not modelled");
      if (rc == 0) {
        rc = convert_geom(m, k, cls, parent, f);
      }
    } else if (imp__is(k, "camera") || imp__is(k, "light")) {
      rc = imp__report(m->c, k, "<%s> ignored: visual only", imp__name(k));
    } else {
      rc = imp__report(m->c, k, "<%s> ignored: not modelled", imp__name(k));
    }
    if (rc != 0) {
      return -1;
    }
  }
  return 0;
}

/* --- actuators ----------------------------------------------------------------------------- */

/* A position actuator's kv (newer MuJoCo: force = kp·(ctrl − q) − kv·q̇) is the native kd; a
 * servo's symmetric forcerange, when limited (forcelimited, or autolimits and a range), is its
 * force_limit. A motor's forcerange is reported: the native motor has no output clamp. */
static int servo_extras(mjcf *m, const xmlNode *a, const char *kind, cJSON *o) {
  double kv = 0, range[2];
  const int nkv = strcmp(kind, "position") == 0 ? numbers_of(m, a, kind, NULL, "kv", &kv, 1, 1) : 0;
  const int nrange = numbers_of(m, a, kind, NULL, "forcerange", range, 2, 2);
  if (nkv < 0 || nrange < 0) {
    return -1;
  }
  if (nkv == 1 && kv != 0) {
    cJSON_AddNumberToObject(o, "kd", kv);
  }
  const char *limited = attr_of(m, a, kind, NULL, "forcelimited");
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

static int convert_actuator(mjcf *m, const xmlNode *a, int index) {
  const char *kind = imp__name(a);
  const char *type = strcmp(kind, "motor") == 0      ? "motor"
                     : strcmp(kind, "position") == 0 ? "position_servo"
                     : strcmp(kind, "velocity") == 0 ? "velocity_servo"
                                                     : NULL;
  if (!type) {
    return imp__report(m->c, a, "<%s> actuator ignored: only motor, position and velocity "
                                "actuators are imported", kind);
  }
  if (imp__check_attrs(m->c, a, actuator_read, "not modelled") != 0) {
    return -1;
  }
  const char *joint = imp__attr(a, "joint");
  if (!joint) {
    return imp__fail(m->c, a, "<%s>: only actuators on a joint are imported (joint=...)", kind);
  }
  double gear[6] = {1, 0, 0, 0, 0, 0}, range[2], gain[1];
  int ngear = numbers_of(m, a, kind, NULL, "gear", gear, 1, 6);
  int nrange = numbers_of(m, a, kind, NULL, "ctrlrange", range, 2, 2);
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
  cJSON_AddStringToObject(o, "joint", joint);
  cJSON_AddStringToObject(o, "type", type);
  if (strcmp(type, "motor") == 0) {
    cJSON_AddNumberToObject(o, "gear", gear[0]);
    if (attr_of(m, a, kind, NULL, "forcerange") &&
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
    if (numbers_of(m, a, kind, NULL, key, gain, 1, 1) < 0 || servo_extras(m, a, kind, o) != 0) {
      cJSON_Delete(o);
      return -1;
    }
    cJSON_AddNumberToObject(o, key, gain[0]);
  }
  const char *limited = attr_of(m, a, kind, NULL, "ctrllimited");
  if (nrange == 2 && (limited ? strcmp(limited, "true") == 0 : m->autolimits)) {
    cJSON_AddItemToObject(o, "ctrlrange", imp__json_vector(range, 2));
  }
  cJSON_AddItemToArray(m->actuators, o);
  return 0;
}

/* --- the file ------------------------------------------------------------------------------ */

/* the attributes a <default> class sets are checked like the elements' own */
static int check_defaults(mjcf *m, const xmlNode *d) {
  for (const xmlNode *k = d->children; k; k = k->next) {
    int rc = 0;
    if (k->type != XML_ELEMENT_NODE) {
      continue;
    } else if (imp__is(k, "default")) {
      rc = check_defaults(m, k);
    } else if (imp__is(k, "joint")) {
      rc = imp__check_attrs(m->c, k, joint_read, "not modelled");
    } else if (imp__is(k, "geom")) {
      rc = imp__check_attrs(m->c, k, geom_read, "not modelled");
    } else if (imp__is(k, "site")) {
      rc = imp__check_attrs(m->c, k, site_read, "a site is a point here (no size, frame or look)");
    } else if (imp__is(k, "motor") || imp__is(k, "position") || imp__is(k, "velocity")) {
      rc = imp__check_attrs(m->c, k, actuator_read, "not modelled");
    } else {
      rc = imp__report(m->c, k, "<default><%s> ignored: not modelled", imp__name(k));
    }
    if (rc != 0) {
      return -1;
    }
  }
  return 0;
}

static int read_compiler(mjcf *m, const xmlNode *el) {
  static const char *const read[] = {"angle", "inertiafromgeom", "eulerseq", "autolimits",
                                     "meshdir", NULL};
  if (imp__check_attrs(m->c, el, read, "not used") != 0) {
    return -1;
  }
  const char *meshdir = imp__attr(el, "meshdir");
  if (meshdir) {
    snprintf(m->meshdir, sizeof m->meshdir, "%s", meshdir);
  }
  const char *angle = imp__attr(el, "angle"), *geom = imp__attr(el, "inertiafromgeom");
  const char *seq = imp__attr(el, "eulerseq"), *autolimits = imp__attr(el, "autolimits");
  if (angle) {
    m->degree = strcmp(angle, "radian") != 0;
  }
  if (geom) {
    m->geom_inertia = strcmp(geom, "true") == 0 ? 1 : strcmp(geom, "false") == 0 ? 0 : 2;
  }
  if (autolimits) {
    m->autolimits = strcmp(autolimits, "false") != 0;
  }
  if (seq) {
    if (strlen(seq) != 3 || strspn(seq, "xyzXYZ") != 3) {
      return imp__fail(m->c, el, "<compiler eulerseq=\"%s\">: expected three of x, y, z, X, Y, Z",
                       seq);
    }
    memcpy(m->eulerseq, seq, 4);
  }
  return 0;
}

static int read_option(mjcf *m, const xmlNode *el, cJSON *root) {
  static const char *const read[] = {"timestep", "gravity", "integrator", NULL};
  double v[3];
  if (imp__check_attrs(m->c, el, read, "not used") != 0) {
    return -1;
  }
  if (imp__attr(el, "timestep")) {
    if (imp__numbers(m->c, el, "timestep", imp__attr(el, "timestep"), v, 1, 1) < 0) {
      return -1;
    }
    cJSON_ReplaceItemInObject(root, "timestep", cJSON_CreateNumber(v[0]));
  }
  if (imp__attr(el, "gravity")) {
    if (imp__numbers(m->c, el, "gravity", imp__attr(el, "gravity"), v, 3, 3) < 0) {
      return -1;
    }
    cJSON_ReplaceItemInObject(root, "gravity", imp__json_vector(v, 3));
  }
  const char *integrator = imp__attr(el, "integrator");
  if (integrator) {
    if (strcmp(integrator, "RK4") == 0) {
      cJSON_ReplaceItemInObject(root, "integrator", cJSON_CreateString("rk4"));
    } else if (strcmp(integrator, "Euler") != 0 &&
               imp__report(m->c, el, "<option integrator=\"%s\"> read as Euler", integrator)) {
      return -1;
    }
  }
  for (const xmlNode *k = el->children; k; k = k->next) {
    if (imp__is(k, "flag")) {
      const char *limit = imp__attr(k, "limit"), *friction = imp__attr(k, "frictionloss");
      const char *contact = imp__attr(k, "contact");
      m->no_limits = limit && strcmp(limit, "disable") == 0;
      m->no_friction = friction && strcmp(friction, "disable") == 0;
      m->no_contact = contact && strcmp(contact, "disable") == 0;
      static const char *const flags[] = {"limit", "frictionloss", "contact", NULL};
      if (imp__check_attrs(m->c, k, flags, "not modelled") != 0) {
        return -1;
      }
    } else if (k->type == XML_ELEMENT_NODE &&
               imp__report(m->c, k, "<option><%s> ignored: not modelled", imp__name(k)) != 0) {
      return -1;
    }
  }
  return 0;
}

/* a converted body's name, or "world" */
static int has_body(const mjcf *m, const char *name) {
  if (strcmp(name, "world") == 0) {
    return 1;
  }
  for (const cJSON *b = m->bodies->child; b; b = b->next) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(b, "name");
    if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) {
      return 1;
    }
  }
  return 0;
}

/* <contact>: each <exclude body1 body2> into the native "exclude" list when both bodies are
 * native ones (a body merged into its parent is reported); <pair> is reported */
static int convert_contact(mjcf *m, const xmlNode *contact, cJSON *root) {
  static const char *const attrs[] = {"name", "body1", "body2", NULL};
  for (const xmlNode *k = contact->children; k; k = k->next) {
    if (k->type != XML_ELEMENT_NODE) {
      continue;
    }
    if (!imp__is(k, "exclude")) {
      if (imp__report(m->c, k, "<contact><%s> ignored: not modelled", imp__name(k)) != 0) {
        return -1;
      }
      continue;
    }
    const char *b1 = imp__attr(k, "body1"), *b2 = imp__attr(k, "body2");
    if (!b1 || !b2) {
      return imp__fail(m->c, k, "<exclude>: body1 and body2 are required");
    }
    if (imp__check_attrs(m->c, k, attrs, "not modelled") != 0) {
      return -1;
    }
    if (!has_body(m, b1) || !has_body(m, b2)) {
      if (imp__report(m->c, k, "<exclude body1=\"%s\" body2=\"%s\"> not converted: \"%s\" has "
                               "no joint and no mass and was merged into its parent", b1, b2,
                      has_body(m, b1) ? b2 : b1) != 0) {
        return -1;
      }
      continue;
    }
    cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "exclude");
    list = list ? list : cJSON_AddArrayToObject(root, "exclude");
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "body1", b1);
    cJSON_AddStringToObject(o, "body2", b2);
    cJSON_AddItemToArray(list, o);
  }
  return 0;
}

/* <asset><mesh name file scale>: an STL file, found through compiler meshdir; its name is the
 * file's without directory and extension when not given (MuJoCo's rule). A mesh that is not
 * found, or not STL, is reported, and geoms using it are not converted. */
static int read_mesh(mjcf *m, const xmlNode *el) {
  static const char *const read[] = {"name", "file", "scale", NULL};
  if (imp__check_attrs(m->c, el, read, "not modelled") != 0) {
    return -1;
  }
  const char *file = imp__attr(el, "file"), *name = imp__attr(el, "name");
  double scale[3] = {1, 1, 1};
  if (numbers_of(m, el, "mesh", NULL, "scale", scale, 3, 3) < 0) {
    return -1;
  }
  if (!file) {
    return imp__report(m->c, el, "<mesh> without a file (vertices given inline) not converted");
  }
  char stem[256], path[4096];
  if (!name) { /* MuJoCo's default name: the file's stem */
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    const char *dot = strrchr(base, '.');
    snprintf(stem, sizeof stem, "%.*s", dot ? (int)(dot - base) : (int)strlen(base), base);
    name = stem;
  }
  const size_t len = strlen(file);
  if (len < 4 || strcasecmp(file + len - 4, ".stl") != 0) {
    return imp__report(m->c, el, "<mesh file=\"%s\"> not converted: only STL meshes are read",
                       file);
  }
  if (imp__mesh_file(path, sizeof path, m->c->file, m->meshdir[0] ? m->meshdir : NULL, file)) {
    return imp__report(m->c, el, "<mesh file=\"%s\"> not converted: file not found", file);
  }
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "file", path);
  if (scale[0] != 1 || scale[1] != 1 || scale[2] != 1) {
    cJSON_AddItemToObject(o, "scale", imp__json_vector(scale, 3));
  }
  cJSON_AddItemToObject(m->meshes, name, o);
  return 0;
}

static int read_assets(mjcf *m, const xmlNode *asset) {
  for (const xmlNode *k = asset->children; k; k = k->next) {
    int rc = 0;
    if (k->type != XML_ELEMENT_NODE) {
      continue;
    } else if (imp__is(k, "mesh")) {
      rc = read_mesh(m, k);
    } else if (imp__is(k, "texture") || imp__is(k, "material") || imp__is(k, "skin")) {
      rc = imp__report(m->c, k, "<asset><%s> ignored: visual only", imp__name(k));
    } else {
      rc = imp__report(m->c, k, "<asset><%s> ignored: not modelled", imp__name(k));
    }
    if (rc != 0) {
      return -1;
    }
  }
  return 0;
}

static int read_top(mjcf *m, const xmlNode *top, cJSON *root) {
  const xmlNode *world = NULL, *actuators = NULL, *contact = NULL, *assets[16];
  int nassets = 0;
  for (const xmlNode *k = top->children; k; k = k->next) {
    int rc = 0;
    if (k->type != XML_ELEMENT_NODE) {
      continue;
    } else if (imp__is(k, "compiler")) {
      rc = read_compiler(m, k);
    } else if (imp__is(k, "option")) {
      rc = read_option(m, k, root);
    } else if (imp__is(k, "default")) {
      if (m->ndefaults == MJCF_TOP_DEFAULTS) {
        rc = imp__fail(m->c, k, "<default>: at most %d top-level defaults", MJCF_TOP_DEFAULTS);
      } else {
        m->defaults[m->ndefaults++] = (xmlNode *)k;
      }
    } else if (imp__is(k, "worldbody")) {
      world = world ? world : k;
    } else if (imp__is(k, "actuator")) {
      actuators = k;
    } else if (imp__is(k, "contact")) {
      contact = k;
    } else if (imp__is(k, "include")) {
      rc = imp__fail(m->c, k, "<include>: included files are not read yet");
    } else if (imp__is(k, "asset") && nassets < 16) {
      assets[nassets++] = k; /* read once compiler meshdir is known */
    } else if (imp__is(k, "visual") || imp__is(k, "statistic") || imp__is(k, "asset")) {
      rc = imp__report(m->c, k, "<%s> ignored: visual only", imp__name(k));
    } else {
      rc = imp__report(m->c, k, "<%s> ignored: not modelled", imp__name(k));
    }
    if (rc != 0) {
      return -1;
    }
  }
  if (!world) {
    return imp__fail(m->c, top, "<mujoco>: no <worldbody>");
  }
  for (int a = 0; a < nassets; a++) {
    if (read_assets(m, assets[a]) != 0) {
      return -1;
    }
  }
  for (int i = 0; i < m->ndefaults; i++) {
    if (check_defaults(m, m->defaults[i]) != 0) {
      return -1;
    }
  }
  if (convert_children(m, world, NULL, &identity_frame, NULL) != 0) {
    return -1;
  }
  int index = 0;
  for (const xmlNode *k = actuators ? actuators->children : NULL; k; k = k->next) {
    if (k->type == XML_ELEMENT_NODE && convert_actuator(m, k, index++) != 0) {
      return -1;
    }
  }
  return contact ? convert_contact(m, contact, root) : 0;
}

cJSON *imp__mjcf(imp_ctx *c, const xmlNode *top) {
  mjcf m;
  memset(&m, 0, sizeof m);
  m.c = c;
  m.degree = 1;
  m.geom_inertia = 2;
  m.autolimits = 1;
  memcpy(m.eulerseq, "xyz", 4);
  cJSON *root = cJSON_CreateObject();
  const char *model = imp__attr(top, "model");
  cJSON_AddStringToObject(root, "name", model ? model : "robot");
  char comment[600];
  snprintf(comment, sizeof comment, "converted from MJCF %s by achilles", c->file);
  cJSON_AddStringToObject(root, "comment", comment);
  cJSON_AddNumberToObject(root, "timestep", 0.002); /* MuJoCo's defaults */
  cJSON_AddStringToObject(root, "integrator", "euler");
  const double g[3] = {0, 0, -9.81};
  cJSON_AddItemToObject(root, "gravity", imp__json_vector(g, 3));
  m.bodies = cJSON_AddArrayToObject(root, "bodies");
  m.sites = cJSON_AddArrayToObject(root, "sites");
  m.actuators = cJSON_AddArrayToObject(root, "actuators");
  m.geoms = cJSON_AddArrayToObject(root, "geoms");
  m.meshes = cJSON_CreateObject();
  const int rc = read_top(&m, top, root);
  cJSON_Delete(m.meshes);
  if (rc != 0) {
    cJSON_Delete(root);
    return NULL;
  }
  if (cJSON_GetArraySize(m.bodies) == 0) {
    imp__fail(c, top, "no moving body with mass in <worldbody>");
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}
