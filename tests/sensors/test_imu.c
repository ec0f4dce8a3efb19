/* tests/sensors/test_imu.c: gyroscope and accelerometer against closed-form kinematics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "sensors/sensors.h"
#include "support/skip.h"

/* base yaw about z, then a link at x = 0.3 m pitching about y; gravity −9.81 z */
static const char two_link[] =
    "{\"name\": \"two\", \"timestep\": 0.001, \"gravity\": [0, 0, -9.81],"
    " \"bodies\": ["
    "  {\"name\": \"base\", \"parent\": \"world\", \"pos\": [0, 0, 0],"
    "   \"joint\": {\"name\": \"yaw\", \"type\": \"hinge\", \"axis\": [0, 0, 1]},"
    "   \"inertial\": {\"mass\": 1.0, \"com\": [0.1, 0, 0], \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0]}},"
    "  {\"name\": \"arm\", \"parent\": \"base\", \"pos\": [0.3, 0, 0],"
    "   \"joint\": {\"name\": \"pitch\", \"type\": \"hinge\", \"axis\": [0, 1, 0]},"
    "   \"inertial\": {\"mass\": 0.5, \"com\": [0.2, 0, 0], \"inertia\": [0.001, 0.01, 0.01, 0, 0, 0]}}],"
    " \"sites\": [{\"name\": \"imu\", \"body\": \"arm\", \"pos\": [0.2, 0, 0.05]}]}";

/* a pendulum: hinge about y at the origin, site at (0.5, 0, 0.1) in the body */
static const char pendulum[] =
    "{\"name\": \"pend\", \"timestep\": 0.001, \"gravity\": [0, 0, -9.81],"
    " \"bodies\": [{\"name\": \"link\", \"parent\": \"world\", \"pos\": [0, 0, 0],"
    "   \"joint\": {\"name\": \"j\", \"type\": \"hinge\", \"axis\": [0, 1, 0]},"
    "   \"inertial\": {\"mass\": 1.0, \"com\": [0.25, 0, 0], \"inertia\": [0.001, 0.02, 0.02, 0, 0, 0]}}],"
    " \"sites\": [{\"name\": \"imu\", \"body\": \"link\", \"pos\": [0.5, 0, 0.1]}]}";

static const char imu_block[] =
    "{\"list\": [{\"name\": \"imu\", \"type\": \"imu\", \"site\": \"imu\"}]}";

typedef struct rig {
  sim_model *m;
  sim_data *d;
  sens_set *set;
} rig;

static void rig_load(rig *r, const char *robot) {
  char err[512];
  r->m = sim_model_load_string(robot, "test", err, sizeof err);
  assert_non_null(r->m);
  r->d = sim_data_new(r->m);
  cJSON *json = cJSON_Parse(imu_block);
  assert_int_equal(sens_set_load_json(&r->set, r->m, json, "test", err, sizeof err), 0);
  cJSON_Delete(json);
}

static void rig_free(rig *r) {
  sens_set_free(&r->set);
  sim_data_free(r->d);
  sim_model_free(r->m);
}

/* a new physics step (sensors sample once per step) at the state set by the test */
static const sens_sample *rig_sample(rig *r) {
  r->d->nstep++;
  r->d->time += r->m->opt.timestep;
  sim_forward(r->m, r->d);
  sens_set_update(r->set, r->m, r->d);
  return &sens_set_sensor(r->set, 0)->sample;
}

/* body rate of the arm in its own axes: R_y(q2)ᵀ·(q̇1·ẑ) + q̇2·ŷ */
static void test_gyro_is_body_rate(void **state) {
  (void)state;
  rig r;
  rig_load(&r, two_link);
  const double q1 = 0.7, q2 = -0.4, w1 = 1.3, w2 = -2.1;
  r.d->qpos[0] = q1;
  r.d->qpos[1] = q2;
  r.d->qvel[0] = w1;
  r.d->qvel[1] = w2;
  const sens_sample *s = rig_sample(&r);
  const double expected[3] = {-w1 * sin(q2), w2, w1 * cos(q2)};
  for (int k = 0; k < 3; k++) {
    assert_true(fabs(s->meas[k] - expected[k]) < 1e-12); /* round-off of a few products */
    assert_true(s->meas[k] == s->truth[k]);               /* no noise configured */
  }
  rig_free(&r);
}

