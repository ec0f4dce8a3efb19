/* sim/deriv/integrate_deriv.c: the integrators (sim/integrate.c) chained over their evaluations'
 * derivatives Q into the step's derivative X = ∂[δq⁺; v⁺; act⁺]/∂[δq | v | act | u | θ].
 *
 * Positions move on the joints' manifolds, q ⊕ Θ: hinges, slides and a free joint's position add
 * Θ; a ball's (or free joint's) orientation turns, q·exp(Θ) with Θ in body axes. In the tangent
 * space (deriv.h) a perturbation δ of q and dΘ of Θ give the perturbation of q ⊕ Θ
 *   δ' = Φ(Θ)·δ + Ψ(Θ)·dΘ,   Φ = R(Θ)ᵀ, Ψ = Jr(Θ) for a rotation (1, 1 otherwise),
 * since exp(−Θ)·exp(δ)·exp(Θ) = exp(R(Θ)ᵀ·δ) and exp(Θ + dΘ) ≈ exp(Θ)·exp(Jr(Θ)·dΘ), with
 *   R(Θ) = exp(Θ̂),  Jr(Θ) = 1 − (1 − cos θ)/θ²·Θ̂ + (θ − sin θ)/θ³·Θ̂²,  θ = |Θ|.
 *
 * Euler:  v⁺ = v + h·q̈,  q⁺ = q ⊕ h·v⁺, so
 *   ∂v⁺ = [0 | 1 | 0 ...] + h·Q,   ∂δq⁺ = Φ(h·v⁺)·[1 | 0 ...] + Ψ(h·v⁺)·h·∂v⁺.
 * RK4 (stages s = 0..3, c = 0, ½, ½, 1, weights 1/6, 1/3, 1/3, 1/6):
 *   q_s = q ⊕ Θ_s, Θ_s = c_s·h·k̃_(s−1);  v_s = v + c_s·h·a_(s−1);  a_s = q̈(q_s, v_s);
 *   k̃_s = v_s, corrected on rotations (s > 0) to dexp⁻¹: k̃ = k + ½Θ×k + (1/12)·Θ×(Θ×k), whose
 *   derivative is (1 + ½Θ̂ + Θ̂²/12)·∂k − (½k̂ + ((Θ×k)^ + Θ̂k̂)/12)·∂Θ;
 *   q⁺ = q ⊕ h·Σ b_s·k̃_s,  v⁺ = v + h·Σ b_s·a_s,
 * each stage's ∂a_s = Q_s·[∂δq_s; ∂v_s] plus Q_s's own columns of act, u and θ. The actuator
 * states advance after the positions and velocities (actuator_deriv.c). */
#include "sim/deriv/internal.h"
#include "sim/spatial.h"

#include <math.h>
#include <string.h>

/* --- SO(3) ------------------------------------------------------------------------------------ */

static void skew(double S[9], const double v[3]) {
  S[0] = 0, S[1] = -v[2], S[2] = v[1];
  S[3] = v[2], S[4] = 0, S[5] = -v[0];
  S[6] = -v[1], S[7] = v[0], S[8] = 0;
}

/* out = a·1 + b·Θ̂ + c·Θ̂² */
static void so3_poly(double out[9], const double t[3], double a, double b, double c) {
  double T[9], T2[9];
  skew(T, t);
  sim_mat3_mul(T2, T, T);
  for (int r = 0; r < 9; r++) {
    out[r] = b * T[r] + c * T2[r] + (r % 4 == 0 ? a : 0);
  }
}

void sim__so3_exp(double R[9], const double theta[3]) {
  double t = sqrt(sim_dot3(theta, theta));
  if (t < 1e-4) { /* the series: sin t/t and (1 − cos t)/t² to well below rounding */
    so3_poly(R, theta, 1, 1 - t * t / 6, 0.5 - t * t / 24);
  } else {
    so3_poly(R, theta, 1, sin(t) / t, (1 - cos(t)) / (t * t));
  }
}

void sim__so3_right_jacobian(double J[9], const double theta[3]) {
  double t = sqrt(sim_dot3(theta, theta));
  if (t < 1e-4) {
    so3_poly(J, theta, 1, -(0.5 - t * t / 24), 1.0 / 6 - t * t / 120);
  } else {
    so3_poly(J, theta, 1, -(1 - cos(t)) / (t * t), (t - sin(t)) / (t * t * t));
  }
}

