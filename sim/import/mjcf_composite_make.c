/* sim/import/mjcf_composite_make.c: the layouts of MuJoCo 2.2.2's composite families, with its
 * names, counts, positions and element order (src/user/user_composite.cc's MakeParticle,
 * MakeGrid, MakeRope, MakeCloth, MakeBox, MakeShear; see mjcf_composite.h):
 *  - particle: count[0]·count[1]·count[2] unnamed bodies at offset + spacing·(i − count/2),
 *    each with three slide joints (x, y, z) and a sphere;
 *  - grid (1D or 2D): bodies B<x>_<y> at the same places in z = offset[2], a sphere G, a site S
 *    and three slide joints J<axis>_<x>_<y> unless pinned; spatial tendons T<dir>_<x>_<y>
 *    between neighbouring sites, each held at its length by a tendon equality; shear tendons
 *    TS<x>_<y> along the diagonals;
 *  - rope and loop: a chain grown both ways from the body the composite stands in (named
 *    B<x>), each link B<x> with geom G<x> along its x and two hinges J0_<x>, J1_<x> at the
 *    joint to its parent (twist JT<x>, stretch JS<x> with joint equalities); a loop bends each
 *    link by 2π/count and closes with a connect and an exclude;
 *  - cloth: a tree of bodies B<x>_<y> grown from the root B<ox>_<oy> along its row and columns,
 *    universal joints to the parent, geoms turned alternately, optional flat inertia; spatial
 *    tendons along the rows off the root's, held by tendon equalities;
 *  - box, cylinder, ellipsoid: a sphere in the middle (twice the template's size) and a shell of
 *    bodies B<x>_<y>_<z> facing outwards, each on a slide joint J fixed by a joint equality and
 *    coupled to its neighbours, all in one fixed tendon T held at its length. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/import/mjcf_composite.h"

#define PI 3.14159265358979323846
#define NAME 160

static const double zero3[3] = {0, 0, 0}, unit_q[4] = {1, 0, 0, 0};

static int fail(comp *k, const char *message) {
  return imp__fail(k->c, k->el, "<composite>: %s (MuJoCo's error)", message);
}

static const double *axis_of(int i) {
  static const double axes[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  return axes[i];
}

/* --- particle and grid ----------------------------------------------------------------------- */

static void grid_pos(const comp *k, double pos[3], int ix, int iy, int iz) {
  pos[0] = k->offset[0] + k->spacing * (ix - 0.5 * k->count[0]);
  pos[1] = k->offset[1] + k->spacing * (iy - 0.5 * k->count[1]);
  pos[2] = k->offset[2] + k->spacing * (iz - 0.5 * k->count[2]);
}

static int make_particle(comp *k) {
  for (int ix = 0; ix < k->count[0]; ix++) {
    for (int iy = 0; iy < k->count[1]; iy++) {
      for (int iz = 0; iz < k->count[2]; iz++) {
        double pos[3];
        grid_pos(k, pos, ix, iy, iz);
        xmlNode *b = comp__body(k, NULL, NULL, pos, NULL);
        for (int i = 0; i < 3; i++) {
          comp__joint(k, b, KIND_JOINT, NULL, "slide", zero3, axis_of(i));
        }
        comp__geom(k, b, NULL, 0, zero3, unit_q, NULL);
      }
    }
  }
  return 0;
}

static int pinned(const comp *k, int ix, int iy) {
  for (int p = 0; p < k->npin; p++) {
    if (k->pin[2 * p] == ix && k->pin[2 * p + 1] == iy) {
      return 1;
    }
  }
  return 0;
}

/* a spatial tendon between two sites, held by a tendon equality */
static void site_tendon(comp *k, comp_kind kind, const char *name, const char *s1,
                        const char *s2) {
  xmlNode *t = comp__tendon(k, kind, "spatial", name);
  comp__text(comp__node(k, t, "site"), "site", s1);
  comp__text(comp__node(k, t, "site"), "site", s2);
  comp__fix(k, kind, "tendon", name);
}

