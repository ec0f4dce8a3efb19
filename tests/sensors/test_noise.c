/* tests/sensors/test_noise.c: statistics of the noise blocks and of the chain's deterministic
 * stages. Fixed seeds; every tolerance is a multiple of the estimator's standard deviation for
 * the sample size used (given next to the assertion). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensors/chain.h"
#include "sensors/noise.h"
#include "support/skip.h"

/* white noise through the chain: sample std within 1% of sigma over 10^6 samples, mean within
 * 3·sigma/sqrt(N) */
static void check_white(double sigma_expected, const sens_chain_params *p, double rate) {
  enum { N = 1000000 };
  sens_chain c;
  sens_rng ev;
  sens_rng_seed(&ev, 9, 9);
  sens_chain_init(&c, p, rate, 1234, 0);
  double s1 = 0, s2 = 0;
  for (int i = 0; i < N; i++) {
    const double y = sens_chain_step(&c, 0.0, &ev);
    s1 += y;
    s2 += y * y;
  }
  const double mean = s1 / N;
  const double sd = sqrt((s2 - N * mean * mean) / (N - 1));
  /* the bound; the std of the sample std is sigma/sqrt(2N) = 0.07%, so 1% is ~14 of them */
  assert_true(fabs(sd / sigma_expected - 1.0) < 0.01);
  assert_true(fabs(mean) < 3.0 * sigma_expected / sqrt(N));
}

static void test_white_sigma(void **state) {
  (void)state;
  sens_chain_params p;
  sens_chain_params_default(&p);
  p.white_sigma = 0.25;
  check_white(0.25, &p, 1000.0);
}

/* a density N (unit/sqrt(Hz)) gives per-sample sigma N·sqrt(rate) at any rate */
static void test_white_density(void **state) {
  (void)state;
  sens_chain_params p;
  sens_chain_params_default(&p);
  p.white_density = 0.01;
  check_white(0.01 * sqrt(100.0), &p, 100.0);
  check_white(0.01 * sqrt(8000.0), &p, 8000.0);
}

/* Bartlett's variance of the lag-k sample autocovariance of an AR(1) with coefficient a, in
 * units of sigma^4/N: sum over m of (rho_m² + rho_{m+k}·rho_{m-k}) */
static double bartlett(double a, int k) {
  double s = 0.0;
  /* a^|m| < 1e-100 beyond |m| = 5000 for the a >= exp(-0.2) used here */
  for (int m = -5000; m <= 5000; m++) {
    s += pow(a, 2 * abs(m)) + pow(a, abs(m + k) + abs(m - k));
  }
  return s;
}

/* stationary variance sigma² and lag-tau autocovariance sigma²/e of the Gauss–Markov drift */
static void check_gauss_markov(double rate, double tau, long n) {
  const double sigma = 0.5, dt = 1.0 / rate;
  const int lag = (int)lround(tau * rate);
  sens_gm g;
  sens_rng r;
  sens_rng_seed(&r, 77, (uint64_t)rate);
  sens_gm_init(&g, sigma, tau, dt);
  sens_gm_reset(&g, &r);
  /* streaming: a ring of the last `lag` values instead of the whole record */
  double ring[64] = {0};
  assert_true(lag < 64);
  double var = 0, cov = 0;
  for (long i = 0; i < n; i++) {
    const double x = sens_gm_step(&g, &r);
    var += x * x;
    if (i >= lag) {
      cov += ring[i % lag] * x;
    }
    ring[i % lag] = x;
  }
  var /= (double)n;
  cov /= (double)(n - lag);
  const double a = exp(-dt / tau), s4 = sigma * sigma * sigma * sigma;
  const double sd_var = sqrt(s4 / (double)n * bartlett(a, 0));   /* std of the variance estimate */
  const double sd_cov = sqrt(s4 / (double)n * bartlett(a, lag)); /* std of the lag-tau estimate */
  /* 5 standard deviations: a fixed seed fails by chance with probability < 1e-6 */
  assert_true(fabs(var - sigma * sigma) < 5.0 * sd_var);
  assert_true(fabs(cov - sigma * sigma / exp(1.0)) < 5.0 * sd_cov);
  /* and the tolerances are tight enough to mean something: 5 sd under 3% of the target */
  printf("rate %g Hz: var/sigma² = %.5f (5 sd = %.4f), cov·e/sigma² = %.5f (5 sd = %.4f)\n",
         rate, var / (sigma * sigma), 5.0 * sd_var / (sigma * sigma),
         cov * exp(1.0) / (sigma * sigma), 5.0 * sd_cov * exp(1.0) / (sigma * sigma));
  assert_true(5.0 * sd_var < 0.03 * sigma * sigma && 5.0 * sd_cov < 0.03 * sigma * sigma / exp(1.0));
}

