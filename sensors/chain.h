/* sensors/chain.h: the processing chain of one scalar channel (an encoder angle, one gyroscope
 * axis, a joint torque), built from the blocks of noise.h, filter.h, quantize.h and fault.h.
 *
 * Order, applied to the true value x of the channel at each sample (every stage optional):
 *   1. scale error      y = (1 + scale_error)·x
 *   2. offset           y += offset
 *   3. bias             y += bias + turn-on bias (drawn once per reset, N(0, turn_on_bias_sigma²))
 *   4. drift            y += Gauss–Markov drift + random walk
 *   5. white noise      y += sigma_d·w  (sigma_d from sigma, or density·√rate)
 *   6. low-pass         y = filter(y)
 *   7. fault add        y += offset jump or spike
 *   8. quantization     y = resolution·round(y / resolution), then wrap to [-π, π) if asked
 *   9. fault stuck      y = value held since the fault was switched on
 * Latency, dropped samples and dead sensors act on whole sensors (sensor_set.c). Encoders leave
 * the resolution at 0 here and quantize by counting (encoder.c).
 *
 * Units: "unit" is the channel's unit (rad, rad/s, m/s², N·m); see noise.h for which parameter
 * is a steady-state sigma and which a density. Value object, no allocation.
 */
#ifndef ACHILLES_SENSORS_CHAIN_H
#define ACHILLES_SENSORS_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "sensors/fault.h"
#include "sensors/filter.h"
#include "sensors/noise.h"
#include "sensors/rng.h"

typedef struct sens_chain_params {
  double scale_error;    /* fractional (0.01 = +1%), > -1 */
  double offset;         /* fixed offset, unit */
  double bias;           /* constant bias, unit */
  double turn_on_sigma;  /* std of the per-run turn-on bias, unit, >= 0 */
  double white_sigma;    /* per-sample standard deviation, unit, >= 0 */
  double white_density;  /* noise density, unit/√Hz, >= 0 (exclusive with white_sigma) */
  double gm_sigma;       /* Gauss–Markov steady-state standard deviation, unit, >= 0 */
  double gm_tau_s;       /* Gauss–Markov correlation time, s, > 0 when gm_sigma > 0 */
  double rw_density;     /* random-walk density, unit/√s, >= 0 */
  sens_filter_type filter_type;
  double cutoff_hz;      /* 0 < cutoff_hz < rate/2 when a filter is set */
  double resolution;     /* quantization step, unit, >= 0 (0: none) */
  int wrap;              /* 1: wrap to [-π, π) after quantization (angles) */
  sens_fault fault;      /* initial fault (normally none) */
} sens_chain_params;

typedef struct sens_chain {
  sens_chain_params p;
  double rate_hz;     /* sample rate, Hz */
  double white_k;     /* per-sample white standard deviation */
  double turn_on_z;   /* N(0,1) drawn at reset: the turn-on bias is turn_on_sigma·turn_on_z */
  double constant;    /* offset + bias + turn-on bias, refreshed by retune and reset */
  sens_gm gm;
  sens_rw rw;
  sens_filter filter;
  double last;        /* last output */
  double stuck;       /* output held while stuck */
  sens_rng rng;       /* this channel's noise stream */
} sens_chain;

/* All zero: an ideal channel (output = truth). */
void sens_chain_params_default(sens_chain_params *p);

/* Validates p for a channel sampled at rate_hz. On error the message starts with `path`
 * followed by the offending parameter's JSON path, e.g. "list[2].noise.white.sigma: must be
 * >= 0 (got -1)". */
int sens_chain_check(const sens_chain_params *p, double rate_hz, const char *path, char *err,
                     size_t err_sz);

/* Sets up a checked chain and resets it from (seed, stream). */
void sens_chain_init(sens_chain *c, const sens_chain_params *p, double rate_hz, uint64_t seed,
                     uint64_t stream);
/* Reseeds the noise stream and resets every state (drift, filter, turn-on bias, stuck). */
void sens_chain_reset(sens_chain *c, uint64_t seed, uint64_t stream);
/* Applies new checked parameters keeping the state (drift value, filter memory, turn-on
 * draw, stuck value): live tuning without a jump. */
void sens_chain_retune(sens_chain *c, const sens_chain_params *p);
/* Switches the fault; switching to stuck freezes the last output. */
void sens_chain_set_fault(sens_chain *c, const sens_fault *f);

/* One sample: the measured value for true value x. `events` is the sensor's event stream
 * (spikes). */
double sens_chain_step(sens_chain *c, double x, sens_rng *events);

/* The numeric parameter at a JSON-style path relative to the chain ("noise.white.sigma",
 * "noise.gauss_markov.tau_s", "filter.cutoff_hz", "resolution", "fault.size", ...); NULL when
 * the path names no numeric parameter. */
double *sens_chain_field(sens_chain_params *p, const char *path);
/* The i-th of those paths (the order of the loader's table), NULL past the last: a client can
 * list what live tuning reaches. */
const char *sens_chain_field_path(int i);

#endif
