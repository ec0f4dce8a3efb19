/* tests/sensors/fit/chain_series.c: series of known parameters (chain_series.h). */
#include "chain_series.h"

#include <setjmp.h>
#include <stdarg.h>

#include <cmocka.h>
#include <math.h>

#define PI 3.14159265358979323846

void chain_params(sens_chain_params *p, double white_sigma, double gm_sigma, double gm_tau_s) {
  sens_chain_params_default(p);
  p->white_sigma = white_sigma;
  p->gm_sigma = gm_sigma;
  p->gm_tau_s = gm_tau_s;
}

void chain_series(double *t, double *x, double *ref, size_t n, const sens_chain_params *p,
                  double amp, double offset, uint64_t seed) {
  char err[256];
  assert_int_equal(sens_chain_check(p, 1000.0, "", err, sizeof err), 0);
  sens_chain c;
  sens_rng ev;
  sens_chain_init(&c, p, 1000.0, seed, 1);
  sens_rng_seed(&ev, seed, 15);
  for (size_t i = 0; i < n; i++) {
    t[i] = 1e-3 * (double)i;
    const double r = amp * sin(2 * PI * 0.25 * t[i]) + offset;
    if (ref) {
      ref[i] = r;
    }
    x[i] = sens_chain_step(&c, r, &ev);
  }
}
