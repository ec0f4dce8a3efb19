/* tests/sensors/test_encoder.c: joint encoder (counts, angle, velocity, index), timing (rate
 * divisor, sample-and-hold, latency, drops), faults and live tuning, and the torque sensor. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "sens_fixture.h"
#include "sensors/quantize.h"
#include "support/skip.h"

static const double two_pi = 6.28318530717958647692;

/* an ideal encoder: step 2π/CPR, error at most half a step, counts = nearest count */
static void test_quantization(void **state) {
  (void)state;
  fixture f;
  assert_int_equal(fixture_load(&f, "{\"list\": [{\"name\": \"e\", \"type\": \"encoder\","
                                    " \"joint\": \"j\", \"counts_per_rev\": 1000}]}"), 0);
  const double step = two_pi / 1000.0;
  const sens_sample *s = fixture_sample(&f, "e");
  const sens_sensor *e = sens_set_sensor(f.set, 0);
  const int ca = sens_sensor_channel(e, "angle"), cc = sens_sensor_channel(e, "counts");
  assert_true(ca >= 0 && cc >= 0);
  double prev = NAN;
  int steps = 0;
  for (int n = 0; n < 20000; n++) {
    const double q = -1.0 + 2.0 * n / 20000.0; /* 0.016 of a step per sample */
    assert_int_equal(fixture_at(&f, n, q, 0.0), 1);
    assert_true(s->valid && s->seq == (uint64_t)n);
    assert_true(fabs(s->meas[ca] - q) <= 0.5 * step * (1.0 + 1e-12)); /* + round-off of q/step */
    assert_true(s->meas[cc] == (double)lround(q / step));
    assert_true(s->truth[ca] == q);
    if (n > 0 && s->meas[ca] != prev) {
      assert_true(fabs(s->meas[ca] - prev - step) < 1e-12); /* one step, to round-off */
      steps++;
    }
    prev = s->meas[ca];
  }
  assert_true(steps >= 317 && steps <= 319); /* 2 rad / step = 318.3 */
  fixture_free(&f);
}

/* ×4 quadrature: 4·CPR counts per turn; the counter wraps as a signed 32-bit register, and the
 * velocity computed from it stays right across the wrap */
static void test_quadrature_and_wrap(void **state) {
  (void)state;
  fixture f;
  assert_int_equal(fixture_load(&f, "{\"list\": [{\"name\": \"e\", \"type\": \"encoder\","
                                    " \"joint\": \"j\", \"counts_per_rev\": 1024,"
                                    " \"quadrature\": true, \"velocity\": true}]}"), 0);
  const double step = two_pi / 4096.0;
  const sens_sample *s = fixture_sample(&f, "e");
  const sens_sensor *e = sens_set_sensor(f.set, 0);
  const int cc = sens_sensor_channel(e, "counts"), cv = sens_sensor_channel(e, "velocity");
  fixture_at(&f, 0, 10.2 * step, 0.0);
  assert_true(s->meas[cc] == 10.0);
  /* walk through INT32_MAX one count per sample: 1 count/ms = step·1000 rad/s */
  const double base = 2147483645.0;
  for (int n = 1; n <= 6; n++) {
    const double counts = base + n;
    fixture_at(&f, n, counts * step, step * 1000.0);
    const int64_t expect = (int64_t)counts;
    assert_true(s->meas[cc] == (double)sens_counter_wrap(expect));
    assert_true(s->truth[cc] == s->meas[cc]);
    if (n >= 2) {
      assert_true(fabs(s->meas[cv] - step * 1000.0) < 1e-9); /* one count per sample */
    }
  }
  /* 2147483651 counts read as 2147483651 - 2^32 */
  assert_true(s->meas[cc] == (double)INT32_MIN + 3.0);
  fixture_free(&f);
}

