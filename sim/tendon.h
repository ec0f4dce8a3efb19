/* sim/tendon.h: the tendon stage's internals shared by its files (tendon.c, tendon_wrap.c,
 * tendon_load.c, muscle_range.c). The stage itself, sim_tendons, is declared in sim/sim.h. */
#ifndef ACHILLES_SIM_TENDON_H
#define ACHILLES_SIM_TENDON_H

#include "sim/sim.h"

/* The path between world points x0 and x1 around a sphere (cylinder 0) or a cylinder (its axis
 * the frame's z) of the given radius centred at xpos with orientation xmat, choosing its side by
 * the world point `side` (NULL: the shorter way). Returns the length of the part on the surface
 * and its two end points in wpnt (world), or -1 when the path is straight. MuJoCo 2.2.2's
 * mju_wrap. */
double sim__wrap(double wpnt[6], const double x0[3], const double x1[3], const double xpos[3],
                 const double xmat[9], double radius, int cylinder, const double *side);

/* The moment row of actuator a at the current state into out (nv): its tendon's Jacobian or the
 * unit vector of its joint's dof, times a muscle's gear; and its length (the tendon's or the
 * joint's, times a muscle's gear). Need sim_tendons. */
void sim__actuator_moment(const sim_model *m, const sim_data *d, int a, double *out);
double sim__actuator_length(const sim_actuator *a, const sim_data *d);

#endif
