/* sensors/encoder_internal.h: the encoder's truth and measurement (encoder.c) as inline
 * functions, so the per-sample code of the set (sensor_set.c) runs them without calls. Not part
 * of the public API: sens_encoder_truth and sens_encoder_measure are these same functions out of
 * line.
 *
 * The chain (chain.h) turns the true joint angle into a measured angle; the code wheel's count
 * is that angle less `origin`, in counts (the wheel's index mark is at count 0 mod one turn).
 * An absolute encoder publishes the wheel count; an incremental one publishes the wheel count
 * less the one it had at the first sample after a reset, so it reads 0 at power-up wherever the
 * joint stands. The counter is kept as a 64-bit total and published as a wrapping signed 32-bit
 * register. Velocity is what firmware computes from two consecutive counter readings:
 * Δcounts·step·rate.
 */
#ifndef ACHILLES_SENSORS_ENCODER_INTERNAL_H
#define ACHILLES_SENSORS_ENCODER_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "sensors/chain_internal.h"
#include "sensors/quantize.h"
#include "sensors/sensors.h"

/* floor(n / k) for k > 0: the revolution a count belongs to */
static inline int64_t sens__enc_turn(int64_t n, int64_t k) {
  int64_t q = n / k;
  return (n % k != 0 && n < 0) ? q - 1 : q;
}

/* Did the count pass the index mark (a multiple of k) going from prev to n? *rem tracks
 * prev mod k, so the usual small moves cost no division. Counts saturate at ±2^62 and
 * k <= 4·10^8, so prev ± k cannot overflow where n - prev could (a jump from +2^62 to -2^62). */
static inline int sens__enc_crossed(int64_t prev, int64_t n, int64_t *rem, int64_t k) {
  if (n >= prev + k || n <= prev - k) {
    *rem = n - sens__enc_turn(n, k) * k;
    return sens__enc_turn(n, k) != sens__enc_turn(prev, k);
  }
  int64_t r = *rem + (n - prev);
  int crossed = 0;
  if (r >= k) {
    r -= k;
    crossed = 1;
  } else if (r < 0) {
    r += k;
    crossed = 1;
  }
  *rem = r;
  return crossed;
}

/* the nearest count to angle, as the 64-bit total of an ideal counter: sens_count(v, 1.0),
 * whose first branch (|v| < 2^51, not NaN, inside the saturation limits) is written out */
static inline int64_t sens__enc_count(const sens_encoder *e, double angle) {
  const double v = angle * e->inv_step;
  if (fabs(v) < 0x1p51) {
    return (int64_t)((v + 0x1.8p52) - 0x1.8p52);
  }
  return sens_count(v, 1.0);
}

SENS__ALWAYS_INLINE void sens__encoder_truth(sens_sensor *s, const sim_data *d, double *truth) {
  sens_encoder *e = &s->u.enc;
  const double angle = d->qpos[e->qposadr];
  const int64_t n = sens__enc_count(e, angle - e->origin);
  if (!e->have_true) {
    e->true_rem = n - sens__enc_turn(n, e->counts_per_turn) * e->counts_per_turn;
    e->prev_true_count = n;
    e->true_start_count = e->incremental ? n : 0;
    e->have_true = 1;
  }
  const int crossed = sens__enc_crossed(e->prev_true_count, n, &e->true_rem, e->counts_per_turn);
  e->prev_true_count = n;
  if (e->ch_counts >= 0) {
    truth[e->ch_counts] = (double)sens_counter_wrap(n - e->true_start_count);
  }
  if (e->ch_angle >= 0) {
    /* the angle an ideal encoder of this kind reports: its counter's zero is the origin, or
     * (incremental) the whole count nearest the joint's angle at the first sample */
    const double a = angle - e->origin - (double)e->true_start_count * e->step;
    truth[e->ch_angle] = e->wrap ? sens_wrap_angle(a) : a;
  }
  if (e->ch_velocity >= 0) {
    truth[e->ch_velocity] = d->qvel[e->dofadr];
  }
  if (e->ch_index >= 0) {
    truth[e->ch_index] = crossed;
  }
  truth[SENS_MAX_CHANNELS] = angle;
}

SENS__ALWAYS_INLINE void sens__encoder_measure(sens_sensor *s, const double *truth,
                                           double *meas) {
  sens_encoder *e = &s->u.enc;
  /* the chain has no resolution of its own: quantization is the counting below */
  const double y = sens__chain_step(&s->chain[0], truth[SENS_MAX_CHANNELS], &s->events);
  const int64_t n = sens__enc_count(e, y - e->origin);
  if (!e->have_prev) {
    e->rem = n - sens__enc_turn(n, e->counts_per_turn) * e->counts_per_turn;
    e->prev_count = n;
    e->start_count = e->incremental ? n : 0;
  }
  const int32_t counter = sens_counter_wrap(n - e->start_count);
  if (e->ch_counts >= 0) {
    meas[e->ch_counts] = (double)counter;
  }
  if (e->ch_angle >= 0) {
    const double angle = (double)(n - e->start_count) * e->step;
    meas[e->ch_angle] = e->wrap ? sens_wrap_angle(angle) : angle;
  }
  if (e->ch_velocity >= 0) {
    /* firmware sees only the 32-bit register: difference it with wrap-around */
    const int32_t dn =
        e->have_prev ? sens_counter_diff(counter, sens_counter_wrap(e->prev_count - e->start_count))
                     : 0;
    meas[e->ch_velocity] = (double)dn * e->step * s->rate_hz;
  }
  const int crossed = sens__enc_crossed(e->prev_count, n, &e->rem, e->counts_per_turn);
  if (e->ch_index >= 0) {
    meas[e->ch_index] = crossed;
  }
  e->prev_count = n;
  e->have_prev = 1;
}

#endif
