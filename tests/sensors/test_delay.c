/* tests/sensors/test_delay.c: a step appears exactly `length` samples later. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sensors/delay.h"
#include "support/skip.h"

static void check_step(int length) {
  double storage[3 * 16];
  sens_delay d;
  sens_delay_init(&d, length ? storage : NULL, length, 3);
  for (int n = 0; n < 40; n++) {
    const double x = n >= 10 ? 1.0 : 0.0; /* a step at sample 10 */
    double in[3] = {x, (double)n, -x};
    double out[3] = {-7, -7, -7};
    const int ok = sens_delay_push(&d, in, out);
    assert_int_equal(ok, n >= length);
    if (ok) {
      assert_true(out[0] == (n - length >= 10 ? 1.0 : 0.0));
      assert_true(out[1] == (double)(n - length));
      assert_true(out[2] == -out[0]);
    } else {
      assert_true(out[0] == -7); /* untouched while filling */
    }
  }
}

static void test_step_delay(void **state) {
  (void)state;
  for (int k = 0; k <= 16; k++) {
    check_step(k);
  }
}

/* reset empties the line: it fills again before anything comes out */
static void test_reset(void **state) {
  (void)state;
  double storage[2];
  sens_delay d;
  sens_delay_init(&d, storage, 2, 1);
  double v[1], out[1];
  for (int n = 0; n < 10; n++) {
    v[0] = n;
    if (n == 5) {
      sens_delay_reset(&d);
    }
    const int ok = sens_delay_push(&d, v, out);
    assert_int_equal(ok, n < 5 ? n >= 2 : n >= 7);
    if (ok) {
      assert_true(out[0] == n - 2);
    }
  }
}

TS_MAIN(test_step_delay, test_reset)
