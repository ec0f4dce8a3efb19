/* tests/hil/test_stats.c: histogram quantiles against exactly known distributions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "hil/runtime/stats.h"
#include "support/skip.h"

static hil_histogram h, other;

/* Uniform 1..10000 µs: the exact p50 is 5000 µs and p99 9900 µs; bins are 1 % wide. */
static void test_uniform_quantiles(void **state) {
  (void)state;
  hil_histogram_clear(&h);
  for (int k = 1; k <= 10000; k++) {
    hil_histogram_add(&h, k * 1e-6);
  }
  assert_int_equal(h.count, 10000);
  double p50 = hil_histogram_quantile(&h, 0.5), p99 = hil_histogram_quantile(&h, 0.99);
  assert_true(p50 >= 5000e-6 && p50 <= 5000e-6 * 1.0101);
  assert_true(p99 >= 9900e-6 && p99 <= 9900e-6 * 1.0101);
  assert_true(hil_histogram_quantile(&h, 1.0) == 10000e-6);
  assert_true(fabs(h.sum - 10000 * 10001 / 2 * 1e-6) < 1e-9);
}

static void test_edges_and_merge(void **state) {
  (void)state;
  hil_histogram_clear(&h);
  assert_true(hil_histogram_quantile(&h, 0.5) == 0); /* empty */
  hil_histogram_add(&h, -1e-3);                        /* early wake-up counts as on time */
  hil_histogram_add(&h, 100.0);                        /* beyond the last bin: kept as max */
  assert_true(h.max == 100.0);
  assert_true(hil_histogram_quantile(&h, 0.5) <= 1e-7);
  hil_histogram_clear(&other);
  for (int k = 0; k < 98; k++) {
    hil_histogram_add(&other, 2e-3);
  }
  hil_histogram_merge(&h, &other);
  assert_int_equal(h.count, 100);
  double p50 = hil_histogram_quantile(&h, 0.5);
  assert_true(p50 >= 2e-3 && p50 <= 2e-3 * 1.0101);
}

/* The q-quantile is the ceil(q·n)-th smallest value (nearest rank), where a rank that q·n does
 * not hit exactly shows: of 1..10 ms, p25 is the 3rd (3 ms; q·n = 2.5) and p95 the 10th. */
static void test_nearest_rank(void **state) {
  (void)state;
  hil_histogram_clear(&h);
  for (int k = 1; k <= 10; k++) {
    hil_histogram_add(&h, k * 1e-3);
  }
  const double p25 = hil_histogram_quantile(&h, 0.25), p95 = hil_histogram_quantile(&h, 0.95);
  if (!(p25 >= 3e-3 && p25 <= 3e-3 * 1.0101 && p95 == 10e-3)) {
    fail_msg("of 1..10 ms: p25 %.6f ms (expected the 3rd, 3 ms), p95 %.6f ms (the 10th)",
             p25 * 1e3, p95 * 1e3);
  }
}

TS_MAIN(test_uniform_quantiles, test_edges_and_merge, test_nearest_rank)
