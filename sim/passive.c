/* sim/passive.c: joint springs and dampers. */
#include "sim/sim.h"

void sim_passive(const sim_model *m, sim_data *d) {
  for (int k = 0; k < m->nv; k++) {
    const sim_joint *j = &m->joints[m->dof_joint[k]];
    double q = d->qpos[j->qposadr];
    d->qfrc_passive[k] = -j->stiffness * (q - j->springref) - j->damping * d->qvel[k];
  }
}
