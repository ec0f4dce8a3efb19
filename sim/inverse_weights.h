/* sim/inverse_weights.h: the loader's constants of the constraint rows' regularisation (internal
 * to sim/, called by sim_constraint_setconst once dof_parent is known). */
#ifndef ACHILLES_SIM_INVERSE_WEIGHTS_H
#define ACHILLES_SIM_INVERSE_WEIGHTS_H

#include "sim/model.h"

/* At MuJoCo's qpos0: each joint's invweight0 = (M⁻¹)ₖₖ of its (last) dof, each body's
 * invweight0 = the mean diagonal blocks (translation, rotation) of J·M⁻¹·Jᵀ for the Jacobian of
 * its centre of mass, and meaninertia = the mean of diag(M). 0, or -1 when out of memory. */
int sim__inverse_weights(sim_model *m);

/* A dof at which the joint-space inertia at the initial pose (m->qpos0) is singular, or -1
 * when it is positive definite. First a dof whose diagonal of M is not above 1e-16 of the largest
 * (rounding; *no_inertia = 1: it moves no inertia, as a joint carrying only bodies without
 * inertia about its motion); else the shallowest dof whose pivot of M = LᵀDL is not above 1e-13
 * of its diagonal (a few thousand roundings: its motion is that of the dofs below it, as two
 * hinges of one axis on one body), *partner then the dof below it whose motion is closest to its
 * own. -2 when out of memory. Needs dof_parent (sim_constraint_setconst). */
int sim__singular_dof(sim_model *m, int *no_inertia, int *partner);

struct sim_data;
/* d->qpos at MuJoCo's qpos0 (hinges and slides 0, a ball the identity, a free joint its
 * body's placement) and d->qvel 0: where MuJoCo computes its model constants. */
void sim__mujoco_qpos0(const sim_model *m, struct sim_data *d);

#endif
