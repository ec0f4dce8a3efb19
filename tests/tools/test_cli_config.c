/* tests/tools/test_cli_config.c: how `achilles run` and `achilles sensors` read their CONFIG — once
 * (so a pipe works), only regular files or standard input named as such, at most
 * SIM_JSON_FILE_MAX bytes — and the exit status of `run` for each kind of error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim/json_read.h"
#include "support/skip.h"
#include "support/spawn.h"
#include "support/tmp.h"

#define CLUB ACHILLES_SOURCE_DIR "/configs/club_arm.json"
#define PROBE ACHILLES_SOURCE_DIR "/configs/latency_probe.json"

static const char *dir; /* the suite's folder */
static char out_path[128], err_path[128];

/* argv with standard input from in_path (NULL: /dev/null), its output into the suite's files */
static pid_t spawn_in(char *const argv[], const char *in_path) {
  return ts_spawn(argv, in_path, out_path, err_path);
}

/* Runs argv (stdin from in_path) and checks its exit status and a fragment of its stderr. */
static void expect_run(char *const argv[], const char *in_path, int status, const char *message) {
  const int rc = ts_wait_exit(spawn_in(argv, in_path), 60);
  const char *text = ts_slurp(err_path);
  if (rc != status || (message && !strstr(text, message))) {
    fail_msg("%s %s: exit %d (expected %d), expected '%s' in:\n%s", argv[1], argv[2], rc, status,
             message ? message : "", text);
  }
}

static int setup(void **state) {
  if (ts_tmp_setup(state) != 0) {
    return -1;
  }
  dir = ts_tmp_dir();
  ts_tmp_path(out_path, sizeof out_path, "out");
  ts_tmp_path(err_path, sizeof err_path, "err");
  return 0;
}

/* The runtime parses its sections from the config one after another; from a pipe, the second
 * read found nothing ("line 1, column 1: invalid JSON"). */
static void test_config_from_a_pipe(void **state) {
  (void)state;
  char *stdin_name[] = {ACHILLES_BIN, "run", "/dev/stdin", "--mode", "fast", "--duration", "0.1",
                        "--no-zmq", "--status-period", "0", NULL};
  char *dash[] = {ACHILLES_BIN, "run", "-", "--mode", "fast", "--duration", "0.1", "--no-zmq",
                  "--status-period", "0", NULL};
  /* a pipe from cat, and bash's process substitution /dev/fd/N */
  char cat_pipe[512], substitution[512];
  snprintf(cat_pipe, sizeof cat_pipe,
           "cat %s | %s run /dev/stdin --mode fast --duration 0.1 --no-zmq --status-period 0",
           PROBE, ACHILLES_BIN);
  snprintf(substitution, sizeof substitution,
           "%s run <(cat %s) --mode fast --duration 0.1 --no-zmq --status-period 0", ACHILLES_BIN,
           PROBE);
  char *piped[] = {"/bin/bash", "-c", cat_pipe, NULL};
  char *substituted[] = {"/bin/bash", "-c", substitution, NULL};
  expect_run(stdin_name, PROBE, 0, "whole run: t=0.100 s");
  expect_run(dash, PROBE, 0, "whole run: t=0.100 s");
  expect_run(piped, NULL, 0, "whole run: t=0.100 s");
  expect_run(substituted, NULL, 0, "whole run: t=0.100 s");
  char *sensors[] = {ACHILLES_BIN, "sensors", "/dev/stdin", "--duration", "0.01", NULL};
  expect_run(sensors, PROBE, 0, NULL);
  if (!strstr(ts_slurp(out_path), "time,probe.seq")) {
    fail_msg("no CSV from achilles sensors /dev/stdin:\n%s", ts_slurp(out_path));
  }
}

