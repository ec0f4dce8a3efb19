/* tests/sensors/test_rng.c: xoshiro256++ and SplitMix64 against published reference values;
 * uniform and normal samplers against their distributions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>

#include "sensors/rng.h"
#include "support/skip.h"

/* SplitMix64 from state 0: the first outputs printed by Vigna's splitmix64.c */
static void test_splitmix64_reference(void **state) {
  (void)state;
  const uint64_t expected[4] = {0xE220A8397B1DCDAFULL, 0x6E789E6AA1B965F4ULL,
                                0x06C45D188009454FULL, 0xF88BB8A8724C81ECULL};
  uint64_t s = 0;
  for (int i = 0; i < 4; i++) {
    assert_true(sens_splitmix64(&s) == expected[i]);
  }
}

/* xoshiro256++ from state {0, 0, 0, 1}: outputs of the reference C code, as tabulated by the
 * independent xoshiro-fortran test suite (test/README.md) */
static void test_xoshiro_reference(void **state) {
  (void)state;
  const uint64_t s0[4] = {0, 0, 0, 1};
  const uint64_t expected[10] = {
      0x0000000000800000ULL, 0x0000000000800011ULL, 0x0002200000800011ULL,
      0x0002200044000020ULL, 0x00022000448008A1ULL, 0x01102100802208A0ULL,
      0x0114002284200880ULL, 0x0402896644A64095ULL, 0x8A14A0A244ACC891ULL,
      0x8C88BA4680B20495ULL};
  sens_rng r;
  sens_rng_set_state(&r, s0);
  for (int i = 0; i < 10; i++) {
    assert_true(sens_rng_next(&r) == expected[i]);
  }
}

static void test_uniform_range_and_mean(void **state) {
  (void)state;
  enum { N = 1000000 };
  sens_rng r;
  sens_rng_seed(&r, 1, 0);
  double sum = 0.0;
  for (int i = 0; i < N; i++) {
    const double u = sens_rng_uniform(&r);
    assert_true(u >= 0.0 && u < 1.0);
    sum += u;
  }
  /* std of the mean of U(0,1) is sqrt(1/12/N); 5 of them */
  assert_true(fabs(sum / N - 0.5) < 5.0 * sqrt(1.0 / 12.0 / N));
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Kolmogorov–Smirnov against Φ, plus the first four moments */
static void check_normal(double (*draw)(sens_rng *)) {
  enum { N = 200000 };
  double *x = malloc(N * sizeof *x);
  assert_non_null(x);
  sens_rng r;
  sens_rng_seed(&r, 2, 7);
  double m1 = 0, m2 = 0, m4 = 0;
  for (int i = 0; i < N; i++) {
    x[i] = draw(&r);
    m1 += x[i];
    m2 += x[i] * x[i];
    m4 += x[i] * x[i] * x[i] * x[i];
  }
  m1 /= N;
  m2 /= N;
  m4 /= N;
  assert_true(fabs(m1) < 5.0 / sqrt(N));              /* std of the mean: 1/sqrt(N) */
  assert_true(fabs(m2 - 1.0) < 5.0 * sqrt(2.0 / N));   /* std of E[x²]: sqrt(2/N) */
  assert_true(fabs(m4 - 3.0) < 5.0 * sqrt(96.0 / N));  /* std of E[x⁴]: sqrt((105-9)/N) */
  qsort(x, N, sizeof *x, cmp_double);
  double d = 0.0;
  for (int i = 0; i < N; i++) {
    const double cdf = 0.5 * erfc(-x[i] / sqrt(2.0));
    const double lo = cdf - (double)i / N, hi = (double)(i + 1) / N - cdf;
    d = fmax(d, fmax(lo, hi));
  }
  /* KS critical value at significance 0.001 is 1.95/sqrt(N) */
  assert_true(d < 1.95 / sqrt(N));
  free(x);
}

static void test_normal_distribution(void **state) {
  (void)state;
  check_normal(sens_rng_normal);
  check_normal(sens_rng_normal_polar);
}

/* the ziggurat's special regions: its tail beyond r = 3.654 and the wedges, by counting draws
 * beyond thresholds against 2·(1 - Φ(t)) */
static void test_normal_tails(void **state) {
  (void)state;
  enum { N = 4000000 };
  const double t[4] = {1.0, 2.5, 3.6541528853610088, 4.5};
  long count[4] = {0, 0, 0, 0};
  sens_rng r;
  sens_rng_seed(&r, 3, 1);
  for (long i = 0; i < N; i++) {
    const double x = fabs(sens_rng_normal(&r));
    for (int k = 0; k < 4; k++) {
      count[k] += x > t[k];
    }
  }
  for (int k = 0; k < 4; k++) {
    const double p = erfc(t[k] / sqrt(2.0));
    /* binomial count: std sqrt(N·p·(1-p)); 5 of them (at 4.5: 27 expected, sd 5.2) */
    assert_true(fabs((double)count[k] - N * p) < 5.0 * sqrt(N * p * (1.0 - p)));
  }
}

/* streams of one seed are uncorrelated; equal (seed, stream) give equal numbers */
static void test_streams(void **state) {
  (void)state;
  enum { N = 100000 };
  sens_rng a, b, c;
  sens_rng_seed(&a, 42, 0);
  sens_rng_seed(&b, 42, 1);
  sens_rng_seed(&c, 42, 0);
  double sab = 0;
  for (int i = 0; i < N; i++) {
    const double x = sens_rng_normal(&a), y = sens_rng_normal(&b), z = sens_rng_normal(&c);
    assert_true(x == z);
    sab += x * y;
  }
  /* correlation estimate of independent normals has std 1/sqrt(N) */
  assert_true(fabs(sab / N) < 5.0 / sqrt(N));
  sens_rng_seed(&a, 42, 0);
  sens_rng_seed(&b, 43, 0);
  assert_true(sens_rng_next(&a) != sens_rng_next(&b));
}

TS_MAIN(test_splitmix64_reference, test_xoshiro_reference, test_uniform_range_and_mean,
        test_normal_distribution, test_normal_tails, test_streams)
