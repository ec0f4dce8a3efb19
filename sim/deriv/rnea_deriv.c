/* sim/deriv/rnea_deriv.c: derivatives of inverse dynamics, ∂ID/∂q, ∂ID/∂q̇ and ∂ID/∂(mass, COM,
 * inertia), at a given acceleration, in world axes about the origin (the frame of sim/rnea.c).
 *
 * The forward stage (rnea.c): a_i = a_parent + c_i + S_i·q̈ (a_0 = [0; −g]), the body force
 * f_i = I_i·a_i + v_i ×* (I_i·v_i), and τ_j = S_jᵀ·F_j with F_j the sum of f over the bodies dof j
 * carries (its body's subtree).
 *
 * Its derivative (the same tree, one pass out and one back). Turning dof i by ε moves every body
 * it carries rigidly by the twist ε·S_i, and a world quantity X fixed in those bodies changes by
 * S_i × X (a motion vector, S_i ×* X for a force, S_i ×* I − I·S_i× for an inertia). Velocities
 * and accelerations are not fixed in the bodies: with v_pre and a_pre the velocity and
 * acceleration of the frame just before dof i's joint, Ṡ_i = v_pre × S_i, and, for every body k
 * the dof carries,
 *   ∂v_k/∂q_i = S_i × v_k + Ṡ_i,              ∂a_k/∂q_i = S_i × a_k + c_i − v_k × Ṡ_i,
 *   c_i = a_pre × S_i + v_pre × Ṡ_i,
 *   ∂v_k/∂q̇_i = S_i,                          ∂a_k/∂q̇_i = e_i − v_k × S_i,
 *   e_i = Ṡ_i − S_i × v_after                 (v_after: the frame's velocity after the joint;
 *                                              e = 2·Ṡ for a hinge or slide).
 * Put into f_k, the rigid part gives S_i ×* f_k and the rest is linear in (c, Ṡ) and (e, S):
 *   ∂f_k/∂q_i = S_i ×* f_k + I_k·c_i + B_k·Ṡ_i,     ∂f_k/∂q̇_i = I_k·e_i + B_k·S_i,
 *   B_k·ξ = ξ ×* (I_k·v_k) + v_k ×* (I_k·ξ) − I_k·(v_k × ξ).
 * Summed over a subtree these are composites, IC = Σ I_k and BC = Σ B_k (plain sums in world
 * axes, as CRBA's). For τ_j = S_jᵀ·F_j:
 *   dof j carried by dof i (j in i's subtree, or both of one ball): S_j turns too, and the two
 *   rigid terms cancel: ∂τ_j/∂q_i = (IC_j·S_j)·c_i + (BC_jᵀ·S_j)·Ṡ_i,
 *                      ∂τ_j/∂q̇_i = (IC_j·S_j)·e_i + (BC_jᵀ·S_j)·S_i;
 *   dof j an ancestor of i: ∂τ_j/∂q_i = S_j·(S_i ×* F_i + IC_i·c_i + BC_i·Ṡ_i),
 *                          ∂τ_j/∂q̇_i = S_j·(IC_i·e_i + BC_i·S_i),
 * with IC_i, BC_i, F_i the composites of dof i's body. Each pair of dofs on a path costs a few
 * dot products: O(nv·depth) in all (Carpentier and Mansard, RSS 2018, derive the same
 * structure).
 *
 * B_k in blocks (p = I·v = [n; f] the momentum, v = [w; z]): B = [−n̂ − Y, −(f + t)^; −(f − t)^, 0]
 * with Y = Īŵ + (Īŵ)ᵀ + h·zᵀ + z·hᵀ − 2(h·z)·1 and t = h × w − m·z, so a composite keeps only
 * Σn, Σf, ΣY and Σt (COMP_* in internal.h).
 *
 * Body parameters: ID is linear in a body's inertia, ∂f_k/∂θ = I'·a_k + v_k ×* (I'·v_k) with I'
 * the inertia's derivative (mass: a unit point mass at the COM; COM: m·(2(p·u)·1 − u·pᵀ − p·uᵀ),
 * m·u with u the COM's shift in world axes; an inertia entry: R·E·Rᵀ), and ∂τ_j/∂θ = S_j·∂f_k/∂θ
 * for the dofs j that carry body k. */
