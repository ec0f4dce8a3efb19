/* tests/tools/test_cli_test.c: `achilles test` end to end — the real binary, the example firmware
 * as its own process over a pty, lockstep.
 *
 * The shipped scenarios (configs/scenarios) pass and each planted-bug twin fails exactly the checks
 * its bug breaks; JUnit XML validates against tests/tools/junit.xsd; a result is the same bytes
 * run after run; a replayed log reproduces the live run's trajectory; firmware that exits,
 * hangs or cannot start; a ZeroMQ program; each kind of event (stdin, signals, a cut or noisy
 * line, sensor faults, a parameter change, a ZeroMQ message) acts, and a scenario that is wrong
 * exits 2 naming its field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_suite.h"
#include "support/skip.h"
#include "support/spawn.h"
#include "support/tmp.h"

#define SCENARIOS ACHILLES_SOURCE_DIR "/configs/scenarios/"
#define CLUB ACHILLES_SOURCE_DIR "/configs/club_arm.json"

/* --- results --------------------------------------------------------------------------------- */

static const char *string_of(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* dir/result.json, parsed (the caller deletes it) */
static cJSON *result_of(const char *dir) {
  char path[1024];
  ts_path(path, sizeof path, dir, "result.json");
  cJSON *r = cJSON_Parse(ts_slurp(path));
  if (!r) {
    fail_msg("%s: missing or not JSON", path);
  }
  return r;
}

/* result.json's number at key of its object obj (obj NULL: at the top) */
static double result_number(const char *dir, const char *obj, const char *key) {
  cJSON *r = result_of(dir);
  const cJSON *v = cJSON_GetObjectItem(obj ? cJSON_GetObjectItem(r, obj) : r, key);
  if (!cJSON_IsNumber(v)) {
    fail_msg("%s/result.json: no number at %s.%s", dir, obj ? obj : "", key);
  }
  const double x = v->valuedouble;
  cJSON_Delete(r);
  return x;
}

/* the names of a result's failed checks, joined with "|" */
static const char *failed_checks(const cJSON *result) {
  static char out[2048];
  out[0] = '\0';
  const cJSON *checks = cJSON_GetObjectItemCaseSensitive(result, "checks");
  for (int i = 0; i < cJSON_GetArraySize(checks); i++) {
    const cJSON *c = cJSON_GetArrayItem(checks, i);
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "pass"))) {
      snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", out[0] ? "|" : "",
               string_of(c, "name"));
    }
  }
  return out;
}

/* achilles test SCENARIO --out SUITE_FOLDER/NAME [extra...]: the exit status; out gets the folder */
static int run_scn(const char *scenario, const char *name, char *out, size_t out_sz,
                    const char *extra1, const char *extra2) {
  snprintf(out, out_sz, "%s/%s", ts_tmp_dir(), name);
  char err[512];
  snprintf(err, sizeof err, "%s/%s.stderr", ts_tmp_dir(), name);
  char *argv[] = {ACHILLES_BIN, "test", (char *)scenario, "--out", out, "--quiet",
                  (char *)extra1, (char *)extra2, NULL};
  return ts_wait_exit(ts_spawn(argv, NULL, "/dev/null", err), 120);
}

/* path = dir/name, holding text */
#define WRITE(path, dir, name, text)                                                               \
  do {                                                                                             \
    ts_path(path, sizeof path, dir, name);                                                         \
    ts_write_file(path, text);                                                                     \
  } while (0)

/* runs a shipped scenario: its exit status and failed checks must be these */
static void expect(const char *name, int status, const char *failed) {
  char scenario[512], out[512];
  snprintf(scenario, sizeof scenario, SCENARIOS "%s.json", name);
  const int got = run_scn(scenario, name, out, sizeof out, NULL, NULL);
  cJSON *r = result_of(out);
  if (got != status || strcmp(failed_checks(r), failed) != 0) {
    fail_msg("%s: exit %d (expected %d), failed checks \"%s\" (expected \"%s\")", name, got,
             status, failed_checks(r), failed);
  }
  cJSON_Delete(r);
}

