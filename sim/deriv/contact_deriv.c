/* sim/deriv/contact_deriv.c: which contacts have derivatives (sim__contact_check, naming the
 * pair that has none), and the derivative of the contact rows (sim/collision.c's geometry,
 * sim/constraint.c's rows) for a plane against a sphere, a capsule or a box (two round shapes
 * and a sphere or a capsule against a box: contact_round_deriv.c), at fixed
 * acceleration a: the contact's part of ∂(Jᵀf)/∂[δq | v] for the solver's optimality condition
 * (constraint_deriv.c).
 *
 * Forward. The plane belongs to the world, so its normal n and tangents t₁, t₂ are constant. The
 * shape touches it at a point c fixed in its body b (a sphere's centre, the centre of a capsule's
 * end, a box's corner) with radius r (0 for a corner):
 *   dist = n·(c − p₀) − r,   p = c − n·(r + dist/2)   (the midpoint between the surfaces),
 * and its four pyramid edges are the rows Jₑ = dₑᵀ·J_p(b, p), dₑ = n ± μ·tₖ, with
 *   arefₑ = −b·(Jₑ·v) − k·imp(dist)·dist,  R = 2μ²·(1 − imp)·(1 + μ²)·tran/imp,  D = 1/R,
 *   fₑ = −D·(Jₑ·a − arefₑ) in the quadratic zone (else 0, the edge pulling away).
 * J_p(b, p)·x = V(x) + W(x) × p, (W, V) = Σₖ Sₖ·xₖ over the dofs k that move b (at the origin).
 *
 * Derivative. Turning dof i (of b's chain) by ε moves c by ∂c = S_i,lin + S_i,ang × c, so
 *   ∂dist = n·∂c,  ∂p = ∂c − n·∂dist/2,
 * and turns the axes it carries: ∂(Σₖ Sₖxₖ) = S_i × X̃_i(x), X̃_i(x) = Σ of Sₖxₖ over the dofs i
 * carries (its descendants on the chain, its whole ball). So
 *   ∂(Jₑ·x)/∂q_i = dₑ·[(S_i × X̃_i(x))_at p + W(x) × ∂p],
 *   ∂fₑ/∂q_i = −∂D·jarₑ − D·∂(Jₑ·a) + D·∂arefₑ,  ∂arefₑ = −b·∂(Jₑ·v) − k·(imp + imp'·dist)·∂dist,
 *   ∂D/∂dist = D²·2μ²·(1 + μ²)·tran·imp'/imp²,   ∂fₑ/∂v_j = −b·D·Jₑ,j,
 * and the generalized force of F = Σₑ fₑ·dₑ at p, τₖ = Sₖ·Φ, Φ = [p × F; F], changes as
 *   ∂τₖ/∂q_i = Sₖ·[∂p × F; 0] − (k carried by i ? Sₖ·(S_i ×* Φ) : 0).
 * A capsule's tangents follow its axis a (collision.c's tangent hint): t₁ = u/|u|,
 * u = a − (a·n)·n, t₂ = n × t₁, so ∂t₁ = (1 − t₁t₁ᵀ)(1 − nnᵀ)(S_i,ang × a)/|u|, ∂t₂ = n × ∂t₁,
 * and its edges turn, ∂dₑ = ±μ·∂tₖ: a term ∂dₑ·(J_p·x) in ∂(Jₑ·x), and a force Σₑ fₑ·∂dₑ at p in
 * ∂τ. A sphere's and a box's tangents depend on n alone.
 * Kinks: a contact appearing or vanishing (a corner touching down), an edge starting to pull
 * away, and the contact set itself are held, as the rows' states are. */
#include "sim/collision.h"
#include "sim/constraint.h"
#include "sim/deriv/internal.h"
#include "sim/spatial.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *type_name(int type) {
  static const char *const names[] = {"plane", "sphere", "capsule", "box", "cylinder", "mesh"};
  return type >= 0 && type <= SIM_GEOM_MESH ? names[type] : "shape";
}

static int round_shape(int type) {
  return type == SIM_GEOM_SPHERE || type == SIM_GEOM_CAPSULE;
}

/* the last dof that moves body b, -1 for none */
static int moving_dof(const sim_model *m, int b) {
  for (; b > 0; b = m->bodies[b].parent) {
    if (m->bodies[b].dofnum > 0) {
      return m->bodies[b].dofadr + m->bodies[b].dofnum - 1;
    }
  }
  return -1;
}

/* A capsule against a box is one or two of the capsule's spheres against the box
 * (sim/collision_primitive.c): each has derivatives when its centre is an end of the segment,
 * or the segment's point nearest the box (u·δ = 0 along the axis) with the box's point on an
 * edge or at a corner; not where a rule places it inside the segment (the second point of a
 * segment crossing an edge, where it leaves the box's slab), nor inside the box. */
