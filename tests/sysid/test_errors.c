/* tests/sysid/test_errors.c: bad input gets an error naming the place, never a crash or a
 * problem: parameters that do not exist, a log of another robot, a log shorter than one
 * window, non-finite values, bad bounds, measurements and options. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arm_log.h"
#include "support/model.h"
#include "support/skip.h"

typedef arm_fixture fixture;

/* the arm and 1.2 s of its log */
static int setup(void **state) {
  return arm_fixture_setup(state, 1.2);
}

/* the problem is refused with a message holding every one of the words (NULL-terminated) */
static void refused(const fixture *f, const sysid_series *s, const char *params,
                    const char *bounds, const sysid_meas *meas, const sysid_options *o, ...) {
  char err[1024] = "";
  sysid_problem *p = sysid_problem_new(f->m, s ? s : &f->s, params, bounds,
                                       meas ? meas : f->meas, o, err, sizeof err);
  printf("refused: %s\n", err);
  if (p) {
    sysid_problem_free(&p);
    fail_msg("accepted: params '%s' bounds '%s'", params, bounds ? bounds : "");
  }
  va_list ap;
  va_start(ap, o);
  for (const char *w; (w = va_arg(ap, const char *)) != NULL;) {
    if (!strstr(err, w)) {
      va_end(ap);
      fail_msg("'%s' lacks '%s'", err, w);
    }
  }
  va_end(ap);
}

static void test_unknown_parameters(void **state) {
  fixture *f = *state;
  refused(f, NULL, "joint.knee.damping", NULL, NULL, NULL, "joint.knee.damping",
          "no element of that name", "base_yaw", NULL);
  refused(f, NULL, "joint.elbow.dampin", NULL, NULL, NULL, "unknown field 'dampin'", "damping",
          NULL);
  refused(f, NULL, "link.elbow.damping", NULL, NULL, NULL, "unknown kind 'link'", NULL);
  refused(f, NULL, "elbow.damping", NULL, NULL, NULL, "expected KIND.NAME.FIELD", NULL);
  refused(f, NULL, "actuator.*.kt", NULL, NULL, NULL, "actuator.*.kt",
          "none of the elements named has that field", NULL);
  refused(f, NULL, "actuator.elbow_motor.kt", NULL, NULL, NULL, "only DC motors", NULL);
  refused(f, NULL, "actuator.elbow_motor.gear_friction", NULL, NULL, NULL, "smart servo",
          "joint.elbow.frictionloss", NULL);
  refused(f, NULL, "", NULL, NULL, NULL, "no parameters", NULL);
  refused(f, NULL, "body.world.mass", NULL, NULL, NULL, "body.world.mass", NULL);
}

static void test_bad_bounds(void **state) {
  fixture *f = *state;
  refused(f, NULL, "joint.*.damping", "joint.*.damping=1:0", NULL, NULL, "LO < HI", NULL);
  refused(f, NULL, "joint.*.damping", "joint.*.damping=a:1", NULL, NULL, "must be numbers", NULL);
  refused(f, NULL, "joint.*.damping", "joint.*.damping", NULL, NULL, "ENTRY=LO:HI", NULL);
  refused(f, NULL, "joint.*.damping", "body.forearm.mass=0.1:1", NULL, NULL,
          "names no parameter being fitted", NULL);
  refused(f, NULL, "joint.*.damping", "joint.*.damping=-1:", NULL, NULL, "stay positive", NULL);
  /* the model's value outside the bounds */
  refused(f, NULL, "joint.elbow.damping", "joint.elbow.damping=0.1:1", NULL, NULL,
          "joint.elbow.damping = 0.05", "lower bound 0.1", NULL);
  refused(f, NULL, "joint.elbow.damping", "joint.elbow.damping=:0.01", NULL, NULL,
          "upper bound 0.01", NULL);
}

/* a series copy whose names or values a test spoils */
static sysid_series copy(const sysid_series *s) {
  sysid_series c = *s;
  size_t n = (size_t)s->n;
  c.t = malloc(n * sizeof(double));
  c.q = malloc(n * (size_t)s->njoint * sizeof(double));
  c.u = malloc(n * (size_t)s->nact * sizeof(double));
  memcpy(c.t, s->t, n * sizeof(double));
  memcpy(c.q, s->q, n * (size_t)s->njoint * sizeof(double));
  memcpy(c.u, s->u, n * (size_t)s->nact * sizeof(double));
  c.joint_name = calloc((size_t)s->njoint, sizeof(char *));
  c.act_name = calloc((size_t)s->nact, sizeof(char *));
  for (int j = 0; j < s->njoint; j++) {
    c.joint_name[j] = strdup(s->joint_name[j]);
  }
  for (int a = 0; a < s->nact; a++) {
    c.act_name[a] = strdup(s->act_name[a]);
  }
  return c;
}

