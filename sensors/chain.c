/* sensors/chain.c: one channel's noise, filter, quantization and fault chain. */
#include "sensors/chain.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sensors/chain_internal.h"
#include "sensors/error.h"
#include "sensors/quantize.h"

/* numeric parameters by JSON path: the one table shared by the loader and live tuning */
typedef struct chain_field_desc {
  const char *path;
  size_t offset;
} chain_field_desc;

#define CHAIN_FIELD(path, member) {path, offsetof(sens_chain_params, member)}
static const chain_field_desc chain_fields[] = {
    CHAIN_FIELD("noise.scale_error", scale_error),
    CHAIN_FIELD("noise.offset", offset),
    CHAIN_FIELD("noise.bias", bias),
    CHAIN_FIELD("noise.turn_on_bias_sigma", turn_on_sigma),
    CHAIN_FIELD("noise.white.sigma", white_sigma),
    CHAIN_FIELD("noise.white.density", white_density),
    CHAIN_FIELD("noise.gauss_markov.sigma", gm_sigma),
    CHAIN_FIELD("noise.gauss_markov.tau_s", gm_tau_s),
    CHAIN_FIELD("noise.random_walk.density", rw_density),
    CHAIN_FIELD("filter.cutoff_hz", cutoff_hz),
    CHAIN_FIELD("resolution", resolution),
    CHAIN_FIELD("fault.probability", fault.probability),
    CHAIN_FIELD("fault.size", fault.size),
    CHAIN_FIELD("fault.offset", fault.offset),
};
#undef CHAIN_FIELD

const char *sens_chain_field_path(int i) {
  const int n = (int)(sizeof chain_fields / sizeof chain_fields[0]);
  return i >= 0 && i < n ? chain_fields[i].path : NULL;
}

double *sens_chain_field(sens_chain_params *p, const char *path) {
  for (size_t i = 0; i < sizeof chain_fields / sizeof chain_fields[0]; i++) {
    if (strcmp(path, chain_fields[i].path) == 0) {
      return (double *)(void *)((char *)p + chain_fields[i].offset);
    }
  }
  return NULL;
}

void sens_chain_params_default(sens_chain_params *p) {
  memset(p, 0, sizeof *p);
  p->filter_type = SENS_FILTER_NONE;
  p->fault.mode = SENS_FAULT_NONE;
}

/* --- validation ---------------------------------------------------------------------------- */

static int chain_bad(char *err, size_t err_sz, const char *path, const char *field,
                     const char *expected, double got) {
  return sens_fail(err, err_sz, SENS_EINVAL, "%s%s%s: %s (got %g)", path, *path ? "." : "",
                   field, expected, got);
}

static int chain_check_nonneg(const sens_chain_params *p, const char *path, char *err,
                              size_t err_sz) {
  static const char *const names[] = {"noise.turn_on_bias_sigma", "noise.white.sigma",
                                      "noise.white.density", "noise.gauss_markov.sigma",
                                      "noise.random_walk.density", "resolution"};
  sens_chain_params *q = (sens_chain_params *)(void *)p;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const double v = *sens_chain_field(q, names[i]);
    if (!(v >= 0.0) || !isfinite(v)) {
      return chain_bad(err, err_sz, path, names[i], "must be finite and >= 0", v);
    }
  }
  return 0;
}

static int chain_check_noise(const sens_chain_params *p, const char *path, char *err,
                             size_t err_sz) {
  if (!(p->scale_error > -1.0) || !isfinite(p->scale_error)) {
    return chain_bad(err, err_sz, path, "noise.scale_error", "must be finite and > -1",
                     p->scale_error);
  }
  if (!isfinite(p->offset) || !isfinite(p->bias)) {
    return chain_bad(err, err_sz, path, isfinite(p->offset) ? "noise.bias" : "noise.offset",
                     "must be finite", isfinite(p->offset) ? p->bias : p->offset);
  }
  if (p->white_sigma > 0.0 && p->white_density > 0.0) {
    return chain_bad(err, err_sz, path, "noise.white",
                     "give either sigma (per-sample std) or density (unit/sqrt(Hz)), not both",
                     p->white_density);
  }
  if (p->gm_tau_s != 0.0 && !(p->gm_tau_s > 0.0)) {
    return chain_bad(err, err_sz, path, "noise.gauss_markov.tau_s", "must be > 0 s",
                     p->gm_tau_s);
  }
  if (p->gm_sigma > 0.0 && !(p->gm_tau_s > 0.0 && isfinite(p->gm_tau_s))) {
    return chain_bad(err, err_sz, path, "noise.gauss_markov.tau_s",
                     "must be finite and > 0 s when sigma > 0", p->gm_tau_s);
  }
  return 0;
}

