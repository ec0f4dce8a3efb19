/* sim/energy.c: kinetic and potential energy. */
#include "sim/sim.h"
#include "sim/spatial.h"

double sim_energy_kinetic(const sim_model *m, const sim_data *d) {
  double energy = 0;
  for (int i = 1; i < m->nbody; i++) {
    double Iv[6];
    sim_mat6_vec(Iv, d->cinert + 36 * i, d->cvel + 6 * i);
    energy += 0.5 * sim_dot6(d->cvel + 6 * i, Iv);
  }
  for (int k = 0; k < m->nv; k++) { /* the rotor spins with the joint */
    energy += 0.5 * m->joints[m->dof_joint[k]].armature * d->qvel[k] * d->qvel[k];
  }
  return energy;
}

double sim_energy_potential(const sim_model *m, const sim_data *d) {
  double energy = 0;
  for (int i = 1; i < m->nbody; i++) {
    energy -= m->bodies[i].mass * sim_dot3(m->opt.gravity, d->xipos + 3 * i);
  }
  for (int k = 0; k < m->nv; k++) { /* springs: hinges and slides only (see passive.c) */
    const sim_joint *j = &m->joints[m->dof_joint[k]];
    if (j->stiffness != 0) {
      double stretch = d->qpos[j->qposadr] - j->springref;
      energy += 0.5 * j->stiffness * stretch * stretch;
    }
  }
  for (int t = 0; t < m->ntendon; t++) { /* tendon springs, at the lengths sim_tendons left */
    const double stretch = d->ten_length[t] - m->tendons[t].springlength;
    energy += 0.5 * m->tendons[t].stiffness * stretch * stretch;
  }
  return energy;
}