static void test_log_of_another_robot(void **state) {
  fixture *f = *state;
  sysid_series c = copy(&f->s);
  free(c.joint_name[1]);
  c.joint_name[1] = strdup("knee");
  refused(f, &c, "joint.*.damping", NULL, NULL, NULL, "simulated arm log", "joint 'knee'",
          "another robot", "base_yaw, shoulder, elbow", NULL);
  free(c.joint_name[1]);
  c.joint_name[1] = strdup("shoulder");
  free(c.act_name[2]);
  c.act_name[2] = strdup("wrist_motor");
  refused(f, &c, "joint.*.damping", NULL, NULL, NULL, "actuator 'wrist_motor'", "another robot",
          NULL);
  sysid_series_free(&c);
}

static void test_log_shorter_than_a_window(void **state) {
  fixture *f = *state;
  sysid_options o;
  sysid_options_default(&o);
  o.window = 2;
  refused(f, NULL, "joint.*.damping", NULL, NULL, &o, "1.199 s long", "shorter than one window",
          "2.000 s", NULL);
  sysid_series c = copy(&f->s);
  c.n = 1;
  refused(f, &c, "joint.*.damping", NULL, NULL, NULL, "1 samples", NULL);
  c.n = f->s.n;
  sysid_series_free(&c);
}

static void test_non_finite_values(void **state) {
  fixture *f = *state;
  sysid_series c = copy(&f->s);
  c.u[100 * 3 + 1] = NAN;
  refused(f, &c, "joint.*.damping", NULL, NULL, NULL, "sample 100", "t = 0.1 s",
          "shoulder_motor", "not finite", NULL);
  c.u[100 * 3 + 1] = 0;
  c.q[200 * 3 + 2] = INFINITY;
  refused(f, &c, "joint.*.damping", NULL, NULL, NULL, "sample 200", "joint 'elbow'", "not finite",
          NULL);
  c.q[200 * 3 + 2] = 0;
  c.t[300] = NAN;
  refused(f, &c, "joint.*.damping", NULL, NULL, NULL, "sample 300", "not a finite number", NULL);
  c.t[300] = c.t[299];
  refused(f, &c, "joint.*.damping", NULL, NULL, NULL, "sample 300", "not after", NULL);
  c.t[300] = f->s.t[300];
  /* NAN readings are missing samples, not errors: the problem has fewer rows */
  for (int i = 0; i < 50; i++) {
    c.q[(size_t)i * 3] = NAN;
  }
  char err[512];
  sysid_problem *p = sysid_problem_new(f->m, &c, "joint.*.damping", NULL, f->meas, NULL, err,
                                       sizeof err);
  if (!p) {
    fail_msg("%s", err);
  }
  /* and the readings of times before the log (t − 1.5 ms < 0: samples 0 and 1) have none */
  assert_int_equal(sysid_nresidual(p), 3 * c.n - 50 - 2 * 2);
  sysid_problem_free(&p);
  assert_null(p);
  sysid_problem_free(NULL);
  sysid_series_free(&c);
}

static void test_bad_measurements_and_options(void **state) {
  fixture *f = *state;
  sysid_meas m[ARM_NJ];
  memcpy(m, f->meas, sizeof m);
  m[1].sigma = 0;
  refused(f, NULL, "joint.*.damping", NULL, m, NULL, "joint 'shoulder'", "sigma", NULL);
  m[1].sigma = 1e-3, m[2].latency = -0.001;
  refused(f, NULL, "joint.*.damping", NULL, m, NULL, "joint 'elbow'", "latency", NULL);
  m[2].latency = 0, m[0].scale = 0;
  refused(f, NULL, "joint.*.damping", NULL, m, NULL, "joint 'base_yaw'", "scale", NULL);
  sysid_options o;
  sysid_options_default(&o);
  o.window = 0;
  refused(f, NULL, "joint.*.damping", NULL, NULL, &o, "window", NULL);
  sysid_options_default(&o);
  o.max_iter = 0;
  refused(f, NULL, "joint.*.damping", NULL, NULL, &o, "max_iter", NULL);
}

/* a fit whose start cannot run says so (a model that blows up), and the problem stays usable */
static void test_fit_error_is_a_value(void **state) {
  fixture *f = *state;
  char err[512];
  sysid_problem *p = sysid_problem_new(f->m, &f->s, "joint.*.damping", NULL, f->meas, NULL, err,
                                       sizeof err);
  if (!p) {
    fail_msg("%s", err);
  }
  /* sysid_simulate before a fit: only the initial values */
  double *q = malloc((size_t)f->s.n * ARM_NJ * sizeof(double));
  assert_int_equal(sysid_simulate(p, 1, q), -1);
  assert_int_equal(sysid_simulate(p, 0, q), 0);
  for (int i = 0; i < f->s.n * ARM_NJ; i++) {
    assert_true(isfinite(q[i]));
  }
  free(q);
  sysid_problem_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unknown_parameters),
      cmocka_unit_test(test_bad_bounds),
      cmocka_unit_test(test_log_of_another_robot),
      cmocka_unit_test(test_log_shorter_than_a_window),
      cmocka_unit_test(test_non_finite_values),
      cmocka_unit_test(test_bad_measurements_and_options),
      cmocka_unit_test(test_fit_error_is_a_value),
  };
  return ts_run_with(tests, setup, arm_fixture_teardown);
}
