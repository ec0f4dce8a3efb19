/* tests/sysid/test_motor.c: the arm on DC gearmotors driven by duty (arm_log.h): the motor's
 * parameters' Jacobian against differences, kt fitted back, and kt with the winding resistance
 * reported as a combination the log cannot split (the torque is η·gear·kt·(V − ke·gear·ω)/R:
 * with ke known, only kt/R shows). And on position servos fed set points: their gains. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arm_log.h"
#include "fd_check.h"
#include "support/model.h"
#include "support/skip.h"

typedef struct motor_run {
  sim_model *mt, *mg;
  sysid_series s;
  sysid_meas meas[ARM_NJ];
  sysid_problem *p;
} motor_run;

/* the arm's log (kind: arm_params.dc_motors), and the guess: the same arm with each actuator's
   kt (DC motors) or kp and kd (servos) times factor[k] */
static void make_kind(motor_run *r, int kind, double duration, const char *params,
                      const double factor[ARM_NJ]) {
  char json[8192], err[512];
  arm_params truth;
  arm_truth(&truth);
  truth.dc_motors = kind;
  arm_log_opts lo;
  arm_log_defaults(&lo);
  lo.duration = duration;
  r->mt = ts_model(arm_json(json, sizeof json, &truth, lo.h));
  r->mg = ts_model(json);
  for (int a = 0; a < ARM_NJ; a++) {
    r->mg->actuators[a].kt *= factor[a];
    r->mg->actuators[a].kp *= factor[a];
    r->mg->actuators[a].kd /= factor[a];
  }
  assert_int_equal(arm_log_make(r->mt, &lo, &r->s, r->meas), 0);
  r->p = sysid_problem_new(r->mg, &r->s, params, NULL, r->meas, NULL, err, sizeof err);
  if (!r->p) {
    fail_msg("%s", err);
  }
}

static void make(motor_run *r, double duration, const char *params, const double factor[ARM_NJ]) {
  make_kind(r, 1, duration, params, factor);
}

static void release(motor_run *r) {
  sysid_problem_free(&r->p);
  sysid_series_free(&r->s);
  sim_model_free(r->mt), sim_model_free(r->mg);
}

static void test_motor_jacobian(void **state) {
  (void)state;
  static const double f[ARM_NJ] = {1.3, 0.7, 1.4};
  motor_run r;
  make(&r, 1.2, "actuator.*.kt,actuator.*.resistance,actuator.*.ke,joint.*.damping", f);
  assert_true(fd_jacobian_error(r.p, "DC motors: kt, resistance, ke, damping") < 3e-5);
  release(&r);
}

/* the progress callback: once per iteration, in order, the cost never rising (beyond its
   rounding) */
typedef struct progress_log {
  int calls, last_iter;
  double last_cost;
} progress_log;

static void progress(void *ctx, int iter, double cost, double step) {
  progress_log *l = ctx;
  assert_int_equal(iter, l->last_iter + 1);
  /* (at the end, a step of 5e-11 may move the cost by its rounding, 4e-15 of it) */
  assert_true(cost <= l->last_cost * (1 + 1e-12) && step >= 0);
  l->calls++, l->last_iter = iter, l->last_cost = cost;
}

static void test_motor_kt_recovered(void **state) {
  (void)state;
  static const double f[ARM_NJ] = {1.4, 0.6, 1.35};
  motor_run r;
  make(&r, 3, "actuator.*.kt", f);
  /* the same problem with a progress callback */
  char err[512];
  sysid_options o;
  sysid_options_default(&o);
  progress_log pl = {0, 0, INFINITY};
  o.progress = progress, o.ctx = &pl;
  sysid_problem_free(&r.p);
  r.p = sysid_problem_new(r.mg, &r.s, "actuator.*.kt", NULL, r.meas, &o, err, sizeof err);
  assert_non_null(r.p);
  sysid_report rep;
  if (sysid_fit(r.p, &rep, err, sizeof err) < 0) {
    fail_msg("%s", err);
  }
  assert_int_equal(pl.calls, rep.iterations);
  assert_true(fabs(pl.last_cost - rep.cost_after) <= 1e-9 * rep.cost_after);
  /* the simulated readings after the fit: the report's residuals */
  double *q = malloc((size_t)r.s.n * ARM_NJ * sizeof(double));
  assert_int_equal(sysid_simulate(r.p, 1, q), 0);
  double ss = 0;
  int cnt = 0;
  for (int i = 2; i < r.s.n; i++) { /* samples 0, 1: before the log (latency) */
    double e = q[(size_t)i * ARM_NJ + 1] - r.s.q[(size_t)i * ARM_NJ + 1];
    ss += e * e, cnt++;
  }
  printf("shoulder: simulated against logged readings, rms %.4g (report: %.4g)\n",
         sqrt(ss / cnt), rep.rms_after[1]);
  assert_true(fabs(sqrt(ss / cnt) / rep.rms_after[1] - 1) < 1e-6);
  free(q);
  for (int k = 0; k < rep.np; k++) {
    double truth = r.mt->actuators[k].kt;
    printf("%-28s initial %.4g fitted %.6g ± %.2g truth %.4g error %+.4f %%\n", rep.param[k].name,
           rep.param[k].initial, rep.param[k].value, rep.param[k].stderr_, truth,
           100 * (rep.param[k].value / truth - 1));
    assert_true(fabs(rep.param[k].value / truth - 1) < 0.01);
    assert_true(rep.param[k].identifiable);
  }
  printf("%d iterations (%s), %.2f s\n", rep.iterations, rep.stop, rep.seconds);
  sysid_report_free(&rep);
  release(&r);
}

