/* sysid/problem.c: making a problem from a model and a series (the checks of bad input, the
 * copies it owns), releasing it, and its accessors (sysid.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysid/internal.h"

void sysid_meas_default(sysid_meas *m) {
  *m = (sysid_meas){.latency = 0, .scale = 1, .offset = 0, .sigma = 1e-3};
}

void sysid_options_default(sysid_options *o) {
  *o = (sysid_options){.window = 0.5,
                       .fit_initial_state = 1,
                       .velocity_span = 0.01,
                       .max_iter = 100,
                       .xtol = 1e-10,
                       .gtol = 1e-10,
                       .ftol = 1e-12,
                       .weak_ratio = 1e-6};
}

static const char *source_of(const sysid_series *s) {
  return s->source[0] ? s->source : "the series";
}

/* the series' samples: times finite and increasing, inputs finite, readings finite or NAN */
static int check_series(const sysid_series *s, char *err, size_t err_sz) {
  if (s->n < 2 || !s->t || (s->njoint > 0 && !s->q) || (s->nact > 0 && !s->u)) {
    snprintf(err, err_sz, "%s: %d samples (at least two needed)", source_of(s), s->n);
    return -1;
  }
  if (s->njoint < 1) {
    snprintf(err, err_sz, "%s: no joint readings", source_of(s));
    return -1;
  }
  for (int i = 0; i < s->n; i++) {
    if (!isfinite(s->t[i]) || (i > 0 && !(s->t[i] > s->t[i - 1]))) {
      snprintf(err, err_sz, "%s: sample %d: time %g is %s", source_of(s), i, s->t[i],
               isfinite(s->t[i]) ? "not after the previous sample's" : "not a finite number");
      return -1;
    }
    for (int j = 0; j < s->njoint; j++) {
      double q = s->q[(size_t)i * s->njoint + j];
      if (isinf(q)) {
        snprintf(err, err_sz, "%s: sample %d (t = %g s): joint '%s' reads %g (not finite)",
                 source_of(s), i, s->t[i], s->joint_name[j], q);
        return -1;
      }
    }
    for (int a = 0; a < s->nact; a++) {
      double u = s->u[(size_t)i * s->nact + a];
      if (!isfinite(u)) {
        snprintf(err, err_sz, "%s: sample %d (t = %g s): input of actuator '%s' is %g (not finite)",
                 source_of(s), i, s->t[i], s->act_name[a], u);
        return -1;
      }
    }
  }
  return 0;
}

/* "a, b, c" of the model's joints or actuators, for messages */
static void names_list(const sim_model *m, int joints, char *buf, size_t sz) {
  buf[0] = '\0';
  int n = joints ? m->njnt : m->nu;
  for (int i = 0; i < n; i++) {
    if (joints && m->joints[i].type == SIM_JOINT_FIXED) {
      continue;
    }
    size_t len = strlen(buf);
    snprintf(buf + len, sz - len, "%s%s", len ? ", " : "",
             joints ? m->joints[i].name : m->actuators[i].name);
  }
}

/* series names onto the model's joints and actuators: a log of another robot stops here */
static int map_names(sysid_problem *p, const sim_model *m, const sysid_series *s, char *err,
                     size_t err_sz) {
  char list[1024];
  for (int j = 0; j < s->njoint; j++) {
    int id = sim_model_joint(m, s->joint_name[j]);
    if (id < 0) {
      names_list(m, 1, list, sizeof list);
      snprintf(err, err_sz,
               "%s: joint '%s': the model '%s' has no joint of that name (a log of another "
               "robot? its joints: %s)",
               source_of(s), s->joint_name[j], m->name, list);
      return -1;
    }
    if (m->joints[id].type != SIM_JOINT_HINGE && m->joints[id].type != SIM_JOINT_SLIDE) {
      snprintf(err, err_sz, "%s: joint '%s': a reading needs a hinge or slide joint",
               source_of(s), s->joint_name[j]);
      return -1;
    }
    for (int k = 0; k < j; k++) {
      if (!strcmp(s->joint_name[k], s->joint_name[j])) {
        snprintf(err, err_sz, "%s: joint '%s' appears twice", source_of(s), s->joint_name[j]);
        return -1;
      }
    }
    snprintf(p->jname[j], SIM_NAME_MAX, "%s", s->joint_name[j]);
    p->jqpos[j] = m->joints[id].qposadr;
    p->jdof[j] = m->joints[id].dofadr;
  }
  for (int a = 0; a < s->nact; a++) {
    p->act[a] = sim_model_actuator(m, s->act_name[a]);
    if (p->act[a] < 0) {
      names_list(m, 0, list, sizeof list);
      snprintf(err, err_sz,
               "%s: actuator '%s': the model '%s' has no actuator of that name (a log of "
               "another robot? its actuators: %s)",
               source_of(s), s->act_name[a], m->name, list[0] ? list : "none");
      return -1;
    }
  }
  return 0;
}

