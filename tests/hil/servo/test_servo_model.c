/* tests/hil/servo/test_servo_model.c: the servo's motor and firmware loop (hil/servo/servo_model.c)
 * against closed forms: the DC motor's torque-speed line through the datasheet's stall torque
 * and no-load speed, the trapezoidal profile's travel time, the velocity estimate of a steady
 * turn, torque off, PWM and current modes, and the Feetech loop's sign-magnitude fields. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "hil/servo/servo_model.h"
#include "support/skip.h"

#define TWO_PI 6.283185307179586

/* |a - b| <= tol, saying both values when not */
#define assert_double_equal(a, b, tol) near((a), (b), (tol), #a, __LINE__)
static void near(double a, double b, double tol, const char *what, int line) {
  if (!(fabs(a - b) <= tol)) {
    fail_msg("line %d: %s = %.9g, expected %.9g within %g", line, what, a, b, tol);
  }
}

static void test_motor_line(void **state) {
  (void)state;
  servo_motor m;
  assert_int_equal(servo_motor_of_model(&m, DXL_MODEL_XM430_W350), 0);
  assert_int_equal(servo_motor_of_model(&m, 12345), -1);
  assert_int_equal(servo_motor_of_model(&m, DXL_MODEL_XL430_W250), 0);
  double i;
  /* full duty at standstill: the stall torque and current; at the no-load speed: nothing */
  assert_double_equal(servo_motor_torque(&m, 1, 0, 10, &i), 1.5, 1e-12);
  assert_double_equal(i, 1.4, 1e-12);
  assert_double_equal(servo_motor_torque(&m, 1, m.no_load_speed, 10, &i), 0, 1e-12);
  assert_double_equal(m.no_load_speed, 61 * TWO_PI / 60, 1e-12);
  /* half way along the line, and reversed; the current limit caps the torque */
  assert_double_equal(servo_motor_torque(&m, 0.5, 0.25 * m.no_load_speed, 10, &i), 0.375, 1e-12);
  assert_double_equal(servo_motor_torque(&m, -1, 0, 10, &i), -1.5, 1e-12);
  assert_double_equal(servo_motor_torque(&m, 1, 0, 0.7, &i), 0.75, 1e-12);
  /* zero duty on a turning joint brakes it (back-EMF through the driver) */
  assert_true(servo_motor_torque(&m, 0, 1.0, 10, &i) < 0);
}

/* A joint that follows the profile exactly: the trajectory register reaches the goal after
 * D/v + v/a (a trapezoid whose cruise is reached), and its velocity peaks at the profile's. */
static void test_profile_travel_time(void **state) {
  (void)state;
  servo_motor m;
  servo_motor_of_model(&m, DXL_MODEL_XL430_W250);
  dxl_device d;
  dxl_device_init(&d, DXL_MODEL_XL430_W250, 1);
  servo_state s;
  memset(&s, 0, sizeof s);
  const double dt = 1e-3;
  servo_feedback fb = {0, 0};
  dxl_servo_step(&d, &s, &m, &fb, dt); /* power-on: goal = present = 2048 */
  assert_int_equal(dxl_device_get(&d, DXL_GOAL_POSITION, 4), 2048);
  d.mem[DXL_TORQUE_ENABLE] = 1;
  dxl_device_set(&d, DXL_PROFILE_VELOCITY, 4, 50);
  dxl_device_set(&d, DXL_PROFILE_ACCELERATION, 4, 10);
  dxl_device_set(&d, DXL_GOAL_POSITION, 4, 2048 + 2000);
  const double v = 50 * 0.229 / 60 * 4096, a = 10 * 214.577 / 3600 * 4096; /* ticks/s, /s² */
  const double expected = 2000 / v + v / a;
  double t = 0, vpeak = 0;
  while (t < 10) {
    dxl_servo_step(&d, &s, &m, &fb, dt);
    t += dt;
    const double traj = (int32_t)dxl_device_get(&d, 140, 4);
    vpeak = fmax(vpeak, (double)(int32_t)dxl_device_get(&d, 136, 4));
    fb.position = (traj - 2048) * TWO_PI / 4096; /* the joint is where the profile says */
    if (s.traj_pos == 2048 + 2000) { /* exactly there (the register rounds) */
      break;
    }
  }
  assert_double_equal(t, expected, 0.003); /* 3 steps */
  assert_double_equal(vpeak, 50, 0.5);
  assert_int_equal(d.mem[DXL_MOVING_STATUS] & 2, 0); /* the profile is done */
}

