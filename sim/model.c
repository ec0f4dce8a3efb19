/* sim/model.c: the joint types' coordinates and the integrators' names (the stages' small
 * helpers; tests/flops and tools/bench_deriv_adolc compile this file again in C++). Lookups by
 * name and release: model_names.c; loading: model_load.c. */
#include "sim/model.h"

#include <string.h>

int sim_joint_nq(sim_joint_type type) {
  static const int nq[] = {0, 1, 1, 4, 7};
  return (int)type >= 0 && (int)type <= SIM_JOINT_FREE ? nq[type] : 0;
}

int sim_joint_nv(sim_joint_type type) {
  static const int nv[] = {0, 1, 1, 3, 6};
  return (int)type >= 0 && (int)type <= SIM_JOINT_FREE ? nv[type] : 0;
}

static const char *const integrator_names[] = {"euler", "verlet", "midpoint", "rk4"};

const char *sim_integrator_name(sim_integrator integrator) {
  if ((int)integrator < 0 || (int)integrator > SIM_INTEGRATOR_RK4) {
    return "unknown";
  }
  return integrator_names[integrator];
}

int sim_integrator_parse(const char *name) {
  for (int i = 0; i <= SIM_INTEGRATOR_RK4; i++) {
    if (strcmp(name, integrator_names[i]) == 0) {
      return i;
    }
  }
  return -1;
}
