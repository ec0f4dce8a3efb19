/* tests/hil/test_loop.c: the realtime loop in-process — pacing by absolute deadlines, the tick
 * count, and the deadline offset the status reports (docs/messages.md, section 4), which tools on
 * the same host use to line their clock up with the ticks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hil/runtime/runtime.h"
#include "hil/transport.h"
#include "hil/zmq/json_messages.h"

#define PROBE ACHILLES_SOURCE_DIR "/configs/latency_probe.json"

static double monotonic_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A quiet runtime of the robot file at path, without periodic status; input_budget_s 0: the
 * default budget. */
static hil_runtime *make_from(const char *path, hil_mode mode, double duration_s,
                              double input_budget_s) {
  hil_options o;
  hil_options_default(&o);
  o.mode = mode;
  o.quiet = 1;
  o.status_period_s = 0;
  o.duration_s = duration_s;
  o.input_budget_s = input_budget_s;
  char err[512];
  hil_runtime *rt = hil_runtime_new(path, &o, err, sizeof err);
  if (!rt) {
    fail_msg("%s", err);
  }
  return rt;
}

static hil_runtime *make(hil_mode mode, double duration_s) {
  return make_from(PROBE, mode, duration_s, 0);
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
  hil_runtime *rt = make_from(path, HIL_MODE_FAST, 1.0, 0);
  remove(path);
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

/* The status tells what the robot touches: a 2 kg box resting on the floor (the normal forces
 * add up to its weight) and an arm hanging against its stop (one stop in force), on the status
 * line and in the status message. */
static void test_status_reports_stops_and_force(void **state) {
  (void)state;
  char path[] = "/tmp/achilles_rest_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  assert_non_null(f);
  fputs("{ \"name\": \"rest\",\n"
        "  \"bodies\": [ { \"name\": \"b\", \"parent\": \"world\", \"pos\": [0, 0, 0.1],\n"
        "    \"joint\": { \"name\": \"z\", \"type\": \"slide\", \"axis\": [0, 0, 1],\n"
        "                 \"damping\": 20 },\n"
        "    \"inertial\": { \"mass\": 2, \"inertia\": [0.001, 0.001, 0.001, 0, 0, 0] } },\n"
        "    { \"name\": \"arm\", \"parent\": \"world\", \"pos\": [1, 0, 1],\n"
        "    \"joint\": { \"name\": \"h\", \"type\": \"hinge\", \"axis\": [0, 1, 0],\n"
        "      \"limited\": true, \"range\": [-0.3, 0.3] },\n"
        "    \"inertial\": { \"mass\": 1, \"com\": [0.2, 0, 0],\n"
        "                  \"inertia\": [0.001, 0.001, 0.001, 0, 0, 0] } } ],\n"
        "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },\n"
        "    { \"name\": \"cube\", \"body\": \"b\", \"type\": \"box\", \"size\": [0.1, 0.1, 0.1] } ] }\n",
        f);
  fclose(f);
  hil_runtime *rt = make_from(path, HIL_MODE_FAST, 2.0, 0);
  remove(path);
  assert_int_equal(hil_runtime_run(rt), HIL_OK);
  hil_status st;
  hil_runtime_status(rt, &st);
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

/* The offset is a property of the schedule, not of one tick: deadlines are t + offset, so between
 * two reads in a run it changes only by whole periods (ticks skipped after a stall), never by a
 * tick's wake-up lateness. Read at about 50 and 150 ticks while the loop runs, and at the end;
 * differences in periods must be integers within 1e-6 (1 ns; lateness is ~0.1 period here). */
static double offset_at(hil_runtime *rt, uint64_t steps, const loop_thread *a) {
  const double until = monotonic_now() + 10.0;
  while (!a->done && hil_runtime_steps(rt) < steps && monotonic_now() < until) {
    const struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  if (hil_runtime_steps(rt) < steps) {
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
  loop_thread a = {rt, 0};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, loop_thread_main, &a), 0);
  const double o1 = offset_at(rt, 50, &a), o2 = offset_at(rt, 150, &a);
  pthread_join(th, NULL);
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
  loop_thread a = {rt, 0};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, loop_thread_main, &a), 0);
  const double until = monotonic_now() + 10.0;
  while (!a.done && hil_runtime_steps(rt) < 2 && monotonic_now() < until) {
    const struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  hil_runtime_request_stop(rt);
  pthread_join(th, NULL);
  hil_status st;
  hil_runtime_status(rt, &st);
  if (st.steps != 2) {
    fail_msg("5 steps granted, a reset, 2 granted: %llu steps (expected 2)",
             (unsigned long long)st.steps);
  }
  hil_runtime_destroy(&rt);
}

/* --- an input pass that begins just before a deadline ------------------------------------ */

/* A transport whose input arrives 100 us before every deadline (a timerfd armed after each
 * step for the next one) and takes as long as the pass's budget allows to read (a burst that
 * does not end): the pass the loop takes while waiting must stop at the deadline, however large
 * the budget, or the tick starts late by the rest of the budget. */
typedef struct burst {
  hil_transport base;
  int fd;
  long bursts;
} burst;

static int burst_items(hil_transport *t, zmq_pollitem_t *items, int max) {
  burst *b = (burst *)t;
  if (max < 1) {
    return 0;
  }
  items[0] = (zmq_pollitem_t){NULL, b->fd, ZMQ_POLLIN, 0};
  return 1;
}

static void burst_poll(hil_transport *t, hil_runtime *rt) {
  burst *b = (burst *)t;
  uint64_t expirations = 0;
  if (read(b->fd, &expirations, sizeof expirations) != (ssize_t)sizeof expirations) {
    return; /* nothing arrived */
  }
  b->bursts++;
  while (hil_runtime_input_budget_left(rt)) {
  }
  hil_runtime_input_deferred(rt);
}

static void burst_step(hil_transport *t, hil_runtime *rt, uint64_t steps, double sim_time) {
  (void)steps;
  burst *b = (burst *)t;
  hil_status st;
  hil_runtime_status(rt, &st);
  const double at = st.deadline_offset + sim_time - 100e-6; /* the next tick's deadline - 100 us */
  struct itimerspec when = {{0, 0}, {(time_t)floor(at), (long)((at - floor(at)) * 1e9)}};
  timerfd_settime(b->fd, TFD_TIMER_ABSTIME, &when, NULL);
}

static void burst_destroy(hil_transport *t) {
  close(((burst *)t)->fd);
}

static const hil_transport_ops burst_ops = {
    .name = "burst", .pollitems = burst_items, .poll = burst_poll, .publish_step = burst_step,
    .destroy = burst_destroy};

static void test_pass_before_deadline_stops_there(void **state) {
  (void)state;
  /* a budget of 80 % of the 1 ms period: a pass may not use it past a deadline */
  hil_runtime *rt = make_from(PROBE, HIL_MODE_REALTIME, 0.3, 0.8e-3);
  static burst b = {{&burst_ops}, -1, 0};
  b.bursts = 0;
  b.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  assert_true(b.fd >= 0);
  assert_int_equal(hil_runtime_add_transport(rt, &b.base), HIL_OK);
  assert_int_equal(hil_runtime_run(rt), HIL_OK);
  hil_status st;
  hil_runtime_status_total(rt, &st);
  print_message("%ld bursts 100 us before a deadline, each a pass of up to 800 us: ticks late "
                "p50/p99 %.0f/%.0f us, %llu overruns of %llu ticks\n", b.bursts,
                1e6 * st.late_p50, 1e6 * st.late_p99, (unsigned long long)st.overruns,
                (unsigned long long)st.steps);
  /* the waiting loop took most bursts (some come at its deadline look or after a late tick) */
  assert_true(b.bursts > 100);
  /* a pass that ran its budget out would start the median tick 700 us late */
  if (!(st.late_p50 < 350e-6)) {
    fail_msg("the pass before the deadline made ticks late: p50 %.0f us", 1e6 * st.late_p50);
  }
  hil_runtime_destroy(&rt);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_realtime_deadlines_and_offset),
      cmocka_unit_test(test_offset_is_zero_without_deadlines),
      cmocka_unit_test(test_status_reports_constraints),
      cmocka_unit_test(test_status_reports_stops_and_force),
      cmocka_unit_test(test_lockstep_requests_add_up),
      cmocka_unit_test(test_offset_moves_by_whole_periods),
      cmocka_unit_test(test_reset_drops_granted_steps),
      cmocka_unit_test(test_pass_before_deadline_stops_there),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
