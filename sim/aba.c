/* sim/aba.c: forward dynamics by the Articulated Body Algorithm (Featherstone), O(n).
 * In world axes about the origin a body hands its articulated inertia and bias force to its
 * parent by plain addition; no spatial transforms are needed.
 *
 * The velocity-product terms c enter once, in the first pass: a⁰_i = a⁰_parent + c_i is the
 * acceleration body i would have at qdd = 0 (gravity as the base's upward acceleration, as in
 * RNEA), and the bias force pA_i = I_i·a⁰_i + v_i ×f (I_i·v_i) is the force it would then need.
 * The backward pass hands on pA + U·u/D without the IA·c of the textbook form, and the forward
 * pass solves for δ_i = a_i − a⁰_i (δ_0 = 0), so a_i = a⁰_i + δ_i at the end. */
#include "sim/sim.h"
#include "sim/spatial.h"

#include <math.h>
#include <string.h>

/* Pass 1, from the base outward: a⁰ (in crne_acc, RNEA's scratch) and the bias forces
 * pA = I·a⁰ + v ×f (I·v), both products from the compact rigid-body inertia. The articulated
 * inertias need no copy of the rigid ones here: a leaf's is its cinert, read in place, and a
 * body's last child (the first the backward pass reaches) starts its parent's from cinert. */
static void aba_init(const sim_model *m, sim_data *d) {
  sim_base_acceleration(m, d->crne_acc);
  for (int i = 1; i < m->nbody; i++) {
    const double *I = d->cinert + 36 * i, *v = d->cvel + 6 * i, *c = d->cvp + 6 * i;
    const double *ap = d->crne_acc + 6 * m->bodies[i].parent;
    double *a = d->crne_acc + 6 * i, *pA = d->cfrc + 6 * i, Iv[6], Ia[6];
    for (int r = 0; r < 6; r++) {
      a[r] = ap[r] + c[r];
    }
    sim_rigid_inertia_vec(Iv, I, v);
    sim_cross_force(pA, v, Iv);
    sim_rigid_inertia_vec(Ia, I, a);
    for (int r = 0; r < 6; r++) {
      pA[r] += Ia[r];
    }
  }
}

/* out = IA·S for a symmetric IA of which the ABA keeps only the upper triangle up to date, each
 * row's products summed in pairs (three dependent additions, not five: this product starts the
 * chain of dependent operations from a body to its parent in the backward pass). */
static inline void aba_sym6_vec(double out[6], const double *IA, const double S_[6]) {
  const double S[6] = {S_[0], S_[1], S_[2], S_[3], S_[4], S_[5]};
#pragma GCC unroll 6
  for (int r = 0; r < 6; r++) {
    double p[6];
#pragma GCC unroll 6
    for (int c = 0; c < 6; c++) {
      p[c] = (c >= r ? IA[6 * r + c] : IA[6 * c + r]) * S[c];
    }
    out[r] = ((p[0] + p[1]) + (p[2] + p[3])) + (p[4] + p[5]);
  }
}

/* Joint terms of dof k on body i: U = IA·S, D = S'·U + armature + h·damping, u = τ − S'·pA. */
static void aba_joint(const sim_model *m, sim_data *d, const double *IA, int i, int k,
                      double implicit_h) {
  const sim_joint *j = &m->joints[m->dof_joint[k]];
  const double *S = d->cdof + 6 * k;
  double *U = d->dof_U + 6 * k;
  aba_sym6_vec(U, IA, S);
  d->dof_D[k] = sim_dot6(S, U) + j->armature;
  if (implicit_h != 0) {
    d->dof_D[k] += implicit_h * j->damping;
  }
  /* 1/D once, here: the last pass multiplies by it instead of dividing, off its chain of
   * dependent operations from body to body */
  d->dof_Dinv[SIM_BODY_DOF_MAX * k] = 1.0 / d->dof_D[k];
  d->dof_u[k] = d->qfrc_applied[k] + d->qfrc_passive[k] + d->qfrc_actuator[k] +
                d->qfrc_constraint[k] - sim_dot6(S, d->cfrc + 6 * i);
}

