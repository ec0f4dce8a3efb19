/* tests/tools/test_cli_run.c: `achilles run` as a user runs it — the real binary, a real
 * pseudo-terminal, the example firmware as a separate process, signals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hil/record/log.h"

#include "support/skip.h"
#include "support/spawn.h"
#include "support/tmp.h"
#include "support/wait.h"

/* a run's exit status within a minute (a loaded machine included) */
#define EXIT_S 60.0

static const char *dir; /* the suite's folder (ts_tmp_setup) */

static int setup(void **state) {
  if (ts_tmp_setup(state) != 0) {
    return -1;
  }
  dir = ts_tmp_dir();
  return 0;
}

/* Reads the log at `path` as far as it goes: how many samples, the wall time of the last;
 * returns hil_log_next's last answer (0: clean end, HIL_LOG_ETRUNC: cut inside a record). */
static int read_log_samples(const char *path, long long *samples, double *last_wall, char *msg,
                            size_t msg_sz) {
  *samples = 0;
  *last_wall = 0;
  hil_log_reader *r = hil_log_reader_open(path, msg, msg_sz);
  if (!r) {
    return -1;
  }
  hil_log_record rec;
  int rc;
  while ((rc = hil_log_next(r, &rec, msg, msg_sz)) == 1) {
    if (rec.type == HIL_LOG_SAMPLE) {
      ++*samples;
      *last_wall = rec.wall;
    }
  }
  assert_false(hil_log_reader_saw_end(r));
  hil_log_reader_close(&r);
  return rc;
}

/* Waits until a run recording to log has written a sample: its loop runs, so its stop signals
 * are handled (the command installs them just before the loop starts). */
static void wait_running(const char *log) {
  long long samples = 0;
  double wall = 0;
  char msg[512];
  TS_WAIT_FOR((read_log_samples(log, &samples, &wall, msg, sizeof msg), samples > 0),
              "the run's first recorded sample");
}

static void test_fast_run_finishes(void **state) {
  (void)state;
  char out[128], err[128];
  snprintf(out, sizeof out, "%s/fast.out", dir);
  snprintf(err, sizeof err, "%s/fast.err", dir);
  char *argv[] = {ACHILLES_BIN, "run", ACHILLES_SOURCE_DIR "/configs/club_arm.json", "--mode",
                  "fast", "--duration", "0.5", "--no-zmq", "--status-period", "0", NULL};
  assert_int_equal(ts_wait_exit(ts_spawn(argv, NULL, out, err), EXIT_S), 0);
  const char *text = ts_slurp(err);
  if (!strstr(text, "whole run: t=0.500 s") || !strstr(text, "steps=500 fast")) {
    fail_msg("unexpected output:\n%s", text);
  }
}

static void expect_usage_error(char *const argv[], const char *message) {
  char out[128], err[128];
  snprintf(out, sizeof out, "%s/err.out", dir);
  snprintf(err, sizeof err, "%s/err.err", dir);
  int rc = ts_wait_exit(ts_spawn(argv, NULL, out, err), EXIT_S);
  const char *text = ts_slurp(err);
  if (rc == 0 || !strstr(text, message)) {
    fail_msg("exit %d, expected '%s' in:\n%s", rc, message, text);
  }
}

static void test_errors(void **state) {
  (void)state;
  char *bad_mode[] = {ACHILLES_BIN, "run", ACHILLES_SOURCE_DIR "/configs/club_arm.json",
                      "--mode", "turbo", NULL};
  expect_usage_error(bad_mode, "--mode: unknown value 'turbo'");
  char *bad_rate[] = {ACHILLES_BIN, "run", ACHILLES_SOURCE_DIR "/configs/club_arm.json",
                      "--rate", "-5", NULL};
  expect_usage_error(bad_rate, "--rate: must be >=");
  char path[128];
  snprintf(path, sizeof path, "%s/typo.json", dir);
  ts_write_file(path, "{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"inertial\":{\"mass\":1,"
                      "\"inertia\":[1,1,1,0,0,0]}}],\"runtime\":{\"rate\":500}}");
  char *typo[] = {ACHILLES_BIN, "run", path, "--mode", "fast", "--duration", "0.1", NULL};
  expect_usage_error(typo, "runtime.rate: unknown key");
  char *awake[] = {ACHILLES_BIN, "run", ACHILLES_SOURCE_DIR "/configs/club_arm.json",
                   "--keep-awake", "--cpu", "0", NULL};
  expect_usage_error(awake, "--keep-awake needs --rt and --cpu N");
  char *missing[] = {ACHILLES_BIN, "run", "/nonexistent.json", NULL};
  expect_usage_error(missing, "/nonexistent.json: cannot open");
}

