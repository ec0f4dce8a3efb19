/* sim/deriv/contact_round_deriv.c: derivative of the rows of a contact between two round shapes
 * (a sphere or a capsule against a sphere or a capsule) or a sphere or a capsule and a box
 * (sim/collision_primitive.c: a capsule against a box is one or two of its spheres against the
 * box), both bodies free to move, at fixed acceleration a: the contact's
 * part of ∂(Jᵀf)/∂[δq | v] for the solver's optimality condition (constraint_deriv.c).
 * contact_deriv.c calls it for these pairs.
 *
 * Forward. Every such pair is two spheres of radii r₁, r₂ at points c₁ of body 1 and c₂ of body
 * 2 (a sphere's centre; the point of a capsule's segment o + x·h, x in [−1, 1], nearest the
 * other shape; a box's point nearest the sphere's centre, outside it, radius 0):
 *   δ = c₂ − c₁,  L = |δ|,  n = δ/L,  dist = L − r₁ − r₂,  p = c₁ + n·(r₁ + dist/2),
 * the tangents from n alone (sim/contact_frame.c: t₁ = g/|g|, g = e − (n·e)·n with e the world's
 * y, or z when |n_y| ≥ ½; t₂ = n × t₁), and the four pyramid edges Jₑ = dₑᵀ·(J_p(2, p) − J_p(1, p)),
 * dₑ = n ± μ·tₖ, with the plane pairs' rows (contact_deriv.c).
 *
 * Derivative. Turning dof i by ε moves the material point at c_b of each body it moves (σ_b = 1)
 * by R_b = σ_b·(S_i at c_b) and turns a direction u fixed in it by ∂u = σ_b·ω_i × u. A point
 * that slides along u (a capsule's half axis h with |x| < 1; a box's axis along which the point
 * lies inside the box: two on a face, one on an edge, none at a corner) stays nearest, u·δ = 0
 * (segment_params' last solve holds it for whichever parameter is inside), so the parameters'
 * ∂y solve, one equation per direction,
 *   ∂u·δ + u·(R₂ − R₁ + Σ_(u' of 2) ∂y'·u' − Σ_(u' of 1) ∂y'·u') = 0,
 * and ∂c_b = R_b + Σ ∂y·u, ∂δ = ∂c₂ − ∂c₁, ∂dist = n·∂δ, ∂n = (∂δ − n·∂dist)/L,
 * ∂p = ∂c₁ + ∂n·(r₁ + dist/2) + n·∂dist/2, ∂g = −(∂n·e)·n − (n·e)·∂n, ∂t₁ = (1 − t₁t₁ᵀ)·∂g/|g|,
 * ∂t₂ = ∂n × t₁ + n × ∂t₁. With Tw_b(x) = Σ Sₖxₖ over the dofs that move b and X̃_{i,b}(x) the
 * same sum over the dofs i carries:
 *   ∂(Jₑ·x)/∂q_i = ∂dₑ·rel(x) + dₑ·[(σ₂·S_i × X̃_{i,2} − σ₁·S_i × X̃_{i,1})_at p + W(x) × ∂p],
 * rel(x) = (Tw₂ − Tw₁)(x) at p, W its angular part; the edges' forces then as for a plane, and
 * the generalized force τₖ = (σ₂ₖ − σ₁ₖ)·Sₖ·Φ, Φ = [p × F; F], F = Σ fₑ·dₑ, changes by
 *   ∂τₖ/∂q_i = (σ₂ₖ − σ₁ₖ)·(Sₖ·[∂p × F + p × G; G] − (i carries k ? Sₖ·(S_i ×* Φ) : 0)),
 * G = Σ fₑ·∂dₑ. Kinks, held like the rows' states: a sliding point reaching its segment's end
 * or a box's point its face's edge, a contact appearing or vanishing, the tangent's hint
 * switching at |n_y| = ½; coincident centres (the normal falls back to the axes' cross
 * product) and a sphere's centre inside the box have none (contact_deriv.c refuses them). */
