/* tests/hil/zmq/test_zmq_streams.c: the PUB streams as subscribers meet them: a slow subscriber
 * loses samples and the sequence numbers say so; tools/scripts/zmq_subscriber.py, run as a process,
 * reads the streams in order and answers of {"cmd":"latest"}. The robot, server and client are
 * zmq_fixture.h's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/skip.h"
#include "support/spawn.h"
#include "support/tmp.h"
#include "zmq_fixture.h"

static void test_slow_subscriber_sees_gaps(void **state) {
  (void)state;
  enum { N = 3000 }; /* 21000 messages, about 6 MB: more than every queue and socket buffer */
  fixture f;
  fixture_start(&f, ",\"sndhwm\":10", 1, HIL_MODE_LOCKSTEP, 0, 10);
  cJSON_Delete(handshake(&f.cli));
  /* N steps while the subscriber reads nothing: the loop never waits for it */
  for (int k = 0; k < N; k++) {
    send_commands(&f.cli, 0.1, 0);
  }
  double steps = 0;
  for (const double until = wait_until(); steps != N && waiting(until);) {
    cJSON *st = request_ok(&f.cli, "{\"cmd\":\"status\"}");
    steps = status_number(cJSON_GetObjectItem(st, "status"), "steps", NULL);
    cJSON_Delete(st);
    if (steps != N) {
      pause_briefly();
    }
  }
  if (steps != N) {
    fail_msg("the loop did not take the %d commanded steps (%.0f after %.0f s)", N, steps, WAIT_S);
  }
  /* what is left in the queues: increasing sequence numbers with holes */
  int received = 0, gaps = 0;
  uint64_t last = 0;
  message m;
  for (const double until = wait_until(); has_input(f.cli.sub, 100) && waiting(until);) {
    receive(&f.cli, &m);
    if (strcmp(m.topic, "enc/enc_shoulder") != 0) {
      continue;
    }
    const hil_msg_sample smp = decode(&m);
    if (received > 0) {
      assert_true(smp.seq > last);
      gaps += smp.seq != last + 1;
    }
    last = smp.seq;
    received++;
  }
  assert_true(received > 0);
  assert_true(received < N);
  assert_true(gaps >= 1);
  fixture_stop(&f);
}

/* Runs tools/scripts/zmq_subscriber.py with `args` (NULL-terminated) as a process, stepping the
 * simulator until it exits; its output (stdout and stderr) goes to text. Returns its exit code. */
static int run_subscriber_tool(fixture *f, const char *const *args, char *text, size_t cap) {
  /* argv[0] is the full path: a bare "python3" makes Python look itself up on PATH and take its
   * library path from whichever python3 comes first there */
  char *argv[16] = {"/usr/bin/python3", ACHILLES_SOURCE_DIR "/tools/scripts/zmq_subscriber.py"};
  for (int i = 0; args[i] && i < 13; i++) {
    argv[2 + i] = (char *)args[i];
  }
  char out[256];
  ts_path(out, sizeof out, f->dir.path, "subscriber.txt");
  const pid_t pid = ts_spawn(argv, NULL, out, out);
  int rc = TS_RUNNING;
  for (const double until = wait_until(); rc == TS_RUNNING && waiting(until);) {
    request_ok_discard(&f->cli, "{\"cmd\":\"step\",\"n\":1}"); /* until the tool has read all */
    pause_briefly();
    rc = ts_exit_status(pid);
  }
  if (rc == TS_RUNNING) {
    ts_stop(pid, SIGKILL, WAIT_S);
    fail_msg("zmq_subscriber.py did not finish (%.0f s)", WAIT_S);
  }
  snprintf(text, cap, "%s", ts_slurp(out));
  return rc;
}

static void test_python_subscriber(void **state) {
  fixture *f = *state;
  TS_REQUIRE("python3-zmq", ts_python_has("zmq"));
  const char *args[] = {"-e", f->srv.endpoint[HIL_ZMQ_PUB], "-n", "40", "enc/enc_shoulder", NULL};
  char text[16384];
  assert_int_equal(run_subscriber_tool(f, args, text, sizeof text), 0);
  /* 40 lines "enc/enc_shoulder seq=K t=..." with consecutive K, then the summary */
  int lines = 0, summary = 0;
  long last = -1;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (strncmp(line, "enc/enc_shoulder ", 17) != 0) {
      fail_msg("unexpected output line: %s", line);
    }
    const char *seq = strstr(line, "seq=");
    if (!seq) {
      summary += strstr(line, " 40 received ") && strstr(line, " 0 missed");
      continue;
    }
    const long k = strtol(seq + 4, NULL, 10);
    if (lines++ > 0) {
      assert_int_equal(k, last + 1);
    }
    last = k;
  }
  assert_int_equal(lines, 40);
  assert_int_equal(summary, 1);
}

/* --latest prints the answers to {"cmd":"latest"}: each with one line per topic matching the
 * prefixes, later answers later in time. */
static void test_python_subscriber_latest(void **state) {
  fixture *f = *state;
  TS_REQUIRE("python3-zmq", ts_python_has("zmq"));
  const char *args[] = {"--latest", "--control", f->srv.endpoint[HIL_ZMQ_CTL],
                        "--interval", "0.05", "-n", "2", "enc/", "truth/enc/enc_shoulder", NULL};
  char text[16384];
  assert_int_equal(run_subscriber_tool(f, args, text, sizeof text), 0);
  int answers = 0, lines = 0;
  double t[2] = {NAN, NAN};
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (strncmp(line, "latest t=", 9) == 0) {
      assert_true(answers < 2);
      t[answers++] = strtod(line + 9, NULL);
    } else if (strncmp(line, "enc/enc_shoulder ", 17) == 0 ||
               strncmp(line, "enc/enc_elbow ", 14) == 0 ||
               strncmp(line, "truth/enc/enc_shoulder ", 23) == 0) {
      lines++;
    } else {
      fail_msg("unexpected output line: %s", line);
    }
  }
  assert_int_equal(answers, 2);
  assert_int_equal(lines, 2 * 3);
  assert_true(t[1] > t[0]);
}

ZMQ_MAIN((test_slow_subscriber_sees_gaps),
         (test_python_subscriber, test_python_subscriber_latest))