static void make_shear(comp *k) {
  char name[NAME], s1[NAME], s2[NAME];
  for (int ix = 0; ix < k->count[0] - 1; ix++) {
    for (int iy = 0; iy < k->count[1] - 1; iy++) {
      snprintf(s1, sizeof s1, "%sS%d_%d", k->prefix, ix, iy);
      snprintf(s2, sizeof s2, "%sS%d_%d", k->prefix, ix + 1, iy + 1);
      snprintf(name, sizeof name, "%sTS%d_%d", k->prefix, ix, iy);
      site_tendon(k, KIND_SHEAR, name, s1, s2);
    }
  }
}

static int make_grid(comp *k) {
  char name[NAME], s1[NAME], s2[NAME];
  if (k->dim > 2) {
    return fail(k, "Grid can only be 1D or 2D");
  }
  if (k->add[KIND_SHEAR] && k->dim != 2) {
    return fail(k, "Shear requires 2D grid");
  }
  if (k->skin && k->dim != 2) {
    return fail(k, "Skin requires 2D grid");
  }
  for (int ix = 0; ix < k->count[0]; ix++) {
    for (int iy = 0; iy < k->count[1]; iy++) {
      double pos[3];
      grid_pos(k, pos, ix, iy, 0);
      pos[2] = k->offset[2];
      snprintf(name, sizeof name, "%sB%d_%d", k->prefix, ix, iy);
      xmlNode *b = comp__body(k, NULL, name, pos, NULL);
      snprintf(name, sizeof name, "%sG%d_%d", k->prefix, ix, iy);
      comp__geom(k, b, name, 0, zero3, unit_q, NULL);
      snprintf(name, sizeof name, "%sS%d_%d", k->prefix, ix, iy);
      comp__site(k, b, name);
      for (int i = 0; i < 3 && !pinned(k, ix, iy); i++) {
        snprintf(name, sizeof name, "%sJ%d_%d_%d", k->prefix, i, ix, iy);
        comp__joint(k, b, KIND_JOINT, name, "slide", zero3, axis_of(i));
      }
    }
  }
  for (int i = 0; i < 2; i++) {
    for (int ix = 0; ix < k->count[0] - (i == 0); ix++) {
      for (int iy = 0; iy < k->count[1] - (i == 1); iy++) {
        snprintf(s1, sizeof s1, "%sS%d_%d", k->prefix, ix, iy);
        snprintf(s2, sizeof s2, "%sS%d_%d", k->prefix, ix + (i == 0), iy + (i == 1));
        snprintf(name, sizeof name, "%sT%d_%d_%d", k->prefix, i, ix, iy);
        site_tendon(k, KIND_TENDON, name, s1, s2);
      }
    }
  }
  if (k->add[KIND_SHEAR]) {
    make_shear(k);
  }
  return 0;
}

/* --- rope and loop --------------------------------------------------------------------------- */

/* the root body's name must be the prefix, "B" and its coordinates (x, or x_y for a cloth) */
static int root_coords(comp *k, int *ox, int *oy) {
  char head[NAME];
  snprintf(head, sizeof head, "%sB", k->prefix);
  const size_t n = strlen(head);
  if (strncmp(head, k->parent_name, n) != 0) {
    char message[NAME + 64];
    snprintf(message, sizeof message, "%s must be the beginning of root body name", head);
    return fail(k, message);
  }
  /* MuJoCo reads them with sscanf "%d" ("%d%c%d" with '_'): an integer, then anything */
  const char *rest = k->parent_name + n;
  char *end;
  const long x = strtol(rest, &end, 10);
  if (!oy) {
    if (end == rest) {
      return fail(k, "Root body name must contain X coordinate");
    }
    if (x < 0 || x >= k->count[0]) {
      return fail(k, "Root body coordinate out of range");
    }
    *ox = (int)x;
    return 0;
  }
  if (end == rest || *end != '_') {
    return fail(k, "Root body name must contain X_Y coordinates");
  }
  const char *second = end + 1;
  const long y = strtol(second, &end, 10);
  if (end == second) {
    return fail(k, "Root body name must contain X_Y coordinates");
  }
  if (x < 0 || x >= k->count[0] || y < 0 || y >= k->count[1]) {
    return fail(k, "Root body coordinates out of range");
  }
  *ox = (int)x, *oy = (int)y;
  return 0;
}

