/* sim/solver_newton.c: the Newton constraint solver (MuJoCo 2.2.2's mjSOL_NEWTON, its
 * default), minimizing the cost of solver_cost.c.
 *
 * The cost is piecewise quadratic (except on an elliptic cone's surface), so its Hessian is
 *   H = M + Σ_{rows in their quadratic state} Dᵢ·JᵢᵀJᵢ  (+ Jᵀ·∂²s/∂x²·J of each contact on its
 *   cone's surface),
 * constant while no row changes state. Each iteration steps along −H⁻¹∇f with MuJoCo's line
 * search and stops by MuJoCo's rules (scaled improvement or gradient below the tolerance);
 * near the solution the states settle and one step lands on the minimum, so Newton converges
 * in a few iterations where CG takes tens.
 *
 * H is factorized by Cholesky, H = L·Lᵀ, once per solve; afterwards each row that enters or
 * leaves its quadratic state updates L by a rank-one change (±√Dᵢ·Jᵢ), and L is rebuilt only
 * when an update loses accuracy. The cones' terms are added to a copy of L (Hcone) by rank-one
 * updates after each change (MuJoCo's HessianDirect, HessianIncremental and HessianCone).
 * L keeps the profile of H: row k starts at the first dof its tree chain or any constraint row
 * through k touches (sol_Hfirst), and the factorization, the updates and the solves visit only
 * that profile. That is the dense factorization bit for bit, at the cost of the tree's sparsity
 * where bodies are independent (a row of separate bodies costs O(nv), a chain O(nv³)).
 * Nothing here allocates. */
#include "sim/solver_internal.h"

#include <math.h>
#include <string.h>

#define NEWTON_MINVAL 1e-15 /* MuJoCo's mjMINVAL: the floor of a pivot */

/* --- Cholesky within a profile ----------------------------------------------------------------
 * L is lower triangular, row-major nv × nv; row i holds columns first[i]..i. */

/* A = L·Lᵀ in place (A's lower triangle within the profile); returns the rank (pivots below
 * mindiag are raised to it, as MuJoCo's mju_cholFactor) */
static int factor(double *L, const int *first, int n, double mindiag) {
  int rank = n;
  for (int j = 0; j < n; j++) {
    double *Lj = L + (size_t)j * n;
    double pivot = Lj[j];
    for (int k = first[j]; k < j; k++) {
      pivot -= Lj[k] * Lj[k];
    }
    if (pivot < mindiag) {
      pivot = mindiag;
      rank--;
    }
    Lj[j] = sqrt(pivot);
    const double inv = 1 / Lj[j];
    for (int i = j + 1; i < n; i++) {
      if (first[i] > j) {
        continue;
      }
      double *Li = L + (size_t)i * n, s = Li[j];
      for (int k = first[i] > first[j] ? first[i] : first[j]; k < j; k++) {
        s -= Li[k] * Lj[k];
      }
      Li[j] = s * inv;
    }
  }
  return rank;
}

/* x ← (L·Lᵀ)⁻¹·x */
static void solve(const double *L, const int *first, int n, double *x) {
  for (int i = 0; i < n; i++) {
    const double *Li = L + (size_t)i * n;
    for (int k = first[i]; k < i; k++) {
      x[i] -= Li[k] * x[k];
    }
    x[i] /= Li[i];
  }
  for (int i = n - 1; i >= 0; i--) {
    for (int j = i + 1; j < n; j++) {
      if (first[j] <= i) {
        x[i] -= L[(size_t)j * n + i] * x[j];
      }
    }
    x[i] /= L[(size_t)i * n + i];
  }
}

/* L·Lᵀ ± x·xᵀ (x is used up; its nonzeros must lie in the profile of the rows they are on);
 * returns the rank (MuJoCo's mju_cholUpdate) */
static int update(double *L, const int *first, int n, double *x, int plus) {
  int rank = n;
  for (int k = 0; k < n; k++) {
    if (x[k] == 0) {
      continue;
    }
    const double Lkk = L[(size_t)k * n + k];
    double t = Lkk * Lkk + (plus ? x[k] * x[k] : -x[k] * x[k]);
    if (t < NEWTON_MINVAL) {
      t = NEWTON_MINVAL;
      rank--;
    }
    const double r = sqrt(t), c = r / Lkk, cinv = 1 / c, s = x[k] / Lkk;
    L[(size_t)k * n + k] = r;
    for (int i = k + 1; i < n; i++) {
      if (first[i] > k) {
        continue;
      }
      double *Lik = L + (size_t)i * n + k;
      *Lik = plus ? (*Lik + s * x[i]) * cinv : (*Lik - s * x[i]) * cinv;
      x[i] = c * x[i] - s * *Lik;
    }
  }
  return rank;
}

/* --- the Hessian -------------------------------------------------------------------------------- */

/* the profile: row k starts at its tree chain's root dof, or earlier where a constraint row
 * couples k to a smaller dof (rows list their dofs ascending) */
static void set_profile(const sim_model *m, sim_data *d) {
  const int nv = m->nv;
  int *first = d->sol_Hfirst;
  for (int k = 0; k < nv; k++) {
    int root = k;
    while (m->dof_parent[root] >= 0) {
      root = m->dof_parent[root];
    }
    first[k] = root;
  }
  for (int i = 0; i < d->nefc; i++) {
    const int *ind = d->efc_ind + (size_t)i * nv;
    for (int t = 0; t < d->efc_nnz[i]; t++) {
      if (first[ind[t]] > ind[0]) {
        first[ind[t]] = ind[0];
      }
    }
  }
}

