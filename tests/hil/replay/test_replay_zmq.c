/* tests/hil/replay/test_replay_zmq.c: what a subscriber of `achilles replay` receives over
 * ipc:// (hil/record/replay.c, the player in a thread, a SUB in the test's): topic patterns, the
 * live publisher's JSON byte for byte, windows and topics, the shift policy, loops that keep
 * counting, instants larger than the encode-ahead, sensors on their own clock, and gaps played
 * across. The test log is replay_fixture.h's. Two wall-clock verdicts (the looped stream's 1 ms
 * spacing, the own-clock timing error) are asserted only in test_replay_zmq_timing, this file
 * built under the label timing (tests/support/timing.h). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "replay_fixture.h"
#include "support/skip.h"
#include "support/timing.h"
#include "support/tmp.h"
#include "support/wait.h"

static void test_topic_patterns(void **state) {
  (void)state;
  assert_true(hil_replay_topic_match("", "enc/a"));
  assert_true(hil_replay_topic_match("enc/", "enc/a"));
  assert_false(hil_replay_topic_match("enc/", "imu/a"));
  assert_true(hil_replay_topic_match("imu/,enc/", "enc/a"));
  assert_true(hil_replay_topic_match("*/a", "imu/a"));
  assert_false(hil_replay_topic_match("*/a", "imu/ab"));
  assert_true(hil_replay_topic_match("enc/x,trq/[ab]*", "trq/b2"));
  assert_false(hil_replay_topic_match("enc/x,trq/[ab]*", "trq/c"));
  assert_false(hil_replay_topic_match(",", "enc/a"));
}

static void test_zmq_live_layout(void **state) {
  (void)state;
  const long nsteps = 40;
  hil_replay_schedule s;
  load_test_log(&s, NULL, 0, "layout.log", nsteps, NULL);
  assert_int_equal(s.damage[0], '\0');
  assert_int_equal(s.n, 40 + 20 + 10);
  hil_replay_options o = default_options();
  o.truth = 1;
  hil_replay_report rep;
  replay_zmq(&s, &o, &rep);
  /* the order of the log: per step, the sensors in set order, each sample then its truth */
  int m = 0;
  for (long k = 0; k < nsteps; k++) {
    for (int i = 0; i < NSENS; i++) {
      sens_sample smp;
      if (!sample_of(i, k, &smp)) {
        continue;
      }
      for (int truth = 0; truth < 2; truth++, m++) {
        char topic[HIL_MSG_TOPIC_MAX], body[HIL_MSG_SAMPLE_MAX];
        expected(i, k, truth, topic, body);
        assert_true(m < rx->n);
        assert_string_equal(rx->topic[m], topic);
        assert_string_equal(rx->body[m], body);
      }
    }
  }
  assert_int_equal(rx->n, m);
  assert_int_equal(rep.played, 70);
  assert_true(rep.messages >= 140 + 1); /* and the periodic statuses */
  assert_int_equal(rep.instants, 40);
  /* the final status: the live layout with a "replay" object */
  assert_non_null(strstr(rx->final_status, "{\"v\":1,\"t\":0.039,\"wall_time\":"));
  assert_non_null(strstr(rx->final_status, "\"samples_published\":70,\"zmq\":{\"sent\":"));
  assert_non_null(strstr(rx->final_status, "\"played\":70,\"total\":70,\"pass\":1"));
  hil_replay_free(&s);
}

static void test_window_and_topics(void **state) {
  (void)state;
  char path[128];
  write_log_as(path, sizeof path, "window.log", 60);
  /* t = 0.020 is in: both ends are included */
  hil_replay_select sel = {.has_from = 1, .has_to = 1, .from = 0.010, .to = 0.0201};
  snprintf(sel.topics, sizeof sel.topics, "enc/,trq/*");
  hil_replay_schedule s;
  load(&s, path, &sel);
  assert_true(s.sensor[0].selected);
  assert_false(s.sensor[1].selected);
  assert_true(s.sensor[2].selected);
  hil_replay_options o = default_options();
  hil_replay_report rep;
  replay_zmq(&s, &o, &rep);
  int m = 0;
  for (long k = 10; k <= 20; k++) {
    for (int i = 0; i < NSENS; i += 2) {
      sens_sample smp;
      if (!sample_of(i, k, &smp)) {
        continue;
      }
      char topic[HIL_MSG_TOPIC_MAX], body[HIL_MSG_SAMPLE_MAX];
      expected(i, k, 0, topic, body);
      assert_true(m < rx->n);
      assert_string_equal(rx->topic[m], topic);
      assert_string_equal(rx->body[m], body);
      m++;
    }
  }
  assert_int_equal(m, 11 + 3);
  assert_int_equal(rx->n, m);
  hil_replay_free(&s);

  /* a glob on one sensor, and a window with nothing in it */
  snprintf(sel.topics, sizeof sel.topics, "imu/imu_?");
  load(&s, path, &sel);
  assert_int_equal(s.n, 6); /* imu at k = 10, 12, ..., 20 */
  hil_replay_free(&s);
  sel.from = 1.0;
  sel.to = 2.0;
  load(&s, path, &sel);
  assert_int_equal(s.n, 0);
  assert_int_equal(s.samples_read, 60 + 30 + 15);
  hil_replay_free(&s);
}

