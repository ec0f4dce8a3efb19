/* tools/bench/bench_deriv_adolc.cc: the stage code of a step (kinematics, passive forces, actuators,
 * ABA, the integrators) compiled with ADOL-C's adouble for `double`, and a taped rollout
 * gradient with it (bench_deriv_adolc.h). As tests/flops/counted_stages.cc does with its
 * counting scalar, the very files of sim/ are included here, inside a namespace of their own
 * (ad::), so that the adouble model and data sit beside the real ones; the constraint stages are
 * stubs (the benchmark's model has no rows). Two things the counting scalar did not need: a
 * model and data of adoubles are built here (an adouble is a handle on ADOL-C's store, not a
 * double), and memcpy and memset of adouble arrays go element by element (a byte copy would
 * alias the handles). */
#include <adolc/adolc.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmath>

extern "C" {
#include "sim/deriv/deriv.h"
#include "sim/sim.h"
}
#include "bench_deriv_adolc.h"

/* the headers again, inside ad:: with adouble */
#undef ACHILLES_SIM_SIM_H
#undef ACHILLES_SIM_DATA_H
#undef ACHILLES_SIM_MODEL_H
#undef ACHILLES_SIM_SPATIAL_H

namespace ad {
/* element-wise copies for adouble arrays; anything else as the C library does it */
static inline void *memcpy(adouble *dst, const adouble *src, size_t n) {
  for (size_t i = 0; i < n / sizeof(adouble); i++) {
    dst[i] = src[i];
  }
  return dst;
}
static inline void *memset(adouble *dst, int c, size_t n) {
  (void)c; /* the stage code only ever clears */
  for (size_t i = 0; i < n / sizeof(adouble); i++) {
    dst[i] = 0.0;
  }
  return dst;
}
template <class T> static inline void *memcpy(T *dst, const T *src, size_t n) {
  return ::memcpy(dst, src, n);
}
template <class T> static inline void *memset(T *dst, int c, size_t n) {
  return ::memset(dst, c, n);
}
static inline bool isfinite(const badouble &x) { return std::isfinite(x.getValue()); }
} // namespace ad

#define double adouble
namespace ad {
#include "sim/sim.h"
#include "sim/spatial.c"
#include "sim/model.c"
#include "sim/kinematics.c"
#include "sim/rnea.c"
#include "sim/aba.c"
#include "sim/passive.c"
#include "sim/actuator.c"
#include "sim/forward.c"
#include "sim/integrate.c"
/* the constraint stages: the benchmark's model makes no rows */
void sim_collide(const sim_model *m, sim_data *d) { (void)m, d->ncon = 0; }
void sim_constraint_make(const sim_model *m, sim_data *d) { (void)m, d->nefc = d->nf = 0; }
void sim_crba(const sim_model *m, sim_data *d) { (void)m, (void)d; }
void sim_factor_m(const sim_model *m, sim_data *d) { (void)m, (void)d; }
void sim_solve_constraints(const sim_model *m, sim_data *d) { (void)m, (void)d; }
/* and no slider-crank actuator (sim/actuator_crank.c) */
void sim__crank_transmission(const sim_model *m, sim_data *d, int i, double *l, double *v) {
  (void)m, (void)d, (void)i, *l = 0, *v = 0;
}
void sim__adhesion_transmission(const sim_model *m, sim_data *d, int i) { (void)m, (void)d, (void)i; }
/* the benchmark's model has no viscosity */
void sim__fluid(const sim_model *m, sim_data *d) { (void)m, (void)d; }
/* tendons and muscles: the benchmark's model has none */
void sim_tendons(const sim_model *m, sim_data *d) { (void)m, (void)d; }
double sim__muscle_gain(const sim_muscle *, double, double, const double *, double) { return 0.0; }
double sim__muscle_bias(const sim_muscle *, double, const double *, double) { return 0.0; }
double sim__muscle_dynamics(const sim_muscle *, double, double) { return 0.0; }
} // namespace ad
#undef double

/* --- an adouble model and data ------------------------------------------------------------------- */

template <int N> static void copy(adouble (&dst)[N], const double (&src)[N]) {
  for (int k = 0; k < N; k++) {
    dst[k] = src[k];
  }
}

static void body_copy(ad::sim_body *b, const sim_body *s) {
  memcpy(b->name, s->name, sizeof b->name);
  b->parent = s->parent, b->joint = s->joint, b->jntnum = s->jntnum, b->dofadr = s->dofadr;
  b->dofnum = s->dofnum, b->multi_dof = s->multi_dof, b->described = s->described;
  b->identity_quat = s->identity_quat, b->diagonal_inertia = s->diagonal_inertia;
  b->last_child = s->last_child, b->weld = s->weld;
  copy(b->pos, s->pos), copy(b->quat, s->quat), copy(b->com, s->com), copy(b->inertia, s->inertia);
  copy(b->mat, s->mat), copy(b->invweight0, s->invweight0);
  b->mass = s->mass;
}

