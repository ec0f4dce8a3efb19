/* sim/import/mjcf_composite.h: MuJoCo 2.2.2's <composite>, expanded into the ordinary MJCF
 * elements its compiler makes of it (src/user/user_composite.cc, read for the semantics), so the
 * converters read bodies, joints, geoms, sites, tendons, equalities and excludes they already
 * know. Internal to sim/import.
 *
 * mjcf_composite.c reads the element (attributes, the <geom>, <site>, <joint kind>,
 * <tendon kind> and <pin> templates, the type's own defaults) and writes the elements;
 * mjcf_composite_make.c lays out each family (particle, grid, rope and loop, cloth, box,
 * cylinder and ellipsoid) with MuJoCo's names and numbers. */
#ifndef ACHILLES_SIM_IMPORT_MJCF_COMPOSITE_H
#define ACHILLES_SIM_IMPORT_MJCF_COMPOSITE_H

#include <libxml/tree.h>

#include "sim/import/xml_read.h"

/* Replaces every <composite> of the document (includes already expanded) by what MuJoCo 2.2.2
 * makes of it: bodies, joints, geoms and sites in place, tendons in a <tendon> section and
 * equalities in an <equality> section before the file's own (MuJoCo reads the worldbody
 * first), the loop's exclude in a <contact> section. The skin is dropped with a note. Returns
 * 0, or -1 with MuJoCo's error (or ours) at the composite's line. */
int imp__expand_composites(imp_ctx *c, xmlDoc *doc);

/* --- shared by mjcf_composite.c and mjcf_composite_make.c --------------------------------- */

typedef enum { COMP_PARTICLE, COMP_GRID, COMP_ROPE, COMP_LOOP, COMP_CLOTH, COMP_BOX,
               COMP_CYLINDER, COMP_ELLIPSOID, COMP_NTYPES } comp_type;

/* MuJoCo's element kinds: joints main, twist, stretch; tendons main, shear */
typedef enum { KIND_JOINT, KIND_TWIST, KIND_STRETCH, KIND_TENDON, KIND_SHEAR, KIND_N } comp_kind;

/* what a joint or tendon of one kind gets (MuJoCo's built-in defaults, then the template) */
typedef struct comp_dof {
  int has_range; /* limited is MuJoCo's "auto": a range limits (under autolimits) */
  double range[2], stiffness, damping, armature, frictionloss, margin;
  double solreflimit[2], solimplimit[5], solreffriction[2], solimpfriction[5];
  double solreffix[2], solimpfix[5]; /* the equality fixing it */
} comp_dof;

typedef struct comp_geom {
  int type; /* 0 sphere, 1 capsule, 2 ellipsoid, -1 another type (refused) */
  double size[3], friction[3], solref[2], solimp[5], solmix, margin, gap, mass, density;
  int contype, conaffinity, condim, group, priority, has_mass;
} comp_geom;

typedef struct comp {
  imp_ctx *c;
  xmlDoc *doc;
  xmlNode *el;     /* the <composite> */
  xmlNode *parent; /* its body (or the worldbody) */
  const char *parent_name;
  char prefix[128];
  comp_type type;
  int count[3], dim, skin, skin_subgrid;
  double spacing, offset[3], flatinertia, solrefsmooth[2], solimpsmooth[5];
  int add[KIND_N];
  comp_dof kind[KIND_N];
  comp_geom geom;
  int *pin, npin; /* coordinate pairs */
  /* the sections the elements go into (created on first use) and what was made */
  xmlNode **tendons, **equalities, **contact;
  int spatial, fixed, eq_tendon, eq_joint, eq_connect, excludes;
  /* the attributes written only when they differ from MuJoCo's defaults, unless a <default>
   * of the file sets them (bits of mjcf_composite_write.c's `optional`) */
  unsigned defaults_set;
} comp;

/* --- writing elements (mjcf_composite_write.c) --- */
/* which of the attributes written only when they differ from MuJoCo's defaults a <default>
 * class of the file gives, as bits (comp.defaults_set) */
unsigned comp__defaults_set(xmlDoc *doc);
/* a new element named name: the last child of parent, or (parent NULL or the composite's own
 * body) just before the composite */
xmlNode *comp__node(comp *k, xmlNode *parent, const char *name);
void comp__text(xmlNode *n, const char *attr, const char *value);
void comp__numbers(xmlNode *n, const char *attr, const double *v, int count);
/* a body named fmt... (name NULL: unnamed), at pos, with quat q (NULL: identity) */
xmlNode *comp__body(comp *k, xmlNode *parent, const char *name, const double pos[3],
                    const double *q);
/* the template geom as type ("sphere", "capsule" or "ellipsoid": -1 keeps the template's) */
xmlNode *comp__geom(comp *k, xmlNode *body, const char *name, int type, const double pos[3],
                    const double q[4], const double *size);
xmlNode *comp__site(comp *k, xmlNode *body, const char *name);
/* a joint of kind: "hinge" or "slide", at pos along axis */
xmlNode *comp__joint(comp *k, xmlNode *body, comp_kind kind, const char *name,
                     const char *type, const double pos[3], const double axis[3]);
/* a tendon of kind ("spatial" through two sites, or "fixed" to be filled) */
xmlNode *comp__tendon(comp *k, comp_kind kind, const char *type, const char *name);
/* <equality><tendon> or <joint> fixing one object, with kind's solreffix, solimpfix */
void comp__fix(comp *k, comp_kind kind, const char *what, const char *name);
/* an equality with the main class's activity and the smoothing solref, solimp: a <connect>
 * (name2 a body, anchor given) or a <joint> coupling two joints */
void comp__smooth(comp *k, const char *what, const char *name1, const char *name2,
                  const double *anchor);
void comp__exclude(comp *k, const char *body1, const char *body2);

/* --- the families (mjcf_composite_make.c): 0, or -1 with MuJoCo's error --- */
int comp__make(comp *k);

#endif