static const char *capsule_box_problem(const sim_model *m, const sim_data *d, int c) {
  const int i1 = d->con_geom[2 * c], i2 = d->con_geom[2 * c + 1];
  const sim_geom *g1 = &m->geoms[i1], *g2 = &m->geoms[i2];
  const double *n = d->con_frame + 9 * c, *p = d->con_pos + 3 * c, dist = d->con_dist[c];
  const double *m1 = d->geom_xmat + 9 * i1, *o1 = d->geom_xpos + 3 * i1;
  const double *m2 = d->geom_xmat + 9 * i2, *o2 = d->geom_xpos + 3 * i2;
  double c1[3], c2[3], h[3], r1[3], r2[3];
  for (int q = 0; q < 3; q++) {
    c1[q] = p[q] - n[q] * (g1->size[0] + 0.5 * dist);
    c2[q] = p[q] + n[q] * 0.5 * dist;
    h[q] = m1[3 * q + 2] * g1->size[1];
    r1[q] = c1[q] - o1[q];
    r2[q] = c2[q] - o2[q];
  }
  if (!(dist + g1->size[0] > 1e-12)) {
    return "the capsule's segment is inside the box";
  }
  double x = sim_dot3(r1, h) / sim_dot3(h, h);
  if (fabs(x) >= 1 - 1e-9) {
    return NULL; /* an end: a sphere fixed in the capsule against the box */
  }
  int free_axes = 0;
  for (int j = 0; j < 3; j++) {
    double axis[3] = {m2[j], m2[3 + j], m2[6 + j]};
    free_axes += fabs(sim_dot3(r2, axis)) < g2->size[j] * (1 - 1e-9);
  }
  double hn = fabs(sim_dot3(h, n)) / sqrt(sim_dot3(h, h));
  if (hn > 1e-9) {
    return "the capsule's contact point is placed inside its segment by a rule, not nearest "
           "the box (the second point of a segment across an edge or leaving the box)";
  }
  return free_axes <= 1 ? NULL
                        : "the capsule lies along a face (its nearest points are not unique)";
}

/* why contact c has no derivatives, or NULL when it has them: a plane that no dof moves against
 * a sphere, a capsule or a box, two round shapes, a sphere or a capsule against a box from
 * outside (contact_round_deriv.c) */
static const char *pair_problem(const sim_model *m, const sim_data *d, int c) {
  const sim_geom *g1 = &m->geoms[d->con_geom[2 * c]], *g2 = &m->geoms[d->con_geom[2 * c + 1]];
  if (g1->type == SIM_GEOM_PLANE) {
    if (g2->type != SIM_GEOM_SPHERE && g2->type != SIM_GEOM_CAPSULE && g2->type != SIM_GEOM_BOX) {
      return "a plane has derivatives against a sphere, a capsule or a box";
    }
    return moving_dof(m, g1->body) >= 0 ? "the plane's body moves (only a fixed plane has them)"
                                        : NULL;
  }
  if (g1->type == SIM_GEOM_SPHERE && g2->type == SIM_GEOM_BOX) {
    return d->con_dist[c] + g1->size[0] > 1e-12 ? NULL
                                                 : "the sphere's centre is inside the box";
  }
  if (g1->type == SIM_GEOM_CAPSULE && g2->type == SIM_GEOM_BOX) {
    return capsule_box_problem(m, d, c);
  }
  if (!round_shape(g1->type) || !round_shape(g2->type)) {
    return "pairs with derivatives: a fixed plane against a sphere, a capsule or a box; a "
           "sphere or a capsule against a sphere or a capsule; a sphere or a capsule against a "
           "box";
  }
  /* the normal is the centres' direction; where they meet it falls back to the axes' cross
   * product, which does not follow the centres */
  return d->con_dist[c] + g1->size[0] + g2->size[0] > 1e-12 ? NULL
                                                             : "the two centres coincide";
}

int sim__contact_check(sim_deriv *w, const sim_data *d) {
  const sim_model *m = w->m;
  for (int c = 0; c < d->ncon; c++) {
    const sim_geom *g1 = &m->geoms[d->con_geom[2 * c]], *g2 = &m->geoms[d->con_geom[2 * c + 1]];
    const char *problem = pair_problem(m, d, c);
    int status = problem ? SIM_DERIV_ECONTACT : SIM_DERIV_OK;
    /* the rows below are the pyramid's four edges with R = 2μ²·R₀ (impratio 1, condim 3) */
    if (!problem && m->opt.cone != SIM_CONE_PYRAMIDAL) {
      problem = "the elliptic cone has no derivatives yet (the pyramidal one has)";
      status = SIM_DERIV_ECONE;
    } else if (!problem && m->opt.impratio != 1) {
      problem = "impratio other than 1 has no derivatives yet";
      status = SIM_DERIV_ECONE;
    } else if (!problem && d->con_dim[c] != 3) {
      problem = "condim 1 (frictionless) has no derivatives yet (condim 3 has)";
      status = SIM_DERIV_ECONE;
    }
    if (problem) {
      snprintf(w->detail, sizeof w->detail, "contact %d, %s '%s' against %s '%s': %s", c,
               type_name(g1->type), g1->name, type_name(g2->type), g2->name, problem);
      return status;
    }
  }
  return SIM_DERIV_OK;
}