/* a twist (hinge) or stretch (slide) joint along axis at pos, fixed by a joint equality */
static void extra_joint(comp *k, xmlNode *b, comp_kind kind, const char *name,
                        const double pos[3], const double axis[3]) {
  comp__joint(k, b, kind, name, kind == KIND_TWIST ? "hinge" : "slide", pos, axis);
  comp__fix(k, kind, "joint", name);
}

/* MuJoCo's AddRopeBody: the link ix1 under `body` (the root itself when ix == ix1) */
static xmlNode *rope_body(comp *k, xmlNode *body, int ix, int ix1) {
  char name[NAME];
  const int root = ix == ix1;
  const double dx = k->spacing * (ix1 - ix);
  if (!root) {
    double pos[3] = {dx, 0, 0}, q[4];
    const double *quat = NULL;
    if (k->type == COMP_LOOP) {
      const double alpha = 2 * PI / k->count[0];
      const double R = 0.5 * k->spacing * sin(PI - alpha) / sin(0.5 * alpha);
      const double s = ix1 > ix ? 1 : -1;
      pos[0] = s * R * cos(0.5 * alpha), pos[1] = R * sin(0.5 * alpha);
      q[0] = cos(s * 0.5 * alpha), q[1] = q[2] = 0, q[3] = sin(s * 0.5 * alpha);
      quat = q;
    }
    snprintf(name, sizeof name, "%sB%d", k->prefix, ix1);
    body = comp__body(k, body, name, pos, quat);
  }
  const double along_x[4] = {sqrt(0.5), 0, sqrt(0.5), 0};
  snprintf(name, sizeof name, "%sG%d", k->prefix, ix1);
  comp__geom(k, body, name, -1, zero3, along_x, NULL);
  if (root) {
    return body;
  }
  const double at[3] = {-0.5 * dx, 0, 0};
  for (int i = 0; i < 2; i++) {
    snprintf(name, sizeof name, "%sJ%d_%d", k->prefix, i, ix1);
    comp__joint(k, body, KIND_JOINT, name, "hinge", at, axis_of(i + 1));
  }
  if (k->add[KIND_TWIST]) {
    snprintf(name, sizeof name, "%sJT%d", k->prefix, ix1);
    extra_joint(k, body, KIND_TWIST, name, at, axis_of(0));
  }
  if (k->add[KIND_STRETCH]) {
    snprintf(name, sizeof name, "%sJS%d", k->prefix, ix1);
    extra_joint(k, body, KIND_STRETCH, name, at, axis_of(0));
  }
  return body;
}

static int make_rope(comp *k) {
  int ox = -1;
  if (k->dim != 1) {
    return fail(k, "Rope must be one-dimensional");
  }
  if (root_coords(k, &ox, NULL) != 0) {
    return -1;
  }
  /* the root's geom in place of the composite; the links under the root, after its children */
  rope_body(k, NULL, ox, ox);
  xmlNode *b = k->parent;
  for (int ix = ox; ix < k->count[0] - 1; ix++) {
    b = rope_body(k, b, ix, ix + 1);
  }
  b = k->parent;
  for (int ix = ox; ix > 0; ix--) {
    b = rope_body(k, b, ix, ix - 1);
  }
  if (k->type == COMP_LOOP) {
    char b0[NAME], b1[NAME];
    snprintf(b0, sizeof b0, "%sB0", k->prefix);
    snprintf(b1, sizeof b1, "%sB%d", k->prefix, k->count[0] - 1);
    const double anchor[3] = {-0.5 * k->spacing, 0, 0};
    comp__smooth(k, "connect", b0, b1, anchor);
    comp__exclude(k, b0, b1);
  }
  return 0;
}

/* --- cloth ----------------------------------------------------------------------------------- */