static void test_hold_push_and_its_twin(void **state) {
  (void)state;
  expect("hold_push", 0, "");
  char out[512]; /* the push was applied at its time, to the step: before the step from 1.0 s */
  snprintf(out, sizeof out, "%s/hold_push", ts_tmp_dir());
  cJSON *r = result_of(out);
  const cJSON *push = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "events"), 0);
  assert_true(fabs(cJSON_GetObjectItem(push, "t")->valuedouble - 1.0) < 1e-9);
  cJSON_Delete(r);
  expect("hold_push_wrong_sign", 1,
         "shoulder at its set point before the push|shoulder back after the push|"
         "elbow back after the push|the push does not throw the shoulder");
}

static void test_homing_and_its_twin(void **state) {
  (void)state;
  expect("homing_hard_stop", 0, "");
  expect("homing_stop_sign", 1,
         "holds 0.2 rad from the base's zero|does not push the stop for long");
}

static void test_watchdog_and_its_twin(void **state) {
  (void)state;
  expect("watchdog_stops_arm", 0, "");
  expect("watchdog_no_feed", 1, "holds while the firmware lives|the watchdog trips once");
}

/* --junit: valid against the schema, one testcase per check, a failure with the measured value;
 * and the schema itself refuses a failure without its message */
static void test_junit_validates(void **state) {
  (void)state;
  TS_REQUIRE("libxml2-utils", ts_shell("command -v xmllint", NULL, 0) == 0);
  char out[512], junit[512];
  snprintf(junit, sizeof junit, "%s/junit.xml", ts_tmp_dir());
  assert_int_equal(run_scn(SCENARIOS "hold_push_wrong_sign.json", "junit", out, sizeof out,
                            "--junit", junit), 1);
  char out_text[4096];
  if (ts_shellf(out_text, sizeof out_text,
                "xmllint --noout --schema %s/tests/tools/junit.xsd %s 2>&1", ACHILLES_SOURCE_DIR,
                junit) != 0) {
    fail_msg("%s", out_text);
  }
  const char *xml = ts_slurp(junit);
  assert_non_null(strstr(xml, "<testcase name=\"shoulder back after the push\" "
                              "classname=\"hold_push_wrong_sign\""));
  assert_non_null(strstr(xml, "<failure message=\"|error| "));
  assert_non_null(strstr(xml, "measured: "));
  char bad[512];
  WRITE(bad, ts_tmp_dir(), "bad.xml",
           "<testsuites><testsuite name=\"s\" tests=\"1\"><testcase name=\"c\" classname=\"s\">"
           "<failure type=\"settle\">no message</failure></testcase></testsuite></testsuites>\n");
  assert_true(ts_shellf(out_text, sizeof out_text, "xmllint --noout --schema "
                        "%s/tests/tools/junit.xsd %s 2>&1", ACHILLES_SOURCE_DIR, bad) != 0);
  assert_non_null(strstr(out_text, "'message' is required"));
}

/* the same scenario twice: the same result, byte for byte (lockstep: no wall clock in it) */
static void test_result_repeats(void **state) {
  (void)state;
  char a[512], b[512], pa[600], pb[600];
  assert_int_equal(run_scn(SCENARIOS "hold_push.json", "again1", a, sizeof a, NULL, NULL), 0);
  assert_int_equal(run_scn(SCENARIOS "hold_push.json", "again2", b, sizeof b, NULL, NULL), 0);
  snprintf(pa, sizeof pa, "%s/result.json", a);
  snprintf(pb, sizeof pb, "%s/result.json", b);
  char *first = strdup(ts_slurp(pa));
  assert_string_equal(first, ts_slurp(pb));
  free(first);
}

/* the commands recorded by a live run, replayed as the firmware: the same trajectory */
static void test_replay_reproduces_the_run(void **state) {
  (void)state;
  char live[512], replayed[512], scenario[512], text[2048];
  assert_int_equal(run_scn(SCENARIOS "hold_push.json", "live", live, sizeof live, NULL, NULL), 0);
  snprintf(text, sizeof text,
           "{\"extends\": \"%s/configs/scenarios/hold_push.json\", \"name\": \"replayed\","
           " \"firmware\": {\"command\": null, \"replay\": \"%s/run.log\"}}\n",
           ACHILLES_SOURCE_DIR, live);
  WRITE(scenario, ts_tmp_dir(), "replay.json", text);
  assert_int_equal(run_scn(scenario, "replayed", replayed, sizeof replayed, NULL, NULL), 0);
  cJSON *a = result_of(live), *b = result_of(replayed);
  assert_string_equal(string_of(a, "trajectory_digest"), string_of(b, "trajectory_digest"));
  cJSON_Delete(a);
  cJSON_Delete(b);
}

