/* tests/sim/test_tendon_load.c: the "tendons" section and muscle actuators of the robot JSON
 * without MuJoCo: what is refused (with the JSON path), closed forms of the tendon stage (a
 * fixed tendon's Σ coef·q, a straight path, the wrap around a sphere), the muscle's curves at
 * their landmarks, and a snapshot with activations restoring the run bit for bit. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/muscle.h"
#include "sim/sim.h"
#include "support/model.h"
#include "support/skip.h"

/* two hinges about y, a site on each link and one on the world, a sphere at the elbow */
#define ARM_HEAD                                                                               \
  "{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"joint\":{\"name\":\"j1\",\"type\":"   \
  "\"hinge\",\"axis\":[0,1,0]},\"inertial\":{\"mass\":1,\"com\":[0.2,0,0],\"inertia\":"       \
  "[0.01,0.01,0.01,0,0,0]}},{\"name\":\"b\",\"parent\":\"a\",\"pos\":[0.4,0,0],\"joint\":"    \
  "{\"name\":\"j2\",\"type\":\"hinge\",\"axis\":[0,1,0]},\"inertial\":{\"mass\":1,\"com\":"   \
  "[0.2,0,0],\"inertia\":[0.01,0.01,0.01,0,0,0]}}],"                                         \
  "\"sites\":[{\"name\":\"w\",\"body\":\"world\",\"pos\":[0,0,0.3]},{\"name\":\"s\",\"body\":" \
  "\"a\",\"pos\":[0.2,0,0.1]},{\"name\":\"t\",\"body\":\"b\",\"pos\":[0.3,0,0.05]},"          \
  "{\"name\":\"u\",\"body\":\"a\",\"pos\":[0.2,0,-0.1]}],"                                   \
  "\"geoms\":[{\"name\":\"ball\",\"body\":\"a\",\"type\":\"sphere\",\"size\":[0.05],"        \
  "\"pos\":[0.4,0,0],\"contype\":0,\"conaffinity\":0},{\"name\":\"box\",\"body\":\"a\","     \
  "\"type\":\"box\",\"size\":[0.01,0.01,0.01],\"contype\":0,\"conaffinity\":0}]"

static void expect_error(const char *json, const char *fragment1, const char *fragment2) {
  char err[512] = "";
  sim_model *m = sim_model_load_string(json, "test.json", err, sizeof err);
  if (m) {
    sim_model_free(m);
    fail_msg("accepted a bad description: %s", json);
  }
  if (!strstr(err, fragment1) || (fragment2 && !strstr(err, fragment2))) {
    fail_msg("message '%s' lacks '%s' / '%s'", err, fragment1, fragment2 ? fragment2 : "");
  }
}

