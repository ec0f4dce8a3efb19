/* sim/deriv/rollout.c: rollout gradients by the adjoint method with checkpoints (rollout.h).
 *
 * Forward: xₜ₊₁ = step(xₜ, uₜ), keeping xₜ when t is a multiple of k. Backward, segment by
 * segment from the last: the segment's states are recovered from its checkpoint by stepping,
 * then for t from the segment's end down to its start the step is taken again with its
 * Jacobians (sim_deriv_step) and the adjoint moves back one step,
 *   ∂L/∂uₜ = Bₜᵀλ + ∂lₜ/∂uₜ,  ∂L/∂θ += Pₜᵀλ,  λ ← Aₜᵀλ + ∂lₜ/∂xₜ. */
#include "sim/deriv/rollout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_rollout {
  const sim_model *m;
  sim_deriv *w;
  sim_data *d;       /* the backward pass's own data: the caller's ends at x_T */
  int T, k, ncheck, nx, nu, np;
  size_t state_size; /* doubles per saved state */
  double *checks;    /* [ncheck + 1] states: the checkpoints, then x_T */
  double *segment;   /* [k] states */
  double *probe;     /* one state: the recomputed step's, compared with the forward pass's */
  double *A, *B, *P, *lambda, *next, *gx, *gu;
  void *buffer;
};

/* --- states -------------------------------------------------------------------------------- */

static size_t state_size(const sim_model *m) {
  size_t n = 2; /* time, nstep */
#define ROLLOUT_SIZE(name, rows, cols) n += (size_t)m->rows * (size_t)(cols);
  SIM_STATE_ARRAYS(ROLLOUT_SIZE)
#undef ROLLOUT_SIZE
  return n;
}

static void save(const sim_model *m, const sim_data *d, double *out) {
  out[0] = d->time;
  out[1] = (double)d->nstep;
  out += 2;
#define ROLLOUT_SAVE(name, rows, cols)                                                         \
  memcpy(out, d->name, (size_t)m->rows * (size_t)(cols) * sizeof(double));                     \
  out += (size_t)m->rows * (size_t)(cols);
  SIM_STATE_ARRAYS(ROLLOUT_SAVE)
#undef ROLLOUT_SAVE
}

static void restore(const sim_model *m, sim_data *d, const double *in) {
  d->time = in[0];
  d->nstep = (long long)in[1];
  in += 2;
#define ROLLOUT_RESTORE(name, rows, cols)                                                      \
  memcpy(d->name, in, (size_t)m->rows * (size_t)(cols) * sizeof(double));                      \
  in += (size_t)m->rows * (size_t)(cols);
  SIM_STATE_ARRAYS(ROLLOUT_RESTORE)
#undef ROLLOUT_RESTORE
}

/* --- the object ------------------------------------------------------------------------------ */

sim_rollout *sim_rollout_new(const sim_model *m, const sim_param *params, int np, int T, int k,
                             char *err, size_t err_sz) {
  if (T < 1 || k < 0) {
    snprintf(err, err_sz, "sim_rollout_new: need T >= 1 and k >= 1 (or SIM_ROLLOUT_SQRT), got "
                          "T = %d, k = %d", T, k);
    return NULL;
  }
  if (k == SIM_ROLLOUT_SQRT) {
    k = (int)ceil(sqrt((double)T));
  }
  k = k > T ? T : k;
  sim_rollout *r = calloc(1, sizeof *r);
  if (!r) {
    snprintf(err, err_sz, "sim_rollout_new: out of memory");
    return NULL;
  }
  r->m = m;
  r->T = T, r->k = k, r->ncheck = (T + k - 1) / k;
  r->nx = sim_deriv_nx(m), r->nu = m->nu, r->np = np;
  r->state_size = state_size(m);
  size_t states = ((size_t)r->ncheck + 2 + (size_t)k) * r->state_size;
  size_t mats = (size_t)r->nx * (size_t)(r->nx + r->nu + np) + 3 * (size_t)r->nx + (size_t)r->nu;
  r->buffer = calloc(states + mats + 1, sizeof(double));
  r->w = sim_deriv_new(m, params, np, err, err_sz);
  r->d = sim_data_new(m);
  if (!r->buffer || !r->w || !r->d) {
    if (r->w && r->d) {
      snprintf(err, err_sz, "sim_rollout_new: out of memory for %d steps", T);
    }
    sim_rollout_free(&r);
    return NULL;
  }
  double *next = r->buffer;
  r->checks = next, next += ((size_t)r->ncheck + 1) * r->state_size;
  r->segment = next, next += (size_t)k * r->state_size;
  r->probe = next, next += r->state_size;
  r->A = next, next += (size_t)r->nx * (size_t)r->nx;
  r->B = next, next += (size_t)r->nx * (size_t)r->nu;
  r->P = next, next += (size_t)r->nx * (size_t)np;
  r->lambda = next, next += r->nx;
  r->next = next, next += r->nx;
  r->gx = next, next += r->nx;
  r->gu = next;
  return r;
}

