/* sim/solver.c: the constraint solver, primal conjugate gradient (MuJoCo's mjSOL_CG).
 *
 * Minimizes over the acceleration a
 *   f(a) = ½(a − a0)ᵀM(a − a0) + Σᵢ sᵢ(Jᵢ·a − arefᵢ)
 * (row costs sᵢ in constraint.c), a convex, piecewise quadratic function. Its gradient is
 *   ∇f = M(a − a0) − Jᵀ·force(a),  forceᵢ = −sᵢ'(Jᵢ·a − arefᵢ).
 * CG preconditioned by M (search direction from M⁻¹·∇f, Polak–Ribière, reset when negative),
 * started from the previous solution when it costs less than a0 (MuJoCo's warm start rule),
 * with the termination rule of MuJoCo (scaled improvement or gradient below the tolerance).
 * The line search is exact: along a direction f is a one-dimensional convex piecewise
 * quadratic, minimized by Newton steps inside a bracket until a step stays on its piece.
 * MuJoCo's line search stops earlier, at |f'| below 1 % of the tolerance; both reach the same
 * minimum when run to convergence. M·x and M⁻¹·x use the tree-sparse M and its LTDL factor
 * (crba.c). Nothing here allocates: every vector lives in sim_data. */
#include "sim/sim.h"

#include <math.h>
#include <string.h>

#define SOLVER_MINVAL 1e-15
#define LINESEARCH_MAXITER 50

static double dot(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    s += a[i] * b[i];
  }
  return s;
}

/* out[i] = J_i·x (− sub_i when sub is given), over each row's nonzeros (efc_ind) */
static void mul_j(const sim_model *m, const sim_data *d, double *out, const double *x,
                  const double *sub) {
  for (int i = 0; i < d->nefc; i++) {
    const double *J = d->efc_J + (size_t)i * m->nv;
    const int *ind = d->efc_ind + (size_t)i * m->nv;
    double s = 0;
    for (int k = 0; k < d->efc_nnz[i]; k++) {
      s += J[ind[k]] * x[ind[k]];
    }
    out[i] = s - (sub ? sub[i] : 0.0);
  }
}

/* out = Jᵀ·f, over each row's nonzeros */
static void mul_jt(const sim_model *m, const sim_data *d, double *out, const double *f) {
  memset(out, 0, (size_t)m->nv * sizeof(double));
  for (int i = 0; i < d->nefc; i++) {
    const double *J = d->efc_J + (size_t)i * m->nv;
    const int *ind = d->efc_ind + (size_t)i * m->nv;
    for (int k = 0; k < d->efc_nnz[i]; k++) {
      out[ind[k]] += J[ind[k]] * f[i];
    }
  }
}

/* forces, states and the constraint cost at jar = J·a − aref; qfrc_constraint = Jᵀ·force */
static double update_rows(const sim_model *m, sim_data *d, const double *jar) {
  double cost = 0;
  for (int i = 0; i < d->nefc; i++) {
    double x = jar[i], D = d->efc_D[i], R = d->efc_R[i], F = d->efc_frictionloss[i];
    d->efc_force[i] = -D * x;
    d->efc_state[i] = SIM_CSTATE_QUADRATIC;
    if (i < d->nf && x <= -R * F) {
      cost += -0.5 * R * F * F - F * x;
      d->efc_force[i] = F;
      d->efc_state[i] = SIM_CSTATE_LINEARNEG;
    } else if (i < d->nf && x >= R * F) {
      cost += -0.5 * R * F * F + F * x;
      d->efc_force[i] = -F;
      d->efc_state[i] = SIM_CSTATE_LINEARPOS;
    } else if (i >= d->nf && x >= 0) {
      d->efc_force[i] = 0;
      d->efc_state[i] = SIM_CSTATE_SATISFIED;
    } else {
      cost += 0.5 * D * x * x;
    }
  }
  mul_jt(m, d, d->qfrc_constraint, d->efc_force);
  return cost;
}

/* total cost at a = a0 + δ given M·δ (in Mdelta), δ and jar */
static double total_cost(const sim_model *m, sim_data *d, const double *delta,
                         const double *Mdelta, const double *jar) {
  return update_rows(m, d, jar) + 0.5 * dot(Mdelta, delta, m->nv);
}

/* --- line search ------------------------------------------------------------------------------ */

/* The cost along a + α·p as the quadratic piece c0 + c1·α + c2·α² holding at α (the pieces
 * change where a row changes state). gauss[3] is the Gauss term's quadratic. */
