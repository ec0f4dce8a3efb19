/* sensors/filter.h: low-pass filters with a cutoff in Hz.
 *
 *  - SENS_FILTER_FIRST_ORDER: the exact (step-invariant) discretization of H(s) = 1/(1 + s/ωc):
 *      y[k] = a·y[k-1] + (1 - a)·x[k],  a = exp(-2π·fc·Δt).
 *    0 < a < 1 for every fc > 0, so it is unconditionally stable; DC gain is exactly 1. Its gain
 *    at fc equals the analog 1/√2 to within 0.5% while fc ≤ fs/20 and drifts above that (at
 *    fc = fs/4 it is 0.77): it is the analog filter sampled, not a frequency-warped copy.
 *  - SENS_FILTER_BUTTERWORTH2: second-order Butterworth by the bilinear transform with the
 *    cutoff prewarped (K = tan(π·fc/fs)), so the gain at fc is exactly 1/√2 (−3.01 dB) for any
 *    fc below Nyquist, DC gain is 1, and the response falls at −40 dB/decade beyond fc (faster
 *    near Nyquist, where the bilinear map puts a double zero).
 * Both run in direct form I, whose state is past inputs and outputs (not coefficient-weighted
 * sums), so retuning a running filter continues smoothly from the same signal history.
 *
 * Both start at rest on their first input (y = x, as if that input had been applied forever),
 * which avoids a start-up transient from 0. Cutoffs must satisfy 0 < fc < fs/2.
 * Value object, no allocation.
 */
#ifndef ACHILLES_SENSORS_FILTER_H
#define ACHILLES_SENSORS_FILTER_H

typedef enum sens_filter_type {
  SENS_FILTER_NONE = 0,
  SENS_FILTER_FIRST_ORDER = 1,
  SENS_FILTER_BUTTERWORTH2 = 2,
} sens_filter_type;

typedef struct sens_filter {
  sens_filter_type type;
  double cutoff_hz;
  double b0, b1, b2, a1, a2; /* y = b0·x + b1·x1 + b2·x2 - a1·y1 - a2·y2 */
  double x1, x2, y1, y2;     /* state: last two inputs and outputs */
  int primed;                /* 0 until the first input */
} sens_filter;

/* Designs the filter for sample rate fs_hz (caller validated 0 < cutoff < fs/2); resets state. */
void sens_filter_init(sens_filter *f, sens_filter_type type, double cutoff_hz, double fs_hz);
/* Changes the design and keeps the state (live tuning). */
void sens_filter_retune(sens_filter *f, sens_filter_type type, double cutoff_hz, double fs_hz);
void sens_filter_reset(sens_filter *f);
/* Sets the state of a filter that has seen x forever (y = x: DC gain 1). */
void sens_filter_prime(sens_filter *f, double x);

/* One sample (inline: on every filtered channel's per-sample path). */
static inline double sens_filter_step(sens_filter *f, double x) {
  if (f->type == SENS_FILTER_NONE) {
    return x;
  }
  if (!f->primed) {
    sens_filter_prime(f, x);
  }
  const double y =
      f->b0 * x + f->b1 * f->x1 + f->b2 * f->x2 - f->a1 * f->y1 - f->a2 * f->y2;
  f->x2 = f->x1;
  f->x1 = x;
  f->y2 = f->y1;
  f->y1 = y;
  return y;
}

/* "none", "first_order", "butterworth2"; sens_filter_parse returns -1 for other names. */
const char *sens_filter_name(sens_filter_type type);
int sens_filter_parse(const char *name);

#endif