/* The velocity-like vector X̃_i(x) = Σ Sₖ·xₖ over the dofs i carries, for every dof of the chain
 * (ascending, n entries): sums from the chain's end, a ball's dofs taking their group's. */
static void carried_sums(const sim_deriv *w, const sim_data *d, const int *dofs, int n,
                         const double *x, double *sum) {
  double acc[6] = {0};
  for (int t = n - 1; t >= 0; t--) {
    const double *S = d->cdof + 6 * dofs[t];
    for (int r = 0; r < 6; r++) {
      acc[r] += S[r] * x[dofs[t]];
    }
    memcpy(sum + 6 * t, acc, sizeof acc);
  }
  for (int t = 0; t < n; t++) { /* a ball's (or free rotation's) dofs carry each other */
    int g = w->rotgroup[dofs[t]];
    if (g >= 0 && g != dofs[t]) {
      for (int u = 0; u < t; u++) {
        if (dofs[u] == g) {
          memcpy(sum + 6 * t, sum + 6 * u, 6 * sizeof(double));
        }
      }
    }
  }
}

/* the value at p of a twist [ω; v] (about the origin): v + ω × p */
static void at_point(double out[3], const double twist[6], const double p[3]) {
  double wp[3];
  sim_cross3(wp, twist, p);
  for (int r = 0; r < 3; r++) {
    out[r] = twist[3 + r] + wp[r];
  }
}

/* per chain dof i: ∂(J_p·x)/∂q_i at fixed x, given X̃ (sum), the total twist's ω and ∂p */
static void point_jacobian_slope(const sim_data *d, const int *dofs, int n, const double *sum,
                                 const double W[3], const double p[3], const double *dp,
                                 double *out) {
  for (int t = 0; t < n; t++) {
    double turn[6], u[3], wdp[3];
    sim_cross_motion(turn, d->cdof + 6 * dofs[t], sum + 6 * t);
    at_point(u, turn, p);
    sim_cross3(wdp, W, dp + 3 * t);
    for (int r = 0; r < 3; r++) {
      out[3 * t + r] = u[r] + wdp[r];
    }
  }
}

/* per chain dof, the turning of the contact's tangents, dt[6u ..] = (∂t₁, ∂t₂): zero but for a
 * capsule, whose tangent 1 follows its axis (the top of the file) */
static void tangent_turns(const sim_data *d, int c, const sim_geom *g2, const int *dofs, int n,
                          double *dt) {
  memset(dt, 0, 6 * (size_t)n * sizeof(double));
  if (g2->type != SIM_GEOM_CAPSULE) {
    return;
  }
  const double *nrm = d->con_frame + 9 * c, *t1 = nrm + 3;
  double axis[3], an, u[3];
  const double *gm = d->geom_xmat + 9 * d->con_geom[2 * c + 1];
  for (int q = 0; q < 3; q++) {
    axis[q] = gm[3 * q + 2];
  }
  an = sim_dot3(axis, nrm);
  for (int q = 0; q < 3; q++) {
    u[q] = axis[q] - an * nrm[q];
  }
  double len = sqrt(sim_dot3(u, u));
  for (int t = 0; t < n; t++) {
    double da[3], du[3], d1[3];
    sim_cross3(da, d->cdof + 6 * dofs[t], axis); /* S_i,ang × a */
    double dan = sim_dot3(da, nrm);
    for (int q = 0; q < 3; q++) {
      du[q] = da[q] - dan * nrm[q];
    }
    double along = sim_dot3(t1, du);
    for (int q = 0; q < 3; q++) {
      d1[q] = (du[q] - along * t1[q]) / len;
    }
    memcpy(dt + 6 * t, d1, sizeof d1);
    sim_cross3(dt + 6 * t + 3, nrm, d1);
  }
}

