/* sim/muscle.c: MuJoCo 2.2.2's muscle curves (engine_util_misc.c: mju_muscleGain,
 * mju_muscleBias, mju_muscleDynamics), the model described in sim/muscle.h. */
#include "sim/muscle.h"

#include <math.h>

#define MUSCLE_MINVAL 1e-15 /* MuJoCo's mjMINVAL: every divisor is at least this */

static double peak_force(const sim_muscle *p, double acc0) {
  return p->force < 0 ? p->scale / fmax(MUSCLE_MINVAL, acc0) : p->force;
}

/* the optimal length L0 and the normalized length of len */
static double normalized_length(const sim_muscle *p, double len, const double lr[2], double *L0) {
  *L0 = (lr[1] - lr[0]) / fmax(MUSCLE_MINVAL, p->range[1] - p->range[0]);
  return p->range[0] + (len - lr[0]) / fmax(MUSCLE_MINVAL, *L0);
}

/* the active force-length curve: half-parabolas up from lmin to the midpoint a, to 1 at L = 1,
 * down to the midpoint b and to 0 at lmax */
static double force_length(const sim_muscle *p, double L) {
  const double a = 0.5 * (p->lmin + 1), b = 0.5 * (1 + p->lmax);
  double x;
  if (L >= p->lmin && L <= a) {
    x = (L - p->lmin) / fmax(MUSCLE_MINVAL, a - p->lmin);
    return 0.5 * x * x;
  }
  if (L <= 1) {
    x = (1 - L) / fmax(MUSCLE_MINVAL, 1 - a);
    return 1 - 0.5 * x * x;
  }
  if (L <= b) {
    x = (L - 1) / fmax(MUSCLE_MINVAL, b - 1);
    return 1 - 0.5 * x * x;
  }
  if (L <= p->lmax) {
    x = (p->lmax - L) / fmax(MUSCLE_MINVAL, p->lmax - b);
    return 0.5 * x * x;
  }
  return 0;
}

/* the force-velocity curve: 0 when shortening at vmax, 1 at rest, fvmax when lengthening */
static double force_velocity(const sim_muscle *p, double V) {
  const double y = p->fvmax - 1;
  if (V <= -1) {
    return 0;
  }
  if (V <= 0) {
    return (V + 1) * (V + 1);
  }
  if (V <= y) {
    return p->fvmax - (y - V) * (y - V) / fmax(MUSCLE_MINVAL, y);
  }
  return p->fvmax;
}

double sim__muscle_gain(const sim_muscle *p, double len, double vel, const double lr[2],
                        double acc0) {
  double L0;
  const double L = normalized_length(p, len, lr, &L0);
  const double V = vel / fmax(MUSCLE_MINVAL, L0 * p->vmax);
  return -peak_force(p, acc0) * force_length(p, L) * force_velocity(p, V);
}

/* passive: 0 up to L = 1, a half-parabola to b = (1 + lmax)/2, linear beyond */
double sim__muscle_bias(const sim_muscle *p, double len, const double lr[2], double acc0) {
  double L0;
  const double L = normalized_length(p, len, lr, &L0), b = 0.5 * (1 + p->lmax);
  const double F = peak_force(p, acc0);
  if (L <= 1) {
    return 0;
  }
  if (L <= b) {
    const double x = (L - 1) / fmax(MUSCLE_MINVAL, b - 1);
    return -F * p->fpmax * 0.5 * x * x;
  }
  const double x = (L - b) / fmax(MUSCLE_MINVAL, b - 1);
  return -F * p->fpmax * (0.5 + x);
}

double sim__muscle_dynamics(const sim_muscle *p, double ctrl, double act) {
  const double u = fmin(1, fmax(0, ctrl)), a = fmin(1, fmax(0, act));
  const double tau = u > act ? p->timeconst[0] * (0.5 + 1.5 * a)
                             : p->timeconst[1] / (0.5 + 1.5 * a);
  return (u - act) / fmax(MUSCLE_MINVAL, tau);
}