/* a step in the truth appears exactly round(latency·rate) samples later; t_truth = t - delay */
static void test_latency(void **state) {
  (void)state;
  fixture f;
  assert_int_equal(fixture_load(&f, "{\"list\": [{\"name\": \"e\", \"type\": \"encoder\","
                                    " \"joint\": \"j\", \"counts_per_rev\": 4096, \"rate_hz\": 500,"
                                    " \"latency_s\": 0.0139}]}"), 0);
  const sens_sensor *e = sens_set_sensor(f.set, 0);
  assert_int_equal(e->delay_samples, 7); /* 0.0139 s · 500 Hz = 6.95 → 7 */
  assert_true(fabs(e->delay_s - 0.014) < 1e-15);
  const int ca = sens_sensor_channel(e, "angle");
  const sens_sample *s = &e->sample;
  int k = 0;
  for (int n = 0; n < 80; n += 2, k++) { /* 500 Hz on 1 kHz physics: every 2nd step */
    fixture_at(&f, n, k >= 20 ? 1.0 : 0.0, 0.0);
    assert_int_equal(s->valid, k >= 7);
    assert_true(fabs(s->t_truth - (s->t - 0.014)) < 1e-12);
    if (s->valid) {
      assert_true((fabs(s->meas[ca] - 1.0) < 1e-3) == (k >= 27));
    } else {
      assert_true(isnan(s->meas[ca]));
    }
  }
  fixture_free(&f);
}

/* the index channel is 1 on the sample that crosses angle 0 (mod 2π) and 0 elsewhere */
static void test_index(void **state) {
  (void)state;
  fixture f;
  assert_int_equal(fixture_load(&f, "{\"list\": [{\"name\": \"e\", \"type\": \"encoder\","
                                    " \"joint\": \"j\", \"counts_per_rev\": 500, \"index\": true,"
                                    " \"output\": \"counts\"}]}"), 0);
  const sens_sensor *e = sens_set_sensor(f.set, 0);
  const int ci = sens_sensor_channel(e, "index");
  assert_true(sens_sensor_channel(e, "angle") < 0);
  const sens_sample *s = &e->sample;
  int pulses = 0;
  for (int n = 0; n < 2000; n++) { /* -0.5 rad → 12.066 rad: crosses 0, 2π */
    fixture_at(&f, n, -0.5 + 0.00628318 * n, 0.0);
    pulses += s->meas[ci] == 1.0;
    assert_true(s->meas[ci] == s->truth[ci]);
  }
  assert_int_equal(pulses, 2);
  fixture_free(&f);
}

/* incremental: the counter reads 0 at the first sample wherever the joint stands, again after a
 * reset, counts from there, and the index pulse comes at index_angle + 2πk, not at 0 */
static void test_incremental_mode(void **state) {
  (void)state;
  fixture f;
  assert_int_equal(fixture_load(&f, "{\"list\": [{\"name\": \"e\", \"type\": \"encoder\","
                                    " \"joint\": \"j\", \"counts_per_rev\": 1000,"
                                    " \"mode\": \"incremental\", \"index_angle\": 1.0,"
                                    " \"index\": true, \"velocity\": true}]}"), 0);
  const sens_sensor *e = sens_set_sensor(f.set, 0);
  const int cc = sens_sensor_channel(e, "counts"), ca = sens_sensor_channel(e, "angle");
  const int ci = sens_sensor_channel(e, "index"), cv = sens_sensor_channel(e, "velocity");
  const sens_sample *s = &e->sample;
  const double step = two_pi / 1000.0;
  const double q0 = 0.7301; /* power-up angle: not on a count of the wheel */
  fixture_at(&f, 0, q0, 0.0);
  assert_true(s->meas[cc] == 0.0 && s->truth[cc] == 0.0);
  assert_true(s->meas[ca] == 0.0);
  assert_true(fabs(s->truth[ca]) <= 0.5 * step);
  assert_true(s->meas[cv] == 0.0);
  /* sweep up 0.4 rad: the index at 1.0 rad is crossed once, the counter follows the wheel */
  int pulses = 0, pulse_n = -1;
  for (int n = 1; n <= 400; n++) {
    const double q = q0 + 0.001 * n;
    fixture_at(&f, n, q, 1.0);
    const double wheel0 = (double)lround((q0 - 1.0) / step);
    assert_true(s->meas[cc] == (double)lround((q - 1.0) / step) - wheel0);
    assert_true(s->meas[cc] == s->truth[cc]);
    assert_true(fabs(s->meas[ca] - s->meas[cc] * step) <= 1e-15);
    if (s->meas[ci] == 1.0) {
      pulses++, pulse_n = n;
    }
  }
  assert_int_equal(pulses, 1);
  assert_true(fabs(q0 + 0.001 * pulse_n - 1.0) <= 0.001 + step); /* at the configured angle */
  /* a reset (the runtime's reset, a power cycle of the board): 0 again where the joint is */
  sens_set_reset(f.set, 9);
  fixture_at(&f, 401, 2.5, 0.0);
  assert_true(s->meas[cc] == 0.0 && s->truth[cc] == 0.0);
  fixture_at(&f, 402, 2.5 - 10 * step, 0.0);
  assert_true(s->meas[cc] == -10.0);
  fixture_free(&f);
}

