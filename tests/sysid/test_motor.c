/* tests/sysid/test_motor.c: the arm on DC gearmotors driven by duty (arm_log.h): the motor's
 * parameters' Jacobian against differences, kt fitted back, and kt with the winding resistance
 * reported as a combination the log cannot split (the torque is η·gear·kt·(V − ke·gear·ω)/R:
 * with ke known, only kt/R shows). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
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

/* the DC arm's log, and the guess: the same arm with each kt·factor[k] */
static void make(motor_run *r, double duration, const char *params, const double factor[ARM_NJ]) {
  char json[8192], err[512];
  arm_params truth;
  arm_truth(&truth);
  truth.dc_motors = 1;
  arm_log_opts lo;
  arm_log_defaults(&lo);
  lo.duration = duration;
  r->mt = ts_model(arm_json(json, sizeof json, &truth, lo.h));
  r->mg = ts_model(json);
  for (int a = 0; a < ARM_NJ; a++) {
    r->mg->actuators[a].kt *= factor[a];
  }
  assert_int_equal(arm_log_make(r->mt, &lo, &r->s, r->meas), 0);
  r->p = sysid_problem_new(r->mg, &r->s, params, NULL, r->meas, NULL, err, sizeof err);
  if (!r->p) {
    fail_msg("%s", err);
  }
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

static void test_motor_kt_recovered(void **state) {
  (void)state;
  static const double f[ARM_NJ] = {1.4, 0.6, 1.35};
  motor_run r;
  make(&r, 6, "actuator.*.kt", f);
  sysid_report rep;
  char err[512];
  if (sysid_fit(r.p, &rep, err, sizeof err) < 0) {
    fail_msg("%s", err);
  }
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

TS_MAIN(test_motor_jacobian, test_motor_kt_recovered, test_motor_kt_resistance_combination)
