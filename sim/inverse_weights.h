/* sim/inverse_weights.h: the loader's constants of the constraint rows' regularisation (internal
 * to sim/, called by sim_constraint_setconst once dof_parent is known). */
#ifndef ACHILLES_SIM_INVERSE_WEIGHTS_H
#define ACHILLES_SIM_INVERSE_WEIGHTS_H

#include "sim/model.h"

/* At MuJoCo's qpos0: each joint's invweight0 = (M⁻¹)ₖₖ of its (last) dof, each body's
 * invweight0 = the mean diagonal blocks (translation, rotation) of J·M⁻¹·Jᵀ for the Jacobian of
 * its centre of mass, and meaninertia = the mean of diag(M). 0, or -1 when out of memory. */
int sim__inverse_weights(sim_model *m);

#endif
