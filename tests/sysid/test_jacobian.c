/* tests/sysid/test_jacobian.c: the residuals' Jacobian from the sensitivities against central
 * differences of the residual function itself, column by column. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "arm_log.h"
#include "support/model.h"
#include "support/skip.h"
#include "sysid/internal.h"

/* a short log of the true arm, and a problem on the guessed arm whose sensor latency is not a
   multiple of the timestep (readings between steps) and whose scale and offset are not 1, 0 */
static sysid_problem *problem(int fit_states, sim_model **mt, sim_model **mg, sysid_series *s) {
  char json[8192], err[512];
  arm_params truth, guess;
  arm_truth(&truth), arm_guess(&guess);
  arm_log_opts lo;
  arm_log_defaults(&lo);
  lo.duration = 1.2;
  *mt = ts_model(arm_json(json, sizeof json, &truth, lo.h));
  *mg = ts_model(arm_json(json, sizeof json, &guess, lo.h));
  sysid_meas meas[ARM_NJ];
  assert_int_equal(arm_log_make(*mt, &lo, s, meas), 0);
  for (int j = 0; j < ARM_NJ; j++) {
    meas[j].latency = 0.0012, meas[j].scale = 1.01, meas[j].offset = 0.002;
  }
  sysid_options o;
  sysid_options_default(&o);
  o.fit_initial_state = fit_states;
  sysid_problem *p = sysid_problem_new(*mg, s, arm_param_list, NULL, meas, &o, err, sizeof err);
  if (!p) {
    fail_msg("%s", err);
  }
  return p;
}

/* max over columns of |J − FD| / max|FD column|; prints the worst */
static double compare(sysid_problem *p, const char *what) {
  int nr = sysid_nresidual(p), nu = sysid_nunknown(p);
  double *x = malloc((size_t)nu * sizeof *x), *r = malloc((size_t)nr * sizeof *r);
  double *rp = malloc((size_t)nr * sizeof *rp), *rm = malloc((size_t)nr * sizeof *rm);
  double *J = malloc((size_t)nr * (size_t)nu * sizeof *J);
  char err[512];
  sysid_start(p, x);
  assert_int_equal(sysid_residual(p, x, r, J, err, sizeof err), 0);
  double worst = 0;
  int worst_col = -1;
  for (int c = 0; c < nu; c++) {
    double x0 = x[c], eps = 1e-6 * fmax(1, fabs(x0));
    x[c] = x0 + eps;
    assert_int_equal(sysid_residual(p, x, rp, NULL, err, sizeof err), 0);
    x[c] = x0 - eps;
    assert_int_equal(sysid_residual(p, x, rm, NULL, err, sizeof err), 0);
    x[c] = x0;
    double big = 0, diff = 0;
    for (int i = 0; i < nr; i++) {
      double fd = (rp[i] - rm[i]) / (2 * eps);
      big = fmax(big, fabs(fd));
      diff = fmax(diff, fabs(fd - J[(size_t)i * nu + c]));
    }
    double rel = big > 0 ? diff / big : diff;
    if (rel > worst) {
      worst = rel, worst_col = c;
    }
  }
  printf("%s: %d residuals × %d unknowns, worst column %d (%s) |J − FD|/max|FD| = %.2e\n", what,
         nr, nu, worst_col, worst_col >= 0 && worst_col < sysid_nparam(p) ? sysid_param_name(p, worst_col) : "a window state",
         worst);
  free(x), free(r), free(rp), free(rm), free(J);
  return worst;
}

static void run(int fit_states, int refresh, double tol) {
  sim_model *mt, *mg;
  sysid_series s;
  sysid_problem *p = problem(fit_states, &mt, &mg, &s);
  p->refresh_const = refresh;
  char what[128];
  snprintf(what, sizeof what, "window states %s, constraint constants %s",
           fit_states ? "fitted" : "from the log", refresh ? "refreshed" : "held");
  double worst = compare(p, what);
  if (tol > 0) {
    assert_true(worst < tol);
  }
  sysid_problem_free(&p);
  sysid_series_free(&s);
  sim_model_free(mt), sim_model_free(mg);
}

/* the soft rows' constants held (as the Jacobian holds them): agreement to the differences'
   own error */
static void test_jacobian_with_states(void **state) {
  (void)state;
  run(1, 0, 3e-5);
}

static void test_jacobian_params_only(void **state) {
  (void)state;
  run(0, 0, 3e-5);
}

/* what refreshing the constants after a mass change (the fit's default) leaves out of the
   Jacobian: printed, bounded loosely */
static void test_jacobian_refreshed_constants(void **state) {
  (void)state;
  run(1, 1, 1e-2);
}

TS_MAIN(test_jacobian_with_states, test_jacobian_params_only, test_jacobian_refreshed_constants)
