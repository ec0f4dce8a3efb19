/* sim/constraint.h: the soft-constraint parameters of sim/constraint.c, for sim/deriv (internal
 * header; the rows themselves are described in sim.h and constraint.c).
 *
 * A row's reference acceleration and regularisation come from its solref and solimp after the
 * clamps MuJoCo applies before use (sanitize) and from the impedance imp(pos) of its violation.
 * The derivatives of the constraint stage recompute these exactly as the rows were made. */
#ifndef ACHILLES_SIM_CONSTRAINT_H
#define ACHILLES_SIM_CONSTRAINT_H

#include "sim/model.h"

/* ref and imp as a row uses them: a time constant below two steps raised to 2·timestep, the
 * impedance's dmin, dmax and midpoint clamped to [0.0001, 0.9999], width >= 0, power >= 1. */
void sim_constraint_sanitize(double ref[SIM_NREF], double imp[SIM_NIMP], const double *solref,
                             const double *solimp, double timestep);

/* imp(pos) of a sanitized solimp: dmin at 0 rising to dmax at |pos| >= width. */
double sim_constraint_impedance(const double solimp[SIM_NIMP], double pos);

/* A contact's friction μ and its solref and solimp as mixed from its two geoms (not yet
 * sanitized), as its rows use them. */
void sim_constraint_contact_params(double *mu, double ref[SIM_NREF], double imp[SIM_NIMP],
                                   const sim_geom *g1, const sim_geom *g2);

#endif
