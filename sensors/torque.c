/* sensors/torque.c: joint torque or motor current from the generalized force on a dof.
 *
 * The source array is chosen by the set (sens_set_torque_source): today the user-applied
 * qfrc_applied; an actuator model will supply its own array later. With a torque constant kt
 * (N·m/A) and gear ratio N the channel is the motor current τ / (N·kt), in A.
 */
#include "sensors/sensors.h"

#include "sensors/chain_internal.h"

void sens_torque_truth(const sens_sensor *s, const double *qfrc, double *truth) {
  const sens_torque *t = &s->u.trq;
  const double tau = qfrc[t->dofadr];
  truth[0] = t->torque_constant > 0.0 ? tau / (t->gear_ratio * t->torque_constant) : tau;
}

void sens_torque_measure(sens_sensor *s, const double *truth, double *meas) {
  meas[0] = sens__chain_step(&s->chain[0], truth[0], &s->events);
}
