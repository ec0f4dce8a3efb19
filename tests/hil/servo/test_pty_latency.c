/* tests/hil/servo/test_pty_latency.c: the pty delivery latency the servo bus takes out of its
 * replies (hil/servo/pty_latency.c). Not a timing verdict (the figure depends on the machine):
 * the measurement must find a latency at all (a pty never delivers in zero time), stay within
 * its clamp, and take any sample count it is given; its summary of samples (median, clamp) is
 * checked on numbers written here. The round trips it corrects are judged by
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

/* the summary: the median (of an odd and an even count), a stall clamped, nothing is 0 */
static void test_summary(void **state) {
  (void)state;
  double odd[] = {90e-6, 10e-6, 30e-6}, even[] = {40e-6, 20e-6, 1.0, 30e-6};
  double stalled[] = {2e-3, 150e-6, 3e-3}, negative[] = {-1e-6};
  assert_true(pty_latency_summary(odd, 3) == 30e-6);
  assert_true(pty_latency_summary(even, 4) == 40e-6);
  assert_true(pty_latency_summary(stalled, 3) == PTY_LATENCY_MAX_S);
  assert_true(pty_latency_summary(negative, 1) == 0);
  assert_true(pty_latency_summary(NULL, 0) == 0);
}

TS_MAIN(test_latency_found_and_clamped, test_any_sample_count, test_summary)
