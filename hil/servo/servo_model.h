/* hil/servo/servo_model.h: what happens inside one smart servo between two bus packets: the
 * firmware's control loop (profile generator, position PID in ticks, velocity PI, current and
 * PWM modes) and the motor behind it (a DC motor with a gearbox, from the datasheet's stall
 * torque, stall current and no-load speed), producing the joint torque for the next physics step
 * and the "present" fields of the control table.
 *
 * The loop runs once per physics step, reading goals from the device's table and writing its
 * present position, velocity, current (or load), PWM, moving and moving status. Units and gain
 * scalings are the e-manual's where it gives them (docs/servo-bus.md lists them).
 *
 * Plain data: no allocation, no I/O.
 */
#ifndef ACHILLES_HIL_SERVO_SERVO_MODEL_H
#define ACHILLES_HIL_SERVO_SERVO_MODEL_H

#include "hil/servo/dxl_device.h"
#include "hil/servo/ft_device.h"

/* The motor and gearbox as the datasheet gives them, at the joint, at the supply voltage. */
typedef struct servo_motor {
  double stall_torque;  /* N·m */
  double stall_current; /* A */
  double no_load_speed; /* rad/s */
} servo_motor;

/* The datasheet figures of a model at 12 V (XL430-W250, XM430-W350) or 7.4 V (STS3215), from
 * sim/servo_spec.h (the gearbox's inertia and friction are the joint's, added at load); 0, or
 * -1 for an unknown model number. */
int servo_motor_of_model(servo_motor *out, int model_number);

/* The joint this step: its angle as the servo's position sensor measures it (rad), and its true
 * speed (rad/s) for the motor's back-EMF. Like the firmware, the loop has no speed sensor: it
 * estimates the speed from successive positions (SERVO_VELOCITY_FILTER_S). */
typedef struct servo_feedback {
  double position;
  double true_velocity;
} servo_feedback;

/* Time constant of the estimate the firmware's velocity loops use: a first-order low-pass of
 * the position's differences (our choice; a 4096-tick sensor read each millisecond moves in
 * steps of 1.5 rad/s otherwise). */
#define SERVO_VELOCITY_FILTER_S 0.01

/* The speed the registers report (Present Velocity, Present Speed) is the position change over
 * a sliding window, as a firmware measures it: 64 ms for the X-series, so that one tick over the
 * window is one unit (0.229 rpm), 20 ms for the STS (one tick: 50 steps/s). Neither manual
 * gives its window; these are ours. */
#define SERVO_DXL_SPEED_WINDOW_S 0.064
#define SERVO_FT_SPEED_WINDOW_S 0.020
#define SERVO_SPEED_RING 1024 /* readings kept: the window at rates up to 16 kHz */

/* The magnetic encoder's hysteresis (the AS5600/AS5601 family's, ticks): its output moves only
 * when the angle has moved this far from it, so a joint at rest within a tick reads steady. */
#define SERVO_ENCODER_HYSTERESIS 1.0

/* Overload: the motor current at 95 % or more of what the drive gives at standstill (the
 * current limit, or the PWM limit's share of the stall current) this long without a break sets
 * the Overload bit of Hardware Error Status; when Shutdown has that bit, torque goes off until
 * a REBOOT. The e-manual gives neither figure; these are our choice. */
#define SERVO_OVERLOAD_S 1.0
#define DXL_HW_OVERLOAD 0x20

/* The loop's memory between steps (zeroed = just powered on). */
typedef struct servo_state {
  int started;           /* the goal was set to the present position at power-on */
  int torque_was_on;
  unsigned long reboots; /* the device's count when the loop last started over */
  double traj_pos;       /* profile generator: the position it commands, ticks */
  double traj_vel;       /* ticks/s */
  double integral;       /* PID integrator, PWM units */
  double prev_error;     /* ticks, for the D term */
  double prev_ticks;     /* the position sensor's last reading, ticks */
  double velocity;       /* the loops' speed estimate, ticks/s */
  double held;           /* the encoder's output, ticks (its hysteresis holds it at rest) */
  int have_held;
  int continuous_encoder; /* 0 (the bus, and sysid's fit): whole ticks as above; 1 (the
                             Jacobian check of sysid/servo_loop.c): the same hysteresis without
                             the rounding, the output a continuous play of
                             SERVO_ENCODER_HYSTERESIS − 0.5 ticks behind the angle (the rounded
                             output's mean), so that the loop's torque is a smooth function of
                             the joint's state */
  int32_t ring[SERVO_SPEED_RING]; /* the encoder's outputs, one per step, newest at ring_at */
  int ring_n, ring_at;
  double ms;             /* the realtime tick, ms */
  double saturated_s;    /* how long the drive has been at its limit */
  /* what the motor does over the next step */
  double pwm;            /* duty, -1 .. 1 */
  double current;        /* A */
  double torque;         /* N·m at the joint */
} servo_state;

/* Ticks of a joint angle: 4096 a turn, 2048 at angle 0 (the servo's centre). */
double servo_ticks(double angle_rad);
/* The firmware's speed estimate after a new position reading (ticks), in ticks/s. */
double servo_estimate_velocity(servo_state *s, double ticks, double dt);
/* The encoder's output for a joint at `ticks` (continuous): whole ticks, with hysteresis. */
double servo_read_encoder(servo_state *s, double ticks);
/* The reading's change over the last window_s (as far as the ring reaches), ticks/s; call once
 * a step after servo_read_encoder. */
double servo_window_speed(servo_state *s, double window_s, double dt);
/* Joint torque of the DC motor at duty u and joint speed w, the current within ±limit (A). */
double servo_motor_torque(const servo_motor *m, double duty, double velocity, double limit,
                          double *current);

/* One step of a Dynamixel X-series servo: reads goals from d, writes presents into d, returns
 * the joint torque (N·m) for the next dt seconds (0 while torque is off). */
double dxl_servo_step(dxl_device *d, servo_state *s, const servo_motor *m,
                      const servo_feedback *fb, double dt);

/* The same for a Feetech STS servo (modes 0 position, 1 constant speed, 2 PWM; mode 3, step,
 * holds no torque). */
double ft_servo_step(ft_device *d, servo_state *s, const servo_motor *m, const servo_feedback *fb,
                     double dt);

#endif
