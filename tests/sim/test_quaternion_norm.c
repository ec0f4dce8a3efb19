/* tests/sim/test_quaternion_norm.c: the quaternions of ball and free joints stay unit ones,
 * with no MuJoCo needed (until now only the MuJoCo comparison noticed a quaternion that was no
 * longer renormalised).
 *
 * docs/robot-format.md: quaternions are normalized where they are used and after every position
 * update. Without the renormalisation each step's product q·exp(h·ω/2) lets the norm walk by
 * rounding, a few 1e-15 over 1e5 steps of a fast tumble, while renormalised it stays within a
 * few units of the last place; a quaternion given with the wrong length (qpos is the user's to
 * write) is unit after one step, and the kinematics read it as its normalization.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim.h"
#include "support/model.h"
#include "support/skip.h"

static const char *const integrators[] = {"euler", "verlet", "midpoint", "rk4"};

/* a free body tumbling fast in space (no gravity), and a ball-jointed body hanging under it */
static sim_model *tumbler(const char *integrator) {
  char json[2048];
  snprintf(json, sizeof json,
           "{ \"timestep\": 0.001, \"integrator\": \"%s\", \"gravity\": [0, 0, 0],\n"
           "  \"bodies\": [ { \"name\": \"top\", \"parent\": \"world\",\n"
           "    \"joint\": { \"name\": \"root\", \"type\": \"free\" },\n"
           "    \"inertial\": { \"mass\": 2.5, \"com\": [0.05, -0.02, 0.03],\n"
           "                    \"inertia\": [0.02, 0.035, 0.05, 0.002, -0.001, 0.003] } },\n"
           "  { \"name\": \"bob\", \"parent\": \"top\", \"pos\": [0, 0, -0.2],\n"
           "    \"joint\": { \"name\": \"ball\", \"type\": \"ball\" },\n"
           "    \"inertial\": { \"mass\": 0.5, \"com\": [0.01, 0, -0.1],\n"
           "                    \"inertia\": [0.004, 0.003, 0.002, 0, 0, 0] } } ] }",
           integrator);
  return ts_model(json);
}

static double norm_error(const double q[4]) {
  return fabs(sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]) - 1);
}

static void spin(sim_data *d) {
  const double v[9] = {0.3, -0.2, 0.1, 20, -70, 30, 15, -5, 40}; /* rad/s: a fast tumble */
  memcpy(d->qvel, v, sizeof v);
}

/* 1e5 steps (100 s) with Euler, 2e4 with RK4: | |q| − 1 | within 1e-15 throughout */
static void test_unit_over_a_long_tumble(void **state) {
  (void)state;
  const char *const which[] = {"euler", "rk4"};
  const int steps[] = {100000, 20000};
  for (int w = 0; w < 2; w++) {
    sim_model *m = tumbler(which[w]);
    sim_data *d = sim_data_new(m);
    spin(d);
    double worst_free = 0, worst_ball = 0;
    for (int s = 0; s < steps[w]; s++) {
      sim_step(m, d);
      worst_free = fmax(worst_free, norm_error(d->qpos + 3));
      worst_ball = fmax(worst_ball, norm_error(d->qpos + 7));
    }
    print_message("%s, %d steps of a tumble: max | |q| - 1 | free %.2g, ball %.2g\n", which[w],
                  steps[w], worst_free, worst_ball);
    assert_true(worst_free <= 1e-15);
    assert_true(worst_ball <= 1e-15);
    ts_sim_free(m, d);
  }
}

/* qpos written with quaternions of length 2 and 0.5: every integrator hands back unit ones
 * after one step, and the kinematics equal those of the normalized state */
static void test_wrong_length_is_renormalised(void **state) {
  (void)state;
  for (size_t w = 0; w < sizeof integrators / sizeof integrators[0]; w++) {
    sim_model *m = tumbler(integrators[w]);
    sim_data *d = sim_data_new(m), *u = sim_data_new(m);
    spin(d);
    const double qf[4] = {0.5, 0.5, -0.5, 0.5}, qb[4] = {0.8, 0, 0.6, 0};
    memcpy(d->qpos + 3, qf, sizeof qf);
    memcpy(d->qpos + 7, qb, sizeof qb);
    memcpy(u->qpos, d->qpos, (size_t)m->nq * sizeof(double));
    for (int k = 0; k < 4; k++) {
      d->qpos[3 + k] *= 2, d->qpos[7 + k] *= 0.5;
    }
    sim_kinematics(m, d);
    sim_kinematics(m, u);
    double dx = 0;
    for (int i = 0; i < 9 * m->nbody; i++) {
      dx = fmax(dx, fabs(d->xmat[i] - u->xmat[i]));
    }
    for (int i = 0; i < 3 * m->nbody; i++) {
      dx = fmax(dx, fabs(d->xpos[i] - u->xpos[i]));
    }
    sim_step(m, d);
    print_message("%s: kinematics of the scaled quaternions off by %.2g; after one step | |q| - 1 "
                  "| free %.2g, ball %.2g\n",
                  integrators[w], dx, norm_error(d->qpos + 3), norm_error(d->qpos + 7));
    assert_true(dx <= 1e-15);
    assert_true(norm_error(d->qpos + 3) <= 1e-15);
    assert_true(norm_error(d->qpos + 7) <= 1e-15);
    sim_data_free(d);
    ts_sim_free(m, u);
  }
}

TS_MAIN(test_unit_over_a_long_tumble, test_wrong_length_is_renormalised)
