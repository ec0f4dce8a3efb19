/* sensors/imu.c: gyroscope and accelerometer on a body (or a site on it), in body axes.
 *
 * From the dynamics core (sim/sim.h), for body b in b's own coordinates:
 *   sim_body_velocity     = [ω; v]   v: velocity of the body-fixed point at the origin
 *   sim_body_acceleration = [α; a]   a: spatial acceleration, incl. the fictitious base
 *                                       acceleration -g
 * The classical acceleration of the origin is a_o = a + ω×v, and of the body-fixed point p
 *   a_p = a_o + α×p + ω×(ω×p).
 * Because gravity enters as the world accelerating by -g, a_p is already the specific force
 * (acceleration minus gravity) an accelerometer measures: +g along "up" at rest.
 */
#include "sensors/sensors.h"

#include "sensors/chain_internal.h"

static void imu_cross(double out[3], const double a[3], const double b[3]) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

void sens_imu_truth(const sens_sensor *s, const sim_model *m, const sim_data *d, double *truth) {
  (void)m;
  const sens_imu *imu = &s->u.imu;
  double vel[6], acc[6];
  sim_body_velocity(vel, d, imu->body);
  sim_body_acceleration(acc, d, imu->body);
  const double *w = vel, *v = vel + 3, *alpha = acc, *a = acc + 3, *p = imu->pos;
  double wxv[3], axp[3], wxp[3], wxwxp[3];
  imu_cross(wxv, w, v);
  imu_cross(axp, alpha, p);
  imu_cross(wxp, w, p);
  imu_cross(wxwxp, w, wxp);
  for (int k = 0; k < 3; k++) {
    truth[k] = w[k];
    truth[3 + k] = a[k] + wxv[k] + axp[k] + wxwxp[k];
  }
}

void sens_imu_measure(sens_sensor *s, const double *truth, double *meas) {
  for (int k = 0; k < 6; k++) {
    meas[k] = sens__chain_step(&s->chain[k], truth[k], &s->events);
  }
}
