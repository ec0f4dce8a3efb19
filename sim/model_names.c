/* sim/model_names.c: a model's lookups by name (through the loader's name indices for bodies and
 * joints) and its release. */
#include <stdlib.h>
#include <string.h>

#include "sim/model.h"
#include "sim/load_internal.h"
#include "sim/name_index.h"

void sim_model_free(sim_model *m) {
  if (!m) {
    return;
  }
  free(m->bodies);
  free(m->joints);
  free(m->sites);
  free(m->actuators);
  free(m->geoms);
  free(m->tendons);
  free(m->wraps);
  free(m->hull_vert);
  free(m->hull_graph);
  free(m->exclude);
  free(m->dof_joint);
  free(m->dof_body);
  free(m->qpos0);
  free(m->dof_parent);
  if (m->names) {
    sim_name_index_free(&m->names[0]);
    sim_name_index_free(&m->names[1]);
    free(m->names);
  }
  free(m);
}

int sim__model_names_init(sim_model *m, size_t nbody, size_t njnt) {
  m->names = calloc(2, sizeof *m->names);
  return m->names && sim_name_index_init(&m->names[0], nbody) == 0 &&
                 sim_name_index_init(&m->names[1], njnt) == 0
             ? 0
             : -1;
}

int sim_model_body(const sim_model *m, const char *name) {
  if (m->names && name[0]) {
    return sim_name_index_find(&m->names[0], name);
  }
  for (int i = 0; i < m->nbody; i++) {
    if (strcmp(m->bodies[i].name, name) == 0) {
      return i;
    }
  }
  return -1;
}

int sim_model_joint(const sim_model *m, const char *name) {
  if (m->names && name[0]) {
    return sim_name_index_find(&m->names[1], name);
  }
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

int sim_model_tendon(const sim_model *m, const char *name) {
  for (int i = 0; i < m->ntendon; i++) {
    if (strcmp(m->tendons[i].name, name) == 0) {
      return i;
    }
  }
  return -1;
}

int sim_model_geom(const sim_model *m, const char *name) {
  for (int i = 0; i < m->ngeom; i++) {
    if (strcmp(m->geoms[i].name, name) == 0) {
      return i;
    }
  }
  return -1;
}
