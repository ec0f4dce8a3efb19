/* tests/sim/test_deriv_rollout.c: rollout gradients (sim/deriv/rollout.h) over 1000 steps
 * against central differences of the rollout's loss, the same gradient to the last bit for
 * every checkpoint interval k, and with the world pool's threads (on the arm striking a stop,
 * where the iteration-limited solver and its warm start shape the bits). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deriv_fd.h"
#include "sim/deriv/rollout.h"
#include "sim/pool.h"

#define T 1000

/* an arm of three links (two hinges and a slide) under gravity, with damping, armature, a
 * position servo, a DC motor with a winding (a state) and a plain motor */
static const char arm_json[] =
    "{ \"name\": \"arm\", \"timestep\": 0.002, \"integrator\": \"%s\",\n"
    "  \"bodies\": [\n"
    "  { \"name\": \"upper\", \"parent\": \"world\",\n"
    "    \"joint\": { \"name\": \"shoulder\", \"type\": \"hinge\", \"axis\": [0, 1, 0], \"damping\": 0.3,\n"
    "               \"armature\": 0.01 },\n"
    "    \"inertial\": { \"mass\": 1.2, \"com\": [0.15, 0, 0.01], \"inertia\": [0.004, 0.01, 0.011, 0, 0, 0] } },\n"
    "  { \"name\": \"fore\", \"parent\": \"upper\", \"pos\": [0.3, 0, 0],\n"
    "    \"joint\": { \"name\": \"elbow\", \"type\": \"hinge\", \"axis\": [0, 0.6, 0.8], \"damping\": 0.1 },\n"
    "    \"inertial\": { \"mass\": 0.8, \"com\": [0.12, 0.01, 0], \"inertia\": [0.002, 0.004, 0.005, 0, 0, 0] } },\n"
    "  { \"name\": \"tool\", \"parent\": \"fore\", \"pos\": [0.25, 0, 0],\n"
    "    \"joint\": { \"name\": \"reach\", \"type\": \"slide\", \"axis\": [1, 0, 0], \"damping\": 2,\n"
    "               \"stiffness\": 20 },\n"
    "    \"inertial\": { \"mass\": 0.3, \"inertia\": [0.0005, 0.0005, 0.0005, 0, 0, 0] } } ],\n"
    "  \"actuators\": [\n"
    "    { \"name\": \"servo\", \"joint\": \"shoulder\", \"type\": \"position_servo\", \"kp\": 8, \"kd\": 0.2 },\n"
    "    { \"name\": \"dc\", \"joint\": \"elbow\", \"type\": \"dc_motor\", \"gear\": 20, \"input\": \"voltage\",\n"
    "      \"supply_voltage\": 12, \"resistance\": 2.5, \"inductance\": 0.002, \"kt\": 0.02,\n"
    "      \"current_limit\": 100 },\n"
    "    { \"name\": \"push\", \"joint\": \"reach\", \"type\": \"motor\", \"gear\": 1.5 } ] }\n";

static const char params[] =
    "body/upper/mass,body/fore/com_x,body/fore/izz,joint/*/damping,actuator/servo/kp,"
    "actuator/dc/resistance,actuator/dc/kt,actuator/dc/inductance";

typedef struct problem {
  sim_model *m;
  sim_data *d0;            /* the initial state */
  double ctrl[T * 3];
  double ref[(T + 1) * 3];
  sim_tracking_loss loss;
  sim_param list[16];
  int np;
} problem;

/* the same arm with a stop the elbow strikes within the first steps and friction on the slide:
 * the constraint solver then runs every step with its default 20 iterations, and its warm start
 * (part of the state) matters to the bits */
static const char stops[] = "\"damping\": 0.1, \"limited\": true, \"range\": [-0.35, 0.35],"
                            " \"frictionloss\": 0.05";