static void joint_copy(ad::sim_joint *j, const sim_joint *s) {
  memcpy(j->name, s->name, sizeof j->name);
  j->type = (ad::sim_joint_type)s->type;
  j->body = s->body, j->qposadr = s->qposadr, j->dofadr = s->dofadr, j->limited = s->limited;
  copy(j->axis, s->axis), copy(j->pos, s->pos), copy(j->range, s->range);
  copy(j->solref_limit, s->solref_limit), copy(j->solimp_limit, s->solimp_limit);
  copy(j->solref_friction, s->solref_friction), copy(j->solimp_friction, s->solimp_friction);
  j->damping = s->damping, j->armature = s->armature, j->stiffness = s->stiffness;
  j->springref = s->springref, j->frictionloss = s->frictionloss, j->invweight0 = s->invweight0;
}

static void actuator_copy(ad::sim_actuator *a, const sim_actuator *s) {
  memcpy(a->name, s->name, sizeof a->name);
  a->type = (ad::sim_actuator_type)s->type;
  a->joint = s->joint, a->qposadr = s->qposadr, a->dof = s->dof, a->actadr = s->actadr;
  a->tendon = s->tendon;
  a->dc_input_voltage = s->dc_input_voltage;
  copy(a->ctrlrange, s->ctrlrange);
  a->gear = s->gear, a->supply_voltage = s->supply_voltage, a->resistance = s->resistance;
  a->inductance = s->inductance, a->kt = s->kt, a->ke = s->ke, a->efficiency = s->efficiency;
  a->current_limit = s->current_limit, a->kp = s->kp, a->kd = s->kd, a->kv = s->kv;
  a->force_limit = s->force_limit;
  a->crank_site = a->slider_site = a->adhesion_body = -1; /* the benchmark's model drives joints only */
}

/* the model's arrays of adoubles (the integer ones are shared with the C model) */
struct ad_model {
  ad::sim_model m;
  ad::sim_body *bodies;
  ad::sim_joint *joints;
  ad::sim_actuator *actuators;
  adouble *qpos0;
};

static void model_new(ad_model *out, const sim_model *s) {
  ad::sim_model *m = &out->m; /* value-initialized by the caller: zeros and null pointers */
  memcpy(m->name, s->name, sizeof m->name);
  m->nbody = s->nbody, m->njnt = s->njnt, m->nq = s->nq, m->nv = s->nv, m->nu = s->nu;
  m->na = s->na, m->dof_joint = s->dof_joint, m->dof_body = s->dof_body;
  m->dof_parent = s->dof_parent;
  out->bodies = new ad::sim_body[(size_t)s->nbody];
  out->joints = new ad::sim_joint[(size_t)s->njnt];
  out->actuators = new ad::sim_actuator[(size_t)s->nu + 1];
  out->qpos0 = new adouble[(size_t)s->nq + 1];
  m->bodies = out->bodies, m->joints = out->joints, m->actuators = out->actuators;
  m->qpos0 = out->qpos0;
  m->opt.integrator = (ad::sim_integrator)s->opt.integrator;
  m->opt.midpoint_iterations = s->opt.midpoint_iterations;
  m->opt.solver_iterations = s->opt.solver_iterations;
}

/* every adouble value of the model from the C model (inside the tape: constants on it) */
static void model_values(ad_model *out, const sim_model *s) {
  ad::sim_model *m = &out->m;
  for (int i = 0; i < s->nbody; i++) body_copy(&out->bodies[i], &s->bodies[i]);
  for (int j = 0; j < s->njnt; j++) joint_copy(&out->joints[j], &s->joints[j]);
  for (int i = 0; i < s->nu; i++) actuator_copy(&out->actuators[i], &s->actuators[i]);
  for (int k = 0; k < s->nq; k++) out->qpos0[k] = s->qpos0[k];
  m->opt.timestep = s->opt.timestep;
  copy(m->opt.gravity, s->opt.gravity);
  m->opt.solver_tolerance = s->opt.solver_tolerance;
  m->meaninertia = s->meaninertia;
}

static void model_free(ad_model *m) {
  delete[] m->bodies;
  delete[] m->joints;
  delete[] m->actuators;
  delete[] m->qpos0;
}

/* data of adoubles laid out as sim_data's (the X-macro tables of data.h) */
struct ad_data {
  ad::sim_data d;
  adouble *values;
  int *ints;
  size_t nvalues;
};