#include "sim/deriv/internal.h"
#include "sim/spatial.h"

#include <math.h>
#include <string.h>

/* the value at p of a twist [ω; v] (about the origin): v + ω × p */
static void at_point(double out[3], const double twist[6], const double p[3]) {
  double wp[3];
  sim_cross3(wp, twist, p);
  for (int r = 0; r < 3; r++) {
    out[r] = twist[3 + r] + wp[r];
  }
}

/* the last dof that moves body b, -1 for none (a welded chain takes its parent's) */
static int last_dof(const sim_model *m, int b) {
  for (; b > 0; b = m->bodies[b].parent) {
    if (m->bodies[b].dofnum > 0) {
      return m->bodies[b].dofadr + m->bodies[b].dofnum - 1;
    }
  }
  return -1;
}

/* flag[t] = 1 when dof dofs[t] moves body b */
static void moves(const sim_model *m, int b, const int *dofs, int n, double *flag) {
  memset(flag, 0, (size_t)n * sizeof(double));
  for (int k = last_dof(m, b); k >= 0; k = m->dof_parent[k]) {
    for (int t = 0; t < n; t++) {
      flag[t] = dofs[t] == k ? 1 : flag[t];
    }
  }
}

/* 1 when dof i carries dof k (k on i's subtree, or both of one ball's rotation) */
static int carries(const sim_deriv *w, int i, int k) {
  if (w->rotgroup[i] >= 0 && w->rotgroup[i] == w->rotgroup[k]) {
    return 1;
  }
  for (; k >= 0; k = w->m->dof_parent[k]) {
    if (k == i) {
      return 1;
    }
  }
  return 0;
}

/* X̃_{t,b}(x) per dof t of the list (6 each; zero where the dof does not move b) and the total
 * twist Tw_b(x): sums from the chain's end, a ball's dofs taking their group's (as
 * contact_deriv.c's carried_sums) */
static void carried_sums(const sim_deriv *w, const sim_data *d, const int *dofs, int n,
                         const double *flag, const double *x, double *sum, double total[6]) {
  double acc[6] = {0};
  for (int t = n - 1; t >= 0; t--) {
    const double *S = d->cdof + 6 * dofs[t];
    for (int r = 0; r < 6 && flag[t] != 0; r++) {
      acc[r] += S[r] * x[dofs[t]];
    }
    for (int r = 0; r < 6; r++) {
      sum[6 * t + r] = flag[t] != 0 ? acc[r] : 0;
    }
  }
  memcpy(total, acc, sizeof acc);
  for (int t = 0; t < n; t++) {
    int g = w->rotgroup[dofs[t]];
    for (int u = 0; u < t && g >= 0 && g != dofs[t]; u++) {
      if (dofs[u] == g) {
        memcpy(sum + 6 * t, sum + 6 * u, 6 * sizeof(double));
      }
    }
  }
}

/* one side of the pair: its body, its sphere's centre c (a box's nearest point), and the
 * directions the point slides along while staying nearest (a capsule's half axis h inside the
 * segment; a box's axes along which the point is inside the box: two on a face, one on an edge,
 * none at a corner) */
typedef struct side {
  int body, ndir;
  double c[3], u[3][3];
} side;

static side side_of(const sim_model *m, const sim_data *d, int geom, const double c[3]) {
  const sim_geom *g = &m->geoms[geom];
  const double *gm = d->geom_xmat + 9 * geom, *o = d->geom_xpos + 3 * geom;
  side s = {.body = g->body, .ndir = 0};
  double rel[3];
  for (int q = 0; q < 3; q++) {
    s.c[q] = c[q];
    rel[q] = c[q] - o[q];
  }
  if (g->type == SIM_GEOM_CAPSULE) {
    double h[3];
    for (int q = 0; q < 3; q++) {
      h[q] = gm[3 * q + 2] * g->size[1];
    }
    double x = sim_dot3(rel, h) / sim_dot3(h, h);
    if (fabs(x) < 1 - 1e-9) { /* at an end the point is fixed in the body */
      memcpy(s.u[s.ndir++], h, sizeof h);
    }
  } else if (g->type == SIM_GEOM_BOX) {
    for (int j = 0; j < 3; j++) {
      double axis[3] = {gm[j], gm[3 + j], gm[6 + j]};
      if (fabs(sim_dot3(rel, axis)) < g->size[j] * (1 - 1e-9)) {
        memcpy(s.u[s.ndir++], axis, sizeof axis);
      }
    }
  }
  return s;
}

