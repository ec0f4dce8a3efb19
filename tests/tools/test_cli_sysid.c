/* tests/tools/test_cli_sysid.c: `achilles sysid` as a user meets it before any fit: --help,
 * usage errors (exit 2), and bad input named by its place (exit 1): a missing file, a CSV
 * without the columns named, times that go back, a non-finite cell, a map naming a joint the
 * robot lacks, a parameter it lacks, a log shorter than a window, a log with --map, a log without
 * a sensors file (docs/sysid.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "support/skip.h"
#include "support/spawn.h"
#include "support/tmp.h"

#define ARM ACHILLES_SOURCE_DIR "/configs/club_arm.json"

static char out[1 << 16];
static char dir[256];

static int setup(void **state) {
  (void)state;
  ts_tmpdir(dir, sizeof dir, "cli-sysid");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return ts_rmtree(dir);
}

/* runs `achilles sysid ARGS 2>&1`; the exit status, out the text */
static int sysid(const char *args) {
  return ts_shellf(out, sizeof out, "cd %s && %s sysid %s 2>&1", dir, ACHILLES_BIN, args);
}

#define ASSERT_SAYS(part)                                                                        \
  do {                                                                                           \
    if (!strstr(out, part)) {                                                                    \
      fail_msg("expected \"%s\" in:\n%s", part, out);                                            \
    }                                                                                            \
  } while (0)

static void test_help_and_usage(void **state) {
  (void)state;
  assert_int_equal(sysid("--help"), 0);
  ASSERT_SAYS("usage: achilles sysid ROBOT LOG [options]");
  ASSERT_SAYS("--map MAP");
  ASSERT_SAYS("--report FILE");
  assert_int_equal(ts_shellf(out, sizeof out, "%s --help", ACHILLES_BIN), 0);
  ASSERT_SAYS("  sysid ");
  assert_int_equal(sysid(ARM), 2);
  ASSERT_SAYS("expected ROBOT and LOG (got 1 file names)");
  assert_int_equal(sysid(ARM " x.csv --window 0"), 2);
  ASSERT_SAYS("--window: expected a positive number of seconds, got '0'");
  assert_int_equal(sysid(ARM " x.csv --max-iter 2.5"), 2);
  ASSERT_SAYS("--max-iter: expected a whole number");
  assert_int_equal(sysid(ARM " x.csv --initial-state guess"), 2);
  ASSERT_SAYS("--initial-state: expected fit or log, got 'guess'");
  assert_int_equal(sysid(ARM " x.csv --sensors s.json --no-sensors"), 2);
  ASSERT_SAYS("exclude each other");
  assert_int_equal(sysid(ARM " x.csv --bogus"), 2);
}

static void put_file(const char *name, const char *text) {
  char path[512];
  ts_path(path, sizeof path, dir, name);
  ts_write_file(path, text);
}

static void test_csv_errors(void **state) {
  (void)state;
  assert_int_equal(sysid(ARM " missing.csv"), 1);
  ASSERT_SAYS("missing.csv");
  put_file("a.csv", "t,enc1,pwm1\n0,0,0\n0.001,0,0\n");
  assert_int_equal(sysid(ARM " a.csv --no-sensors"), 1);
  ASSERT_SAYS("a.csv: line 1: no column \"time\"");
  assert_int_equal(sysid(ARM " a.csv --map time=t,shoulder=enc2"), 1);
  ASSERT_SAYS("a.csv: line 1: no column \"enc2\" (shoulder=enc2)");
  assert_int_equal(sysid(ARM " a.csv --map time=t,knee=enc1"), 1);
  ASSERT_SAYS("--map: \"knee=enc1\": knee is neither \"time\", a joint nor an actuator of "
              "club_arm (joints: base_yaw, shoulder, elbow, wrist_roll; actuators: base_motor, "
              "shoulder_motor, elbow_motor, wrist_motor)");
  put_file("b.csv", "time,shoulder,shoulder_motor\n0,0,0\n0.002,0,0\n0.001,0,0\n");
  assert_int_equal(sysid(ARM " b.csv"), 1);
  ASSERT_SAYS("b.csv: line 4: time 0.001 is not after the row before's 0.002 (line 3)");
  put_file("c.csv", "time,shoulder,shoulder_motor\n0,0,0\n0.001,inf,0\n");
  assert_int_equal(sysid(ARM " c.csv"), 1);
  ASSERT_SAYS("c.csv: line 3, column 2 (\"shoulder\"): expected a finite number or a blank "
              "(got \"inf\")");
  /* the library's checks, reached through the command: a parameter the robot lacks, a log
   * shorter than one window */
  put_file("e.csv", "time,shoulder,shoulder_motor\n0,0,0\n0.001,0,0\n0.002,0,0\n");
  assert_int_equal(sysid(ARM " e.csv --params joint.knee.damping"), 1);
  ASSERT_SAYS("parameter 'joint.knee.damping': no element of that name");
  assert_int_equal(sysid(ARM " e.csv"), 1);
  ASSERT_SAYS("shorter than one window");
  put_file("d.csv", "time,hip,knee\n0,0,0\n0.001,0,0\n");
  assert_int_equal(sysid(ARM " d.csv"), 1);
  ASSERT_SAYS("d.csv: line 1: no column is a joint's reading (the joints of club_arm: base_yaw, "
              "shoulder, elbow, wrist_roll)");
}

static void test_log_errors(void **state) {
  (void)state;
  /* a log's first record: a header (docs/logs.md); its CRC is not checked before the map */
  put_file("run.ndjson", "00000000 {\"type\":\"header\"}\n");
  assert_int_equal(sysid(ARM " run.ndjson --map shoulder=x"), 1);
  ASSERT_SAYS("--map is for CSV files");
  assert_int_equal(sysid(ARM " run.ndjson"), 1);
  ASSERT_SAYS("run.ndjson: record 1 at byte 0: CRC mismatch");
  assert_int_equal(sysid(ARM " run.ndjson --no-sensors"), 1);
  ASSERT_SAYS("needs the sensors file that recorded it");
}

TS_MAIN_WITH(setup, teardown, test_help_and_usage, test_csv_errors, test_log_errors)