/* held still against gravity (applied = bias forces, so qacc = 0), the accelerometer reads
 * +9.81 m/s² along world up, expressed in the arm's axes: R_y(q2)ᵀ·ẑ·g */
static void test_resting_accelerometer(void **state) {
  (void)state;
  rig r;
  rig_load(&r, two_link);
  const double q2 = 0.35;
  r.d->qpos[0] = -1.1;
  r.d->qpos[1] = q2;
  sim_forward(r.m, r.d);
  sim_rnea_bias(r.m, r.d);
  for (int k = 0; k < r.m->nv; k++) {
    r.d->qfrc_applied[k] = r.d->qfrc_bias[k];
  }
  const sens_sample *s = rig_sample(&r);
  for (int k = 0; k < r.m->nv; k++) {
    assert_true(fabs(r.d->qacc[k]) < 1e-10); /* really at rest */
  }
  const double g = 9.81, expected[3] = {-g * sin(q2), 0.0, g * cos(q2)};
  for (int k = 0; k < 3; k++) {
    assert_true(fabs(s->meas[3 + k] - expected[k]) < 1e-9); /* round-off of the ABA sweep */
  }
  rig_free(&r);
}

/* a swinging pendulum: specific force = R_y(q)ᵀ·(p̈ − g) with p(q) = R_y(q)·(r, 0, h),
 * p̈ = q̈·∂p/∂q + q̇²·∂²p/∂q², q̈ from the dynamics */
static void test_pendulum_accelerometer(void **state) {
  (void)state;
  rig r;
  rig_load(&r, pendulum);
  const double rr = 0.5, h = 0.1;
  const double qs[3] = {0.3, -1.2, 2.5}, ws[3] = {0.0, 2.0, -4.5};
  for (int i = 0; i < 3; i++) {
    const double q = qs[i], w = ws[i];
    r.d->qpos[0] = q;
    r.d->qvel[0] = w;
    const sens_sample *s = rig_sample(&r);
    assert_int_equal(sens_set_sensor(r.set, 0)->fresh, 1);
    const double a = r.d->qacc[0], c = cos(q), sn = sin(q);
    const double dp[3] = {-sn * rr + c * h, 0.0, -c * rr - sn * h};
    const double ddp[3] = {-c * rr - sn * h, 0.0, sn * rr - c * h};
    double fw[3];
    for (int k = 0; k < 3; k++) {
      fw[k] = a * dp[k] + w * w * ddp[k];
    }
    fw[2] += 9.81;
    /* body axes: R_y(q)ᵀ·fw */
    const double fb[3] = {c * fw[0] - sn * fw[2], fw[1], sn * fw[0] + c * fw[2]};
    for (int k = 0; k < 3; k++) {
      assert_true(fabs(s->meas[3 + k] - fb[k]) < 1e-9); /* round-off */
    }
    assert_true(fabs(s->meas[1] - w) < 1e-12);
  }
  rig_free(&r);
}

/* site position in the world along q(t) = q + q̇·t + ½·q̈·t², from the kinematics alone */
static void site_at(const rig *r, sim_data *k, const double *q, const double *qd,
                    const double *qdd, double t, double out[3]) {
  for (int i = 0; i < r->m->nq; i++) {
    k->qpos[i] = q[i] + qd[i] * t + 0.5 * qdd[i] * t * t;
    k->qvel[i] = 0.0;
  }
  sim_kinematics(r->m, k);
  for (int a = 0; a < 3; a++) {
    out[a] = k->site_xpos[a];
  }
}