/* --rt with a CPU that does not exist: said once each, and the run goes on to its end. */
static void test_rt_refusals_are_said_and_survived(void **state) {
  (void)state;
  char out[128], err[128];
  snprintf(out, sizeof out, "%s/rt.out", dir);
  snprintf(err, sizeof err, "%s/rt.err", dir);
  char *argv[] = {ACHILLES_BIN, "run", ACHILLES_SOURCE_DIR "/configs/club_arm.json", "--rt",
                  "--cpu", "1000", "--keep-awake", "--duration", "0.05", "--status-period", "0",
                  NULL};
  assert_int_equal(ts_wait_exit(ts_spawn(argv, NULL, out, err), EXIT_S), 0);
  const char *text = ts_slurp(err);
  if (!strstr(text, "--rt: CPU 1000 refused") ||
      !strstr(text, "keep-awake: CPU 1000 is not available to this process; running on") ||
      !strstr(text, "whole run: t=0.050 s")) {
    fail_msg("unexpected output:\n%s", text);
  }
}

/* A realtime run with a pty stops cleanly on SIGINT: exit 0, the final status, the link gone. */
static void test_sigint_stops_cleanly(void **state) {
  (void)state;
  char out[128], err[128], link[128], log[128];
  snprintf(out, sizeof out, "%s/int.out", dir);
  snprintf(err, sizeof err, "%s/int.err", dir);
  snprintf(link, sizeof link, "%s/int.pty", dir);
  snprintf(log, sizeof log, "%s/int.log", dir);
  char *argv[] = {ACHILLES_BIN, "run", ACHILLES_SOURCE_DIR "/configs/club_arm.json", "--serial",
                  "pty", "--pty-link", link, "--no-zmq", "--record", log, NULL};
  pid_t pid = ts_spawn(argv, NULL, out, err);
  assert_true(ts_wait_file(link, TS_DEADLINE_S));
  wait_running(log);
  kill(pid, SIGINT);
  assert_int_equal(ts_wait_exit(pid, EXIT_S), 0);
  const char *text = ts_slurp(err);
  if (!strstr(text, "whole run:")) {
    fail_msg("no final status in:\n%s", text);
  }
  struct stat st;
  assert_int_not_equal(lstat(link, &st), 0); /* the symlink was removed */
}

/* The example firmware, a separate process on the pty, holds two set points in real time. */
static void test_firmware_holds_setpoints_in_realtime(void **state) {
  (void)state;
  char sim_out[128], sim_err[128], fw_out[128], fw_err[128], link[128];
  snprintf(sim_out, sizeof sim_out, "%s/sim.out", dir);
  snprintf(sim_err, sizeof sim_err, "%s/sim.err", dir);
  snprintf(fw_out, sizeof fw_out, "%s/fw.out", dir);
  snprintf(fw_err, sizeof fw_err, "%s/fw.err", dir);
  snprintf(link, sizeof link, "%s/fw.pty", dir);
  char *sim_argv[] = {ACHILLES_BIN, "run", ACHILLES_SOURCE_DIR "/configs/club_arm.json",
                      "--serial", "pty", "--pty-link", link, "--no-zmq", "--duration", "30",
                      NULL};
  pid_t sim = ts_spawn(sim_argv, NULL, sim_out, sim_err);
  assert_true(ts_wait_file(link, TS_DEADLINE_S));
  char *fw_argv[] = {PD_FIRMWARE_BIN, link, "--setpoint", "1=0.5", "--setpoint", "2=-0.4",
                     "--duration", "4", NULL};
  int fw_rc = ts_wait_exit(ts_spawn(fw_argv, NULL, fw_out, fw_err), EXIT_S);
  kill(sim, SIGINT);
  assert_int_equal(ts_wait_exit(sim, EXIT_S), 0);
  assert_int_equal(fw_rc, 0);
  /* the firmware's last status line: "t=4.000  j0 q=... e=... u=...  j1 q=... e=..." */
  char *text = ts_slurp(fw_out), *last = NULL;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    last = line;
  }
  assert_non_null(last);
  double e[4];
  for (int j = 0; j < 4; j++) {
    char key[16];
    snprintf(key, sizeof key, "j%d q=", j);
    char *at = strstr(last, key);
    assert_non_null(at);
    assert_int_equal(sscanf(strstr(at, "e=") + 2, "%lf", &e[j]), 1);
  }
  /* P control against gravity leaves a small steady error (about 0.01 rad at these gains,
   * docs/serial-transport.md); 0.05 rad also absorbs the realtime jitter of a loaded CI VM */
  if (fabs(e[1]) > 0.05 || fabs(e[2]) > 0.05 || fabs(e[0]) > 0.05 || fabs(e[3]) > 0.05) {
    fail_msg("set points not held: %s\nsimulator:\n%s", last, ts_slurp(sim_err));
  }
}


