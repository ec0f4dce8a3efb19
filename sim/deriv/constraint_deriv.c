/* sim/deriv/constraint_deriv.c: derivative of the constraint solution (sim/constraint.c rows,
 * sim/solver.c's minimum): joint limits and joint friction here, whose Jacobian rows J = ±eₖ are
 * constant, and the solution through any rows (contacts' own terms: contact_deriv.c).
 *
 * Forward: the solver finds the acceleration a minimizing ½(a − a0)ᵀM(a − a0) + Σ sᵢ(Jᵢa − arefᵢ);
 * at the minimum
 *   M·a + C·v + g − τ − Jᵀ·f(a) = 0,
 *   fᵢ = −Dᵢ·(Jᵢa − arefᵢ) in the quadratic zone, ±Fᵢ at a friction bound, 0 for a limit
 *   pulling away (the row's state, efc_state).
 * Holding the active set (each row's state) and differentiating the optimality condition:
 *   H·∂a = ∂τ − ∂ID|a + ∂(Jᵀf)|a,   H = M + Σ_quadratic Dᵢ·JᵢᵀJᵢ,
 * so the Jacobians are those of the converged step (an iteration-limited solve is not
 * differentiated iteration by iteration; a change of state under a perturbation is a kink).
 * At fixed a, for a quadratic row (J = σ·eₖ, aref = −b·σ·q̇ₖ − k·imp(pos)·pos, pos = σ·qₖ + const
 * for a limit, pos = 0 for friction; D = imp/((1 − imp)·w), w = invweight0):
 *   ∂fᵢ = Dᵢ·∂arefᵢ − ∂Dᵢ·(Jᵢa − arefᵢ),
 *   ∂aref/∂q̇ₖ = −b·σ,   ∂aref/∂qₖ = −k·(imp + imp'·pos)·σ,   ∂D/∂qₖ = imp'·σ/((1 − imp)²·w);
 * a row at its friction bound contributes ∂f/∂frictionloss = ±1 only. */
#include "sim/constraint.h"
#include "sim/deriv/internal.h"

#include <math.h>
#include <string.h>

#define CNSTR_MINVAL 1e-15 /* sim/constraint.c's */

/* the row's single dof and sign (limits and friction have J = σ·eₖ) */
static int row_dof(const sim_model *m, const sim_data *d, int i, double *sigma) {
  int k = d->efc_ind[(size_t)i * m->nv];
  *sigma = d->efc_J[(size_t)i * m->nv + k];
  return k;
}

/* ∂f/∂qₖ and ∂f/∂q̇ₖ of quadratic row i at jar = J·a − aref (top of the file) */
static void row_slopes(const sim_model *m, const sim_data *d, int i, double jar, double sigma,
                       double *dq, double *dv) {
  const sim_joint *jt = &m->joints[d->efc_id[i]];
  int friction = d->efc_type[i] == SIM_CNSTR_FRICTION_DOF;
  double ref[SIM_NREF], imp[SIM_NIMP];
  sim_constraint_sanitize(ref, imp, friction ? jt->solref_friction : jt->solref_limit,
                          friction ? jt->solimp_friction : jt->solimp_limit, m->opt.timestep);
  double pos = d->efc_pos[i], I = sim_constraint_impedance(imp, pos), dmax = imp[1];
  double slope = sim__impedance_slope(imp, pos), D = d->efc_D[i], k, b;
  if (friction) {
    k = 0;
  } else if (ref[0] > 0) {
    k = 1 / fmax(CNSTR_MINVAL, dmax * dmax * ref[0] * ref[0] * ref[1] * ref[1]);
  } else {
    k = -ref[0] / fmax(CNSTR_MINVAL, dmax * dmax);
  }
  b = ref[1] > 0 ? 2 / fmax(CNSTR_MINVAL, dmax * ref[0]) : -ref[1] / fmax(CNSTR_MINVAL, dmax);
  double R = (1 - I) * jt->invweight0 / I;
  double dD = friction || !(R > CNSTR_MINVAL) ? 0 : slope / ((1 - I) * (1 - I) * jt->invweight0);
  *dv = D * -b * sigma;
  *dq = friction ? 0 : (D * -k * (I + slope * pos) - dD * jar) * sigma;
}

void sim__constraint_rows_deriv(sim_deriv *w, const sim_data *d, const double *a, double *Rc) {
  const sim_model *m = w->m;
  memset(Rc, 0, (size_t)w->nv * (size_t)w->ncol * sizeof(double));
  sim__contact_rows_deriv(w, d, a, Rc);
  for (int i = 0; i < d->nefc; i++) {
    if (d->efc_type[i] == SIM_CNSTR_CONTACT_PYRAMIDAL) {
      continue; /* contact_deriv.c */
    }
    double sigma;
    int k = row_dof(m, d, i, &sigma), state = d->efc_state[i];
    if (state == SIM_CSTATE_QUADRATIC) {
      double dq, dv;
      row_slopes(m, d, i, sigma * a[k] - d->efc_aref[i], sigma, &dq, &dv);
      Rc[(size_t)k * w->ncol + k] += sigma * dq;
      Rc[(size_t)k * w->ncol + w->cv + k] += sigma * dv;
    } else if (state == SIM_CSTATE_LINEARNEG || state == SIM_CSTATE_LINEARPOS) {
      for (int n = 0; n < w->np; n++) {
        sim_param p = w->params[n];
        if (p.field == SIM_PARAM_JOINT_frictionloss && p.index == d->efc_id[i]) {
          Rc[(size_t)k * w->ncol + w->cp + n] += sigma * (state == SIM_CSTATE_LINEARNEG ? 1.0 : -1.0);
        }
      }
    }
  }
}

