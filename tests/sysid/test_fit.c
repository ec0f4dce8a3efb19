/* tests/sysid/test_fit.c: a simulated arm's log (arm_log.h: white noise, a 14-bit encoder's
 * quantization, 1.5 ms latency, a firmware's PD on exciting set points) fitted back from
 * parameters 30–50 % off; and the same arm with its base held still, whose parameters the
 * report must call not identifiable. The figures are printed for the docs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "arm_log.h"
#include "support/model.h"
#include "support/skip.h"

typedef struct fit_run {
  sim_model *mt, *mg;
  sysid_series s;
  sysid_meas meas[ARM_NJ];
  sysid_problem *p;
  sysid_report r;
  double truth[11];
} fit_run;

static void progress(void *ctx, int iter, double cost, double step) {
  (void)ctx;
  printf("  iteration %2d: cost %.6g, step %.3g\n", iter, cost, step);
}

static void fit(fit_run *f, const arm_log_opts *lo) {
  char json[8192], err[512];
  arm_params truth, guess;
  arm_truth(&truth), arm_guess(&guess);
  arm_param_values(&truth, f->truth);
  f->mt = ts_model(arm_json(json, sizeof json, &truth, lo->h));
  f->mg = ts_model(arm_json(json, sizeof json, &guess, lo->h));
  assert_int_equal(arm_log_make(f->mt, lo, &f->s, f->meas), 0);
  sysid_options o;
  sysid_options_default(&o);
  o.progress = progress;
  f->p = sysid_problem_new(f->mg, &f->s, arm_param_list, NULL, f->meas, &o, err, sizeof err);
  if (!f->p) {
    fail_msg("%s", err);
  }
  if (sysid_fit(f->p, &f->r, err, sizeof err) < 0) {
    fail_msg("%s", err);
  }
  const sysid_report *r = &f->r;
  for (int k = 0; k < r->np; k++) {
    const sysid_param_result *q = &r->param[k];
    printf("%-28s initial %-9.4g fitted %-10.6g ± %-9.2g truth %-7.4g error %+8.4f %% (%+.2f σ)%s\n",
           q->name, q->initial, q->value, q->stderr_, f->truth[k],
           100 * (q->value / f->truth[k] - 1), (q->value - f->truth[k]) / q->stderr_,
           q->identifiable ? "" : "  not identifiable");
  }
  for (int j = 0; j < r->njoint; j++) {
    printf("%-9s residual rms %.3g -> %.3g rad (sigma %.3g), max %.3g -> %.3g rad\n",
           r->joint[j], r->rms_before[j], r->rms_after[j], f->meas[j].sigma, r->max_before[j],
           r->max_after[j]);
  }
  printf("%d iterations (%s), %.2f s, cost %.6g -> %.6g (%d residuals, %d unknowns), "
         "%.0f s simulated\n",
         r->iterations, r->stop, r->seconds, r->cost_before, r->cost_after, r->nresidual,
         r->nunknown, sysid_simulated_seconds(f->p));
  for (int k = 0; k < r->nweak; k++) {
    printf("not identifiable: %s\n", r->weak[k]);
  }
  for (int k = 0; k < r->ncorr; k++) {
    printf("correlated: %s, %s: %.3f\n", r->param[r->corr[k].i].name,
           r->param[r->corr[k].j].name, r->corr[k].r);
  }
}

static void release(fit_run *f) {
  sysid_report_free(&f->r);
  sysid_problem_free(&f->p);
  sysid_series_free(&f->s);
  sim_model_free(f->mt), sim_model_free(f->mg);
}

/* frictionloss: within 5 %; damping, armature, masses: within 1 %; the residuals end at the
   noise level; every parameter identifiable */
static void test_recovers_truth(void **state) {
  (void)state;
  arm_log_opts lo;
  arm_log_defaults(&lo);
  fit_run f = {0};
  fit(&f, &lo);
  for (int k = 0; k < f.r.np; k++) {
    double tol = strstr(f.r.param[k].name, "frictionloss") ? 0.05 : 0.01;
    assert_true(fabs(f.r.param[k].value / f.truth[k] - 1) < tol);
    assert_true(f.r.param[k].identifiable);
    assert_true(f.r.param[k].stderr_ > 0);
  }
  for (int j = 0; j < f.r.njoint; j++) {
    assert_true(fabs(f.r.rms_after[j] / f.meas[j].sigma - 1) < 0.05);
  }
  assert_int_equal(f.r.nweak, 0);
  /* the fitted values are the problem's model's */
  const sim_model *m = sysid_fitted_model(f.p);
  assert_true(fabs(m->bodies[sim_model_body(m, "forearm")].mass - f.r.param[10].value) < 1e-12);
  release(&f);
}

/* the base never moves (no torque, no coupling: the links swing in a plane through its axis):
   its damping, armature and friction are named, the others still come back */
static void test_still_joint_not_identifiable(void **state) {
  (void)state;
  arm_log_opts lo;
  arm_log_defaults(&lo);
  lo.still_joint = 0;
  fit_run f = {0};
  fit(&f, &lo);
  for (int k = 0; k < f.r.np; k++) {
    const sysid_param_result *q = &f.r.param[k];
    if (!strcmp(q->element, "base_yaw")) {
      assert_false(q->identifiable);
      assert_true(isnan(q->stderr_));
      int named = 0;
      for (int w = 0; w < f.r.nweak; w++) {
        named |= strstr(f.r.weak[w], q->name) != NULL;
      }
      assert_true(named);
    } else {
      double tol = strstr(q->name, "frictionloss") ? 0.05 : 0.01;
      assert_true(q->identifiable);
      assert_true(fabs(q->value / f.truth[k] - 1) < tol);
    }
  }
  release(&f);
}

TS_MAIN(test_recovers_truth, test_still_joint_not_identifiable)