#include "sim/deriv/internal.h"
#include "sim/spatial.h"

#include <string.h>

/* --- composite products -------------------------------------------------------------------- */

/* IC·x = [Ī·α + h × β; m·β − h × α] for a compact inertia (Ī at c, h at c + 9, m at c[12]) */
static void comp_inertia_vec(double out[6], const double *c, const double x[6]) {
  const double *I = c, *h = c + 9, m = c[12];
  double hb[3], ha[3];
  sim_cross3(hb, h, x + 3);
  sim_cross3(ha, h, x);
  for (int r = 0; r < 3; r++) {
    out[r] = I[3 * r] * x[0] + I[3 * r + 1] * x[1] + I[3 * r + 2] * x[2] + hb[r];
    out[3 + r] = m * x[3 + r] - ha[r];
  }
}

/* BC·x = [α × N − Y·α − (Fm + T) × β; −(Fm − T) × α] (N, Fm the momentum sums) */
static void comp_velocity_vec(double out[6], const double *c, const double x[6]) {
  const double *N = c + COMP_P, *Fm = c + COMP_P + 3, *Y = c + COMP_Y, *T = c + COMP_T;
  double ft[3], fmt[3], a1[3], a2[3], a3[3];
  for (int r = 0; r < 3; r++) {
    ft[r] = Fm[r] + T[r];
    fmt[r] = Fm[r] - T[r];
  }
  sim_cross3(a1, x, N);
  sim_cross3(a2, ft, x + 3);
  sim_cross3(a3, fmt, x);
  for (int r = 0; r < 3; r++) {
    out[r] = a1[r] - (Y[3 * r] * x[0] + Y[3 * r + 1] * x[1] + Y[3 * r + 2] * x[2]) - a2[r];
    out[3 + r] = -a3[r];
  }
}

/* BCᵀ·s = [N × s_a − Y·s_a + (Fm − T) × s_b; (Fm + T) × s_a] */
static void comp_velocity_tvec(double out[6], const double *c, const double s[6]) {
  const double *N = c + COMP_P, *Fm = c + COMP_P + 3, *Y = c + COMP_Y, *T = c + COMP_T;
  double ft[3], fmt[3], a1[3], a2[3], a3[3];
  for (int r = 0; r < 3; r++) {
    ft[r] = Fm[r] + T[r];
    fmt[r] = Fm[r] - T[r];
  }
  sim_cross3(a1, N, s);
  sim_cross3(a2, fmt, s + 3);
  sim_cross3(a3, ft, s);
  for (int r = 0; r < 3; r++) {
    out[r] = a1[r] - (Y[3 * r] * s[0] + Y[3 * r + 1] * s[1] + Y[3 * r + 2] * s[2]) + a2[r];
    out[3 + r] = a3[r];
  }
}

/* --- forward pass: per-dof terms and each body's own share of the composites ------------------ */

/* Ṡ, c and e of the dofs k0..k0+n−1 of one joint (a ball's three share their frame), then the
 * frame moved on: v += Σ S·q̇, a += Σ S·q̈ + v_pre × Σ S·q̇ (sim/kinematics.c's order). */
static void joint_terms(sim_deriv *w, const sim_data *d, const double *qacc, int k0, int n,
                        double v[6], double a[6]) {
  double W[6] = {0}, A[6] = {0}, vafter[6], t[6];
  for (int k = k0; k < k0 + n; k++) {
    const double *S = d->cdof + 6 * k;
    double *sd = w->dof_sd + 6 * k, *c = w->dof_c + 6 * k;
    sim_cross_motion(sd, v, S);
    sim_cross_motion(c, a, S);
    sim_cross_motion(t, v, sd);
    for (int r = 0; r < 6; r++) {
      c[r] += t[r];
      W[r] += S[r] * d->qvel[k];
      A[r] += S[r] * qacc[k];
    }
  }
  for (int r = 0; r < 6; r++) {
    vafter[r] = v[r] + W[r];
  }
  for (int k = k0; k < k0 + n; k++) {
    double *e = w->dof_e + 6 * k;
    sim_cross_motion(t, d->cdof + 6 * k, vafter);
    for (int r = 0; r < 6; r++) {
      e[r] = w->dof_sd[6 * k + r] - t[r];
    }
  }
  sim_cross_motion(t, v, W);
  for (int r = 0; r < 6; r++) {
    a[r] += A[r] + t[r];
    v[r] = vafter[r];
  }
}

