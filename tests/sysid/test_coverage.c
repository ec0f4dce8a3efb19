/* tests/sysid/test_coverage.c: do the reported standard errors mean what they say? Twenty logs
 * of the arm (arm_log.h) that differ only in the sensors' noise seed, each fitted from the same
 * guess 30–50 % off: per parameter, the count of seeds whose 2σ interval holds the truth (95 %
 * expected; at least 18 of 20 asked), the worst error, and the residual RMS over σ. A minute
 * of fits: label e2e. */
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

#define SEEDS 20
#define NPAR 11

static void test_standard_errors_cover_truth(void **state) {
  (void)state;
  char json[8192], err[512];
  arm_params truth, guess;
  arm_truth(&truth), arm_guess(&guess);
  double tv[NPAR];
  arm_param_values(&truth, tv);
  arm_log_opts lo;
  arm_log_defaults(&lo);
  lo.duration = 6;
  sim_model *mt = ts_model(arm_json(json, sizeof json, &truth, lo.h));
  sim_model *mg = ts_model(arm_json(json, sizeof json, &guess, lo.h));
  int covered[NPAR] = {0}, all = 0;
  double worst[NPAR] = {0}, zsq[NPAR] = {0}, rms_ratio_max = 0, seconds = 0;
  char names[NPAR][160];
  for (int seed = 1; seed <= SEEDS; seed++) {
    sysid_series s;
    sysid_meas meas[ARM_NJ];
    lo.seed = (uint64_t)seed;
    assert_int_equal(arm_log_make(mt, &lo, &s, meas), 0);
    sysid_problem *p = sysid_problem_new(mg, &s, arm_param_list, NULL, meas, NULL, err, sizeof err);
    if (!p) {
      fail_msg("%s", err);
    }
    sysid_report r;
    if (sysid_fit(p, &r, err, sizeof err) < 0) {
      fail_msg("seed %d: %s", seed, err);
    }
    assert_int_equal(r.np, NPAR);
    printf("seed %2d: %2d iterations, %.2f s, cost/N %.4f, z:", seed, r.iterations, r.seconds,
           2 * r.cost_after / r.nresidual);
    seconds += r.seconds;
    for (int k = 0; k < NPAR; k++) {
      const sysid_param_result *q = &r.param[k];
      snprintf(names[k], sizeof names[k], "%s", q->name);
      double z = (q->value - tv[k]) / q->stderr_;
      printf(" %+.1f", z);
      covered[k] += fabs(z) <= 2;
      all += fabs(z) <= 2;
      zsq[k] += z * z;
      worst[k] = fmax(worst[k], fabs(q->value / tv[k] - 1));
      assert_true(q->identifiable);
    }
    printf("\n");
    for (int j = 0; j < r.njoint; j++) {
      rms_ratio_max = fmax(rms_ratio_max, fabs(r.rms_after[j] / meas[j].sigma - 1));
    }
    sysid_report_free(&r);
    sysid_problem_free(&p);
    sysid_series_free(&s);
  }
  printf("%-28s %-14s %-12s %s\n", "parameter", "covered at 2σ", "worst error", "rms z");
  for (int k = 0; k < NPAR; k++) {
    printf("%-28s %2d of %d       %7.4f %%    %.2f\n", names[k], covered[k], SEEDS,
           100 * worst[k], sqrt(zsq[k] / SEEDS));
  }
  printf("all parameters: %d of %d intervals hold the truth (%.1f %%); residual RMS within "
         "%.2f %% of σ; %.1f s of fits\n",
         all, SEEDS * NPAR, 100.0 * all / (SEEDS * NPAR), 100 * rms_ratio_max, seconds);
  for (int k = 0; k < NPAR; k++) {
    assert_true(covered[k] >= 18);
    assert_true(worst[k] < (strstr(names[k], "frictionloss") ? 0.05 : 0.01));
  }
  assert_true(rms_ratio_max < 0.05);
  sim_model_free(mt), sim_model_free(mg);
}

TS_MAIN(test_standard_errors_cover_truth)