void sim_rollout_free(sim_rollout **pr) {
  sim_rollout *r = pr ? *pr : NULL;
  if (!r) {
    return;
  }
  sim_deriv_free(&r->w);
  sim_data_free(r->d);
  free(r->buffer);
  free(r);
  *pr = NULL;
}

int sim_rollout_interval(const sim_rollout *r) {
  return r->k;
}

size_t sim_rollout_checkpoint_bytes(const sim_rollout *r) {
  return r->state_size * sizeof(double);
}

size_t sim_rollout_state_bytes(const sim_rollout *r) {
  return ((size_t)r->ncheck + 2 + (size_t)r->k) * sim_rollout_checkpoint_bytes(r);
}

/* --- the passes ------------------------------------------------------------------------------- */

static void forward(sim_rollout *r, sim_data *d, const double *ctrl) {
  const sim_model *m = r->m;
  for (int t = 0; t < r->T; t++) {
    if (t % r->k == 0) {
      save(m, d, r->checks + (size_t)(t / r->k) * r->state_size);
    }
    memcpy(d->ctrl, ctrl + (size_t)t * r->nu, (size_t)r->nu * sizeof(double));
    sim_step(m, d);
  }
  save(m, d, r->checks + (size_t)r->ncheck * r->state_size);
}

/* lₜ at the state in r->d, its gradients in gx and gu (zeroed first) */
static double loss_at(sim_rollout *r, sim_loss_fn loss, void *ctx, int t) {
  memset(r->gx, 0, (size_t)r->nx * sizeof(double));
  memset(r->gu, 0, (size_t)r->nu * sizeof(double));
  sim_kinematics(r->m, r->d);
  return loss(ctx, r->m, r->d, t, r->T, r->gx, t < r->T ? r->gu : NULL);
}

/* y = Mᵀ·λ (+ add) for a row-major nx × n matrix M */
static void transpose_times(double *y, const double *M, const double *lambda, int nx, int n,
                            const double *add) {
  for (int c = 0; c < n; c++) {
    y[c] = add ? add[c] : 0;
  }
  for (int r = 0; r < nx; r++) {
    const double l = lambda[r];
    const double *row = M + (size_t)r * n;
    for (int c = 0; c < n; c++) {
      y[c] += row[c] * l;
    }
  }
}

/* 1 when the state in d is the saved one, bit for bit (time, positions, velocities, applied
 * forces, commands, actuator state and the solver's warm start) */
static int same_state(sim_rollout *r, const double *saved) {
  save(r->m, r->d, r->probe);
  return memcmp(r->probe, saved, r->state_size * sizeof(double)) == 0;
}

/* step t backwards from its state in r->d: the Jacobians (the step recomputed, which must land
 * on the forward pass's next state), then the adjoint */
