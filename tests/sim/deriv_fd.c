/* tests/sim/deriv_fd.c: central finite differences of sim_step (deriv_fd.h). */
#include "deriv_fd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

fd_steps fd_default_steps(void) {
  fd_steps s = {1e-3, 1e-3, 1e-3, 1e-3, 1e-2, 4};
  const char *env = getenv("ACHILLES_FD_STEP"); /* for studies of the step size */
  if (env) {
    double e = atof(env);
    s = (fd_steps){e, e, e, e, e, 4};
  }
  return s;
}

fd_steps fd_plain_steps(void) {
  fd_steps s = {1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 2};
  return s;
}

void fd_copy_state(const sim_model *m, sim_data *dst, const sim_data *src) {
  dst->time = src->time;
  dst->nstep = src->nstep;
#define FD_COPY(name, rows, cols)                                                              \
  memcpy(dst->name, src->name, (size_t)m->rows * (size_t)(cols) * sizeof(double));
  SIM_STATE_ARRAYS(FD_COPY)
#undef FD_COPY
}

/* the state after one step from scratch, as a point of the tangent space around ref: writes
 * (δq relative to ref_qpos, v, act) into x */
static void step_state(const sim_model *m, sim_data *s, const double *ref_qpos, double *x) {
  sim_step(m, s);
  sim_state_difference(m, x, s->qpos, ref_qpos);
  memcpy(x + m->nv, s->qvel, (size_t)m->nv * sizeof(double));
  memcpy(x + 2 * m->nv, s->act, (size_t)m->na * sizeof(double));
}

/* the stencil's offsets and weights: f' ≈ Σ w·f(o·ε)/ε */
static int stencil(int order, const double **offset, const double **weight) {
  static const double o2[2] = {1, -1}, w2[2] = {0.5, -0.5};
  static const double o4[4] = {2, 1, -1, -2}, w4[4] = {-1.0 / 12, 8.0 / 12, -8.0 / 12, 1.0 / 12};
  *offset = order == 4 ? o4 : o2;
  *weight = order == 4 ? w4 : w2;
  return order == 4 ? 4 : 2;
}

/* column c of a row-major nx × n matrix from the stencil's results x[p·nx ...] */
static void store_column(double *M, int nx, int n, int c, const double *x, int npoint,
                         const double *weight, double eps) {
  if (!M) {
    return;
  }
  for (int r = 0; r < nx; r++) {
    double sum = 0;
    for (int p = 0; p < npoint; p++) {
      sum += weight[p] * x[p * nx + r];
    }
    M[(size_t)r * n + c] = sum / eps;
  }
}

/* the steps from d with input column c of the state (kind 0) or ctrl (1) moved by o·eps */
static void perturbed_steps(const sim_model *m, const sim_data *d, sim_data *s, int kind, int c,
                            double eps, const double *offset, int npoint, const double *ref,
                            double *x) {
  for (int p = 0; p < npoint; p++) {
    double e = offset[p] * eps;
    fd_copy_state(m, s, d);
    if (kind == 1) {
      s->ctrl[c] += e;
    } else if (c < m->nv) {
      double dq[256] = {0};
      dq[c] = 1;
      sim_state_perturb(m, s->qpos, dq, e);
    } else if (c < 2 * m->nv) {
      s->qvel[c - m->nv] += e;
    } else {
      s->act[c - 2 * m->nv] += e;
    }
    step_state(m, s, ref, x + p * sim_deriv_nx(m));
  }
}

/* the size a parameter's step is relative to when its value is small: a body's largest
 * principal-axis entry for its inertia (a product near 0 would otherwise take a step lost in
 * rounding), 0.1 m for a COM coordinate, 1e-3 of the unit otherwise */
static double param_scale(const sim_model *m, sim_param p) {
  if (p.field >= SIM_PARAM_BODY_ixx && p.field <= SIM_PARAM_BODY_iyz) {
    const double *I = m->bodies[p.index].inertia;
    return fmax(I[0], fmax(I[4], I[8]));
  }
  if (p.field >= SIM_PARAM_BODY_com_x && p.field <= SIM_PARAM_BODY_com_z) {
    return 0.1;
  }
  return 1e-3;
}

int fd_step_jacobians(sim_model *m, const sim_data *d, sim_data *scratch, const sim_param *params,
                      int np, fd_steps eps, double *A, double *B, double *P, char *err,
                      size_t err_sz) {
  int nv = m->nv, nx = sim_deriv_nx(m);
  double ref[256], x[4 * 256];
  const double *offset, *weight;
  int npoint = stencil(eps.order, &offset, &weight);
  if (nv > 128 || nx > 256 || m->nq > 256) {
    snprintf(err, err_sz, "fd_step_jacobians: at most 128 dofs");
    return -1;
  }
  /* the unperturbed step's positions: the origin of the output's tangent space */
  fd_copy_state(m, scratch, d);
  sim_step(m, scratch);
  memcpy(ref, scratch->qpos, (size_t)m->nq * sizeof(double));
  for (int c = 0; c < nx && A; c++) {
    double e = c < nv ? eps.q : c < 2 * nv ? eps.v : eps.act;
    perturbed_steps(m, d, scratch, 0, c, e, offset, npoint, ref, x);
    store_column(A, nx, nx, c, x, npoint, weight, e);
  }
  for (int c = 0; c < m->nu && B; c++) {
    perturbed_steps(m, d, scratch, 1, c, eps.ctrl, offset, npoint, ref, x);
    store_column(B, nx, m->nu, c, x, npoint, weight, eps.ctrl);
  }
  for (int c = 0; c < np && P; c++) {
    double value = sim_param_get(m, params[c]);
    double e = eps.param * fmax(fabs(value), param_scale(m, params[c]));
    for (int p = 0; p < npoint; p++) {
      if (sim_param_set(m, params[c], value + offset[p] * e, err, err_sz) != 0) {
        sim_param_set(m, params[c], value, err, err_sz);
        return -1;
      }
      fd_copy_state(m, scratch, d);
      step_state(m, scratch, ref, x + p * nx);
    }
    sim_param_set(m, params[c], value, err, err_sz);
    store_column(P, nx, np, c, x, npoint, weight, e);
  }
  return 0;
}
