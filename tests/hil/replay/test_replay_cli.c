/* tests/hil/replay/test_replay_cli.c: the `achilles replay` command (tools/cli/cmd_replay.c, linked
 * into this test): exit codes and messages for usage errors, an empty window, a non-local
 * endpoint, a missing file, and a damaged log (named once, what came before it played, exit 1).
 * stdout and stderr are captured in a file for each call. Replays here use ipc:// in a temporary
 * directory with --no-wait, so no subscriber is needed. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hil/zmq/json_messages.h"
#include "hil/record/log.h"
#include "support/skip.h"
#include "support/spawn.h"
#include "support/tmp.h"

#include "replay_fixture.h"

int achilles_cmd_replay(int argc, char **argv); /* tools/cli/commands.h */

static char log_path[128];
static char damaged_path[128];
static char errors[8192]; /* stderr of the last call */

/* one encoder, 1 kHz, 100 samples (0.1 s) */
static void write_encoder_log(const char *path) {
  sens_sensor s;
  memset(&s, 0, sizeof s);
  snprintf(s.name, sizeof s.name, "enc");
  s.type = SENS_ENCODER;
  s.rate_hz = 1000;
  s.nch = 2;
  snprintf(s.channel[0], sizeof s.channel[0], "counts");
  snprintf(s.channel[1], sizeof s.channel[1], "angle");
  hil_log_header h;
  replay_log_header(&h, "cli", 1000, &s, 1);
  hil_log_writer *w = replay_log_open(path, &h);
  for (int k = 0; k < 100; k++) {
    sens_sample smp;
    memset(&smp, 0, sizeof smp);
    smp.t = smp.t_truth = 0.001 * k;
    smp.seq = (uint64_t)k;
    smp.valid = 1;
    smp.meas[0] = smp.truth[0] = k;
    smp.meas[1] = smp.truth[1] = 0.01 * k;
    assert_int_equal(hil_log_write_sample(w, &s, &smp, smp.t), 0);
  }
  assert_int_equal(hil_log_close(&w), 0);
}

/* runs `achilles replay ARGS...` (NULL-terminated) with stderr captured in `errors` */
static int replay(const char *first, ...) {
  char *argv[32];
  int argc = 0;
  argv[argc++] = (char *)"replay";
  va_list ap;
  va_start(ap, first);
  for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *)) {
    argv[argc++] = (char *)a;
  }
  va_end(ap);
  argv[argc] = NULL;
  char path[128];
  ts_tmp_path(path, sizeof path, "stderr.txt");
  const int rc = ts_call(achilles_cmd_replay, argc, argv, path, path); /* --help's text too */
  snprintf(errors, sizeof errors, "%s", ts_slurp(path));
  return rc;
}

static int count(const char *text, const char *what) {
  int n = 0;
  for (const char *p = strstr(text, what); p; p = strstr(p + 1, what)) {
    n++;
  }
  return n;
}

/* Issue 14 (replay --view): a bad address or rate is a usage error (2), a port taken exit 1, and
 * `--view ADDRESS:PORT` (two words) serves and plays, printing the URL. */
static void test_view_option(void **state) {
  (void)state;
  write_encoder_log(log_path);
  assert_int_equal(replay(log_path, "--view", "127.0.0.1:70000", NULL), 2);
  assert_non_null(strstr(errors, "--view: expected ADDRESS:PORT with a port from 0 to 65535"));
  assert_int_equal(replay(log_path, "--view-rate", "0", NULL), 2);
  assert_non_null(strstr(errors, "--view-rate"));
  /* a port in use */
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
  assert_int_equal(listen(fd, 1), 0);
  assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
  char taken[64], ep[160];
  snprintf(taken, sizeof taken, "127.0.0.1:%d", ntohs(sa.sin_port));
  ts_tmp_ipc(ep, sizeof ep, "pub-view");
  assert_int_equal(replay(log_path, "--view", taken, "--zmq", ep, "--no-ctl", "--no-cmd",
                          "--no-wait", NULL),
                   1);
  assert_non_null(strstr(errors, "achilles replay: view"));
  close(fd);
  assert_int_equal(replay(log_path, "--view", "127.0.0.1:0", "--zmq", ep, "--no-ctl", "--no-cmd",
                          "--no-wait", "--rate", "10", NULL),
                   0);
  assert_non_null(strstr(errors, "replay: view: open http://127.0.0.1:"));
}

static int setup(void **state) {
  if (ts_tmp_setup(state) != 0) {
    return -1;
  }
  ts_tmp_path(log_path, sizeof log_path, "good.log");
  ts_tmp_path(damaged_path, sizeof damaged_path, "damaged.log");
  return 0;
}

