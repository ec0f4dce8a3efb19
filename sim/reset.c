/* sim/reset.c: the initial state of a simulation: a new data (data.c's arrays) or a reset one,
 * with every value derived from it computed (sim_forward). Above the pipeline, so that data.c,
 * which every stage includes, calls none of them. */
#include "sim/sim.h"

#include <string.h>

sim_data *sim_data_new(const sim_model *m) {
  sim_data *d = sim__data_alloc(m);
  if (d) {
    sim_data_reset(m, d);
  }
  return d;
}

/* Zeroes an array, unless it is one of the dense joint-space matrices (qM, qLD: nv² doubles
 * each, written whole before every read): a model of many dofs whose steps make no constraint
 * row then never touches their pages (10 000 dofs: 1.6 GB that stay unused). */
#define SIM_X_ZERO(name, rows, cols)                                                           \
  if (strcmp(#name, "qM") != 0 && strcmp(#name, "qLD") != 0) {                                 \
    memset(d->name, 0, (size_t)m->rows * (size_t)(cols) * sizeof *d->name);                    \
  }

void sim_data_reset(const sim_model *m, sim_data *d) {
  SIM_STATE_ARRAYS(SIM_X_ZERO)
  SIM_WORK_ARRAYS(SIM_X_ZERO)
  SIM_INT_ARRAYS(SIM_X_ZERO)
  memcpy(d->qpos, m->qpos0, (size_t)m->nq * sizeof(double));
  d->time = 0;
  d->nstep = 0;
  d->midpoint_residual = 0;
  d->nefc = d->nf = d->ne = 0;
  d->ncon = 0;
  d->nsweep = 0; /* geom_sweep was zeroed: the broad phase's order is rebuilt (else a reset
                    data swept geom 0 nsweep times and missed every pair of moving shapes) */
  memset(&d->solver, 0, sizeof d->solver);
  sim_forward(m, d);
}