static void test_gauss_markov_two_rates(void **state) {
  (void)state;
  /* tau = 20 ms: lag 20 samples at 1 kHz, 5 samples at 250 Hz; both records are 8000 s long
   * (4·10^5 correlation times), which puts 5 sd of the lag-tau estimate at 2.6% */
  check_gauss_markov(1000.0, 0.02, 8000000);
  check_gauss_markov(250.0, 0.02, 2000000);
}

/* random walk: Var b(T) = N_b²·T across independent runs, at two rates */
static void check_random_walk(double rate, double duration, int runs) {
  const double density = 0.3;
  const int steps = (int)lround(duration * rate);
  double s2 = 0.0;
  for (int j = 0; j < runs; j++) {
    sens_rw w;
    sens_rng r;
    sens_rng_seed(&r, 5, (uint64_t)j);
    sens_rw_init(&w, density, 1.0 / rate);
    double b = 0.0;
    for (int i = 0; i <= steps; i++) { /* samples 0 .. steps: the last is at t = duration */
      b = sens_rw_step(&w, &r);
    }
    s2 += b * b;
  }
  const double expected = density * density * duration;
  /* the mean of b² over `runs` normal draws has relative std sqrt(2/runs) */
  assert_true(fabs(s2 / runs / expected - 1.0) < 5.0 * sqrt(2.0 / runs));
}

static void test_random_walk_two_rates(void **state) {
  (void)state;
  check_random_walk(100.0, 1.0, 20000);
  check_random_walk(1000.0, 0.1, 20000);
}

/* docs/sensors.md: the walk starts at 0 at reset, so the first sample of a chain with only a
 * random walk is the input itself, and the second is one step of N_b·√Δt away (any seed) */
static void test_random_walk_starts_at_zero(void **state) {
  (void)state;
  sens_chain_params p;
  sens_chain_params_default(&p);
  p.rw_density = 0.5;
  double second2 = 0.0;
  const int runs = 20000;
  for (int j = 0; j < runs; j++) {
    sens_chain c;
    sens_rng ev;
    sens_rng_seed(&ev, 1, 0);
    sens_chain_init(&c, &p, 100.0, 77, (uint64_t)j);
    assert_true(sens_chain_step(&c, 1.25, &ev) == 1.25);
    const double b1 = sens_chain_step(&c, 1.25, &ev) - 1.25;
    second2 += b1 * b1;
    sens_chain_reset(&c, 77, (uint64_t)j);
    assert_true(sens_chain_step(&c, 1.25, &ev) == 1.25);
  }
  /* Var b[1] = N_b²·Δt, mean of b² over `runs` draws has relative std sqrt(2/runs) */
  const double expected = p.rw_density * p.rw_density / 100.0;
  assert_true(fabs(second2 / runs / expected - 1.0) < 5.0 * sqrt(2.0 / runs));
}

