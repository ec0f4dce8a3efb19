/* sensors/touch.c: contact force on one geom (a touch pad, a force-sensing fingertip, a foot).
 *
 * From the contact stage (sim/sim.h): every contact the geom takes part in, with its force in
 * the contact frame (sim_contact_force: what geom 1 exerts on geom 2, normal first). The
 * "normal" channel is the sum of the contacts' normal forces, N, >= 0 (MuJoCo's touch sensor
 * over the whole geom); the optional "force.x/y/z" channels are the total force the other
 * shapes exert on the geom, N, in the geom's axes (a force sensor mounted in its frame).
 */
#include "sensors/sensors.h"

#include "sensors/chain_internal.h"

/* the contact's world force on geom 2: f_n·n + f₁·t₁ + f₂·t₂ (frame rows) */
static void contact_world_force(double out[3], const sim_data *d, int c, const double f[3]) {
  const double *frame = d->con_frame + 9 * c;
  for (int k = 0; k < 3; k++) {
    out[k] = f[0] * frame[k] + f[1] * frame[3 + k] + f[2] * frame[6 + k];
  }
}

void sens_touch_truth(const sens_sensor *s, const sim_model *m, const sim_data *d,
                      double *truth) {
  const sens_touch *t = &s->u.tch;
  double normal = 0, world[3] = {0, 0, 0};
  for (int c = 0; c < d->ncon; c++) {
    const int g1 = d->con_geom[2 * c], g2 = d->con_geom[2 * c + 1];
    if (g1 != t->geom && g2 != t->geom) {
      continue;
    }
    double f[3], w[3];
    sim_contact_force(m, d, c, f);
    normal += f[0];
    contact_world_force(w, d, c, f);
    const double sign = g2 == t->geom ? 1 : -1; /* geom 1 feels the opposite force */
    for (int k = 0; k < 3; k++) {
      world[k] += sign * w[k];
    }
  }
  truth[0] = normal;
  if (t->force3) {
    const double *R = d->geom_xmat + 9 * t->geom; /* world → geom axes: Rᵀ */
    for (int k = 0; k < 3; k++) {
      truth[1 + k] = R[k] * world[0] + R[3 + k] * world[1] + R[6 + k] * world[2];
    }
  }
}

void sens_touch_measure(sens_sensor *s, const double *truth, double *meas) {
  for (int k = 0; k < s->nch; k++) {
    meas[k] = sens__chain_step(&s->chain[k], truth[k], &s->events);
  }
}