/* --- maps on the tangent space, joint by joint ---------------------------------------------- */

/* the first rotation dof of joint j (ball: its dofs, free: its last three), or -1 */
static int rotation_dof(const sim_joint *j) {
  return j->type == SIM_JOINT_BALL ? j->dofadr : j->type == SIM_JOINT_FREE ? j->dofadr + 3 : -1;
}

/* Φ = R(Θ)ᵀ and Ψ = Jr(Θ) of every turning joint for the rotation Θ (per dof, in w->theta) */
static void rotation_maps(sim_deriv *w) {
  const sim_model *m = w->m;
  for (int j = 0; j < m->njnt; j++) {
    int k = rotation_dof(&m->joints[j]);
    if (k >= 0) {
      double R[9], *phi = w->rot + 18 * j;
      sim__so3_exp(R, w->theta + k);
      for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
          phi[3 * r + c] = R[3 * c + r];
        }
      }
      sim__so3_right_jacobian(phi + 9, w->theta + k);
    }
  }
}

/* Out = Φ(Θ)·[1 | 0 ...] + Ψ(Θ)·dTh: the tangent of q ⊕ Θ when q moves along the δq columns and
 * Θ by dTh (nv × ncol); the maps from rotation_maps. With identity 0, Out less its [1 | 0 ...]
 * (RK4's stages keep the tangents that way: Q_s·[1 | 0 ...] is Q_s's own columns, no product). */
static void position_map(sim_deriv *w, double *Out, const double *dTh, int identity) {
  const sim_model *m = w->m;
  int n = w->ncol;
  memcpy(Out, dTh, (size_t)w->nv * (size_t)n * sizeof(double));
  for (int k = 0; k < w->nv && identity; k++) {
    Out[(size_t)k * n + k] += 1;
  }
  for (int j = 0; j < m->njnt; j++) {
    int k = rotation_dof(&m->joints[j]);
    if (k < 0) {
      continue;
    }
    const double *phi = w->rot + 18 * j, *psi = phi + 9;
    for (int r = 0; r < 3; r++) {
      double *out = Out + (size_t)(k + r) * n;
      for (int c = 0; c < n; c++) {
        out[c] = 0;
      }
      for (int s = 0; s < 3; s++) {
        const double *in = dTh + (size_t)(k + s) * n, a = psi[3 * r + s];
        for (int c = 0; c < n; c++) {
          out[c] += a * in[c];
        }
        out[k + s] += phi[3 * r + s] - (identity ? 0.0 : (double)(r == s));
      }
    }
  }
}

/* --- Euler ------------------------------------------------------------------------------------ */

static void euler(sim_deriv *w, const sim_data *d, double h, double *X) {
  int nv = w->nv, n = w->ncol;
  const double *Q = w->Q;
  double *dth = w->dth;
  for (int k = 0; k < nv; k++) {
    w->theta[k] = h * d->qvel[k];
  }
  rotation_maps(w);
  for (int k = 0; k < nv; k++) { /* ∂v⁺ = [0 | 1 | 0] + h·Q, and h·∂v⁺ the rotation's change */
    const double *q = Q + (size_t)k * n;
    double *v = X + (size_t)(nv + k) * n, *t = dth + (size_t)k * n;
    for (int c = 0; c < n; c++) {
      v[c] = h * q[c];
    }
    v[w->cv + k] += 1;
    for (int c = 0; c < n; c++) {
      t[c] = h * v[c];
    }
  }
  position_map(w, X, dth, 1);
}

/* --- RK4 ---------------------------------------------------------------------------------------- */

static const double rk_c[4] = {0.0, 0.5, 0.5, 1.0};
static const double rk_b[4] = {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6};

/* ∂a_s = Q_s·[∂δq_s; ∂v_s] + Q_s's columns of act, u and θ, with the stage's tangents kept less
 * their identity (Dq, Dv: ∂δq_s − [1 | 0 ...], ∂v_s − [0 | 1 | 0 ...]):
 *   ∂a_s = Q_s + Q_s[:, δq]·Dq + Q_s[:, v]·Dv,
 * nothing to multiply at stage 0 (both zero). Each output row takes four input rows per pass over
 * its columns (the loop's overhead and the row's loads and stores shared by four; the rest two
 * and one at a time), in the order r = 0, 1, ... of one row at a time. */