/* absolute with zero_offset: counts from the configured joint angle, index mark there too */
static void test_absolute_zero_offset(void **state) {
  (void)state;
  fixture f;
  assert_int_equal(fixture_load(&f, "{\"list\": [{\"name\": \"e\", \"type\": \"encoder\","
                                    " \"joint\": \"j\", \"counts_per_rev\": 1000,"
                                    " \"mode\": \"absolute\", \"zero_offset\": -0.25,"
                                    " \"index\": true}]}"), 0);
  const sens_sensor *e = sens_set_sensor(f.set, 0);
  const int cc = sens_sensor_channel(e, "counts"), ca = sens_sensor_channel(e, "angle");
  const int ci = sens_sensor_channel(e, "index");
  const sens_sample *s = &e->sample;
  const double step = two_pi / 1000.0;
  int pulses = 0;
  for (int n = 0; n < 300; n++) {
    const double q = 0.1 - 0.002 * n; /* 0.1 → -0.498: crosses the zero at -0.25 once */
    fixture_at(&f, n, q, 0.0);
    assert_true(s->meas[cc] == (double)lround((q + 0.25) / step));
    assert_true(s->truth[ca] == q + 0.25);
    pulses += s->meas[ci] == 1.0;
  }
  assert_int_equal(pulses, 1);
  fixture_free(&f);
}