static void setup_problem(problem *p, const char *integrator, int with_stops) {
  char json[sizeof arm_json + sizeof stops + 16], err[512], text[sizeof arm_json + 16];
  snprintf(text, sizeof text, arm_json, integrator);
  if (with_stops) { /* the elbow's damping entry gains a stop and friction */
    char *at = strstr(text, "\"damping\": 0.1 }");
    assert_non_null(at);
    snprintf(json, sizeof json, "%.*s%s }%s", (int)(at - text), text, stops, at + strlen("\"damping\": 0.1 }"));
  } else {
    snprintf(json, sizeof json, "%s", text);
  }
  p->m = sim_model_load_string(json, "arm", err, sizeof err);
  if (!p->m) fprintf(stderr, "%s\n", err);
  assert_non_null(p->m);
  p->np = sim_param_parse(p->m, params, p->list, 16, err, sizeof err);
  assert_true(p->np > 0);
  p->d0 = sim_data_new(p->m);
  p->d0->qpos[0] = 0.4, p->d0->qpos[1] = -0.3, p->d0->qpos[2] = 0.02;
  p->d0->qvel[0] = 0.5, p->d0->qvel[1] = -1, p->d0->qvel[2] = 0.1;
  p->d0->act[0] = 0.2;
  for (int t = 0; t < T; t++) { /* smooth commands: a target swing, a voltage, a push */
    double s = t * 0.002;
    p->ctrl[3 * t] = 0.5 * sin(2 * s);
    p->ctrl[3 * t + 1] = 3 * cos(3 * s);
    p->ctrl[3 * t + 2] = 0.5 * sin(5 * s + 1);
  }
  for (int t = 0; t <= T; t++) {
    double s = t * 0.002;
    p->ref[3 * t] = 0.3 * sin(1.5 * s), p->ref[3 * t + 1] = 0.2 * cos(s), p->ref[3 * t + 2] = 0.01;
  }
  p->loss = (sim_tracking_loss){p->ref, 1.0, 0.01, 0.001, 10.0};
}

static void teardown_problem(problem *p) {
  sim_data_free(p->d0);
  sim_model_free(p->m);
}

/* the loss of the rollout from d0 with ctrl, stepping with sim_step (the reference) */
static double rollout_loss(problem *p, const sim_data *d0, const double *ctrl) {
  sim_data *d = sim_data_new(p->m);
  double gx[16], gu[8], total = 0;
  fd_copy_state(p->m, d, d0);
  for (int t = 0; t <= T; t++) {
    if (t < T) memcpy(d->ctrl, ctrl + 3 * t, 3 * sizeof(double));
    sim_kinematics(p->m, d);
    memset(gx, 0, sizeof gx), memset(gu, 0, sizeof gu);
    total += sim_loss_tracking(&p->loss, p->m, d, t, T, gx, t < T ? gu : NULL);
    if (t < T) sim_step(p->m, d);
  }
  sim_data_free(d);
  return total;
}

typedef struct gradient {
  double loss, x0[16], ctrl[T * 3], param[16];
} gradient;

static void analytic(problem *p, int k, gradient *g, const sim_data *d0) {
  char err[256];
  sim_rollout *r = sim_rollout_new(p->m, p->list, p->np, T, k, err, sizeof err);
  assert_non_null(r);
  sim_data *d = sim_data_new(p->m);
  fd_copy_state(p->m, d, d0);
  memset(g, 0, sizeof *g);
  assert_int_equal(sim_rollout_gradient(r, d, p->ctrl, sim_loss_tracking, &p->loss, &g->loss,
                                        g->x0, g->ctrl, g->param), SIM_DERIV_OK);
  sim_data_free(d);
  sim_rollout_free(&r);
}

/* (−L(2ε) + 8L(ε) − 8L(−ε) + L(−2ε))/12ε with input c of kind 0 (the state), 1 (a command) or
 * 2 (a parameter, ε relative to its value) moved */
static double fd(problem *p, int kind, int c, double eps) {
  static const double o[4] = {2, 1, -1, -2}, w[4] = {-1.0 / 12, 8.0 / 12, -8.0 / 12, 1.0 / 12};
  static double ctrl[T * 3];
  char err[256];
  double sum = 0, value = kind == 2 ? sim_param_get(p->m, p->list[c]) : 0;
  sim_data *d = sim_data_new(p->m);
  for (int s = 0; s < 4; s++) {
    double e = o[s] * eps;
    fd_copy_state(p->m, d, p->d0);
    memcpy(ctrl, p->ctrl, sizeof ctrl);
    if (kind == 1) {
      ctrl[c] += e;
    } else if (kind == 2) {
      assert_int_equal(sim_param_set(p->m, p->list[c], value * (1 + e), err, sizeof err), 0);
    } else if (c < p->m->nv) {
      double dq[8] = {0};
      dq[c] = 1;
      sim_state_perturb(p->m, d->qpos, dq, e);
    } else if (c < 2 * p->m->nv) {
      d->qvel[c - p->m->nv] += e;
    } else {
      d->act[c - 2 * p->m->nv] += e;
    }
    sum += w[s] * rollout_loss(p, d, ctrl);
  }
  if (kind == 2) {
    assert_int_equal(sim_param_set(p->m, p->list[c], value, err, sizeof err), 0);
  }
  sim_data_free(d);
  return sum / (kind == 2 ? eps * value : eps);
}

