/* tests/sysid/test_params.c: parameters by name — wildcards, aliases, a smart servo's gearbox,
 * names kept once — and the coordinates that keep them inside their bounds. */
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
#include "sysid/internal.h"

typedef arm_fixture fixture;

/* the arm and 1 s of its log */
static int setup(void **state) {
  return arm_fixture_setup(state, 1);
}

static sysid_problem *make(const fixture *f, const char *params, const char *bounds) {
  char err[512];
  sysid_problem *p = sysid_problem_new(f->m, &f->s, params, bounds, f->meas, NULL, err, sizeof err);
  if (!p) {
    fail_msg("%s: %s", params, err);
  }
  return p;
}

/* the problem's parameter names, comma-joined */
static void names(const sysid_problem *p, char *buf, size_t sz) {
  buf[0] = '\0';
  for (int k = 0; k < sysid_nparam(p); k++) {
    size_t len = strlen(buf);
    snprintf(buf + len, sz - len, "%s%s", k ? "," : "", sysid_param_name(p, k));
  }
}

static void expands(const fixture *f, const char *params, const char *want) {
  char got[2048];
  sysid_problem *p = make(f, params, NULL);
  names(p, got, sizeof got);
  printf("%s -> %s\n", params, got);
  assert_string_equal(got, want);
  sysid_problem_free(&p);
}

static void test_wildcards_and_aliases(void **state) {
  fixture *f = *state;
  expands(f, "joint.*.damping", "joint.base_yaw.damping,joint.shoulder.damping,joint.elbow.damping");
  expands(f, "joint.[se]*.armature", "joint.shoulder.armature,joint.elbow.armature");
  expands(f, "body.*.mass", "body.base.mass,body.upper_arm.mass,body.forearm.mass");
  expands(f, "body.forearm.com", "body.forearm.com_x,body.forearm.com_y,body.forearm.com_z");
  expands(f, "body.forearm.inertia", "body.forearm.ixx,body.forearm.iyy,body.forearm.izz");
  expands(f, "joint.elbow.*", /* every field the joint has (stiffness and springref too) */
          "joint.elbow.damping,joint.elbow.stiffness,joint.elbow.springref,joint.elbow.armature,"
          "joint.elbow.frictionloss");
  /* named twice: kept once, first place */
  expands(f, " joint.elbow.damping , joint.*.damping ",
          "joint.elbow.damping,joint.base_yaw.damping,joint.shoulder.damping");
}

/* the fit's coordinates: every φ maps inside the bounds, and back */
static void test_coordinates_keep_bounds(void **state) {
  fixture *f = *state;
  sysid_problem *p = make(f, "joint.*.damping,body.forearm.com_x,body.upper_arm.mass",
                          "joint.elbow.damping=0.01:0.2,joint.shoulder.damping=:1");
  /* base: positive (log); elbow: box; shoulder: box [0, 1]; com_x: free; mass: positive */
  const sysid_map want[5] = {SYSID_MAP_LOWER, SYSID_MAP_BOX, SYSID_MAP_BOX, SYSID_MAP_FREE,
                             SYSID_MAP_LOWER};
  for (int k = 0; k < 5; k++) {
    const sysid_pspec *s = &p->ps[k];
    assert_int_equal(s->map, want[k]);
    for (double phi = -40; phi <= 40; phi += 0.5) {
      double d, v = sysid__value(s, phi, &d);
      assert_true(v >= s->lo && v <= s->hi);
      if (s->map != SYSID_MAP_FREE) {
        assert_true(s->lo < v || d < 1e-15); /* at the bound only where φ saturates */
      }
      if (fabs(phi) < 15) { /* round trip where the map is not saturated */
        assert_true(fabs(sysid__coordinate(s, v) - phi) < 1e-8 * fmax(1, fabs(phi)));
      }
      /* dθ/dφ against a central difference */
      double dp, dm, h = 1e-6;
      double fd = (sysid__value(s, phi + h, &dp) - sysid__value(s, phi - h, &dm)) / (2 * h);
      assert_true(fabs(fd - d) <= 1e-6 * fmax(1, fabs(d)));
    }
  }
  sysid_problem_free(&p);
}

