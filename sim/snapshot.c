/* sim/snapshot.c: save and restore the state, for deterministic resets. */
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

struct sim_snapshot {
  double time;
  long long nstep;
#define SIM_X_FIELD(name, rows, cols) double *name;
  SIM_STATE_ARRAYS(SIM_X_FIELD)
#undef SIM_X_FIELD
  double storage[]; /* all state arrays, laid out as in SIM_STATE_ARRAYS */
};

sim_snapshot *sim_snapshot_new(const sim_model *m) {
  size_t total = 0;
#define SIM_X_SIZE(name, rows, cols) total += (size_t)m->rows * (size_t)(cols);
  SIM_STATE_ARRAYS(SIM_X_SIZE)
#undef SIM_X_SIZE
  sim_snapshot *s = calloc(1, sizeof *s + total * sizeof(double));
  if (!s) {
    return NULL;
  }
  double *next = s->storage;
#define SIM_X_ASSIGN(name, rows, cols)                                                         \
  s->name = next;                                                                              \
  next += (size_t)m->rows * (size_t)(cols);
  SIM_STATE_ARRAYS(SIM_X_ASSIGN)
#undef SIM_X_ASSIGN
  return s;
}

void sim_snapshot_free(sim_snapshot *s) {
  free(s);
}

void sim_snapshot_save(const sim_model *m, const sim_data *d, sim_snapshot *s) {
  s->time = d->time;
  s->nstep = d->nstep;
#define SIM_X_COPY(name, rows, cols)                                                           \
  memcpy(s->name, d->name, (size_t)m->rows * (size_t)(cols) * sizeof(double));
  SIM_STATE_ARRAYS(SIM_X_COPY)
#undef SIM_X_COPY
}

void sim_snapshot_restore(const sim_model *m, sim_data *d, const sim_snapshot *s) {
  d->time = s->time;
  d->nstep = s->nstep;
#define SIM_X_COPY(name, rows, cols)                                                           \
  memcpy(d->name, s->name, (size_t)m->rows * (size_t)(cols) * sizeof(double));
  SIM_STATE_ARRAYS(SIM_X_COPY)
  sim_forward(m, d);
  /* sim_forward stores its solution as the next warm start: put the saved one back, so
   * that stepping on repeats the original run bit for bit */
  SIM_X_COPY(qacc_warmstart, nv, 1)
#undef SIM_X_COPY
}
