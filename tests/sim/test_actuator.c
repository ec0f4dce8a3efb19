/* tests/sim/test_actuator.c: actuator forces against closed-form motor and servo behaviour. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/servo_spec.h"
#include "sim/sim.h"
#include "support/model.h"
#include "support/skip.h"

/* One link on a hinge about z, no gravity: joint inertia J = Izz + m·c² = 0.1 + 1·0.5² = 0.35. */
#define LINK                                                                                   \
  "\"gravity\":[0,0,0],\"timestep\":0.0005,\"bodies\":[{\"name\":\"l\",\"parent\":\"world\","  \
  "\"joint\":{\"name\":\"j\",\"type\":\"hinge\",\"axis\":[0,0,1]},\"inertial\":{\"mass\":1,"    \
  "\"com\":[0.5,0,0],\"inertia\":[0.1,0.1,0.1,0,0,0]}}]"
static const double J = 0.35;

static sim_model *load(const char *actuators) {
  char json[2048];
  snprintf(json, sizeof json, "{" LINK ",\"actuators\":[%s]}", actuators);
  return ts_model(json);
}

static void expect_error(const char *actuators, const char *fragment) {
  char json[2048], err[512];
  snprintf(json, sizeof json, "{" LINK ",\"actuators\":[%s]}", actuators);
  sim_model *m = sim_model_load_string(json, "test", err, sizeof err);
  sim_model_free(m);
  assert_null(m);
  if (!strstr(err, fragment)) {
    fail_msg("'%s' lacks '%s'", err, fragment);
  }
}

static void test_motor_gear_and_clamp(void **state) {
  (void)state;
  sim_model *m = load("{\"name\":\"a\",\"joint\":\"j\",\"type\":\"motor\",\"gear\":3,"
                      "\"ctrlrange\":[-1,2]}");
  sim_data *d = sim_data_new(m);
  d->ctrl[0] = 0.5;
  sim_forward(m, d);
  assert_true(fabs(d->actuator_force[0] - 1.5) < 1e-15);
  assert_true(fabs(d->qacc[0] - 1.5 / J) < 1e-12);
  d->ctrl[0] = 10; /* clamped to 2 */
  sim_forward(m, d);
  assert_true(fabs(d->actuator_force[0] - 6) < 1e-15);
  d->ctrl[0] = NAN; /* never reaches the dynamics */
  sim_forward(m, d);
  assert_true(d->actuator_force[0] == 0 && d->qacc[0] == 0);
  ts_sim_free(m, d);
}

/* Without inductance, J·θ̈ = kt·g·η·(V − ke·g·θ̇)/R: a first-order lag toward the no-load speed
 * V/(ke·g) with time constant τ = J·R/(kt·ke·g²·η). */
static void test_dc_motor_speed_follows_closed_form(void **state) {
  (void)state;
  const double V = 6, R = 2, kt = 0.05, g = 4, eta = 0.9;
  sim_model *m = load("{\"name\":\"a\",\"joint\":\"j\",\"type\":\"dc_motor\",\"supply_voltage\":12,"
                      "\"resistance\":2,\"kt\":0.05,\"gear\":4,\"efficiency\":0.9,"
                      "\"current_limit\":100}");
  m->opt.integrator = SIM_INTEGRATOR_RK4;
  sim_data *d = sim_data_new(m);
  d->ctrl[0] = 0.5; /* duty → 6 V */
  double tau = J * R / (kt * kt * g * g * eta), w_nl = V / (kt * g), max_err = 0;
  for (int s = 1; s <= 4000; s++) {
    sim_step(m, d);
    double expect = w_nl * (1 - exp(-d->time / tau));
    max_err = fmax(max_err, fabs(d->qvel[0] - expect));
  }
  /* RK4 holds the algebraic current exactly; its own error at h = 0.5 ms, τ ≈ 5.8 s is ~1e-12 */
  assert_true(max_err < 1e-9 * w_nl);
  sim_forward(m, d);
  assert_true(fabs(d->actuator_current[0] - (V - kt * g * d->qvel[0]) / R) < 1e-12);
  ts_sim_free(m, d);
}

