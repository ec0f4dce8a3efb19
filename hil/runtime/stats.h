/* hil/runtime/stats.h: timing statistics without allocation in the loop.
 *
 * A log-spaced histogram holds durations from 100 ns to 10 s with 1 % relative resolution, so
 * p50/p99 are exact to 1 % whatever the run length, in constant memory. */
#ifndef ACHILLES_HIL_STATS_H
#define ACHILLES_HIL_STATS_H

#include <stdint.h>

#define HIL_HIST_MIN_S 1e-7
#define HIL_HIST_GROWTH 1.01
#define HIL_HIST_BINS 1860 /* 1e-7 · 1.01^1860 ≈ 10.5 s */

typedef struct hil_histogram {
  uint64_t count;
  double max, sum;
  uint32_t bins[HIL_HIST_BINS];
} hil_histogram;

void hil_histogram_clear(hil_histogram *h);
void hil_histogram_add(hil_histogram *h, double seconds);
/* The q-quantile (0 ≤ q ≤ 1), s: the upper edge of the bin holding it (max for q = 1). */
double hil_histogram_quantile(const hil_histogram *h, double q);
/* Adds every sample of src into dst. */
void hil_histogram_merge(hil_histogram *dst, const hil_histogram *src);

#endif