static int close_enough(double a, double f, double *excess) {
  double e = fabs(a - f) / fmax(FD_REL_TOL * fabs(f), FD_ABS_TOL);
  *excess = fmax(*excess, e);
  return e <= 1;
}

static void check_against_fd(const char *integrator) {
  problem p;
  setup_problem(&p, integrator, 0);
  gradient *g = malloc(sizeof *g);
  analytic(&p, 1, g, p.d0);
  double worst = 0;
  char name[128];
  int nx = sim_deriv_nx(p.m);
  for (int c = 0; c < nx; c++) {
    double f = fd(&p, 0, c, 1e-4);
    sim_deriv_state_name(p.m, c, name, sizeof name);
    printf("  dL/d%-14s analytic %+.12e  FD %+.12e\n", name, g->x0[c], f);
    close_enough(g->x0[c], f, &worst);
  }
  static const int picks[][2] = {{0, 0}, {17, 1}, {250, 2}, {499, 0}, {800, 1}, {999, 2}};
  for (int k = 0; k < 6; k++) {
    int c = 3 * picks[k][0] + picks[k][1];
    double f = fd(&p, 1, c, 1e-3);
    printf("  dL/du[%3d][%d]     analytic %+.12e  FD %+.12e\n", picks[k][0], picks[k][1],
           g->ctrl[c], f);
    close_enough(g->ctrl[c], f, &worst);
  }
  for (int c = 0; c < p.np; c++) {
    double f = fd(&p, 2, c, 1e-3);
    sim_param_name(p.m, p.list[c], name, sizeof name);
    printf("  dL/d%-26s analytic %+.12e  FD %+.12e\n", name, g->param[c], f);
    close_enough(g->param[c], f, &worst);
  }
  printf("%s, %d steps, loss %.9g: worst %.3g of the tolerance\n", integrator, T, g->loss, worst);
  assert_true(worst <= 1);
  assert_true(fabs(g->loss - rollout_loss(&p, p.d0, p.ctrl)) <= 1e-12 * g->loss);
  free(g);
  teardown_problem(&p);
}

static void test_rollout_euler_against_fd(void **state) {
  (void)state;
  check_against_fd("euler");
}

static void test_rollout_rk4_against_fd(void **state) {
  (void)state;
  check_against_fd("rk4");
}

/* steps of the rollout whose evaluation had constraint rows */
static int count_constrained_steps(problem *p) {
  sim_data *d = sim_data_new(p->m);
  fd_copy_state(p->m, d, p->d0);
  int n = 0;
  for (int t = 0; t < T; t++) {
    memcpy(d->ctrl, p->ctrl + 3 * t, 3 * sizeof(double));
    sim_step(p->m, d);
    n += d->nefc > 1; /* more than the slide's friction row: the stop */
  }
  sim_data_free(d);
  printf("%d of %d steps at the elbow's stop\n", n, T);
  return n;
}

/* every checkpoint interval gives the same bits */
static void test_every_interval_same_bits(void **state) {
  (void)state;
  problem p;
  setup_problem(&p, "euler", 1);
  gradient *ref = malloc(sizeof *ref), *g = malloc(sizeof *g);
  analytic(&p, 1, ref, p.d0);
  assert_true(count_constrained_steps(&p) > 100);
  const int ks[] = {2, 7, SIM_ROLLOUT_SQRT, 100, 999, T};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
    analytic(&p, ks[i], g, p.d0);
    printf("k = %d: %s\n", ks[i], memcmp(g, ref, sizeof *g) ? "differs" : "same bits");
    assert_memory_equal(g, ref, sizeof *g);
  }
  free(ref);
  free(g);
  teardown_problem(&p);
}

/* the pool's worlds each run a rollout gradient from their own start, on two threads */
typedef struct pool_job {
  problem *p;
  sim_rollout *r[4];
  gradient *g[4];
} pool_job;

static void world_gradient(void *ctx, const sim_model *m, int w, sim_data *d) {
  pool_job *job = ctx;
  (void)m;
  gradient *g = job->g[w];
  sim_rollout_gradient(job->r[w], d, job->p->ctrl, sim_loss_tracking, &job->p->loss, &g->loss,
                       g->x0, g->ctrl, g->param);
}

