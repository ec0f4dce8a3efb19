/* sim/passive.c: joint and tendon springs and dampers, the medium's drag (sim/fluid.c) and
 * forces applied to bodies. */
#include "sim/fluid.h"
#include "sim/sim.h"

#include <string.h>

/* The generalized force of a force f at the world point p and a torque τ on body b: the wrench
 * about the world origin is [τ + p × f; f], and each dof k that moves b (its own and its
 * ancestors', along dof_parent) takes the power of its motion cdof_k = [ω; v0] against it. */
void sim__body_wrench(const sim_model *m, sim_data *d, int b, const double xfrc[6]) {
  const double *f = xfrc, *tau = xfrc + 3, *p = d->xipos + 3 * b;
  const double n[3] = {tau[0] + p[1] * f[2] - p[2] * f[1], tau[1] + p[2] * f[0] - p[0] * f[2],
                       tau[2] + p[0] * f[1] - p[1] * f[0]};
  int k = -1;
  for (int a = b; a > 0 && k < 0; a = m->bodies[a].parent) { /* the last dof that moves b */
    if (m->bodies[a].dofnum > 0) {
      k = m->bodies[a].dofadr + m->bodies[a].dofnum - 1;
    }
  }
  for (; k >= 0; k = m->dof_parent[k]) {
    const double *s = d->cdof + 6 * k;
    d->qfrc_passive[k] += s[0] * n[0] + s[1] * n[1] + s[2] * n[2] + s[3] * f[0] + s[4] * f[1] +
                          s[5] * f[2];
  }
}

/* A tendon's spring-damper pulls along it: f = −k·(L − springlength) − b·L̇, mapped onto the
 * dofs by its Jacobian, qfrc += ten_J·f (MuJoCo's mj_passive). */
static void tendon_springs(const sim_model *m, sim_data *d) {
  for (int t = 0; t < m->ntendon; t++) {
    const sim_tendon *ten = &m->tendons[t];
    if (ten->stiffness == 0 && ten->damping == 0) {
      continue;
    }
    const double f = -ten->stiffness * (d->ten_length[t] - ten->springlength) -
                     ten->damping * d->ten_velocity[t];
    const double *J = d->ten_J + (size_t)t * m->nv;
    for (int k = 0; k < m->nv; k++) {
      d->qfrc_passive[k] += J[k] * f;
    }
  }
}

/* Damping acts on every dof; springs only on hinges and slides (the loader refuses them on
 * ball and free joints, whose coordinates are quaternions). */
void sim_passive(const sim_model *m, sim_data *d) {
  if (m->opt.disable & SIM_DISABLE_PASSIVE) { /* the length-range simulation (muscle_range.c) */
    memset(d->qfrc_passive, 0, (size_t)m->nv * sizeof(double));
    return;
  }
  for (int k = 0; k < m->nv; k++) {
    const sim_joint *j = &m->joints[m->dof_joint[k]];
    double spring = 0;
    if (j->stiffness != 0) {
      spring = -j->stiffness * (d->qpos[j->qposadr] - j->springref);
    }
    d->qfrc_passive[k] = spring - j->damping * d->qvel[k];
  }
  tendon_springs(m, d);
  if (m->opt.viscosity > 0) {
    sim__fluid(m, d);
  }
  for (int b = 1; b < m->nbody; b++) { /* the world (body 0) takes no force */
    const double *x = d->xfrc_applied + 6 * b;
    if (x[0] != 0 || x[1] != 0 || x[2] != 0 || x[3] != 0 || x[4] != 0 || x[5] != 0) {
      sim__body_wrench(m, d, b, x);
    }
  }
}