/* the turn-on bias is constant within a run and N(0, sigma²) across runs */
static void test_turn_on_bias(void **state) {
  (void)state;
  enum { RUNS = 20000 };
  sens_chain_params p;
  sens_chain_params_default(&p);
  p.turn_on_sigma = 0.2;
  sens_rng ev;
  sens_rng_seed(&ev, 1, 1);
  double s2 = 0.0;
  for (int j = 0; j < RUNS; j++) {
    sens_chain c;
    sens_chain_init(&c, &p, 100.0, (uint64_t)j, 3);
    const double b = sens_chain_step(&c, 1.0, &ev) - 1.0;
    for (int i = 0; i < 10; i++) {
      assert_true(sens_chain_step(&c, 1.0, &ev) - 1.0 == b);
    }
    s2 += b * b;
  }
  /* relative std of the mean of b² is sqrt(2/RUNS) = 1% */
  assert_true(fabs(s2 / RUNS / (0.2 * 0.2) - 1.0) < 5.0 * sqrt(2.0 / RUNS));
}

/* without noise, a least-squares line through (true, measured) recovers 1 + scale and offset */
static void test_scale_offset_fit(void **state) {
  (void)state;
  enum { N = 1001 };
  sens_chain_params p;
  sens_chain_params_default(&p);
  p.scale_error = 0.0123;
  p.offset = -0.456;
  p.bias = 0.01;
  sens_chain c;
  sens_rng ev;
  sens_rng_seed(&ev, 1, 1);
  sens_chain_init(&c, &p, 1000.0, 1, 1);
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < N; i++) {
    const double x = -5.0 + 10.0 * i / (N - 1);
    const double y = sens_chain_step(&c, x, &ev);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double slope = (N * sxy - sx * sy) / (N * sxx - sx * sx);
  const double icept = (sy - slope * sx) / N;
  /* 1e-9: the bound; round-off of these sums is ~1e-13 */
  assert_true(fabs(slope - 1.0123) < 1e-9);
  assert_true(fabs(icept - (-0.456 + 0.01)) < 1e-9);
}

/* retuning keeps the drift value: no jump when sigma or tau changes */
static void test_retune_keeps_state(void **state) {
  (void)state;
  sens_chain_params p;
  sens_chain_params_default(&p);
  p.gm_sigma = 1.0;
  p.gm_tau_s = 100.0;
  sens_chain c;
  sens_rng ev;
  sens_rng_seed(&ev, 1, 1);
  sens_chain_init(&c, &p, 1000.0, 3, 3);
  double y = 0.0;
  for (int i = 0; i < 100; i++) {
    y = sens_chain_step(&c, 0.0, &ev);
  }
  p.gm_sigma = 1e-9; /* new steady state: the old drift decays with tau */
  sens_chain_retune(&c, &p);
  const double y2 = sens_chain_step(&c, 0.0, &ev);
  /* one step of decay: y·exp(-1e-3/100), plus driving noise of std 1e-9·sqrt(2e-5) = 4.5e-12
   * (1e-10 is 22 of those); a reset would have drawn a new drift of size ~1e-9 */
  assert_true(fabs(y2 - y * exp(-1e-5)) < 1e-10);
  assert_true(fabs(y) > 1e-3);
}

/* checks reject what the issue lists, naming the parameter */
static void test_check_messages(void **state) {
  (void)state;
  char err[256];
  sens_chain_params p;
  sens_chain_params_default(&p);
  p.white_sigma = -1.0;
  assert_int_equal(sens_chain_check(&p, 100.0, "list[3]", err, sizeof err), -1);
  assert_non_null(strstr(err, "list[3].noise.white.sigma"));
  sens_chain_params_default(&p);
  p.gm_sigma = 1.0;
  p.gm_tau_s = -2.0;
  assert_int_equal(sens_chain_check(&p, 100.0, "x", err, sizeof err), -1);
  assert_non_null(strstr(err, "x.noise.gauss_markov.tau_s"));
  sens_chain_params_default(&p);
  p.filter_type = SENS_FILTER_FIRST_ORDER;
  p.cutoff_hz = 50.0;
  assert_int_equal(sens_chain_check(&p, 100.0, "y", err, sizeof err), -1);
  assert_non_null(strstr(err, "y.filter.cutoff_hz"));
  p.cutoff_hz = 49.9;
  assert_int_equal(sens_chain_check(&p, 100.0, "y", err, sizeof err), 0);
}