/* body i's acceleration and its dofs' terms, joint by joint (a free joint as its translation,
 * then its rotation) */
static void body_terms(sim_deriv *w, const sim_data *d, const double *qacc, int i) {
  const sim_model *m = w->m;
  const sim_body *b = &m->bodies[i];
  double v[6], a[6];
  memcpy(v, d->cvel + 6 * b->parent, sizeof v);
  memcpy(a, w->acc + 6 * b->parent, sizeof a);
  for (int n = 0; n < b->jntnum && b->dofnum > 0; n++) {
    const sim_joint *j = &m->joints[b->joint + n];
    if (j->type == SIM_JOINT_FREE) {
      joint_terms(w, d, qacc, j->dofadr, 3, v, a);
      joint_terms(w, d, qacc, j->dofadr + 3, 3, v, a);
    } else if (j->dofadr >= 0) {
      joint_terms(w, d, qacc, j->dofadr, sim_joint_nv(j->type), v, a);
    }
  }
  memcpy(w->acc + 6 * i, a, sizeof a);
}

/* body i's own composite entries: its inertia, f = I·a + v ×* (I·v), the momentum and the
 * velocity terms Y and t (see the top of the file) */
static void body_share(sim_deriv *w, const sim_data *d, int i) {
  const double *I = d->cinert + 36 * i, *v = d->cvel + 6 * i, *a = w->acc + 6 * i;
  double *c = w->comp + COMP_SIZE * i, Ia[6], vxp[6];
  static const int upper[9] = {0, 1, 2, 6, 7, 8, 12, 13, 14};
  for (int r = 0; r < 9; r++) {
    c[COMP_I + r] = I[upper[r]];
  }
  c[COMP_H] = I[16], c[COMP_H + 1] = I[5], c[COMP_H + 2] = I[9], c[COMP_M] = I[21];
  double *p = c + COMP_P;
  sim_rigid_inertia_vec(p, I, v);
  sim_rigid_inertia_vec(Ia, I, a);
  sim_cross_force(vxp, v, p);
  for (int r = 0; r < 6; r++) {
    c[COMP_F + r] = Ia[r] + vxp[r];
  }
  /* Y = Īŵ + (Īŵ)ᵀ + h·zᵀ + z·hᵀ − 2(h·z)·1; row r of Īŵ is Ī_r × w */
  const double *wv = v, *z = v + 3, *h = c + COMP_H, *Ib = c + COMP_I;
  double Iw[9];
  for (int r = 0; r < 3; r++) {
    sim_cross3(Iw + 3 * r, Ib + 3 * r, wv);
  }
  double hz = sim_dot3(h, z);
  for (int r = 0; r < 3; r++) {
    for (int col = 0; col < 3; col++) {
      c[COMP_Y + 3 * r + col] =
          Iw[3 * r + col] + Iw[3 * col + r] + h[r] * z[col] + z[r] * h[col] - (r == col) * 2 * hz;
    }
  }
  double hw[3];
  sim_cross3(hw, h, wv);
  for (int r = 0; r < 3; r++) {
    c[COMP_T + r] = hw[r] - c[COMP_M] * z[r];
  }
}

/* --- backward pass and the per-dof vectors ------------------------------------------------------ */

static void accumulate(sim_deriv *w) {
  const sim_model *m = w->m;
  for (int i = m->nbody - 1; i > 0; i--) {
    int p = m->bodies[i].parent;
    if (p > 0) {
      double *cp = w->comp + COMP_SIZE * p;
      const double *ci = w->comp + COMP_SIZE * i;
      for (int r = 0; r < COMP_SIZE; r++) {
        cp[r] += ci[r];
      }
    }
  }
}

