/* sim/forward.c: the forward dynamics pipeline at the current state. */
#include "sim/sim.h"

#include <string.h>

void sim_forward_dynamics(const sim_model *m, sim_data *d, double implicit_h) {
  sim_kinematics(m, d);
  sim_tendons(m, d);
  sim_collide(m, d);
  sim_passive(m, d);
  sim_actuate(m, d);
  sim_constraint_make(m, d);
  if (d->nefc == 0) { /* unconstrained: one ABA pass, as before constraints existed */
    if (d->solver.nefc > 0) { /* the last evaluation had rows: clear what they left */
      memset(d->qfrc_constraint, 0, (size_t)m->nv * sizeof(double));
      memset(&d->solver, 0, sizeof d->solver);
    }
    sim_aba(m, d, implicit_h);
    if (m->nefc_max > 0) {
      memcpy(d->qacc_warmstart, d->qacc, (size_t)m->nv * sizeof(double));
    }
    return;
  }
  memset(d->qfrc_constraint, 0, (size_t)m->nv * sizeof(double));
  /* a0 by ABA, then the constraint solve with the tree-sparse M */
  sim_aba(m, d, 0.0);
  memcpy(d->qacc_smooth, d->qacc, (size_t)m->nv * sizeof(double));
  sim_crba(m, d);
  sim_factor_m(m, d);
  sim_solve_constraints(m, d);
  if (implicit_h > 0) { /* (M + h·B)·qacc = f + qfrc_constraint, as MuJoCo's Euler */
    sim_aba(m, d, implicit_h);
  } else {
    sim_body_accelerations(m, d);
  }
}

void sim_forward(const sim_model *m, sim_data *d) {
  sim_forward_dynamics(m, d, 0.0);
}
