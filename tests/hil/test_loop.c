/* tests/hil/test_loop.c: the realtime loop in-process — pacing by absolute deadlines, the tick
 * count, and the deadline offset the status reports (docs/messages.md, section 4), which tools on
 * the same host use to line their clock up with the ticks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "hil/runtime.h"

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

/* Issue 9: lockstep step requests add up. Two requests (3 and 2) made before the loop first
 * polls give exactly 5 steps, although the run could last 1000 (duration 1 s at 1 kHz): nothing
 * else may step a lockstep run that receives no commands. The test thread waits (deadline 10 s)
 * for the 5th step, then stops the loop. */
typedef struct loop_thread {
  hil_runtime *rt;
  volatile int done;
} loop_thread;

static void *loop_thread_main(void *p) {
  loop_thread *a = p;
  hil_runtime_run(a->rt);
  a->done = 1;
  return NULL;
}

static void test_lockstep_requests_add_up(void **state) {
  (void)state;
  hil_runtime *rt = make(HIL_MODE_LOCKSTEP, 1.0);
  hil_runtime_request_steps(rt, 3);
  hil_runtime_request_steps(rt, 2);
  loop_thread a = {rt, 0};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, loop_thread_main, &a), 0);
  const double until = monotonic_now() + 10.0;
  while (!a.done && hil_runtime_steps(rt) < 5 && monotonic_now() < until) {
    const struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  hil_runtime_request_stop(rt);
  pthread_join(th, NULL);
  hil_status st;
  hil_runtime_status(rt, &st);
  if (st.steps != 5) {
    fail_msg("lockstep with requests of 3 and 2 steps took %llu steps (expected 5; the run %s)",
             (unsigned long long)st.steps, a.done ? "ended by itself" : "was stopped");
  }
  hil_runtime_destroy(&rt);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_realtime_deadlines_and_offset),
      cmocka_unit_test(test_offset_is_zero_without_deadlines),
      cmocka_unit_test(test_lockstep_requests_add_up),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
