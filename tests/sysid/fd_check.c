/* tests/sysid/fd_check.c: the analytic Jacobian against central differences (fd_check.h). */
#include "fd_check.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

/* max over columns of |J − FD| / max|FD column|; prints the worst */
double fd_jacobian_error(sysid_problem *p, const char *what) {
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

