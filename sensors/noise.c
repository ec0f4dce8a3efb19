/* sensors/noise.c: white noise scaling, Gauss–Markov drift and random walk. */
#include "sensors/noise.h"

#include <math.h>

double sens_white_sigma(double sigma, double density, double rate_hz) {
  return density > 0.0 ? density * sqrt(rate_hz) : sigma;
}

void sens_gm_retune(sens_gm *g, double sigma, double tau_s, double dt_s) {
  g->sigma = sigma;
  g->tau_s = tau_s;
  g->a = exp(-dt_s / tau_s);
  /* -expm1(-2Δt/τ) = 1 - a² without cancellation when Δt ≪ τ */
  g->k = sigma * sqrt(-expm1(-2.0 * dt_s / tau_s));
}

void sens_gm_init(sens_gm *g, double sigma, double tau_s, double dt_s) {
  sens_gm_retune(g, sigma, tau_s, dt_s);
  g->b = 0.0;
}

void sens_gm_reset(sens_gm *g, sens_rng *r) { g->b = g->sigma * sens_rng_normal(r); }


void sens_rw_retune(sens_rw *w, double density, double dt_s) {
  w->density = density;
  w->k = density * sqrt(dt_s);
}

void sens_rw_init(sens_rw *w, double density, double dt_s) {
  sens_rw_retune(w, density, dt_s);
  w->b = 0.0;
}

void sens_rw_reset(sens_rw *w) { w->b = 0.0; }
