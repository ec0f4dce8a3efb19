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

/* names[k] of value k, or "unknown"; the index of a name, or -1 */
static const char *name_of(const char *const *names, int n, int k) {
  return k >= 0 && k < n ? names[k] : "unknown";
}

static int parse_name(const char *const *names, int n, const char *name) {
  for (int i = 0; i < n; i++) {
    if (strcmp(name, names[i]) == 0) {
      return i;
    }
  }
  return -1;
}

static const char *const integrator_names[] = {"euler", "verlet", "midpoint", "rk4"};
static const char *const solver_names[] = {"cg", "newton"};
static const char *const cone_names[] = {"pyramidal", "elliptic"};

const char *sim_integrator_name(sim_integrator integrator) {
  return name_of(integrator_names, 4, (int)integrator);
}

int sim_integrator_parse(const char *name) {
  return parse_name(integrator_names, 4, name);
}

const char *sim_solver_name(sim_solver_type solver) {
  return name_of(solver_names, 2, (int)solver);
}

int sim_solver_parse(const char *name) {
  return parse_name(solver_names, 2, name);
}

const char *sim_cone_name(sim_cone cone) {
  return name_of(cone_names, 2, (int)cone);
}

int sim_cone_parse(const char *name) {
  return parse_name(cone_names, 2, name);
}