DERIV_WIDE static void stage_acceleration(sim_deriv *w, int s, double *dkv) {
  int nv = w->nv, n = w->ncol;
  const double *Q = w->Q + (size_t)s * nv * n;
  memcpy(dkv, Q, (size_t)nv * (size_t)n * sizeof(double));
  if (s == 0) {
    return;
  }
  for (int k = 0; k < nv; k++) {
    const double *q = Q + (size_t)k * n, *qv = q + w->cv;
    double *restrict out = dkv + (size_t)k * n;
    int r = 0;
    for (; r + 4 <= nv; r += 4) {
      const double *restrict q0 = w->Dq + (size_t)r * n, *restrict v0 = w->Dv + (size_t)r * n;
      const double *restrict q1 = q0 + n, *restrict q2 = q1 + n, *restrict q3 = q2 + n;
      const double *restrict v1 = v0 + n, *restrict v2 = v1 + n, *restrict v3 = v2 + n;
      const double a0 = q[r], a1 = q[r + 1], a2 = q[r + 2], a3 = q[r + 3];
      const double b0 = qv[r], b1 = qv[r + 1], b2 = qv[r + 2], b3 = qv[r + 3];
      for (int c = 0; c < n; c++) {
        double t = out[c];
        t += a0 * q0[c] + b0 * v0[c];
        t += a1 * q1[c] + b1 * v1[c];
        t += a2 * q2[c] + b2 * v2[c];
        t += a3 * q3[c] + b3 * v3[c];
        out[c] = t;
      }
    }
    for (; r + 2 <= nv; r += 2) {
      const double *restrict q0 = w->Dq + (size_t)r * n, *restrict v0 = w->Dv + (size_t)r * n;
      const double *restrict q1 = q0 + n, *restrict v1 = v0 + n;
      const double a0 = q[r], a1 = q[r + 1], b0 = qv[r], b1 = qv[r + 1];
      for (int c = 0; c < n; c++) {
        double t = out[c];
        t += a0 * q0[c] + b0 * v0[c];
        t += a1 * q1[c] + b1 * v1[c];
        out[c] = t;
      }
    }
    for (; r < nv; r++) {
      const double *restrict dq = w->Dq + (size_t)r * n, *restrict dv = w->Dv + (size_t)r * n;
      const double a = q[r], b = qv[r];
      for (int c = 0; c < n; c++) {
        out[c] += a * dq[c] + b * dv[c];
      }
    }
  }
}

/* ∂k̃_s from ∂v_s (= ∂k_s) and ∂Θ_s on the rotation dofs (the dexp⁻¹ correction) */
static void stage_rates(sim_deriv *w, const sim_data *d, int s, double h, double *dkq) {
  const sim_model *m = w->m;
  int nv = w->nv, n = w->ncol;
  memcpy(dkq, w->Dv, (size_t)nv * (size_t)n * sizeof(double));
  for (int k = 0; k < nv; k++) { /* Dv is ∂v_s less its identity */
    dkq[(size_t)k * n + w->cv + k] += 1;
  }
  if (s == 0) {
    return;
  }
  for (int j = 0; j < m->njnt; j++) {
    int k = rotation_dof(&m->joints[j]);
    if (k < 0) {
      continue;
    }
    double theta[3], kr[3], txk[3], C1[9], C2[9], K[9], T[9], TK[9], TXK[9];
    for (int r = 0; r < 3; r++) {
      theta[r] = rk_c[s] * h * d->int_kq[(s - 1) * nv + k + r];
      kr[r] = w->stage_v[s * nv + k + r];
    }
    sim_cross3(txk, theta, kr);
    so3_poly(C1, theta, 1, 0.5, 1.0 / 12);
    skew(K, kr);
    skew(T, theta);
    skew(TXK, txk);
    sim_mat3_mul(TK, T, K);
    for (int r = 0; r < 9; r++) {
      C2[r] = 0.5 * K[r] + (TXK[r] + TK[r]) / 12;
    }
    for (int r = 0; r < 3; r++) {
      double *out = dkq + (size_t)(k + r) * n;
      for (int c = 0; c < n; c++) {
        out[c] = 0;
      }
      for (int t = 0; t < 3; t++) {
        const double *dk = w->Dv + (size_t)(k + t) * n, *dt = w->dth + (size_t)(k + t) * n;
        const double a = C1[3 * r + t], b = C2[3 * r + t];
        for (int c = 0; c < n; c++) {
          out[c] += a * dk[c] - b * dt[c];
        }
        out[w->cv + k + t] += a; /* C1·(∂v_s's identity) */
      }
    }
  }
}

