/* sim/import/mass.h: mass properties of primitive shapes and of several combined, for bodies
 * whose file gives geometry but no inertial (MJCF's inertiafromgeom). Formulas as MuJoCo's
 * compiler uses them (solid bodies of uniform density; a capsule is a cylinder plus two
 * hemispheres), so an imported model carries the masses MuJoCo would give it. Internal. */
#ifndef ACHILLES_SIM_IMPORT_MASS_H
#define ACHILLES_SIM_IMPORT_MASS_H

typedef enum imp_shape {
  IMP_SHAPE_SPHERE,    /* size: radius */
  IMP_SHAPE_CAPSULE,   /* radius, half-length of the cylinder part (along z) */
  IMP_SHAPE_CYLINDER,  /* radius, half-length (along z) */
  IMP_SHAPE_ELLIPSOID, /* three semi-axes */
  IMP_SHAPE_BOX,       /* three half-sizes */
} imp_shape;

/* A body's mass properties in its frame: mass, centre of mass, inertia about the centre of
 * mass (symmetric 3×3, row-major). */
#define IMP_MASS_PARTS_MAX 64

typedef struct imp_mass {
  double mass;
  double com[3];
  double inertia[9];
  /* the parts, kept until finish so that the parallel-axis terms are taken about the common
   * centre of mass (as MuJoCo does) rather than the body origin, which would cancel digits */
  int nparts;
  double part_mass[IMP_MASS_PARTS_MAX], part_pos[IMP_MASS_PARTS_MAX][3];
  double part_inertia[IMP_MASS_PARTS_MAX][9];
} imp_mass;

double imp__shape_volume(imp_shape type, const double size[3]);
/* Principal moments about the shape's centre, in its own axes, for the given mass. */
void imp__shape_inertia(double diag[3], imp_shape type, const double size[3], double mass);

/* Starts an empty sum; adds a part of mass m centred at pos, principal moments diag along the
 * axes of the rotation R (row-major); finishes with the total about the common centre. */
void imp__mass_clear(imp_mass *sum);
void imp__mass_add(imp_mass *sum, double m, const double pos[3], const double R[9],
                   const double diag[3]);
/* ... or with its full inertia I about pos (symmetric 3×3, row-major, the body's axes) */
void imp__mass_add_full(imp_mass *sum, double m, const double pos[3], const double I[9]);
/* 0; -1 when the total mass is not positive or there are more than IMP_MASS_PARTS_MAX parts. */
int imp__mass_finish(imp_mass *sum);

#endif
