/* sim/actuator.c: actuator forces from commands, and the DC motor's electrical state. */
#include "sim/muscle.h"
#include "sim/tendon.h"

#include <math.h>
#include <string.h>

static double clamp(double x, double lo, double hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

/* A non-finite command never reaches the dynamics: the HIL intake rejects and counts it
 * earlier, and here it reads as zero so that library users get a finite simulation too. */
static double command(const sim_actuator *a, double ctrl) {
  return isfinite(ctrl) ? clamp(ctrl, a->ctrlrange[0], a->ctrlrange[1]) : 0.0;
}

static double dc_voltage(const sim_actuator *a, double ctrl) {
  return a->dc_input_voltage ? ctrl : ctrl * a->supply_voltage;
}

/* Current that the winding settles to at motor speed ω: (V − ke·ω)/R, within the driver limit. */
static double dc_steady_current(const sim_actuator *a, double voltage, double joint_velocity) {
  double omega = a->gear * joint_velocity;
  double current = (voltage - a->ke * omega) / a->resistance;
  return clamp(current, -a->current_limit, a->current_limit);
}

static double dc_current(const sim_actuator *a, const sim_data *d, double ctrl) {
  if (a->actadr >= 0) {
    return d->act[a->actadr];
  }
  return dc_steady_current(a, dc_voltage(a, ctrl), d->qvel[a->dof]);
}

/* The force of a muscle along its tendon or joint: gain·act + bias (sim/muscle.h); negative, a
 * muscle pulls. */
static double muscle_force(const sim_actuator *a, const sim_data *d, int index) {
  const double len = d->actuator_length[index], vel = d->actuator_velocity[index];
  return sim__muscle_gain(&a->muscle, len, vel, a->lengthrange, a->acc0) * d->act[a->actadr] +
         sim__muscle_bias(&a->muscle, len, a->lengthrange, a->acc0);
}

/* The scale of a transmission: a muscle's gear (MuJoCo's: length gear·L, moment gear·J); the
 * other types apply their gear to the force itself (gear·ctrl) or have none */
static double transmission_gear(const sim_actuator *a) {
  return a->type == SIM_ACT_MUSCLE ? a->gear : 1.0;
}

/* The transmission's length and rate: the joint's position and velocity, or the tendon's */
static void transmission(const sim_actuator *a, sim_data *d, int index) {
  const double g = transmission_gear(a);
  if (a->tendon >= 0) {
    d->actuator_length[index] = g * d->ten_length[a->tendon];
    d->actuator_velocity[index] = g * d->ten_velocity[a->tendon];
  } else {
    d->actuator_length[index] = g * d->qpos[a->qposadr];
    d->actuator_velocity[index] = g * d->qvel[a->dof];
  }
}

static double actuator_force(const sim_actuator *a, sim_data *d, int index) {
  double ctrl = command(a, d->ctrl[index]), qd = d->actuator_velocity[index], force = 0;
  d->actuator_current[index] = 0;
  switch (a->type) {
  case SIM_ACT_SMART_SERVO: /* gear 1: the servo's model already gives the joint torque */
    return a->gear * ctrl;
  case SIM_ACT_MOTOR:
    force = a->gear * ctrl;
    break;
  case SIM_ACT_DC_MOTOR:
    d->actuator_current[index] = dc_current(a, d, ctrl);
    force = a->kt * d->actuator_current[index] * a->gear * a->efficiency;
    break;
  case SIM_ACT_POSITION_SERVO:
    force = a->kp * (ctrl - d->actuator_length[index]) - a->kd * qd;
    break;
  case SIM_ACT_VELOCITY_SERVO:
    force = a->kv * (ctrl - qd);
    break;
  case SIM_ACT_MUSCLE:
    force = muscle_force(a, d, index);
    d->act_dot[a->actadr] = sim__muscle_dynamics(&a->muscle, ctrl, d->act[a->actadr]);
    break;
  }
  return a->force_limit > 0 ? clamp(force, -a->force_limit, a->force_limit) : force;
}

/* A tendon's actuator pulls along it: qfrc += ten_J·force (MuJoCo's moment·force). */
void sim_actuate(const sim_model *m, sim_data *d) {
  memset(d->qfrc_actuator, 0, (size_t)m->nv * sizeof(double));
  for (int i = 0; i < m->nu; i++) {
    const sim_actuator *a = &m->actuators[i];
    transmission(a, d, i);
    d->actuator_force[i] = actuator_force(a, d, i);
    if (m->opt.disable & SIM_DISABLE_ACTUATION) {
      continue;
    }
    if (a->tendon < 0) {
      d->qfrc_actuator[a->dof] += transmission_gear(a) * d->actuator_force[i];
      continue;
    }
    const double *J = d->ten_J + (size_t)a->tendon * m->nv;
    const double f = transmission_gear(a) * d->actuator_force[i];
    for (int k = 0; k < m->nv; k++) {
      d->qfrc_actuator[k] += J[k] * f;
    }
  }
}

void sim__actuator_moment(const sim_model *m, const sim_data *d, int a, double *out) {
  const sim_actuator *act = &m->actuators[a];
  const double g = transmission_gear(act);
  if (act->tendon >= 0) {
    const double *J = d->ten_J + (size_t)act->tendon * m->nv;
    for (int k = 0; k < m->nv; k++) {
      out[k] = g * J[k];
    }
  } else {
    memset(out, 0, (size_t)m->nv * sizeof(double));
    out[act->dof] = g;
  }
}

double sim__actuator_length(const sim_actuator *a, const sim_data *d) {
  const double L = a->tendon >= 0 ? d->ten_length[a->tendon] : d->qpos[a->qposadr];
  return transmission_gear(a) * L;
}

/* The winding L·di/dt = V − R·i − ke·ω is linear in i: with V and ω held over the step its
 * exact solution relaxes toward the steady current with time constant L/R, so any step is
 * stable however small the inductance. */
void sim_actuator_advance(const sim_model *m, sim_data *d, double h) {
  for (int i = 0; i < m->nu; i++) {
    const sim_actuator *a = &m->actuators[i];
    if (a->actadr < 0 || a->type != SIM_ACT_DC_MOTOR) { /* a muscle's act: the integrator's */
      continue;
    }
    double steady = dc_steady_current(a, dc_voltage(a, command(a, d->ctrl[i])), d->qvel[a->dof]);
    double decay = exp(-h * a->resistance / a->inductance);
    double current = steady + (d->act[a->actadr] - steady) * decay;
    d->act[a->actadr] = clamp(current, -a->current_limit, a->current_limit);
  }
}
