/* tools/cli/sim_jacobians.h: `achilles sim --jacobians FILE`: the step Jacobians A, B (and P for
 * --params) at chosen times of the run, written as CSV or JSON (docs/derivatives.md, "From the
 * command line"). The run itself is unchanged: a step with Jacobians is sim_step's, bit for bit.
 *
 * Ownership: sim_jacobians_open allocates and opens the file; sim_jacobians_close(&j) finishes
 * it, frees everything and accepts NULL. */
#ifndef ACHILLES_TOOLS_SIM_JACOBIANS_H
#define ACHILLES_TOOLS_SIM_JACOBIANS_H

#include <stddef.h>

#include "sim/sim.h"

typedef struct sim_jacobians sim_jacobians;

/* For a run of `steps` steps of m: the file (JSON when its name ends in .json, else CSV; "-" is
 * standard output as CSV), the times (comma-separated seconds of simulation time, each taken at
 * the start of the step nearest to it; NULL: 0) and the parameters (sim_param_parse's list, NULL:
 * none). NULL with a message naming the option on failure: a time outside the run, an unknown
 * parameter, an integrator without derivatives, a file that cannot be opened. */
sim_jacobians *sim_jacobians_open(const sim_model *m, long long steps, const char *path,
                                  const char *times, const char *params, char *err,
                                  size_t err_sz);

/* Step s of the run (0-based) from the state in d: with its Jacobians, written, when s is one of
 * the chosen steps, else sim_step. Returns 0, or -1 with a message (the step has contacts, a
 * write error); the step is taken either way. */
int sim_jacobians_step(sim_jacobians *j, const sim_model *m, sim_data *d, long long s, char *err,
                       size_t err_sz);

/* Finishes and closes the file (returns -1 with a message on a write error) and frees j. */
int sim_jacobians_close(sim_jacobians **j, char *err, size_t err_sz);

#endif
