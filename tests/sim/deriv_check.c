/* tests/sim/deriv_check.c: the derivative tests' comparison of sim_deriv_step with finite
 * differences (fd_check_step in deriv_fd.h). */
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

/* the worst entry of analytic against reference (both row-major rows × cols) */
typedef struct mismatch {
  double excess; /* |a − f| / max(FD_REL_TOL·|f|, FD_ABS_TOL): <= 1 passes */
  int row, col;
  double a, f;
} mismatch;

static mismatch compare(const double *a, const double *f, int rows, int cols) {
  mismatch worst = {0, -1, -1, 0, 0};
  for (int r = 0; r < rows; r++) {
    for (int c = 0; c < cols; c++) {
      double x = a[r * cols + c], y = f[r * cols + c];
      double excess = fabs(x - y) / fmax(FD_REL_TOL * fabs(y), FD_ABS_TOL);
      if (!(excess <= worst.excess)) {
        worst = (mismatch){excess, r, c, x, y};
      }
    }
  }
  return worst;
}

static void report(const char *what, const sim_model *m, mismatch w, const char *colname) {
  char row[128] = "";
  if (w.row >= 0) {
    sim_deriv_state_name(m, w.row, row, sizeof row);
  }
  printf("  %-3s worst %.3g of the tolerance at %s / %s: analytic %.12g, FD %.12g\n", what,
         w.excess, row, colname, w.a, w.f);
}

double fd_check_step_with(sim_model *m, const sim_data *d, const char *params, fd_steps eps,
                          int verbose) {
  char err[512];
  int np = params ? sim_param_parse(m, params, NULL, 0, err, sizeof err) : 0;
  if (np < 0) fprintf(stderr, "%s\n", err);
  assert_true(np >= 0);
  sim_param *list = calloc((size_t)np + 1, sizeof *list);
  assert_int_equal(sim_param_parse(m, params ? params : "", list, np, err, sizeof err), np);
  int nx = sim_deriv_nx(m), nu = m->nu;
  size_t n = (size_t)nx * (size_t)(nx + nu + np) + 1;
  double *A = calloc(n, sizeof *A), *B = A + nx * nx, *P = B + nx * nu;
  double *FA = calloc(n, sizeof *FA), *FB = FA + nx * nx, *FP = FB + nx * nu;
  sim_data *scratch = sim_data_new(m), *work = sim_data_new(m);
  sim_deriv *w = sim_deriv_new(m, list, np, err, sizeof err);
  assert_non_null(w);
  fd_copy_state(m, work, d);
  int rc = sim_deriv_step(m, work, w, A, B, P);
  if (rc != 0) fprintf(stderr, "sim_deriv_step: %s\n", sim_deriv_strerror(rc));
  assert_int_equal(rc, 0);
  rc = fd_step_jacobians(m, d, scratch, list, np, eps, FA, FB, FP, err, sizeof err);
  if (rc != 0) fprintf(stderr, "fd_step_jacobians: %s\n", err);
  assert_int_equal(rc, 0);
  mismatch wa = compare(A, FA, nx, nx), wb = compare(B, FB, nx, nu), wp = compare(P, FP, nx, np);
  char col[128] = "";
  if (verbose || wa.excess > 1 || wb.excess > 1 || wp.excess > 1) {
    if (wa.col >= 0) sim_deriv_state_name(m, wa.col, col, sizeof col);
    report("A", m, wa, col);
    snprintf(col, sizeof col, "%s", wb.col >= 0 ? m->actuators[wb.col].name : "-");
    report("B", m, wb, col);
    if (wp.col >= 0) sim_param_name(m, list[wp.col], col, sizeof col);
    report("P", m, wp, col);
  }
  double worst = fmax(wa.excess, fmax(wb.excess, wp.excess));
  sim_deriv_free(&w);
  sim_data_free(scratch);
  sim_data_free(work);
  free(A);
  free(FA);
  free(list);
  return worst;
}


double fd_check_step(sim_model *m, const sim_data *d, const char *params, int verbose) {
  return fd_check_step_with(m, d, params, fd_default_steps(), verbose);
}

void fd_row_states(const sim_model *m, const sim_data *d, char *out) {
  sim_data *probe = sim_data_new(m);
  fd_copy_state(m, probe, d);
  sim_forward(m, probe);
  int n = 0;
  for (int i = 0; i < probe->nefc; i++) {
    static const char code[] = "sQ-+";
    out[n++] = code[probe->efc_state[i]];
  }
  out[n] = '\0';
  sim_data_free(probe);
}

int fd_one_active_set(const sim_model *m, const sim_data *d, const char *rows, fd_steps eps) {
  sim_data *p = sim_data_new(m);
  int same = 1;
  for (int c = 0; c < 2 * m->nv && same; c++) {
    for (int sign = -1; sign <= 1 && same; sign += 2) {
      char moved[1024];
      fd_copy_state(m, p, d);
      if (c < m->nv) {
        double dq[128] = {0};
        dq[c] = 1;
        sim_state_perturb(m, p->qpos, dq, 2 * sign * eps.q);
      } else {
        p->qvel[c - m->nv] += 2 * sign * eps.v;
      }
      fd_row_states(m, p, moved);
      same = strcmp(moved, rows) == 0;
    }
  }
  sim_data_free(p);
  return same;
}

void fd_assert_one_active_set(const sim_model *m, const sim_data *d, const char *rows,
                              fd_steps eps) {
  assert_true(fd_one_active_set(m, d, rows, eps));
}
