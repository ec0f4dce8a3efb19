/* sim/solver.c: the constraint solve (sim_solve_constraints) and its conjugate-gradient solver
 * (MuJoCo's mjSOL_CG); the Newton solver is in solver_newton.c, the cost and line search both
 * minimize with in solver_cost.c.
 *
 * Both minimize over the acceleration a the convex cost of solver_cost.c,
 *   f(a) = ½(a − a0)ᵀM(a − a0) + Σᵢ sᵢ(Jᵢ·a − arefᵢ),
 * from the previous solution when it costs less than a0 (MuJoCo's warm start rule), with
 * MuJoCo's line search (exact in the sense of its rules: Newton steps on the one-dimensional
 * cost until its slope is below 1 % of the tolerance) and MuJoCo's termination (scaled
 * improvement or gradient below the tolerance). CG is preconditioned by M (search direction
 * from M⁻¹·∇f, Polak–Ribière, reset when negative); M·x and M⁻¹·x use the tree-sparse M and
 * its LTDL factor (crba.c). Nothing here allocates: every vector lives in sim_data. */
#include "sim/solver_internal.h"

#include <math.h>
#include <string.h>

#define SOLVER_MINVAL 1e-15

static double dot(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    s += a[i] * b[i];
  }
  return s;
}

/* the start: the previous solution when it costs less than a0 (cost of a0 is Σ s(J·a0 − aref)) */
static void warm_start(const sim_model *m, sim_data *d) {
  int nv = m->nv;
  sim__solver_ctx ctx;
  memcpy(d->qacc, d->qacc_warmstart, (size_t)nv * sizeof(double));
  sim__solver_evaluate(m, d, &ctx, 0);
  const double cost_smooth = sim__constraint_update(m, d, d->efc_b, 0);
  d->solver.warmstart = !(ctx.cost > cost_smooth);
  if (!d->solver.warmstart) {
    memcpy(d->qacc, d->qacc_smooth, (size_t)nv * sizeof(double));
  }
}

/* Polak–Ribière: β = gᵀ(M⁻¹g − M⁻¹g_old) / g_oldᵀM⁻¹g_old, reset when negative */
static double polak_ribiere(const sim_model *m, const sim_data *d) {
  double num = 0;
  for (int k = 0; k < m->nv; k++) {
    num += d->sol_grad[k] * (d->sol_Mgrad[k] - d->sol_Mgradold[k]);
  }
  return fmax(0, num / fmax(SOLVER_MINVAL, dot(d->sol_gradold, d->sol_Mgradold, m->nv)));
}

static void preconditioned_gradient(const sim_model *m, sim_data *d) {
  memcpy(d->sol_Mgrad, d->sol_grad, (size_t)m->nv * sizeof(double));
  sim_solve_m(m, d, d->sol_Mgrad);
}

static void cg(const sim_model *m, sim_data *d) {
  int nv = m->nv, iter = 0;
  sim__solver_ctx ctx;
  sim__solver_evaluate(m, d, &ctx, 0);
  preconditioned_gradient(m, d);
  sim__solver_start(m, d);
  while (iter < m->opt.solver_iterations) {
    const double alpha = sim__line_search(m, d, &ctx);
    if (alpha == 0) {
      break;
    }
    memcpy(d->sol_gradold, d->sol_grad, (size_t)nv * sizeof(double));
    memcpy(d->sol_Mgradold, d->sol_Mgrad, (size_t)nv * sizeof(double));
    const double oldcost = ctx.cost;
    sim__solver_move(m, d, &ctx, alpha, 0);
    preconditioned_gradient(m, d);
    iter++;
    if (sim__solver_done(m, d, oldcost, &ctx)) {
      break;
    }
    const double beta = polak_ribiere(m, d);
    for (int k = 0; k < nv; k++) {
      d->sol_search[k] = -d->sol_Mgrad[k] + beta * d->sol_search[k];
    }
  }
  d->solver.iterations = iter;
  d->solver.cost = ctx.cost;
}

void sim_solve_constraints(const sim_model *m, sim_data *d) {
  int nv = m->nv;
  d->solver.nefc = d->nefc;
  d->solver.ncon = d->ncon;
  sim__mul_j(m, d, d->efc_b, d->qacc_smooth, d->efc_aref);
  warm_start(m, d);
  if (m->opt.solver == SIM_SOLVER_NEWTON) {
    sim__solve_newton(m, d);
  } else {
    cg(m, d);
  }
  /* forces and states at the final a (the solver left them there): every row not satisfied
   * carries force, a joint's friction at its bound included (MuJoCo's nactive) */
  int nactive = 0;
  for (int i = 0; i < d->nefc; i++) {
    nactive += d->efc_state[i] != SIM_CSTATE_SATISFIED;
  }
  d->solver.nactive = nactive;
  memcpy(d->qacc_warmstart, d->qacc, (size_t)nv * sizeof(double));
}
