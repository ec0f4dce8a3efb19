/* sim/passive.c: joint springs and dampers. */
#include "sim/sim.h"

/* Damping acts on every dof; springs only on hinges and slides (the loader refuses them on
 * ball and free joints, whose coordinates are quaternions). */
void sim_passive(const sim_model *m, sim_data *d) {
  for (int k = 0; k < m->nv; k++) {
    const sim_joint *j = &m->joints[m->dof_joint[k]];
    double spring = 0;
    if (j->stiffness != 0) {
      spring = -j->stiffness * (d->qpos[j->qposadr] - j->springref);
    }
    d->qfrc_passive[k] = spring - j->damping * d->qvel[k];
  }
}