static void test_usage_errors_exit_2(void **state) {
  (void)state;
  write_encoder_log(log_path);
  assert_int_equal(replay(NULL), 2);
  assert_non_null(strstr(errors, "expected exactly one FILE"));
  assert_int_equal(replay(log_path, "--bogus", NULL), 2);
  assert_non_null(strstr(errors, "--bogus"));
  assert_int_equal(replay(log_path, "--rate", "fast", NULL), 2);
  assert_non_null(strstr(errors, "--rate: expected a finite number, got 'fast'"));
  assert_int_equal(replay(log_path, "--rate", "0", NULL), 2);
  assert_non_null(strstr(errors, "--rate: must be > 0"));
  assert_int_equal(replay(log_path, "--loops", "1.5", NULL), 2);
  assert_int_equal(replay(log_path, "--overrun", "skip", NULL), 2);
  assert_non_null(strstr(errors, "--overrun: expected catchup or shift (got 'skip')"));
  assert_int_equal(replay(log_path, "--keep-awake", NULL), 2);
  assert_non_null(strstr(errors, "--keep-awake needs --cpu N"));
  assert_int_equal(replay(log_path, "--from", "0.05", "--to", "0.01", NULL), 2);
  assert_non_null(strstr(errors, "--from 0.05 is after --to 0.01"));
  assert_int_equal(replay(log_path, "--zmq", "ipc:///x", "--serial", "pty", NULL), 2);
  assert_non_null(strstr(errors, "exclude each other"));
  assert_int_equal(replay("--help", NULL), 0);
  assert_non_null(strstr(errors, "usage: achilles replay FILE [options]"));
}

static void test_nothing_to_play_exit_2(void **state) {
  (void)state;
  write_encoder_log(log_path);
  assert_int_equal(replay(log_path, "--from", "5", "--to", "6", NULL), 2);
  assert_non_null(strstr(errors, "no samples to play (100 sample records read"));
  assert_int_equal(replay(log_path, "--topics", "imu/", NULL), 2);
  assert_non_null(strstr(errors, "no samples to play"));
}

static void test_non_local_endpoint_refused(void **state) {
  (void)state;
  write_encoder_log(log_path);
  assert_int_equal(replay(log_path, "--zmq", "tcp://0.0.0.0:5599", NULL), 2);
  assert_non_null(strstr(errors, "\"tcp://0.0.0.0:5599\" is not a local endpoint"));
  assert_non_null(strstr(errors, "--allow-remote"));
}

static void test_missing_file_exit_1(void **state) {
  (void)state;
  char path[128];
  ts_tmp_path(path, sizeof path, "none.log");
  assert_int_equal(replay(path, NULL), 1);
  assert_non_null(strstr(errors, "none.log: cannot open: No such file or directory"));
}

static void test_plays_and_summarises(void **state) {
  (void)state;
  write_encoder_log(log_path);
  char ep[160];
  ts_tmp_ipc(ep, sizeof ep, "pub");
  assert_int_equal(replay(log_path, "--zmq", ep, "--no-wait", "--rate", "10", "--loop", "--loops",
                          "2", NULL),
                   0);
  assert_non_null(strstr(errors, "replay: done: 100/100 samples (pass 2)"));
}

/* A CPU this process cannot use is refused by the system and played on (libzmq would abort if
 * its I/O thread were pinned there) */
static void test_unusable_cpu_plays_on(void **state) {
  (void)state;
  write_encoder_log(log_path);
  char ep[160];
  ts_tmp_ipc(ep, sizeof ep, "pub-cpu");
  assert_int_equal(replay(log_path, "--zmq", ep, "--no-wait", "--rate", "10", "--cpu", "1000",
                          "--keep-awake", NULL),
                   0);
  assert_non_null(strstr(errors, "replay: done: 100/100 samples"));
  assert_non_null(strstr(errors, "keep-awake: CPU 1000 is not available"));
}

/* record 51 (the 50th sample) damaged: named once before playing and in the summary, the 49
 * samples before it played, exit status 1 */
static void test_damaged_log_exit_1(void **state) {
  (void)state;
  write_encoder_log(damaged_path);
  const long off = ts_line_offset(damaged_path, 51);
  FILE *f = fopen(damaged_path, "r+b");
  assert_non_null(f);
  fseek(f, off + 40, SEEK_SET);
  fputc('#', f);
  fclose(f);
  char ep[160], want[256];
  ts_tmp_ipc(ep, sizeof ep, "pub");
  snprintf(want, sizeof want, "damaged.log: record 51 at byte %ld: ", off);
  assert_int_equal(replay(damaged_path, "--zmq", ep, "--no-wait", "--rate", "10", NULL), 1);
  print_message("%s", errors);
  assert_int_equal(count(errors, want), 2); /* at the start, and in the summary */
  assert_non_null(strstr(errors, "replay: done: 49/49 samples"));
  assert_non_null(strstr(errors, "replay: stopped at the damaged record: "));
  /* --skip-damaged: the other 99 play, exit 0 */
  assert_int_equal(replay(damaged_path, "--zmq", ep, "--no-wait", "--rate", "10",
                          "--skip-damaged", NULL),
                   0);
  assert_non_null(strstr(errors, "replay: done: 99/99 samples"));
  assert_non_null(strstr(errors, "replay: skipped 1 damaged record; the first: "));
}