static int check_meas(const sysid_series *s, const sysid_meas *ms, char *err, size_t err_sz) {
  for (int j = 0; j < s->njoint; j++) {
    const sysid_meas *q = &ms[j];
    const char *why = !(isfinite(q->latency) && q->latency >= 0) ? "latency must be >= 0 s"
                      : !(isfinite(q->scale) && q->scale != 0)   ? "scale must be finite, not 0"
                      : !isfinite(q->offset)                     ? "offset must be finite"
                      : !(isfinite(q->sigma) && q->sigma > 0)    ? "sigma must be > 0"
                                                                 : NULL;
    if (why) {
      snprintf(err, err_sz, "measurement of joint '%s': %s", s->joint_name[j], why);
      return -1;
    }
  }
  return 0;
}

static int check_options(const sysid_options *o, const sim_model *m, char *err, size_t err_sz) {
  const char *why = !(isfinite(o->window) && o->window > 0)               ? "window must be > 0 s"
                    : !(isfinite(o->velocity_span) && o->velocity_span > 0) ? "velocity_span must be > 0 s"
                    : o->max_iter < 1                                      ? "max_iter must be >= 1"
                    : !(o->weak_ratio > 0 && o->weak_ratio < 1)            ? "weak_ratio must be in (0, 1)"
                    : !(o->xtol >= 0 && o->gtol >= 0 && o->ftol >= 0)      ? "tolerances must be >= 0"
                                                                           : NULL;
  if (why) {
    snprintf(err, err_sz, "options: %s", why);
    return -1;
  }
  if (m->opt.integrator != SIM_INTEGRATOR_EULER && m->opt.integrator != SIM_INTEGRATOR_RK4) {
    snprintf(err, err_sz, "model '%s': integrator %s has no derivatives (use euler or rk4)",
             m->name, sim_integrator_name(m->opt.integrator));
    return -1;
  }
  return 0;
}

/* the series' arrays and the per-joint tables */
static int copy_series(sysid_problem *p, const sysid_series *s, const sysid_meas *meas) {
  p->n = s->n, p->nj = s->njoint, p->na = s->nact;
  size_t n = (size_t)s->n;
  p->t = malloc(n * sizeof(double));
  p->y = malloc(n * (size_t)p->nj * sizeof(double));
  p->u = malloc(n * (size_t)p->na * sizeof(double) + 1);
  p->jname = calloc((size_t)p->nj, sizeof *p->jname);
  p->jqpos = calloc((size_t)p->nj, sizeof(int));
  p->jdof = calloc((size_t)p->nj, sizeof(int));
  p->act = calloc((size_t)p->na + 1, sizeof(int));
  p->meas = calloc((size_t)p->nj, sizeof *p->meas);
  if (!p->t || !p->y || !p->u || !p->jname || !p->jqpos || !p->jdof || !p->act || !p->meas) {
    return -1;
  }
  memcpy(p->t, s->t, n * sizeof(double));
  memcpy(p->y, s->q, n * (size_t)p->nj * sizeof(double));
  if (p->na) {
    memcpy(p->u, s->u, n * (size_t)p->na * sizeof(double));
  }
  for (int j = 0; j < p->nj; j++) {
    if (meas) {
      p->meas[j] = meas[j];
    } else {
      sysid_meas_default(&p->meas[j]);
    }
  }
  return 0;
}

/* the simulation and its workspaces */
static int workspaces(sysid_problem *p, char *err, size_t err_sz) {
  const sim_model *m = p->m;
  sim_param *list = malloc((size_t)p->np * sizeof *list);
  if (!list) {
    return -1;
  }
  for (int k = 0; k < p->np; k++) {
    list[k] = p->ps[k].sp;
  }
  p->w = sim_deriv_new(m, list, p->np, err, err_sz);
  free(list);
  p->d = sim_data_new(m);
  p->nx = sim_deriv_nx(m);
  size_t nc = 2 * (size_t)m->nv + (size_t)p->np, steps = (size_t)p->maxsteps + 1;
  p->S = malloc((size_t)p->nx * ((size_t)p->nx + (size_t)p->np) * sizeof(double));
  p->traj = malloc(steps * (size_t)p->nj * sizeof(double));
  p->trajS = malloc(steps * (size_t)p->nj * nc * sizeof(double));
  p->theta = malloc((size_t)p->np * sizeof(double));
  p->dtheta = malloc((size_t)p->np * sizeof(double));
  p->Jb = malloc((size_t)p->nrow * ((size_t)p->np + (size_t)p->nxs) * sizeof(double));
  p->xJ = malloc((size_t)p->nunk * sizeof(double));
  return p->w && p->d && p->S && p->traj && p->trajS && p->theta && p->dtheta && p->Jb && p->xJ
             ? 0
             : -1;
}