/* x ← A⁻¹·x for the n ≤ 4 sliding parameters (Gaussian elimination with partial pivoting) */
static void solve_small(double A[4][4], double *x, int n) {
  for (int c = 0; c < n; c++) {
    int piv = c;
    for (int r = c + 1; r < n; r++) {
      piv = fabs(A[r][c]) > fabs(A[piv][c]) ? r : piv;
    }
    for (int k = 0; k < n; k++) {
      double t = A[c][k];
      A[c][k] = A[piv][k], A[piv][k] = t;
    }
    double t = x[c];
    x[c] = x[piv], x[piv] = t;
    for (int r = c + 1; r < n; r++) {
      double f = A[r][c] / A[c][c];
      for (int k = c; k < n; k++) {
        A[r][k] -= f * A[c][k];
      }
      x[r] -= f * x[c];
    }
  }
  for (int r = n - 1; r >= 0; r--) {
    for (int k = r + 1; k < n; k++) {
      x[r] -= A[r][k] * x[k];
    }
    x[r] /= A[r][r];
  }
}

/* ∂c₁ and ∂δ for dof t (S its axis): the material points' motions R_b, then the sliding
 * parameters from u·δ = 0 per direction u: ∂u·δ + u·∂δ = 0 with
 * ∂δ = R₂ − R₁ + Σ_(u' of side 2) ∂y'·u' − Σ_(u' of side 1) ∂y'·u', ∂u = σ_b·ω × u */
static void point_slopes(const double *S, const side *s1, const side *s2, double f1, double f2,
                         const double delta[3], double dc1[3], double ddelta[3]) {
  const side *sides[2] = {s1, s2};
  const double flags[2] = {f1, f2};
  double R[2][3], U[4][3], sign[4], A[4][4], y[4];
  int n = 0;
  for (int b = 0; b < 2; b++) {
    at_point(R[b], S, sides[b]->c);
    for (int q = 0; q < 3; q++) {
      R[b][q] *= flags[b];
    }
    for (int j = 0; j < sides[b]->ndir; j++, n++) {
      double du[3];
      memcpy(U[n], sides[b]->u[j], sizeof U[n]);
      sign[n] = b ? 1 : -1;
      sim_cross3(du, S, U[n]);
      y[n] = -flags[b] * sim_dot3(du, delta);
    }
  }
  for (int q = 0; q < 3; q++) {
    ddelta[q] = R[1][q] - R[0][q];
    dc1[q] = R[0][q];
  }
  for (int r = 0; r < n; r++) {
    y[r] -= sim_dot3(U[r], ddelta);
    for (int c = 0; c < n; c++) {
      A[r][c] = sign[c] * sim_dot3(U[r], U[c]);
    }
  }
  solve_small(A, y, n);
  for (int r = 0; r < n; r++) {
    for (int q = 0; q < 3; q++) {
      ddelta[q] += sign[r] * y[r] * U[r][q];
      dc1[q] += sign[r] < 0 ? y[r] * U[r][q] : 0;
    }
  }
}