static void test_refused(void **state) {
  (void)state;
  expect_error(ARM_HEAD ",\"tendons\":{}}", "tendons", "array");
  expect_error(ARM_HEAD ",\"tendons\":[{\"name\":\"x\"}]}", "tendons[0]", "\"joints\"");
  expect_error(ARM_HEAD ",\"tendons\":[{\"name\":\"x\",\"joints\":[{\"joint\":\"nope\",\"coef\":1}]}]}",
               "tendons[0].joints[0].joint", "unknown joint");
  expect_error(ARM_HEAD ",\"tendons\":[{\"name\":\"x\",\"joints\":[{\"joint\":\"j1\",\"coef\":1},"
               "{\"joint\":\"j1\",\"coef\":2}]}]}", "tendons[0].joints[1].joint", "twice");
  expect_error(ARM_HEAD ",\"tendons\":[{\"name\":\"x\",\"path\":[{\"site\":\"w\"},{\"geom\":\"ball\"}]}]}",
               "tendons[0].path", "starts and ends at a site");
  expect_error(ARM_HEAD ",\"tendons\":[{\"name\":\"x\",\"path\":[{\"site\":\"w\"},{\"geom\":\"box\"},"
               "{\"site\":\"t\"}]}]}", "tendons[0].path[1].geom", "not a sphere or a cylinder");
  expect_error(ARM_HEAD ",\"tendons\":[{\"name\":\"x\",\"path\":[{\"site\":\"w\"},{\"geom\":\"ball\"},"
               "{\"geom\":\"ball\"},{\"site\":\"t\"}]}]}", "tendons[0].path[1]", "between two sites");
  expect_error(ARM_HEAD ",\"tendons\":[{\"name\":\"x\",\"path\":[{\"site\":\"w\"},{\"site\":\"t\"},"
               "{\"pulley\":0},{\"site\":\"w\"},{\"site\":\"t\"}]}]}", "tendons[0].path[2].pulley", NULL);
  expect_error(ARM_HEAD ",\"tendons\":[{\"name\":\"x\",\"path\":[{\"site\":\"w\"},{\"site\":\"t\"},"
               "{\"pulley\":2},{\"site\":\"t\"}]}]}", "tendons[0].path[3]", "two sites");
  expect_error(ARM_HEAD ",\"tendons\":[{\"name\":\"x\",\"path\":[{\"site\":\"w\",\"geom\":\"ball\"},"
               "{\"site\":\"t\"}]}]}", "tendons[0].path[0]", "one of");
  expect_error(ARM_HEAD ",\"tendons\":[{\"name\":\"x\",\"path\":[{\"site\":\"w\"},{\"site\":\"t\"}],"
               "\"limited\":true}]}", "tendons[0].range", NULL);
  expect_error(ARM_HEAD ",\"tendons\":[{\"name\":\"x\",\"path\":[{\"site\":\"w\"},{\"site\":\"t\"}],"
               "\"limited\":true,\"range\":[1,0]}]}", "tendons[0].range", "below");
  expect_error(ARM_HEAD ",\"tendons\":[{\"name\":\"x\",\"path\":[{\"site\":\"w\"},{\"site\":\"t\"}]},"
               "{\"name\":\"x\",\"path\":[{\"site\":\"w\"},{\"site\":\"t\"}]}]}", "tendons[1]", "duplicate");
  expect_error(ARM_HEAD ",\"tendons\":[{\"name\":\"x\",\"path\":[{\"site\":\"w\"},{\"site\":\"t\"}],"
               "\"stiffness\":-1}]}", "tendons[0].stiffness", NULL);
  expect_error(ARM_HEAD ",\"actuators\":[{\"name\":\"m\",\"tendon\":\"nope\",\"type\":\"motor\"}]}",
               "actuators[0].tendon", "unknown tendon");
  expect_error(ARM_HEAD ",\"tendons\":[{\"name\":\"x\",\"path\":[{\"site\":\"w\"},{\"site\":\"t\"}]}],"
               "\"actuators\":[{\"name\":\"m\",\"tendon\":\"x\",\"joint\":\"j1\",\"type\":\"motor\"}]}",
               "actuators[0].tendon", "not both");
  expect_error(ARM_HEAD ",\"tendons\":[{\"name\":\"x\",\"path\":[{\"site\":\"w\"},{\"site\":\"t\"}]}],"
               "\"actuators\":[{\"name\":\"m\",\"tendon\":\"x\",\"type\":\"dc_motor\",\"supply_voltage\":"
               "12,\"resistance\":1,\"kt\":0.1}]}", "actuators[0].tendon", "drives a joint");
  expect_error(ARM_HEAD ",\"actuators\":[{\"name\":\"m\",\"joint\":\"j1\",\"type\":\"muscle\","
               "\"range\":[1,0.5]}]}", "actuators[0].range", NULL);
  expect_error(ARM_HEAD ",\"actuators\":[{\"name\":\"m\",\"joint\":\"j1\",\"type\":\"muscle\","
               "\"lengthrange\":[0.3,0.3]}]}", "actuators[0].lengthrange", NULL);
  /* a muscle on a joint nothing limits: the range simulation never settles */
  expect_error(ARM_HEAD ",\"actuators\":[{\"name\":\"m\",\"joint\":\"j1\",\"type\":\"muscle\"}]}",
               "actuators[0]", "give it a \"lengthrange\"");
}

/* a fixed tendon is Σ coef·q; a straight path the distance; around the sphere, when the
 * straight segment would cut it, two tangents and the arc between their tangent points */