/* both joints moving (so the arm's origin moves and ω×v matters): the accelerometer equals the
 * second difference of the site's world position along the trajectory with the dynamics' q̈,
 * minus gravity, in the arm's axes. An independent route: positions only, no bvel or bacc. */
static void test_accelerometer_finite_difference(void **state) {
  (void)state;
  rig r;
  rig_load(&r, two_link);
  const double q[2] = {0.4, -0.7}, qd[2] = {2.3, -1.6};
  r.d->qpos[0] = q[0];
  r.d->qpos[1] = q[1];
  r.d->qvel[0] = qd[0];
  r.d->qvel[1] = qd[1];
  r.d->qfrc_applied[0] = 0.8;
  const sens_sample *s = rig_sample(&r);
  const double qdd[2] = {r.d->qacc[0], r.d->qacc[1]};
  double R[9];
  for (int a = 0; a < 9; a++) {
    R[a] = r.d->xmat[9 * 2 + a]; /* body 2 = arm */
  }
  sim_data *k = sim_data_new(r.m);
  const double h = 1e-4;
  double pm[3], p0[3], pp[3];
  site_at(&r, k, q, qd, qdd, -h, pm);
  site_at(&r, k, q, qd, qdd, 0.0, p0);
  site_at(&r, k, q, qd, qdd, h, pp);
  double fw[3];
  for (int a = 0; a < 3; a++) {
    fw[a] = (pp[a] - 2.0 * p0[a] + pm[a]) / (h * h);
  }
  fw[2] += 9.81;
  for (int a = 0; a < 3; a++) {
    const double fb = R[0 + a] * fw[0] + R[3 + a] * fw[1] + R[6 + a] * fw[2]; /* Rᵀ·fw */
    /* truncation h²·|p⁗|/12 ~ 1e-7 and round-off 1e-16·|p|/h² ~ 1e-8: 1e-5 is ample, while a
     * missing ω×v term would be off by ~1 m/s² */
    assert_true(fabs(s->meas[3 + a] - fb) < 1e-5);
  }
  sim_data_free(k);
  rig_free(&r);
}

/* live tuning and faults address an IMU's groups: "gyro.<path>" tunes the three gyro axes and
 * nothing else; a fault on "accel" leaves the gyro alone */
static void test_imu_groups(void **state) {
  (void)state;
  rig r;
  rig_load(&r, pendulum);
  char err[256];
  assert_int_equal(sens_set_param(r.set, "imu", "gyro.noise.offset", 0.25, err, sizeof err), 0);
  assert_int_equal(sens_set_param(r.set, "imu", "noise.offset", 0.25, err, sizeof err),
                   SENS_EINVAL);
  assert_non_null(strstr(err, "gyro.noise.offset or accel.noise.offset"));
  const sens_fault stuck = {SENS_FAULT_STUCK, 0.0, 0.0, 0.0};
  r.d->qvel[0] = 1.0;
  const sens_sample *s = rig_sample(&r);
  const double accel_before = s->meas[3];
  assert_int_equal(sens_set_fault(r.set, "imu", "accel", &stuck, err, sizeof err), 0);
  r.d->qvel[0] = 3.0; /* centripetal acceleration changes, the stuck accel does not */
  s = rig_sample(&r);
  for (int k = 0; k < 3; k++) {
    assert_true(s->meas[k] == s->truth[k] + 0.25); /* gyro: truth plus the new offset, exactly */
  }
  assert_true(s->meas[3] == accel_before && s->truth[3] != accel_before);
  assert_int_equal(sens_set_fault(r.set, "imu", "magnetometer", &stuck, err, sizeof err),
                   SENS_ENOTFOUND);
  rig_free(&r);
}

TS_MAIN(test_gyro_is_body_rate, test_resting_accelerometer, test_pendulum_accelerometer,
        test_accelerometer_finite_difference, test_imu_groups)