/* A recorded realtime run killed with SIGKILL: every record flushed before the cut reads back
 * and the log has no end record. */
static void test_record_survives_kill(void **state) {
  (void)state;
  char out[128], err[128], log[128];
  snprintf(out, sizeof out, "%s/rec.out", dir);
  snprintf(err, sizeof err, "%s/rec.err", dir);
  snprintf(log, sizeof log, "%s/run.log", dir);
  char *argv[] = {ACHILLES_BIN, "run", ACHILLES_SOURCE_DIR "/configs/club_arm.json", "--no-zmq",
                  "--record", log, NULL};
  pid_t pid = ts_spawn(argv, NULL, out, err);
  assert_true(ts_wait_file(log, TS_DEADLINE_S));
  /* kill once the log holds 0.6 s of samples (flushes every 0.1 s; a slow machine waits more) */
  char msg[512];
  long long seen = 0, samples = 0;
  double seen_wall = 0, last_wall = 0;
  for (int tries = 0; seen_wall < 0.6 && tries < 200; tries++) {
    ts_sleep(0.05);
    read_log_samples(log, &seen, &seen_wall, msg, sizeof msg);
  }
  kill(pid, SIGKILL);
  assert_int_equal(ts_wait_exit(pid, EXIT_S), 128 + SIGKILL);

  int rc = read_log_samples(log, &samples, &last_wall, msg, sizeof msg);
  /* the end: the file ends after a complete record, or inside one cut by the kill */
  if (rc != 0 && rc != HIL_LOG_ETRUNC) {
    fail_msg("damage before the cut: %s", msg);
  }
  if (seen_wall < 0.6 || samples < seen || samples < 600) {
    fail_msg("%lld samples up to %.3f s seen while running, %lld up to %.3f s after the kill",
             seen, seen_wall, samples, last_wall);
  }
}

/* Like spawn, with the child's file size limited to fsize bytes (RLIMIT_FSIZE) and SIGXFSZ
 * ignored, so a write past the limit fails with EFBIG as a full disk fails with ENOSPC: a
 * failing disk without root or a small file system. */
static void limit_file_size(void *fsize) {
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim = {*(rlim_t *)fsize, *(rlim_t *)fsize};
  setrlimit(RLIMIT_FSIZE, &lim);
}

static pid_t spawn_limited(char *const argv[], const char *out_path, const char *err_path,
                           rlim_t fsize) {
  return ts_spawn_with(argv, NULL, out_path, err_path, limit_file_size, &fsize);
}

/* A recording that cannot be written is never silent: the first failed write is said on stderr
 * at once (with the system's reason), counted in the status, and the exit status is 1. With
 * --on-record-error stop (the default) the run stops there; with continue it runs to the end. */
