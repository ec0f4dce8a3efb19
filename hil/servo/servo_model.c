/* hil/servo/servo_model.c: the servo firmware's control loop and the motor behind it. */
#include "hil/servo/servo_model.h"

#include <math.h>

#include "sim/servo_spec.h"

#define TICKS_PER_TURN 4096.0
#define TWO_PI 6.283185307179586

/* X-series units (e-manual) */
#define DXL_PWM_FULL 885.0             /* Goal/Present PWM: 885 = 100 % duty */
#define DXL_VEL_UNIT (0.229 / 60.0)     /* rev/s per unit of velocity (0.229 rpm) */
#define DXL_ACC_UNIT (214.577 / 3600.0) /* rev/s² per unit of profile acceleration */
#define DXL_CURRENT_UNIT 2.69e-3        /* A per unit of current (XM430) */
#define DXL_IN_POSITION_TICKS 10.0      /* moving status bit 0 window (our choice, see docs) */

int servo_motor_of_model(servo_motor *out, int model_number) {
  const char *name = model_number == DXL_MODEL_XL430_W250   ? "XL430-W250"
                     : model_number == DXL_MODEL_XM430_W350 ? "XM430-W350"
                     : model_number == FT_MODEL_STS3215     ? "STS3215"
                                                            : NULL;
  const sim_servo_spec *spec = sim_servo_spec_find(name);
  if (!spec) {
    return -1;
  }
  *out = (servo_motor){spec->stall_torque, spec->stall_current, spec->no_load_speed};
  return 0;
}

double servo_ticks(double angle_rad) { return 2048.0 + angle_rad * TICKS_PER_TURN / TWO_PI; }