/* The shift policy, provoked on every instant (shift_after_s = 0: any lateness counts as a
 * stall): the schedule moves by each lateness, the report adds them up, nothing is lost. */
static void test_shift_policy(void **state) {
  (void)state;
  hil_replay_schedule s;
  load_test_log(&s, NULL, 0, "shift.log", 50, "enc/");
  hil_replay_options o = default_options();
  o.shift = 1;
  o.shift_after_s = 0;
  hil_replay_report rep;
  replay_zmq(&s, &o, &rep);
  assert_int_equal(rx->n, 50);
  assert_true(rep.shifts > 0);
  assert_true(rep.behind > 0);
  /* the run took the log's 49 ms plus what it fell behind */
  assert_true(rep.wall >= 0.049 + rep.behind - 1e-9);
  hil_replay_free(&s);
}

/* Three passes of a 20-sample window: seq keeps counting (0 .. 59) and t keeps increasing by the
 * window length (20 ms: the last t - the first t + one 1 kHz period), as one continuous run. */
static void test_loop_continues_seq_and_t(void **state) {
  (void)state;
  char path[128];
  write_log_as(path, sizeof path, "loop.log", 40);
  hil_replay_select sel = {.has_from = 1, .has_to = 1, .from = 0.005, .to = 0.0245};
  snprintf(sel.topics, sizeof sel.topics, "enc/");
  hil_replay_schedule s;
  load(&s, path, &sel);
  assert_int_equal(s.n, 20);
  assert_true(fabs(hil_replay_pass_length(&s) - 0.020) < 1e-12);
  hil_replay_options o = default_options();
  sharp(&o);
  o.loop = 1;
  o.loops = 3;
  hil_replay_report rep;
  replay_zmq(&s, &o, &rep);
  assert_int_equal(rx->n, 60);
  assert_int_equal(rep.passes, 3);
  for (int m = 0; m < 60; m++) {
    assert_int_equal((long)json_number(rx->body[m], "seq"), 5 + m);
    const double t = json_number(rx->body[m], "t");
    assert_true(fabs(t - 0.001 * (5 + m)) < 1e-12);
    /* values are replayed as recorded */
    char topic[HIL_MSG_TOPIC_MAX], body[HIL_MSG_SAMPLE_MAX];
    expected(0, 5 + m % 20, 0, topic, body);
    assert_non_null(strstr(rx->body[m], strstr(body, "\"valid\"")));
  }
  /* and the looped stream kept its 1 ms spacing, across the passes too */
  TS_TIMING_TRUE(fabs(median_interval() - 1e-3) < 0.1e-3);
  hil_replay_free(&s);
}

/* An instant with more messages than the player encodes ahead (64): 100 samples of one sensor at
 * the same t, each with its truth, all go out in the order of the log. */
static void test_large_instant(void **state) {
  (void)state;
  char path[128];
  write_log_as(path, sizeof path, "instant.log", 0);
  /* rewrite with 100 samples at t = 0 and one at t = 0.001 */
  hil_log_reader *rd;
  char err[512];
  rd = hil_log_reader_open(path, err, sizeof err);
  assert_non_null(rd);
  hil_log_header h = *hil_log_reader_header(rd);
  hil_log_reader_close(&rd);
  hil_log_writer *w = replay_log_open(path, &h);
  sens_sample smp;
  for (int k = 0; k <= 100; k++) {
    assert_true(sample_of(0, k, &smp));
    smp.t = k < 100 ? 0 : 0.001;
    assert_int_equal(hil_log_write_sample(w, &test_sensor[0], &smp, 0), 0);
  }
  assert_int_equal(hil_log_close(&w), 0);
  hil_replay_select sel = {0};
  hil_replay_schedule s;
  load(&s, path, &sel);
  hil_replay_options o = default_options();
  o.truth = 1;
  hil_replay_report rep;
  replay_zmq(&s, &o, &rep);
  assert_int_equal(rx->n, 202);
  for (int m = 0; m < 202; m++) {
    assert_string_equal(rx->topic[m], m % 2 ? "truth/enc/enc_a" : "enc/enc_a");
    assert_int_equal((long)json_number(rx->body[m], "seq"), m / 2);
  }
  assert_int_equal(rep.instants, 2);
  /* without the truth: 64 encoded ahead, 36 when due, then the next instant */
  o.truth = 0;
  replay_zmq(&s, &o, &rep);
  assert_int_equal(rx->n, 101);
  for (int m = 0; m < 101; m++) {
    assert_int_equal((long)json_number(rx->body[m], "seq"), m);
  }
  hil_replay_free(&s);
}

