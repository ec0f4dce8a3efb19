/* sim/actuator.c: actuator forces from commands, and the DC motor's electrical state. */
#include "sim/actuator_crank.h"
#include "sim/sim.h"

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

/* the force of actuator `index` at its transmission's position q and rate qd (a joint's, or a
 * slider-crank's length and its rate) */
static double actuator_force(const sim_actuator *a, sim_data *d, int index, double q, double qd) {
  double ctrl = command(a, d->ctrl[index]), force = 0;
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
    force = a->kp * (ctrl - q) - a->kd * qd;
    break;
  case SIM_ACT_VELOCITY_SERVO:
    force = a->kv * (ctrl - qd);
    break;
  }
  return a->force_limit > 0 ? clamp(force, -a->force_limit, a->force_limit) : force;
}

void sim_actuate(const sim_model *m, sim_data *d) {
  memset(d->qfrc_actuator, 0, (size_t)m->nv * sizeof(double));
  for (int i = 0; i < m->nu; i++) {
    const sim_actuator *a = &m->actuators[i];
    if (a->crank_site >= 0 || a->adhesion_body >= 0) { /* qfrc += moment·force */
      double length = 0, rate = 0; /* an adhesive's: 0, as MuJoCo's */
      if (a->crank_site >= 0) {
        sim__crank_transmission(m, d, i, &length, &rate);
      } else {
        sim__adhesion_transmission(m, d, i);
      }
      const double f = d->actuator_force[i] = actuator_force(a, d, i, length, rate);
      const double *moment = d->trn_moment + (size_t)i * m->nv;
      for (int k = 0; k < m->nv; k++) {
        d->qfrc_actuator[k] += moment[k] * f;
      }
      continue;
    }
    d->actuator_force[i] = actuator_force(a, d, i, d->qpos[a->qposadr], d->qvel[a->dof]);
    d->qfrc_actuator[a->dof] += d->actuator_force[i];
  }
}

/* The winding L·di/dt = V − R·i − ke·ω is linear in i: with V and ω held over the step its
 * exact solution relaxes toward the steady current with time constant L/R, so any step is
 * stable however small the inductance. */
void sim_actuator_advance(const sim_model *m, sim_data *d, double h) {
  for (int i = 0; i < m->nu; i++) {
    const sim_actuator *a = &m->actuators[i];
    if (a->actadr < 0) {
      continue;
    }
    double steady = dc_steady_current(a, dc_voltage(a, command(a, d->ctrl[i])), d->qvel[a->dof]);
    double decay = exp(-h * a->resistance / a->inductance);
    double current = steady + (d->act[a->actadr] - steady) * decay;
    d->act[a->actadr] = clamp(current, -a->current_limit, a->current_limit);
  }
}