static void test_closed_forms(void **state) {
  (void)state;
  sim_model *m = ts_model(
      ARM_HEAD ",\"tendons\":[{\"name\":\"f\",\"joints\":[{\"joint\":\"j1\",\"coef\":0.5},"
      "{\"joint\":\"j2\",\"coef\":-2}]},{\"name\":\"line\",\"path\":[{\"site\":\"w\"},"
      "{\"site\":\"s\"},{\"pulley\":2},{\"site\":\"w\"},{\"site\":\"s\"}]},"
      "{\"name\":\"wrap\",\"path\":[{\"site\":\"s\"},{\"geom\":\"ball\"},{\"site\":\"t\"}]},"
      "{\"name\":\"below\",\"path\":[{\"site\":\"u\"},{\"geom\":\"ball\",\"sidesite\":\"u\"},"
      "{\"site\":\"t\"}]}]}");
  sim_data *d = sim_data_new(m);
  d->qpos[0] = 0, d->qpos[1] = 0.3;
  sim_kinematics(m, d);
  sim_tendons(m, d);
  assert_true(fabs(d->ten_length[0] - (0.5 * 0 - 2 * 0.3)) < 1e-15);
  assert_true(d->ten_J[0] == 0.5 && d->ten_J[1] == -2);
  /* w (0, 0, 0.3) to s (0.2, 0, 0.1), twice, the second branch halved */
  const double ws = sqrt(0.2 * 0.2 + 0.2 * 0.2);
  assert_true(fabs(d->ten_length[1] - 1.5 * ws) < 1e-15);
  /* s = (0.2, 0, 0.1) and t at q2 = 0.3 about y from the sphere's centre (0.4, 0, 0): both in
   * the x-z plane through the centre, the straight segment passing within the radius */
  const double r = 0.05, c = cos(0.3), sn = sin(0.3);
  const double tx = 0.4 + 0.3 * c + 0.05 * sn, tz = -0.3 * sn + 0.05 * c;
  const double p0[2] = {0.2 - 0.4, 0.1}, p1[2] = {tx - 0.4, tz};
  const double d0 = hypot(p0[0], p0[1]), d1 = hypot(p1[0], p1[1]);
  const double between = acos((p0[0] * p1[0] + p0[1] * p1[1]) / (d0 * d1));
  const double arc = r * (between - acos(r / d0) - acos(r / d1));
  const double expected = sqrt(d0 * d0 - r * r) + sqrt(d1 * d1 - r * r) + arc;
  print_message("sphere wrap: %.15f m, closed form %.15f m\n", d->ten_length[2], expected);
  assert_true(arc > 0.001); /* the path does bend */
  assert_true(fabs(d->ten_length[2] - expected) < 1e-14);
  /* the moments are the derivatives of the lengths (central differences) */
  for (int t = 1; t < m->ntendon; t++) {
    for (int k = 0; k < m->nv; k++) {
      const double h = 1e-6, J = d->ten_J[t * m->nv + k], q = d->qpos[k];
      d->qpos[k] = q + h;
      sim_kinematics(m, d);
      sim_tendons(m, d);
      const double up = d->ten_length[t];
      d->qpos[k] = q - h;
      sim_kinematics(m, d);
      sim_tendons(m, d);
      const double down = d->ten_length[t];
      d->qpos[k] = q;
      assert_true(fabs((up - down) / (2 * h) - J) < 1e-8);
    }
  }
  ts_sim_free(m, d);
}

/* the curves at their landmarks: at the optimal length and rest the gain is −F; the passive
 * force is 0 up to it, −F·fpmax/2 halfway to lmax (b) and −1.5·F·fpmax at lmax (linear beyond
 * b, as 2.2.2 computes it); shortening at vmax gives no force */