/* H = M + Σ D·JᵀJ over the quadratic rows (each row's nonzeros), then its Cholesky factor L
 * (lower triangle of H) */
void sim__constraint_hessian(sim_deriv *w, const sim_data *d) {
  int nv = w->nv;
  double *H = w->H;
  memcpy(H, w->Mt, (size_t)nv * (size_t)nv * sizeof(double));
  for (int i = 0; i < d->nefc; i++) {
    if (d->efc_state[i] != SIM_CSTATE_QUADRATIC) {
      continue;
    }
    const double *J = d->efc_J + (size_t)i * nv, D = d->efc_D[i];
    const int *ind = d->efc_ind + (size_t)i * nv;
    for (int u = 0; u < d->efc_nnz[i]; u++) {
      for (int v = 0; v < d->efc_nnz[i]; v++) {
        H[ind[u] * nv + ind[v]] += D * J[ind[u]] * J[ind[v]];
      }
    }
  }
  for (int r = 0; r < nv; r++) {
    for (int c = 0; c <= r; c++) {
      double sum = H[r * nv + c];
      for (int k = 0; k < c; k++) {
        sum -= H[r * nv + k] * H[c * nv + k];
      }
      H[r * nv + c] = r == c ? sqrt(sum) : sum / H[c * nv + c];
    }
  }
}

/* X ← H⁻¹·X (nv × n): L·Y = X, then Lᵀ·X = Y, row operations over the columns */
void sim__constraint_solve(const sim_deriv *w, double *X, int n) {
  int nv = w->nv;
  const double *L = w->H;
  for (int r = 0; r < nv; r++) {
    double *xr = X + (size_t)r * n, inv = 1.0 / L[r * nv + r];
    for (int k = 0; k < r; k++) {
      const double *xk = X + (size_t)k * n, a = L[r * nv + k];
      for (int c = 0; c < n; c++) {
        xr[c] -= a * xk[c];
      }
    }
    for (int c = 0; c < n; c++) {
      xr[c] *= inv;
    }
  }
  for (int r = nv - 1; r >= 0; r--) {
    double *xr = X + (size_t)r * n, inv = 1.0 / L[r * nv + r];
    for (int k = r + 1; k < nv; k++) {
      const double *xk = X + (size_t)k * n, a = L[k * nv + r];
      for (int c = 0; c < n; c++) {
        xr[c] -= a * xk[c];
      }
    }
    for (int c = 0; c < n; c++) {
      xr[c] *= inv;
    }
  }
}

/* Out += s·Σ Dᵢ·Jᵢᵀ(Jᵢ·X) over the quadratic rows */
void sim__constraint_jtdj(const sim_deriv *w, const sim_data *d, const double *X, double *Out,
                          double s) {
  int nv = w->nv, n = w->ncol;
  double *y = w->rowtmp;
  for (int i = 0; i < d->nefc; i++) {
    if (d->efc_state[i] != SIM_CSTATE_QUADRATIC) {
      continue;
    }
    const double *J = d->efc_J + (size_t)i * nv;
    const int *ind = d->efc_ind + (size_t)i * nv;
    memset(y, 0, (size_t)n * sizeof(double));
    for (int u = 0; u < d->efc_nnz[i]; u++) {
      const double *x = X + (size_t)ind[u] * n, a = J[ind[u]];
      for (int c = 0; c < n; c++) {
        y[c] += a * x[c];
      }
    }
    for (int u = 0; u < d->efc_nnz[i]; u++) {
      double *out = Out + (size_t)ind[u] * n, a = s * d->efc_D[i] * J[ind[u]];
      for (int c = 0; c < n; c++) {
        out[c] += a * y[c];
      }
    }
  }
}

void sim__constraint_polish(sim_deriv *w, const sim_data *d) {
  int nv = w->nv;
  double *a = w->acc_exact;
  sim_mul_m(w->m, d, a, d->qacc_smooth); /* M·a0 (qM: sim_forward_dynamics made it) */
  for (int i = 0; i < d->nefc; i++) {
    const double *J = d->efc_J + (size_t)i * nv;
    const int *ind = d->efc_ind + (size_t)i * nv;
    int state = d->efc_state[i];
    double f = state == SIM_CSTATE_QUADRATIC ? d->efc_D[i] * d->efc_aref[i]
               : state == SIM_CSTATE_SATISFIED ? 0
                                               : d->efc_force[i];
    for (int u = 0; u < d->efc_nnz[i]; u++) {
      a[ind[u]] += J[ind[u]] * f;
    }
  }
  sim__constraint_solve(w, a, 1);
  for (int i = 0; i < d->nefc; i++) { /* the forces there, as update_rows in sim/solver.c */
    const double *J = d->efc_J + (size_t)i * nv;
    const int *ind = d->efc_ind + (size_t)i * nv;
    double jar = -d->efc_aref[i];
    for (int u = 0; u < d->efc_nnz[i]; u++) {
      jar += J[ind[u]] * a[ind[u]];
    }
    w->jar[i] = jar;
    w->efc_f[i] = d->efc_state[i] == SIM_CSTATE_QUADRATIC ? -d->efc_D[i] * jar
                  : d->efc_state[i] == SIM_CSTATE_SATISFIED ? 0
                                                            : d->efc_force[i];
  }
}
