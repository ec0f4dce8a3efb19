/* sim/deriv/deriv.c: the derivatives' workspace (one allocation, sized at creation) and the
 * step with its Jacobians: sim_step_observed runs the step as sim_step does, the hook
 * differentiates each evaluation (dynamics_deriv.c), the integrator's chain rule follows
 * (integrate_deriv.c). */
#include "sim/deriv/internal.h"
#include "sim/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *sim_deriv_strerror(int status) {
  switch (status) {
#define SIM_DERIV_TEXT(name, value, text)                                                      \
  case value:                                                                                  \
    return text;
    SIM_DERIV_ERRORS(SIM_DERIV_TEXT)
#undef SIM_DERIV_TEXT
  default:
    return "unknown status";
  }
}

/* the first dof of the ball or free rotation each dof turns with, -1 for the rest */
static void set_groups(const sim_model *m, int *rotgroup) {
  for (int k = 0; k < m->nv; k++) {
    rotgroup[k] = -1;
  }
  for (int j = 0; j < m->njnt; j++) {
    const sim_joint *jt = &m->joints[j];
    int first = jt->type == SIM_JOINT_BALL ? jt->dofadr
                : jt->type == SIM_JOINT_FREE ? jt->dofadr + 3
                                             : -1;
    for (int r = 0; first >= 0 && r < 3; r++) {
      rotgroup[first + r] = first;
    }
  }
}

sim_deriv *sim_deriv_new(const sim_model *m, const sim_param *params, int np, char *err,
                         size_t err_sz) {
  if (np < 0 || (np > 0 && !params)) {
    snprintf(err, err_sz, "sim_deriv_new: %d parameters without a list", np);
    return NULL;
  }
  if (m->neq > 0) { /* their rows are not differentiated (constraint_deriv.c): refused, not 0 */
    snprintf(err, err_sz, "sim_deriv_new: the model has %d equality constraint(s) (equality[0]: "
             "a %s); their rows are not differentiated", m->neq,
             m->equalities[0].type == SIM_EQ_CONNECT ? "connect"
             : m->equalities[0].type == SIM_EQ_WELD  ? "weld"
             : m->equalities[0].type == SIM_EQ_JOINT ? "joint coupling"
                                                     : "tendon coupling");
    return NULL;
  }
  for (int i = 0; i < m->nu; i++) {
    if (m->actuators[i].crank_site >= 0 || m->actuators[i].adhesion_body >= 0) { /* actuator_deriv.c: joint actuators */
      snprintf(err, err_sz, "sim_deriv_new: actuator \"%s\" drives a slider-crank or adheres, whose "
               "transmission is not differentiated", m->actuators[i].name);
      return NULL;
    }
  }
  if (m->opt.viscosity > 0) { /* passive_deriv.c: joint and tendon springs and dampers only */
    snprintf(err, err_sz, "sim_deriv_new: the model's medium has a viscosity (%g Pa·s), whose "
             "drag on bodies is not differentiated", m->opt.viscosity);
    return NULL;
  }
  for (int g = 0; g < m->ngeom; g++) {
    if (m->geoms[g].margin > 0) { /* contact_deriv.c differentiates margin-0 contacts */
      snprintf(err, err_sz, "sim_deriv_new: geom \"%s\" has a margin (%g m), whose contacts "
               "are not differentiated", m->geoms[g].name, m->geoms[g].margin);
      return NULL;
    }
  }
  /* tendons and muscles have no backward pass yet: refused, never differentiated wrongly */
  for (int i = 0; i < m->nu; i++) {
    if (m->actuators[i].type == SIM_ACT_MUSCLE || m->actuators[i].tendon >= 0) {
      snprintf(err, err_sz, "sim_deriv_new: actuator \"%s\" is a muscle or pulls a tendon: "
               "the derivatives of tendons and muscles are not built", m->actuators[i].name);
      return NULL;
    }
  }
  if (m->ntendon > 0) {
    snprintf(err, err_sz, "sim_deriv_new: tendon \"%s\": the derivatives of models with "
             "tendons are not built", m->tendons[0].name);
    return NULL;
  }
  const int nv = m->nv, nq = m->nq, na = m->na, nbody = m->nbody, nefc_max = m->nefc_max;
  const int njnt = m->njnt;
  const int ncol = 2 * nv + na + m->nu + np;
  size_t total = 0;
#define DERIV_SIZE(name, count) total += (size_t)(count);
  DERIV_ARRAYS(DERIV_SIZE)
#undef DERIV_SIZE
  size_t nint = (size_t)nv + 2 * (size_t)na;
  size_t bytes = total * sizeof(double) + nint * sizeof(int) + (size_t)np * sizeof(sim_param);
  sim_deriv *w = calloc(1, sizeof *w);
  void *buffer = calloc(bytes ? bytes : 1, 1);
  if (!w || !buffer) {
    free(w);
    free(buffer);
    snprintf(err, err_sz, "sim_deriv_new: out of memory");
    return NULL;
  }
  w->buffer = buffer;
  w->m = m;
  w->nv = nv, w->nq = nq, w->na = na, w->nu = m->nu, w->np = np, w->nbody = nbody;
  w->njnt = m->njnt;
  w->nefc_max = nefc_max;
  w->nx = 2 * nv + na;
  w->ncol = ncol;
  w->cv = nv, w->ca = 2 * nv, w->cu = 2 * nv + na, w->cp = 2 * nv + na + m->nu;
  double *next = buffer;
#define DERIV_ASSIGN(name, count)                                                              \
  w->name = next;                                                                              \
  next += (size_t)(count);
  DERIV_ARRAYS(DERIV_ASSIGN)
#undef DERIV_ASSIGN
  w->params = (sim_param *)next;
  w->rotgroup = (int *)(w->params + np);
  w->act_dof = w->rotgroup + nv;
  w->act_actuator = w->act_dof + na;
  if (np > 0) {
    memcpy(w->params, params, (size_t)np * sizeof *params);
  }
  set_groups(m, w->rotgroup);
  for (int i = 0; i < m->nu; i++) {
    if (m->actuators[i].actadr >= 0) {
      w->act_dof[m->actuators[i].actadr] = m->actuators[i].dof;
      w->act_actuator[m->actuators[i].actadr] = i;
    }
  }
  return w;
}

