/* hil/runtime/stats.c: log-spaced duration histograms. */
#include "hil/runtime/stats.h"

#include <math.h>
#include <string.h>

void hil_histogram_clear(hil_histogram *h) {
  memset(h, 0, sizeof *h);
}

static int bin_of(double seconds) {
  if (!(seconds > HIL_HIST_MIN_S)) {
    return 0;
  }
  double k = ceil(log(seconds / HIL_HIST_MIN_S) / log(HIL_HIST_GROWTH));
  return k >= HIL_HIST_BINS - 1 ? HIL_HIST_BINS - 1 : (int)k;
}

static double upper_edge(int bin) {
  return HIL_HIST_MIN_S * pow(HIL_HIST_GROWTH, bin);
}

void hil_histogram_add(hil_histogram *h, double seconds) {
  if (seconds < 0 || !isfinite(seconds)) {
    seconds = 0; /* an early wake-up counts as on time */
  }
  h->bins[bin_of(seconds)]++;
  h->count++;
  h->sum += seconds;
  if (seconds > h->max) {
    h->max = seconds;
  }
}

double hil_histogram_quantile(const hil_histogram *h, double q) {
  if (h->count == 0) {
    return 0;
  }
  if (q >= 1) {
    return h->max;
  }
  uint64_t rank = (uint64_t)ceil(q * (double)h->count), seen = 0;
  rank = rank < 1 ? 1 : rank;
  for (int b = 0; b < HIL_HIST_BINS; b++) {
    seen += h->bins[b];
    if (seen >= rank) {
      double edge = upper_edge(b);
      return edge < h->max ? edge : h->max;
    }
  }
  return h->max;
}

void hil_histogram_merge(hil_histogram *dst, const hil_histogram *src) {
  for (int b = 0; b < HIL_HIST_BINS; b++) {
    dst->bins[b] += src->bins[b];
  }
  dst->count += src->count;
  dst->sum += src->sum;
  if (src->max > dst->max) {
    dst->max = src->max;
  }
}
