/* tests/hil/servo/bench_servo_bus.c: the servo bus's cost on the loop (CTest label `timing`).
 *
 * The desk arm on six STS3215 (configs/desk_arm.urdf with configs/desk_arm.sts3215.servos.json)
 * runs in realtime at 1 kHz, and a controller sync-reads the six present positions at 1 kHz
 * (LeRobot's read; the STS's return delay is 0): the loop's wake-up lateness p50/p99
 * and its compute p99 beside the same robot run without the bus, alternately, twice each. The
 * ratios are printed; the test fails only when the controller's reads went unanswered. */
#define _GNU_SOURCE /* clock_nanosleep */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hil/servo/servo_file.h"
#include "servo_client.h"
#include "sim/json_read.h"

#define URDF ACHILLES_SOURCE_DIR "/configs/desk_arm.urdf"
#define SERVOS ACHILLES_SOURCE_DIR "/configs/desk_arm.sts3215.servos.json"
#define RUN_S 3.0

typedef struct result {
  hil_status st;
  long reads, unanswered;
} result;

static void sleep_until(double t) {
  struct timespec ts = {(time_t)t, (long)((t - floor(t)) * 1e9)};
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/* SYNC_READ of Present Position of IDs 1-6 every millisecond for RUN_S */
static void sync_reads(client *c, result *r) {
  const uint8_t sr[] = {56, 2, 1, 2, 3, 4, 5, 6};
  double next = ts_now();
  const double end = next + RUN_S;
  while (next < end) {
    ft_send(c, 0xFE, 0x82, sr, sizeof sr);
    for (int i = 0; i < 6; i++) {
      status s;
      if (!ft_receive(c, &s, REPLY_WAIT_S)) {
        r->unanswered++;
        break;
      }
    }
    r->reads++;
    next += 1e-3;
    if (next > ts_now()) {
      sleep_until(next);
    } else {
      next = ts_now(); /* behind: no burst to catch up */
    }
  }
}

static result run(const char *config, int with_bus) {
  result r;
  memset(&r, 0, sizeof r);
  char err[1024];
  hil_runtime *rt = ts_runtime(config, HIL_MODE_REALTIME, 0);
  client c = {.fd = -1, .n = 0};
  if (with_bus) {
    servo_bus_options bo;
    servo_bus_options_default(&bo);
    bo.quiet = 1;
    hil_transport *bus = servo_bus_new(&bo, config, err, sizeof err);
    if (!bus) {
      fail_msg("%s", err);
    }
    assert_int_equal(hil_runtime_add_transport(rt, bus), HIL_OK);
    client_open(&c, servo_bus_path(bus)); /* the STS3215's return delay is 0 */
  }
  ts_loop loop;
  ts_loop_start(&loop, rt);
  ts_sleep(0.2); /* past the start */
  if (with_bus) {
    sync_reads(&c, &r);
  } else {
    ts_sleep(RUN_S);
  }
  ts_loop_stop(&loop);
  hil_runtime_status_total(rt, &r.st);
  if (c.fd >= 0) {
    close(c.fd);
  }
  hil_runtime_destroy(&rt);
  return r;
}

static void test_bus_cost_on_the_loop(void **state) {
  (void)state;
  char name[1200], err[1024];
  if (servo_file_pin(name, sizeof name, URDF, SERVOS, err, sizeof err) != 0) {
    fail_msg("%s", err);
  }
  double late50[2] = {0}, late99[2] = {0}, comp99[2] = {0};
  long reads = 0, unanswered = 0;
  for (int round = 0; round < 2; round++) {
    for (int with_bus = 1; with_bus >= 0; with_bus--) {
      const result r = run(name, with_bus);
      printf("servo bus cost: %s: late p50 %.0f us, p99 %.0f us, compute p99 %.1f us\n",
             with_bus ? "six servos sync-read at 1 kHz" : "the same robot without the bus",
             r.st.late_p50 * 1e6, r.st.late_p99 * 1e6, r.st.compute_p99 * 1e6);
      if (with_bus) {
        printf("servo bus cost: %ld sync reads in %.0f s, %ld unanswered\n", r.reads, RUN_S,
               r.unanswered);
        reads += r.reads, unanswered += r.unanswered;
      }
      late50[with_bus] += r.st.late_p50, late99[with_bus] += r.st.late_p99;
      comp99[with_bus] += r.st.compute_p99;
    }
  }
  sim_json_unpin();
  printf("servo bus cost: with/without the bus: late p50 %.2f, late p99 %.2f, compute p99 %.2f "
         "(means of 2 runs each)\n",
         late50[1] / late50[0], late99[1] / late99[0], comp99[1] / comp99[0]);
  assert_true(reads > 0);
  assert_int_equal(unanswered, 0);
}

int main(void) {
  make_crc_table();
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_bus_cost_on_the_loop)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