static int adjoint_step(sim_rollout *r, const double *ctrl, sim_loss_fn loss, void *ctx, int t,
                        const double *next_state, double *total, double *grad_ctrl,
                        double *grad_param) {
  memcpy(r->d->ctrl, ctrl + (size_t)t * r->nu, (size_t)r->nu * sizeof(double));
  *total += loss_at(r, loss, ctx, t);
  int rc = sim_deriv_step(r->m, r->d, r->w, r->A, r->B, r->P);
  if (rc != SIM_DERIV_OK) {
    return rc;
  }
  if (!same_state(r, next_state)) {
    return SIM_DERIV_EREPLAY;
  }
  if (grad_ctrl) {
    transpose_times(grad_ctrl + (size_t)t * r->nu, r->B, r->lambda, r->nx, r->nu, r->gu);
  }
  if (grad_param && r->np > 0) { /* grad_param += Pᵀλ */
    for (int row = 0; row < r->nx; row++) {
      for (int c = 0; c < r->np; c++) {
        grad_param[c] += r->P[(size_t)row * r->np + c] * r->lambda[row];
      }
    }
  }
  transpose_times(r->next, r->A, r->lambda, r->nx, r->nx, r->gx);
  memcpy(r->lambda, r->next, (size_t)r->nx * sizeof(double));
  return SIM_DERIV_OK;
}

int sim_rollout_gradient(sim_rollout *r, sim_data *d, const double *ctrl, sim_loss_fn loss,
                         void *ctx, double *loss_out, double *grad_x0, double *grad_ctrl,
                         double *grad_param) {
  const sim_model *m = r->m;
  forward(r, d, ctrl);
  if (grad_param) {
    memset(grad_param, 0, (size_t)r->np * sizeof(double));
  }
  /* λ_T = ∂l_T/∂x_T */
  restore(m, r->d, r->checks + (size_t)r->ncheck * r->state_size);
  double total = loss_at(r, loss, ctx, r->T);
  memcpy(r->lambda, r->gx, (size_t)r->nx * sizeof(double));
  for (int c = r->ncheck - 1; c >= 0; c--) {
    int t0 = c * r->k, t1 = t0 + r->k < r->T ? t0 + r->k : r->T;
    restore(m, r->d, r->checks + (size_t)c * r->state_size);
    for (int t = t0; t < t1; t++) { /* the segment's states, recomputed from its checkpoint */
      save(m, r->d, r->segment + (size_t)(t - t0) * r->state_size);
      if (t + 1 < t1) {
        memcpy(r->d->ctrl, ctrl + (size_t)t * r->nu, (size_t)r->nu * sizeof(double));
        sim_step(m, r->d);
      }
    }
    for (int t = t1 - 1; t >= t0; t--) {
      const double *next = t + 1 < t1 ? r->segment + (size_t)(t + 1 - t0) * r->state_size
                                      : r->checks + (size_t)(c + 1) * r->state_size;
      restore(m, r->d, r->segment + (size_t)(t - t0) * r->state_size);
      int rc = adjoint_step(r, ctrl, loss, ctx, t, next, &total, grad_ctrl, grad_param);
      if (rc != SIM_DERIV_OK) {
        return rc;
      }
    }
  }
  if (grad_x0) {
    memcpy(grad_x0, r->lambda, (size_t)r->nx * sizeof(double));
  }
  if (loss_out) {
    *loss_out = total;
  }
  return SIM_DERIV_OK;
}

/* --- the tracking loss ------------------------------------------------------------------------ */

double sim_loss_tracking(void *ctx, const sim_model *m, const sim_data *d, int t, int T,
                         double *grad_x, double *grad_u) {
  const sim_tracking_loss *L = ctx;
  int nv = m->nv;
  double value = 0, wq = t < T ? L->wq : L->wT;
  if (L->qpos_ref && wq != 0) {
    double *dq = grad_x + nv; /* the velocity block as scratch, filled after */
    sim_state_difference(m, dq, d->qpos, L->qpos_ref + (size_t)t * m->nq);
    for (int k = 0; k < nv; k++) {
      value += wq * dq[k] * dq[k];
      grad_x[k] += 2 * wq * dq[k];
      dq[k] = 0;
    }
  }
  for (int k = 0; k < nv; k++) {
    value += L->wv * d->qvel[k] * d->qvel[k];
    grad_x[nv + k] += 2 * L->wv * d->qvel[k];
  }
  for (int i = 0; grad_u && i < m->nu; i++) {
    value += L->wu * d->ctrl[i] * d->ctrl[i];
    grad_u[i] += 2 * L->wu * d->ctrl[i];
  }
  return value;
}