typedef struct piece {
  double c0, c1, c2;
} piece;

static piece piece_at(const sim_data *d, const double gauss[3], double alpha) {
  piece q = {gauss[0], gauss[1], gauss[2]};
  for (int i = 0; i < d->nefc; i++) {
    double x0 = d->efc_jar[i], v = d->efc_Jv[i], x = x0 + alpha * v;
    double D = d->efc_D[i], R = d->efc_R[i], F = d->efc_frictionloss[i];
    if (i < d->nf && x <= -R * F) { /* −½RF² − F·x */
      q.c0 += F * (-0.5 * R * F - x0);
      q.c1 += -F * v;
    } else if (i < d->nf && x >= R * F) { /* −½RF² + F·x */
      q.c0 += F * (-0.5 * R * F + x0);
      q.c1 += F * v;
    } else if (i < d->nf || x < 0) { /* ½D·x² */
      q.c0 += 0.5 * D * x0 * x0;
      q.c1 += D * x0 * v;
      q.c2 += 0.5 * D * v * v;
    }
  }
  return q;
}

static double piece_slope(piece q, double alpha) {
  return 2 * q.c2 * alpha + q.c1;
}

/* The exact minimizer of the cost along the search direction (0 when it is not a descent
 * direction). Newton on the piece at α lands on that piece's minimum; when the piece there is
 * the same, that point is the minimum of the convex whole. The bracket [lo, hi] of slopes
 * < 0 and > 0 keeps the iteration from cycling between pieces. */
static double line_search(const sim_data *d, const double gauss[3]) {
  double alpha = 0, lo = 0, hi = INFINITY;
  piece q = piece_at(d, gauss, 0);
  if (!(piece_slope(q, 0) < 0)) {
    return 0;
  }
  for (int it = 0; it < LINESEARCH_MAXITER; it++) {
    int newton = q.c2 > 0;
    double next = newton ? -q.c1 / (2 * q.c2) : INFINITY;
    if (!(next > lo && next < hi)) { /* outside the bracket: bisect, or expand */
      newton = 0;
      next = isfinite(hi) ? 0.5 * (lo + hi) : fmax(2 * lo, 1.0);
    }
    piece qn = piece_at(d, gauss, next);
    if (newton && qn.c0 == q.c0 && qn.c1 == q.c1 && qn.c2 == q.c2) {
      return next; /* the Newton point lies on its own piece: the minimum */
    }
    double slope = piece_slope(qn, next);
    if (slope < 0) {
      lo = next;
    } else if (slope > 0) {
      hi = next;
    } else {
      return next;
    }
    alpha = next;
    q = qn;
    if (hi - lo <= 1e-15 * fabs(hi)) {
      break; /* bracket at rounding: a kink is the minimum */
    }
  }
  return alpha;
}

/* --- CG --------------------------------------------------------------------------------------- */

/* gradient M·δ − qfrc_constraint and its preconditioned form M⁻¹·gradient */
static void update_gradient(const sim_model *m, sim_data *d) {
  for (int k = 0; k < m->nv; k++) {
    d->sol_grad[k] = d->sol_Mdelta[k] - d->qfrc_constraint[k];
    d->sol_Mgrad[k] = d->sol_grad[k];
  }
  sim_solve_m(m, d, d->sol_Mgrad);
}

static double rescale(const sim_model *m, double x) {
  return x / (m->meaninertia * (m->nv > 1 ? m->nv : 1));
}

/* the start: the previous solution when it costs less than a0 (cost of a0 is Σ s(J·a0 − aref)) */
static void warm_start(const sim_model *m, sim_data *d) {
  int nv = m->nv;
  double *delta = d->scratch;
  for (int k = 0; k < nv; k++) {
    delta[k] = d->qacc_warmstart[k] - d->qacc_smooth[k];
  }
  mul_j(m, d, d->efc_jar, d->qacc_warmstart, d->efc_aref);
  sim_mul_m(m, d, d->sol_Mdelta, delta);
  double cost_warm = total_cost(m, d, delta, d->sol_Mdelta, d->efc_jar);
  double cost_smooth = update_rows(m, d, d->efc_b);
  d->solver.warmstart = !(cost_warm > cost_smooth);
  if (d->solver.warmstart) {
    memcpy(d->qacc, d->qacc_warmstart, (size_t)nv * sizeof(double));
  } else {
    memcpy(d->qacc, d->qacc_smooth, (size_t)nv * sizeof(double));
    memcpy(d->efc_jar, d->efc_b, (size_t)d->nefc * sizeof(double));
    memset(d->sol_Mdelta, 0, (size_t)nv * sizeof(double));
  }
}