static void data_new(ad_data *out, const ad::sim_model *m) {
  size_t total = 0, nint = 0;
#define AD_SIZE(name, rows, cols) total += (size_t)m->rows * (size_t)(cols);
#define AD_ISIZE(name, rows, cols) nint += (size_t)m->rows * (size_t)(cols);
  SIM_STATE_ARRAYS(AD_SIZE)
  SIM_WORK_ARRAYS(AD_SIZE)
  SIM_INT_ARRAYS(AD_ISIZE)
#undef AD_SIZE
#undef AD_ISIZE
  out->values = new adouble[total + 1];
  out->ints = new int[nint + 1]();
  out->nvalues = total;
  ad::sim_data *d = &out->d; /* value-initialized by the caller */
  adouble *next = out->values;
  int *next_int = out->ints;
#define AD_ASSIGN(name, rows, cols)                                                            \
  d->name = next;                                                                              \
  next += (size_t)m->rows * (size_t)(cols);
#define AD_IASSIGN(name, rows, cols)                                                           \
  d->name = next_int;                                                                          \
  next_int += (size_t)m->rows * (size_t)(cols);
  SIM_STATE_ARRAYS(AD_ASSIGN)
  SIM_WORK_ARRAYS(AD_ASSIGN)
  SIM_INT_ARRAYS(AD_IASSIGN)
#undef AD_ASSIGN
#undef AD_IASSIGN
}

/* --- the taped rollout --------------------------------------------------------------------------- */

/* the thread's CPU time, as tools/bench/bench_deriv.c measures */
static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static adouble *parameter(ad_model *am, sim_param p) {
  switch (p.field) {
  case SIM_PARAM_BODY_mass: return &am->bodies[p.index].mass;
  case SIM_PARAM_JOINT_damping: return &am->joints[p.index].damping;
  case SIM_PARAM_JOINT_armature: return &am->joints[p.index].armature;
  default: return NULL;
  }
}

extern "C" int adolc_rollout_gradient(const sim_model *m, const sim_data *d0, int T,
                                      const double *ctrl, const double *qref, double wq,
                                      double wu, double wT, const sim_param *params, int np,
                                      double *grad, adolc_result *out) {
  const int nq = m->nq, nv = m->nv, nu = m->nu, n = 2 * nv + T * nu + np;
  if (nq != nv || m->nefc_max > 0) {
    fprintf(stderr, "adolc_rollout_gradient: hinges and slides without constraint rows only\n");
    return -1;
  }
  ad_model am{};
  model_new(&am, m);
  ad_data ad{};
  data_new(&ad, &am.m);
  for (int k = 0; k < np; k++) {
    if (!parameter(&am, params[k])) {
      fprintf(stderr, "adolc_rollout_gradient: body mass, joint damping and armature only\n");
      return -1;
    }
  }
  double *x = (double *)malloc((size_t)n * sizeof(double));
  for (int k = 0; k < nv; k++) x[k] = d0->qpos[k], x[nv + k] = d0->qvel[k];
  memcpy(x + 2 * nv, ctrl, (size_t)T * (size_t)nu * sizeof(double));
  for (int k = 0; k < np; k++) x[2 * nv + T * nu + k] = sim_param_get(m, params[k]);
  const short tag = 1;
  const unsigned big = 1u << 26; /* elements per tape buffer: the whole tape in memory */
  double t0 = seconds();
  trace_on(tag, 0, big, big, big, big);
  {
    model_values(&am, m);
    ad::sim_data *d = &ad.d;
    for (size_t k = 0; k < ad.nvalues; k++) ad.values[k] = 0.0;
    for (int k = 0; k < nv; k++) d->qpos[k] <<= x[k];
    for (int k = 0; k < nv; k++) d->qvel[k] <<= x[nv + k];
    adouble *u = new adouble[(size_t)T * (size_t)nu + 1];
    for (int k = 0; k < T * nu; k++) u[k] <<= x[2 * nv + k];
    for (int k = 0; k < np; k++) *parameter(&am, params[k]) <<= x[2 * nv + T * nu + k];
    for (int k = 0; k < m->na; k++) d->act[k] = d0->act[k];
    adouble loss = 0.0;
    for (int t = 0; t <= T; t++) {
      double w = t < T ? wq : wT;
      for (int k = 0; k < nv; k++) {
        adouble e = d->qpos[k] - qref[(size_t)t * nq + k];
        loss += w * e * e;
      }
      if (t == T) break;
      for (int i = 0; i < nu; i++) {
        d->ctrl[i] = u[t * nu + i];
        loss += wu * u[t * nu + i] * u[t * nu + i];
      }
      ad::sim_step(&am.m, d);
    }
    loss >>= out->loss;
    delete[] u;
  }
  trace_off();
  double t1 = seconds();
  gradient(tag, n, x, grad);
  double t2 = seconds();
  size_t stats[STAT_SIZE];
  tapestats(tag, stats);
  out->tape_seconds = t1 - t0;
  out->gradient_seconds = t2 - t1;
  out->operations = stats[NUM_OPERATIONS];
  out->locations = stats[NUM_LOCATIONS];
  out->values = stats[NUM_VALUES];
  out->tape_bytes = out->operations + 4 * out->locations + 8 * out->values;
  free(x);
  delete[] ad.values;
  delete[] ad.ints;
  model_free(&am);
  return 0;
}
