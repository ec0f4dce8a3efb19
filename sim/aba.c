/* sim/aba.c: forward dynamics by the Articulated Body Algorithm (Featherstone), O(n). */
#include "sim/sim.h"
#include "sim/spatial.h"

#include <string.h>

/* Pass 1: rigid-body inertias and velocity-product bias forces pA = v ×f (I·v). */
static void aba_init(const sim_model *m, sim_data *d) {
  for (int i = 1; i < m->nbody; i++) {
    double Iv[6];
    memcpy(d->bIA + 36 * i, m->bodies[i].sinertia, 36 * sizeof(double));
    sim_mat6_vec(Iv, m->bodies[i].sinertia, d->bvel + 6 * i);
    sim_cross_force(d->bfrc + 6 * i, d->bvel + 6 * i, Iv);
  }
}

/* Joint terms of body i: U = IA·S, D = S'·U + armature + h·damping, u = τ − S'·pA. */
static void aba_joint(const sim_model *m, sim_data *d, int i, double implicit_h) {
  const sim_joint *j = &m->joints[m->bodies[i].joint];
  int k = j->dofadr;
  double *U = d->bU + 6 * i;
  sim_mat6_vec(U, d->bIA + 36 * i, d->bS + 6 * i);
  d->bD[i] = sim_dot6(d->bS + 6 * i, U) + j->armature + implicit_h * j->damping;
  d->bu[i] = d->qfrc_applied[k] + d->qfrc_passive[k] + d->qfrc_actuator[k] -
             sim_dot6(d->bS + 6 * i, d->bfrc + 6 * i);
}

/* Hands body i's articulated inertia and bias force, seen through its joint, to the parent. */
static void aba_to_parent(const sim_model *m, sim_data *d, int i, int has_dof) {
  double *IA = d->bIA + 36 * i, pa[6];
  if (has_dof) {
    const double *U = d->bU + 6 * i;
    double invD = 1.0 / d->bD[i];
    for (int r = 0; r < 6; r++) {
      for (int c = 0; c < 6; c++) {
        IA[6 * r + c] -= U[r] * U[c] * invD;
      }
    }
  }
  sim_mat6_vec(pa, IA, d->bcvel + 6 * i);
  for (int r = 0; r < 6; r++) {
    pa[r] += d->bfrc[6 * i + r] + (has_dof ? d->bU[6 * i + r] * d->bu[i] / d->bD[i] : 0);
  }
  int p = m->bodies[i].parent;
  double fp[6];
  sim_xform_inertia_back_add(d->bIA + 36 * p, d->bE + 9 * i, d->br + 3 * i, IA);
  sim_xform_force_back(fp, d->bE + 9 * i, d->br + 3 * i, pa);
  for (int r = 0; r < 6; r++) {
    d->bfrc[6 * p + r] += fp[r];
  }
}

/* Pass 3: accelerations from the base outward; gravity as base acceleration [0; −g]. */
static void aba_accelerations(const sim_model *m, sim_data *d) {
  memset(d->bacc, 0, 6 * sizeof(double));
  for (int k = 0; k < 3; k++) {
    d->bacc[3 + k] = -m->opt.gravity[k];
  }
  for (int i = 1; i < m->nbody; i++) {
    const sim_joint *j = &m->joints[m->bodies[i].joint];
    double *a = d->bacc + 6 * i;
    sim_xform_motion(a, d->bE + 9 * i, d->br + 3 * i, d->bacc + 6 * m->bodies[i].parent);
    for (int k = 0; k < 6; k++) {
      a[k] += d->bcvel[6 * i + k];
    }
    if (j->dofadr >= 0) {
      double qdd = (d->bu[i] - sim_dot6(d->bU + 6 * i, a)) / d->bD[i];
      d->qacc[j->dofadr] = qdd;
      for (int k = 0; k < 6; k++) {
        a[k] += d->bS[6 * i + k] * qdd;
      }
    }
  }
}

void sim_aba(const sim_model *m, sim_data *d, double implicit_h) {
  aba_init(m, d);
  for (int i = m->nbody - 1; i > 0; i--) {
    int has_dof = m->joints[m->bodies[i].joint].dofadr >= 0;
    if (has_dof) {
      aba_joint(m, d, i, implicit_h);
    }
    if (m->bodies[i].parent > 0) {
      aba_to_parent(m, d, i, has_dof);
    }
  }
  aba_accelerations(m, d);
}
