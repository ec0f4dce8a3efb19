/* tests/hil/replay/test_replay_gaps.c: pauses in a recording played across (--skip-gaps), one
 * or several, in one pass or looped (docs/replay.md, sections 3 and 4).
 *
 * The log: 1 kHz, three runs of 10 samples separated by pauses of 20 s and 30 s. Played across,
 * every instant comes one period after the one before, through both gaps and from one pass to
 * the next: instant k of the replay (counting on through the passes) is due at k ms. A second
 * pass that waited a cut gap again, or a cut that counted only the last gap, would put
 * instants 20 s or more late: the schedule's due times are checked exactly, and the command is
 * run for real (a bound of 10 s on a replay of 0.06 s, which the bugs would exceed by 10 s or
 * more, however loaded the machine). */
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

#include "hil/record/log.h"
#include "hil/record/replay.h"
#include "hil/zmq/json_messages.h"
#include "support/skip.h"
#include "support/tmp.h"
#include "support/wait.h"

#include "replay_fixture.h"

int achilles_cmd_replay(int argc, char **argv); /* tools/commands.h */

static char log_path[160];
static const double PAUSE1 = 20, PAUSE2 = 30, PERIOD = 1e-3;

/* t of sample k: three runs of 10 at 1 kHz, the pauses between them */
static double t_of(int k) {
  return PERIOD * k + (k >= 10 ? PAUSE1 : 0) + (k >= 20 ? PAUSE2 : 0);
}

static void write_gapped_log(const char *path) {
  sens_sensor s;
  memset(&s, 0, sizeof s);
  snprintf(s.name, sizeof s.name, "enc");
  s.type = SENS_ENCODER;
  s.rate_hz = 1 / PERIOD;
  s.nch = 1;
  snprintf(s.channel[0], sizeof s.channel[0], "angle");
  hil_log_header h;
  replay_log_header(&h, "gaps", 1 / PERIOD, &s, 1);
  hil_log_writer *w = replay_log_open(path, &h);
  for (int k = 0; k < 30; k++) {
    sens_sample smp;
    memset(&smp, 0, sizeof smp);
    smp.t = smp.t_truth = t_of(k);
    smp.seq = (uint64_t)k;
    smp.valid = 1;
    smp.meas[0] = smp.truth[0] = 0.01 * k;
    assert_int_equal(hil_log_write_sample(w, &s, &smp, smp.t), 0);
  }
  assert_int_equal(hil_log_close(&w), 0);
}

/* Both gaps cut to one period, their cuts summed; through three passes instant k is due at k
 * periods, while t goes on as recorded (plus a pass length per pass). */
static void test_two_gaps_and_loops_due_times(void **state) {
  (void)state;
  hil_replay_select sel = {.skip_gaps = 1};
  hil_replay_schedule s;
  char err[512];
  assert_int_equal(hil_replay_load(&s, log_path, &sel, err, sizeof err), 0);
  assert_int_equal(s.n, 30);
  assert_int_equal(s.gaps_met, 2);
  assert_int_equal(s.ngaps, 2);
  assert_true(fabs(s.gap[0].cut - PAUSE1) < 1e-9);
  assert_true(fabs(s.gap[1].cut - PAUSE2) < 1e-9);
  assert_true(fabs(s.gap_cut - (PAUSE1 + PAUSE2)) < 1e-9);
  const double L = hil_replay_pass_length(&s);
  assert_true(fabs(L - (t_of(29) + PERIOD)) < 1e-12);
  double worst = 0;
  for (long long pass = 0; pass < 3; pass++) {
    for (size_t i = 0; i < s.n; i++) {
      const double k = (double)pass * 30 + (double)i;
      worst = fmax(worst, fabs(hil_replay_due_offset(&s, i, pass) - k * PERIOD));
      hil_replay_sample smp;
      hil_replay_sample_at(&smp, &s, i, pass);
      assert_true(fabs(smp.t - (t_of((int)i) + (double)pass * L)) < 1e-9);
    }
  }
  print_message("3 passes of 30 samples across gaps of %g s and %g s: due times off the "
                "one-period grid by at most %.2g s\n", PAUSE1, PAUSE2, worst);
  assert_true(worst < 1e-9);
  hil_replay_free(&s);
}

/* runs `achilles replay ARGS...`, its output to a file; the exit status */
static int replay(char **argv, int argc) {
  char path[128];
  ts_tmp_path(path, sizeof path, "out.txt");
  fflush(stdout);
  fflush(stderr);
  const int saved_out = dup(1), saved_err = dup(2);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  dup2(fileno(f), 1);
  dup2(fileno(f), 2);
  const int rc = achilles_cmd_replay(argc, argv);
  fflush(stdout);
  fflush(stderr);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(saved_out);
  close(saved_err);
  fclose(f);
  return rc;
}

/* The command plays two passes across both gaps without waiting any of them. */
static void test_looped_replay_waits_no_gap(void **state) {
  (void)state;
  char ep[128];
  ts_tmp_ipc(ep, sizeof ep, "pub");
  char *argv[] = {"replay", log_path, "--zmq", ep, "--no-wait", "--skip-gaps", "--loop",
                  "--loops", "2", "--quiet", NULL};
  const double t0 = ts_now();
  const int rc = replay(argv, (int)(sizeof argv / sizeof argv[0]) - 1);
  const double took = ts_now() - t0;
  print_message("2 passes of 30 samples across gaps of %g s and %g s played in %.3f s\n", PAUSE1,
                PAUSE2, took);
  assert_int_equal(rc, 0);
  assert_true(took < 10.0); /* 0.06 s of samples; a gap waited again is 20 s at least */
}

static int setup(void **state) {
  if (ts_tmp_setup(state) != 0) {
    return -1;
  }
  ts_tmp_path(log_path, sizeof log_path, "gaps.log");
  write_gapped_log(log_path);
  return 0;
}

TS_MAIN_WITH(setup, ts_tmp_teardown, test_two_gaps_and_loops_due_times,
             test_looped_replay_waits_no_gap)