/* IC·S, BCᵀ·S, g = S ×* F + IC·c + BC·Ṡ and h = IC·e + BC·S of each dof, with its body's
 * composites */
static void dof_vectors(sim_deriv *w, const sim_data *d) {
  const sim_model *m = w->m;
  for (int k = 0; k < m->nv; k++) {
    const double *c = w->comp + COMP_SIZE * m->dof_body[k], *S = d->cdof + 6 * k;
    double *g = w->dof_g + 6 * k, *h = w->dof_h + 6 * k, t1[6], t2[6];
    comp_inertia_vec(w->dof_ics + 6 * k, c, S);
    comp_velocity_tvec(w->dof_bcs + 6 * k, c, S);
    sim_cross_force(g, S, c + COMP_F);
    comp_inertia_vec(t1, c, w->dof_c + 6 * k);
    comp_velocity_vec(t2, c, w->dof_sd + 6 * k);
    for (int r = 0; r < 6; r++) {
      g[r] += t1[r] + t2[r];
    }
    comp_inertia_vec(h, c, w->dof_e + 6 * k);
    comp_velocity_vec(t2, c, S);
    for (int r = 0; r < 6; r++) {
      h[r] += t2[r];
    }
  }
}

/* G(row j, col i) += s·∂τ_j/∂x_i for row j carried by col i (the first formula of the top) */
static void carried(sim_deriv *w, const sim_data *d, int j, int i, double s) {
  const double *ics = w->dof_ics + 6 * j, *bcs = w->dof_bcs + 6 * j;
  double *row = w->G + (size_t)j * w->ncol;
  row[i] += s * (sim_dot6(ics, w->dof_c + 6 * i) + sim_dot6(bcs, w->dof_sd + 6 * i));
  row[w->cv + i] += s * (sim_dot6(ics, w->dof_e + 6 * i) + sim_dot6(bcs, d->cdof + 6 * i));
}

/* every pair of dofs on a path: row j and its ancestors i (both ways) */
static void fill_state_columns(sim_deriv *w, const sim_data *d, double s) {
  const sim_model *m = w->m;
  int nv = w->nv;
  for (int j = 0; j < nv; j++) {
    carried(w, d, j, j, s);
    for (int i = m->dof_parent[j]; i >= 0; i = m->dof_parent[i]) {
      carried(w, d, j, i, s); /* row j, column i: j is carried by its ancestor i */
      if (w->rotgroup[i] >= 0 && w->rotgroup[i] == w->rotgroup[j]) {
        carried(w, d, i, j, s); /* the dofs of one ball turn each other */
      } else {               /* row i, column j: the ancestor i sees its subtree move */
        const double *Si = d->cdof + 6 * i;
        double *row = w->G + (size_t)i * w->ncol;
        row[j] += s * sim_dot6(Si, w->dof_g + 6 * j);
        row[w->cv + j] += s * sim_dot6(Si, w->dof_h + 6 * j);
      }
    }
  }
}

/* --- body parameters ------------------------------------------------------------------------- */

/* the last dof that carries body b, -1 when none does */
static int last_dof(const sim_model *m, int b) {
  for (; b > 0; b = m->bodies[b].parent) {
    if (m->bodies[b].dofnum > 0) {
      return m->bodies[b].dofadr + m->bodies[b].dofnum - 1;
    }
  }
  return -1;
}