/* Issue 18, item 5: one bound, one message, whatever side of it the value falls */
static void test_rate_one_message(void **state) {
  (void)state;
  write_encoder_log(log_path);
  assert_int_equal(replay(log_path, "--rate", "-1", NULL), 2);
  assert_non_null(strstr(errors, "achilles replay: --rate: must be > 0 (got -1)"));
  assert_null(strstr(errors, ">="));
  assert_int_equal(replay(log_path, "--rate", "0", NULL), 2);
  assert_non_null(strstr(errors, "achilles replay: --rate: must be > 0 (got 0)"));
}

/* Issue 18, item 6: --help and the start-up line name every control request answered */
static void test_help_and_startup_name_latest(void **state) {
  (void)state;
  write_encoder_log(log_path);
  assert_int_equal(replay("--help", NULL), 0);
  assert_non_null(strstr(errors, "answer control requests (hello, status, latest)"));
  assert_non_null(strstr(errors, "--wait-hello"));
  char ep[160], ctl[160];
  ts_tmp_ipc(ep, sizeof ep, "pub-latest");
  ts_tmp_ipc(ctl, sizeof ctl, "ctl-latest");
  assert_int_equal(replay(log_path, "--zmq", ep, "--ctl", ctl, "--no-cmd", "--no-wait", "--rate",
                          "10", NULL),
                   0);
  assert_non_null(strstr(errors, "(hello, status and latest answered)"));
}

/* Issue 18, items 2 and 7, issue 11, items 5 and 12: --wait-hello needs a control socket; a log
 * without its end record plays with a warning; --max-gap takes a positive number */
static void test_wait_hello_gap_and_end_record(void **state) {
  (void)state;
  write_encoder_log(log_path);
  assert_int_equal(replay(log_path, "--wait-hello", "--no-ctl", NULL), 2);
  assert_non_null(strstr(errors, "--wait-hello needs ZeroMQ output with a control socket"));
  assert_int_equal(replay(log_path, "--wait-hello", "--serial", "pty", NULL), 2);
  assert_int_equal(replay(log_path, "--max-gap", "0", NULL), 2);
  assert_non_null(strstr(errors, "--max-gap"));
  /* the end record is the last line: cut it off (as a killed recorder leaves a log) */
  assert_int_equal(truncate(log_path, ts_line_offset(log_path, ts_file_lines(log_path))), 0);
  char ep[160];
  ts_tmp_ipc(ep, sizeof ep, "pub-end");
  assert_int_equal(replay(log_path, "--zmq", ep, "--no-wait", "--rate", "10", NULL), 0);
  print_message("%s", errors);
  assert_int_equal(count(errors, "no end record"), 2); /* at the start, and in the summary */
  assert_non_null(strstr(errors, "replay: done: 100/100 samples"));
  /* a pause of 0.05 s is longer than --max-gap 0.01: damage, or played across with --skip-gaps */
  snprintf(log_path + strlen(log_path) - 4, 5, ".csv");
  ts_write_file(log_path, "time,enc.counts\n0,1\n0.001,2\n0.051,3\n0.052,4\n");
  assert_int_equal(replay(log_path, "--zmq", ep, "--no-wait", "--max-gap", "0.01", NULL), 1);
  assert_non_null(strstr(errors, "good.csv: line 4 at byte 28: t jumps from 0.001 s to 0.051 s"));
  assert_int_equal(replay(log_path, "--zmq", ep, "--no-wait", "--max-gap", "0.01", "--skip-gaps",
                          NULL),
                   0);
  assert_non_null(strstr(errors, "replay: 1 gap longer than 0.01 s played across"));
  assert_non_null(strstr(errors, "replay: done: 4/4 samples"));
  snprintf(log_path + strlen(log_path) - 4, 5, ".log");
}

TS_MAIN_WITH(setup, ts_tmp_teardown, test_usage_errors_exit_2, test_nothing_to_play_exit_2,
                                     test_non_local_endpoint_refused, test_missing_file_exit_1,
                                     test_plays_and_summarises, test_unusable_cpu_plays_on,
                                     test_damaged_log_exit_1, test_rate_one_message,
                                     test_help_and_startup_name_latest,
                                     test_wait_hello_gap_and_end_record, test_view_option)