static void test_failed_recording_is_reported(void **state) {
  (void)state;
  static const char *const policies[] = {"stop", "continue"};
  for (int k = 0; k < 2; k++) {
    char out[128], err[128], log[128];
    snprintf(out, sizeof out, "%s/full.out", dir);
    snprintf(err, sizeof err, "%s/full.err", dir);
    snprintf(log, sizeof log, "%s/full.log", dir);
    char *argv[] = {ACHILLES_BIN, "run", ACHILLES_SOURCE_DIR "/configs/club_arm.json",
                    "--mode", "fast", "--duration", "3", "--no-zmq", "--status-period", "0",
                    "--record", log, "--on-record-error", (char *)policies[k], NULL};
    const int rc = ts_wait_exit(spawn_limited(argv, out, err, 200 * 1024), EXIT_S);
    const char *text = ts_slurp(err);
    if (rc != 1 || !strstr(text, "recording to") || !strstr(text, "File too large") ||
        !strstr(text, "record errors")) {
      fail_msg("%s: exit %d, stderr:\n%s", policies[k], rc, text);
    }
    const char *whole = strstr(text, "whole run: t=");
    assert_non_null(whole);
    const double t_end = atof(whole + strlen("whole run: t="));
    if (k == 0 ? !(t_end < 3.0) : !(t_end > 2.99)) {
      fail_msg("%s: the run ended at t = %g s\n%s", policies[k], t_end, text);
    }
  }
}

/* SIGHUP (the terminal closed), SIGTERM and SIGQUIT stop a realtime run as SIGINT does: the
 * final status and the end record written, the pty link removed, exit 0. */
static void test_hangup_stops_cleanly(void **state) {
  (void)state;
  static const int sigs[] = {SIGHUP, SIGTERM, SIGQUIT};
  for (int k = 0; k < 3; k++) {
    char out[128], err[128], link[128], log[128];
    snprintf(out, sizeof out, "%s/hup.out", dir);
    snprintf(err, sizeof err, "%s/hup.err", dir);
    snprintf(link, sizeof link, "%s/hup.pty", dir);
    snprintf(log, sizeof log, "%s/hup.log", dir);
    unlink(log); /* the last signal's log: wait_running must see this run's */
    char *argv[] = {ACHILLES_BIN, "run", ACHILLES_SOURCE_DIR "/configs/club_arm.json",
                    "--serial", "pty", "--pty-link", link, "--no-zmq", "--record", log, NULL};
    pid_t pid = ts_spawn(argv, NULL, out, err);
    assert_true(ts_wait_file(link, TS_DEADLINE_S));
    wait_running(log);
    kill(pid, sigs[k]);
    const int rc = ts_wait_exit(pid, EXIT_S);
    const char *text = ts_slurp(err);
    if (rc != 0 || !strstr(text, "whole run:")) {
      fail_msg("signal %d: exit %d, stderr:\n%s", sigs[k], rc, text);
    }
    struct stat st;
    assert_int_not_equal(lstat(link, &st), 0); /* the symlink was removed */
    char msg[512];
    hil_log_reader *r = hil_log_reader_open(log, msg, sizeof msg);
    assert_non_null(r);
    hil_log_record rec;
    int next;
    while ((next = hil_log_next(r, &rec, msg, sizeof msg)) == 1) {
    }
    if (next != 0 || !hil_log_reader_saw_end(r)) {
      fail_msg("signal %d: the log has no end record (%d: %s)", sigs[k], next, msg);
    }
    hil_log_reader_close(&r);
  }
}

/* --- --rt: the loop outranks its I/O thread ---------------------------------------------- */

/* The real-time priority of each thread of pid whose name starts with `prefix`: the highest
 * found, 0 when none runs SCHED_FIFO, -1 when there is no such thread. From
 * /proc/PID/task/TID/stat: field 2 is (comm), field 18 priority (-1 - rt priority for FIFO). */