/* the body's mass as MuJoCo's GetVolume and the template's mass or density give it */
static double geom_mass(const comp *k) {
  const comp_geom *g = &k->geom;
  if (g->has_mass) {
    return g->mass;
  }
  const double *s = g->size;
  double volume = 0;
  if (g->type == 0) {
    volume = 4 * PI * s[0] * s[0] * s[0] / 3;
  } else if (g->type == 1) {
    volume = PI * (s[0] * s[0] * (2 * s[1]) + 4 * s[0] * s[0] * s[0] / 3);
  } else if (g->type == 2) {
    volume = 4 * PI * s[0] * s[1] * s[2] / 3;
  }
  return g->density * volume;
}

/* flatinertia: an explicit inertial of the geom's mass, shaped as a thin box */
static void flat_inertial(comp *k, xmlNode *body) {
  const double mass = geom_mass(k);
  const double size[3] = {0.5 * k->spacing, 0.5 * k->spacing,
                          0.5 * k->spacing * k->flatinertia};
  const double I[3] = {mass * (size[1] * size[1] + size[2] * size[2]) / 3,
                       mass * (size[0] * size[0] + size[2] * size[2]) / 3,
                       mass * (size[0] * size[0] + size[1] * size[1]) / 3};
  xmlNode *n = comp__node(k, body, "inertial");
  comp__numbers(n, "pos", zero3, 3);
  comp__numbers(n, "mass", &mass, 1);
  comp__numbers(n, "diaginertia", I, 3);
}

/* MuJoCo's AddClothBody: body (ix1, iy1) under `body`, its parent (ix, iy) (the root itself
 * when they are equal) */
static xmlNode *cloth_body(comp *k, xmlNode *body, int ix, int iy, int ix1, int iy1) {
  char name[NAME];
  const int root = ix == ix1 && iy == iy1;
  const double dx = k->spacing * (ix1 - ix), dy = k->spacing * (iy1 - iy);
  if (!root) {
    const double pos[3] = {dx, dy, 0};
    snprintf(name, sizeof name, "%sB%d_%d", k->prefix, ix1, iy1);
    body = comp__body(k, body, name, pos, NULL);
  }
  const double turn_x[4] = {sqrt(0.5), sqrt(0.5), 0, 0}, diag[4] = {0.5, 0.5, 0.5, 0.5};
  snprintf(name, sizeof name, "%sG%d_%d", k->prefix, ix1, iy1);
  comp__geom(k, body, name, -1, zero3, (ix1 + iy1) % 2 ? turn_x : diag, NULL);
  if (k->flatinertia > 0) {
    flat_inertial(k, body);
  }
  snprintf(name, sizeof name, "%sS%d_%d", k->prefix, ix1, iy1);
  comp__site(k, body, name);
  if (root) {
    return body;
  }
  const double at[3] = {-dx, -dy, 0};
  const int along_x = ix != ix1;
  for (int i = 0; i < 2; i++) { /* universal: the two axes across the direction to the parent */
    snprintf(name, sizeof name, "%sJ%d_%d_%d", k->prefix, i, ix1, iy1);
    comp__joint(k, body, KIND_JOINT, name, "hinge", at, axis_of(along_x ? i + 1 : 2 * i));
  }
  if (k->add[KIND_TWIST]) {
    snprintf(name, sizeof name, "%sJT%d_%d", k->prefix, ix1, iy1);
    extra_joint(k, body, KIND_TWIST, name, at, axis_of(along_x ? 0 : 1));
  }
  if (k->add[KIND_STRETCH]) {
    snprintf(name, sizeof name, "%sJS%d_%d", k->prefix, ix1, iy1);
    extra_joint(k, body, KIND_STRETCH, name, at, axis_of(along_x ? 0 : 1));
  }
  return body;
}

