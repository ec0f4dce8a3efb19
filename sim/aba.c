/* sim/aba.c: forward dynamics by the Articulated Body Algorithm (Featherstone), O(n).
 * In world axes about the origin a body hands its articulated inertia and bias force to its
 * parent by plain addition; no spatial transforms are needed. */
#include "sim/sim.h"
#include "sim/spatial.h"

#include <string.h>

/* Pass 1: rigid-body inertias and velocity-product bias forces pA = v ×f (I·v). */
static void aba_init(const sim_model *m, sim_data *d) {
  memcpy(d->cIA, d->cinert, (size_t)m->nbody * 36 * sizeof(double));
  for (int i = 1; i < m->nbody; i++) {
    double Iv[6];
    sim_mat6_vec(Iv, d->cinert + 36 * i, d->cvel + 6 * i);
    sim_cross_force(d->cfrc + 6 * i, d->cvel + 6 * i, Iv);
  }
}

/* Joint terms of dof k on body i: U = IA·S, D = S'·U + armature + h·damping, u = τ − S'·pA. */
static void aba_joint(const sim_model *m, sim_data *d, int i, int k, double implicit_h) {
  const sim_joint *j = &m->joints[m->dof_joint[k]];
  const double *S = d->cdof + 6 * k;
  double *U = d->dof_U + 6 * k;
  sim_mat6_vec(U, d->cIA + 36 * i, S);
  d->dof_D[k] = sim_dot6(S, U) + j->armature + implicit_h * j->damping;
  d->dof_u[k] = d->qfrc_applied[k] + d->qfrc_passive[k] + d->qfrc_actuator[k] +
                d->qfrc_constraint[k] - sim_dot6(S, d->cfrc + 6 * i);
}

/* Adds body i's articulated inertia and bias force, seen through its joint, to the parent's:
 * Ia = IA − U·Uᵀ/D and pa = pA + Ia·c + U·u/D, with Ia·c = IA·c − U·(Uᵀ·c)/D so that Ia is
 * never stored: one pass over the 6×6 block updates the parent. */
static void aba_to_parent(const sim_model *m, sim_data *d, int i, int k) {
  const double *IA = d->cIA + 36 * i, *c = d->cvp + 6 * i, *pA = d->cfrc + 6 * i;
  int p = m->bodies[i].parent;
  double *IAp = d->cIA + 36 * p, *fp = d->cfrc + 6 * p, IAc[6];
  sim_mat6_vec(IAc, IA, c);
  if (k < 0) { /* a welded body hands on its inertia and bias force unchanged */
    for (int r = 0; r < 36; r++) {
      IAp[r] += IA[r];
    }
    for (int r = 0; r < 6; r++) {
      fp[r] += pA[r] + IAc[r];
    }
    return;
  }
  const double *U = d->dof_U + 6 * k;
  double invD = 1.0 / d->dof_D[k];
  double coef = (d->dof_u[k] - sim_dot6(U, c)) * invD; /* U's weight in pa */
  for (int r = 0; r < 6; r++) {
    double Ur = U[r] * invD;
    for (int col = 0; col < 6; col++) {
      IAp[6 * r + col] += IA[6 * r + col] - Ur * U[col];
    }
    fp[r] += pA[r] + IAc[r] + U[r] * coef;
  }
}

/* Pass 3: accelerations from the base outward, a_i = a_parent + c_i + S·qdd. */
static void aba_accelerations(const sim_model *m, sim_data *d) {
  sim_base_acceleration(m, d->cacc);
  for (int i = 1; i < m->nbody; i++) {
    int k = m->joints[m->bodies[i].joint].dofadr;
    double *a = d->cacc + 6 * i;
    const double *ap = d->cacc + 6 * m->bodies[i].parent, *c = d->cvp + 6 * i;
    for (int r = 0; r < 6; r++) {
      a[r] = ap[r] + c[r];
    }
    if (k >= 0) {
      double qdd = (d->dof_u[k] - sim_dot6(d->dof_U + 6 * k, a)) / d->dof_D[k];
      d->qacc[k] = qdd;
      for (int r = 0; r < 6; r++) {
        a[r] += d->cdof[6 * k + r] * qdd;
      }
    }
  }
}

void sim_body_accelerations(const sim_model *m, sim_data *d) {
  sim_base_acceleration(m, d->cacc);
  for (int i = 1; i < m->nbody; i++) {
    int k = m->joints[m->bodies[i].joint].dofadr;
    double *a = d->cacc + 6 * i;
    const double *ap = d->cacc + 6 * m->bodies[i].parent, *c = d->cvp + 6 * i;
    for (int r = 0; r < 6; r++) {
      a[r] = ap[r] + c[r] + (k >= 0 ? d->cdof[6 * k + r] * d->qacc[k] : 0.0);
    }
  }
}

void sim_aba(const sim_model *m, sim_data *d, double implicit_h) {
  aba_init(m, d);
  for (int i = m->nbody - 1; i > 0; i--) {
    int k = m->joints[m->bodies[i].joint].dofadr;
    if (k >= 0) {
      aba_joint(m, d, i, k, implicit_h);
    }
    if (m->bodies[i].parent > 0) {
      aba_to_parent(m, d, i, k);
    }
  }
  aba_accelerations(m, d);
}