/* one CG step along sol_search; returns 0 when no step was possible */
static int cg_step(const sim_model *m, sim_data *d, double *cost) {
  int nv = m->nv;
  const double *p = d->sol_search;
  sim_mul_m(m, d, d->sol_Mv, p);
  mul_j(m, d, d->efc_Jv, p, NULL);
  /* Gauss term along p: ½δᵀMδ + α·pᵀMδ + ½α²·pᵀMp (δ = a − a0) */
  double delta_dot = 0;
  for (int k = 0; k < nv; k++) {
    delta_dot += (d->qacc[k] - d->qacc_smooth[k]) * d->sol_Mdelta[k];
  }
  const double gauss[3] = {0.5 * delta_dot, dot(p, d->sol_Mdelta, nv), 0.5 * dot(p, d->sol_Mv, nv)};
  double alpha = line_search(d, gauss);
  if (alpha == 0) {
    return 0;
  }
  /* recomputed rather than updated by α·Jv and α·Mv: stiff rows (D up to 1e9) turn drift of
   * a few ulps in J·a into visible force errors */
  for (int k = 0; k < nv; k++) {
    d->qacc[k] += alpha * p[k];
    d->scratch[k] = d->qacc[k] - d->qacc_smooth[k];
  }
  sim_mul_m(m, d, d->sol_Mdelta, d->scratch);
  mul_j(m, d, d->efc_jar, d->qacc, d->efc_aref);
  *cost = total_cost(m, d, d->scratch, d->sol_Mdelta, d->efc_jar);
  return 1;
}

static void cg(const sim_model *m, sim_data *d) {
  int nv = m->nv, iter = 0;
  for (int k = 0; k < nv; k++) {
    d->scratch[k] = d->qacc[k] - d->qacc_smooth[k];
  }
  double cost = total_cost(m, d, d->scratch, d->sol_Mdelta, d->efc_jar);
  update_gradient(m, d);
  for (int k = 0; k < nv; k++) {
    d->sol_search[k] = -d->sol_Mgrad[k];
  }
  d->solver.improvement = d->solver.gradient = 0;
  while (iter < m->opt.solver_iterations) {
    memcpy(d->sol_gradold, d->sol_grad, (size_t)nv * sizeof(double));
    memcpy(d->sol_Mgradold, d->sol_Mgrad, (size_t)nv * sizeof(double));
    double oldcost = cost;
    if (!cg_step(m, d, &cost)) {
      break;
    }
    update_gradient(m, d);
    iter++;
    d->solver.improvement = rescale(m, oldcost - cost);
    d->solver.gradient = rescale(m, sqrt(dot(d->sol_grad, d->sol_grad, nv)));
    if (d->solver.improvement < m->opt.solver_tolerance ||
        d->solver.gradient < m->opt.solver_tolerance) {
      break;
    }
    /* Polak–Ribière: β = gᵀ(M⁻¹g − M⁻¹g_old) / g_oldᵀM⁻¹g_old, reset when negative */
    double num = 0;
    for (int k = 0; k < nv; k++) {
      num += d->sol_grad[k] * (d->sol_Mgrad[k] - d->sol_Mgradold[k]);
    }
    double beta = fmax(0, num / fmax(SOLVER_MINVAL, dot(d->sol_gradold, d->sol_Mgradold, nv)));
    for (int k = 0; k < nv; k++) {
      d->sol_search[k] = -d->sol_Mgrad[k] + beta * d->sol_search[k];
    }
  }
  d->solver.iterations = iter;
  d->solver.cost = cost;
}

void sim_solve_constraints(const sim_model *m, sim_data *d) {
  int nv = m->nv;
  d->solver.nefc = d->nefc;
  d->solver.ncon = d->ncon;
  mul_j(m, d, d->efc_b, d->qacc_smooth, d->efc_aref);
  warm_start(m, d);
  cg(m, d);
  /* forces and states at the final a (cg left them there) */
  int nactive = 0;
  for (int i = 0; i < d->nefc; i++) {
    nactive += d->efc_state[i] != SIM_CSTATE_SATISFIED;
  }
  d->solver.nactive = nactive;
  memcpy(d->qacc_warmstart, d->qacc, (size_t)nv * sizeof(double));
}
