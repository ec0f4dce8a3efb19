/* sensors/noise.h: additive noise processes, each a value object with its own parameters and
 * state. All values are in the unit of the channel they are added to ("unit": rad for an
 * encoder, rad/s for a gyroscope, m/s² for an accelerometer, N·m for a torque sensor).
 *
 * Which number is which:
 *  - white sigma          steady-state standard deviation of each sample, unit.
 *  - white density        noise density N, unit/√Hz; per-sample sigma = N·√(rate_hz)
 *                         (= N/√Δt, the convention of IMU datasheets, Kalibr and Gazebo's
 *                         "noise density"), so the noise scales correctly with the sample rate.
 *  - Gauss–Markov sigma   steady-state standard deviation of the drift, unit (NOT a driving-noise
 *                         density); tau_s its correlation time, s.
 *  - random-walk density  N_b, unit/(s·√Hz) = unit/√s: after t seconds the walk has standard
 *                         deviation N_b·√t (the "rate random walk" of IMU datasheets).
 */
#ifndef ACHILLES_SENSORS_NOISE_H
#define ACHILLES_SENSORS_NOISE_H

#include "sensors/rng.h"

/* --- white Gaussian noise ------------------------------------------------------------------ */

/* Per-sample standard deviation from either a sigma (unit) or a density (unit/√Hz); exactly one
 * of them may be non-zero. */
double sens_white_sigma(double sigma, double density, double rate_hz);

/* --- first-order Gauss–Markov drift -------------------------------------------------------- */

/* b[k+1] = a·b[k] + sigma·√(1 - a²)·w,  a = exp(-Δt/τ),  w ~ N(0,1).
 * This is the exact discretization of db/dt = -b/τ + √(2σ²/τ)·ξ(t): the stationary variance is
 * σ² and the autocorrelation σ²·exp(-|lag|/τ) whatever Δt is. */
typedef struct sens_gm {
  double sigma;  /* steady-state standard deviation, unit */
  double tau_s;  /* correlation time, s (> 0) */
  double a;      /* exp(-Δt/τ) */
  double k;      /* sigma·√(1 - a²) */
  double b;      /* current drift, unit */
} sens_gm;

/* Sets parameters and coefficients for sample period dt_s; state b = 0. */
void sens_gm_init(sens_gm *g, double sigma, double tau_s, double dt_s);
/* Changes parameters, keeping b (live tuning). */
void sens_gm_retune(sens_gm *g, double sigma, double tau_s, double dt_s);
/* Draws b from the stationary distribution N(0, σ²), so statistics hold from the first sample. */
void sens_gm_reset(sens_gm *g, sens_rng *r);
/* Advances one sample and returns the new drift. */
static inline double sens_gm_step(sens_gm *g, sens_rng *r) {
  g->b = g->a * g->b + g->k * sens_rng_normal(r);
  return g->b;
}

/* --- random walk (the τ → ∞ limit) --------------------------------------------------------- */

/* b[k+1] = b[k] + N_b·√Δt·w; b[0] = 0 at reset. Sample k (at t = k·Δt) holds b[k]. */
typedef struct sens_rw {
  double density; /* N_b, unit/√s */
  double k;       /* N_b·√Δt */
  double b;       /* current value, unit */
} sens_rw;

void sens_rw_init(sens_rw *w, double density, double dt_s);
void sens_rw_retune(sens_rw *w, double density, double dt_s);
void sens_rw_reset(sens_rw *w);
/* The value of this sample, b[k]; then advances to b[k+1]. */
static inline double sens_rw_step(sens_rw *w, sens_rng *r) {
  const double b = w->b;
  w->b += w->k * sens_rng_normal(r);
  return b;
}

#endif
