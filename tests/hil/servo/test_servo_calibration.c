/* tests/hil/servo/test_servo_calibration.c: the registers a calibration routine writes, over the
 * bus, as the manuals say: offsets and limits written (the STS unlocked) survive a REBOOT, the
 * reported position moves by the offset, a goal beyond the limits is refused (X-series: Data
 * Limit error) or clamped (STS), the STS's Torque Enable = 128 makes the present position 2048,
 * and the factory reset (X-series FACTORY_RESET, STS RESTORE) brings the defaults back. One link
 * about z, no gravity, on one servo of each protocol (a robot written here). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "servo_client.h"
#include "support/tmp.h"

/* a robot of one link about z on a servo of `model`, written into dir */
static void write_robot(char *path, size_t path_sz, const char *dir, const char *model) {
  char file[64], text[1024];
  snprintf(file, sizeof file, "%s.json", model);
  ts_path(path, path_sz, dir, file);
  snprintf(text, sizeof text,
          "{\"name\": \"one\", \"timestep\": 0.001, \"gravity\": [0, 0, 0],\n"
          " \"bodies\": [{\"name\": \"a\", \"parent\": \"world\", \"joint\": {\"name\": \"ja\", "
          "\"type\": \"hinge\", \"axis\": [0, 0, 1]},\n"
          "   \"inertial\": {\"mass\": 0.1, \"com\": [0.05, 0, 0], \"inertia\": [1e-5, 1e-4, "
          "1e-4, 0, 0, 0]}}],\n"
          " \"actuators\": [{\"name\": \"sa\", \"joint\": \"ja\", \"type\": \"servo\", "
          "\"servo\": {\"id\": 1, \"model\": \"%s\"}}]}\n",
          model);
  ts_write_file(path, text);
}

/* a field after the servo's loop has run on it: polled until it equals want (deadline) */
static uint32_t settle_read(client *c, int dxl, uint16_t address, int size, uint32_t want) {
  uint32_t v = 0;
  const double until = ts_now() + REPLY_WAIT_S;
  do {
    v = dxl ? read_field(c, 1, address, size) : ft_read(c, 1, (uint8_t)address, (uint8_t)size);
  } while (v != want && ts_now() < until);
  return v;
}

/* waits for the end of a move (Moving 0 and within tol of goal); the position reached */
static int32_t wait_arrival(client *c, int dxl, int32_t goal, int tol) {
  int32_t p = 0;
  const double until = ts_now() + 10;
  int arrived = 0;
  while (!arrived && ts_now() < until) {
    p = dxl ? (int32_t)read_field(c, 1, 132, 4) : (int32_t)(ft_read(c, 1, 56, 2) & 0x7FFF);
    arrived = abs(p - goal) <= tol && (dxl ? read_field(c, 1, 122, 1) : ft_read(c, 1, 66, 1)) == 0;
  }
  if (!arrived) {
    fail_msg("the servo did not arrive at %d (at %d)", goal, p);
  }
  return p;
}

static void test_dynamixel_calibration(const char *dir) {
  char robot[256];
  write_robot(robot, sizeof robot, dir, "XL430-W250");
  fixture f;
  start_with(&f, robot, 1000000, 1);
  const int32_t p0 = (int32_t)read_field(&f.c, 1, 132, 4);
  /* torque off: EEPROM writable; Present = Actual + Homing Offset */
  assert_int_equal(write_field(&f.c, 1, 20, 300, 4), 0);
  assert_int_equal((int32_t)settle_read(&f.c, 1, 132, 4, (uint32_t)(p0 + 300)), p0 + 300);
  assert_int_equal(write_field(&f.c, 1, 52, 1000, 4), 0); /* Min Position Limit */
  assert_int_equal(write_field(&f.c, 1, 48, 3000, 4), 0); /* Max Position Limit */
  send_packet(&f.c, 1, 0x08, NULL, 0); /* REBOOT: answered, then the RAM is reset */
  assert_int_equal(expect_status(&f.c, 1, "REBOOT").error, 0);
  assert_int_equal(read_field(&f.c, 1, 20, 4), 300);
  assert_int_equal(read_field(&f.c, 1, 52, 4), 1000);
  assert_int_equal(read_field(&f.c, 1, 48, 4), 3000);
  assert_int_equal((int32_t)settle_read(&f.c, 1, 132, 4, (uint32_t)(p0 + 300)), p0 + 300);
  /* a goal beyond the limits: the Data Limit error, the goal unchanged; inside: moves there */
  assert_int_equal(write_field(&f.c, 1, 64, 1, 1), 0);
  const uint32_t goal_before = read_field(&f.c, 1, 116, 4);
  assert_int_equal(write_field(&f.c, 1, 116, 3500, 4), 0x06);
  assert_int_equal(read_field(&f.c, 1, 116, 4), goal_before);
  assert_int_equal(write_field(&f.c, 1, 116, 2800, 4), 0);
  const int32_t at = wait_arrival(&f.c, 1, 2800, 10);
  /* FACTORY_RESET (all but ID and baud), with torque off: the offset and limits are gone */
  assert_int_equal(write_field(&f.c, 1, 64, 0, 1), 0);
  const uint8_t keep[1] = {0x02};
  send_packet(&f.c, 1, 0x06, keep, 1);
  assert_int_equal(expect_status(&f.c, 1, "FACTORY_RESET").error, 0);
  assert_int_equal(read_field(&f.c, 1, 20, 4), 0);
  assert_int_equal(read_field(&f.c, 1, 48, 4), 4095);
  ts_sleep(0.1); /* the joint coasts a little once torque is off */
  const int32_t reset = (int32_t)read_field(&f.c, 1, 132, 4);
  assert_true(abs(reset - (at - 300)) <= 5);
  printf("dynamixel calibration: offset +300 kept across REBOOT, goal 3500 refused (limit "
         "3000), 2800 reached at %d; after the factory reset %d\n", at, reset);
  stop(&f);
}

