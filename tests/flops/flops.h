/* tests/flops/flops.h: floating-point operations of one forward-dynamics evaluation, counted.
 *
 * A test and benchmark library (achilles_flops), not part of the simulator: it holds copies of
 * the kinematics and ABA stages compiled with a scalar that counts its operations
 * (flop_real.hh), which run on a model and data made by the ordinary build. */
#ifndef ACHILLES_TESTS_FLOPS_FLOPS_H
#define ACHILLES_TESTS_FLOPS_FLOPS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sim_flops {
  long long kinematics;                /* + − × ÷ sqrt of sim_kinematics */
  long long kinematics_transcendental; /* its sin and cos (one pair per hinge) */
  long long aba;                       /* + − × ÷ sqrt of sim_aba (no implicit damping) */
} sim_flops;

struct sim_model;
struct sim_data;
/* Runs sim_kinematics then sim_aba on (m, d), counting; d ends as sim_forward of an
 * unconstrained model leaves it. */
void sim_flops_forward(const struct sim_model *m, struct sim_data *d, sim_flops *out);

#ifdef __cplusplus
}
#endif

#endif