static void test_pool_threads_same_bits(void **state) {
  (void)state;
  problem p;
  char err[256];
  setup_problem(&p, "rk4", 1);
  sim_pool *pool = sim_pool_new(p.m, 4, 2, err, sizeof err);
  assert_non_null(pool);
  pool_job job = {&p, {0}, {0}};
  for (int w = 0; w < 4; w++) {
    job.r[w] = sim_rollout_new(p.m, p.list, p.np, T, 10, err, sizeof err);
    job.g[w] = calloc(1, sizeof(gradient));
    sim_data *d = sim_pool_data(pool, w);
    fd_copy_state(p.m, d, p.d0);
    d->qvel[0] += 0.1 * w;
  }
  sim_pool_run(pool, world_gradient, &job);
  gradient *alone = malloc(sizeof *alone);
  for (int w = 0; w < 4; w++) {
    sim_data *d = sim_data_new(p.m);
    fd_copy_state(p.m, d, p.d0);
    d->qvel[0] += 0.1 * w;
    analytic(&p, 1, alone, d);
    assert_memory_equal(alone, job.g[w], sizeof *alone);
    if (w > 0) assert_true(memcmp(job.g[w], job.g[0], sizeof *alone) != 0);
    sim_data_free(d);
    sim_rollout_free(&job.r[w]);
    free(job.g[w]);
  }
  printf("4 worlds on 2 threads: each the same bits as alone\n");
  free(alone);
  sim_pool_free(&pool);
  teardown_problem(&p);
}

/* a loss that writes to the state it is shown (against its contract) makes the recomputed step
 * differ from the forward pass's: the gradient stops with SIM_DERIV_EREPLAY */
static double meddling_loss(void *ctx, const sim_model *m, const sim_data *d, int t, int T_,
                            double *grad_x, double *grad_u) {
  if (t == 500) {
    ((sim_data *)d)->qvel[0] += 1e-12;
  }
  return sim_loss_tracking(ctx, m, d, t, T_, grad_x, grad_u);
}

static void test_replay_is_checked(void **state) {
  (void)state;
  problem p;
  char err[256];
  setup_problem(&p, "euler", 0);
  sim_rollout *r = sim_rollout_new(p.m, p.list, p.np, T, 1, err, sizeof err);
  sim_data *d = sim_data_new(p.m);
  fd_copy_state(p.m, d, p.d0);
  double loss;
  int rc = sim_rollout_gradient(r, d, p.ctrl, meddling_loss, &p.loss, &loss, NULL, NULL, NULL);
  printf("%s\n", sim_deriv_strerror(rc));
  assert_int_equal(rc, SIM_DERIV_EREPLAY);
  sim_data_free(d);
  sim_rollout_free(&r);
  teardown_problem(&p);
}

/* the end state of `steps` steps from d0 (with p's commands), as a point of the tangent space
 * around ref_qpos */
static void end_state(problem *p, const sim_data *d0, int steps, const double *ref_qpos,
                      double *x) {
  sim_data *d = sim_data_new(p->m);
  fd_copy_state(p->m, d, d0);
  for (int t = 0; t < steps; t++) {
    memcpy(d->ctrl, p->ctrl + 3 * t, 3 * sizeof(double));
    sim_step(p->m, d);
  }
  int nv = p->m->nv;
  sim_state_difference(p->m, x, d->qpos, ref_qpos);
  memcpy(x + nv, d->qvel, (size_t)nv * sizeof(double));
  memcpy(x + 2 * nv, d->act, (size_t)p->m->na * sizeof(double));
  sim_data_free(d);
}

