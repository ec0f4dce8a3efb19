/* sensors/torque.c: joint torque or motor current from the generalized force on a dof.
 *
 * The source array is chosen by the set (sens_set_torque_source; the HIL runtime points it at
 * the actuators' generalized forces). With a torque constant kt (N·m/A) and gear ratio N the
 * channel is the motor current τ / (N·kt), in A. A sensor on a DC motor actuator instead reads
 * the winding current the motor model computes (back-EMF, inductance, current limit included).
 */
#include "sensors/sensors.h"

#include "sensors/chain_internal.h"

void sens_torque_truth(const sens_sensor *s, const sim_data *d, const double *qfrc,
                       double *truth) {
  const sens_torque *t = &s->u.trq;
  if (t->actuator >= 0) {
    truth[0] = d->actuator_current[t->actuator];
    return;
  }
  const double tau = qfrc[t->dofadr];
  truth[0] = t->torque_constant > 0.0 ? tau / (t->gear_ratio * t->torque_constant) : tau;
}

void sens_torque_measure(sens_sensor *s, const double *truth, double *meas) {
  meas[0] = sens__chain_step(&s->chain[0], truth[0], &s->events);
}
