/* tests/hil/servo/test_servo_timing.c: the servo bus's timing against the wire's, in wall time
 * (CTest label `timing`: run on request, alone on the machine; it prints its figures).
 *
 *  - A PING and a SYNC_READ of four servos at 57 600 and 1 000 000 baud, round trip from the
 *    controller's write to the last reply's last byte, median of 41, within 10 % of the two-way
 *    byte-time formula: (request bytes + reply bytes) × 10 / baud + the return delays.
 *  - A controller that closes and reopens the port 20 times (DynamixelSDK's setBaudRate) gets
 *    every first PING after a reopen answered within 2 ms at 1 Mbaud.
 *
 * configs/servo_arm.json: four X-series servos, return delay 250 × 2 µs each. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <cmocka.h>

#include "servo_client.h"

#define ARM ACHILLES_SOURCE_DIR "/configs/servo_arm.json"
#define N 41
#define DELAY 500e-6 /* the X-series' default return delay */

static double ping(fixture *f) {
  const double t0 = ts_now();
  send_packet(&f->c, 1, 0x01, NULL, 0);
  expect_status(&f->c, 1, "a timed PING");
  return ts_now() - t0;
}

static double sync_read4(fixture *f) {
  const uint8_t sr[] = {132, 0, 4, 0, 1, 2, 3, 4}; /* Present Position of IDs 1-4 */
  const double t0 = ts_now();
  send_packet(&f->c, 0xFE, 0x82, sr, sizeof sr);
  for (uint8_t id = 1; id <= 4; id++) {
    expect_status(&f->c, id, "a timed SYNC_READ");
  }
  return ts_now() - t0;
}

static int within(const char *what, long baud, double *t, double formula) {
  const double med = median(t, N), excess = (med - formula) / formula;
  printf("bus timing: %s at %ld baud: median round trip %.0f us, formula %.0f us (%+.1f %%)\n",
         what, baud, med * 1e6, formula * 1e6, 100 * excess);
  return fabs(excess) <= 0.10;
}

static void test_ping_and_sync_read_timing(void **state) {
  (void)state;
  const long bauds[2] = {57600, 1000000};
  int ok = 1;
  for (int k = 0; k < 2; k++) {
    fixture f;
    start_with(&f, ARM, bauds[k], 0);
    const double bt = 10.0 / (double)bauds[k];
    double tp[N], ts[N];
    for (int i = 0; i < N; i++) {
      tp[i] = ping(&f);
      ts[i] = sync_read4(&f);
    }
    stop(&f);
    /* PING: 10 bytes out, a 14-byte status back; SYNC_READ: 18 out, four 15-byte statuses */
    ok &= within("PING", bauds[k], tp, (10 + 14) * bt + DELAY);
    ok &= within("SYNC_READ of 4", bauds[k], ts, (18 + 4 * 15) * bt + 4 * DELAY);
  }
  assert_true(ok);
}

static void test_reopen_timing(void **state) {
  (void)state;
  fixture f;
  start_with(&f, ARM, 1000000, 0);
  double t[20], worst = 0;
  for (int i = 0; i < 20; i++) {
    close(f.c.fd);
    ts_sleep(0.005); /* the port closed for a moment, as setBaudRate's close and open */
    client_open(&f.c, servo_bus_path(f.bus));
    t[i] = ping(&f);
    worst = fmax(worst, t[i]);
  }
  stop(&f);
  printf("bus timing: first PING after each of 20 reopens at 1 Mbaud: median %.0f us, worst "
         "%.0f us (formula %.0f us, bound 2000 us)\n",
         median(t, 20) * 1e6, worst * 1e6, ((10 + 14) * 10e-6 + DELAY) * 1e6);
  assert_true(worst <= 2e-3);
}

int main(void) {
  make_crc_table();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ping_and_sync_read_timing),
      cmocka_unit_test(test_reopen_timing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
