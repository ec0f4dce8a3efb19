/* tests/sensors/fit/chain_series.h: series of known parameters for the fit tests, straight from
 * the sensors' noise chain (sensors/chain.h), sampled at 1 kHz. */
#ifndef ACHILLES_TESTS_SENSORS_FIT_CHAIN_SERIES_H
#define ACHILLES_TESTS_SENSORS_FIT_CHAIN_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "sensors/chain.h"

/* p: the chain's defaults with white σ, and a Gauss–Markov drift of σ and τ (s) */
void chain_params(sens_chain_params *p, double white_sigma, double gm_sigma, double gm_tau_s);
/* n samples at 1 kHz of a chain with p (checked first) measuring ref(t) = amp·sin(2π·0.25·t) +
 * offset: times into t, measurements into x, the reference into ref (when not NULL) */
void chain_series(double *t, double *x, double *ref, size_t n, const sens_chain_params *p,
                  double amp, double offset, uint64_t seed);

#endif
