/* tests/sim/test_deriv_constraint.c: step Jacobians through the constraint solver (joint limits
 * and joint friction), against central differences of sim_step (deriv_fd.h), at states away
 * from changes of active set: a chain past its stops, friction sticking and sliding, Euler
 * (the implicit damping's second solve) and RK4. The solver runs to convergence (the derivatives
 * are those of the converged step, docs/derivatives.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "deriv_fd.h"
#include "sim/deriv/deriv.h"

/* three links: a damped hinge with stops and light friction, a hinge with friction, a slide
 * with stops and friction, under gravity; the solver converges (200 iterations, tolerance 0).
 * a's stops have a wide impedance (0.05 rad), so that its penetrations below lie on the rising
 * power curve (imp' != 0), above and below its midpoint. */
static const char chain_json[] =
    "{ \"name\": \"stops\", \"timestep\": 0.002, \"solver_iterations\": 200,\n"
    "  \"solver_tolerance\": 0,\n"
    "  \"bodies\": [\n"
    "  { \"name\": \"a\", \"parent\": \"world\",\n"
    "    \"joint\": { \"name\": \"ja\", \"type\": \"hinge\", \"axis\": [0, 1, 0], \"damping\": 0.1,\n"
    "               \"frictionloss\": 0.3, \"limited\": true, \"range\": [-0.5, 0.5],\n"
    "               \"solimp_limit\": [0.5, 0.95, 0.05, 0.5, 2] },\n"
    "    \"inertial\": { \"mass\": 1, \"com\": [0.2, 0, 0], \"inertia\": [0.01, 0.012, 0.011, 0, 0, 0] } },\n"
    "  { \"name\": \"b\", \"parent\": \"a\", \"pos\": [0.4, 0, 0],\n"
    "    \"joint\": { \"name\": \"jb\", \"type\": \"hinge\", \"axis\": [0, 0.6, 0.8], \"frictionloss\": %g,\n"
    "               \"armature\": 0.01, \"limited\": true, \"range\": [-1, 1] },\n"
    "    \"inertial\": { \"mass\": 0.7, \"com\": [0.15, 0.02, 0], \"inertia\": [0.004, 0.005, 0.006, 0, 0, 0] } },\n"
    "  { \"name\": \"c\", \"parent\": \"b\", \"pos\": [0.3, 0, 0],\n"
    "    \"joint\": { \"name\": \"jc\", \"type\": \"slide\", \"axis\": [1, 0, 0], \"damping\": 0.5,\n"
    "               \"frictionloss\": 1, \"limited\": true, \"range\": [0, 0.05] },\n"
    "    \"inertial\": { \"mass\": 0.5, \"inertia\": [0.001, 0.001, 0.001, 0, 0, 0] } } ] }\n";

static sim_model *load_chain(double friction_b) {
  char json[sizeof chain_json + 32], err[512];
  snprintf(json, sizeof json, chain_json, friction_b);
  sim_model *m = sim_model_load_string(json, "stops", err, sizeof err);
  if (!m) fprintf(stderr, "%s\n", err);
  assert_non_null(m);
  return m;
}

static const char params[] =
    "joint/*/frictionloss,joint/ja/damping,joint/jc/damping,joint/jb/armature,body/*/mass,"
    "body/b/com_x,body/b/iyy";

static double check(sim_model *m, const double *q, const double *v, const char *expect_rows) {
  sim_data *d = sim_data_new(m);
  memcpy(d->qpos, q, 3 * sizeof(double));
  memcpy(d->qvel, v, 3 * sizeof(double));
  char rows[64];
  fd_row_states(m, d, rows);
  printf("%s, q = (%g, %g, %g), v = (%g, %g, %g): rows %s\n",
         sim_integrator_name(m->opt.integrator), q[0], q[1], q[2], v[0], v[1], v[2], rows);
  assert_string_equal(rows, expect_rows);
  fd_assert_one_active_set(m, d, rows, fd_default_steps());
  double e = fd_check_step(m, d, params, 1);
  sim_data_free(d);
  return e;
}

/* Rows in order: friction of a, b, c (+: sliding forward, force −F; −: backward, +F; Q:
 * sticking, in the quadratic zone), then the stops reached (Q: pushing; s: pulling away). */
static void run(sim_integrator integrator) {
  sim_model *m = load_chain(0.2);
  m->opt.integrator = integrator;
  double worst = 0;
  /* a past its lower stop, pushed back (Q), b sliding, c past its upper stop but leaving it */
  const double q1[3] = {-0.53, 0.2, 0.06}, v1[3] = {0.1, 1, -2};
  worst = fmax(worst, check(m, q1, v1, "++-Qs"));
  /* a and b past their upper stops (b at rest there, its friction slipping under the load),
   * c sliding inside its range */
  const double q2[3] = {0.515, 1.015, 0.02}, v2[3] = {-0.2, 0, 1.5};
  worst = fmax(worst, check(m, q2, v2, "--+QQ"));
  sim_model_free(m);
  /* b's friction holds it (sticking), no stop reached */
  m = load_chain(20);
  m->opt.integrator = integrator;
  const double q3[3] = {0.1, 0.3, 0.03}, v3[3] = {0.5, 0, -0.8};
  worst = fmax(worst, check(m, q3, v3, "+Q-"));
  sim_model_free(m);
  printf("worst entry %.3g of the tolerance\n", worst);
  assert_true(worst <= 1);
}

static void test_limits_and_friction_euler(void **state) {
  (void)state;
  run(SIM_INTEGRATOR_EULER);
}

static void test_limits_and_friction_rk4(void **state) {
  (void)state;
  run(SIM_INTEGRATOR_RK4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_limits_and_friction_euler),
      cmocka_unit_test(test_limits_and_friction_rk4),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