/* per dof t of the list: ∂dist, ∂p, ∂n and the tangents' ∂t₁, ∂t₂ (the top of the file) */
static void geometry_slopes(const sim_data *d, const int *dofs, int n, const side *s1,
                            const side *s2, const double *f1, const double *f2,
                            const double frame[9], double L, double r1, double dist,
                            double *ddist, double *dp, double *dn, double *dt) {
  const double *nrm = frame, *t1 = frame + 3;
  double e[3] = {0, 0, 0}, delta[3];
  e[nrm[1] < 0.5 && nrm[1] > -0.5 ? 1 : 2] = 1;
  double en = sim_dot3(e, nrm), u[3];
  for (int q = 0; q < 3; q++) {
    u[q] = e[q] - en * nrm[q];
    delta[q] = nrm[q] * L;
  }
  double ulen = sqrt(sim_dot3(u, u));
  for (int t = 0; t < n; t++) {
    double dc1[3], ddelta[3];
    point_slopes(d->cdof + 6 * dofs[t], s1, s2, f1[t], f2[t], delta, dc1, ddelta);
    ddist[t] = sim_dot3(nrm, ddelta);
    double *dnt = dn + 3 * t, du[3];
    for (int q = 0; q < 3; q++) {
      dnt[q] = (ddelta[q] - nrm[q] * ddist[t]) / L;
      dp[3 * t + q] = dc1[q] + dnt[q] * (r1 + 0.5 * dist) + 0.5 * nrm[q] * ddist[t];
    }
    double edn = sim_dot3(e, dnt);
    for (int q = 0; q < 3; q++) {
      du[q] = -edn * nrm[q] - en * dnt[q];
    }
    double along = sim_dot3(t1, du), *d1 = dt + 6 * t, a[3], b[3];
    for (int q = 0; q < 3; q++) {
      d1[q] = (du[q] - along * t1[q]) / ulen;
    }
    sim_cross3(a, dnt, t1);
    sim_cross3(b, nrm, d1);
    for (int q = 0; q < 3; q++) {
      d1[3 + q] = a[q] + b[q];
    }
  }
}

/* ∂(J_p(2) − J_p(1))·x at fixed x per dof t (3 each), and rel(x) = (Tw₂ − Tw₁)(x) at p */
static void relative_slopes(const sim_deriv *w, const sim_data *d, const int *dofs, int n,
                            const double *f1, const double *f2, const double *x,
                            const double p[3], const double *dp, double *sum1, double *sum2,
                            double rel[3], double *out) {
  double T1[6], T2[6], T[6];
  carried_sums(w, d, dofs, n, f1, x, sum1, T1);
  carried_sums(w, d, dofs, n, f2, x, sum2, T2);
  for (int r = 0; r < 6; r++) {
    T[r] = T2[r] - T1[r];
  }
  at_point(rel, T, p);
  for (int t = 0; t < n; t++) {
    const double *S = d->cdof + 6 * dofs[t];
    double turn1[6], turn2[6], turn[6], u[3], wdp[3];
    sim_cross_motion(turn1, S, sum1 + 6 * t);
    sim_cross_motion(turn2, S, sum2 + 6 * t);
    for (int r = 0; r < 6; r++) {
      turn[r] = f2[t] * turn2[r] - f1[t] * turn1[r];
    }
    at_point(u, turn, p);
    sim_cross3(wdp, T, dp + 3 * t);
    for (int q = 0; q < 3; q++) {
      out[3 * t + q] = u[q] + wdp[q];
    }
  }
}

