/* tests/hil/runtime/test_overrun_and_speed.c: what the loop does with simulated time when it
 * falls behind (overrun: catchup, max_catchup N) and when a paced fast run (--speed S) is paused
 * and resumed (docs/runtime.md). Both are read from the loop's own records of simulated time and
 * deadlines, taken in its thread by a test transport, not judged by how fast the machine is:
 *
 * - catch-up: a tick that stalls k > N periods (the transport sleeps in publish_step) is
 *   followed by N + 1 ticks whose deadlines had passed when the stall ended, run back to back
 *   (a loop that only counted them as `skipped`, or skipped them all, runs one); the deadline
 *   offset (deadline − simulated time) moves by exactly the ticks counted as skipped, k − N;
 * - speed: simulated time never runs ahead of S × the wall time since the run (or the last
 *   resume) began, so a pause is not banked as credit to be spent at once after resuming, and it
 *   does advance after the resume (a generous deadline, not a rate).
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hil/runtime/runtime.h"
#include "hil/transport.h"
#include "support/runtime.h"
#include "support/skip.h"
#include "support/wait.h"

/* one hinge, a 10 ms step */
#define TICKER ACHILLES_SOURCE_DIR "/tests/support/robots/ticker.json"

/* a quiet runtime of the test robot at 100 Hz */
static hil_runtime *make(hil_mode mode, double duration_s, hil_overrun overrun, int max_catchup,
                         double speed) {
  hil_options o;
  ts_options(&o, mode, duration_s);
  o.rate_hz = 100;
  o.overrun = overrun;
  o.max_catchup = max_catchup;
  o.speed = speed;
  o.watchdog_timeout_s = 0;
  return ts_runtime_with(TICKER, &o);
}

/* --- catch-up after a stall ------------------------------------------------------------------ */

#define TICKS_MAX 512

/* records every tick: its deadline (t before the step + the offset) and when it ended */
typedef struct stall {
  hil_transport base;
  uint64_t stall_at;       /* the step after which publish_step sleeps */
  double stall_s;
  int n;
  int stalled;             /* the record of that tick */
  double deadline[TICKS_MAX], ended[TICKS_MAX], offset[TICKS_MAX];
  uint64_t skipped[TICKS_MAX];
} stall;

static void stall_step(hil_transport *t, hil_runtime *rt, uint64_t steps, double sim_time) {
  stall *s = (stall *)t;
  hil_status st;
  hil_runtime_status(rt, &st);
  const double period = hil_runtime_model(rt)->opt.timestep;
  if (steps == s->stall_at) {
    ts_sleep(s->stall_s);
    s->stalled = s->n;
  }
  if (s->n < TICKS_MAX) {
    s->deadline[s->n] = sim_time - period + st.deadline_offset;
    s->offset[s->n] = st.deadline_offset;
    s->skipped[s->n] = st.skipped;
    s->ended[s->n] = ts_now();
    s->n++;
  }
}

static void not_owned(hil_transport *t) { (void)t; } /* the tests' transports are static */

static const hil_transport_ops stall_ops = {
    .name = "stall", .publish_step = stall_step, .destroy = not_owned};

static void test_catchup_runs_max_catchup_ticks(void **state) {
  (void)state;
  const int N = 5;
  hil_runtime *rt = make(HIL_MODE_REALTIME, 1.0, HIL_OVERRUN_CATCHUP, N, 0);
  const double period = hil_runtime_model(rt)->opt.timestep; /* 10 ms */
  static stall s;
  memset(&s, 0, sizeof s);
  s.base.ops = &stall_ops;
  s.stall_at = 20;
  s.stall_s = 30 * period; /* k = 30 ticks missed */
  assert_int_equal(hil_runtime_add_transport(rt, &s.base), HIL_OK);
  assert_int_equal(hil_runtime_run(rt), HIL_OK);
  const int at = s.stalled;
  assert_true(s.n > at + 2 * N + 2);
  /* the ticks after the stall whose deadlines had passed when it ended */
  int overdue = 0;
  while (at + 1 + overdue < s.n && s.deadline[at + 1 + overdue] <= s.ended[at]) {
    overdue++;
  }
  const uint64_t skipped = s.skipped[at + 1] - s.skipped[at];
  const double moved = (s.offset[at + 1] - s.offset[at]) / period;
  print_message("a stall of %.0f ticks with max_catchup %d: %d overdue ticks run back to back, "
                "%llu skipped, the deadline offset moved by %.6f periods\n",
                s.stall_s / period, N, overdue, (unsigned long long)skipped, moved);
  /* N catch-up ticks and the one due (N when the loop read its clock a deadline later); more
   * only if the machine stalled the loop again during the burst, by another whole period */
  assert_true(overdue >= N && overdue <= 2 * N + 2);
  /* the ticks counted as skipped are the ones simulated time left out, and no more */
  assert_true(skipped >= (uint64_t)(30 - N - 2) && skipped <= (uint64_t)(30 - N + 2));
  assert_true(fabs(moved - (double)skipped) < 1e-6);
  hil_runtime_destroy(&rt);
}