/* A steady turn: the estimate settles on the speed; present fields in their units */
static void test_velocity_estimate_and_presents(void **state) {
  (void)state;
  servo_motor m;
  servo_motor_of_model(&m, DXL_MODEL_XM430_W350);
  dxl_device d;
  dxl_device_init(&d, DXL_MODEL_XM430_W350, 1);
  servo_state s;
  memset(&s, 0, sizeof s);
  const double w = 2.0, dt = 1e-3; /* rad/s */
  for (int k = 0; k < 500; k++) {
    const servo_feedback fb = {w * k * dt, w};
    assert_double_equal(dxl_servo_step(&d, &s, &m, &fb, dt), 0, 0); /* torque off */
  }
  const double units = w / TWO_PI * 60 / 0.229;
  assert_double_equal((int32_t)dxl_device_get(&d, DXL_PRESENT_VELOCITY, 4), units, 1.0);
  assert_int_equal(d.mem[DXL_MOVING], 1);
  assert_int_equal((int32_t)dxl_device_get(&d, DXL_PRESENT_POSITION, 4),
                   (int32_t)lround(2048 + w * 499 * dt * 4096 / TWO_PI));
  /* PWM mode: duty goal/885 through the motor line; current mode: the goal current */
  d.mem[DXL_OPERATING_MODE] = DXL_MODE_PWM;
  d.mem[DXL_TORQUE_ENABLE] = 1;
  dxl_device_set(&d, DXL_GOAL_PWM, 2, 885);
  servo_feedback fb = {0, 0};
  assert_double_equal(dxl_servo_step(&d, &s, &m, &fb, dt), 4.1, 1e-9);
  assert_int_equal((int16_t)dxl_device_get(&d, DXL_PRESENT_PWM, 2), 885);
  d.mem[DXL_TORQUE_ENABLE] = 0;
  d.mem[DXL_OPERATING_MODE] = DXL_MODE_CURRENT;
  d.mem[DXL_TORQUE_ENABLE] = 1;
  dxl_device_set(&d, DXL_GOAL_CURRENT, 2, (uint32_t)(int16_t)-300);
  fb.true_velocity = 1.0;
  const double tau = dxl_servo_step(&d, &s, &m, &fb, dt);
  assert_double_equal(tau, -300 * 2.69e-3 * 4.1 / 2.3, 1e-9);
  assert_int_equal((int16_t)dxl_device_get(&d, DXL_PRESENT_CURRENT, 2), -300);
}

/* The STS loop: sign-magnitude present speed, load sign bit 10, goal clamped to the limits */
static void test_feetech_loop(void **state) {
  (void)state;
  servo_motor m;
  assert_int_equal(servo_motor_of_model(&m, FT_MODEL_STS3215), 0);
  ft_device d;
  assert_int_equal(ft_device_init(&d, FT_MODEL_STS3215, 1), 0);
  servo_state s;
  memset(&s, 0, sizeof s);
  const double dt = 1e-3;
  for (int k = 0; k < 500; k++) { /* turning backwards at 1 rad/s */
    const servo_feedback fb = {-1.0 * k * dt, -1.0};
    ft_servo_step(&d, &s, &m, &fb, dt);
  }
  const double speed = ft_device_get_signed(&d, FT_PRESENT_SPEED, 15);
  assert_double_equal(speed, -4096 / TWO_PI, 2);
  assert_int_equal(d.mem[FT_PRESENT_SPEED + 1] & 0x80, 0x80); /* bit 15: negative */
  /* position mode, torque on, goal beyond the max limit: driven toward the limit (+) */
  d.mem[FT_TORQUE_ENABLE] = 1;
  d.mem[FT_MAX_POSITION_LIMIT] = 0x00, d.mem[FT_MAX_POSITION_LIMIT + 1] = 0x09; /* 2304 */
  ft_device_set_signed(&d, FT_GOAL_POSITION, 15, 4000);
  servo_feedback fb = {0, 0};
  ft_servo_step(&d, &s, &m, &fb, dt);
  const double tau = ft_servo_step(&d, &s, &m, &fb, dt);
  assert_true(tau > 0);
  assert_true(ft_device_get_signed(&d, FT_PRESENT_LOAD, 10) > 0);
  assert_double_equal(s.traj_pos, 2304, 0);
}