/* /dev/zero read until memory ran out; a FIFO without a writer blocked forever. */
static void test_non_regular_and_oversized_files(void **state) {
  (void)state;
  char fifo[128], big[128], nul[128];
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  char *zero[] = {ACHILLES_BIN, "run", "/dev/zero", NULL};
  char *named_pipe[] = {ACHILLES_BIN, "run", fifo, NULL};
  char *directory[] = {ACHILLES_BIN, "run", (char *)dir, NULL};
  char *sensors_fifo[] = {ACHILLES_BIN, "sensors", fifo, "--duration", "1", NULL};
  expect_run(zero, NULL, 2, "/dev/zero: is a character device, not a regular file");
  expect_run(named_pipe, NULL, 2, "fifo: is a named pipe, not a regular file");
  expect_run(directory, NULL, 2, "is a directory, not a regular file");
  expect_run(sensors_fifo, NULL, 1, "fifo: is a named pipe, not a regular file");
  /* logs and CSV files too: replay and noise-fit blocked on a FIFO */
  char *replay_fifo[] = {ACHILLES_BIN, "replay", fifo, NULL};
  char *fit_fifo[] = {ACHILLES_BIN, "noise-fit", fifo, "--sensor", "enc", NULL};
  expect_run(replay_fifo, NULL, 1, "fifo: is a named pipe, not a regular file");
  expect_run(fit_fifo, NULL, 1, "fifo: is a named pipe, not a regular file");
  /* standard input that never ends stops at the limit */
  char *endless[] = {ACHILLES_BIN, "run", "-", NULL};
  expect_run(endless, "/dev/zero", 2, "-: more than the limit of 4194304 bytes");
  /* a regular file one byte over the limit, and one with a NUL byte */
  snprintf(big, sizeof big, "%s/big.json", dir);
  FILE *f = fopen(big, "w");
  assert_non_null(f);
  fputs("{}", f);
  for (int i = 0; i < SIM_JSON_FILE_MAX - 1; i++) {
    fputc(' ', f);
  }
  fclose(f);
  char *oversized[] = {ACHILLES_BIN, "run", big, NULL};
  expect_run(oversized, NULL, 2, "big.json: 4194305 bytes, more than the limit of 4194304 bytes");
  snprintf(nul, sizeof nul, "%s/nul.json", dir);
  ts_write_bytes(nul, "{}\0{}", 5);
  char *with_nul[] = {ACHILLES_BIN, "run", nul, NULL};
  expect_run(with_nul, NULL, 2, "nul.json: byte 2: a NUL byte");
}

/* One scheme (docs/runtime.md): 2 for the command line and the configuration files, whichever
 * loader finds the error; 1 for what fails outside them. Model errors used to exit 1. */
static void test_run_exit_status(void **state) {
  (void)state;
  char bad_model[128], bad_zmq[128], bad_rate[128];
  snprintf(bad_model, sizeof bad_model, "%s/bad_model.json", dir);
  snprintf(bad_zmq, sizeof bad_zmq, "%s/bad_zmq.json", dir);
  snprintf(bad_rate, sizeof bad_rate, "%s/bad_rate.json", dir);
  ts_write_file(bad_model, "{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"inertial\":{\"mass\":0,"
                        "\"inertia\":[1,1,1,0,0,0]}}]}");
  ts_write_file(bad_zmq, "{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"inertial\":{\"mass\":1,"
                      "\"inertia\":[1,1,1,0,0,0]}}],\"transports\":{\"zmq\":{\"pub\":\"\"}}}");
  ts_write_file(bad_rate, "{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"inertial\":{\"mass\":1,"
                       "\"inertia\":[1,1,1,0,0,0]}}],\"runtime\":{\"rate_hz\":1e9}}");
  char *model[] = {ACHILLES_BIN, "run", bad_model, NULL};
  char *zmq[] = {ACHILLES_BIN, "run", bad_zmq, NULL};
  char *rate_cfg[] = {ACHILLES_BIN, "run", bad_rate, NULL};
  char *rate_cli[] = {ACHILLES_BIN, "run", CLUB, "--rate", "1e9", NULL};
  char *rate_low[] = {ACHILLES_BIN, "run", CLUB, "--rate", "0.5", NULL};
  char *json[] = {ACHILLES_BIN, "run", "-", NULL};
  char *serial[] = {ACHILLES_BIN, "run", PROBE, "--no-zmq", "--serial", "/nonexistent/tty",
                    "--duration", "0.1", NULL};
  expect_run(model, NULL, 2, "bad_model.json: bodies[0].inertial.mass: must be >=");
  expect_run(zmq, NULL, 2, "bad_zmq.json: transports.zmq.pub: expected an endpoint");
  expect_run(rate_cfg, NULL, 2, "bad_rate.json: runtime.rate_hz: must be <= 100000 (got 1e+09)");
  expect_run(rate_cli, NULL, 2, "--rate: must be <= 100000 (got 1e9)");
  expect_run(rate_low, NULL, 2, "--rate: must be >= 1 (got 0.5)");
  expect_run(json, NULL, 2, "-: line 1, column 1: invalid JSON");
  /* outside the files: a port that does not exist; said once, with one "serial:" */
  expect_run(serial, NULL, 1, "achilles run: serial: /nonexistent/tty: ");
  if (strstr(ts_slurp(err_path), "serial: serial:")) {
    fail_msg("doubled prefix:\n%s", ts_slurp(err_path));
  }
}

TS_MAIN_WITH(setup, ts_tmp_teardown, test_config_from_a_pipe, test_non_regular_and_oversized_files,
                                     test_run_exit_status)
