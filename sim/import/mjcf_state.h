/* sim/import/mjcf_state.h: the MJCF converter's shared state and stages (internal to sim/import).
 *
 * sim/import/mjcf.c (the entry, imp__mjcf of mjcf.h) reads the file's top level and calls the
 * stages: class defaults (mjcf_defaults.c), orientations and frames (mjcf_frame.c), compiler and
 * option settings (mjcf_option.c), the body tree (mjcf_body.c) with its joints (mjcf_joint.c)
 * and geoms (mjcf_geom.c), and the actuators (mjcf_actuator.c). Every stage reports through m->c
 * and returns -1 on the first error (NULL for a converted object).
 */
#ifndef ACHILLES_SIM_IMPORT_MJCF_STATE_H
#define ACHILLES_SIM_IMPORT_MJCF_STATE_H

#include <cjson/cJSON.h>
#include <libxml/tree.h>

#include "sim/import/mass.h"
#include "sim/import/xml_read.h"

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
  int exact_mesh;    /* <compiler exactmeshinertia="true">: a mesh's own volume (mjcf_mesh.c) */
  /* the top-level <default> elements: together class "main" (MuJoCo merges them, later ones
   * overriding earlier ones), each holding its own nested classes */
  xmlNode *defaults[MJCF_TOP_DEFAULTS];
  int ndefaults;
  char meshdir[1024]; /* compiler meshdir */
  cJSON *meshes; /* <asset><mesh>s by name: {"file": absolute path, "scale": [3], "obj": true} */
  cJSON *bodies, *sites, *actuators, *geoms;
  cJSON *tendons;    /* the native "tendons" array (NULL until a tendon is converted) */
  cJSON *wrap_geoms; /* names of the geoms tendons wrap around (an object used as a set) */
  cJSON *site_axes; /* each named site: [3] its z axis in its native body's frame, the slider
                       direction of a slider-crank that names it (mjcf_body.c; mjcf_actuator.c) */
  cJSON *frames; /* each MJCF body name: [3] its native frame's offset (at its first joint),
                    or null for a body merged into its parent (mjcf_body.c; mjcf_equality.c) */
  int unnamed_bodies, unnamed_joints, unnamed_geoms;
} mjcf;

/* A transform from a native parent body's frame to an MJCF frame inside it: x = t + R·x_mjcf. */
typedef struct mjcf_frame {
  double t[3];
  double R[9];
  double q[4];
} mjcf_frame;
extern const mjcf_frame mjcf__identity_frame;

/* the attributes each element may carry (checked on the element and on its <default>s) */
extern const char *const mjcf__joint_read[];
extern const char *const mjcf__geom_read[];
extern const char *const mjcf__site_read[];
extern const char *const mjcf__actuator_read[];
extern const char *const mjcf__tendon_read[];
extern const char *const mjcf__muscle_read[];
extern const char *const mjcf__adhesion_read[];

/* --- class defaults (mjcf_defaults.c) --- */
/* The element's attribute, else its class chain's default for elements of this kind (cls: the
 * enclosing childclass, NULL for "main"). */
const char *mjcf__attr(const mjcf *m, const xmlNode *el, const char *kind, const char *cls,
                       const char *name);
/* numbers of an attribute (element or defaults); returns the count read, 0 when absent */
int mjcf__numbers(mjcf *m, const xmlNode *el, const char *kind, const char *cls,
                  const char *name, double *out, int min_n, int max_n);
/* a solref (want 2) or solimp (want 5) of n given numbers of el's attribute attr, completed
 * with MuJoCo's defaults (with a note when MuJoCo would not use them as written); returns
 * want, or -1 (strict) */
int mjcf__soft_values(mjcf *m, const xmlNode *el, const char *attr, double *v, int n, int want);
/* the attributes every <default> class sets, checked like the elements' own */
int mjcf__check_defaults(mjcf *m, const xmlNode *d);

