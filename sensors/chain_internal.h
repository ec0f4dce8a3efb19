/* sensors/chain_internal.h: one sample of a chain (chain.h) as an inline function, for the
 * per-sample code of the sensors module. Not part of the public API: sens_chain_step is this same
 * function out of line. */
#ifndef ACHILLES_SENSORS_CHAIN_INTERNAL_H
#define ACHILLES_SENSORS_CHAIN_INTERNAL_H

#include "sensors/chain.h"
#include "sensors/quantize.h"
#include "sensors/rng_internal.h"

/* The stages of chain.h, in order; the expressions are those of noise.h and filter.h. */
static inline double sens__chain_step(sens_chain *c, double x, sens_rng *events) {
  const sens_chain_params *p = &c->p;
  /* (1 + s)·x + (offset + bias + turn-on): scale, then the constant terms, in one step */
  double y = (1.0 + p->scale_error) * x + c->constant;
  /* drift: Gauss–Markov, then random walk (sens_gm_step, sens_rw_step) */
  if (p->gm_sigma > 0.0) {
    c->gm.b = c->gm.a * c->gm.b + c->gm.k * sens__rng_normal(&c->rng);
    y += c->gm.b;
  }
  if (p->rw_density > 0.0) {
    /* the sample at t = k·Δt after reset holds b[k], b[0] = 0: Var = N_b²·t at every sample */
    y += c->rw.b;
    c->rw.b += c->rw.k * sens__rng_normal(&c->rng);
  }
  if (c->white_k > 0.0) {
    y += c->white_k * sens__rng_normal(&c->rng);
  }
  y = sens_filter_step(&c->filter, y);
  if (p->fault.mode != SENS_FAULT_NONE) {
    y += sens_fault_add(&p->fault, events);
  }
  if (p->resolution > 0.0) {
    y = sens_quantize(y, p->resolution);
  }
  if (p->wrap) {
    y = sens_wrap_angle(y);
  }
  if (p->fault.mode == SENS_FAULT_STUCK) {
    return c->stuck;
  }
  c->last = y;
  return y;
}

#endif