/* Issue 9: the drift starts from its stationary distribution, not from 0. Over 20 000 seeds the
 * first sample of a chain with only a Gauss–Markov drift (tau = 100 s at 1 kHz, so one step
 * barely decorrelates it) has variance sigma²; started at 0 it would be sigma²·(1 - a²) = 2e-5
 * sigma². The mean of 20 000 squared normals has relative std sqrt(2/20000) = 1%. */
static void test_gauss_markov_first_sample(void **state) {
  (void)state;
  enum { RUNS = 20000 };
  const double sigma = 0.3;
  sens_chain_params p;
  sens_chain_params_default(&p);
  p.gm_sigma = sigma;
  p.gm_tau_s = 100.0;
  sens_rng ev;
  sens_rng_seed(&ev, 1, 1);
  double s2 = 0.0;
  for (int j = 0; j < RUNS; j++) {
    sens_chain c;
    sens_chain_init(&c, &p, 1000.0, (uint64_t)j, 5);
    const double y = sens_chain_step(&c, 0.0, &ev);
    s2 += y * y;
  }
  const double ratio = s2 / RUNS / (sigma * sigma);
  if (!(fabs(ratio - 1.0) < 5.0 * sqrt(2.0 / RUNS))) {
    fail_msg("first-sample variance / sigma² = %.5f over %d seeds (expected 1 within %.3f)",
             ratio, RUNS, 5.0 * sqrt(2.0 / RUNS));
  }
}

/* Issue 9: a spike is +size or -size with equal probability. 200 000 samples at probability
 * 0.25 give n ≈ 50 000 spikes; given n, the count of + spikes is binomial(n, 1/2) with std
 * sqrt(n)/2, and both counts must lie within 5 of those of n/2. */
static void test_spike_signs_balanced(void **state) {
  (void)state;
  enum { N = 200000 };
  sens_chain_params p;
  sens_chain_params_default(&p);
  p.fault.mode = SENS_FAULT_SPIKE;
  p.fault.probability = 0.25;
  p.fault.size = 2.0;
  sens_chain c;
  sens_rng ev;
  sens_rng_seed(&ev, 11, 4);
  sens_chain_init(&c, &p, 1000.0, 11, 4);
  long plus = 0, minus = 0, other = 0;
  for (int i = 0; i < N; i++) {
    const double y = sens_chain_step(&c, 0.0, &ev);
    plus += y == 2.0;
    minus += y == -2.0;
    other += y != 0.0 && y != 2.0 && y != -2.0;
  }
  const long n = plus + minus;
  assert_int_equal(other, 0);
  /* the probability is honoured too: n is binomial(N, 0.25), std sqrt(N·0.25·0.75) */
  assert_true(fabs((double)n - 0.25 * N) < 5.0 * sqrt(N * 0.25 * 0.75));
  const double half = 0.5 * (double)n, tol = 5.0 * 0.5 * sqrt((double)n);
  if (!(fabs((double)plus - half) < tol && fabs((double)minus - half) < tol)) {
    fail_msg("%ld spikes: %ld of +size, %ld of -size (expected %.0f each within %.0f)", n, plus,
             minus, half, tol);
  }
}

TS_MAIN(test_white_sigma, test_white_density, test_gauss_markov_two_rates,
        test_random_walk_two_rates, test_random_walk_starts_at_zero, test_turn_on_bias,
        test_scale_offset_fit, test_retune_keeps_state, test_check_messages,
        test_gauss_markov_first_sample, test_spike_signs_balanced)
