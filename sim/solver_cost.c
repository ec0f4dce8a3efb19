/* sim/solver_cost.c: the cost both constraint solvers minimize, its gradient, and the line
 * search along a direction (solver_internal.h).
 *
 * Over the acceleration a, with δ = a − a0 and jar = J·a − aref,
 *   f(a) = ½δᵀMδ + Σᵢ sᵢ(jar)
 * where the row costs sᵢ are (MuJoCo 2.2.2's primal problem, its Computation chapter):
 *  - a joint's friction (|force| <= F): ½D·x² while |x| < R·F, F·|x| − ½R·F² beyond;
 *  - a limit, a frictionless contact, a pyramid edge (force >= 0): ½D·x² when x < 0, else 0;
 *  - an elliptic contact, its rows x₀ (normal) and x₁, x₂ (tangents), mapped to the cone of the
 *    regularised forces by N = μ_r·x₀, Tⱼ = μ·xⱼ, T = |(T₁, T₂)|: no cost above the cone
 *    (N >= μ_r·T), ½Σ Dⱼ·xⱼ² below its dual (μ_r·N + T <= 0), and in between
 *    ½·D₀/(μ_r²(1 + μ_r²))·(N − μ_r·T)², the distance to the cone's surface.
 * The forces are −∂s/∂x; the gradient of f is M·δ − Jᵀ·force. f is convex and, along a line,
 * piecewise quadratic except in an elliptic cone's middle zone. Nothing here allocates. */
#include "sim/solver_internal.h"

#include <math.h>
#include <string.h>

#define COST_MINVAL 1e-15 /* MuJoCo's mjMINVAL */
#define LS_MAXITER 50     /* MuJoCo's line search: evaluations */
#define LS_TOLSCALE 0.01  /* ... and its slope tolerance relative to the solver's */

static double dot(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    s += a[i] * b[i];
  }
  return s;
}

double sim__solver_rescale(const sim_model *m, double x) {
  return x / (m->meaninertia * (m->nv > 1 ? m->nv : 1));
}

