/* tools/bench/bench_deriv_adolc.h: the autodiff baseline of tools/bench/bench_deriv.c: the gradient of a
 * rollout's loss by ADOL-C (Debian's libadolc-dev, taping reverse mode) applied to the
 * simulator's own stage code, compiled as C++ with `double` defined as ADOL-C's `adouble`
 * (bench_deriv_adolc.cc, the trick of tests/flops). Never part of the simulator.
 *
 * The rollout and loss are those of sim_rollout_gradient with sim_loss_tracking on positions
 * and commands (wv = 0): L = Σₜ wq·|qₜ − refₜ|² + wu·|uₜ|² + wT·|q_T − ref_T|², for models of
 * hinges and slides without constraint rows (no limits reached, no friction, no contacts). */
#ifndef ACHILLES_TOOLS_BENCH_DERIV_ADOLC_H
#define ACHILLES_TOOLS_BENCH_DERIV_ADOLC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sim_model;
struct sim_data;
struct sim_param;

typedef struct adolc_result {
  double loss;
  double tape_seconds;     /* the taped forward run */
  double gradient_seconds; /* gradient(): a forward and a reverse sweep of the tape */
  size_t operations, locations, values; /* the tape's statistics (tapestats) */
  size_t tape_bytes;       /* operations (1 byte), locations (4 bytes) and values (8 bytes) */
} adolc_result;

/* The gradient of the loss over T steps from d0's state with commands ctrl[t·nu ...], with
 * respect to (q₀, q̇₀), every command and the parameters listed (body mass, joint damping and
 * armature only), into grad (2·nv + T·nu + np, the order of sim_rollout_gradient's outputs).
 * Returns 0, or -1 with a message on stderr (a parameter family or model it does not take). */
int adolc_rollout_gradient(const struct sim_model *m, const struct sim_data *d0, int T,
                           const double *ctrl, const double *qref, double wq, double wu,
                           double wT, const struct sim_param *params, int np, double *grad,
                           adolc_result *out);

#ifdef __cplusplus
}
#endif

#endif
