/* sim/constraint.h: the soft-constraint parameters of sim/constraint.c, for sim/deriv (internal
 * header; the rows themselves are described in sim.h and constraint.c).
 *
 * A row's reference acceleration and regularisation come from its solref and solimp after the
 * clamps MuJoCo applies before use (sanitize) and from the impedance imp(pos) of its violation.
 * The derivatives of the constraint stage recompute these exactly as the rows were made. */
#ifndef ACHILLES_SIM_CONSTRAINT_H
#define ACHILLES_SIM_CONSTRAINT_H

#include "sim/data.h"
#include "sim/model.h"

/* ref and imp as a row uses them: a time constant below two steps raised to 2·timestep, the
 * impedance's dmin, dmax and midpoint clamped to [0.0001, 0.9999], width >= 0, power >= 1. */
void sim_constraint_sanitize(double ref[SIM_NREF], double imp[SIM_NIMP], const double *solref,
                             const double *solimp, double timestep);

/* imp(pos) of a sanitized solimp: dmin at 0 rising to dmax at |pos| >= width. */
double sim_constraint_impedance(const double solimp[SIM_NIMP], double pos);

/* The spring k and damper b of a sanitized solref and its impedance's dmax (MuJoCo's K and B). */
void sim_constraint_spring_damper(double *k, double *b, const double ref[SIM_NREF], double dmax);

/* The dofs that move body b1 or b2 (their chains to the world), ascending, into dofs; their
 * count. */
int sim__constraint_chain_dofs(const sim_model *m, int b1, int b2, int *dofs);

/* --- equality constraints (sim/constraint_equality.c) --- */

/* The most rows the model's equality constraints make: 3 per connect, 6 per weld, 1 per joint
 * coupling (active or not: `active` may change between steps). */
int sim__equality_rows_max(const sim_model *m);
/* Completes each equality's data at MuJoCo's qpos0 as mj_setConst does: a connect's point in
 * body2's frame, a weld's point in body1's frame and its relative orientation when not given.
 * Returns 0, or -1 when out of memory. */
int sim__equality_setconst(sim_model *m);
/* The rows of the active equality constraints at the current state, from row 0 (d->ne). */
void sim__equality_make(const sim_model *m, sim_data *d);

/* A contact's friction μ and its solref and solimp as mixed from its two geoms (not yet
 * sanitized), as its rows use them. */
void sim_constraint_contact_params(double *mu, double ref[SIM_NREF], double imp[SIM_NIMP],
                                   const sim_geom *g1, const sim_geom *g2);

#endif