void sim__mul_j(const sim_model *m, const sim_data *d, double *out, const double *x,
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

/* --- the rows' states, forces and cost ------------------------------------------------------ */

/* The cone Hessian of an elliptic contact in its middle zone, ∂²s/∂x², dim × dim, for N, T, U
 * as above: Dm·diag(μ_r, μ, μ)·[1, −μ_r·Uᵀ/T; ·, μ_r·N/T³·U·Uᵀ + (μ_r² − μ_r·N/T)·I]·diag(...)
 * (symmetric; the first row's off-diagonal is −μ_r·U/T). */
static void cone_hessian(double *H, int dim, double mu, double fr, double Dm, double N, double T,
                         const double *U) {
  H[0] = 1;
  for (int j = 1; j < dim; j++) {
    H[j] = -mu / T * U[j];
  }
  for (int k = 1; k < dim; k++) {
    for (int j = k; j < dim; j++) {
      H[k * dim + j] = mu * N / (T * T * T) * U[j] * U[k];
    }
  }
  for (int j = 1; j < dim; j++) {
    H[j * (dim + 1)] += mu * mu - mu * N / T;
  }
  for (int k = 0; k < dim; k++) {
    const double sk = Dm * (k == 0 ? mu : fr);
    for (int j = k; j < dim; j++) {
      H[k * dim + j] *= sk * (j == 0 ? mu : fr);
    }
  }
  for (int k = 0; k < dim; k++) {
    for (int j = k + 1; j < dim; j++) {
      H[j * dim + k] = H[k * dim + j];
    }
  }
}

/* an elliptic contact's rows i.. i+dim−1; returns their cost */
static double update_cone(sim_data *d, int i, const double *jar, int hessian) {
  const int c = d->efc_id[i], dim = d->con_dim[c];
  const double mu = d->con_mu[c], fr = d->con_friction[c], *D = d->efc_D + i;
  double *force = d->efc_force + i, U[3], cost = 0;
  U[0] = jar[i] * mu;
  for (int j = 1; j < dim; j++) {
    U[j] = jar[i + j] * fr;
  }
  const double N = U[0], T = sqrt(dot(U + 1, U + 1, dim - 1));
  int state;
  if (N >= mu * T || (T <= 0 && N >= 0)) { /* above the cone: free */
    memset(force, 0, (size_t)dim * sizeof(double));
    state = SIM_CSTATE_SATISFIED;
  } else if (mu * N + T <= 0 || (T <= 0 && N < 0)) { /* below its dual: every row a spring */
    for (int j = 0; j < dim; j++) {
      cost += 0.5 * D[j] * jar[i + j] * jar[i + j];
    }
    state = SIM_CSTATE_QUADRATIC;
  } else { /* between: the distance to the cone's surface */
    const double Dm = D[0] / (mu * mu * (1 + mu * mu)), gap = N - mu * T;
    cost = 0.5 * Dm * gap * gap;
    force[0] = -Dm * gap * mu;
    for (int j = 1; j < dim; j++) {
      force[j] = -force[0] / T * U[j] * fr;
    }
    state = SIM_CSTATE_CONE;
    if (hessian) {
      cone_hessian(d->con_H + 9 * c, dim, mu, fr, Dm, N, T, U);
    }
  }
  for (int j = 0; j < dim; j++) {
    d->efc_state[i + j] = state;
  }
  return cost;
}

double sim__constraint_update(const sim_model *m, sim_data *d, const double *jar, int hessian) {
  double cost = 0;
  for (int i = 0; i < d->nefc; i++) {
    d->efc_force[i] = -d->efc_D[i] * jar[i];
  }
  for (int i = 0; i < d->nefc; i++) {
    const double x = jar[i], D = d->efc_D[i], R = d->efc_R[i], F = d->efc_frictionloss[i];
    if (i < d->ne) { /* an equality row: two-sided, always the spring */
      cost += 0.5 * D * x * x;
      d->efc_state[i] = SIM_CSTATE_QUADRATIC;
    } else if (i < d->ne + d->nf) { /* a joint's friction: the force is bounded by ±F */
      if (x <= -R * F) {
        cost += -0.5 * R * F * F - F * x;
        d->efc_force[i] = F;
        d->efc_state[i] = SIM_CSTATE_LINEARNEG;
      } else if (x >= R * F) {
        cost += -0.5 * R * F * F + F * x;
        d->efc_force[i] = -F;
        d->efc_state[i] = SIM_CSTATE_LINEARPOS;
      } else {
        cost += 0.5 * D * x * x;
        d->efc_state[i] = SIM_CSTATE_QUADRATIC;
      }
    } else if (d->efc_type[i] == SIM_CNSTR_CONTACT_ELLIPTIC) {
      cost += update_cone(d, i, jar, hessian);
      i += d->con_dim[d->efc_id[i]] - 1;
    } else if (x >= 0) { /* one-sided: pulling away is free */
      d->efc_force[i] = 0;
      d->efc_state[i] = SIM_CSTATE_SATISFIED;
    } else {
      cost += 0.5 * D * x * x;
      d->efc_state[i] = SIM_CSTATE_QUADRATIC;
    }
  }
  mul_jt(m, d, d->qfrc_constraint, d->efc_force);
  return cost;
}

/* the rows, the cost and the gradient at δ (scratch), M·δ and jar as they stand */
static void rows_and_gradient(const sim_model *m, sim_data *d, sim__solver_ctx *ctx, int hessian) {
  const int nv = m->nv;
  ctx->gauss[0] = 0.5 * dot(d->sol_Mdelta, d->scratch, nv);
  ctx->cost = sim__constraint_update(m, d, d->efc_jar, hessian) + ctx->gauss[0];
  ctx->ncone = 0;
  for (int i = 0; i < d->nefc; i++) {
    ctx->ncone += d->efc_type[i] == SIM_CNSTR_CONTACT_ELLIPTIC &&
                  d->efc_state[i] == SIM_CSTATE_CONE && d->con_efc[d->efc_id[i]] == i;
  }
  for (int k = 0; k < nv; k++) {
    d->sol_grad[k] = d->sol_Mdelta[k] - d->qfrc_constraint[k];
  }
}

void sim__solver_evaluate(const sim_model *m, sim_data *d, sim__solver_ctx *ctx, int hessian) {
  for (int k = 0; k < m->nv; k++) {
    d->scratch[k] = d->qacc[k] - d->qacc_smooth[k];
  }
  sim_mul_m(m, d, d->sol_Mdelta, d->scratch);
  sim__mul_j(m, d, d->efc_jar, d->qacc, d->efc_aref);
  rows_and_gradient(m, d, ctx, hessian);
}

/* the products are updated by the search's, not recomputed, as MuJoCo does: the two engines'
 * iterations then agree to rounding (a recomputed J·a differs from MuJoCo's updated one by a
 * few ulps, which CG stopped after 20 iterations carries into the next steps) */
void sim__solver_move(const sim_model *m, sim_data *d, sim__solver_ctx *ctx, double alpha,
                      int hessian) {
  for (int k = 0; k < m->nv; k++) {
    d->qacc[k] += alpha * d->sol_search[k];
    d->scratch[k] += alpha * d->sol_search[k];
    d->sol_Mdelta[k] += alpha * d->sol_Mv[k];
  }
  for (int i = 0; i < d->nefc; i++) {
    d->efc_jar[i] += alpha * d->efc_Jv[i];
  }
  rows_and_gradient(m, d, ctx, hessian);
}

void sim__solver_start(const sim_model *m, sim_data *d) {
  for (int k = 0; k < m->nv; k++) {
    d->sol_search[k] = -d->sol_Mgrad[k];
  }
  d->solver.improvement = d->solver.gradient = 0;
}

int sim__solver_done(const sim_model *m, sim_data *d, double oldcost, const sim__solver_ctx *ctx) {
  d->solver.improvement = sim__solver_rescale(m, oldcost - ctx->cost);
  d->solver.gradient = sim__solver_rescale(m, sqrt(dot(d->sol_grad, d->sol_grad, m->nv)));
  return d->solver.improvement < m->opt.solver_tolerance ||
         d->solver.gradient < m->opt.solver_tolerance;
}

/* --- the line search -------------------------------------------------------------------------- */

typedef struct search_point {
  double alpha, cost, slope, curvature;
} search_point;

/* Each row's cost along a + α·p as a quadratic (efc_quad: ½D·jar², D·jar·Jv, ½D·Jv², the whole
 * contact's sum for an elliptic one), and for an elliptic contact the figures of its middle
 * zone in the rows after its first: N and its rate (U₀, V₀), |T|², T·dT, |dT|² and Dm. */
static void prepare(const sim_model *m, sim_data *d, sim__solver_ctx *ctx) {
  const int nv = m->nv;
  const double *p = d->sol_search;
  ctx->gauss[1] = dot(p, d->sol_Mdelta, nv); /* gauss[0]: ½δᵀMδ, from the evaluation */
  ctx->gauss[2] = 0.5 * dot(p, d->sol_Mv, nv);
  for (int i = 0; i < d->nefc; i++) {
    const double *jar = d->efc_jar + i, *jv = d->efc_Jv + i, *D = d->efc_D + i;
    double *q = d->efc_quad + 3 * i;
    const double Dj = D[0] * jar[0];
    q[0] = jar[0] * Dj;
    q[1] = jv[0] * Dj;
    q[2] = jv[0] * D[0] * jv[0];
    if (d->efc_type[i] == SIM_CNSTR_CONTACT_ELLIPTIC) {
      const int c = d->efc_id[i], dim = d->con_dim[c];
      const double mu = d->con_mu[c], fr = d->con_friction[c];
      double uu = 0, uv = 0, vv = 0;
      for (int j = 1; j < dim; j++) {
        const double Djj = D[j] * jar[j];
        q[0] += jar[j] * Djj;
        q[1] += jv[j] * Djj;
        q[2] += jv[j] * D[j] * jv[j];
        const double u = jar[j] * fr, v = jv[j] * fr;
        uu += u * u, uv += u * v, vv += v * v;
      }
      q[3] = jar[0] * mu;
      q[4] = jv[0] * mu;
      q[5] = uu, q[6] = uv, q[7] = vv;
      q[8] = D[0] / (mu * mu * (1 + mu * mu));
      i += dim - 1;
    }
    q[0] *= 0.5;
    q[2] *= 0.5;
  }
}

static void add3(double *total, const double *q) {
  total[0] += q[0], total[1] += q[1], total[2] += q[2];
}

/* the cost at p->alpha with its first and second derivatives (MuJoCo's CGeval) */
static void evaluate_at(const sim_data *d, sim__solver_ctx *ctx, search_point *p) {
  const double alpha = p->alpha;
  double total[3] = {ctx->gauss[0], ctx->gauss[1], ctx->gauss[2]}, cost = 0, d1 = 0, d2 = 0;
  for (int i = 0; i < d->nefc; i++) {
    const double *q = d->efc_quad + 3 * i;
    const double x = d->efc_jar[i] + alpha * d->efc_Jv[i];
    if (i < d->ne) {
      add3(total, q);
    } else if (i < d->ne + d->nf) {
      const double F = d->efc_frictionloss[i], Rf = d->efc_R[i] * F;
      const double x0 = d->efc_jar[i], v = d->efc_Jv[i];
      if (-Rf < x && x < Rf) {
        add3(total, q);
      } else if (x <= -Rf) {
        const double lin[3] = {F * (-0.5 * Rf - x0), -F * v, 0};
        add3(total, lin);
      } else {
        const double lin[3] = {F * (-0.5 * Rf + x0), F * v, 0};
        add3(total, lin);
      }
    } else if (d->efc_type[i] == SIM_CNSTR_CONTACT_ELLIPTIC) {
      const int c = d->efc_id[i];
      const double mu = d->con_mu[c], N = q[3] + alpha * q[4];
      const double Tsq = q[5] + alpha * (2 * q[6] + alpha * q[7]);
      if (Tsq <= 0) {
        if (N < 0) {
          add3(total, q);
        }
      } else {
        const double T = sqrt(Tsq);
        if (N >= mu * T) {
          /* above the cone: nothing */
        } else if (mu * N + T <= 0) {
          add3(total, q);
        } else {
          const double N1 = q[4], T1 = (q[6] + alpha * q[7]) / T;
          const double T2 = q[7] / T - (q[6] + alpha * q[7]) * T1 / (T * T), Dm = q[8];
          cost += 0.5 * Dm * (N - mu * T) * (N - mu * T);
          d1 += Dm * (N - mu * T) * (N1 - mu * T1);
          d2 += Dm * ((N1 - mu * T1) * (N1 - mu * T1) + (N - mu * T) * (-mu * T2));
        }
      }
      i += d->con_dim[c] - 1;
    } else if (x < 0) {
      add3(total, q);
    }
  }
  p->cost = cost + alpha * alpha * total[2] + alpha * total[1] + total[0];
  p->slope = d1 + 2 * alpha * total[2] + total[1];
  p->curvature = d2 + 2 * total[2];
  if (!(p->curvature > 0)) { /* convex: rounding only */
    p->curvature = COST_MINVAL;
  }
  ctx->lsiter++;
}

/* the Newton point of p */
static search_point newton_from(const sim_data *d, sim__solver_ctx *ctx, const search_point *p) {
  search_point next = {.alpha = p->alpha - p->slope / p->curvature};
  evaluate_at(d, ctx, &next);
  return next;
}

/* moves the bracket end p to the candidate of the same slope sign nearest zero, and then its
 * Newton point into *next; returns 0 when none is better */
static int tighten(const sim_data *d, sim__solver_ctx *ctx, search_point *p,
                   const search_point cand[3], search_point *next) {
  int moved = 0;
  for (int i = 0; i < 3; i++) {
    if ((p->slope < 0 && cand[i].slope < 0 && p->slope < cand[i].slope) ||
        (p->slope > 0 && cand[i].slope > 0 && p->slope > cand[i].slope)) {
      *p = cand[i];
      moved = 1;
    }
  }
  if (moved) {
    *next = newton_from(d, ctx, p);
  }
  return moved;
}

double sim__line_search(const sim_model *m, sim_data *d, sim__solver_ctx *ctx) {
  const int nv = m->nv;
  ctx->lsiter = 0;
  const double snorm = sqrt(dot(d->sol_search, d->sol_search, nv));
  if (snorm < COST_MINVAL) {
    return 0;
  }
  const double scale = m->meaninertia * (nv > 1 ? nv : 1);
  const double gtol = m->opt.solver_tolerance * LS_TOLSCALE * snorm * scale;
  sim_mul_m(m, d, d->sol_Mv, d->sol_search);
  sim__mul_j(m, d, d->efc_Jv, d->sol_search, NULL);
  prepare(m, d, ctx);
  /* one Newton step from 0, kept unless it costs more */
  search_point p0 = {.alpha = 0};
  evaluate_at(d, ctx, &p0);
  search_point p1 = newton_from(d, ctx, &p0);
  if (p0.cost < p1.cost) {
    p1 = p0;
  }
  if (fabs(p1.slope) < gtol) {
    return p1.alpha;
  }
  /* Newton steps in the direction of descent until the slope changes sign */
  const int dir = p1.slope < 0 ? 1 : -1;
  search_point p2 = p1;
  int bracketed = 0;
  while (p1.slope * dir <= -gtol && ctx->lsiter < LS_MAXITER) {
    p2 = p1;
    bracketed = 1;
    p1 = newton_from(d, ctx, &p1);
    if (fabs(p1.slope) < gtol) {
      return p1.alpha;
    }
  }
  if (ctx->lsiter >= LS_MAXITER || !bracketed) {
    return p1.alpha;
  }
  /* [p1, p2] brackets the minimum: the best of the ends' Newton points and the midpoint */
  search_point p2next = p1, p1next = newton_from(d, ctx, &p1);
  while (ctx->lsiter < LS_MAXITER) {
    search_point mid = {.alpha = 0.5 * (p1.alpha + p2.alpha)};
    evaluate_at(d, ctx, &mid);
    const search_point cand[3] = {p1next, p2next, mid};
    int best = -1;
    for (int i = 0; i < 3; i++) {
      if (fabs(cand[i].slope) < gtol && (best < 0 || cand[i].cost < cand[best].cost)) {
        best = i;
      }
    }
    if (best >= 0) {
      return cand[best].alpha;
    }
    const int moved1 = tighten(d, ctx, &p1, cand, &p1next);
    const int moved2 = tighten(d, ctx, &p2, cand, &p2next);
    if (!moved1 && !moved2) { /* the bracket is at rounding: its middle */
      return mid.alpha;
    }
  }
  if (p1.cost <= p2.cost && p1.cost < p0.cost) {
    return p1.alpha;
  }
  if (p2.cost <= p1.cost && p2.cost < p0.cost) {
    return p2.alpha;
  }
  return 0;
}
