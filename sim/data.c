/* sim/data.c: one allocation for all mutable arrays, laid out from SIM_STATE_ARRAYS and
 * SIM_WORK_ARRAYS. The initial state in it: reset.c. */
#include "sim/data.h"

#include <stdlib.h>
#include <string.h>

/* In the X-macro tables, `rows` names a model count and `cols` is an expression that may use m. */
#define SIM_X_SIZE(name, rows, cols) total += (size_t)m->rows * (size_t)(cols);
#define SIM_X_ASSIGN(name, rows, cols)                                                         \
  d->name = next;                                                                              \
  next += (size_t)m->rows * (size_t)(cols);

#define SIM_X_INT_ASSIGN(name, rows, cols)                                                     \
  d->name = next_int;                                                                          \
  next_int += (size_t)m->rows * (size_t)(cols);

sim_data *sim__data_alloc(const sim_model *m) {
  size_t total = 0;
  SIM_STATE_ARRAYS(SIM_X_SIZE)
  SIM_WORK_ARRAYS(SIM_X_SIZE)
  size_t ndouble = total;
  total = 0;
  SIM_INT_ARRAYS(SIM_X_SIZE)
  /* the integers, in whole doubles after the doubles (alignment holds) */
  total = ndouble + (total * sizeof(int) + sizeof(double) - 1) / sizeof(double);
  sim_data *d = calloc(1, sizeof *d);
  double *buffer = calloc(total ? total : 1, sizeof(double));
  if (!d || !buffer) {
    free(d);
    free(buffer);
    return NULL;
  }
  d->buffer = buffer;
  d->nbuffer = total * sizeof(double);
  double *next = buffer;
  SIM_STATE_ARRAYS(SIM_X_ASSIGN)
  SIM_WORK_ARRAYS(SIM_X_ASSIGN)
  int *next_int = (int *)(buffer + ndouble);
  SIM_INT_ARRAYS(SIM_X_INT_ASSIGN)
  return d;
}

void sim_data_free(sim_data *d) {
  if (!d) {
    return;
  }
  free(d->buffer);
  free(d);
}
