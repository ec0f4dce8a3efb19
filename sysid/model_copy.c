/* sysid/model_copy.c: a deep copy of a loaded model, so that a fit can set parameters into its
 * own copy and leave the caller's model as it was. */
#include <stdlib.h>
#include <string.h>

#include "sysid/internal.h"

/* a copy of n elements of size sz (NULL for none); *ok cleared when out of memory */
static void *dup(const void *src, size_t n, size_t sz, int *ok) {
  if (src == NULL || n == 0) {
    return NULL;
  }
  void *out = malloc(n * sz);
  if (out == NULL) {
    *ok = 0;
    return NULL;
  }
  memcpy(out, src, n * sz);
  return out;
}

sim_model *sysid__model_copy(const sim_model *m) {
  sim_model *c = malloc(sizeof *c);
  if (c == NULL) {
    return NULL;
  }
  *c = *m;
  int ok = 1;
  /* every array sim_model_free releases (model_names.c) */
  c->bodies = dup(m->bodies, (size_t)m->nbody, sizeof *m->bodies, &ok);
  c->joints = dup(m->joints, (size_t)m->njnt, sizeof *m->joints, &ok);
  c->sites = dup(m->sites, (size_t)m->nsite, sizeof *m->sites, &ok);
  c->actuators = dup(m->actuators, (size_t)m->nu, sizeof *m->actuators, &ok);
  c->geoms = dup(m->geoms, (size_t)m->ngeom, sizeof *m->geoms, &ok);
  c->tendons = dup(m->tendons, (size_t)m->ntendon, sizeof *m->tendons, &ok);
  c->wraps = dup(m->wraps, (size_t)m->nwrap, sizeof *m->wraps, &ok);
  c->hull_vert = dup(m->hull_vert, 3 * (size_t)m->nhull_vert, sizeof *m->hull_vert, &ok);
  c->hull_graph = dup(m->hull_graph, (size_t)m->nhull_graph, sizeof *m->hull_graph, &ok);
  c->exclude = dup(m->exclude, 2 * (size_t)m->nexclude, sizeof *m->exclude, &ok);
  c->dof_joint = dup(m->dof_joint, (size_t)m->nv, sizeof *m->dof_joint, &ok);
  c->dof_body = dup(m->dof_body, (size_t)m->nv, sizeof *m->dof_body, &ok);
  c->qpos0 = dup(m->qpos0, (size_t)m->nq, sizeof *m->qpos0, &ok);
  c->dof_parent = dup(m->dof_parent, (size_t)m->nv, sizeof *m->dof_parent, &ok);
  c->names = NULL; /* lookups search by name (model.h) */
  if (!ok) {
    sim_model_free(c);
    return NULL;
  }
  return c;
}