/* --- --speed across a pause ---------------------------------------------------------------- */

#define SAMPLES_MAX 20000

/* pauses the run at t = pause_t for pause_s of wall time, from the loop's own thread; records
 * (wall, sim time) after every step */
typedef struct pacer {
  hil_transport base;
  double pause_t, pause_s, paused_at, resumed_at, t_at_pause;
  int granted, n;
  double wall[SAMPLES_MAX], t[SAMPLES_MAX];
} pacer;

static void pacer_poll(hil_transport *t, hil_runtime *rt) {
  pacer *p = (pacer *)t;
  const double now = ts_now();
  if (!p->granted) { /* lockstep: steps granted as by a controller, all at once */
    hil_runtime_request_steps(rt, 1000000);
    p->granted = 1;
  }
  if (p->paused_at == 0 && hil_runtime_data(rt)->time >= p->pause_t) {
    hil_runtime_pause(rt);
    p->paused_at = now;
    p->t_at_pause = hil_runtime_data(rt)->time;
  } else if (p->paused_at > 0 && p->resumed_at == 0 && now >= p->paused_at + p->pause_s) {
    p->resumed_at = now;
    hil_runtime_resume(rt);
  }
}

static void pacer_step(hil_transport *t, hil_runtime *rt, uint64_t steps, double sim_time) {
  (void)rt, (void)steps;
  pacer *p = (pacer *)t;
  if (p->n < SAMPLES_MAX) {
    p->wall[p->n] = ts_now();
    p->t[p->n] = sim_time;
    p->n++;
  }
}

static const hil_transport_ops pacer_ops = {
    .name = "pacer", .poll = pacer_poll, .publish_step = pacer_step, .destroy = not_owned};

/* --speed S in fast and in lockstep mode (steps granted ahead), paused at t = 0.1 s for 0.4 s */
static void speed_across_a_pause(hil_mode mode) {
  const double S = 0.5;
  hil_runtime *rt = make(mode, 0.3, HIL_OVERRUN_SKIP, 10, S);
  const double period = hil_runtime_model(rt)->opt.timestep;
  static pacer p;
  memset(&p, 0, sizeof p);
  p.base.ops = &pacer_ops;
  p.pause_t = 0.1;
  p.pause_s = 0.4;
  assert_int_equal(hil_runtime_add_transport(rt, &p.base), HIL_OK);
  const double start = ts_now();
  assert_int_equal(hil_runtime_run(rt), HIL_OK);
  const double took = ts_now() - start;
  assert_true(p.paused_at > 0 && p.resumed_at > 0);
  /* ahead of S × the wall time since the start (before the pause) or since the resume */
  double ahead_before = -INFINITY, ahead_after = -INFINITY, during = 0;
  for (int i = 0; i < p.n; i++) {
    if (p.wall[i] < p.paused_at) {
      ahead_before = fmax(ahead_before, p.t[i] - S * (p.wall[i] - start));
    } else if (p.wall[i] < p.resumed_at) {
      during = fmax(during, p.t[i] - p.t_at_pause);
    } else {
      ahead_after = fmax(ahead_after, (p.t[i] - p.t_at_pause) - S * (p.wall[i] - p.resumed_at));
    }
  }
  const double t_end = p.t[p.n - 1];
  print_message("%s --speed %g, paused %.2f s at t = %.3f s: simulated time ahead of S x wall "
                "time by at most %.3g s before and %.3g s after the resume (a step is %g s); "
                "%.3f s simulated while paused; %.3f s simulated in %.2f s\n",
                mode == HIL_MODE_FAST ? "fast" : "lockstep", S, p.pause_s, p.t_at_pause,
                ahead_before, ahead_after, period, during, t_end, took);
  /* a step is recorded before its pacing sleep: one step ahead, plus S × the moment between
   * the loop's clock reading and ours (50 ms allowed for a loaded machine); a pause banked as
   * credit runs 0.4 s × S = 0.2 s of simulated time at once after the resume */
  const double slack = period + S * 0.05;
  assert_true(ahead_before <= slack);
  assert_true(ahead_after <= slack);
  assert_true(during == 0);
  assert_true(fabs(t_end - 0.3) < 0.5 * period); /* it got there, however slowly */
  hil_runtime_destroy(&rt);
}

TS_TEST(test_fast_speed_holds_after_pause_and_resume, speed_across_a_pause(HIL_MODE_FAST))

TS_TEST(test_lockstep_speed_holds_after_pause_and_resume, speed_across_a_pause(HIL_MODE_LOCKSTEP))

TS_MAIN(test_catchup_runs_max_catchup_ticks, test_fast_speed_holds_after_pause_and_resume,
        test_lockstep_speed_holds_after_pause_and_resume)
