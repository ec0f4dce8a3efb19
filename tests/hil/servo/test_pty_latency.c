/* tests/hil/servo/test_pty_latency.c: the pty delivery latency the servo bus takes out of its
 * replies (hil/servo/pty_latency.c). Not a timing verdict (the figure depends on the machine):
 * the measurement must find a latency at all (a pty never delivers in zero time), stay within
 * its clamp, and take any sample count it is given. The round trips it corrects are judged by
 * test_servo_timing (label timing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

#include "hil/servo/pty_latency.h"
#include "support/skip.h"

static void test_latency_found_and_clamped(void **state) {
  (void)state;
  const double lat = pty_latency_measure(9);
  printf("pty latency: median of 9 one-byte transfers %.1f us (clamp %.0f us)\n", lat * 1e6,
         PTY_LATENCY_MAX_S * 1e6);
  assert_true(lat > 0);
  assert_true(lat <= PTY_LATENCY_MAX_S);
}

/* 0, 1 and more than the 64 kept: each still measures */
static void test_any_sample_count(void **state) {
  (void)state;
  const int counts[] = {0, 1, 1000};
  for (int i = 0; i < 3; i++) {
    const double lat = pty_latency_measure(counts[i]);
    if (!(lat > 0 && lat <= PTY_LATENCY_MAX_S)) {
      fail_msg("%d samples: latency %g s", counts[i], lat);
    }
  }
}

TS_MAIN(test_latency_found_and_clamped, test_any_sample_count)