/* the four edges of contact c: Rc += their ∂(Jᵀf) at fixed a */
static void contact(sim_deriv *w, const sim_data *d, int c, const double *a, double *Rc) {
  const sim_model *m = w->m;
  int nv = w->nv, ncol = w->ncol, row = d->nefc - 4 * (d->ncon - c);
  const int *dofs = d->efc_ind + (size_t)row * nv;
  int n = d->efc_nnz[row];
  const sim_geom *g2 = &m->geoms[d->con_geom[2 * c + 1]];
  const double *frame = d->con_frame + 9 * c, *nrm = frame, *p = d->con_pos + 3 * c;
  double dist = d->con_dist[c], r = g2->type == SIM_GEOM_BOX ? 0 : g2->size[0], cpt[3];
  for (int k = 0; k < 3; k++) {
    cpt[k] = p[k] + nrm[k] * (r + 0.5 * dist); /* the point of the body that touches */
  }
  sim_contact_coefs k = sim__contact_coefs(m, d, c, row);
  /* per chain dof: ∂dist, ∂p, ∂(J_p·a), ∂(J_p·v), and the tangents' turning ∂t₁, ∂t₂ */
  double *ddist = w->con_work, *dp = ddist + nv, *Ja = dp + 3 * nv, *Jv = Ja + 3 * nv;
  double *sum = Jv + 3 * nv, *dt = sum + 6 * nv, pa[3], pv[3];
  tangent_turns(d, c, g2, dofs, n, dt);
  for (int t = 0; t < n; t++) {
    double dc[3];
    at_point(dc, d->cdof + 6 * dofs[t], cpt);
    ddist[t] = sim_dot3(nrm, dc);
    for (int q = 0; q < 3; q++) {
      dp[3 * t + q] = dc[q] - 0.5 * nrm[q] * ddist[t];
    }
  }
  carried_sums(w, d, dofs, n, a, sum);
  point_jacobian_slope(d, dofs, n, sum, sum, p, dp, Ja); /* sum's first entry: the whole twist */
  at_point(pa, sum, p);                                  /* J_p·a */
  carried_sums(w, d, dofs, n, d->qvel, sum);
  point_jacobian_slope(d, dofs, n, sum, sum, p, dp, Jv);
  at_point(pv, sum, p);                                  /* J_p·v */
  double F[3] = {0};
  for (int e = 0; e < 4; e++) { /* the edges: n + μt₁, n − μt₁, n + μt₂, n − μt₂ */
    const double *J = d->efc_J + (size_t)(row + e) * nv, sign = e % 2 ? -k.mu : k.mu;
    double de[3];
    sim_edge_column col = {.dist = dist};
    if (!sim__edge_head(w, d, &k, row, e, nrm, frame, dofs, n, a, F, de, &col)) {
      continue;
    }
    for (int u = 0; u < n; u++) { /* column dofs[u]: ∂fₑ/∂q and ∂fₑ/∂v, spread by Jₑᵀ */
      const double *ddt = dt + 6 * u + 3 * (e / 2);
      col.ddist = ddist[u];
      col.dJa = sim_dot3(de, Ja + 3 * u) + sign * sim_dot3(ddt, pa);
      col.dJv = sim_dot3(de, Jv + 3 * u) + sign * sim_dot3(ddt, pv);
      sim__edge_column(w, &k, &col, J, dofs, n, u, Rc);
    }
  }
  /* the axes and the point under the force F = Σ fₑ·dₑ: τₖ = Sₖ·[p × F; F] */
  double Phi[6];
  sim_cross3(Phi, p, F);
  memcpy(Phi + 3, F, sizeof F);
  for (int u = 0; u < n; u++) {
    int i = dofs[u];
    double torque[6] = {0}, turned[6], G[3] = {0}, pG[3];
    sim_cross3(torque, dp + 3 * u, F); /* [∂p × F; 0] */
    for (int e = 0; e < 4; e++) {      /* + [p × G; G], G = Σ fₑ·∂dₑ (a capsule's edges turn) */
      const double *ddt = dt + 6 * u + 3 * (e / 2);
      double f = w->efc_f[row + e] * (e % 2 ? -k.mu : k.mu);
      for (int q = 0; q < 3; q++) {
        G[q] += f * ddt[q];
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
      const double *S = d->cdof + 6 * kk;
      double v = sim_dot6(S, torque);
      if (kk >= i || (w->rotgroup[i] >= 0 && w->rotgroup[i] == w->rotgroup[kk])) {
        v -= sim_dot6(S, turned);
      }
      Rc[(size_t)kk * ncol + i] += v;
    }
  }
}

void sim__contact_rows_deriv(sim_deriv *w, const sim_data *d, const double *a, double *Rc) {
  for (int c = 0; c < d->ncon; c++) {
    if (w->m->geoms[d->con_geom[2 * c]].type == SIM_GEOM_PLANE) {
      contact(w, d, c, a, Rc);
    } else {
      sim__contact_round_deriv(w, d, c, a, Rc); /* sim__contact_check let only round pairs by */
    }
  }
}
