/* tests/hil/servo/test_ft_device.c: a Feetech STS3215 device (hil/servo/ft_device.c): its table's
 * factory values, the EEPROM lock, read-only fields, sign-magnitude fields, registered writes,
 * status return level, broadcast silence, sync read and sync write. Packets are checked with
 * the checksum of the Feetech manual, computed here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "hil/servo/ft_device.h"

/* a packet as the decoder delivers it */
static ft_packet packet(uint8_t id, uint8_t instruction, const uint8_t *params, size_t n) {
  ft_packet p;
  memset(&p, 0, sizeof p);
  p.id = id, p.instruction = instruction, p.nparams = (uint8_t)n;
  if (n) {
    memcpy(p.params, params, n);
  }
  return p;
}

/* the reply's data length, or -1 when silent; checks the frame and its checksum */
static int reply(ft_device *d, const ft_packet *p, uint8_t *data) {
  uint8_t out[300];
  const int n = ft_device_handle(d, p, out, sizeof out);
  assert_true(n >= 0);
  if (n == 0) {
    return -1;
  }
  assert_int_equal(out[0], 0xFF);
  assert_int_equal(out[1], 0xFF);
  assert_int_equal(out[3], n - 4);
  unsigned sum = 0;
  for (int i = 2; i < n - 1; i++) {
    sum += out[i];
  }
  assert_int_equal((uint8_t)~sum, out[n - 1]);
  if (data) {
    memcpy(data, out + 5, (size_t)n - 6);
  }
  return n - 6;
}

static void write1(ft_device *d, uint8_t id, uint8_t address, uint8_t v) {
  const uint8_t p[2] = {address, v};
  ft_packet w = packet(id, FT_WRITE, p, 2);
  assert_int_equal(reply(d, &w, NULL), 0);
}

static void test_table_and_lock(void **state) {
  (void)state;
  ft_device d;
  assert_int_equal(ft_device_init(&d, 999, 1), -1);
  assert_int_equal(ft_device_init(&d, FT_MODEL_STS3215, 3), 0);
  const uint8_t model[2] = {FT_MODEL_NUMBER, 2};
  ft_packet r = packet(3, FT_READ, model, 2);
  uint8_t data[64];
  assert_int_equal(reply(&d, &r, data), 2);
  assert_int_equal(data[0] | (data[1] << 8), 777);
  assert_int_equal(d.mem[FT_LOCK], 1);
  assert_int_equal(ft_baud_rate(d.mem[FT_BAUD_RATE]), 1000000);
  assert_int_equal(ft_baud_rate(6), 57600);
  /* locked EEPROM (Lock 1, at power-on): the write is taken, and lost at a power cycle */
  write1(&d, 3, FT_OPERATING_MODE, 1);
  assert_int_equal(d.mem[FT_OPERATING_MODE], 1);
  ft_device_power_cycle(&d);
  assert_int_equal(d.mem[FT_OPERATING_MODE], 0);
  /* unlocked (Lock 0): kept across the power cycle, which locks again */
  write1(&d, 3, FT_LOCK, 0);
  write1(&d, 3, FT_OPERATING_MODE, 1);
  ft_device_power_cycle(&d);
  assert_int_equal(d.mem[FT_OPERATING_MODE], 1);
  assert_int_equal(d.mem[FT_LOCK], 1);
  /* read-only present position, and an ID past 253: not taken */
  write1(&d, 3, FT_PRESENT_POSITION, 5);
  assert_int_equal(d.mem[FT_PRESENT_POSITION], 0);
  write1(&d, 3, FT_ID, 254);
  assert_int_equal(d.mem[FT_ID], 3);
  assert_true(d.writes_refused >= 2);
  /* a read past the table or of nothing, an unknown instruction: silence */
  const uint8_t past[2] = {70, 2}, none[2] = {56, 0};
  r = packet(3, FT_READ, past, 2);
  assert_int_equal(reply(&d, &r, NULL), -1);
  r = packet(3, FT_READ, none, 2);
  assert_int_equal(reply(&d, &r, NULL), -1);
  r = packet(3, 0x30, NULL, 0);
  assert_int_equal(reply(&d, &r, NULL), -1);
}