/* I' of body parameter p as a compact inertia (Ī' at c, h' at c + 9, m' at c[12]) */
static void inertia_derivative(double c[13], const sim_model *m, const sim_data *d, sim_param p) {
  const double *pc = d->xipos + 3 * p.index, *R = d->xmat + 9 * p.index;
  double mass = m->bodies[p.index].mass;
  memset(c, 0, 13 * sizeof(double));
  switch (p.field) {
  case SIM_PARAM_BODY_mass: { /* a unit point mass at the COM: p̃·p̃ᵀ = |p|²·1 − p·pᵀ, h' = p */
    double pp = sim_dot3(pc, pc);
    for (int r = 0; r < 3; r++) {
      for (int col = 0; col < 3; col++) {
        c[3 * r + col] = (r == col) * pp - pc[r] * pc[col];
      }
      c[9 + r] = pc[r];
    }
    c[12] = 1;
    break;
  }
  case SIM_PARAM_BODY_com_x:
  case SIM_PARAM_BODY_com_y:
  case SIM_PARAM_BODY_com_z: { /* the COM moves by u = R·e: m·(2(p·u)·1 − u·pᵀ − p·uᵀ), m·u */
    int e = p.field - SIM_PARAM_BODY_com_x;
    double u[3] = {R[e], R[3 + e], R[6 + e]}, pu = sim_dot3(pc, u);
    for (int r = 0; r < 3; r++) {
      for (int col = 0; col < 3; col++) {
        c[3 * r + col] = mass * ((r == col) * 2 * pu - u[r] * pc[col] - pc[r] * u[col]);
      }
      c[9 + r] = mass * u[r];
    }
    break;
  }
  default: { /* an inertia entry E (both symmetric ones for a product): R·E·Rᵀ */
    static const int ra[6] = {0, 1, 2, 0, 0, 1}, rb[6] = {0, 1, 2, 1, 2, 2};
    int e = p.field - SIM_PARAM_BODY_ixx, a = ra[e], b = rb[e];
    for (int r = 0; r < 3; r++) {
      for (int col = 0; col < 3; col++) {
        c[3 * r + col] = R[3 * r + a] * R[3 * col + b] + (a != b) * R[3 * r + b] * R[3 * col + a];
      }
    }
    break;
  }
  }
}

static void fill_body_parameters(sim_deriv *w, const sim_data *d, double s) {
  const sim_model *m = w->m;
  for (int n = 0; n < w->np; n++) {
    sim_param p = w->params[n];
    if (sim_param_kind_of(p.field) != SIM_PARAM_BODY) {
      continue;
    }
    const double *v = d->cvel + 6 * p.index, *a = w->acc + 6 * p.index;
    double c[13], Ia[6], Iv[6], df[6];
    inertia_derivative(c, m, d, p);
    comp_inertia_vec(Ia, c, a);
    comp_inertia_vec(Iv, c, v);
    sim_cross_force(df, v, Iv);
    for (int r = 0; r < 6; r++) {
      df[r] += Ia[r];
    }
    for (int k = last_dof(m, p.index); k >= 0; k = m->dof_parent[k]) {
      w->G[(size_t)k * w->ncol + w->cp + n] += s * sim_dot6(d->cdof + 6 * k, df);
    }
  }
}

/* --- entry points -------------------------------------------------------------------------------- */

void sim__rnea_deriv(sim_deriv *w, const sim_data *d, const double *qacc, double s) {
  const sim_model *m = w->m;
  sim_base_acceleration(m, w->acc);
  for (int i = 1; i < m->nbody; i++) {
    body_terms(w, d, qacc, i);
    body_share(w, d, i);
  }
  accumulate(w);
  dof_vectors(w, d);
  fill_state_columns(w, d, s);
  fill_body_parameters(w, d, s);
}

/* M(row, col) = S_row·(IC·S_col) for row on col's path, CRBA's columns from the composites */
void sim__rnea_mass_matrix(sim_deriv *w, const sim_data *d) {
  const sim_model *m = w->m;
  int nv = w->nv;
  memset(w->Mt, 0, (size_t)nv * (size_t)nv * sizeof(double));
  for (int col = 0; col < nv; col++) {
    const double *F = w->dof_ics + 6 * col;
    w->Mt[col * nv + col] = sim_dot6(d->cdof + 6 * col, F) + m->joints[m->dof_joint[col]].armature;
    for (int row = m->dof_parent[col]; row >= 0; row = m->dof_parent[row]) {
      double value = sim_dot6(d->cdof + 6 * row, F);
      w->Mt[row * nv + col] = value;
      w->Mt[col * nv + row] = value;
    }
  }
}