static double clamp(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

double servo_estimate_velocity(servo_state *s, double ticks, double dt) {
  if (s->started) {
    const double raw = (ticks - s->prev_ticks) / dt;
    s->velocity += (raw - s->velocity) * dt / (SERVO_VELOCITY_FILTER_S + dt);
  }
  s->prev_ticks = ticks;
  return s->velocity;
}

/* The output follows a moving angle a hysteresis behind (floor or ceiling of the angle for one
 * tick of hysteresis), so that speeds read from it are steady; it holds while the angle stays
 * within the hysteresis of it. */
double servo_read_encoder(servo_state *s, double ticks) {
  const double lag = SERVO_ENCODER_HYSTERESIS - 0.5;
  if (s->continuous_encoder) {
    if (!s->have_held) {
      s->held = ticks, s->have_held = 1;
    } else if (ticks - s->held > lag) {
      s->held = ticks - lag;
    } else if (s->held - ticks > lag) {
      s->held = ticks + lag;
    }
    return s->held;
  }
  if (!s->have_held) {
    s->held = round(ticks), s->have_held = 1;
  } else if (ticks - s->held >= SERVO_ENCODER_HYSTERESIS) {
    s->held = round(ticks - lag);
  } else if (s->held - ticks >= SERVO_ENCODER_HYSTERESIS) {
    s->held = round(ticks + lag);
  }
  return s->held;
}

double servo_window_speed(servo_state *s, double window_s, double dt) {
  s->ring_at = (s->ring_at + 1) % SERVO_SPEED_RING;
  s->ring[s->ring_at] = (int32_t)s->held;
  s->ring_n += s->ring_n < SERVO_SPEED_RING;
  int back = (int)lround(window_s / dt);
  back = back < s->ring_n - 1 ? back : s->ring_n - 1;
  if (back < 1) {
    return 0;
  }
  const int32_t then = s->ring[(s->ring_at - back + SERVO_SPEED_RING) % SERVO_SPEED_RING];
  return (double)(s->ring[s->ring_at] - then) / (back * dt);
}

/* The winding settles within a step at these rates: i = I_stall·(u − ω/ω₀), the torque follows
 * the current (k_t = stall torque / stall current). */
double servo_motor_torque(const servo_motor *m, double duty, double velocity, double limit,
                          double *current) {
  const double i = clamp(m->stall_current * (duty - velocity / m->no_load_speed), -limit, limit);
  *current = i;
  return m->stall_torque * i / m->stall_current;
}

/* The profile generator: a trapezoid toward goal with at most vmax (ticks/s) and amax (ticks/s²);
 * 0 means unlimited, as the e-manual says of Profile Velocity and Profile Acceleration. */
static void profile_step(servo_state *s, double goal, double vmax, double amax, double dt) {
  if (vmax <= 0) {
    s->traj_pos = goal, s->traj_vel = 0;
    return;
  }
  const double remaining = goal - s->traj_pos;
  double want = remaining > 0 ? vmax : -vmax;
  if (amax > 0) {
    /* brake in time: the speed from which braking at amax, a step at a time, stops on the goal
     * (v² ≤ 2·a·distance of the continuous case, corrected for whole steps) */
    const double h = amax * dt;
    const double brake = h * (sqrt(0.25 + 2.0 * fabs(remaining) / (h * dt)) - 0.5);
    want = clamp(want, -brake, brake);
    s->traj_vel += clamp(want - s->traj_vel, -amax * dt, amax * dt);
  } else {
    s->traj_vel = want;
  }
  const double next = s->traj_pos + s->traj_vel * dt;
  if ((goal - next) * remaining <= 0) { /* reached or passed within this step */
    s->traj_pos = goal, s->traj_vel = 0;
  } else {
    s->traj_pos = next;
  }
}

/* table access by field */
static int32_t get_i32(const dxl_device *d, uint16_t a) { return (int32_t)dxl_device_get(d, a, 4); }
static int16_t get_i16(const dxl_device *d, uint16_t a) { return (int16_t)dxl_device_get(d, a, 2); }
static uint16_t get_u16(const dxl_device *d, uint16_t a) { return (uint16_t)dxl_device_get(d, a, 2); }

/* Power-on, reboot and torque-on: the loop starts from where the joint is. */
static void restart(dxl_device *d, servo_state *s, double present, int set_goal) {
  s->traj_pos = present, s->traj_vel = 0, s->integral = 0, s->prev_error = 0;
  s->saturated_s = 0;
  if (set_goal) { /* at power-on the goal is the present position, so the arm stays put */
    dxl_device_set(d, DXL_GOAL_POSITION, 4, (uint32_t)(int32_t)lround(present));
  }
}

/* Position modes: profile, then PID in ticks; returns PWM units. KPP = P/128, KPI = I/65536,
 * KPD = D/16 (e-manual), the integral and derivative taken per millisecond. */
static double position_loop(const dxl_device *d, servo_state *s, double present, double dt) {
  const double goal = get_i32(d, DXL_GOAL_POSITION);
  const double vmax = dxl_device_get(d, DXL_PROFILE_VELOCITY, 4) * DXL_VEL_UNIT * TICKS_PER_TURN;
  const double amax =
      dxl_device_get(d, DXL_PROFILE_ACCELERATION, 4) * DXL_ACC_UNIT * TICKS_PER_TURN;
  const double limit = get_u16(d, DXL_PWM_LIMIT);
  profile_step(s, goal, vmax, amax, dt);
  const double e = s->traj_pos - present, ms = dt * 1000.0;
  s->integral = clamp(s->integral + get_u16(d, DXL_POSITION_I_GAIN) / 65536.0 * e * ms, -limit,
                      limit);
  const double derivative = (e - s->prev_error) / ms;
  s->prev_error = e;
  return get_u16(d, DXL_POSITION_P_GAIN) / 128.0 * e + s->integral +
         get_u16(d, DXL_POSITION_D_GAIN) / 16.0 * derivative;
}

/* Velocity mode: goal ramped by the profile acceleration, PI in velocity units (0.229 rpm):
 * KVP = P/128, KVI = I/65536 per millisecond. */
static double velocity_loop(const dxl_device *d, servo_state *s, double present_units, double dt) {
  const double goal = (int32_t)dxl_device_get(d, DXL_GOAL_VELOCITY, 4);
  const double amax_units = dxl_device_get(d, DXL_PROFILE_ACCELERATION, 4) * DXL_ACC_UNIT /
                            DXL_VEL_UNIT; /* units of velocity per s */
  const double limit = get_u16(d, DXL_PWM_LIMIT);
  if (amax_units > 0) {
    s->traj_vel += clamp(goal - s->traj_vel, -amax_units * dt, amax_units * dt);
  } else {
    s->traj_vel = goal;
  }
  const double e = s->traj_vel - present_units;
  s->integral =
      clamp(s->integral + get_u16(d, 76) / 65536.0 * e * dt * 1000.0, -limit, limit);
  return get_u16(d, 78) / 128.0 * e + s->integral;
}

/* The current limit of the driver (A): the Current Limit field where the model has one, else
 * the stall current. */
static double current_limit(const dxl_device *d, const servo_motor *m) {
  if (d->model == DXL_MODEL_XM430_W350) {
    return fmin(get_u16(d, DXL_CURRENT_LIMIT) * DXL_CURRENT_UNIT, m->stall_current);
  }
  return m->stall_current;
}

static void write_presents(dxl_device *d, const servo_state *s, const servo_motor *m,
                           double present, double velocity_units) {
  dxl_device_set(d, DXL_PRESENT_POSITION, 4, (uint32_t)(int32_t)lround(present));
  dxl_device_set(d, DXL_PRESENT_VELOCITY, 4, (uint32_t)(int32_t)lround(velocity_units));
  dxl_device_set(d, DXL_PRESENT_PWM, 2, (uint32_t)(int16_t)lround(s->pwm * DXL_PWM_FULL));
  const double current = d->model == DXL_MODEL_XM430_W350
                             ? s->current / DXL_CURRENT_UNIT
                             : s->torque / m->stall_torque * 1000.0; /* XL: load, 0.1 % */
  dxl_device_set(d, DXL_PRESENT_CURRENT, 2, (uint32_t)(int16_t)lround(current));
  dxl_device_set(d, 136, 4, (uint32_t)(int32_t)lround(s->traj_vel / (DXL_VEL_UNIT * TICKS_PER_TURN)));
  dxl_device_set(d, 140, 4, (uint32_t)(int32_t)lround(s->traj_pos));
  dxl_device_set(d, 120, 2, (uint32_t)((long)s->ms % 32768));
  /* e-manual: Moving is 1 while |Present Velocity| > Moving Threshold, and always while a
   * position profile runs */
  const double threshold = dxl_device_get(d, 24, 4), goal = get_i32(d, DXL_GOAL_POSITION);
  const uint8_t mode = d->mem[DXL_OPERATING_MODE];
  const int position_mode = mode == DXL_MODE_POSITION || mode == DXL_MODE_EXTENDED_POSITION ||
                            mode == DXL_MODE_CURRENT_POSITION;
  const int profiling = position_mode && (s->traj_pos != goal || s->traj_vel != 0);
  d->mem[DXL_MOVING] = (uint8_t)(fabs(velocity_units) > threshold || profiling);
  const int in_position = !profiling && fabs(goal - present) <= DXL_IN_POSITION_TICKS;
  d->mem[DXL_MOVING_STATUS] = (uint8_t)(in_position | (profiling << 1));
}

/* The overload protection: after SERVO_OVERLOAD_S at the limit, the error bit; torque off when
 * Shutdown asks for it. The bit stays until a REBOOT, and torque with it. */
static void check_overload(dxl_device *d, servo_state *s, int at_limit, double dt) {
  s->saturated_s = at_limit ? s->saturated_s + dt : 0;
  if (s->saturated_s >= SERVO_OVERLOAD_S) {
    d->mem[DXL_HARDWARE_ERROR_STATUS] |= DXL_HW_OVERLOAD;
  }
  if (d->mem[DXL_HARDWARE_ERROR_STATUS] & d->mem[DXL_SHUTDOWN]) {
    d->mem[DXL_TORQUE_ENABLE] = 0;
  }
}

/* The position the X-series reports: the encoder's reading, mirrored about the centre (2048) in
 * reverse mode (Drive Mode bit 0), plus the Homing Offset (Present = Actual + Homing Offset). */
static double dxl_actual(const dxl_device *d, double sensed) {
  return (d->mem[DXL_DRIVE_MODE] & DXL_DRIVE_REVERSE) ? 2 * 2048.0 - sensed : sensed;
}

double dxl_servo_step(dxl_device *d, servo_state *s, const servo_motor *m,
                      const servo_feedback *fb, double dt) {
  const double sign = (d->mem[DXL_DRIVE_MODE] & DXL_DRIVE_REVERSE) ? -1.0 : 1.0;
  const double sensed = servo_read_encoder(s, servo_ticks(fb->position));
  const double present = dxl_actual(d, sensed) + get_i32(d, DXL_HOMING_OFFSET);
  const double velocity_units =
      servo_estimate_velocity(s, present, dt) / TICKS_PER_TURN / DXL_VEL_UNIT;
  const double reported = sign * servo_window_speed(s, SERVO_DXL_SPEED_WINDOW_S, dt) /
                          TICKS_PER_TURN / DXL_VEL_UNIT;
  const double w = sign * fb->true_velocity; /* the motor's speed, in its own direction */
  /* a hardware error that Shutdown names holds torque off until a REBOOT */
  const int torque_on = d->mem[DXL_TORQUE_ENABLE] != 0 &&
                        !(d->mem[DXL_HARDWARE_ERROR_STATUS] & d->mem[DXL_SHUTDOWN]);
  const uint8_t mode = d->mem[DXL_OPERATING_MODE];
  s->ms += dt * 1000.0;
  if (!s->started || s->reboots != d->reboots) {
    restart(d, s, present, 1);
    s->started = 1, s->reboots = d->reboots, s->torque_was_on = 0;
  }
  if (torque_on && !s->torque_was_on) {
    restart(d, s, present, 0);
  }
  s->torque_was_on = torque_on;
  double units = 0, limit = current_limit(d, m);
  const double pwm_limit = get_u16(d, DXL_PWM_LIMIT);
  switch (mode) {
  case DXL_MODE_POSITION:
  case DXL_MODE_EXTENDED_POSITION:
    units = position_loop(d, s, present, dt);
    break;
  case DXL_MODE_CURRENT_POSITION:
    units = position_loop(d, s, present, dt);
    limit = fmin(limit, fabs((double)get_i16(d, DXL_GOAL_CURRENT)) * DXL_CURRENT_UNIT);
    break;
  case DXL_MODE_VELOCITY:
    units = velocity_loop(d, s, velocity_units, dt);
    break;
  case DXL_MODE_CURRENT: { /* the driver's current loop is fast: the duty that gives the goal */
    const double want = get_i16(d, DXL_GOAL_CURRENT) * DXL_CURRENT_UNIT;
    units = (want / m->stall_current + w / m->no_load_speed) * DXL_PWM_FULL;
    break;
  }
  case DXL_MODE_PWM:
    units = get_i16(d, DXL_GOAL_PWM);
    break;
  default:
    units = 0;
  }
  s->pwm = torque_on ? clamp(units, -pwm_limit, pwm_limit) / DXL_PWM_FULL : 0;
  s->torque = torque_on ? servo_motor_torque(m, s->pwm, w, limit, &s->current) : 0;
  if (!torque_on) {
    s->current = 0;
  }
  /* at the limit: the current the drive can give at standstill (a stall), not a free spin at
   * full duty, whose current is small */
  const double stall = fmin(limit, pwm_limit / DXL_PWM_FULL * m->stall_current);
  check_overload(d, s, torque_on && fabs(s->current) >= 0.95 * stall, dt);
  write_presents(d, s, m, present, reported);
  return sign * s->torque;
}

/* --- Feetech STS ------------------------------------------------------------------------------ */

/* Our scalings of the STS gains (the manual gives none): position P·error(ticks) and
 * D·Δerror(ticks per ms) in 0.1 % duty; speed P/10·error(steps/s), I/10 per second. */
#define FT_DUTY_FULL 1000.0

static double ft_u16(const ft_device *d, uint8_t a) { return d->mem[a] | (d->mem[a + 1] << 8); }

static double ft_position_loop(ft_device *d, servo_state *s, double present, double dt) {
  const double lo = ft_u16(d, FT_MIN_POSITION_LIMIT), hi = ft_u16(d, FT_MAX_POSITION_LIMIT);
  const double goal = clamp(ft_device_get_signed(d, FT_GOAL_POSITION, 15), lo, hi);
  const double vmax = fabs((double)ft_device_get_signed(d, FT_GOAL_SPEED, 15));
  profile_step(s, goal, vmax, d->mem[FT_ACCELERATION] * 100.0, dt);
  const double e = s->traj_pos - present, ms = dt * 1000.0;
  s->integral = clamp(s->integral + d->mem[FT_I_GAIN] * e * ms / 1000.0, -FT_DUTY_FULL,
                      FT_DUTY_FULL);
  const double derivative = (e - s->prev_error) / ms;
  s->prev_error = e;
  return d->mem[FT_P_GAIN] * e + s->integral + d->mem[FT_D_GAIN] * derivative;
}

static double ft_speed_loop(ft_device *d, servo_state *s, double speed, double dt) {
  const double goal = ft_device_get_signed(d, FT_GOAL_SPEED, 15);
  const double amax = d->mem[FT_ACCELERATION] * 100.0;
  s->traj_vel = amax > 0 ? s->traj_vel + clamp(goal - s->traj_vel, -amax * dt, amax * dt) : goal;
  const double e = s->traj_vel - speed;
  s->integral = clamp(s->integral + d->mem[FT_SPEED_I_GAIN] / 10.0 * e * dt, -FT_DUTY_FULL,
                      FT_DUTY_FULL);
  return d->mem[FT_SPEED_P_GAIN] / 10.0 * e + s->integral;
}

/* The STS Offset (31): sign bit 11, bit 12 the magnitude's 2048 (Feetech's memory table). */
static double ft_offset(const ft_device *d) {
  const unsigned u = d->mem[FT_OFFSET] | (d->mem[FT_OFFSET + 1] << 8);
  const double magnitude = (u & 0x7FF) + ((u >> 12) & 1) * 2048.0;
  return (u >> 11) & 1 ? -magnitude : magnitude;
}

double ft_servo_step(ft_device *d, servo_state *s, const servo_motor *m, const servo_feedback *fb,
                     double dt) {
  /* Phase (18): bit 7 reverses the reading, bit 0 the drive, bit 4 reports every turn */
  const uint8_t phase = d->mem[FT_PHASE];
  const double sense = (phase & FT_PHASE_FEEDBACK_REVERSE) ? -1.0 : 1.0;
  const double drive = (phase & FT_PHASE_DRIVE_REVERSE) ? -1.0 : 1.0;
  const double sensed = servo_read_encoder(s, servo_ticks(fb->position));
  const double actual = sense > 0 ? sensed : TICKS_PER_TURN - sensed;
  const double ticks = actual - ft_offset(d); /* Present = Actual − Offset */
  const double present = (phase & FT_PHASE_MULTI_TURN)
                             ? ticks
                             : ticks - TICKS_PER_TURN * floor(ticks / TICKS_PER_TURN);
  const double speed = servo_estimate_velocity(s, ticks, dt); /* steps/s, for the speed loop */
  const double reported = sense * servo_window_speed(s, SERVO_FT_SPEED_WINDOW_S, dt);
  const double w = drive * fb->true_velocity; /* the motor's speed, in its own direction */
  const int torque_on = d->mem[FT_TORQUE_ENABLE] == 1;
  const int power_on = !s->started || s->reboots != d->reboots;
  if (power_on || (torque_on && !s->torque_was_on)) {
    s->traj_pos = present, s->traj_vel = 0, s->integral = 0, s->prev_error = 0;
    if (power_on) { /* the goal is where the joint is, so the arm stays put */
      ft_device_set_signed(d, FT_GOAL_POSITION, 15, (int32_t)lround(present));
      s->torque_was_on = 0;
    }
    s->started = 1, s->reboots = d->reboots;
  }
  s->torque_was_on = torque_on;
  double out = 0;
  switch (d->mem[FT_OPERATING_MODE]) {
  case 0:
    out = ft_position_loop(d, s, present, dt);
    break;
  case 1:
    out = ft_speed_loop(d, s, speed, dt);
    break;
  case 2:
    out = ft_device_get_signed(d, FT_GOAL_TIME, 10);
    break;
  default:
    out = 0;
  }
  const double limit = fmin(ft_u16(d, FT_TORQUE_LIMIT), ft_u16(d, FT_MAX_TORQUE));
  s->pwm = torque_on ? clamp(out, -limit, limit) / FT_DUTY_FULL : 0;
  s->torque = torque_on ? servo_motor_torque(m, s->pwm, w, m->stall_current, &s->current) : 0;
  if (!torque_on) {
    s->current = 0;
  }
  ft_device_set_signed(d, FT_PRESENT_POSITION, 15, (int32_t)lround(present));
  ft_device_set_signed(d, FT_PRESENT_SPEED, 15, (int32_t)lround(reported));
  ft_device_set_signed(d, FT_PRESENT_LOAD, 10, (int32_t)lround(s->torque / m->stall_torque * 1000));
  const long ma = lround(fabs(s->current) / 6.5e-3);
  d->mem[FT_PRESENT_CURRENT] = (uint8_t)ma, d->mem[FT_PRESENT_CURRENT + 1] = (uint8_t)(ma >> 8);
  /* Moving: the servo turns (its measured speed is not 0) or its profile runs */
  const int profiling = s->traj_vel != 0;
  d->mem[FT_MOVING] = (uint8_t)(lround(reported) != 0 || profiling);
  return drive * s->torque;
}