static void test_muscle_curves(void **state) {
  (void)state;
  const sim_muscle p = {{0.75, 1.05}, 100, 200, 0.5, 1.6, 1.5, 1.3, 1.2, {0.01, 0.04}};
  const double lr[2] = {0.2, 0.5}, L0 = (lr[1] - lr[0]) / (p.range[1] - p.range[0]);
  const double optimal = lr[0] + (1 - p.range[0]) * L0, at_lmax = lr[0] + (p.lmax - p.range[0]) * L0;
  const double at_b = lr[0] + (0.5 * (1 + p.lmax) - p.range[0]) * L0;
  assert_true(fabs(sim__muscle_gain(&p, optimal, 0, lr, 1) + 100) < 1e-12);
  assert_true(sim__muscle_bias(&p, optimal, lr, 1) == 0);
  assert_true(fabs(sim__muscle_bias(&p, at_b, lr, 1) + 0.5 * 100 * 1.3) < 1e-9);
  assert_true(fabs(sim__muscle_bias(&p, at_lmax, lr, 1) + 1.5 * 100 * 1.3) < 1e-9);
  assert_true(sim__muscle_gain(&p, optimal, -p.vmax * L0, lr, 1) == 0);
  assert_true(fabs(sim__muscle_gain(&p, optimal, 10, lr, 1) + 100 * 1.2) < 1e-12);
  const sim_muscle scaled = {{0.75, 1.05}, -1, 200, 0.5, 1.6, 1.5, 1.3, 1.2, {0.01, 0.04}};
  assert_true(fabs(sim__muscle_gain(&scaled, optimal, 0, lr, 4) + 50) < 1e-12); /* 200/4 */
  /* activation: rising with tau_act·(0.5 + 1.5·act), falling with tau_deact/(0.5 + 1.5·act) */
  assert_true(fabs(sim__muscle_dynamics(&p, 1, 0) - 1 / (0.01 * 0.5)) < 1e-9);
  assert_true(fabs(sim__muscle_dynamics(&p, 0, 1) + 1 / (0.04 / 2)) < 1e-9);
  assert_true(fabs(sim__muscle_dynamics(&p, 7, 0) - 1 / (0.01 * 0.5)) < 1e-9); /* clamped */
}

/* a muscle's activation is state: a snapshot taken mid-run restores it, and the run repeats */
static void test_snapshot_with_activation(void **state) {
  (void)state;
  sim_model *m = ts_model(
      ARM_HEAD ",\"tendons\":[{\"name\":\"line\",\"path\":[{\"site\":\"w\"},{\"site\":\"t\"}]}],"
      "\"actuators\":[{\"name\":\"m\",\"tendon\":\"line\",\"type\":\"muscle\",\"force\":50,"
      "\"lengthrange\":[0.3,0.8],\"ctrlrange\":[0,1]}]}");
  assert_int_equal(m->na, 1);
  sim_data *d = sim_data_new(m);
  sim_snapshot *s = sim_snapshot_new(m);
  double qpos[2], act;
  for (int integrator = 0; integrator <= SIM_INTEGRATOR_RK4; integrator++) {
    m->opt.integrator = (sim_integrator)integrator;
    sim_data_reset(m, d);
    d->ctrl[0] = 1;
    for (int k = 0; k < 50; k++) {
      sim_step(m, d);
    }
    sim_snapshot_save(m, d, s);
    assert_true(d->act[0] > 0.5); /* activated */
    for (int k = 0; k < 50; k++) {
      sim_step(m, d);
    }
    memcpy(qpos, d->qpos, sizeof qpos);
    act = d->act[0];
    sim_snapshot_restore(m, d, s);
    for (int k = 0; k < 50; k++) {
      sim_step(m, d);
    }
    assert_memory_equal(qpos, d->qpos, sizeof qpos);
    assert_true(act == d->act[0]);
  }
  sim_snapshot_free(s);
  ts_sim_free(m, d);
}

/* a limit range narrower than twice the margin: both sides' rows at once, and room for them */
static void test_both_limits_near(void **state) {
  (void)state;
  sim_model *m = ts_model(ARM_HEAD ",\"tendons\":[{\"name\":\"f\",\"joints\":[{\"joint\":\"j1\","
                          "\"coef\":1}],\"limited\":true,\"range\":[-0.01,0.01],\"margin\":0.1}],"
                          "\"max_contacts\":0}"); /* no contact rows to make room either */
  sim_data *d = sim_data_new(m);
  sim_forward(m, d);
  assert_int_equal(d->nefc, 2);
  assert_true(d->nefc <= m->nefc_max);
  assert_int_equal(d->efc_type[0], SIM_CNSTR_LIMIT_TENDON);
  assert_int_equal(d->efc_type[1], SIM_CNSTR_LIMIT_TENDON);
  ts_sim_free(m, d);
}

TS_MAIN(test_refused, test_both_limits_near, test_closed_forms, test_muscle_curves, test_snapshot_with_activation)
