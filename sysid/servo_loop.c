/* sysid/servo_loop.c: smart servos driven by their Goal Position inside the fit (servo_loop.h).
 *
 * The forward value is hil/servo's dxl_servo_step itself, the bus's code, its 12-bit encoder
 * with hysteresis included: on tests/sysid/test_servo.c's arm the XL430s' large D gain turns the
 * encoder's whole ticks into torque spikes whose mean a smooth encoder does not have (a loop
 * with the rounding left out fits their gear friction 8–9 % off, with it within 3 %). The
 * derivative takes the rounding as the identity (the encoder's output follows the joint while it
 * moves, holds while the hysteresis holds it) and follows the position mode's pieces
 * (hil/servo/servo_model.c), per step:
 *   held  = encoder(ticks(q))       ∂held = K·∂q when the output moved, else unchanged
 *   e     = traj − held             (traj: the profile toward the goal, no function of the state)
 *   I     = clamp(I + Ki·e·ms)      u = Kp·e + I + Kd·(e − e_prev)/ms
 *   pwm   = clamp(u)/885            i = clamp(I_stall·(pwm − q̇/ω₀))      τ = k_t·i
 * with K = 4096/2π ticks a radian, Kp = P/128, Ki = I/65536, Kd = D/16 (the e-manual's scalings).
 */
#include "sysid/servo_loop.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hil/servo/servo_model.h"

#define TICKS_PER_RAD (4096.0 / 6.283185307179586)
#define PWM_FULL 885.0 /* the X-series' Goal/Present PWM for 100 % duty */
#define SYSID_SERVO_REST_SPEED 0.05 /* rad/s: below it a window starts with the encoder's lag fading */

struct sysid_servo_loop {
  int a;                 /* series actuator */
  int act, dof;          /* model actuator, its joint's dof */
  int present;           /* the series' readings of its joint are its Present Position */
  double sensor_step;    /* rad, the joint encoder's resolution in front of the servo's (0: none) */
  int logged;            /* the loop reads the logged readings (sysid_servo.feedback_logged) */
  int jy;                /* the series joint of its joint, or -1 */
  dxl_device dev;        /* the control table, at the model's defaults, torque on */
  servo_state st;
  servo_motor mot;
  double *dH, *dE, *dI, *dT; /* nx + np: ∂held, ∂e_prev, ∂integral (ticks, PWM units), ∂τ */
};

int sysid__servo_setup(sysid_problem *p, char *err, size_t err_sz) {
  const sysid_options *o = &p->o;
  p->nsl = 0;
  if (o->nservo <= 0 || !o->servo) {
    p->o.servo = NULL, p->o.nservo = 0;
    return 0;
  }
  const sim_model *m = p->m;
  p->sl = calloc((size_t)o->nservo, sizeof *p->sl);
  size_t n = (size_t)p->nx + (size_t)p->np;
  if (!p->sl) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  for (int i = 0; i < o->nservo; i++) {
    const sysid_servo *sv = &o->servo[i];
    struct sysid_servo_loop *L = &p->sl[p->nsl];
    int act = sim_model_actuator(m, sv->actuator), a = -1;
    for (int k = 0; k < p->na && act >= 0; k++) {
      a = p->act[k] == act ? k : a;
    }
    if (a < 0) {
      snprintf(err, err_sz, "servo '%s': not an actuator of the series (its inputs: the goals)",
               sv->actuator);
      return -1;
    }
    if (m->actuators[act].type != SIM_ACT_SMART_SERVO) {
      snprintf(err, err_sz, "servo '%s': actuator of model '%s' is not of type servo",
               sv->actuator, m->name);
      return -1;
    }
    if (sysid__servo_has(p, a)) {
      snprintf(err, err_sz, "servo '%s': named twice", sv->actuator);
      return -1;
    }
    if (servo_motor_of_model(&L->mot, sv->model) < 0 ||
        dxl_device_init(&L->dev, (dxl_model)sv->model, 1) < 0) {
      snprintf(err, err_sz,
               "servo '%s': model number %d is not a Dynamixel X-series servo Achilles models "
               "(1060 XL430-W250, 1020 XM430-W350)",
               sv->actuator, sv->model);
      return -1;
    }
    L->dev.mem[DXL_TORQUE_ENABLE] = 1;
    L->a = a, L->act = act, L->dof = m->actuators[act].dof;
    L->present = !sv->joint_sensor && !sv->feedback_logged;
    L->logged = sv->feedback_logged, L->jy = -1;
    for (int j = 0; j < p->nj; j++) {
      L->jy = p->jdof[j] == L->dof ? j : L->jy;
    }
    L->sensor_step = sv->sensor_step > 0 ? sv->sensor_step : 0;
    L->dH = calloc(4 * n, sizeof(double));
    if (!L->dH) {
      snprintf(err, err_sz, "out of memory");
      return -1;
    }
    L->dE = L->dH + n, L->dI = L->dE + n, L->dT = L->dI + n;
    p->nsl++;
  }
  size_t nx = (size_t)p->nx;
  p->A = malloc(nx * nx * sizeof(double));
  p->B = malloc(nx * (size_t)m->nu * sizeof(double) + 1);
  p->P = malloc(nx * (size_t)p->np * sizeof(double) + 1);
  p->Sn = malloc(nx * n * sizeof(double));
  if (!p->A || !p->B || !p->P || !p->Sn) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  p->o.servo = NULL; /* the caller's array: not kept */
  return 0;
}

