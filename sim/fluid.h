/* sim/fluid.h: the medium's drag on bodies (sim/fluid.c; internal to sim/). */
#ifndef ACHILLES_SIM_FLUID_H
#define ACHILLES_SIM_FLUID_H

#include "sim/sim.h"

/* Each body's fluid_diam from its mass and principal moments (sim_constraint_setconst). */
void sim__fluid_setconst(sim_model *m);

/* With opt.viscosity > 0: Stokes' drag of every body with mass, into qfrc_passive. Needs the
 * velocities of sim_kinematics. */
void sim__fluid(const sim_model *m, sim_data *d);

/* passive.c: the generalized force of a wrench [f; τ] (world axes, f at the body's centre of
 * mass) on body b, added to qfrc_passive. */
void sim__body_wrench(const sim_model *m, sim_data *d, int b, const double wrench[6]);

#endif