void sim__contact_round_deriv(sim_deriv *w, const sim_data *d, int c, const double *a,
                              double *Rc) {
  const sim_model *m = w->m;
  int nv = w->nv, ncol = w->ncol, row = d->con_efc[c];
  const int *dofs = d->efc_ind + (size_t)row * nv;
  int n = d->efc_nnz[row];
  int gi1 = d->con_geom[2 * c], gi2 = d->con_geom[2 * c + 1];
  const double *frame = d->con_frame + 9 * c, *nrm = frame, *p = d->con_pos + 3 * c;
  double dist = d->con_dist[c], r1 = m->geoms[gi1].size[0];
  double r2 = m->geoms[gi2].type == SIM_GEOM_BOX ? 0 : m->geoms[gi2].size[0];
  double c1[3], c2[3], L = dist + r1 + r2;
  for (int q = 0; q < 3; q++) {
    c1[q] = p[q] - nrm[q] * (r1 + 0.5 * dist);
    c2[q] = p[q] + nrm[q] * (r2 + 0.5 * dist);
  }
  side s1 = side_of(m, d, gi1, c1), s2 = side_of(m, d, gi2, c2);
  sim_contact_coefs k = sim__contact_coefs(m, d, c, row);
  double *f1 = w->con_work, *f2 = f1 + nv, *ddist = f2 + nv, *dp = ddist + nv, *dn = dp + 3 * nv;
  double *dt = dn + 3 * nv, *Ja = dt + 6 * nv, *Jv = Ja + 3 * nv, *sum1 = Jv + 3 * nv;
  double *sum2 = sum1 + 6 * nv, pa[3], pv[3];
  moves(m, s1.body, dofs, n, f1);
  moves(m, s2.body, dofs, n, f2);
  geometry_slopes(d, dofs, n, &s1, &s2, f1, f2, frame, L, r1, dist, ddist, dp, dn, dt);
  relative_slopes(w, d, dofs, n, f1, f2, a, p, dp, sum1, sum2, pa, Ja);
  relative_slopes(w, d, dofs, n, f1, f2, d->qvel, p, dp, sum1, sum2, pv, Jv);
  double F[3] = {0};
  for (int e = 0; e < 4; e++) { /* the edges: n + μt₁, n − μt₁, n + μt₂, n − μt₂ */
    const double *J = d->efc_J + (size_t)(row + e) * nv, sign = e % 2 ? -k.mu : k.mu;
    double de[3];
    sim_edge_column col = {.dist = dist};
    if (!sim__edge_head(w, d, &k, row, e, nrm, frame, dofs, n, a, F, de, &col)) {
      continue;
    }
    for (int u = 0; u < n; u++) { /* column dofs[u]: ∂fₑ/∂q and ∂fₑ/∂v, spread by Jₑᵀ */
      double dde[3];
      for (int q = 0; q < 3; q++) {
        dde[q] = dn[3 * u + q] + sign * dt[6 * u + 3 * (e / 2) + q];
      }
      col.ddist = ddist[u];
      col.dJa = sim_dot3(de, Ja + 3 * u) + sim_dot3(dde, pa);
      col.dJv = sim_dot3(de, Jv + 3 * u) + sim_dot3(dde, pv);
      sim__edge_column(w, &k, &col, J, dofs, n, u, Rc);
    }
  }
  /* the axes, the point and the edges' directions under the force F = Σ fₑ·dₑ */
  double Phi[6];
  sim_cross3(Phi, p, F);
  memcpy(Phi + 3, F, sizeof F);
  for (int u = 0; u < n; u++) {
    int i = dofs[u];
    double torque[6] = {0}, turned[6], G[3] = {0}, pG[3];
    sim_cross3(torque, dp + 3 * u, F);
    for (int e = 0; e < 4; e++) { /* G = Σ fₑ·∂dₑ */
      double f = w->efc_f[row + e], sign = e % 2 ? -k.mu : k.mu;
      for (int q = 0; q < 3; q++) {
        G[q] += f * (dn[3 * u + q] + sign * dt[6 * u + 3 * (e / 2) + q]);
      }
    }
    sim_cross3(pG, p, G);
    for (int q = 0; q < 3; q++) {
      torque[q] += pG[q];
      torque[3 + q] += G[q];
    }
    sim_cross_force(turned, d->cdof + 6 * i, Phi);
    for (int s = 0; s < n; s++) {
      int kk = dofs[s];
      double sgn = f2[s] - f1[s];
      if (sgn == 0) {
        continue;
      }
      const double *S = d->cdof + 6 * kk;
      double v = sim_dot6(S, torque);
      if (carries(w, i, kk)) {
        v -= sim_dot6(S, turned);
      }
      Rc[(size_t)kk * ncol + i] += sgn * v;
    }
  }
}