void sysid__servo_free(sysid_problem *p) {
  for (int i = 0; p->sl && i < p->nsl; i++) {
    free(p->sl[i].dH);
  }
  free(p->sl);
  free(p->A), free(p->B), free(p->P), free(p->Sn);
  p->sl = NULL, p->nsl = 0;
}

int sysid__servo_has(const sysid_problem *p, int a) {
  for (int i = 0; i < p->nsl; i++) {
    if (p->sl[i].a == a) {
      return 1;
    }
  }
  return 0;
}

/* the joint's angle as the servo's position sensor gives it: rounded to the joint encoder's
   resolution when it reads one (left whole for the smooth variant) */
static double sensed(const sysid_problem *p, const struct sysid_servo_loop *L, double q) {
  return L->sensor_step > 0 && !p->servo_smooth ? L->sensor_step * round(q / L->sensor_step) : q;
}

static void axpy(double *y, double a, const double *x, size_t n) {
  for (size_t c = 0; c < n; c++) {
    y[c] += a * x[c];
  }
}

/* With feedback_logged: the joint's logged reading (rad, as the series holds it: what the bus fed
 * the servo) at sample row i when that row is at time tau (a sample of that very step); 1 when
 * there is one. */
static int logged_reading(const sysid_problem *p, const struct sysid_servo_loop *L, int i,
                          double tau, double *y) {
  const double h = p->m->opt.timestep;
  if (!L->logged || L->jy < 0 || i < 0 || fabs(p->t[i] - tau) > 1e-6 * h) {
    return 0;
  }
  *y = p->y[(size_t)i * p->nj + L->jy];
  return isfinite(*y);
}

/* the loop at the window's start: powered and torque on long ago, the encoder's play settled
 * behind a moving joint, the previous error one step of the joint's speed back; with
 * feedback_logged, the encoder's output and the previous error from the log where it has them */