/* Issue 18, items 3 and 4: a sensor on its own clock publishes samples taken since the last
 * physics step, so its t is earlier than its step's and splits the step into several instants
 * (here 3 per step: enc at t, imu at t - 0.09, trq at t - 0.045, at a 10 Hz physics rate).
 * Status "steps" counts steps as the recording did (20, not 60 instants), "t" is the latest t,
 * and the timing error is measured from the running maximum of t: the lagging instants go out
 * right after their step's and are not late (measured from their own t, two thirds of the
 * instants would be 22.5 ms or 45 ms late at rate 2). */
static void test_steps_and_timing_with_own_clock(void **state) {
  (void)state;
  char path[128];
  hil_log_writer *w = custom_log(path, sizeof path, "own_clock.log", 10);
  for (int k = 1; k <= 20; k++) {
    const double t = 0.1 * k;
    put(w, 0, t, t, (uint64_t)k);
    put(w, 1, t - 0.09, t - 0.09, (uint64_t)k);
    put(w, 2, t - 0.045, t - 0.045, (uint64_t)k);
  }
  assert_int_equal(hil_log_close(&w), 0);
  hil_replay_select sel = {0};
  hil_replay_schedule s;
  load(&s, path, &sel);
  assert_int_equal(s.damage[0], '\0');
  assert_int_equal(s.n, 60);
  hil_replay_options o = default_options();
  o.rate = 2;
  hil_replay_report rep;
  replay_zmq(&s, &o, &rep);
  assert_int_equal(rx->n, 60);
  assert_int_equal(rep.instants, 60);
  print_message("final status: %s\n", rx->final_status);
  assert_int_equal((long)json_number(rx->final_status, "steps"), 20);
  assert_true(json_number(rx->final_status, "t") == 2.0);
  assert_int_equal((long)json_number(rx->final_status, "instants"), 60);
  assert_int_equal(rep.steps, 20);
  print_message("timing error p50 %.1f us p99 %.1f us max %.1f us\n", rep.err_p50 * 1e6,
                rep.err_p99 * 1e6, rep.err_max * 1e6);
  TS_TIMING_TRUE(rep.err_p50 < 10e-3);
  hil_replay_free(&s);
}

/* Issue 11, item 5: a gap longer than the limit is damage by default; with skip_gaps it is
 * reported and played across without waiting: 10 samples, a 99.99 s pause, 10 more, replayed
 * in well under a second with their recorded t. */
static void test_gap_skipped_on_request(void **state) {
  (void)state;
  char path[128];
  hil_log_writer *w = custom_log(path, sizeof path, "gap.log", 1000);
  for (int k = 0; k < 20; k++) {
    const double t = 0.001 * k + (k >= 10 ? 100 - 0.01 : 0);
    put(w, 0, t, t, (uint64_t)k);
  }
  assert_int_equal(hil_log_close(&w), 0);
  hil_replay_select sel = {0};
  hil_replay_schedule s;
  load(&s, path, &sel);
  assert_true(s.stopped);
  assert_int_equal(s.n, 10);
  assert_non_null(strstr(s.damage, "record 12 at byte"));
  hil_replay_free(&s);
  sel.max_gap_s = 200; /* a longer limit lets it through (and the player would wait) */
  load(&s, path, &sel);
  assert_int_equal(s.n, 20);
  assert_int_equal(s.damage[0], '\0');
  hil_replay_free(&s);
  sel.max_gap_s = 0;
  sel.skip_gaps = 1;
  load(&s, path, &sel);
  assert_int_equal(s.n, 20);
  assert_int_equal(s.damage[0], '\0');
  assert_int_equal(s.gaps_met, 1);
  assert_int_equal(s.ngaps, 1);
  print_message("%s\n", s.gap_note);
  assert_non_null(strstr(s.gap_note, "gap.log: record 12 at byte"));
  assert_non_null(strstr(s.gap_note, "played across without waiting"));
  hil_replay_options o = default_options();
  hil_replay_report rep;
  const double t0 = ts_now();
  replay_zmq(&s, &o, &rep);
  const double took = ts_now() - t0;
  print_message("20 samples across a 99.99 s gap played in %.3f s\n", took);
  assert_int_equal(rx->n, 20);
  assert_true(took < 5.0);
  assert_true(json_number(rx->body[10], "t") == 0.001 * 10 + 100 - 0.01);
  /* the gap is cut to one period: entries 10.. are due 99.991 - 0.001 s earlier */
  assert_int_equal(s.gap[0].entry, 10);
  assert_true(fabs(s.gap[0].cut - 99.99) < 1e-9);
  assert_true(fabs(s.gap_cut - 99.99) < 1e-9);
  hil_replay_free(&s);
}

#if TS_TIMING /* the tests with wall-clock verdicts */
TS_MAIN_WITH(replay_setup, replay_teardown, test_loop_continues_seq_and_t,
                                            test_steps_and_timing_with_own_clock)
#else
TS_MAIN_WITH(replay_setup, replay_teardown, test_topic_patterns, test_zmq_live_layout,
                                            test_window_and_topics, test_shift_policy,
                                            test_loop_continues_seq_and_t, test_large_instant,
                                            test_steps_and_timing_with_own_clock,
                                            test_gap_skipped_on_request)
#endif