/* A drive held at its limit for SERVO_OVERLOAD_S: Overload in Hardware Error Status, torque off
 * (Shutdown has bit 5 by default), the alert bit in every status; only REBOOT clears it. */
static void test_overload(void **state) {
  (void)state;
  servo_motor m;
  servo_motor_of_model(&m, DXL_MODEL_XL430_W250);
  dxl_device d;
  dxl_device_init(&d, DXL_MODEL_XL430_W250, 1);
  servo_state s;
  memset(&s, 0, sizeof s);
  const double dt = 1e-3;
  const servo_feedback fb = {0, 0}; /* a joint that does not move: stalled */
  dxl_servo_step(&d, &s, &m, &fb, dt);
  d.mem[DXL_TORQUE_ENABLE] = 1;
  dxl_device_set(&d, DXL_GOAL_POSITION, 4, 3000); /* far: the PID saturates */
  int k = 0;
  while (d.mem[DXL_HARDWARE_ERROR_STATUS] == 0 && k < 3000) {
    assert_true(dxl_servo_step(&d, &s, &m, &fb, dt) > 1.4); /* stall torque meanwhile */
    k++;
  }
  assert_int_equal(k, (int)(SERVO_OVERLOAD_S / dt));
  assert_int_equal(d.mem[DXL_HARDWARE_ERROR_STATUS], DXL_HW_OVERLOAD);
  assert_double_equal(dxl_servo_step(&d, &s, &m, &fb, dt), 0, 0);
  assert_int_equal(d.mem[DXL_TORQUE_ENABLE], 0);
  d.mem[DXL_TORQUE_ENABLE] = 1; /* turning it on again does not help */
  assert_double_equal(dxl_servo_step(&d, &s, &m, &fb, dt), 0, 0);
  /* the alert bit rides on every status */
  dxl2_packet ping = {.id = 1, .instruction = DXL2_PING, .nparams = 0};
  uint8_t out[32];
  assert_true(dxl_device_handle(&d, &ping, out, sizeof out) > 0);
  assert_int_equal(out[8], DXL2_ERR_ALERT);
  /* REBOOT clears it; torque comes back when asked */
  dxl2_packet reboot = {.id = 1, .instruction = DXL2_REBOOT, .nparams = 0};
  assert_true(dxl_device_handle(&d, &reboot, out, sizeof out) > 0);
  assert_int_equal(out[8], DXL2_ERR_ALERT); /* answered before the reset */
  assert_int_equal(d.mem[DXL_HARDWARE_ERROR_STATUS], 0);
  dxl_servo_step(&d, &s, &m, &fb, dt); /* the loop starts over: goal = present */
  d.mem[DXL_TORQUE_ENABLE] = 1;
  dxl_device_set(&d, DXL_GOAL_POSITION, 4, 3000);
  assert_true(dxl_servo_step(&d, &s, &m, &fb, dt) > 1.4);
  assert_true(dxl_device_handle(&d, &ping, out, sizeof out) > 0);
  assert_int_equal(out[8], 0);
}

TS_MAIN(test_motor_line, test_profile_travel_time, test_velocity_estimate_and_presents,
        test_feetech_loop, test_overload)
