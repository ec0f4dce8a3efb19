/* sysid/residual.c: the residuals of a point x of the fit's coordinates and their Jacobian.
 *
 * Each window is simulated from its initial state, driven by the logged inputs held between
 * samples; with the Jacobian, the sensitivities S = ∂x_k/∂[x₀ | θ] ride along
 * (sim_deriv_sensitivity_step: S ← A·S + [0 | P]). A reading of joint j at sample i is the
 * position between steps k and k + 1 (its time less the sensor's latency), so
 *   r = (scale·((1 − f)·q_k + f·q_{k+1}) + offset − y) / σ
 *   ∂r/∂φ = scale/σ · ((1 − f)·S_k + f·S_{k+1})[q row, θ column] · dθ/dφ
 *   ∂r/∂x₀ = scale/σ · ((1 − f)·S_k + f·S_{k+1})[q row, state column]
 * The Jacobian's nonzeros are kept as blocks, one row of np + 2·nv per residual (a reading
 * depends on the parameters and its own window's state only): p->Jb.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sysid/internal.h"

/* the parameters of x into the model (θ and dθ/dφ kept for the Jacobian) */
static int set_params(sysid_problem *p, const double *x, char *err, size_t err_sz) {
  int mass_changed = 0;
  for (int k = 0; k < p->np; k++) {
    p->theta[k] = sysid__value(&p->ps[k], x[k], &p->dtheta[k]);
    if (sim_param_get(p->m, p->ps[k].sp) != p->theta[k]) {
      if (sim_param_set(p->m, p->ps[k].sp, p->theta[k], err, err_sz) < 0) {
        return -1;
      }
      sim_param_kind kind = sim_param_kind_of(p->ps[k].sp.field);
      mass_changed |= kind == SIM_PARAM_BODY || p->ps[k].sp.field == SIM_PARAM_JOINT_armature;
    }
  }
  /* the constraint stage's constants follow the masses, as a robot file with these values
     would load (the Jacobian holds them: see refresh_const) */
  if (mass_changed && p->refresh_const && p->m->nefc_max > 0 && sim_constraint_setconst(p->m) < 0) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  return 0;
}

/* the window's first state: its base pose ⊕ the tangent unknowns, and the velocities */
static void window_start(sysid_problem *p, int w, const double *x) {
  const sim_model *m = p->m;
  sim_data *d = p->d;
  const sysid_window *win = &p->win[w];
  sim_data_reset(m, d);
  memcpy(d->qpos, win->qbase, (size_t)m->nq * sizeof(double));
  memset(d->ctrl, 0, (size_t)m->nu * sizeof(double)); /* actuators the log lacks: 0 */
  memset(d->act, 0, (size_t)m->na * sizeof(double));
  if (p->nxs) {
    const double *xw = x + p->np + (size_t)w * p->nxs;
    sim_state_perturb(m, d->qpos, xw, 1);
    memcpy(d->qvel, xw + m->nv, (size_t)m->nv * sizeof(double));
  } else {
    memcpy(d->qvel, p->vstart + (size_t)w * m->nv, (size_t)m->nv * sizeof(double));
  }
  d->time = win->t0;
}

/* state k of the trajectory: the series joints' positions and (jac) their sensitivity rows,
 * state columns first (2·nv), then the parameters' */
static void record(sysid_problem *p, int k, int jac) {
  int nj = p->nj, nv = p->m->nv, nc = 2 * nv + p->np, ns = p->nx + p->np;
  for (int j = 0; j < nj; j++) {
    p->traj[(size_t)k * nj + j] = p->d->qpos[p->jqpos[j]];
    if (jac) {
      const double *Srow = p->S + (size_t)p->jdof[j] * ns;
      double *out = p->trajS + ((size_t)k * nj + j) * nc;
      memcpy(out, Srow, 2 * (size_t)nv * sizeof(double));
      memcpy(out + 2 * nv, Srow + p->nx, (size_t)p->np * sizeof(double));
    }
  }
}

