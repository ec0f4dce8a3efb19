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

void sim_data_reset(const sim_model *m, sim_data *d) {
  memset(d->buffer, 0, d->nbuffer);
  memcpy(d->qpos, m->qpos0, (size_t)m->nq * sizeof(double));
  d->time = 0;
  d->nstep = 0;
  d->midpoint_residual = 0;
  d->nefc = d->nf = 0;
  memset(&d->solver, 0, sizeof d->solver);
  sim_forward(m, d);
}
