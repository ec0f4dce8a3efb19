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
#include <stdio.h>
#include <string.h>

#include "hil/servo/feetech.h"
#include "hil/servo/servo_model.h"

#define TWO_PI 6.283185307179586

/* |a - b| <= tol, saying both values when not */
#define assert_double_equal(a, b, tol) near((a), (b), (tol), #a, __LINE__)
static void near(double a, double b, double tol, const char *what, int line) {
  if (!(fabs(a - b) <= tol)) {
    fail_msg("line %d: %s = %.9g, expected %.9g within %g", line, what, a, b, tol);
  }
}

/* a servo of the model at ID id, just powered on (its loop has not run) */
static void dxl_setup(servo_motor *m, dxl_device *d, servo_state *s, dxl_model model, uint8_t id) {
  assert_int_equal(servo_motor_of_model(m, model), 0);
  assert_int_equal(dxl_device_init(d, model, id), 0);
  memset(s, 0, sizeof *s);
}

static void sts_setup(servo_motor *m, ft_device *d, servo_state *s, uint8_t id) {
  assert_int_equal(servo_motor_of_model(m, FT_MODEL_STS3215), 0);
  assert_int_equal(ft_device_init(d, FT_MODEL_STS3215, id), 0);
  memset(s, 0, sizeof *s);
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
  dxl_device d;
  servo_state s;
  dxl_setup(&m, &d, &s, DXL_MODEL_XL430_W250, 1);
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
  dxl_device d;
  servo_state s;
  dxl_setup(&m, &d, &s, DXL_MODEL_XM430_W350, 1);
  const double w = 2.0, dt = 1e-3; /* rad/s */
  for (int k = 0; k < 500; k++) {
    const servo_feedback fb = {w * k * dt, w};
    assert_double_equal(dxl_servo_step(&d, &s, &m, &fb, dt), 0, 0); /* torque off */
  }
  const double units = w / TWO_PI * 60 / 0.229;
  assert_double_equal((int32_t)dxl_device_get(&d, DXL_PRESENT_VELOCITY, 4), units, 1.0);
  assert_int_equal(d.mem[DXL_MOVING], 1);
  /* the encoder reads a turning joint a tick behind (its hysteresis): the floor of the angle */
  assert_int_equal((int32_t)dxl_device_get(&d, DXL_PRESENT_POSITION, 4),
                   (int32_t)floor(2048 + w * 499 * dt * 4096 / TWO_PI));
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
  ft_device d;
  servo_state s;
  sts_setup(&m, &d, &s, 1);
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

/* Speed as the servos measure it (SERVO_*_SPEED_WINDOW_S): a joint turning at w reads w within
 * one tick over the window (plus the register's rounding); once it stops, and while it jitters
 * by less than a tick (the encoder's hysteresis), Present Velocity / Speed read 0 and Moving 0
 * from one window after the move ends on, not before. Torque is off: the joint is driven. */
typedef struct speed_run {
  double window;                       /* s */
  double unit;                         /* ticks/s per unit of the speed register */
  double moving_max_err, rest_speed_at_half; /* measured */
  int rest_nonzero_after_window, moving_after_window;
} speed_run;

static double run_servo(int dxl, dxl_device *dd, ft_device *fd, servo_state *s,
                        const servo_motor *m, double angle, double w, double dt, int *moving) {
  const servo_feedback fb = {angle, w};
  if (dxl) {
    dxl_servo_step(dd, s, m, &fb, dt);
    *moving = dd->mem[DXL_MOVING];
    return (int32_t)dxl_device_get(dd, DXL_PRESENT_VELOCITY, 4);
  }
  ft_servo_step(fd, s, m, &fb, dt);
  *moving = fd->mem[FT_MOVING];
  return ft_device_get_signed(fd, FT_PRESENT_SPEED, 15);
}

static speed_run speed_test(int dxl) {
  servo_motor m;
  dxl_device dd;
  ft_device fd;
  servo_state s;
  memset(&s, 0, sizeof s);
  servo_motor_of_model(&m, dxl ? DXL_MODEL_XL430_W250 : FT_MODEL_STS3215);
  dxl_device_init(&dd, DXL_MODEL_XL430_W250, 1);
  ft_device_init(&fd, FT_MODEL_STS3215, 1);
  dxl_device_set(&dd, 24, 4, 0); /* Moving Threshold 0: Moving is any measured speed */
  speed_run r = {dxl ? SERVO_DXL_SPEED_WINDOW_S : SERVO_FT_SPEED_WINDOW_S,
                 dxl ? 4096 * 0.229 / 60 : 1.0, 0, 0, 0, 0};
  const double dt = 1e-3, w = 1.3, tick = TWO_PI / 4096;
  const int move = 600, window = (int)lround(r.window / dt);
  /* the rest angle 0.3 tick past a whole tick: jittering by ±0.45 tick about it, a rounding
   * encoder would toggle between two readings; one with hysteresis holds */
  const double rest = (round(0.1 / tick) + 0.3) * tick;
  double angle = rest;
  int moving = 0;
  for (int k = 0; k < move; k++) {
    angle = rest - w * (move - k) * dt; /* arrives at k = move */
    const double v = run_servo(dxl, &dd, &fd, &s, &m, angle, w, dt, &moving);
    if (k > 2 * window) {
      r.moving_max_err = fmax(r.moving_max_err, fabs(v - w / tick / r.unit));
      assert_int_equal(moving, 1);
    }
  }
  for (int k = 0; k < 400; k++) { /* at rest, jittering by ±0.45 tick */
    const double jitter = 0.45 * tick * sin(k * 0.7);
    const double v = run_servo(dxl, &dd, &fd, &s, &m, rest + jitter, 0, dt, &moving);
    if (k == window / 2) {
      r.rest_speed_at_half = v;
    }
    if (k >= window && (v != 0 || moving)) {
      r.rest_nonzero_after_window++;
    }
  }
  return r;
}

static void test_speed_window_and_moving(void **state) {
  (void)state;
  for (int dxl = 1; dxl >= 0; dxl--) {
    const speed_run r = speed_test(dxl);
    const double quantum = 1.0 / r.window / r.unit; /* one tick over the window, in units */
    printf("%s: speed while turning within %.2f units of the true speed (one tick over the "
           "%.0f ms window: %.2f units); at rest half a window later %.0f, after it 0 in all "
           "but %d steps\n",
           dxl ? "XL430 Present Velocity" : "STS3215 Present Speed", r.moving_max_err,
           r.window * 1e3, quantum, r.rest_speed_at_half, r.rest_nonzero_after_window);
    assert_true(r.moving_max_err <= quantum + 0.5);
    assert_true(r.rest_speed_at_half != 0); /* the window, not the last step, measures it */
    assert_int_equal(r.rest_nonzero_after_window, 0);
  }
}

/* Homing Offset = +N: Present Position reads the encoder's ticks + N (e-manual: Present = Actual
 * + Homing Offset); in reverse mode (Drive Mode bit 0) the reading is mirrored about 2048 and
 * the torque reversed, so that the loop still holds its goal. */
static void test_homing_offset_and_reverse(void **state) {
  (void)state;
  servo_motor m;
  dxl_device d;
  servo_state s;
  dxl_setup(&m, &d, &s, DXL_MODEL_XL430_W250, 1);
  const double dt = 1e-3, angle = 0.25, ticks = 2048 + 0.25 * 4096 / TWO_PI; /* 2210.97 */
  const servo_feedback fb = {angle, 0};
  dxl_servo_step(&d, &s, &m, &fb, dt);
  assert_int_equal((int32_t)dxl_device_get(&d, DXL_PRESENT_POSITION, 4), lround(ticks));
  dxl_device_set(&d, DXL_HOMING_OFFSET, 4, 300);
  dxl_servo_step(&d, &s, &m, &fb, dt);
  assert_int_equal((int32_t)dxl_device_get(&d, DXL_PRESENT_POSITION, 4), lround(ticks) + 300);
  dxl_device_set(&d, DXL_HOMING_OFFSET, 4, (uint32_t)-300);
  dxl_servo_step(&d, &s, &m, &fb, dt);
  assert_int_equal((int32_t)dxl_device_get(&d, DXL_PRESENT_POSITION, 4), lround(ticks) - 300);
  /* reverse: 2048 - 163 - 300; a goal above the present position pushes the joint down */
  d.mem[DXL_DRIVE_MODE] = DXL_DRIVE_REVERSE;
  dxl_servo_step(&d, &s, &m, &fb, dt);
  const int32_t present = (int32_t)dxl_device_get(&d, DXL_PRESENT_POSITION, 4);
  assert_int_equal(present, 2 * 2048 - lround(ticks) - 300);
  dxl_device_set(&d, DXL_GOAL_POSITION, 4, (uint32_t)(present + 100));
  d.mem[DXL_TORQUE_ENABLE] = 1;
  dxl_servo_step(&d, &s, &m, &fb, dt);
  assert_true(dxl_servo_step(&d, &s, &m, &fb, dt) < 0);
}

/* An STS write of Torque Limit (48, two bytes) is taken and caps the drive: a large error drives
 * at the limit's share of the stall torque (0.1 % units). */
static void test_sts_torque_limit(void **state) {
  (void)state;
  servo_motor m;
  ft_device d;
  servo_state s;
  sts_setup(&m, &d, &s, 1);
  const servo_feedback fb = {0, 0};
  ft_servo_step(&d, &s, &m, &fb, 1e-3);
  const uint8_t limit[3] = {FT_TORQUE_LIMIT, 0x2C, 0x01}; /* 300: 30 % */
  ft_packet w;
  memset(&w, 0, sizeof w);
  w.id = 1, w.instruction = FT_WRITE, w.nparams = 3;
  memcpy(w.params, limit, 3);
  uint8_t out[64];
  assert_true(ft_device_handle(&d, &w, out, sizeof out) > 0);
  assert_int_equal(d.mem[FT_TORQUE_LIMIT] | (d.mem[FT_TORQUE_LIMIT + 1] << 8), 300);
  d.mem[FT_TORQUE_ENABLE] = 1;
  ft_device_set_signed(&d, FT_GOAL_POSITION, 15, 3000); /* 952 ticks away */
  ft_servo_step(&d, &s, &m, &fb, 1e-3);
  const double tau = ft_servo_step(&d, &s, &m, &fb, 1e-3);
  assert_double_equal(tau, 0.3 * m.stall_torque, 1e-9);
  assert_double_equal(s.pwm, 0.3, 1e-12);
}

/* A drive held at its limit for SERVO_OVERLOAD_S: Overload in Hardware Error Status, torque off
 * (Shutdown has bit 5 by default), the alert bit in every status; only REBOOT clears it. */
static void test_overload(void **state) {
  (void)state;
  servo_motor m;
  dxl_device d;
  servo_state s;
  dxl_setup(&m, &d, &s, DXL_MODEL_XL430_W250, 1);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_motor_line),
      cmocka_unit_test(test_profile_travel_time),
      cmocka_unit_test(test_velocity_estimate_and_presents),
      cmocka_unit_test(test_feetech_loop),
      cmocka_unit_test(test_overload),
      cmocka_unit_test(test_speed_window_and_moving),
      cmocka_unit_test(test_homing_offset_and_reverse),
      cmocka_unit_test(test_sts_torque_limit),
  };
  return cmocka_run_group_tests_name("servo_model", tests, NULL, NULL);
}