sysid_problem *sysid_problem_new(const sim_model *m, const sysid_series *s, const char *params,
                                 const char *bounds, const sysid_meas *meas,
                                 const sysid_options *o, char *err, size_t err_sz) {
  sysid_options def;
  if (!o) {
    sysid_options_default(&def);
    o = &def;
  }
  if (!m || !s) {
    snprintf(err, err_sz, "sysid: no model or no series");
    return NULL;
  }
  if (check_series(s, err, err_sz) < 0 || (meas && check_meas(s, meas, err, err_sz) < 0) ||
      check_options(o, m, err, err_sz) < 0) {
    return NULL;
  }
  sysid_problem *p = calloc(1, sizeof *p);
  if (!p || (p->m = sysid__model_copy(m)) == NULL || copy_series(p, s, meas) < 0) {
    snprintf(err, err_sz, "out of memory");
    sysid_problem_free(&p);
    return NULL;
  }
  p->o = *o;
  p->refresh_const = 1;
  p->nxs = o->fit_initial_state ? 2 * m->nv : 0;
  if (map_names(p, m, s, err, err_sz) < 0 ||
      sysid__params_parse(p, params, bounds, err, err_sz) < 0 ||
      sysid__windows_make(p, err, err_sz) < 0) {
    sysid_problem_free(&p);
    return NULL;
  }
  for (int k = 0; k < p->np; k++) {
    p->xstart[k] = sysid__coordinate(&p->ps[k], p->ps[k].start);
  }
  err[0] = '\0';
  if (workspaces(p, err, err_sz) < 0) {
    if (!err[0]) {
      snprintf(err, err_sz, "out of memory");
    }
    sysid_problem_free(&p);
    return NULL;
  }
  return p;
}

void sysid_problem_free(sysid_problem **pp) {
  if (!pp || !*pp) {
    return;
  }
  sysid_problem *p = *pp;
  sim_deriv_free(&p->w);
  sim_data_free(p->d);
  for (int w = 0; p->win && w < p->nw; w++) {
    free(p->win[w].qbase);
  }
  free(p->win);
  void *arrays[] = {p->t, p->y, p->u, p->jname, p->jqpos, p->jdof, p->act, p->meas, p->ps,
                    p->row, p->xstart, p->xfit, p->vstart, p->S, p->traj, p->trajS, p->theta,
                    p->dtheta, p->Jb, p->xJ};
  for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) {
    free(arrays[k]);
  }
  sim_model_free(p->m);
  free(p);
  *pp = NULL;
}

int sysid_nparam(const sysid_problem *p) { return p->np; }
int sysid_nwindow(const sysid_problem *p) { return p->nw; }
int sysid_nunknown(const sysid_problem *p) { return p->nunk; }
int sysid_nresidual(const sysid_problem *p) { return p->nrow; }
sim_param sysid_param(const sysid_problem *p, int i) { return p->ps[i].sp; }
const char *sysid_param_name(const sysid_problem *p, int i) { return p->ps[i].name; }
double sysid_simulated_seconds(const sysid_problem *p) { return p->simulated; }
const sim_model *sysid_fitted_model(const sysid_problem *p) { return p->m; }

void sysid_start(const sysid_problem *p, double *x0) {
  memcpy(x0, p->xstart, (size_t)p->nunk * sizeof(double));
}

void sysid_values(const sysid_problem *p, const double *x, double *theta) {
  for (int k = 0; k < p->np; k++) {
    double d;
    theta[k] = sysid__value(&p->ps[k], x[k], &d);
  }
}

int sysid_residual(sysid_problem *p, const double *x, double *r, double *J, char *err,
                   size_t err_sz) {
  if (sysid__eval(p, x, r, J != NULL, err, err_sz) < 0) {
    return -1;
  }
  if (J) {
    int nb = p->np + p->nxs;
    memset(J, 0, (size_t)p->nrow * (size_t)p->nunk * sizeof(double));
    for (int ri = 0; ri < p->nrow; ri++) {
      for (int c = 0; c < nb; c++) {
        J[(size_t)ri * p->nunk + sysid__column(p, p->row[ri].w, c)] = p->Jb[(size_t)ri * nb + c];
      }
    }
  }
  return 0;
}
