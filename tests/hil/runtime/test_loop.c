/* tests/hil/test_loop.c: the realtime loop in-process — pacing by absolute deadlines, the tick
 * count, and the deadline offset the status reports (docs/messages.md, section 4), which tools on
 * the same host use to line their clock up with the ticks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "hil/runtime/runtime.h"
#include "hil/zmq/json_messages.h"

#define PROBE ACHILLES_SOURCE_DIR "/configs/latency_probe.json"

static double monotonic_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static hil_runtime *make(hil_mode mode, double duration_s) {
  hil_options o;
  hil_options_default(&o);
  o.mode = mode;
  o.quiet = 1;
  o.status_period_s = 0;
  o.duration_s = duration_s;
  char err[512];
  hil_runtime *rt = hil_runtime_new(PROBE, &o, err, sizeof err);
  if (!rt) {
    fail_msg("%s", err);
  }
  return rt;
}

/* 0.2 s at 1 kHz: 200 ticks, no sooner than their deadlines; the last tick stepped from
 * t - period and was due at that time plus the offset, between the start of the run and now. */
static void test_realtime_deadlines_and_offset(void **state) {
  (void)state;
  hil_runtime *rt = make(HIL_MODE_REALTIME, 0.2);
  double period = hil_runtime_model(rt)->opt.timestep;
  double before = monotonic_now();
  assert_int_equal(hil_runtime_run(rt), HIL_OK);
  double after = monotonic_now();
  hil_status st;
  hil_runtime_status(rt, &st);
  assert_int_equal(st.steps, 200);
  assert_true(after - before >= 0.2 - period); /* the first tick is due at once */
  double last_due = st.sim_time - period + st.deadline_offset;
  if (!(last_due >= before && last_due <= after)) {
    fail_msg("last tick due at %.6f, outside the run [%.6f, %.6f]", last_due, before, after);
  }
  /* without skipped ticks, tick 0 was due when the run began */
  if (st.skipped == 0 && !(st.deadline_offset >= before && st.deadline_offset <= before + 0.05)) {
    fail_msg("tick 0 due at %.6f, run began at %.6f", st.deadline_offset, before);
  }
  hil_runtime_destroy(&rt);
}

/* Lockstep and fast runs have no deadlines: the offset is 0. */
static void test_offset_is_zero_without_deadlines(void **state) {
  (void)state;
  hil_runtime *rt = make(HIL_MODE_FAST, 0.05);
  assert_int_equal(hil_runtime_run(rt), HIL_OK);
  hil_status st;
  hil_runtime_status(rt, &st);
  assert_int_equal(st.steps, 50);
  assert_true(st.deadline_offset == 0);
  hil_runtime_destroy(&rt);
}

/* The constraint stage reaches the status: a box dropped on the floor rests on four contacts
 * (16 pyramid rows) after 1 s of fast mode, and the status message carries them. */
static void test_status_reports_constraints(void **state) {
  (void)state;
  char path[] = "/tmp/achilles_drop_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  assert_non_null(f);
  fputs("{ \"name\": \"box\",\n"
        "  \"bodies\": [ { \"name\": \"b\", \"parent\": \"world\", \"pos\": [0, 0, 0.15],\n"
        "    \"joint\": { \"name\": \"z\", \"type\": \"slide\", \"axis\": [0, 0, 1] },\n"
        "    \"inertial\": { \"mass\": 1, \"inertia\": [0.001, 0.001, 0.001, 0, 0, 0] } } ],\n"
        "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },\n"
        "    { \"name\": \"cube\", \"body\": \"b\", \"type\": \"box\", \"size\": [0.1, 0.1, 0.1] } ] }\n",
        f);
  fclose(f);
  hil_options o;
  hil_options_default(&o);
  o.mode = HIL_MODE_FAST;
  o.quiet = 1;
  o.status_period_s = 0;
  o.duration_s = 1.0;
  char err[512];
  hil_runtime *rt = hil_runtime_new(path, &o, err, sizeof err);
  remove(path);
  if (!rt) {
    fail_msg("%s", err);
  }
  assert_int_equal(hil_runtime_run(rt), HIL_OK);
  hil_status st;
  hil_runtime_status(rt, &st);
  assert_int_equal(st.contacts, 4);
  assert_int_equal(st.constraint_rows, 16);
  assert_true(st.constraint_active > 0 && st.solver_iterations > 0);
  char json[4096];
  assert_true(hil_msg_encode_status(json, sizeof json, &st) > 0);
  char expect[128];
  snprintf(expect, sizeof expect, "\"constraints\":{\"contacts\":4,\"rows\":16,\"active\":%d,",
           st.constraint_active);
  assert_non_null(strstr(json, expect));
  hil_runtime_destroy(&rt);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_realtime_deadlines_and_offset),
      cmocka_unit_test(test_offset_is_zero_without_deadlines),
      cmocka_unit_test(test_status_reports_constraints),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