/* a scenario of the club arm: the header, then firmware, timeline and checks as given */
static void write_scenario(char *path, size_t path_sz, const char *name, double duration,
                           const char *body) {
  char text[8192];
  snprintf(text, sizeof text, "{\"name\": \"%s\", \"robot\": \"%s\", \"seed\": 1, "
                              "\"duration_s\": %g, %s}\n", name, CLUB, duration, body);
  char file[256];
  snprintf(file, sizeof file, "%s.json", name);
  ts_path(path, path_sz, ts_tmp_dir(), file);
  ts_write_file(path, text);
}

/* the scenario written as NAME (write_scenario) and run (run_scn, its folder into out): the
 * command's exit status */
static int scenario_run(const char *name, double duration, const char *body, char *out,
                        size_t out_sz) {
  char path[512];
  write_scenario(path, sizeof path, name, duration, body);
  return run_scn(path, name, out, out_sz, NULL, NULL);
}

#define HOLDING "\"firmware\": {\"command\": [\"pd_firmware\", \"{serial}\", \"--quiet\", " \
                "\"--stdin\", \"--setpoint\", \"1=0.5\", \"--setpoint\", \"2=-0.4\"]}"

/* a firmware that exits at once with 3, one that never answers (a hang, ended by the time limit),
 * one that cannot start */
static void test_firmware_that_dies_hangs_or_is_missing(void **state) {
  (void)state;
  char out[512];
  assert_int_equal(
      scenario_run("dies", 0.5, "\"firmware\": {\"command\": [\"sh\", \"-c\", \"exit 3\"]}", out,
                   sizeof out),
      1);
  cJSON *r = result_of(out);
  assert_string_equal(failed_checks(r), "firmware runs to the end");
  const cJSON *fw = cJSON_GetObjectItem(r, "firmware");
  assert_int_equal(cJSON_GetObjectItem(fw, "exit_code")->valueint, 3);
  cJSON_Delete(r);

  assert_int_equal(
      scenario_run("hangs", 0.5,
                   "\"time_limit_s\": 1.5, \"firmware\": {\"command\": [\"sleep\", \"30\"]}", out,
                   sizeof out),
      1);
  r = result_of(out);
  assert_string_equal(failed_checks(r), "ends within its time limit");
  cJSON_Delete(r);

  assert_int_equal(
      scenario_run("missing", 0.5, "\"firmware\": {\"command\": [\"no-such-firmware-anywhere\"]}",
                   out, sizeof out),
      2);
  char err[600];
  snprintf(err, sizeof err, "%s/missing.stderr", ts_tmp_dir());
  assert_non_null(strstr(ts_slurp(err), "cannot start"));
}

/* a set point on the firmware's standard input at 0.5 s moves the shoulder there; the firmware's
 * own exit code when it stops by itself */
static void test_stdin_and_exit_code(void **state) {
  (void)state;
  char out[512];
  assert_int_equal(
      scenario_run("stdin", 1.5,
                   HOLDING
                   ", \"timeline\": [{\"t\": 0.5, \"firmware\": {\"stdin\": "
                   "\"setpoint 1=0.2\"}}],"
                   " \"checks\": [{\"type\": \"settle\", \"joint\": \"shoulder\", \"value\": 0.2, "
                   "\"tolerance\": 0.03, \"from\": 1.2}, {\"type\": \"output\", \"match\": "
                   "\"setpoint 1=0.2 at t=0.500 s\", \"by\": 0.501}]",
                   out, sizeof out),
      0);
  assert_int_equal(
      scenario_run("exits", 1.0,
                   "\"firmware\": {\"command\": [\"pd_firmware\", \"{serial}\", \"--quiet\", "
                   "\"--duration\", \"0.3\"]}, \"checks\": [{\"type\": \"exit_code\", "
                   "\"equals\": 0}]",
                   out, sizeof out),
      0);
  const double at = result_number(out, "firmware", "exited_at");
  assert_true(at > 0.29 && at < 0.32); /* lockstep went on without it after it left */
  assert_true(result_number(out, NULL, "end_time") > 0.999);
}

