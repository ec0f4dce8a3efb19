/* sensors/quantize.h: quantization, angle wrap-around and a 32-bit hardware counter. */
#ifndef ACHILLES_SENSORS_QUANTIZE_H
#define ACHILLES_SENSORS_QUANTIZE_H

#include <math.h>
#include <stdint.h>

/* Nearest integer to v, ties to even, without a library call: adding and subtracting 1.5·2^52
 * makes the FPU round to an integer in the default round-to-nearest mode (exact for
 * |v| < 2^51; larger doubles go through rint()). Needs IEEE arithmetic without -ffast-math. */
static inline double sens_round(double v) {
  if (fabs(v) < 0x1p51) {
    /* not folded away: without -ffast-math the compiler may not reassociate */
    return (v + 0x1.8p52) - 0x1.8p52;
  }
  return rint(v);
}

/* Nearest multiple of step (step > 0; ties to even); x unchanged when step <= 0.
 * |result - x| <= step/2. */
double sens_quantize(double x, double step);

/* x wrapped into [-π, π). */
double sens_wrap_angle(double x);

/* Nearest integer of x/step as a 64-bit count, saturated to ±2^62 (0 for NaN). */
static inline int64_t sens_count(double x, double step) {
  const double n = sens_round(x / step);
  const double limit = 0x1p62;
  if (isnan(n)) {
    return 0;
  }
  return (int64_t)(n > limit ? limit : n < -limit ? -limit : n);
}

/* The low 32 bits of a count read as a two's-complement signed counter, as a hardware counter
 * that overflows from INT32_MAX to INT32_MIN. (Unsigned arithmetic wraps by definition; the
 * conversion back avoids the implementation-defined unsigned→signed cast.) */
static inline int32_t sens_counter_wrap(int64_t count) {
  const uint32_t u = (uint32_t)((uint64_t)count & 0xffffffffULL);
  if (u <= (uint32_t)INT32_MAX) {
    return (int32_t)u;
  }
  return (int32_t)(u - 0x80000000u) + INT32_MIN;
}

/* b - a for two readings of a wrapping 32-bit counter (correct while |true difference| < 2^31). */
static inline int32_t sens_counter_diff(int32_t b, int32_t a) {
  return sens_counter_wrap((int64_t)b - (int64_t)a);
}

#endif