/* --- orientations and frames (mjcf_frame.c) --- */
double mjcf__angle(const mjcf *m, double a); /* compiler angle: degrees or radians */
void mjcf__normalize(double *v, int n);
void mjcf__z_to_quat(double q[4], const double v[3]);
/* quat, axisangle, euler, xyaxes or zaxis (at most one), or the identity */
int mjcf__orientation(mjcf *m, const xmlNode *el, const char *kind, const char *cls,
                      double q[4]);
void mjcf__frame_child(mjcf_frame *out, const mjcf_frame *f, const double pos[3],
                       const double q[4]);
void mjcf__frame_point(double out[3], const mjcf_frame *f, const double x[3]);

/* --- file-wide settings (mjcf_option.c) --- */
int mjcf__read_compiler(mjcf *m, const xmlNode *el);
int mjcf__read_option(mjcf *m, const xmlNode *el, cJSON *root);
/* <size nconmax> as max_contacts */
int mjcf__read_size(mjcf *m, const xmlNode *el, cJSON *root);

/* --- the body tree (mjcf_body.c, mjcf_joint.c, mjcf_geom.c) --- */
/* what a body (or the worldbody, parent NULL) holds: bodies, sites, geoms */
int mjcf__convert_children(mjcf *m, const xmlNode *b, const char *parent, const mjcf_frame *f,
                           const char *cls);
/* a body's joints into o ("joint" or "joints"); p gets the first joint's position */
int mjcf__body_joints(mjcf *m, cJSON *o, const xmlNode *const *joints, int n, const char *cls,
                      double p[3]);
/* adds one geom's mass to the sum, in the body's MJCF frame */
int mjcf__geom_mass(mjcf *m, const xmlNode *g, const char *cls, imp_mass *sum);
/* a geom as a native collision shape on `body` (NULL: the world), placed through f */
int mjcf__convert_geom(mjcf *m, const xmlNode *g, const char *cls, const char *body,
                       const mjcf_frame *f);

/* Nonzero for an element whose bodies or forces are not built (composite, tendon,
 * plugin, ...); refusing it is -1 with an error naming it, 0 for an empty <tendon> or
 * <equality> (nothing to build). */
int mjcf__unbuilt(const xmlNode *k);
int mjcf__refuse_unbuilt(mjcf *m, const xmlNode *k);

/* --- meshes (mjcf_mesh.c) --- */
/* <asset><mesh> into m->meshes */
int mjcf__read_mesh(mjcf *m, const xmlNode *el);
/* a mesh geom's mass at pos, q (the geom's frame in the body's MJCF frame) into sum */
int mjcf__mesh_mass(mjcf *m, const xmlNode *g, const char *cls, const double pos[3],
                    const double q[4], imp_mass *sum);

/* --- tendons (mjcf_tendon.c) --- */
/* the names of the geoms the <tendon> section's paths wrap around, into m->wrap_geoms (before
 * the bodies are converted: such a geom is kept even when it touches nothing) */
int mjcf__collect_wrap_geoms(mjcf *m, const xmlNode *tendon);
int mjcf__is_wrap_geom(const mjcf *m, const char *name);
/* the <fixed> and <spatial> tendons of a <tendon> section into m->tendons */
int mjcf__convert_tendons(mjcf *m, const xmlNode *tendon, int *index);
/* --- equality constraints (mjcf_equality.c) --- */
extern const char *const mjcf__equality_read[];
/* the children of an <equality> section into root's "equality" array */
int mjcf__convert_equality(mjcf *m, const xmlNode *section, cJSON *root);

/* --- actuators (mjcf_actuator.c) --- */
/* a motor, position, velocity or adhesion actuator (a muscle: mjcf__convert_muscle) */
int mjcf__convert_actuator(mjcf *m, const xmlNode *a, int index);
/* -1 (with the error) for an actuator on a site, a slider-crank or a joint in its parent */
int mjcf__other_transmission(mjcf *m, const xmlNode *a, const char *kind);
/* <muscle>, and <general> with dyntype, gaintype and biastype "muscle" (mjcf_muscle.c) */
int mjcf__convert_muscle(mjcf *m, const xmlNode *a, int index);

#endif
