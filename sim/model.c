/* sim/model.c: model lookups and release. Loading lives in model_load.c. */
#include "sim/model.h"

#include <stdlib.h>
#include <string.h>

void sim_model_free(sim_model *m) {
  if (!m) {
    return;
  }
  free(m->bodies);
  free(m->joints);
  free(m->sites);
  free(m->actuators);
  free(m->geoms);
  free(m->hull_vert);
  free(m->hull_graph);
  free(m->exclude);
  free(m->dof_joint);
  free(m->dof_body);
  free(m->qpos0);
  free(m->dof_parent);
  free(m);
}

int sim_model_body(const sim_model *m, const char *name) {
  for (int i = 0; i < m->nbody; i++) {
    if (strcmp(m->bodies[i].name, name) == 0) {
      return i;
    }
  }
  return -1;
}

int sim_model_joint(const sim_model *m, const char *name) {
  for (int i = 0; i < m->njnt; i++) {
    if (strcmp(m->joints[i].name, name) == 0) {
      return i;
    }
  }
  return -1;
}

int sim_model_site(const sim_model *m, const char *name) {
  for (int i = 0; i < m->nsite; i++) {
    if (strcmp(m->sites[i].name, name) == 0) {
      return i;
    }
  }
  return -1;
}

int sim_model_actuator(const sim_model *m, const char *name) {
  for (int i = 0; i < m->nu; i++) {
    if (strcmp(m->actuators[i].name, name) == 0) {
      return i;
    }
  }
  return -1;
}

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