/* With inductance and the rotor held still, i(t) = V/R·(1 − e^(−t·R/L)) exactly at each step. */
static void test_dc_motor_current_step_is_exact(void **state) {
  (void)state;
  sim_model *m = load("{\"name\":\"a\",\"joint\":\"j\",\"type\":\"dc_motor\",\"input\":\"voltage\","
                      "\"supply_voltage\":12,\"resistance\":3,\"inductance\":0.002,\"kt\":0.02,"
                      "\"current_limit\":10}");
  assert_int_equal(m->na, 1);
  sim_data *d = sim_data_new(m);
  d->ctrl[0] = 9; /* volts */
  double h = 1e-4;
  for (int s = 1; s <= 50; s++) {
    sim_actuator_advance(m, d, h);
    double expect = 9.0 / 3.0 * (1 - exp(-s * h * 3.0 / 0.002));
    assert_true(fabs(d->act[0] - expect) < 1e-13);
  }
  /* the driver's current limit caps it */
  d->ctrl[0] = 12;
  m->actuators[0].current_limit = 1.0;
  for (int s = 0; s < 200; s++) {
    sim_actuator_advance(m, d, h);
  }
  assert_true(fabs(d->act[0] - 1.0) < 1e-15);
  sim_forward(m, d);
  assert_true(fabs(d->actuator_force[0] - 0.02 * 1.0) < 1e-15);
  ts_sim_free(m, d);
}

/* A position servo on a free link is a damped oscillator J·θ̈ = kp·(θ* − θ) − kd·θ̇:
 * compare with its closed-form underdamped response. */
static void test_position_servo_matches_oscillator(void **state) {
  (void)state;
  const double kp = 14, kd = 0.7, target = 0.3;
  sim_model *m = load("{\"name\":\"a\",\"joint\":\"j\",\"type\":\"position_servo\",\"kp\":14,"
                      "\"kd\":0.7}");
  m->opt.integrator = SIM_INTEGRATOR_RK4;
  sim_data *d = sim_data_new(m);
  d->ctrl[0] = target;
  double wn = sqrt(kp / J), zeta = kd / (2 * sqrt(kp * J)), wd = wn * sqrt(1 - zeta * zeta);
  double max_err = 0;
  for (int s = 0; s < 4000; s++) {
    sim_step(m, d);
    double t = d->time;
    double expect = target * (1 - exp(-zeta * wn * t) *
                                      (cos(wd * t) + zeta / sqrt(1 - zeta * zeta) * sin(wd * t)));
    max_err = fmax(max_err, fabs(d->qpos[0] - expect));
  }
  assert_true(max_err < 1e-10); /* RK4 at h·ωn ≈ 3e-3: local error far below this */
  ts_sim_free(m, d);
}

static void test_servo_force_limit_and_velocity_servo(void **state) {
  (void)state;
  sim_model *m = load("{\"name\":\"p\",\"joint\":\"j\",\"type\":\"position_servo\",\"kp\":100,"
                      "\"force_limit\":0.25},{\"name\":\"v\",\"joint\":\"j\",\"type\":"
                      "\"velocity_servo\",\"kv\":2,\"force_limit\":5}");
  sim_data *d = sim_data_new(m);
  d->ctrl[0] = 1;   /* 100 N·m asked, 0.25 allowed */
  d->ctrl[1] = 0.5; /* 1 N·m */
  sim_forward(m, d);
  assert_true(d->actuator_force[0] == 0.25);
  assert_true(d->actuator_force[1] == 1.0);
  assert_true(fabs(d->qfrc_actuator[0] - 1.25) < 1e-15); /* both act on the same joint */
  ts_sim_free(m, d);
}

/* A smart servo on a bus (hil/servo): its command is the joint torque its own firmware and motor
 * model computed; the "servo" block is read there, and no motor keys are taken here. */
static void test_smart_servo_is_joint_torque(void **state) {
  (void)state;
  sim_model *m = load("{\"name\":\"s\",\"joint\":\"j\",\"type\":\"servo\","
                      "\"servo\":{\"id\":1,\"model\":\"XL430-W250\"}}");
  sim_data *d = sim_data_new(m);
  assert_int_equal(m->actuators[0].type, SIM_ACT_SMART_SERVO);
  d->ctrl[0] = -0.75;
  sim_forward(m, d);
  assert_true(d->actuator_force[0] == -0.75);
  assert_true(d->qfrc_actuator[0] == -0.75);
  ts_sim_free(m, d);
  expect_error("{\"name\":\"a\",\"joint\":\"j\",\"type\":\"servo\",\"gear\":2}",
               "actuators[0].gear: unknown key");
}

/* A smart servo brings its gearbox to the joint (sim/servo_spec.h): the rotor's inertia through
 * the gear (rotor inertia × ratio²) joins the armature, the gear train's friction the joint's
 * frictionloss and damping; a torque from rest accelerates J + J_rotor·N² (closed form). */
