/* tests/sim/test_deriv_fd.c: step Jacobians A, B and P (sim/deriv) against central finite
 * differences of sim_step itself (deriv_fd.h), on random trees of up to 30 bodies with hinge,
 * slide, ball and free joints, springs, dampers, armature and every actuator type, at random
 * states, for Euler and RK4. An entry passes when |analytic − FD| <= 1e-6·|FD| or <= 1e-9 (the
 * derivative near 0). */
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
#include "random_tree.h"
#include "sim/deriv/deriv.h"

#define REL_TOL 1e-6
#define ABS_TOL 1e-9

/* the worst entry of analytic against reference (both row-major rows × cols) */
typedef struct mismatch {
  double excess; /* |a − f| / max(REL_TOL·|f|, ABS_TOL): <= 1 passes */
  int row, col;
  double a, f;
} mismatch;

static mismatch compare(const double *a, const double *f, int rows, int cols) {
  mismatch worst = {0, -1, -1, 0, 0};
  for (int r = 0; r < rows; r++) {
    for (int c = 0; c < cols; c++) {
      double x = a[r * cols + c], y = f[r * cols + c];
      double excess = fabs(x - y) / fmax(REL_TOL * fabs(y), ABS_TOL);
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

/* a random state: hinges in ±π, slides ±0.3 m, quaternions uniform, free positions ±0.5 m,
 * velocities ±1, winding currents ±1 A, commands inside their ranges */
static void random_state(const sim_model *m, sim_data *d, rt_rng *rng) {
  for (int j = 0; j < m->njnt; j++) {
    const sim_joint *jt = &m->joints[j];
    double *q = d->qpos + jt->qposadr;
    switch (jt->type) {
    case SIM_JOINT_HINGE: q[0] = rt_uniform(rng, -3.1, 3.1); break;
    case SIM_JOINT_SLIDE: q[0] = rt_uniform(rng, -0.3, 0.3); break;
    case SIM_JOINT_FREE:
      for (int k = 0; k < 3; k++) q[k] = rt_uniform(rng, -0.5, 0.5);
      q += 3;
      /* fall through */
    case SIM_JOINT_BALL: {
      double n = 0;
      for (int k = 0; k < 4; k++) {
        q[k] = rt_uniform(rng, -1, 1);
        n += q[k] * q[k];
      }
      for (int k = 0; k < 4; k++) q[k] /= sqrt(n);
      break;
    }
    default: break;
    }
  }
  for (int k = 0; k < m->nv; k++) d->qvel[k] = rt_uniform(rng, -1, 1);
  for (int k = 0; k < m->na; k++) d->act[k] = rt_uniform(rng, -1, 1);
  for (int i = 0; i < m->nu; i++) {
    const double *r = m->actuators[i].ctrlrange;
    double lo = isfinite(r[0]) ? r[0] : -2, hi = isfinite(r[1]) ? r[1] : 2;
    d->ctrl[i] = rt_uniform(rng, lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo));
  }
}

static sim_model *load_tree(uint64_t seed, const rt_spec *spec, char *json, size_t size) {
  char err[512];
  size_t n = rt_tree_json(json, size, seed, spec);
  assert_true(n < size);
  sim_model *m = sim_model_load_string(json, "random tree", err, sizeof err);
  if (!m) fprintf(stderr, "%s\n", err);
  assert_non_null(m);
  return m;
}

/* A, B and P of one step at the state in d against FD; returns the worst excess */
static double check_step(sim_model *m, sim_data *d, const char *params, int verbose) {
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
  assert_int_equal(fd_step_jacobians(m, d, scratch, list, np, fd_default_steps(), FA, FB, FP,
                                     err, sizeof err), 0);
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

static const char all_params[] = "body/*/*,joint/*/*,actuator/*/*";

static void run_trees(const rt_spec *spec, int ntree, uint64_t seed0, sim_integrator integrator) {
  static char json[1 << 18];
  double worst = 0;
  for (int t = 0; t < ntree; t++) {
    sim_model *m = load_tree(seed0 + (uint64_t)t, spec, json, sizeof json);
    m->opt.integrator = integrator;
    m->opt.timestep = 0.002;
    sim_data *d = sim_data_new(m);
    rt_rng rng;
    rt_rng_init(&rng, 1000 + seed0 + (uint64_t)t);
    random_state(m, d, &rng);
    double e = check_step(m, d, all_params, 0);
    if (e > 1) printf("tree %llu (%d bodies, nv %d): worst %.3g\n",
                      (unsigned long long)(seed0 + (uint64_t)t), m->nbody - 1, m->nv, e);
    worst = fmax(worst, e);
    sim_data_free(d);
    sim_model_free(m);
  }
  printf("%s, %d trees of %d bodies: worst entry %.3g of the tolerance\n",
         sim_integrator_name(integrator), ntree, spec->nbody, worst);
  assert_true(worst <= 1);
}

static void test_hinge_slide_trees_euler(void **state) {
  (void)state;
  rt_spec s = {.nbody = 7, .passive = 1, .armature = 1, .gravity = 1, .fixed = 1};
  run_trees(&s, 6, 100, SIM_INTEGRATOR_EULER);
}

static void test_hinge_slide_trees_rk4(void **state) {
  (void)state;
  rt_spec s = {.nbody = 7, .passive = 1, .armature = 1, .gravity = 1, .fixed = 1};
  run_trees(&s, 6, 200, SIM_INTEGRATOR_RK4);
}

static void test_ball_free_actuated_trees_euler(void **state) {
  (void)state;
  rt_spec s = {.nbody = 9, .passive = 1, .armature = 1, .gravity = 1, .fixed = 1,
               .ball = 1, .free_root = 1, .actuators = 1};
  run_trees(&s, 6, 300, SIM_INTEGRATOR_EULER);
}

static void test_ball_free_actuated_trees_rk4(void **state) {
  (void)state;
  rt_spec s = {.nbody = 9, .passive = 1, .armature = 1, .gravity = 1, .fixed = 1,
               .ball = 1, .free_root = 1, .actuators = 1};
  run_trees(&s, 6, 400, SIM_INTEGRATOR_RK4);
}

static void test_thirty_bodies(void **state) {
  (void)state;
  rt_spec s = {.nbody = 30, .passive = 1, .armature = 1, .gravity = 1, .fixed = 1,
               .ball = 1, .free_root = 1, .actuators = 1};
  run_trees(&s, 1, 500, SIM_INTEGRATOR_EULER);
  run_trees(&s, 1, 501, SIM_INTEGRATOR_RK4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hinge_slide_trees_euler),
      cmocka_unit_test(test_hinge_slide_trees_rk4),
      cmocka_unit_test(test_ball_free_actuated_trees_euler),
      cmocka_unit_test(test_ball_free_actuated_trees_rk4),
      cmocka_unit_test(test_thirty_bodies),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