/* IAp += IA − w·Uᵀ on the upper triangle (articulated inertias are symmetric: 21 updates, not
 * 36; the lower triangle is left stale and read by no 1-dof step, aba_multi_joint mirrors it
 * before it reads a full block). Unrolled, so that every row's run vectorizes. */
static inline void aba_add_symmetric(double *__restrict__ IAp, const double *__restrict__ IA,
                                     const double w[6], const double U_[6]) {
  const double U[6] = {U_[0], U_[1], U_[2], U_[3], U_[4], U_[5]};
#pragma GCC unroll 6
  for (int r = 0; r < 6; r++) {
#pragma GCC unroll 6
    for (int col = r; col < 6; col++) {
      IAp[6 * r + col] += IA[6 * r + col] - w[r] * U[col];
    }
  }
}

/* IAp = I + IA − w·Uᵀ on the upper triangle: the parent's articulated inertia started from its
 * rigid one I by its last child (see aba_init). */
static inline void aba_start_symmetric(double *__restrict__ IAp, const double *__restrict__ I,
                                       const double *__restrict__ IA, const double w[6],
                                       const double U_[6]) {
  const double U[6] = {U_[0], U_[1], U_[2], U_[3], U_[4], U_[5]};
#pragma GCC unroll 6
  for (int r = 0; r < 6; r++) {
#pragma GCC unroll 6
    for (int col = r; col < 6; col++) {
      IAp[6 * r + col] = I[6 * r + col] + (IA[6 * r + col] - w[r] * U[col]);
    }
  }
}

/* Adds body i's articulated inertia IA and bias force, seen through its joint, to the parent's:
 * Ia = IA − U·Uᵀ/D and pa = pA + U·u/D (no IA·c: see the top of the file). */
static void aba_to_parent(const sim_model *m, sim_data *d, const double *IA, int i, int k) {
  static const double zero[6] = {0};
  const double *pA = d->cfrc + 6 * i;
  int p = m->bodies[i].parent;
  double *IAp = d->cIA + 36 * p, *fp = d->cfrc + 6 * p;
  const double *U = zero, *w = zero; /* a welded body hands on IA and pA unchanged */
  double wk[6];
  if (k >= 0) {
    double invD = d->dof_Dinv[SIM_BODY_DOF_MAX * k], coef = d->dof_u[k] * invD, f[6];
    U = d->dof_U + 6 * k;
    for (int r = 0; r < 6; r++) { /* in locals: fp could alias U and pA */
      wk[r] = U[r] * invD;
      f[r] = fp[r] + (pA[r] + U[r] * coef);
    }
    memcpy(fp, f, sizeof f);
    w = wk;
  } else {
    for (int r = 0; r < 6; r++) {
      fp[r] += pA[r];
    }
  }
  if (m->bodies[p].last_child == i) {
    aba_start_symmetric(IAp, d->cinert + 36 * p, IA, w, U);
  } else {
    aba_add_symmetric(IAp, IA, w, U);
  }
}

/* --- bodies of several dofs (ball, free, several joints): S is 6×n, D is n×n ---------------- */

/* inv = A⁻¹ for a symmetric positive definite n×n A (n <= 6, row stride 6) by Cholesky */
static void spd_inverse(double inv[36], const double A[36], int n) {
  double L[36] = {0};
  for (int r = 0; r < n; r++) {
    for (int c = 0; c <= r; c++) {
      double sum = A[6 * r + c];
      for (int k = 0; k < c; k++) {
        sum -= L[6 * r + k] * L[6 * c + k];
      }
      if (r == c) { /* not a ?: — the ADOL-C benchmark compiles this file with adouble */
        L[6 * r + c] = sqrt(sum);
      } else {
        L[6 * r + c] = sum / L[6 * c + c];
      }
    }
  }
  for (int col = 0; col < n; col++) { /* L·Lᵀ·x = e_col */
    double y[SIM_BODY_DOF_MAX];
    for (int r = 0; r < n; r++) {
      double sum = r == col;
      for (int k = 0; k < r; k++) {
        sum -= L[6 * r + k] * y[k];
      }
      y[r] = sum / L[6 * r + r];
    }
    for (int r = n - 1; r >= 0; r--) {
      double sum = y[r];
      for (int k = r + 1; k < n; k++) {
        sum -= L[6 * k + r] * inv[6 * k + col];
      }
      inv[6 * r + col] = sum / L[6 * r + r];
    }
  }
}