/* the mode keys: unknown mode, an origin key of the other mode, a non-finite origin */
static void test_mode_errors(void **state) {
  (void)state;
  static const char *const bad[][2] = {
      {"\"mode\": \"relative\"", "list[0].mode: expected \"absolute\" or \"incremental\""},
      {"\"mode\": \"incremental\", \"zero_offset\": 1",
       "list[0].zero_offset: only for an absolute encoder"},
      {"\"index_angle\": 1", "list[0].index_angle: only for an incremental encoder"},
      {"\"zero_offset\": 1e9", "list[0].zero_offset: must be a joint angle"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    char json[512];
    snprintf(json, sizeof json,
             "{\"list\": [{\"name\": \"e\", \"type\": \"encoder\", \"joint\": \"j\","
             " \"counts_per_rev\": 100, %s}]}",
             bad[k][0]);
    fixture f;
    assert_int_not_equal(fixture_load(&f, json), 0);
    if (!strstr(f.err, bad[k][1])) {
      fail_msg("%s: got '%s', expected '%s'", bad[k][0], f.err, bad[k][1]);
    }
    fixture_free(&f);
  }
}

/* rate dividing the physics rate: every k-th step; any other rate: own clock, truth held */
static void test_rates(void **state) {
  (void)state;
  fixture f;
  assert_int_equal(
      fixture_load(&f, "{\"list\": [{\"name\": \"a\", \"type\": \"encoder\", \"joint\": \"j\","
                       " \"counts_per_rev\": 4096, \"rate_hz\": 250},"
                       " {\"name\": \"b\", \"type\": \"encoder\", \"joint\": \"j\","
                       " \"counts_per_rev\": 4096, \"rate_hz\": 300}]}"),
      0);
  const sens_sensor *a = sens_set_sensor(f.set, 0), *b = sens_set_sensor(f.set, 1);
  assert_int_equal(a->divisor, 4);
  assert_int_equal(b->divisor, 0);
  int na = 0, nb = 0;
  for (int n = 0; n <= 1000; n++) {
    fixture_at(&f, n, 0.001 * n, 1.0); /* the angle encodes the physics step */
    if (a->fresh) {
      assert_int_equal(n % 4, 0);
      assert_true(a->sample.t == f.d->time && a->sample.seq == (uint64_t)na);
      na++;
    }
    if (b->fresh) {
      nb += b->fresh;
      const double t = (double)(nb - 1) / 300.0;
      assert_true(fabs(b->sample.t - t) < 1e-12);
      /* held truth: the last physics step at or before t */
      const double th = floor(t * 1000.0 + 1e-9) / 1000.0;
      assert_true(fabs(b->sample.t_truth - th) < 1e-12);
      assert_true(fabs(b->sample.truth[1] - th) < 1e-12); /* the angle at step th·1000 */
    }
  }
  assert_int_equal(na, 251);
  assert_int_equal(nb, 301);
  fixture_free(&f);
}

/* dropped samples: the observed fraction matches the probability, sequence numbers stay
 * contiguous */
static void test_drops(void **state) {
  (void)state;
  fixture f;
  assert_int_equal(fixture_load(&f, "{\"seed\": 11, \"list\": [{\"name\": \"e\", \"type\": "
                                    "\"encoder\", \"joint\": \"j\", \"counts_per_rev\": 4096,"
                                    " \"drop_probability\": 0.2}]}"), 0);
  const sens_sample *s = fixture_sample(&f, "e");
  enum { N = 20000 };
  int dropped = 0;
  for (int n = 0; n < N; n++) {
    fixture_at(&f, n, 0.1, 0.0);
    assert_true(s->seq == (uint64_t)n);
    dropped += !s->valid;
  }
  /* binomial: std of the fraction sqrt(p(1-p)/N) = 0.0028; 5 of them */
  assert_true(fabs((double)dropped / N - 0.2) < 5.0 * sqrt(0.2 * 0.8 / N));
  fixture_free(&f);
}

/* faults switched at run time: offset jump, stuck, spikes, dead, and back to none */
static void test_faults(void **state) {
  (void)state;
  fixture f;
  assert_int_equal(fixture_load(&f, "{\"list\": [{\"name\": \"e\", \"type\": \"encoder\","
                                    " \"joint\": \"j\", \"counts_per_rev\": 1000}]}"), 0);
  const double step = two_pi / 1000.0;
  const sens_sensor *e = sens_set_sensor(f.set, 0);
  const int ca = sens_sensor_channel(e, "angle");
  const sens_sample *s = &e->sample;
  long long n = 0;
  fixture_at(&f, n++, 0.3, 0.0);
  const double before = s->meas[ca];
  sens_fault fault = {SENS_FAULT_OFFSET, 0.0, 0.0, 50.0 * step};
  assert_int_equal(sens_set_fault(f.set, "e", NULL, &fault, f.err, sizeof f.err), 0);
  fixture_at(&f, n++, 0.3, 0.0);
  assert_true(fabs(s->meas[ca] - before - 50.0 * step) < 1e-12);
  fault.mode = SENS_FAULT_STUCK;
  sens_set_fault(f.set, "e", NULL, &fault, f.err, sizeof f.err);
  const double stuck = s->meas[ca];
  for (int i = 0; i < 10; i++) {
    fixture_at(&f, n++, 0.3 + 0.1 * i, 0.0);
    assert_true(s->meas[ca] == stuck && s->truth[ca] == 0.3 + 0.1 * i);
  }
  fault = (sens_fault){SENS_FAULT_SPIKE, 0.1, 100.0 * step, 0.0};
  sens_set_fault(f.set, "e", NULL, &fault, f.err, sizeof f.err);
  int spikes = 0;
  enum { N = 10000 };
  for (int i = 0; i < N; i++) {
    fixture_at(&f, n++, 0.3, 0.0);
    const double dev = fabs(s->meas[ca] - before);
    assert_true(dev < 1e-12 || fabs(dev - 100.0 * step) < 1e-12);
    spikes += dev > 1e-12;
  }
  assert_true(fabs((double)spikes / N - 0.1) < 5.0 * sqrt(0.1 * 0.9 / N)); /* binomial, 5 sd */
  fault.mode = SENS_FAULT_DEAD;
  sens_set_fault(f.set, "e", NULL, &fault, f.err, sizeof f.err);
  const uint64_t seq = s->seq;
  fixture_at(&f, n++, 0.3, 0.0);
  assert_true(!s->valid && s->seq == seq + 1 && isnan(s->meas[ca]));
  fault.mode = SENS_FAULT_NONE;
  sens_set_fault(f.set, "e", NULL, &fault, f.err, sizeof f.err);
  fixture_at(&f, n++, 0.3, 0.0);
  assert_true(s->valid && s->meas[ca] == before);
  fixture_free(&f);
}

/* live tuning changes a parameter without a reset; bad values are refused and change nothing */
static void test_live_tuning(void **state) {
  (void)state;
  fixture f;
  assert_int_equal(fixture_load(&f, "{\"list\": [{\"name\": \"t\", \"type\": \"torque\","
                                    " \"joint\": \"j\", \"filter\": {\"cutoff_hz\": 5}}]}"), 0);
  const sens_sample *s = fixture_sample(&f, "t");
  long long n = 0;
  f.d->qfrc_applied[0] = 1.0;
  fixture_at(&f, n++, 0.0, 0.0); /* primes the filter at 1 */
  f.d->qfrc_applied[0] = 0.0;
  for (int i = 0; i < 50; i++) {
    fixture_at(&f, n++, 0.0, 0.0);
  }
  const double y = s->meas[0];
  assert_true(y > 0.1 && y < 0.5); /* mid-transient: exp(-2π·5·0.05) = 0.21 */
  assert_int_equal(sens_set_param(f.set, "t", "filter.cutoff_hz", 10.0, f.err, sizeof f.err), 0);
  fixture_at(&f, n++, 0.0, 0.0);
  /* the new filter continues from y: one step of decay with a = exp(-2π·10/1000) */
  assert_true(fabs(s->meas[0] - y * exp(-2.0 * 3.14159265358979323846 * 10.0 / 1000.0)) < 1e-12);
  assert_int_equal(sens_set_param(f.set, "t", "filter.cutoff_hz", 600.0, f.err, sizeof f.err),
                   SENS_EINVAL);
  assert_non_null(strstr(f.err, "t.filter.cutoff_hz"));
  assert_int_equal(sens_set_param(f.set, "t", "noise.white.sigma", -1.0, f.err, sizeof f.err),
                   SENS_EINVAL);
  assert_non_null(strstr(f.err, "noise.white.sigma"));
  assert_int_equal(sens_set_param(f.set, "t", "noise.bogus", 1.0, f.err, sizeof f.err),
                   SENS_ENOTFOUND);
  assert_int_equal(sens_set_param(f.set, "nope", "noise.offset", 1.0, f.err, sizeof f.err),
                   SENS_ENOTFOUND);
  assert_true(sens_set_sensor(f.set, 0)->chain[0].p.cutoff_hz == 10.0); /* unchanged */
  fixture_free(&f);
}

/* torque sensor: a line through (applied, measured) recovers scale and offset to 1e-9; with a
 * torque constant and gear ratio the channel is the motor current */
static void test_torque_scale_offset(void **state) {
  (void)state;
  fixture f;
  assert_int_equal(fixture_load(&f, "{\"list\": [{\"name\": \"t\", \"type\": \"torque\","
                                    " \"joint\": \"j\", \"noise\": {\"scale_error\": -0.02,"
                                    " \"offset\": 0.15}},"
                                    " {\"name\": \"i\", \"type\": \"torque\", \"joint\": \"j\","
                                    " \"torque_constant_nm_per_a\": 0.05, \"gear_ratio\": 10}]}"),
                   0);
  const sens_sample *s = fixture_sample(&f, "t"), *si = fixture_sample(&f, "i");
  assert_string_equal(sens_set_sensor(f.set, 1)->channel[0], "current");
  enum { N = 201 };
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int n = 0; n < N; n++) {
    const double tau = -2.0 + 4.0 * n / (N - 1);
    f.d->qfrc_applied[0] = tau;
    fixture_at(&f, n, 0.0, 0.0);
    sx += tau;
    sy += s->meas[0];
    sxx += tau * tau;
    sxy += tau * s->meas[0];
    assert_true(fabs(si->meas[0] - tau / (10.0 * 0.05)) < 1e-15 * 10.0); /* round-off */
  }
  const double slope = (N * sxy - sx * sy) / (N * sxx - sx * sx);
  assert_true(fabs(slope - 0.98) < 1e-9);                    /* the 1e-9 */
  assert_true(fabs((sy - slope * sx) / N - 0.15) < 1e-9);
  fixture_free(&f);
}

TS_MAIN(test_quantization, test_quadrature_and_wrap, test_latency, test_index, test_rates,
        test_drops, test_faults, test_live_tuning, test_torque_scale_offset, test_incremental_mode,
        test_absolute_zero_offset, test_mode_errors)
