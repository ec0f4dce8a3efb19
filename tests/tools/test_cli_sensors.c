/* tests/tools/test_cli_sensors.c: `achilles sensors` as a user runs it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "support/skip.h"
#include "support/spawn.h"
#include "support/tmp.h"

static char first[1 << 20], second[1 << 20];

#define CONFIG ACHILLES_SOURCE_DIR "/configs/club_arm.json"

static void test_true_and_measured_side_by_side(void **state) {
  (void)state;
  assert_int_equal(ts_shell(ACHILLES_BIN " sensors " CONFIG " --duration 0.05 --seed 4", first,
                            sizeof first), 0);
  /* every channel of the club arm's sensors, truth next to measurement */
  const char *columns[] = {"time,enc_base_yaw.seq,enc_base_yaw.counts.true,enc_base_yaw.counts.meas",
                           "imu_wrist.accel.z.true,imu_wrist.accel.z.meas",
                           "torque_shoulder.torque.true,torque_shoulder.torque.meas"};
  for (int i = 0; i < 3; i++) {
    if (!strstr(first, columns[i])) {
      fail_msg("header lacks %s", columns[i]);
    }
  }
  int rows = 0;
  for (const char *c = first; *c; c++) {
    rows += *c == '\n';
  }
  assert_true(rows >= 51); /* a header and a row per physics step with a sample (1 kHz) */
}

static void test_seed_decides_the_stream(void **state) {
  (void)state;
  assert_int_equal(ts_shell(ACHILLES_BIN " sensors " CONFIG " --duration 0.05 --seed 4", first,
                            sizeof first), 0);
  assert_int_equal(ts_shell(ACHILLES_BIN " sensors " CONFIG " --duration 0.05 --seed 4", second,
                            sizeof second), 0);
  assert_string_equal(first, second); /* same seed: byte-identical */
  assert_int_equal(ts_shell(ACHILLES_BIN " sensors " CONFIG " --duration 0.05 --seed 5", second,
                            sizeof second), 0);
  assert_true(strcmp(first, second) != 0); /* another seed: another stream */
}

static void test_errors(void **state) {
  (void)state;
  int rc = ts_shell(ACHILLES_BIN " sensors " CONFIG " --duration 0.05 --torque nope=1 2>&1", first,
                    sizeof first);
  assert_int_not_equal(rc, 0);
  assert_non_null(strstr(first, "nope"));
  rc = ts_shell(ACHILLES_BIN " sensors " ACHILLES_SOURCE_DIR "/configs/two_link_arm.json"
                        " --duration 0.05 2>&1",
                first, sizeof first);
  assert_int_not_equal(rc, 0); /* a robot without sensors says so */
  assert_non_null(strstr(first, "sensors"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_true_and_measured_side_by_side),
      cmocka_unit_test(test_seed_decides_the_stream),
      cmocka_unit_test(test_errors),
  };
  return ts_run(tests);
}