static int simulate(sysid_problem *p, int w, const double *x, int jac, char *err, size_t err_sz) {
  const sim_model *m = p->m;
  sim_data *d = p->d;
  const sysid_window *win = &p->win[w];
  double h = m->opt.timestep;
  window_start(p, w, x);
  if (jac) {
    sim_deriv_sensitivity_init(p->w, p->S);
  }
  record(p, 0, jac);
  int is = 0; /* the sample whose input is held */
  for (int k = 0; k < win->nsteps; k++) {
    double tau = win->t0 + k * h;
    while (is + 1 < p->n && p->t[is + 1] <= tau + 1e-9 * h) {
      is++;
    }
    for (int a = 0; a < p->na; a++) {
      d->ctrl[p->act[a]] = p->u[(size_t)is * p->na + a];
    }
    int rc = SIM_DERIV_OK;
    if (jac) {
      rc = sim_deriv_sensitivity_step(m, d, p->w, p->S);
    } else {
      sim_step(m, d);
    }
    if (rc != SIM_DERIV_OK) {
      snprintf(err, err_sz, "window %d, step at t = %.4f s: %s", w, tau, sim_deriv_strerror(rc));
      return -1;
    }
    int bad = sim_state_nonfinite(m, d);
    if (bad >= 0) {
      snprintf(err, err_sz,
               "window %d: the state of joint '%s' turned non-finite at t = %.4f s (parameters "
               "the model cannot run with?)",
               w, m->joints[bad].name, tau + h);
      return -1;
    }
    record(p, k + 1, jac);
  }
  p->simulated += win->nsteps * h;
  return 0;
}

/* the window's rows: residuals and (jac) their Jacobian blocks */
static void window_rows(sysid_problem *p, int w, double *r, int jac) {
  const sysid_window *win = &p->win[w];
  int nj = p->nj, nv = p->m->nv, nc = 2 * nv + p->np, nb = p->np + p->nxs;
  for (int ri = win->r0; ri < win->r0 + win->nr; ri++) {
    const sysid_row *row = &p->row[ri];
    const sysid_meas *ms = &p->meas[row->j];
    double f = row->f, g = 1 - f;
    double q = g * p->traj[(size_t)row->k * nj + row->j] +
               f * p->traj[(size_t)(row->k + 1) * nj + row->j];
    r[ri] = (ms->scale * q + ms->offset - p->y[(size_t)row->i * nj + row->j]) / ms->sigma;
    if (!jac) {
      continue;
    }
    const double *s0 = p->trajS + ((size_t)row->k * nj + row->j) * nc;
    const double *s1 = s0 + (size_t)nj * nc;
    double c = ms->scale / ms->sigma, *J = p->Jb + (size_t)ri * nb;
    for (int k = 0; k < p->np; k++) {
      J[k] = c * (g * s0[2 * nv + k] + f * s1[2 * nv + k]) * p->dtheta[k];
    }
    for (int k = 0; k < p->nxs; k++) {
      J[p->np + k] = c * (g * s0[k] + f * s1[k]);
    }
  }
}

int sysid__eval(sysid_problem *p, const double *x, double *r, int jac, char *err,
                size_t err_sz) {
  if (set_params(p, x, err, err_sz) < 0) {
    return -1;
  }
  for (int w = 0; w < p->nw; w++) {
    if (simulate(p, w, x, jac, err, err_sz) < 0) {
      return -1;
    }
    window_rows(p, w, r, jac);
  }
  if (jac) {
    memcpy(p->xJ, x, (size_t)p->nunk * sizeof(double));
    p->haveJ = 1;
  }
  return 0;
}

/* column of block entry c of a row in window w */
int sysid__column(const sysid_problem *p, int w, int c) {
  return c < p->np ? c : p->np + w * p->nxs + (c - p->np);
}

int sysid_simulate(sysid_problem *p, int which, double *q_out) {
  if (which != 0 && !(which == 1 && p->fitted)) {
    return -1;
  }
  const double *x = which ? p->xfit : p->xstart;
  char err[512];
  if (set_params(p, x, err, sizeof err) < 0) {
    return -1;
  }
  for (size_t i = 0; i < (size_t)p->n * (size_t)p->nj; i++) {
    q_out[i] = NAN;
  }
  double h = p->m->opt.timestep;
  for (int w = 0; w < p->nw; w++) {
    const sysid_window *win = &p->win[w];
    if (simulate(p, w, x, 0, err, sizeof err) < 0) {
      return -1;
    }
    for (int i = win->s; i < win->e; i++) {
      for (int j = 0; j < p->nj; j++) {
        double kf = (p->t[i] - p->meas[j].latency - win->t0) / h;
        int k = (int)floor(kf + 1e-9);
        k = k < 0 ? 0 : k >= win->nsteps ? win->nsteps - 1 : k;
        double f = fmin(fmax(kf - k, 0), 1);
        double q = (1 - f) * p->traj[(size_t)k * p->nj + j] + f * p->traj[(size_t)(k + 1) * p->nj + j];
        q_out[(size_t)i * p->nj + j] = p->meas[j].scale * q + p->meas[j].offset;
      }
    }
  }
  /* the model keeps the fitted values (sysid_fitted_model) */
  return p->fitted && which == 0 ? set_params(p, p->xfit, err, sizeof err) : 0;
}
