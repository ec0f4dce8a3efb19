/* tests/hil/test_loop.c: the realtime loop in-process — pacing by absolute deadlines, the tick
 * count, and the deadline offset the status reports (docs/messages.md, section 4), which tools on
 * the same host use to line their clock up with the ticks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hil/runtime/runtime.h"
#include "hil/transport.h"
#include "hil/zmq/json_messages.h"
#include "support/runtime.h"
#include "support/skip.h"
#include "support/tmp.h"
#include "support/wait.h"

#define PROBE ACHILLES_SOURCE_DIR "/configs/latency_probe.json"
/* a 1 kg box dropped from 5 cm onto the floor */
#define BOX ACHILLES_SOURCE_DIR "/tests/support/robots/box_on_floor.json"
#define REST ACHILLES_SOURCE_DIR "/tests/support/robots/rest_box_and_arm.json"

/* a quiet runtime of the latency probe, without periodic status */
static hil_runtime *make(hil_mode mode, double duration_s) {
  return ts_runtime(PROBE, mode, duration_s);
}

/* 0.2 s at 1 kHz: 200 ticks, no sooner than their deadlines; the last tick stepped from
 * t - period and was due at that time plus the offset, between the start of the run and now. */
static void test_realtime_deadlines_and_offset(void **state) {
  (void)state;
  hil_runtime *rt = make(HIL_MODE_REALTIME, 0.2);
  double period = hil_runtime_model(rt)->opt.timestep;
  double before = ts_now();
  assert_int_equal(hil_runtime_run(rt), HIL_OK);
  double after = ts_now();
  hil_status st;
  hil_runtime_status(rt, &st);
  assert_int_equal(st.steps, 200);
  assert_true(after - before >= 0.2 - period); /* the first tick is due at once */
  double last_due = st.sim_time - period + st.deadline_offset;
  if (!(last_due >= before && last_due <= after)) {
    fail_msg("last tick due at %.6f, outside the run [%.6f, %.6f]", last_due, before, after);
  }
  /* without skipped ticks, tick 0 was due when the run began (a bound of seconds: a loaded
   * machine may start the loop late, a wrong offset is off by the age of the clock) */
  if (st.skipped == 0 && !(st.deadline_offset >= before && st.deadline_offset <= before + 5)) {
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

/* the status at the end of a fast-mode run of robot for duration_s */
static hil_status status_after(const char *robot, double duration_s) {
  hil_runtime *rt = ts_runtime(robot, HIL_MODE_FAST, duration_s);
  assert_int_equal(hil_runtime_run(rt), HIL_OK);
  hil_status st;
  hil_runtime_status(rt, &st);
  hil_runtime_destroy(&rt);
  return st;
}

/* The constraint stage reaches the status: a box dropped on the floor rests on four contacts
 * (16 pyramid rows) after 1 s of fast mode, and the status message carries them. */
static void test_status_reports_constraints(void **state) {
  (void)state;
  const hil_status st = status_after(BOX, 1.0);
  assert_int_equal(st.contacts, 4);
  assert_int_equal(st.constraint_rows, 16);
  assert_true(st.constraint_active > 0 && st.solver_iterations > 0);
  char json[4096];
  assert_true(hil_msg_encode_status(json, sizeof json, &st) > 0);
  char expect[128];
  snprintf(expect, sizeof expect, "\"constraints\":{\"contacts\":4,\"rows\":16,\"active\":%d,",
           st.constraint_active);
  assert_non_null(strstr(json, expect));
}

/* The status tells what the robot touches: a 2 kg box resting on the floor (the normal forces
 * add up to its weight) and an arm hanging against its stop (one stop in force), on the status
 * line and in the status message (tests/support/robots/rest_box_and_arm.json). */
static void test_status_reports_stops_and_force(void **state) {
  (void)state;
  const hil_status st = status_after(REST, 2.0);
  print_message("resting box and hanging arm: %d contacts, %.9g N (weight %.9g N), %d stop(s)\n",
                st.contacts, st.normal_force, 2 * 9.81, st.stops);
  assert_int_equal(st.contacts, 4);
  assert_int_equal(st.stops, 1);
  assert_true(fabs(st.normal_force - 2 * 9.81) <= 1e-6 * 2 * 9.81);
  char json[4096];
  assert_true(hil_msg_encode_status(json, sizeof json, &st) > 0);
  char expect[128];
  snprintf(expect, sizeof expect, "\"stops\":1,\"normal_force\":");
  assert_non_null(strstr(json, expect));
}

/* Issue 9: lockstep step requests add up. Two requests (3 and 2) made before the loop first
 * polls give exactly 5 steps, although the run could last 1000 (duration 1 s at 1 kHz): nothing
 * else may step a lockstep run that receives no commands. The test thread waits (deadline 10 s)
 * for the 5th step, then stops the loop. */
static void test_lockstep_requests_add_up(void **state) {
  (void)state;
  hil_runtime *rt = make(HIL_MODE_LOCKSTEP, 1.0);
  hil_runtime_request_steps(rt, 3);
  hil_runtime_request_steps(rt, 2);
  ts_loop loop;
  ts_loop_start(&loop, rt);
  ts_loop_wait_steps(&loop, 5, TS_DEADLINE_S);
  const int ended = ts_loop_stop(&loop);
  hil_status st;
  hil_runtime_status(rt, &st);
  if (st.steps != 5) {
    fail_msg("lockstep with requests of 3 and 2 steps took %llu steps (expected 5; the run %s)",
             (unsigned long long)st.steps, ended ? "ended by itself" : "was stopped");
  }
  hil_runtime_destroy(&rt);
}

/* The offset is a property of the schedule, not of one tick: deadlines are t + offset, so between
 * two reads in a run it changes only by whole periods (ticks skipped after a stall), never by a
 * tick's wake-up lateness. Read at about 50 and 150 ticks while the loop runs, and at the end;
 * differences in periods must be integers within 1e-6 (1 ns; lateness is ~0.1 period here). */
static double offset_at(hil_runtime *rt, uint64_t steps, ts_loop *loop) {
  if (!ts_loop_wait_steps(loop, steps, TS_DEADLINE_S)) {
    fail_msg("the realtime loop did not reach %llu steps", (unsigned long long)steps);
  }
  hil_status st;
  hil_runtime_status(rt, &st);
  return st.deadline_offset;
}

static void test_offset_moves_by_whole_periods(void **state) {
  (void)state;
  hil_runtime *rt = make(HIL_MODE_REALTIME, 0.3);
  const double period = hil_runtime_model(rt)->opt.timestep;
  ts_loop loop;
  ts_loop_start(&loop, rt);
  const double o1 = offset_at(rt, 50, &loop), o2 = offset_at(rt, 150, &loop);
  ts_loop_join(&loop, TS_DEADLINE_S);
  hil_status st;
  hil_runtime_status(rt, &st);
  const double o[2] = {o2, st.deadline_offset};
  for (int i = 0; i < 2; i++) {
    const double periods = (o[i] - o1) / period;
    if (!(fabs(periods - round(periods)) < 1e-6)) {
      fail_msg("the deadline offset moved by %.6f periods between two reads (whole periods "
               "expected: deadlines are t + offset)", periods);
    }
  }
  hil_runtime_destroy(&rt);
}

/* A reset forgets the steps granted before it: 5 requested, a reset, then 2 requested give
 * exactly 2 steps (a lockstep run without commands steps only when granted). */
static void test_reset_drops_granted_steps(void **state) {
  (void)state;
  hil_runtime *rt = make(HIL_MODE_LOCKSTEP, 1.0);
  hil_runtime_request_steps(rt, 5);
  hil_runtime_reset(rt);
  hil_runtime_request_steps(rt, 2);
  ts_loop loop;
  ts_loop_start(&loop, rt);
  ts_loop_wait_steps(&loop, 2, TS_DEADLINE_S);
  ts_loop_stop(&loop);
  hil_status st;
  hil_runtime_status(rt, &st);
  if (st.steps != 2) {
    fail_msg("5 steps granted, a reset, 2 granted: %llu steps (expected 2)",
             (unsigned long long)st.steps);
  }
  hil_runtime_destroy(&rt);
}

TS_MAIN(test_realtime_deadlines_and_offset, test_offset_is_zero_without_deadlines,
        test_status_reports_constraints, test_status_reports_stops_and_force,
        test_lockstep_requests_add_up, test_offset_moves_by_whole_periods,
        test_reset_drops_granted_steps)