/* the line cut at 0.3 s for 0.2 s: lockstep steps on without the firmware, the watchdog trips
 * once, the firmware holds again once mended; frozen (SIGSTOP) for 0.2 s: the same */
static void test_cut_line_and_frozen_firmware(void **state) {
  (void)state;
  const char *checks = "\"checks\": [{\"type\": \"watchdog\", \"trips\": 1}, {\"type\": "
                       "\"settle\", \"joint\": \"shoulder\", \"value\": 0.5, \"tolerance\": "
                       "0.03, \"from\": 1.3}, {\"type\": \"command\", \"max_abs\": 0, "
                       "\"from\": 0.41, \"to\": 0.5}]";
  char out[512], body[2048];
  snprintf(body, sizeof body, HOLDING ", \"timeline\": [{\"t\": 0.3, \"link\": {\"cut\": true}},"
                              " {\"t\": 0.5, \"link\": {\"cut\": false}}], %s", checks);
  assert_int_equal(scenario_run("cut", 1.5, body, out, sizeof out), 0);
  snprintf(body, sizeof body,
           HOLDING
           ", \"timeline\": [{\"t\": 0.3, \"firmware\": {\"signal\": "
           "\"stop\"}}, {\"t\": 0.5, \"firmware\": {\"signal\": \"cont\"}}], %s",
           checks);
  assert_int_equal(scenario_run("frozen", 1.5, body, out, sizeof out), 0);
}

/* bytes corrupted at 0.05 % for 0.2 s (one frame in twenty): frames are lost both ways, lockstep
 * goes on without a step's commands when they came damaged or not within 0.2 s; the arm still
 * holds, and the result counts the damage */
static void test_corrupting_line(void **state) {
  (void)state;
  char out[512];
  assert_int_equal(
      scenario_run("noisy_line", 1.2,
                   HOLDING
                   ", \"timeline\": [{\"t\": 0.3, \"link\": {\"corrupt_rate\": 0.0005, "
                   "\"seed\": 5}}, {\"t\": 0.5, \"link\": {\"corrupt_rate\": 0}}], \"checks\": "
                   "[{\"type\": \"settle\", \"joint\": \"shoulder\", \"value\": 0.5, "
                   "\"tolerance\": 0.05, \"from\": 1.0}]",
                   out, sizeof out),
      0);
  assert_true(result_number(out, "link", "corrupted") > 2);
}

/* a ZeroMQ program (tests/tools/zmq_firmware.py) holds the arm over the simulator's ZeroMQ
 * sockets, bit for bit the same twice; a message on its own ZeroMQ input at 0.3 s moves the
 * shoulder to a new set point */
static void test_zmq_firmware(void **state) {
  (void)state;
  TS_REQUIRE("python3-zmq", ts_python_has("zmq"));
  char path[512], out[512], body[2048], digest[2][32];
  for (int i = 0; i < 2; i++) {
    snprintf(body, sizeof body, "\"firmware\": {\"link\": \"zmq\", \"stop_timeout_s\": 0.1, "
             "\"command\": [\"/usr/bin/python3\", \"%s/tests/tools/zmq_firmware.py\", "
             "\"{zmq.pub}\", \"{zmq.cmd}\", \"{zmq.ctl}\", \"ipc://{out_dir}/input\"]}, "
             "\"checks\": [{\"type\": \"settle\", \"joint\": \"shoulder\", \"value\": 0.5,"
             " \"tolerance\": 0.03, \"from\": 0.5}]", ACHILLES_SOURCE_DIR);
    write_scenario(path, sizeof path, "zmq", 0.8, body);
    assert_int_equal(run_scn(path, i ? "zmq2" : "zmq1", out, sizeof out, NULL, NULL), 0);
    cJSON *r = result_of(out);
    snprintf(digest[i], sizeof digest[i], "%s", string_of(r, "trajectory_digest"));
    cJSON_Delete(r);
  }
  assert_string_equal(digest[0], digest[1]);
  snprintf(body, sizeof body, "\"firmware\": {\"link\": \"zmq\", \"stop_timeout_s\": 0.1, "
           "\"command\": [\"/usr/bin/python3\", \"%s/tests/tools/zmq_firmware.py\", "
           "\"{zmq.pub}\", \"{zmq.cmd}\", \"{zmq.ctl}\", \"ipc://{out_dir}/input\"]}, "
           "\"timeline\": [{\"t\": 0.3, \"firmware\": {\"zmq\": {\"endpoint\": "
           "\"ipc://%s/zmq_input/input\", \"message\": {\"setpoint\": {\"shoulder\": 0.2}}}}}], "
           "\"checks\": [{\"type\": \"settle\", \"joint\": \"shoulder\", \"value\": 0.2, "
           "\"tolerance\": 0.03, \"from\": 1.1}]", ACHILLES_SOURCE_DIR, ts_tmp_dir());
  assert_int_equal(scenario_run("zmq_input", 1.4, body, out, sizeof out), 0);
}