/* U = IA·S, D = Sᵀ·U + diag(armature + h·damping), u = τ − Sᵀ·pA; D⁻¹ kept in dof_Dinv. */
static void aba_multi_joint(const sim_model *m, sim_data *d, int i, double implicit_h) {
  const sim_body *b = &m->bodies[i];
  int k0 = b->dofadr, n = b->dofnum;
  double D[36], *IA = d->cIA + 36 * i;
  if (b->last_child < 0) { /* a leaf: no child started IA (aba_init) */
    memcpy(IA, d->cinert + 36 * i, 36 * sizeof(double));
  }
  for (int r = 1; r < 6; r++) { /* 1-dof children updated only the upper triangle */
    for (int c = 0; c < r; c++) {
      IA[6 * r + c] = IA[6 * c + r];
    }
  }
  for (int a = 0; a < n; a++) {
    const sim_joint *j = &m->joints[m->dof_joint[k0 + a]];
    const double *S = d->cdof + 6 * (k0 + a);
    sim_mat6_vec(d->dof_U + 6 * (k0 + a), IA, S);
    d->dof_u[k0 + a] = d->qfrc_applied[k0 + a] + d->qfrc_passive[k0 + a] +
                       d->qfrc_actuator[k0 + a] + d->qfrc_constraint[k0 + a] -
                       sim_dot6(S, d->cfrc + 6 * i);
    for (int c = 0; c <= a; c++) {
      D[6 * a + c] = D[6 * c + a] = sim_dot6(S, d->dof_U + 6 * (k0 + c));
    }
    D[6 * a + a] += j->armature + implicit_h * j->damping;
  }
  double inv[36];
  spd_inverse(inv, D, n);
  for (int a = 0; a < n; a++) {
    memcpy(d->dof_Dinv + SIM_BODY_DOF_MAX * (k0 + a), inv + 6 * a, (size_t)n * sizeof(double));
  }
}

/* Ia = IA − U·D⁻¹·Uᵀ and pa = pA + U·D⁻¹·u, added to the parent's (started from its cinert
 * when i is its last child). */
static void aba_multi_to_parent(const sim_model *m, sim_data *d, int i) {
  const sim_body *b = &m->bodies[i];
  int k0 = b->dofadr, n = b->dofnum;
  const double *IA = d->cIA + 36 * i, *pA = d->cfrc + 6 * i;
  const double *U = d->dof_U + 6 * k0;
  double *IAp = d->cIA + 36 * b->parent, *fp = d->cfrc + 6 * b->parent;
  const double *base = m->bodies[b->parent].last_child == i ? d->cinert + 36 * b->parent : IAp;
  double w[SIM_BODY_DOF_MAX], W[6 * SIM_BODY_DOF_MAX] = {0}, coef[SIM_BODY_DOF_MAX] = {0};
  for (int a = 0; a < n; a++) {
    w[a] = d->dof_u[k0 + a];
  }
  for (int a = 0; a < n; a++) { /* W_a = Σ_b D⁻¹_ab·U_b, coef = D⁻¹·w */
    const double *Dinv = d->dof_Dinv + SIM_BODY_DOF_MAX * (k0 + a);
    for (int bb = 0; bb < n; bb++) {
      coef[a] += Dinv[bb] * w[bb];
      for (int r = 0; r < 6; r++) {
        W[6 * a + r] += Dinv[bb] * U[6 * bb + r];
      }
    }
  }
  for (int r = 0; r < 6; r++) {
    double f = pA[r];
    for (int col = 0; col < 6; col++) {
      double UWt = 0;
      for (int a = 0; a < n; a++) {
        UWt += U[6 * a + r] * W[6 * a + col];
      }
      IAp[6 * r + col] = base[6 * r + col] + (IA[6 * r + col] - UWt);
    }
    for (int a = 0; a < n; a++) {
      f += U[6 * a + r] * coef[a];
    }
    fp[r] += f;
  }
}