static void test_sign_magnitude(void **state) {
  (void)state;
  ft_device d;
  ft_device_init(&d, FT_MODEL_STS3215, 1);
  ft_device_set_signed(&d, FT_PRESENT_SPEED, 15, -300);
  assert_int_equal(d.mem[FT_PRESENT_SPEED], 300 & 0xFF);
  assert_int_equal(d.mem[FT_PRESENT_SPEED + 1], 0x80 | (300 >> 8));
  assert_int_equal(ft_device_get_signed(&d, FT_PRESENT_SPEED, 15), -300);
  ft_device_set_signed(&d, FT_PRESENT_LOAD, 10, -1000);
  assert_int_equal(d.mem[FT_PRESENT_LOAD + 1], 0x04 | (1000 >> 8));
  assert_int_equal(ft_device_get_signed(&d, FT_PRESENT_LOAD, 10), -1000);
  ft_device_set_signed(&d, FT_PRESENT_LOAD, 10, 5000); /* saturates at the magnitude bits */
  assert_int_equal(ft_device_get_signed(&d, FT_PRESENT_LOAD, 10), 1023);
}

static void test_registered_sync_and_levels(void **state) {
  (void)state;
  ft_device a, b;
  ft_device_init(&a, FT_MODEL_STS3215, 1);
  ft_device_init(&b, FT_MODEL_STS3215, 2);
  /* REG_WRITE waits for ACTION (broadcast: no reply) */
  const uint8_t goal[3] = {FT_GOAL_POSITION, 0x00, 0x08};
  ft_packet p = packet(1, FT_REG_WRITE, goal, 3);
  assert_int_equal(reply(&a, &p, NULL), 0);
  assert_int_equal(ft_device_get_signed(&a, FT_GOAL_POSITION, 15), 0);
  p = packet(FT_BROADCAST, FT_ACTION, NULL, 0);
  assert_int_equal(reply(&a, &p, NULL), -1);
  assert_int_equal(ft_device_get_signed(&a, FT_GOAL_POSITION, 15), 2048);
  /* SYNC_WRITE goal speed of both; SYNC_READ it back, each its own */
  const uint8_t sw[] = {FT_GOAL_SPEED, 2, 1, 0x10, 0x00, 2, 0x20, 0x80};
  p = packet(FT_BROADCAST, FT_SYNC_WRITE, sw, sizeof sw);
  assert_int_equal(reply(&a, &p, NULL), -1);
  assert_int_equal(reply(&b, &p, NULL), -1);
  assert_int_equal(ft_device_get_signed(&a, FT_GOAL_SPEED, 15), 16);
  assert_int_equal(ft_device_get_signed(&b, FT_GOAL_SPEED, 15), -32);
  const uint8_t sr[] = {FT_GOAL_SPEED, 2, 2, 1};
  p = packet(FT_BROADCAST, FT_SYNC_READ, sr, sizeof sr);
  uint8_t data[8];
  assert_int_equal(reply(&b, &p, data), 2);
  assert_int_equal(data[0], 0x20);
  /* status return level 0: reads and pings answered, writes not */
  a.mem[FT_STATUS_RETURN_LEVEL] = 0;
  const uint8_t led[2] = {FT_ACCELERATION, 7};
  p = packet(1, FT_WRITE, led, 2);
  assert_int_equal(reply(&a, &p, NULL), -1);
  assert_int_equal(a.mem[FT_ACCELERATION], 7);
  p = packet(1, FT_PING, NULL, 0);
  assert_int_equal(reply(&a, &p, NULL), 0);
  const uint8_t rd[2] = {FT_ACCELERATION, 1};
  p = packet(1, FT_READ, rd, 2);
  assert_int_equal(reply(&a, &p, data), 1);
  assert_int_equal(data[0], 7);
}

/* Calibration as on the real STS (Feetech's memory table and protocol manual): Offset, limits
 * and mode written unlocked survive REBOOT (no reply, the RAM back at its defaults, Torque Limit
 * from Max Torque); Torque Enable = 128 and CALIBRATE set the Offset so that the present
 * position reads 2048 (or the target); RESTORE brings the factory values back but the ID, and
 * only unlocked. */