/* a positive quantity typed as 0 starts small (it has no logarithm); the report says 0 */
static void test_zero_positive_start(void **state) {
  fixture *f = *state;
  sim_model *m = f->m;
  int e = sim_model_joint(m, "elbow");
  double keep = m->joints[e].damping;
  m->joints[e].damping = 0;
  sysid_problem *p = make(f, "joint.elbow.damping", NULL);
  m->joints[e].damping = keep;
  assert_true(p->ps[0].initial == 0);
  assert_true(p->ps[0].start > 0 && p->ps[0].start < 0.01);
  double x0[64], th;
  sysid_start(p, x0);
  sysid_values(p, x0, &th);
  assert_true(fabs(th - p->ps[0].start) < 1e-15);
  sysid_problem_free(&p);
}

/* a smart servo's gear friction and rotor inertia name its joint's frictionloss and armature
   (the loader folded the gearbox in: sim/servo_spec.h) */
static void test_servo_gearbox(void **state) {
  (void)state;
  char path[1024], err[512];
  snprintf(path, sizeof path, "%s/configs/servo_arm.json", ACHILLES_SOURCE_DIR);
  sim_model *m = ts_model_file(path);
  sysid_series s = {0};
  const char *jn[2] = {"shoulder", "elbow"};
  s.n = 2000, s.njoint = 2;
  s.t = calloc(2000, sizeof(double)), s.q = calloc(4000, sizeof(double));
  s.joint_name = calloc(2, sizeof(char *));
  for (int i = 0; i < 2000; i++) {
    s.t[i] = i * 1e-3;
  }
  for (int j = 0; j < 2; j++) {
    s.joint_name[j] = strdup(jn[j]);
  }
  sysid_problem *p = sysid_problem_new(m, &s, "actuator.*.gear_friction,actuator.elbow_servo.rotor_inertia",
                                       NULL, NULL, NULL, err, sizeof err);
  if (!p) {
    fail_msg("%s", err);
  }
  char got[1024];
  names(p, got, sizeof got);
  printf("servo gearbox -> %s\n", got);
  assert_string_equal(got, "joint.base_yaw.frictionloss,joint.shoulder.frictionloss,"
                           "joint.elbow.frictionloss,joint.wrist_roll.frictionloss,"
                           "joint.elbow.armature");
  int e = sim_model_joint(m, "elbow");
  assert_true(p->ps[4].initial == m->joints[e].armature && m->joints[e].armature > 0);
  sysid_problem_free(&p);
  sysid_series_free(&s);
  sim_model_free(m);
}

/* the caller's model is left as it was: the problem works on its copy */
static void test_caller_model_untouched(void **state) {
  fixture *f = *state;
  sysid_problem *p = make(f, "body.forearm.mass", NULL);
  int b = sim_model_body(f->m, "forearm");
  double before = f->m->bodies[b].mass, x[64];
  sysid_start(p, x);
  x[0] += 0.3;
  double *r = malloc((size_t)sysid_nresidual(p) * sizeof *r);
  char err[512];
  assert_int_equal(sysid_residual(p, x, r, NULL, err, sizeof err), 0);
  assert_true(f->m->bodies[b].mass == before);
  assert_true(fabs(sysid_fitted_model(p)->bodies[b].mass - before * exp(0.3)) < 1e-12);
  free(r);
  sysid_problem_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_wildcards_and_aliases),
      cmocka_unit_test(test_coordinates_keep_bounds),
      cmocka_unit_test(test_zero_positive_start),
      cmocka_unit_test(test_servo_gearbox),
      cmocka_unit_test(test_caller_model_untouched),
  };
  return ts_run_with(tests, setup, arm_fixture_teardown);
}