void sim_deriv_free(sim_deriv **pw) {
  sim_deriv *w = pw ? *pw : NULL;
  if (!w) {
    return;
  }
  free(w->buffer);
  free(w);
  *pw = NULL;
}

int sim_deriv_nparam(const sim_deriv *w) {
  return w->np;
}

const sim_param *sim_deriv_params(const sim_deriv *w) {
  return w->params;
}

static int any_damping(const sim_model *m) {
  for (int j = 0; j < m->njnt; j++) {
    if (m->joints[j].damping > 0) {
      return 1;
    }
  }
  return 0;
}

/* row-major out (rows nx, `n` columns) from X's columns first..first+n−1 */
static void copy_block(const sim_deriv *w, double *out, int first, int n) {
  for (int r = 0; r < w->nx; r++) {
    memcpy(out + (size_t)r * n, w->Xn + (size_t)r * w->ncol + first, (size_t)n * sizeof(double));
  }
}

int sim_deriv_step(const sim_model *m, sim_data *d, sim_deriv *w, double *A, double *B,
                   double *P) {
  if (!w || w->m->nv != m->nv || w->m->na != m->na || w->m->nu != m->nu ||
      w->m->nbody != m->nbody) {
    sim_step(m, d);
    return SIM_DERIV_EARG;
  }
  sim_integrator integrator = m->opt.integrator;
  if (integrator != SIM_INTEGRATOR_EULER && integrator != SIM_INTEGRATOR_RK4) {
    sim_step(m, d);
    return SIM_DERIV_EINTEGRATOR;
  }
  w->m = m;
  memcpy(w->qpos0, d->qpos, (size_t)m->nq * sizeof(double));
  memcpy(w->qvel0, d->qvel, (size_t)m->nv * sizeof(double));
  memcpy(w->act0, d->act, (size_t)m->na * sizeof(double));
  w->status = SIM_DERIV_OK;
  w->detail[0] = '\0';
  w->implicit_h =
      integrator == SIM_INTEGRATOR_EULER && any_damping(m) ? m->opt.timestep : 0.0;
  sim_step_observed(m, d, sim__dynamics_deriv, w);
  if (w->status != SIM_DERIV_OK) {
    return w->status;
  }
  sim__integrate_deriv(w, d, w->Xn);
  if (A) {
    copy_block(w, A, 0, w->nx);
  }
  if (B) {
    copy_block(w, B, w->cu, w->nu);
  }
  if (P) {
    copy_block(w, P, w->cp, w->np);
  }
  return SIM_DERIV_OK;
}

const char *sim_deriv_detail(const sim_deriv *w) {
  return w->detail;
}

/* --- forward sensitivities ---------------------------------------------------------------- */

void sim_deriv_sensitivity_init(const sim_deriv *w, double *S) {
  int n = w->nx + w->np;
  memset(S, 0, (size_t)w->nx * (size_t)n * sizeof(double));
  for (int r = 0; r < w->nx; r++) {
    S[(size_t)r * n + r] = 1;
  }
}

int sim_deriv_sensitivity_step(const sim_model *m, sim_data *d, sim_deriv *w, double *S) {
  int rc = sim_deriv_step(m, d, w, NULL, NULL, NULL);
  if (rc != SIM_DERIV_OK) {
    return rc;
  }
  int nx = w->nx, n = nx + w->np;
  for (int r = 0; r < nx; r++) { /* row r of A·S + [0 | P]: Xn's row r holds A's and P's */
    double *out = w->sens + (size_t)r * n;
    const double *X = w->Xn + (size_t)r * w->ncol;
    memcpy(out + nx, X + w->cp, (size_t)w->np * sizeof(double));
    for (int c = 0; c < nx; c++) {
      out[c] = 0;
    }
    for (int j = 0; j < nx; j++) {
      const double a = X[j];
      if (a == 0) {
        continue;
      }
      const double *Sj = S + (size_t)j * n;
      for (int c = 0; c < n; c++) {
        out[c] += a * Sj[c];
      }
    }
  }
  memcpy(S, w->sens, (size_t)nx * (size_t)n * sizeof(double));
  return SIM_DERIV_OK;
}

/* --- the pool's worlds ---------------------------------------------------------------------- */

typedef struct pool_jacobians {
  sim_deriv **w;
  double *A, *B, *P;
  int *status;
} pool_jacobians;

static void world_jacobians(void *ctx, const sim_model *m, int i, sim_data *d) {
  const pool_jacobians *job = ctx;
  sim_deriv *w = job->w[i];
  size_t nx = (size_t)sim_deriv_nx(m);
  int rc = sim_deriv_step(m, d, w, job->A ? job->A + (size_t)i * nx * nx : NULL,
                          job->B ? job->B + (size_t)i * nx * (size_t)m->nu : NULL,
                          job->P ? job->P + (size_t)i * nx * (size_t)w->np : NULL);
  if (job->status) {
    job->status[i] = rc;
  }
}

void sim_deriv_pool_step(sim_pool *p, sim_deriv **w, double *A, double *B, double *P,
                         int *status) {
  pool_jacobians job = {w, A, B, P, status};
  sim_pool_run(p, world_jacobians, &job);
}