static int chain_check_filter_fault(const sens_chain_params *p, double rate_hz,
                                    const char *path, char *err, size_t err_sz) {
  if (p->filter_type != SENS_FILTER_NONE &&
      !(p->cutoff_hz > 0.0 && p->cutoff_hz < 0.5 * rate_hz)) {
    char expected[96];
    snprintf(expected, sizeof expected, "must be > 0 and below Nyquist (%g Hz at rate %g Hz)",
             0.5 * rate_hz, rate_hz);
    return chain_bad(err, err_sz, path, "filter.cutoff_hz", expected, p->cutoff_hz);
  }
  if (!(p->fault.probability >= 0.0 && p->fault.probability <= 1.0)) {
    return chain_bad(err, err_sz, path, "fault.probability", "must be in [0, 1]",
                     p->fault.probability);
  }
  if (!isfinite(p->fault.size) || !isfinite(p->fault.offset)) {
    return chain_bad(err, err_sz, path, "fault", "size and offset must be finite",
                     isfinite(p->fault.size) ? p->fault.offset : p->fault.size);
  }
  return 0;
}

int sens_chain_check(const sens_chain_params *p, double rate_hz, const char *path, char *err,
                     size_t err_sz) {
  int rc = chain_check_nonneg(p, path, err, err_sz);
  if (rc == 0) {
    rc = chain_check_noise(p, path, err, err_sz);
  }
  if (rc == 0) {
    rc = chain_check_filter_fault(p, rate_hz, path, err, err_sz);
  }
  return rc;
}

/* --- state ----------------------------------------------------------------------------------- */

static void chain_refresh_constant(sens_chain *c) {
  c->constant = c->p.offset + c->p.bias + c->p.turn_on_sigma * c->turn_on_z;
}

void sens_chain_retune(sens_chain *c, const sens_chain_params *p) {
  const double dt = 1.0 / c->rate_hz;
  const sens_fault fault = c->p.fault;
  c->p = *p;
  c->p.fault = fault; /* faults change only through sens_chain_set_fault */
  c->white_k = sens_white_sigma(p->white_sigma, p->white_density, c->rate_hz);
  sens_gm_retune(&c->gm, p->gm_sigma, p->gm_tau_s > 0.0 ? p->gm_tau_s : 1.0, dt);
  sens_rw_retune(&c->rw, p->rw_density, dt);
  sens_filter_retune(&c->filter, p->filter_type, p->cutoff_hz, c->rate_hz);
  sens_chain_set_fault(c, &p->fault);
  chain_refresh_constant(c);
}

void sens_chain_reset(sens_chain *c, uint64_t seed, uint64_t stream) {
  sens_rng_seed(&c->rng, seed, stream);
  /* draws in a fixed order: turn-on bias, then the stationary drift */
  c->turn_on_z = sens_rng_normal(&c->rng);
  chain_refresh_constant(c);
  sens_gm_reset(&c->gm, &c->rng);
  sens_rw_reset(&c->rw);
  sens_filter_reset(&c->filter);
  c->last = 0.0;
  c->stuck = 0.0;
}

void sens_chain_init(sens_chain *c, const sens_chain_params *p, double rate_hz, uint64_t seed,
                     uint64_t stream) {
  memset(c, 0, sizeof *c);
  c->rate_hz = rate_hz;
  sens_chain_retune(c, p);
  sens_chain_reset(c, seed, stream);
}

void sens_chain_set_fault(sens_chain *c, const sens_fault *f) {
  if (f->mode == SENS_FAULT_STUCK && c->p.fault.mode != SENS_FAULT_STUCK) {
    c->stuck = c->last;
  }
  c->p.fault = *f;
}

double sens_chain_step(sens_chain *c, double x, sens_rng *events) {
  return sens__chain_step(c, x, events);
}