/* the tangents of stage s's position and velocity less their identity (Θ_s = c_s·h·k̃_(s−1)) */
static void stage_state(sim_deriv *w, const sim_data *d, int s, double h) {
  int nv = w->nv, n = w->ncol;
  size_t stage = (size_t)nv * n;
  if (s == 0) { /* the step's start: both tangents are the identity (Dq is not read) */
    memset(w->dth, 0, stage * sizeof(double));
    memset(w->Dv, 0, stage * sizeof(double));
    return;
  }
  const double ch = rk_c[s] * h;
  for (int k = 0; k < nv; k++) {
    w->theta[k] = ch * d->int_kq[(s - 1) * nv + k];
  }
  const double *restrict kq = w->dkq + (size_t)(s - 1) * stage;
  const double *restrict kv = w->dkv + (size_t)(s - 1) * stage;
  double *restrict dth = w->dth, *restrict dv = w->Dv;
  for (size_t e = 0; e < stage; e++) {
    dth[e] = ch * kq[e];
    dv[e] = ch * kv[e];
  }
  rotation_maps(w);
  position_map(w, w->Dq, w->dth, 0);
}

/* ∂Θ = h·Σ b·∂k̃ and ∂v⁺ = h·Σ b·∂a over the four stages (the sums in stage order from 0) */
static void rk4_combine(double h, size_t stage, const double *restrict kq,
                        const double *restrict kv, double *restrict dth, double *restrict dv) {
  const double *restrict q1 = kq + stage, *restrict q2 = q1 + stage, *restrict q3 = q2 + stage;
  const double *restrict v1 = kv + stage, *restrict v2 = v1 + stage, *restrict v3 = v2 + stage;
  for (size_t e = 0; e < stage; e++) {
    double sq = 0, sv = 0;
    sq += rk_b[0] * kq[e], sv += rk_b[0] * kv[e];
    sq += rk_b[1] * q1[e], sv += rk_b[1] * v1[e];
    sq += rk_b[2] * q2[e], sv += rk_b[2] * v2[e];
    sq += rk_b[3] * q3[e], sv += rk_b[3] * v3[e];
    dth[e] = h * sq;
    dv[e] = h * sv;
  }
}

static void rk4(sim_deriv *w, const sim_data *d, double h, double *X) {
  int nv = w->nv, n = w->ncol;
  size_t stage = (size_t)nv * n;
  for (int s = 0; s < 4; s++) {
    stage_state(w, d, s, h);
    stage_acceleration(w, s, w->dkv + s * stage);
    stage_rates(w, d, s, h, w->dkq + s * stage);
  }
  for (int k = 0; k < nv; k++) {
    double sum = 0;
    for (int s = 0; s < 4; s++) {
      sum += rk_b[s] * d->int_kq[s * nv + k];
    }
    w->theta[k] = h * sum;
  }
  rk4_combine(h, stage, w->dkq, w->dkv, w->dth, X + stage); /* ∂v⁺ = [0 | 1 | 0] + h·Σ b·∂a */
  for (int k = 0; k < nv; k++) {
    X[(size_t)(nv + k) * n + w->cv + k] += 1;
  }
  rotation_maps(w);
  position_map(w, X, w->dth, 1);
}

void sim__integrate_deriv(sim_deriv *w, const sim_data *d, double *X) {
  double h = w->m->opt.timestep;
  if (w->m->opt.integrator == SIM_INTEGRATOR_RK4) {
    rk4(w, d, h, X);
  } else {
    euler(w, d, h, X);
  }
  sim__actuator_advance_deriv(w, d, h, X);
}
