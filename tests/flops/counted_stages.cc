/* tests/flops/counted_stages.cc: the stages whose cost the benchmark reports, compiled with the
 * counting scalar (flop_real.hh). Their functions get C++ names, so they sit beside the real C
 * ones; sim_flops_forward below is the one entry point, with C linkage. */
#include "tests/flops/flop_real.hh"

#include "sim/kinematics.c"
#include "sim/aba.c"
#include "sim/spatial.c"
#include "sim/rnea.c"
#include "sim/model.c" /* small helpers of the joint types, called by the stages */

#include "tests/flops/flops.h"

long long sim_flop_count, sim_flop_transcendental;

extern "C" void sim_flops_forward(const sim_model *m, sim_data *d, sim_flops *out) {
  sim_flop_count = sim_flop_transcendental = 0;
  sim_kinematics(m, d);
  out->kinematics = sim_flop_count;
  out->kinematics_transcendental = sim_flop_transcendental;
  sim_flop_count = sim_flop_transcendental = 0;
  sim_aba(m, d, 0.0);
  out->aba = sim_flop_count;
}