static void start(sysid_problem *p, struct sysid_servo_loop *L, double goal, int is, int jac) {
  const sim_data *d = p->d;
  const int nv = p->m->nv;
  const size_t n = (size_t)p->nx + (size_t)p->np;
  const double h = p->m->opt.timestep, q = d->qpos[p->m->actuators[L->act].qposadr];
  /* behind a rounding sensor the servo's encoder jumps a whole tick with it: no lag */
  const double v = d->qvel[L->dof];
  const double lag = L->sensor_step > 0 && !p->servo_smooth ? 0 : SERVO_ENCODER_HYSTERESIS - 0.5;
  memset(&L->st, 0, sizeof L->st);
  L->dev.mem[DXL_HARDWARE_ERROR_STATUS] = 0;
  L->st.started = 1, L->st.reboots = L->dev.reboots, L->st.torque_was_on = 1;
  L->st.continuous_encoder = p->servo_smooth, L->st.have_held = 1;
  /* the encoder's settled lag behind a moving joint, smoothly to none at rest (a function of
     the window's state the Jacobian can follow) */
  const double th = tanh(v / SYSID_SERVO_REST_SPEED);
  L->st.held = servo_ticks(sensed(p, L, q)) - lag * th;
  if (!p->servo_smooth) {
    L->st.held = round(L->st.held);
  }
  double y, yp;
  const int held_logged = logged_reading(p, L, is, d->time, &y);
  const int prev_logged = held_logged && logged_reading(p, L, is - 1, d->time - h, &yp);
  if (held_logged) { /* the reading the servo had: data */
    L->st.held = round(servo_ticks(y));
  }
  L->st.traj_pos = goal;
  L->st.prev_ticks = L->st.held;
  L->st.prev_error = goal - (L->st.held - TICKS_PER_RAD * v * h);
  if (prev_logged) { /* the step before's goal and reading: a goal written at this step kicks */
    L->st.prev_error = (double)lround(servo_ticks(p->u[(size_t)(is - 1) * p->na + L->a])) -
                       round(servo_ticks(yp));
  }
  if (jac) {
    const double *Sq = p->S + (size_t)L->dof * n, *Sv = p->S + (size_t)(nv + L->dof) * n;
    memset(L->dH, 0, 3 * n * sizeof(double));
    if (!held_logged) {
      axpy(L->dH, TICKS_PER_RAD, Sq, n);
      axpy(L->dH, -lag * (1 - th * th) / SYSID_SERVO_REST_SPEED, Sv, n);
    }
    if (!prev_logged) {
      axpy(L->dE, -1.0, L->dH, n);
      axpy(L->dE, TICKS_PER_RAD * h, Sv, n);
    }
  }
}

/* ∂τ of the step just taken, from the loop's state before it (held0, e0, i0) and after */
static void torque_rows(sysid_problem *p, struct sysid_servo_loop *L, double held0, double e0,
                        double i0, int logged) {
  const int nv = p->m->nv;
  const size_t n = (size_t)p->nx + (size_t)p->np;
  const double *Sq = p->S + (size_t)L->dof * n, *Sv = p->S + (size_t)(nv + L->dof) * n;
  const double h = p->m->opt.timestep, ms = h * 1000.0, v = p->d->qvel[L->dof];
  const dxl_device *dv = &L->dev;
  const double kp = dxl_device_get(dv, DXL_POSITION_P_GAIN, 2) / 128.0;
  const double ki = dxl_device_get(dv, DXL_POSITION_I_GAIN, 2) / 65536.0;
  const double kd = dxl_device_get(dv, DXL_POSITION_D_GAIN, 2) / 16.0;
  const double lim = dxl_device_get(dv, DXL_PWM_LIMIT, 2);
  const servo_state *s = &L->st;
  if (logged) { /* the encoder read the log: no function of the state */
    memset(L->dH, 0, n * sizeof(double));
  } else if (s->held != held0) { /* the play moved with the joint */
    memset(L->dH, 0, n * sizeof(double));
    axpy(L->dH, TICKS_PER_RAD, Sq, n);
  }
  const double e = s->traj_pos - s->held;
  const int isat = fabs(i0 + ki * e * ms) > lim;
  const double u = kp * e + s->integral + kd * (e - e0) / ms;
  const int usat = fabs(u) > lim;
  const double iraw = L->mot.stall_current * (s->pwm - v / L->mot.no_load_speed);
  const int csat = iraw != s->current;
  const double kt = L->mot.stall_torque / L->mot.stall_current;
  for (size_t c = 0; c < n; c++) {
    const double de = -L->dH[c];
    L->dI[c] = isat ? 0 : L->dI[c] + ki * ms * de;
    const double du = kp * de + L->dI[c] + kd * (de - L->dE[c]) / ms;
    L->dE[c] = de;
    const double dpwm = usat ? 0 : du / PWM_FULL;
    L->dT[c] = csat ? 0 : kt * L->mot.stall_current * (dpwm - Sv[c] / L->mot.no_load_speed);
  }
}

