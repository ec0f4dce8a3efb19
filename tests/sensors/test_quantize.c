/* tests/sensors/test_quantize.c: quantization step and error, angle wrap, 32-bit counter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "sensors/quantize.h"
#include "support/skip.h"

static const double two_pi = 6.28318530717958647692;

/* on a slow ramp, consecutive distinct outputs differ by exactly 2π/CPR and the error never
 * exceeds half a step */
static void test_step_and_error(void **state) {
  (void)state;
  const double step = two_pi / 4096.0;
  double prev = sens_quantize(-1.0, step);
  int levels = 0;
  for (int i = 0; i <= 200000; i++) {
    const double x = -1.0 + 2.0 * i / 200000.0; /* 0.1 of a step per sample */
    const double q = sens_quantize(x, step);
    assert_true(fabs(q - x) <= 0.5 * step * (1.0 + 1e-12)); /* relative round-off of x/step */
    if (q != prev) {
      assert_true(fabs((q - prev) - step) < 1e-12); /* one step, to round-off */
      levels++;
    }
    prev = q;
  }
  /* 2 rad span / step = 1303.8: 1303 or 1304 transitions */
  assert_true(levels == 1303 || levels == 1304);
}

static void test_wrap_angle(void **state) {
  (void)state;
  const double pi = 0.5 * two_pi;
  for (int k = -5; k <= 5; k++) {
    for (double x = -3.0; x <= 3.0; x += 0.25) {
      const double w = sens_wrap_angle(x + two_pi * k);
      assert_true(w >= -pi && w < pi);
      assert_true(fabs(w - x) < 1e-12); /* k·2π added in double: ~1e-14 */
    }
  }
  assert_true(sens_wrap_angle(pi) == -pi);
}

/* a 32-bit counter wraps from INT32_MAX to INT32_MIN and differences stay right across it */
static void test_counter_wrap(void **state) {
  (void)state;
  assert_int_equal(sens_counter_wrap(INT32_MAX), INT32_MAX);
  assert_int_equal(sens_counter_wrap((int64_t)INT32_MAX + 1), INT32_MIN);
  assert_int_equal(sens_counter_wrap((int64_t)INT32_MIN - 1), INT32_MAX);
  assert_int_equal(sens_counter_wrap(((int64_t)1 << 32) + 5), 5);
  assert_int_equal(sens_counter_wrap(-((int64_t)1 << 32) - 5), -5);
  assert_int_equal(sens_counter_diff(INT32_MIN + 2, INT32_MAX - 1), 4);
  assert_int_equal(sens_counter_diff(INT32_MAX - 1, INT32_MIN + 2), -4);
  /* counts of an angle: nearest integer of angle/step */
  const double step = two_pi / 16384.0;
  assert_true(sens_count(1000.0 * two_pi + 0.4 * step, step) == 16384000);
  assert_true(sens_count(-1000.0 * two_pi - 0.6 * step, step) == -16384001);
}

TS_MAIN(test_step_and_error, test_wrap_angle, test_counter_wrap)