/* S ← A·S + [0 | P] over a window of 200 steps against FD of the window's end state */
static void test_sensitivities_over_a_window(void **state) {
  (void)state;
  enum { STEPS = 200 };
  static const double o[4] = {2, 1, -1, -2}, wt[4] = {-1.0 / 12, 8.0 / 12, -8.0 / 12, 1.0 / 12};
  problem p;
  char err[256];
  setup_problem(&p, "euler", 0);
  sim_deriv *w = sim_deriv_new(p.m, p.list, p.np, err, sizeof err);
  int nx = sim_deriv_nx(p.m), n = nx + p.np;
  double *S = calloc((size_t)nx * (size_t)n, sizeof *S), ref[8], x[4][16], worst = 0;
  sim_data *d = sim_data_new(p.m), *moved = sim_data_new(p.m);
  fd_copy_state(p.m, d, p.d0);
  sim_deriv_sensitivity_init(w, S);
  for (int t = 0; t < STEPS; t++) {
    memcpy(d->ctrl, p.ctrl + 3 * t, 3 * sizeof(double));
    assert_int_equal(sim_deriv_sensitivity_step(p.m, d, w, S), SIM_DERIV_OK);
  }
  memcpy(ref, d->qpos, (size_t)p.m->nq * sizeof(double));
  for (int c = 0; c < n; c++) {
    double value = c >= nx ? sim_param_get(p.m, p.list[c - nx]) : 0;
    double e = c >= nx ? 1e-3 * value : 1e-4;
    for (int k = 0; k < 4; k++) {
      fd_copy_state(p.m, moved, p.d0);
      if (c >= nx) {
        assert_int_equal(sim_param_set(p.m, p.list[c - nx], value + o[k] * e, err, sizeof err), 0);
      } else if (c < p.m->nv) {
        double dq[8] = {0};
        dq[c] = 1;
        sim_state_perturb(p.m, moved->qpos, dq, o[k] * e);
      } else if (c < 2 * p.m->nv) {
        moved->qvel[c - p.m->nv] += o[k] * e;
      } else {
        moved->act[c - 2 * p.m->nv] += o[k] * e;
      }
      end_state(&p, moved, STEPS, ref, x[k]);
    }
    if (c >= nx) {
      assert_int_equal(sim_param_set(p.m, p.list[c - nx], value, err, sizeof err), 0);
    }
    for (int r = 0; r < nx; r++) {
      double f = 0;
      for (int k = 0; k < 4; k++) f += wt[k] * x[k][r] / e;
      double a = S[(size_t)r * n + c];
      worst = fmax(worst, fabs(a - f) / fmax(FD_REL_TOL * fabs(f), FD_ABS_TOL));
    }
  }
  printf("sensitivities over %d steps (%d states x %d columns): worst %.3g of the tolerance\n",
         STEPS, nx, n, worst);
  assert_true(worst <= 1);
  free(S);
  sim_data_free(d);
  sim_data_free(moved);
  sim_deriv_free(&w);
  teardown_problem(&p);
}

/* the pool's worlds each take a step with its Jacobians: the same bits as alone */
static void test_pool_jacobians_same_bits(void **state) {
  (void)state;
  problem p;
  char err[256];
  setup_problem(&p, "rk4", 1);
  enum { NW = 5 };
  int nx = sim_deriv_nx(p.m), nu = p.m->nu, status[NW];
  sim_pool *pool = sim_pool_new(p.m, NW, 2, err, sizeof err);
  sim_deriv *w[NW];
  size_t na = (size_t)nx * nx, nb = (size_t)nx * nu, np = (size_t)nx * p.np;
  double *A = calloc(NW * (na + nb + np) * 2, sizeof *A), *B = A + NW * na, *P = B + NW * nb;
  double *A1 = P + NW * np, *B1 = A1 + na, *P1 = B1 + nb;
  for (int i = 0; i < NW; i++) {
    w[i] = sim_deriv_new(p.m, p.list, p.np, err, sizeof err);
    sim_data *d = sim_pool_data(pool, i);
    fd_copy_state(p.m, d, p.d0);
    d->qpos[1] = -0.36 + 0.01 * i; /* some at the elbow's stop */
    memcpy(d->ctrl, p.ctrl, 3 * sizeof(double));
  }
  sim_deriv_pool_step(pool, w, A, B, P, status);
  for (int i = 0; i < NW; i++) {
    sim_data *d = sim_data_new(p.m);
    fd_copy_state(p.m, d, p.d0);
    d->qpos[1] = -0.36 + 0.01 * i;
    memcpy(d->ctrl, p.ctrl, 3 * sizeof(double));
    assert_int_equal(status[i], SIM_DERIV_OK);
    assert_int_equal(sim_deriv_step(p.m, d, w[i], A1, B1, P1), SIM_DERIV_OK);
    assert_memory_equal(A1, A + i * na, na * sizeof *A);
    assert_memory_equal(B1, B + i * nb, nb * sizeof *A);
    assert_memory_equal(P1, P + i * np, np * sizeof *A);
    assert_memory_equal(d->qpos, sim_pool_data(pool, i)->qpos, (size_t)p.m->nq * sizeof(double));
    sim_data_free(d);
    sim_deriv_free(&w[i]);
  }
  printf("%d worlds' Jacobians on 2 threads: the same bits as alone\n", NW);
  free(A);
  sim_pool_free(&pool);
  teardown_problem(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rollout_euler_against_fd),
      cmocka_unit_test(test_rollout_rk4_against_fd),
      cmocka_unit_test(test_every_interval_same_bits),
      cmocka_unit_test(test_pool_threads_same_bits),
      cmocka_unit_test(test_replay_is_checked),
      cmocka_unit_test(test_sensitivities_over_a_window),
      cmocka_unit_test(test_pool_jacobians_same_bits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
