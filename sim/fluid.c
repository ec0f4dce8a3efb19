/* sim/fluid.c: a body moving through a viscous medium (MuJoCo 2.2.2's inertia-box fluid model,
 * its viscous part: mj_inertiaBoxFluidModel with opt.viscosity > 0).
 *
 * Each body with mass is taken as a sphere whose diameter d is the mean side of its equivalent
 * inertia box (the box of uniform density with the body's mass and principal moments: side_i =
 * sqrt(6·(I_j + I_k − I_i)/m)). Relative to the medium, moving at the wind's velocity w, it
 * feels Stokes' drag at its centre of mass: a torque −π·d³·μ·ω and a force −3π·d·μ·(v − w),
 * with ω its angular velocity and v its centre of mass's velocity. Both are isotropic, so the
 * principal frame does not enter (the quadratic drag of a dense medium, MuJoCo's opt.density,
 * depends on it and is not built: the importer notes it). */
#include "sim/fluid.h"

#include <math.h>

#include "sim/mesh.h"

#define FLUID_MINVAL 1e-15 /* MuJoCo's mjMINVAL */

void sim__fluid_setconst(sim_model *m) {
  for (int b = 0; b < m->nbody; b++) {
    sim_body *body = &m->bodies[b];
    body->fluid_diam = 0;
    if (b == 0 || body->mass < FLUID_MINVAL) {
      continue;
    }
    double e[3], side = 0;
    sim__principal_moments(e, body->inertia);
    for (int i = 0; i < 3; i++) {
      const double s = e[(i + 1) % 3] + e[(i + 2) % 3] - e[i];
      side += sqrt(fmax(FLUID_MINVAL, s) / body->mass * 6.0);
    }
    body->fluid_diam = side / 3.0;
  }
}

/* The drag on each body into qfrc_passive (the caller adds it after springs and dampers). */
void sim__fluid(const sim_model *m, sim_data *d) {
  const double mu = m->opt.viscosity, pi = 3.141592653589793;
  for (int b = 1; b < m->nbody; b++) {
    const double diam = m->bodies[b].fluid_diam;
    if (diam == 0) {
      continue;
    }
    const double *v = d->cvel + 6 * b, *p = d->xipos + 3 * b; /* [ω; v at the world origin] */
    const double vc[3] = {v[3] + v[1] * p[2] - v[2] * p[1], v[4] + v[2] * p[0] - v[0] * p[2],
                          v[5] + v[0] * p[1] - v[1] * p[0]};
    const double kf = -3.0 * pi * diam * mu, kt = -pi * diam * diam * diam * mu;
    double wrench[6];
    for (int k = 0; k < 3; k++) {
      wrench[k] = kf * (vc[k] - m->opt.wind[k]); /* force at the centre of mass */
      wrench[3 + k] = kt * v[k];                  /* torque */
    }
    sim__body_wrench(m, d, b, wrench);
  }
}