/* the columns up and down from row body (ix, oy) */
static void cloth_columns(comp *k, xmlNode *row, int ix, int oy) {
  for (int up = 1; up >= 0; up--) {
    xmlNode *b = row;
    for (int iy = oy;;) {
      const int iy1 = up ? (iy + 1 < k->count[1] - 1 ? iy + 1 : k->count[1] - 1)
                         : (iy - 1 > 0 ? iy - 1 : 0);
      if (iy1 == iy) {
        break;
      }
      b = cloth_body(k, b, ix, iy, ix, iy1);
      iy = iy1;
    }
  }
}

static int make_cloth(comp *k) {
  char name[NAME], s1[NAME], s2[NAME];
  int ox = -1, oy = -1;
  if (k->dim != 2) {
    return fail(k, "Cloth must be two-dimensional");
  }
  if (root_coords(k, &ox, &oy) != 0) {
    return -1;
  }
  cloth_body(k, NULL, ox, oy, ox, oy);
  /* the root's column, then the row rightwards and leftwards, each body with its column */
  cloth_columns(k, k->parent, ox, oy);
  for (int step = 1; step >= -1; step -= 2) {
    xmlNode *b = k->parent;
    for (int ix = ox;;) {
      const int ix1 = step > 0 ? (ix + 1 < k->count[0] - 1 ? ix + 1 : k->count[0] - 1)
                               : (ix - 1 > 0 ? ix - 1 : 0);
      if (ix1 == ix) {
        break;
      }
      b = cloth_body(k, b, ix, oy, ix1, oy);
      ix = ix1;
      cloth_columns(k, b, ix, oy);
    }
  }
  for (int iy = 0; iy < k->count[1]; iy++) {
    for (int ix = 0; iy != oy && ix < k->count[0] - 1; ix++) {
      snprintf(s1, sizeof s1, "%sS%d_%d", k->prefix, ix, iy);
      snprintf(s2, sizeof s2, "%sS%d_%d", k->prefix, ix + 1, iy);
      snprintf(name, sizeof name, "%sT%d_%d", k->prefix, ix, iy);
      site_tendon(k, KIND_TENDON, name, s1, s2);
    }
  }
  if (k->add[KIND_SHEAR]) {
    make_shear(k);
  }
  return 0;
}

/* --- box, cylinder, ellipsoid ---------------------------------------------------------------- */

static void normalize(double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    s += v[i] * v[i];
  }
  if (s < 1e-14) { /* MuJoCo's mjuu_normvec leaves a (near) zero vector */
    return;
  }
  s = sqrt(s);
  for (int i = 0; i < n; i++) {
    v[i] /= s;
  }
}

/* MuJoCo's BoxProject: a point of the cube [-1, 1]³ onto the shape */
static void box_project(const comp *k, double pos[3]) {
  double size[3];
  for (int i = 0; i < 3; i++) {
    size[i] = 0.5 * k->spacing * (k->count[i] - 1);
  }
  if (k->type == COMP_CYLINDER) {
    const double L0 = fmax(fabs(pos[0]), fabs(pos[1]));
    normalize(pos, 2);
    pos[0] *= size[0] * L0;
    pos[1] *= size[1] * L0;
    pos[2] *= size[2];
    return;
  }
  if (k->type == COMP_ELLIPSOID) {
    normalize(pos, 3);
  }
  for (int i = 0; i < 3; i++) {
    pos[i] *= size[i];
  }
}

static int on_shell(const comp *k, int ix, int iy, int iz) {
  return ix == 0 || ix == k->count[0] - 1 || iy == 0 || iy == k->count[1] - 1 || iz == 0 ||
         iz == k->count[2] - 1;
}