/* a dead shoulder encoder from 0.3 s: the firmware keeps its last reading and the arm still
 * holds; a model change (friction doubled) and sensor noise both change the trajectory, and each
 * repeats bit for bit */
static const char *digest_of(const char *name, const char *timeline) {
  static char digest[32];
  char path[512], out[512], body[2048];
  snprintf(body, sizeof body, HOLDING ", \"timeline\": [%s]", timeline);
  write_scenario(path, sizeof path, name, 0.6, body);
  assert_int_equal(run_scn(path, name, out, sizeof out, NULL, NULL), 0);
  cJSON *r = result_of(out);
  snprintf(digest, sizeof digest, "%s", string_of(r, "trajectory_digest"));
  cJSON_Delete(r);
  return digest;
}

static void test_events_change_the_run(void **state) {
  (void)state;
  char plain[32], again[32], fault[32], friction[32], noise[32];
  snprintf(plain, sizeof plain, "%s", digest_of("plain", ""));
  snprintf(again, sizeof again, "%s", digest_of("plain_again", ""));
  snprintf(fault, sizeof fault, "%s", digest_of("spike", "{\"t\": 0.2, \"sensor_fault\": "
           "{\"sensor\": \"enc_shoulder\", \"fault\": \"spike\", \"probability\": 0.2, "
           "\"size\": 0.05}}, {\"t\": 0.4, \"sensor_fault\": {\"sensor\": \"enc_shoulder\", "
           "\"fault\": \"none\"}}"));
  snprintf(friction, sizeof friction, "%s", digest_of("friction", "{\"t\": 0.2, \"model\": "
           "{\"joint\": \"*\", \"field\": \"frictionloss\", \"scale\": 2}}"));
  snprintf(noise, sizeof noise, "%s", digest_of("noise", "{\"t\": 0.2, \"sensor_param\": "
           "{\"sensor\": \"enc_*\", \"param\": \"noise.white.sigma\", \"value\": 0.002}}"));
  assert_string_equal(plain, again);
  assert_string_not_equal(plain, fault);
  assert_string_not_equal(plain, friction);
  assert_string_not_equal(plain, noise);
  assert_string_equal(friction, digest_of("friction_again", "{\"t\": 0.2, \"model\": "
           "{\"joint\": \"*\", \"field\": \"frictionloss\", \"scale\": 2}}"));
}

/* a scenario that is wrong: exit status 2, the message names the file and the field */
static void test_wrong_scenario_exits_2(void **state) {
  (void)state;
  char out[512], err[600];
  assert_int_equal(
      scenario_run("wrong", 1.0,
                   HOLDING
                   ", \"checks\": [{\"type\": \"settle\", \"joint\": \"elbw\", \"value\": 0,"
                   " \"tolerance\": 0.1}]",
                   out, sizeof out),
      2);
  snprintf(err, sizeof err, "%s/wrong.stderr", ts_tmp_dir());
  assert_non_null(
      strstr(ts_slurp(err), "wrong.json: checks[0]: unknown hinge or slide joint \"elbw\""));
}

TS_MAIN_WITH(cli_suite_setup, ts_tmp_teardown, test_hold_push_and_its_twin,
             test_homing_and_its_twin, test_watchdog_and_its_twin, test_junit_validates,
             test_result_repeats, test_replay_reproduces_the_run,
             test_firmware_that_dies_hangs_or_is_missing, test_stdin_and_exit_code,
             test_cut_line_and_frozen_firmware, test_corrupting_line, test_zmq_firmware,
             test_events_change_the_run, test_wrong_scenario_exits_2)