static void test_motor_kt_resistance_combination(void **state) {
  (void)state;
  static const double f[ARM_NJ] = {1, 1.3, 1};
  motor_run r;
  make(&r, 3, "actuator.shoulder_motor.kt,actuator.shoulder_motor.resistance,joint.shoulder.damping", f);
  sysid_report rep;
  char err[512];
  if (sysid_fit(r.p, &rep, err, sizeof err) < 0) {
    fail_msg("%s", err);
  }
  for (int k = 0; k < rep.np; k++) {
    printf("%-36s fitted %.6g ± %.2g%s\n", rep.param[k].name, rep.param[k].value,
           rep.param[k].stderr_, rep.param[k].identifiable ? "" : "  not identifiable");
  }
  printf("singular values %.3g %.3g %.3g\n", rep.singular_values[0], rep.singular_values[1],
         rep.singular_values[2]);
  for (int k = 0; k < rep.nweak; k++) {
    printf("not identifiable: %s\n", rep.weak[k]);
  }
  /* kt and R named together, the damping still determined; kt/R back at the truth */
  assert_int_equal(rep.nweak, 1);
  assert_non_null(strstr(rep.weak[0], "actuator.shoulder_motor.kt"));
  assert_non_null(strstr(rep.weak[0], "actuator.shoulder_motor.resistance"));
  assert_false(rep.param[0].identifiable);
  assert_false(rep.param[1].identifiable);
  assert_true(rep.param[2].identifiable);
  double ratio = rep.param[0].value / rep.param[1].value, truth = 0.02 / 2;
  printf("kt/R fitted %.6g, truth %.6g (%+.4f %%)\n", ratio, truth, 100 * (ratio / truth - 1));
  assert_true(fabs(ratio / truth - 1) < 0.01);
  assert_true(rep.singular_values[2] < 1e-6 * rep.singular_values[0]);
  sysid_report_free(&rep);
  release(&r);
}

static void test_servo_gains(void **state) {
  (void)state;
  static const double f[ARM_NJ] = {1.4, 0.65, 1.3};
  motor_run r;
  make_kind(&r, 2, 1.2, "actuator.*.kp,actuator.*.kd,joint.*.damping,joint.*.armature", f);
  /* the stiff servos make the base stick and slip within the differences' step: the derivative
     with the friction rows' state held is one side's (measured 2.8e-3 of the column at a
     transition, window 1's base position); with a smaller friction the sides agree */
  double kink = fd_jacobian_error(r.p, "position servos, friction 0.02-0.03 N·m");
  assert_true(kink < 1e-2);
  release(&r);
  make_kind(&r, 2, 1.2, "actuator.*.kp,actuator.*.kd,joint.*.damping,joint.*.armature", f);
  for (int j = 0; j < ARM_NJ; j++) {
    r.mg->joints[j].frictionloss = 0.001; /* the guess only: the problem copied it already */
  }
  sysid_problem_free(&r.p);
  char err0[512];
  r.p = sysid_problem_new(r.mg, &r.s, "actuator.*.kp,actuator.*.kd,joint.*.damping,joint.*.armature",
                          NULL, r.meas, NULL, err0, sizeof err0);
  assert_non_null(r.p);
  assert_true(fd_jacobian_error(r.p, "position servos, friction 0.001 N·m") < 3e-5);
  release(&r);
  /* fitted back with the joints' damping known (kd and damping act alike at the joint, but for
     Euler's implicit damping: fitted together, their split is ill-determined), and the base's
     armature too (3 % of the inertia about its axis beside the links': ±5 % from 4 s) */
  make_kind(&r, 2, 4, "actuator.*.kp,actuator.*.kd,joint.[se]*.armature", f);
  sysid_report rep;
  char err[512];
  if (sysid_fit(r.p, &rep, err, sizeof err) < 0) {
    fail_msg("%s", err);
  }
  for (int k = 0; k < rep.np; k++) {
    int a = k % ARM_NJ;
    double truth = k < 3 ? r.mt->actuators[a].kp : k < 6 ? r.mt->actuators[a].kd
                                                        : r.mt->joints[k - 5].armature;
    printf("%-28s initial %-8.4g fitted %-9.6g ± %-8.2g truth %-7.4g error %+.4f %%\n",
           rep.param[k].name, rep.param[k].initial, rep.param[k].value, rep.param[k].stderr_,
           truth, 100 * (rep.param[k].value / truth - 1));
    assert_true(fabs(rep.param[k].value / truth - 1) < 0.01);
    assert_true(rep.param[k].identifiable);
  }
  printf("%d iterations (%s), %.2f s\n", rep.iterations, rep.stop, rep.seconds);
  sysid_report_free(&rep);
  release(&r);
}

TS_MAIN(test_motor_jacobian, test_motor_kt_recovered, test_motor_kt_resistance_combination,
        test_servo_gains)
