/* sim/crba.c: joint-space inertia matrix by the Composite Rigid Body Algorithm. */
#include "sim/sim.h"
#include "sim/spatial.h"

#include <string.h>

/* Composite inertias: each body's inertia plus everything it carries, in its own frame. */
static void composite_inertias(const sim_model *m, sim_data *d) {
  for (int i = 1; i < m->nbody; i++) {
    memcpy(d->bIA + 36 * i, m->bodies[i].sinertia, 36 * sizeof(double));
  }
  for (int i = m->nbody - 1; i > 0; i--) {
    int p = m->bodies[i].parent;
    if (p > 0) {
      sim_xform_inertia_back_add(d->bIA + 36 * p, d->bE + 9 * i, d->br + 3 * i,
                                 d->bIA + 36 * i);
    }
  }
}

/* Column of body i's dof: F = IC_i·S_i carried up the tree, projected on each ancestor's axis. */
static void fill_column(const sim_model *m, sim_data *d, int i) {
  int nv = m->nv, col = m->joints[m->bodies[i].joint].dofadr;
  double F[6], Fp[6];
  sim_mat6_vec(F, d->bIA + 36 * i, d->bS + 6 * i);
  d->qM[col * nv + col] = sim_dot6(d->bS + 6 * i, F) + m->joints[m->bodies[i].joint].armature;
  for (int j = i; m->bodies[j].parent > 0;) {
    sim_xform_force_back(Fp, d->bE + 9 * j, d->br + 3 * j, F);
    memcpy(F, Fp, sizeof F);
    j = m->bodies[j].parent;
    int row = m->joints[m->bodies[j].joint].dofadr;
    if (row >= 0) {
      double value = sim_dot6(d->bS + 6 * j, F);
      d->qM[row * nv + col] = value;
      d->qM[col * nv + row] = value;
    }
  }
}

void sim_crba(const sim_model *m, sim_data *d) {
  memset(d->qM, 0, (size_t)m->nv * (size_t)m->nv * sizeof(double));
  composite_inertias(m, d);
  for (int i = 1; i < m->nbody; i++) {
    if (m->joints[m->bodies[i].joint].dofadr >= 0) {
      fill_column(m, d, i);
    }
  }
}
