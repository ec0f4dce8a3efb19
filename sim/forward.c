/* sim/forward.c: the forward dynamics pipeline at the current state. */
#include "sim/sim.h"

void sim_forward(const sim_model *m, sim_data *d) {
  sim_kinematics(m, d);
  sim_passive(m, d);
  sim_actuate(m, d);
  sim_aba(m, d, 0.0);
}