static void test_smart_servo_gearbox(void **state) {
  (void)state;
  const sim_servo_spec *xl = sim_servo_spec_find("XL430-W250");
  assert_non_null(xl);
  assert_true(xl->gear_ratio == 258.5); /* ROBOTIS's published figure */
  sim_model *m = load("{\"name\":\"s\",\"joint\":\"j\",\"type\":\"servo\","
                      "\"servo\":{\"id\":1,\"model\":\"XL430-W250\"}}");
  const double reflected = xl->rotor_inertia * 258.5 * 258.5;
  assert_true(fabs(m->joints[0].armature - reflected) < 1e-15);
  assert_true(m->joints[0].frictionloss == xl->gear_friction && xl->gear_friction > 0);
  assert_true(m->joints[0].damping == xl->gear_damping && xl->gear_damping > 0);
  printf("gearbox: XL430-W250 adds %.4g kg·m² (rotor %.3g × 258.5²), friction %.3g N·m, "
         "damping %.3g N·m·s/rad\n", reflected, xl->rotor_inertia, xl->gear_friction,
         xl->gear_damping);
  sim_model_free(m);
  /* the block's figures override the model's; without friction the step is the closed form */
  m = load("{\"name\":\"s\",\"joint\":\"j\",\"type\":\"servo\",\"servo\":{\"id\":1,"
           "\"model\":\"STS3215\",\"gear_ratio\":100,\"rotor_inertia\":1e-6,"
           "\"gear_friction\":0,\"gear_damping\":0}}");
  assert_true(fabs(m->joints[0].armature - 0.01) < 1e-15);
  assert_true(m->joints[0].frictionloss == 0 && m->joints[0].damping == 0);
  sim_data *d = sim_data_new(m);
  d->ctrl[0] = 0.5;
  sim_forward(m, d);
  assert_true(fabs(d->qacc[0] - 0.5 / (J + 0.01)) < 1e-12);
  ts_sim_free(m, d);
  expect_error("{\"name\":\"s\",\"joint\":\"j\",\"type\":\"servo\",\"servo\":{\"id\":1,"
               "\"model\":\"XL999\"}}",
               "actuators[0].servo.model: unknown model \"XL999\"");
  expect_error("{\"name\":\"s\",\"joint\":\"j\",\"type\":\"servo\"}",
               "actuators[0].servo: missing");
  expect_error("{\"name\":\"s\",\"joint\":\"j\",\"type\":\"servo\",\"servo\":{\"id\":1,"
               "\"model\":\"STS3215\",\"gear_ratio\":-1}}",
               "actuators[0].servo.gear_ratio: must be > 0");
  expect_error("{\"name\":\"s\",\"joint\":\"j\",\"type\":\"servo\",\"servo\":{\"id\":1,"
               "\"model\":\"STS3215\",\"gearing\":1}}",
               "actuators[0].servo.gearing: unknown key");
}

static void test_bad_actuators(void **state) {
  (void)state;
  expect_error("{\"name\":\"a\",\"joint\":\"nope\",\"type\":\"motor\"}", "actuators[0].joint");
  expect_error("{\"name\":\"a\",\"joint\":\"j\",\"type\":\"jet\"}", "actuators[0].type");
  expect_error("{\"name\":\"a\",\"joint\":\"j\",\"type\":\"motor\",\"kp\":1}",
               "actuators[0].kp: unknown key");
  expect_error("{\"name\":\"a\",\"joint\":\"j\",\"type\":\"position_servo\",\"kp\":-1}",
               "actuators[0].kp: must be > 0");
  expect_error("{\"name\":\"a\",\"joint\":\"j\",\"type\":\"motor\",\"ctrlrange\":[1,1]}",
               "actuators[0].ctrlrange");
  expect_error("{\"name\":\"a\",\"joint\":\"j\",\"type\":\"dc_motor\",\"supply_voltage\":12,"
               "\"resistance\":1,\"kt\":0.1,\"efficiency\":1.5}",
               "actuators[0].efficiency: must be <= 1");
  expect_error("{\"name\":\"a\",\"joint\":\"j\",\"type\":\"dc_motor\",\"resistance\":1,"
               "\"kt\":0.1}",
               "actuators[0].supply_voltage: missing");
  expect_error("{\"name\":\"a\",\"joint\":\"j\",\"type\":\"motor\"},{\"name\":\"a\",\"joint\":"
               "\"j\",\"type\":\"motor\"}",
               "duplicate actuator name");
}

TS_MAIN(test_motor_gear_and_clamp, test_dc_motor_speed_follows_closed_form,
        test_dc_motor_current_step_is_exact, test_position_servo_matches_oscillator,
        test_servo_force_limit_and_velocity_servo, test_smart_servo_is_joint_torque,
        test_smart_servo_gearbox, test_bad_actuators)