/* H = M + Σ_quadratic D·JᵀJ, factorized */
static void hessian_direct(const sim_model *m, sim_data *d) {
  const int nv = m->nv, *first = d->sol_Hfirst;
  double *H = d->sol_H;
  for (int i = 0; i < nv; i++) {
    double *Hi = H + (size_t)i * nv;
    memcpy(Hi + first[i], d->qM + (size_t)i * nv + first[i],
           (size_t)(i - first[i] + 1) * sizeof(double));
  }
  for (int r = 0; r < d->nefc; r++) {
    if (d->efc_state[r] != SIM_CSTATE_QUADRATIC) {
      continue;
    }
    const double *J = d->efc_J + (size_t)r * nv, D = d->efc_D[r];
    const int *ind = d->efc_ind + (size_t)r * nv;
    for (int t = 0; t < d->efc_nnz[r]; t++) {
      const int a = ind[t];
      const double DJa = D * J[a];
      for (int u = 0; u <= t; u++) {
        H[(size_t)a * nv + ind[u]] += DJa * J[ind[u]];
      }
    }
  }
  factor(H, first, nv, NEWTON_MINVAL);
}

/* Hcone = H + each cone contact's Jᵀ·Hc·J, by rank-one updates with the rows of Lcᵀ·J, Hc = Lc·Lcᵀ */
static void hessian_cone(const sim_model *m, sim_data *d) {
  const int nv = m->nv, *first = d->sol_Hfirst;
  for (int i = 0; i < nv; i++) {
    memcpy(d->sol_Hcone + (size_t)i * nv + first[i], d->sol_H + (size_t)i * nv + first[i],
           (size_t)(i - first[i] + 1) * sizeof(double));
  }
  for (int c = 0; c < d->ncon; c++) {
    const int row = d->con_efc[c], dim = d->con_dim[c];
    if (d->efc_type[row] != SIM_CNSTR_CONTACT_ELLIPTIC || d->efc_state[row] != SIM_CSTATE_CONE) {
      continue;
    }
    double local[9];
    const int zero[3] = {0, 0, 0};
    memcpy(local, d->con_H + 9 * c, (size_t)(dim * dim) * sizeof(double));
    factor(local, zero, dim, NEWTON_MINVAL);
    const int *ind = d->efc_ind + (size_t)row * nv, nnz = d->efc_nnz[row];
    double *LTJ = d->sol_LTJ;
    memset(LTJ, 0, (size_t)(dim * nv) * sizeof(double));
    for (int r = 0; r < dim; r++) {
      const double *J = d->efc_J + (size_t)(row + r) * nv;
      for (int k = 0; k <= r; k++) {
        for (int t = 0; t < nnz; t++) {
          LTJ[k * nv + ind[t]] += local[r * dim + k] * J[ind[t]];
        }
      }
    }
    for (int r = 0; r < dim; r++) {
      update(d->sol_Hcone, first, nv, LTJ + r * nv, 1);
    }
  }
}

/* the rows that entered or left their quadratic state update L; a lost pivot rebuilds it */
static void hessian_incremental(const sim_model *m, sim_data *d) {
  const int nv = m->nv;
  double *x = d->sol_LTJ;
  for (int r = 0; r < d->nefc; r++) {
    const int was = d->efc_oldstate[r] == SIM_CSTATE_QUADRATIC;
    const int is = d->efc_state[r] == SIM_CSTATE_QUADRATIC;
    if (was == is) {
      continue;
    }
    const double *J = d->efc_J + (size_t)r * nv, s = sqrt(d->efc_D[r]);
    const int *ind = d->efc_ind + (size_t)r * nv;
    memset(x, 0, (size_t)nv * sizeof(double));
    for (int t = 0; t < d->efc_nnz[r]; t++) {
      x[ind[t]] = J[ind[t]] * s;
    }
    if (update(d->sol_H, d->sol_Hfirst, nv, x, is) < nv) {
      hessian_direct(m, d);
      return;
    }
  }
}

/* sol_Mgrad = H⁻¹·gradient (Hcone when a contact is on its cone) */
static void newton_direction(const sim_model *m, sim_data *d, const sim__solver_ctx *ctx) {
  memcpy(d->sol_Mgrad, d->sol_grad, (size_t)m->nv * sizeof(double));
  solve(ctx->ncone ? d->sol_Hcone : d->sol_H, d->sol_Hfirst, m->nv, d->sol_Mgrad);
}

void sim__solve_newton(const sim_model *m, sim_data *d) {
  const int nv = m->nv;
  int iter = 0;
  sim__solver_ctx ctx;
  sim__solver_evaluate(m, d, &ctx, 1);
  set_profile(m, d);
  hessian_direct(m, d);
  if (ctx.ncone) {
    hessian_cone(m, d);
  }
  newton_direction(m, d, &ctx);
  sim__solver_start(m, d);
  while (iter < m->opt.solver_iterations) {
    const double alpha = sim__line_search(m, d, &ctx);
    if (alpha == 0) {
      break;
    }
    memcpy(d->efc_oldstate, d->efc_state, (size_t)d->nefc * sizeof(int));
    const double oldcost = ctx.cost;
    sim__solver_move(m, d, &ctx, alpha, 1);
    hessian_incremental(m, d);
    if (ctx.ncone) {
      hessian_cone(m, d);
    }
    newton_direction(m, d, &ctx);
    iter++;
    if (sim__solver_done(m, d, oldcost, &ctx)) {
      break;
    }
    for (int k = 0; k < nv; k++) {
      d->sol_search[k] = -d->sol_Mgrad[k];
    }
  }
  d->solver.iterations = iter;
  d->solver.cost = ctx.cost;
}