static void test_feetech_calibration(const char *dir) {
  char robot[256];
  write_robot(robot, sizeof robot, dir, "STS3215");
  fixture f;
  start_with(&f, robot, 1000000, 1);
  const int32_t p0 = (int32_t)(ft_read(&f.c, 1, 56, 2) & 0x7FFF);
  /* unlocked: Offset +200 (31), limits 1000..3000 (9, 11), then locked again */
  ft_write(&f.c, 1, 55, 0, 1);
  ft_write(&f.c, 1, 31, 200, 2);
  ft_write(&f.c, 1, 9, 1000, 2);
  ft_write(&f.c, 1, 11, 3000, 2);
  ft_write(&f.c, 1, 55, 1, 1);
  /* Present = Actual − Offset */
  assert_int_equal((int32_t)settle_read(&f.c, 0, 56, 2, (uint32_t)(p0 - 200)), p0 - 200);
  ft_send(&f.c, 1, 0x08, NULL, 0); /* REBOOT: no reply */
  assert_int_equal(ft_read(&f.c, 1, 31, 2), 200);
  assert_int_equal(ft_read(&f.c, 1, 9, 2), 1000);
  assert_int_equal(ft_read(&f.c, 1, 11, 2), 3000);
  assert_int_equal((int32_t)settle_read(&f.c, 0, 56, 2, (uint32_t)(p0 - 200)), p0 - 200);
  /* a goal beyond Max Position Limit: driven to the limit (clamped) */
  ft_write(&f.c, 1, 40, 1, 1);
  ft_write(&f.c, 1, 42, 3500, 2);
  const int32_t at = wait_arrival(&f.c, 0, 3000, 12);
  /* Torque Enable = 128: here is 2048 (the Offset follows), torque off */
  ft_write(&f.c, 1, 40, 128, 1);
  assert_int_equal(ft_read(&f.c, 1, 56, 2), 2048);
  assert_int_equal(ft_read(&f.c, 1, 40, 1), 0);
  /* the new Offset is Actual − 2048 (sign-magnitude, bit 11): 200 + where it was − 2048 */
  const uint32_t raw = ft_read(&f.c, 1, 31, 2);
  const int32_t offset = (int32_t)(raw & 0x7FF) * (raw & 0x800 ? -1 : 1);
  assert_true(abs(offset - (200 + at - 2048)) <= 2);
  /* RESTORE, unlocked: the factory values but the ID */
  ft_write(&f.c, 1, 55, 0, 1);
  ft_send(&f.c, 1, 0x06, NULL, 0);
  ft_expect(&f.c, 1, "RESTORE");
  assert_int_equal(ft_read(&f.c, 1, 31, 2), 0);
  assert_int_equal(ft_read(&f.c, 1, 11, 2), 4095);
  printf("feetech calibration: offset +200 kept across REBOOT, goal 3500 clamped to the limit "
         "3000 (reached %d), Torque Enable 128 -> 2048 (Offset %d)\n", at, offset);
  stop(&f);
}

static void test_calibration(void **state) {
  (void)state;
  char dir[128];
  ts_tmpdir(dir, sizeof dir, "servo-cal");
  test_dynamixel_calibration(dir);
  test_feetech_calibration(dir);
  ts_rmtree(dir);
}

int main(void) {
  make_crc_table();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_calibration),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