static void box_element(comp *k, xmlNode *tendon, int ix, int iy, int iz) {
  char name[NAME], joint[NAME];
  const int at[3] = {ix, iy, iz};
  double pos[3], z[3];
  for (int i = 0; i < 3; i++) {
    pos[i] = 2.0 * at[i] / (k->count[i] - 1) - 1;
  }
  box_project(k, pos);
  memcpy(z, pos, sizeof z);
  normalize(z, 3);
  snprintf(name, sizeof name, "%sB%d_%d_%d", k->prefix, ix, iy, iz);
  xmlNode *b = comp__body(k, NULL, name, pos, NULL);
  comp__numbers(b, "zaxis", z, 3); /* facing outwards */
  /* offset inwards: a capsule by its length, anything else as a sphere */
  const int capsule = k->geom.type == 1;
  const double in[3] = {0, 0, -(capsule ? k->geom.size[0] + k->geom.size[1] : k->geom.size[0])};
  snprintf(name, sizeof name, "%sG%d_%d_%d", k->prefix, ix, iy, iz);
  comp__geom(k, b, name, capsule ? 1 : 0, in, unit_q, NULL);
  snprintf(joint, sizeof joint, "%sJ%d_%d_%d", k->prefix, ix, iy, iz);
  comp__joint(k, b, KIND_JOINT, joint, "slide", zero3, axis_of(2));
  comp__fix(k, KIND_JOINT, "joint", joint);
  xmlNode *j = comp__node(k, tendon, "joint");
  comp__text(j, "joint", joint);
  comp__text(j, "coef", "1");
  for (int i = 0; i < 3; i++) { /* couplings to the next neighbours on the shell */
    int n[3] = {ix, iy, iz};
    n[i] = n[i] + 1 < k->count[i] - 1 ? n[i] + 1 : k->count[i] - 1;
    if (on_shell(k, n[0], n[1], n[2]) && n[i] != at[i]) {
      snprintf(name, sizeof name, "%sJ%d_%d_%d", k->prefix, n[0], n[1], n[2]);
      comp__smooth(k, "joint", joint, name, NULL);
    }
  }
}

static int make_box(comp *k) {
  char name[NAME];
  if (k->dim != 3) {
    return fail(k, "Box and ellipsoid must be three-dimensional");
  }
  const double center[3] = {2 * k->geom.size[0], 0, 0};
  snprintf(name, sizeof name, "%sGcenter", k->prefix);
  comp__geom(k, NULL, name, 0, zero3, unit_q, center);
  snprintf(name, sizeof name, "%sT", k->prefix);
  xmlNode *tendon = comp__tendon(k, KIND_TENDON, "fixed", name);
  for (int ix = 0; ix < k->count[0]; ix++) {
    for (int iy = 0; iy < k->count[1]; iy++) {
      for (int iz = 0; iz < k->count[2]; iz++) {
        if (on_shell(k, ix, iy, iz)) {
          box_element(k, tendon, ix, iy, iz);
        }
      }
    }
  }
  comp__fix(k, KIND_TENDON, "tendon", name);
  return 0;
}

/* --- MuJoCo's Make: the checks every family shares, then the family ------------------------- */

int comp__make(comp *k) {
  if (k->geom.type < 0) {
    return fail(k, "Composite geom type must be sphere, capsule or ellipsoid");
  }
  for (int i = 0; i < 3; i++) {
    if (k->count[i] < 1) {
      return fail(k, "Positive counts expected in composite");
    }
  }
  if (k->spacing < 1e-15) {
    return fail(k, "Positive spacing expected in composite");
  }
  /* beyond MuJoCo's checks: a bound on what one composite makes (MuJoCo would try) */
  if ((double)k->count[0] * k->count[1] * k->count[2] > 1000000) {
    return imp__fail(k->c, k->el, "<composite count>: more than 1000000 elements");
  }
  int singleton = 0;
  for (int i = 0; i < 3; i++) {
    if (k->count[i] == 1) {
      singleton = 1;
    } else {
      k->dim++;
      if (singleton) {
        return fail(k, "Singleton counts must come last");
      }
    }
  }
  if (k->skin && k->skin_subgrid > 0 && (k->count[0] < 3 || k->count[1] < 3)) {
    return fail(k, "At least 3x3 required for skin subgrid");
  }
  switch (k->type) {
  case COMP_PARTICLE:
    return make_particle(k);
  case COMP_GRID:
    return make_grid(k);
  case COMP_ROPE:
  case COMP_LOOP:
    return make_rope(k);
  case COMP_CLOTH:
    return make_cloth(k);
  default:
    return make_box(k);
  }
}
