/* tests/hil/runtime/test_loop_timing.c: the realtime loop's wake-up lateness when input arrives
 * just before a deadline — a verdict on wall-clock time, so a benchmark under the CTest label
 * `timing` (`ctest -L timing`), not part of CI's suite: a loaded machine makes ticks late by
 * itself. It prints the lateness it measured. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hil/runtime/runtime.h"
#include "hil/transport.h"
#include "support/runtime.h"
#include "support/skip.h"

#define PROBE ACHILLES_SOURCE_DIR "/configs/latency_probe.json"

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
  hil_options o;
  ts_options(&o, HIL_MODE_REALTIME, 0.3);
  o.input_budget_s = 0.8e-3;
  hil_runtime *rt = ts_runtime_with(PROBE, &o);
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
  /* a pass that ran its budget out would start the median tick 700 us late (a verdict on wall
   * time: a loaded machine starts ticks late by itself, so this runs with the timing label) */
  if (!(st.late_p50 < 350e-6)) {
    fail_msg("the pass before the deadline made ticks late: p50 %.0f us", 1e6 * st.late_p50);
  }
  hil_runtime_destroy(&rt);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pass_before_deadline_stops_there),
  };
  return ts_run(tests);
}
