/* sim/deriv/dynamics_deriv.c: the derivative of one evaluation of the dynamics
 * (sim_forward_dynamics), Q = ∂q̈/∂[δq | v | act | u | θ].
 *
 * Forward: without constraint rows, q̈ solves (M + h·B)·q̈ = τ − C·v − g, i.e.
 *   ID(q, v, q̈) + h·B·q̈ = τ(q, v, act, u, θ)
 * (ID inverse dynamics with armature, B the joint damping, h > 0 only for Euler's implicit
 * damping). Differentiating at the solution, with G = ∂τ − ∂ID|q̈ − h·∂B·q̈:
 *   Q = (M + h·B)⁻¹·G.
 * With rows the solver's solution a_c enters first (constraint_deriv.c; polished on its active
 * set by one exact solve, so that the derivatives are the converged minimum's however early the
 * CG stopped), then, for Euler with damping, the second solve (M + h·B)·q̈ = τ − C·v − g +
 * Jᵀf(a_c) as sim/forward.c does:
 *   ∂a_c = H⁻¹·(∂τ − ∂ID|a_c + ∂(Jᵀf)|a_c),   H = M + JᵀDJ,
 *   ∂q̈  = (M + h·B)⁻¹·(∂τ − ∂ID|q̈ − h·∂B·q̈ + ∂(Jᵀf)|a_c − JᵀDJ·∂a_c).
 * Parameters that scale the acceleration: ∂ID/∂armature = q̈ₖ, ∂(h·B·q̈)/∂damping = h·q̈ₖ on the
 * joint's dofs. */
#include "sim/deriv/internal.h"

#include <string.h>

/* G −= q̈ₖ (armature) and h·q̈ₖ (damping, implicit) on the joints' dofs */
static void acceleration_parameters(sim_deriv *w, const double *acc, double implicit_h) {
  const sim_model *m = w->m;
  for (int n = 0; n < w->np; n++) {
    sim_param p = w->params[n];
    double scale = p.field == SIM_PARAM_JOINT_armature  ? 1
                   : p.field == SIM_PARAM_JOINT_damping ? implicit_h
                                                        : 0;
    if (scale == 0) {
      continue;
    }
    const sim_joint *j = &m->joints[p.index];
    for (int k = j->dofadr; k < j->dofadr + sim_joint_nv(j->type); k++) {
      w->G[(size_t)k * w->ncol + w->cp + n] -= scale * acc[k];
    }
  }
}

void sim__smooth_deriv(sim_deriv *w, const sim_data *d, const double *acc, double implicit_h) {
  memset(w->G, 0, (size_t)w->nv * (size_t)w->ncol * sizeof(double));
  sim__rnea_deriv(w, d, acc, -1.0);
  sim__passive_deriv(w, d);
  sim__actuator_deriv(w, d);
  acceleration_parameters(w, acc, implicit_h);
  sim__rnea_mass_matrix(w, d);
}

/* Q = (M + h·B)⁻¹·G, all columns at once, with the tree-sparse factor (Mt holds M) */
static void solve_implicit(sim_deriv *w, double *Q) {
  const sim_model *m = w->m;
  int nv = w->nv;
  for (int k = 0; k < nv && w->implicit_h > 0; k++) {
    w->Mt[k * nv + k] += w->implicit_h * m->joints[m->dof_joint[k]].damping;
  }
  sim_factor_ltdl(m, w->Mt);
  memcpy(Q, w->G, (size_t)nv * (size_t)w->ncol * sizeof(double));
  sim_solve_ltdl_rows(m, w->Mt, Q, w->ncol);
}

/* with rows: ∂a_c, and for Euler with damping the second solve (top of the file); a_c is the
 * solver's solution polished on its active set (sim__constraint_polish) */
static void constrained(sim_deriv *w, const sim_data *d, double *Q) {
  int n = w->nv * w->ncol;
  memcpy(w->Mt, d->qM, (size_t)w->nv * (size_t)w->nv * sizeof(double)); /* M, CRBA's */
  sim__constraint_hessian(w, d);
  sim__constraint_polish(w, d);
  const double *ac = w->acc_exact;
  sim__smooth_deriv(w, d, ac, 0.0);
  sim__constraint_rows_deriv(w, d, ac, w->G2);
  for (int r = 0; r < n; r++) {
    w->G[r] += w->G2[r];
  }
  memcpy(Q, w->G, (size_t)n * sizeof(double));
  sim__constraint_solve(w, Q, w->ncol);
  if (w->implicit_h > 0) { /* ∂qfrc_constraint = ∂(Jᵀf)|a_c − JᵀDJ·∂a_c, into G2 */
    sim__constraint_jtdj(w, d, Q, w->G2, -1.0);
    sim__smooth_deriv(w, d, d->qacc, w->implicit_h);
    for (int r = 0; r < n; r++) {
      w->G[r] += w->G2[r];
    }
    solve_implicit(w, Q);
  }
}

void sim__dynamics_deriv(void *ctx, const sim_model *m, const sim_data *d, int stage) {
  sim_deriv *w = ctx;
  (void)m; /* w->m is the step's model (sim_deriv_step) */
  if (stage >= DERIV_STAGES || w->status != SIM_DERIV_OK) {
    return;
  }
  memcpy(w->stage_v + stage * w->nv, d->qvel, (size_t)w->nv * sizeof(double));
  if (d->ncon > 0 && (w->status = sim__contact_check(w, d)) != SIM_DERIV_OK) {
    return;
  }
  double *Q = w->Q + (size_t)stage * w->nv * w->ncol;
  if (d->nefc > 0) {
    constrained(w, d, Q);
  } else {
    sim__smooth_deriv(w, d, d->qacc, w->implicit_h);
    solve_implicit(w, Q);
  }
}