void sysid__servo_ctrl(sysid_problem *p, int is, int jac) {
  sim_data *d = p->d;
  const double h = p->m->opt.timestep;
  for (int i = 0; i < p->nsl; i++) {
    struct sysid_servo_loop *L = &p->sl[i];
    /* the register holds whole ticks */
    const double goal = (double)lround(servo_ticks(p->u[(size_t)is * p->na + L->a]));
    dxl_device_set(&L->dev, DXL_GOAL_POSITION, 4, (uint32_t)(int32_t)goal);
    const double held0 = L->st.held, e0 = L->st.prev_error, i0 = L->st.integral;
    double y;
    const int logged = logged_reading(p, L, is, d->time, &y);
    const servo_feedback fb = {
        logged ? y : sensed(p, L, d->qpos[p->m->actuators[L->act].qposadr]), d->qvel[L->dof]};
    d->ctrl[L->act] = dxl_servo_step(&L->dev, &L->st, &L->mot, &fb, h);
    if (jac) {
      torque_rows(p, L, held0, e0, i0, logged);
    }
  }
}

void sysid__servo_start(sysid_problem *p, int is, int jac) {
  for (int i = 0; i < p->nsl; i++) {
    struct sysid_servo_loop *L = &p->sl[i];
    start(p, L, (double)lround(servo_ticks(p->u[(size_t)is * p->na + L->a])), is, jac);
  }
}

int sysid__servo_reading(sysid_problem *p, int j, double *q, double *dq) {
  for (int i = 0; i < p->nsl; i++) {
    struct sysid_servo_loop *L = &p->sl[i];
    if (L->dof != p->jdof[j] || !L->present) {
      continue;
    }
    /* what the encoder reads at this state: its next reading (the play, idempotent), on a copy
       of the loop's state */
    servo_state s = L->st;
    const double held = servo_read_encoder(&s, servo_ticks(sensed(p, L, p->d->qpos[p->jqpos[j]])));
    *q = (held - 2048.0) / TICKS_PER_RAD;
    if (dq) {
      const size_t n = (size_t)p->nx + (size_t)p->np;
      const double *Sq = p->S + (size_t)L->dof * n;
      const int moved = held != L->st.held;
      for (size_t c = 0; c < n; c++) {
        dq[c] = moved ? Sq[c] : L->dH[c] / TICKS_PER_RAD;
      }
    }
    return 1;
  }
  return 0;
}

int sysid__servo_step(sysid_problem *p, int jac) {
  const sim_model *m = p->m;
  if (!jac) {
    sim_step(m, p->d);
    return SIM_DERIV_OK;
  }
  if (!p->nsl) {
    return sim_deriv_sensitivity_step(m, p->d, p->w, p->S);
  }
  int rc = sim_deriv_step(m, p->d, p->w, p->A, p->B, p->P);
  if (rc != SIM_DERIV_OK) {
    return rc;
  }
  const int nx = p->nx, nu = m->nu;
  const size_t n = (size_t)nx + (size_t)p->np;
  for (int r = 0; r < nx; r++) { /* row r of A·S + [0 | P] + B·∂τ */
    double *out = p->Sn + (size_t)r * n;
    memset(out, 0, (size_t)nx * sizeof(double));
    memcpy(out + nx, p->P + (size_t)r * p->np, (size_t)p->np * sizeof(double));
    for (int j = 0; j < nx; j++) {
      const double a = p->A[(size_t)r * nx + j];
      if (a != 0) {
        axpy(out, a, p->S + (size_t)j * n, n);
      }
    }
    for (int i = 0; i < p->nsl; i++) {
      const double b = p->B[(size_t)r * nu + p->sl[i].act];
      if (b != 0) {
        axpy(out, b, p->sl[i].dT, n);
      }
    }
  }
  memcpy(p->S, p->Sn, (size_t)nx * n * sizeof(double));
  return SIM_DERIV_OK;
}