static void test_calibration_registers(void **state) {
  (void)state;
  ft_device d;
  ft_device_init(&d, FT_MODEL_STS3215, 7);
  const uint8_t unlock[2] = {FT_LOCK, 0};
  ft_packet w = packet(7, FT_WRITE, unlock, 2);
  assert_int_equal(reply(&d, &w, NULL), 0);
  /* Offset -100 (sign bit 11), limits 1000..3000, Max Torque 500, Torque Limit 300 */
  const uint8_t offset[3] = {FT_OFFSET, 100, 0x08}, limits[5] = {FT_MIN_POSITION_LIMIT, 0xE8,
                                                                 0x03, 0xB8, 0x0B};
  const uint8_t max_torque[3] = {FT_MAX_TORQUE, 0xF4, 0x01}, torque[3] = {FT_TORQUE_LIMIT, 44, 1};
  const uint8_t *writes[4] = {offset, limits, max_torque, torque};
  const size_t sizes[4] = {3, 5, 3, 3};
  for (int i = 0; i < 4; i++) {
    w = packet(7, FT_WRITE, writes[i], sizes[i]);
    assert_int_equal(reply(&d, &w, NULL), 0);
  }
  assert_int_equal(d.mem[FT_TORQUE_LIMIT] | (d.mem[FT_TORQUE_LIMIT + 1] << 8), 300);
  ft_packet reboot = packet(7, FT_REBOOT, NULL, 0);
  assert_int_equal(reply(&d, &reboot, NULL), -1); /* no reply */
  assert_int_equal(d.reboots, 1);
  assert_int_equal(d.mem[FT_OFFSET] | (d.mem[FT_OFFSET + 1] << 8), 0x0864);
  assert_int_equal(d.mem[FT_MIN_POSITION_LIMIT] | (d.mem[FT_MIN_POSITION_LIMIT + 1] << 8), 1000);
  assert_int_equal(d.mem[FT_MAX_POSITION_LIMIT] | (d.mem[FT_MAX_POSITION_LIMIT + 1] << 8), 3000);
  assert_int_equal(d.mem[FT_TORQUE_LIMIT] | (d.mem[FT_TORQUE_LIMIT + 1] << 8), 500); /* = Max */
  assert_int_equal(d.mem[FT_LOCK], 1);
  /* Torque Enable = 128 at present position 1500 (actual 1400): Offset 1400 - 2048 = -648 */
  ft_device_set_signed(&d, FT_PRESENT_POSITION, 15, 1500);
  const uint8_t calibrate[2] = {FT_TORQUE_ENABLE, FT_TORQUE_CALIBRATE};
  w = packet(7, FT_WRITE, calibrate, 2);
  assert_int_equal(reply(&d, &w, NULL), 0);
  assert_int_equal(ft_device_get_signed(&d, FT_PRESENT_POSITION, 15), 2048);
  assert_int_equal(d.mem[FT_OFFSET] | (d.mem[FT_OFFSET + 1] << 8), 0x800 | 648);
  assert_int_equal(d.mem[FT_TORQUE_ENABLE], 0);
  /* locked: the new offset is lost at the next power cycle; CALIBRATE to a target, unlocked */
  ft_device_power_cycle(&d);
  assert_int_equal(d.mem[FT_OFFSET] | (d.mem[FT_OFFSET + 1] << 8), 0x0864);
  w = packet(7, FT_WRITE, unlock, 2);
  assert_int_equal(reply(&d, &w, NULL), 0);
  ft_device_set_signed(&d, FT_PRESENT_POSITION, 15, 1500); /* actual 1400 */
  const uint8_t target[2] = {0x00, 0x04};                  /* 1024 */
  ft_packet cal = packet(7, FT_CALIBRATE, target, 2);
  assert_int_equal(reply(&d, &cal, NULL), 0);
  assert_int_equal(d.mem[FT_OFFSET] | (d.mem[FT_OFFSET + 1] << 8), 376); /* 1400 - 1024 */
  ft_device_power_cycle(&d);
  assert_int_equal(d.mem[FT_OFFSET] | (d.mem[FT_OFFSET + 1] << 8), 376);
  /* RESTORE: refused while locked; unlocked, the factory values but the ID */
  ft_packet restore = packet(7, FT_RESTORE, NULL, 0);
  assert_int_equal(reply(&d, &restore, NULL), 0);
  assert_int_equal(d.mem[FT_MIN_POSITION_LIMIT] | (d.mem[FT_MIN_POSITION_LIMIT + 1] << 8), 1000);
  w = packet(7, FT_WRITE, unlock, 2);
  assert_int_equal(reply(&d, &w, NULL), 0);
  assert_int_equal(reply(&d, &restore, NULL), 0);
  assert_int_equal(d.mem[FT_MIN_POSITION_LIMIT] | (d.mem[FT_MIN_POSITION_LIMIT + 1] << 8), 0);
  assert_int_equal(d.mem[FT_OFFSET] | (d.mem[FT_OFFSET + 1] << 8), 0);
  assert_int_equal(d.mem[FT_ID], 7);
  ft_device_power_cycle(&d);
  assert_int_equal(d.mem[FT_MAX_POSITION_LIMIT] | (d.mem[FT_MAX_POSITION_LIMIT + 1] << 8), 4095);
  assert_int_equal(d.mem[FT_ID], 7);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table_and_lock),
      cmocka_unit_test(test_sign_magnitude),
      cmocka_unit_test(test_registered_sync_and_levels),
      cmocka_unit_test(test_calibration_registers),
  };
  return cmocka_run_group_tests_name("ft_device", tests, NULL, NULL);
}