static int rt_priority_of(pid_t pid, const char *prefix) {
  char path[128], line[1024];
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  DIR *d = opendir(path);
  int best = -1;
  for (struct dirent *e; d && (e = readdir(d));) {
    if (e->d_name[0] == '.') {
      continue;
    }
    snprintf(path, sizeof path, "/proc/%d/task/%s/stat", (int)pid, e->d_name);
    FILE *f = fopen(path, "r");
    const size_t n = f ? fread(line, 1, sizeof line - 1, f) : 0;
    if (f) {
      fclose(f);
    }
    line[n] = '\0';
    char *open = strchr(line, '('), *close = strrchr(line, ')');
    if (!open || !close || strncmp(open + 1, prefix, strlen(prefix)) != 0) {
      continue;
    }
    long field[20] = {0};
    char *p = close + 2; /* field 3 onwards */
    for (int k = 3; k <= 18 && *p; k++) {
      while (*p == ' ') {
        p++;
      }
      field[k] = strtol(p, &p, 10);
      if (k == 3) { /* the state is a letter */
        while (*p && *p != ' ') {
          p++;
        }
      }
    }
    const int rt = field[18] < 0 ? (int)(-1 - field[18]) : 0;
    best = rt > best ? rt : best;
  }
  if (d) {
    closedir(d);
  }
  return best;
}

/* With --rt the loop runs SCHED_FIFO 80 and the ZeroMQ I/O thread 79: above every ordinary
 * thread, and below the loop, so a burst of messages on the I/O thread cannot hold up a tick
 * (at equal priority a running FIFO thread keeps its CPU until it blocks). */
static void test_rt_loop_outranks_io_thread(void **state) {
  (void)state;
  char cfg[160], out[128], err[128], text[8192];
  snprintf(cfg, sizeof cfg, "%s/rt_arm.json", dir);
  snprintf(out, sizeof out, "%s/rtprio.out", dir);
  snprintf(err, sizeof err, "%s/rtprio.err", dir);
  /* the club arm with its sockets on ipc:// endpoints of this test (other tests use the TCP
   * defaults) */
  snprintf(text, sizeof text, "%s", ts_slurp(ACHILLES_SOURCE_DIR "/configs/club_arm.json"));
  char *brace = strrchr(text, '}');
  assert_non_null(brace);
  *brace = '\0';
  FILE *f = fopen(cfg, "w");
  assert_non_null(f);
  fprintf(f, "%s, \"transports\": {\"zmq\": {\"pub\": \"ipc://%s/pub\", \"cmd\": \"ipc://%s/cmd\","
          " \"ctl\": \"ipc://%s/ctl\"}}}\n", text, dir, dir, dir);
  fclose(f);
  char sensors[160];
  snprintf(sensors, sizeof sensors, "cp %s/configs/club_arm.sensors.json %s/", ACHILLES_SOURCE_DIR,
           dir);
  assert_int_equal(system(sensors), 0);
  char *argv[] = {ACHILLES_BIN, "run", cfg, "--rt", "--duration", "30", "--status-period", "0",
                  NULL};
  pid_t pid = ts_spawn(argv, NULL, out, err);
  int loop = -1, io = -1;
  for (double waited = 0; waited < 20 && (loop <= 0 || io < 0); waited += 0.02) {
    ts_sleep(0.02);
    loop = rt_priority_of(pid, "achilles");
    io = rt_priority_of(pid, "ZMQbg/IO");
  }
  kill(pid, SIGTERM);
  assert_int_equal(ts_wait_exit(pid, EXIT_S), 0);
  const char *said = ts_slurp(err);
  print_message("--rt: loop thread priority %d, ZeroMQ I/O thread %d\n", loop, io);
  if (strstr(said, "SCHED_FIFO refused")) {
    TS_SKIP("SCHED_FIFO refused (not privileged here): no priorities to compare");
  }
  if (loop != 80 || io != 79) {
    fail_msg("--rt: loop priority %d, I/O thread %d (expected 80 and 79); stderr:\n%s", loop, io,
             said);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fast_run_finishes),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_rt_refusals_are_said_and_survived),
      cmocka_unit_test(test_sigint_stops_cleanly),
      cmocka_unit_test(test_firmware_holds_setpoints_in_realtime),
      cmocka_unit_test(test_record_survives_kill),
      cmocka_unit_test(test_failed_recording_is_reported),
      cmocka_unit_test(test_hangup_stops_cleanly),
      cmocka_unit_test(test_rt_loop_outranks_io_thread),
  };
  return ts_run_with(tests, setup, ts_tmp_teardown);
}