/* qdd = D⁻¹·(u − Uᵀ·δ) with δ the parent's, then δ += S·qdd */
static void aba_multi_acceleration(const sim_model *m, sim_data *d, int i, double *a) {
  const sim_body *b = &m->bodies[i];
  int k0 = b->dofadr, n = b->dofnum;
  double w[SIM_BODY_DOF_MAX];
  for (int k = 0; k < n; k++) {
    w[k] = d->dof_u[k0 + k] - sim_dot6(d->dof_U + 6 * (k0 + k), a);
  }
  for (int k = 0; k < n; k++) {
    const double *Dinv = d->dof_Dinv + SIM_BODY_DOF_MAX * (k0 + k);
    double qdd = 0;
    for (int c = 0; c < n; c++) {
      qdd += Dinv[c] * w[c];
    }
    d->qacc[k0 + k] = qdd;
  }
  for (int k = k0; k < k0 + n; k++) {
    for (int r = 0; r < 6; r++) {
      a[r] += d->cdof[6 * k + r] * d->qacc[k];
    }
  }
}

/* Pass 3 from the base outward: qdd and δ_i = δ_parent + S·qdd, then a_i = a⁰_i + δ_i. Each
 * body's δ replaces its a⁰ in crne_acc once read, where its children find it (δ_0 = 0). */
static void aba_accelerations(const sim_model *m, sim_data *d) {
  memcpy(d->cacc, d->crne_acc, 6 * sizeof(double));
  memset(d->crne_acc, 0, 6 * sizeof(double));
  for (int i = 1; i < m->nbody; i++) {
    int k = m->bodies[i].dofadr;
    double *a0 = d->crne_acc + 6 * i, *a = d->cacc + 6 * i;
    const double *dp = d->crne_acc + 6 * m->bodies[i].parent;
    double delta[6] = {dp[0], dp[1], dp[2], dp[3], dp[4], dp[5]};
    if (m->bodies[i].multi_dof) {
      double dm[6];
      memcpy(dm, delta, sizeof dm);
      aba_multi_acceleration(m, d, i, dm);
      memcpy(delta, dm, sizeof dm);
    } else if (k >= 0) {
      const double *S = d->cdof + 6 * k;
      double qdd = (d->dof_u[k] - sim_dot6(d->dof_U + 6 * k, delta)) *
                   d->dof_Dinv[SIM_BODY_DOF_MAX * k];
      d->qacc[k] = qdd;
      for (int r = 0; r < 6; r++) {
        delta[r] += S[r] * qdd;
      }
    }
    for (int r = 0; r < 6; r++) {
      a[r] = a0[r] + delta[r];
    }
    memcpy(a0, delta, sizeof delta);
  }
}

void sim_body_accelerations(const sim_model *m, sim_data *d) {
  sim_base_acceleration(m, d->cacc);
  for (int i = 1; i < m->nbody; i++) {
    const sim_body *b = &m->bodies[i];
    double *a = d->cacc + 6 * i;
    const double *ap = d->cacc + 6 * b->parent, *c = d->cvp + 6 * i;
    for (int r = 0; r < 6; r++) {
      a[r] = ap[r] + c[r];
    }
    for (int k = b->dofadr; k >= 0 && k < b->dofadr + b->dofnum; k++) {
      for (int r = 0; r < 6; r++) {
        a[r] += d->cdof[6 * k + r] * d->qacc[k];
      }
    }
  }
}

void sim_aba(const sim_model *m, sim_data *d, double implicit_h) {
  aba_init(m, d);
  for (int i = m->nbody - 1; i > 0; i--) {
    const sim_body *b = &m->bodies[i];
    int k = b->dofadr;
    if (b->multi_dof) {
      aba_multi_joint(m, d, i, implicit_h);
      if (b->parent > 0) {
        aba_multi_to_parent(m, d, i);
      }
      continue;
    }
    const double *IA = b->last_child < 0 ? d->cinert + 36 * i : d->cIA + 36 * i;
    if (k >= 0) {
      aba_joint(m, d, IA, i, k, implicit_h);
    }
    if (b->parent > 0) {
      aba_to_parent(m, d, IA, i, k);
    }
  }
  aba_accelerations(m, d);
}
