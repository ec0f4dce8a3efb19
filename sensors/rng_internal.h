/* sensors/rng_internal.h: the ziggurat's fast path as an inline function, for the per-sample
 * code of the sensors module (chain.c, sensor_set.c). Not part of the public API: other modules
 * call sens_rng_normal (rng.h), which is this same function out of line, so both give the same
 * numbers. */
#ifndef ACHILLES_SENSORS_RNG_INTERNAL_H
#define ACHILLES_SENSORS_RNG_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "sensors/rng.h"

/* for the few per-sample functions that must be inlined whatever the compiler's size heuristics
 * say (a call costs more than their work) */
#define SENS__ALWAYS_INLINE static inline __attribute__((always_inline))

/* ziggurat tables (rng.c): layer abscissae and the rectangle test zig_x[i+1] / zig_x[i] */
extern const double sens__zig_x[257];
extern const double sens__zig_k[256];

/* the ~1% of draws outside the rectangles (rng.c) */
double sens__rng_normal_slow(sens_rng *r, int i, double u);

/* Standard normal N(0, 1), ziggurat (rng.h): one draw; the low 8 bits pick the layer, the top
 * 53 bits the position in [-1, 1) (the signed conversion is exact and a single instruction). */
static inline double sens__rng_normal(sens_rng *r) {
  const uint64_t bits = sens_rng_next(r);
  const int i = (int)(bits & 0xff);
  const double u = (double)(int64_t)(bits >> 11) * 0x1.0p-52 - 1.0;
  if (fabs(u) < sens__zig_k[i]) {
    return u * sens__zig_x[i]; /* inside the rectangle wholly under the curve: ~99% of draws */
  }
  return sens__rng_normal_slow(r, i, u);
}

#endif
