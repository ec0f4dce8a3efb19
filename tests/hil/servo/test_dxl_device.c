/* tests/hil/servo/test_dxl_device.c: a Dynamixel X-series device (hil/servo/dxl_device.c)
 * answers as the e-manual says a servo does: the manual's ping and read examples byte for byte,
 * writes with their error bits (EEPROM locked while torque is on, range, length, read-only),
 * registered writes, status return level, broadcast silence, sync read and sync write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "hil/servo/dxl_device.h"
#include "support/skip.h"

#include "dxl_decode.h"

/* builds an instruction packet and runs it through the decoder, as the bus would */
static dxl2_packet packet(uint8_t id, uint8_t instruction, const uint8_t *params, size_t n) {
  uint8_t raw[256];
  int len = dxl2_encode(raw, sizeof raw, id, instruction, params, n);
  assert_true(len > 0);
  return dxl2_decode_whole(raw, len);
}

/* the error byte of the status a device sends back (or -1 when silent) */
static int reply_error(dxl_device *d, const dxl2_packet *p, dxl2_packet *status) {
  uint8_t out[256];
  int n = dxl_device_handle(d, p, out, sizeof out);
  assert_true(n >= 0);
  if (n == 0) {
    return -1;
  }
  const dxl2_packet s = dxl2_decode_whole(out, n);
  assert_int_equal(s.instruction, DXL2_STATUS);
  if (status) {
    *status = s;
  }
  return s.params[0];
}

static int write_u32(dxl_device *d, uint8_t id, uint16_t address, uint32_t v, int size) {
  uint8_t params[6] = {(uint8_t)address, (uint8_t)(address >> 8), (uint8_t)v, (uint8_t)(v >> 8),
                       (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  dxl2_packet p = packet(id, DXL2_WRITE, params, 2 + (size_t)size);
  return reply_error(d, &p, NULL);
}

static void test_manual_ping_and_read(void **state) {
  (void)state;
  dxl_device d;
  assert_int_equal(dxl_device_init(&d, DXL_MODEL_XM430_W350, 1), 0);
  /* ping: model 1020, firmware; the manual's XM430 example carries 1030 and 38 in the same
   * layout (model number low, high, firmware) */
  dxl2_packet ping = packet(1, DXL2_PING, NULL, 0), st;
  assert_int_equal(reply_error(&d, &ping, &st), 0);
  assert_int_equal(st.nparams, 4);
  assert_int_equal(dxl2_u16(st.params + 1), 1020);
  /* the manual's read example (4 bytes at 132) answered with the present position it holds */
  dxl_device_set(&d, DXL_PRESENT_POSITION, 4, 166);
  const uint8_t read_params[] = {0x84, 0x00, 0x04, 0x00};
  dxl2_packet read = packet(1, DXL2_READ, read_params, 4);
  uint8_t out[64];
  int n = dxl_device_handle(&d, &read, out, sizeof out);
  const uint8_t manual[] = {0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x08, 0x00, 0x55, 0x00,
                            0xA6, 0x00, 0x00, 0x00, 0x8C, 0xC0};
  assert_int_equal(n, (int)sizeof manual);
  assert_memory_equal(out, manual, sizeof manual);
  /* the manual's write example (512 at 116), then read back */
  assert_int_equal(write_u32(&d, 1, DXL_GOAL_POSITION, 512, 4), 0);
  assert_int_equal(dxl_device_get(&d, DXL_GOAL_POSITION, 4), 512);
  /* another ID stays silent */
  dxl2_packet other = packet(2, DXL2_PING, NULL, 0);
  assert_int_equal(reply_error(&d, &other, NULL), -1);
}

static void test_write_rules(void **state) {
  (void)state;
  dxl_device d;
  dxl_device_init(&d, DXL_MODEL_XL430_W250, 3);
  /* EEPROM (operating mode) with torque off: taken; with torque on: access error, unchanged */
  assert_int_equal(write_u32(&d, 3, DXL_OPERATING_MODE, 4, 1), 0);
  assert_int_equal(d.mem[DXL_OPERATING_MODE], 4);
  assert_int_equal(write_u32(&d, 3, DXL_TORQUE_ENABLE, 1, 1), 0);
  assert_int_equal(write_u32(&d, 3, DXL_OPERATING_MODE, 3, 1), DXL2_ERR_ACCESS);
  assert_int_equal(d.mem[DXL_OPERATING_MODE], 4);
  /* RAM goes on being written with torque on; out of range is a range error */
  assert_int_equal(write_u32(&d, 3, DXL_GOAL_VELOCITY, (uint32_t)-200, 4), 0);
  assert_int_equal(write_u32(&d, 3, DXL_GOAL_VELOCITY, 5000, 4), DXL2_ERR_DATA_RANGE);
  assert_int_equal((int32_t)dxl_device_get(&d, DXL_GOAL_VELOCITY, 4), -200);
  /* read-only, half a field, a hole, past the end */
  assert_int_equal(write_u32(&d, 3, DXL_PRESENT_POSITION, 1, 4), DXL2_ERR_ACCESS);
  assert_int_equal(write_u32(&d, 3, DXL_GOAL_POSITION, 1, 2), DXL2_ERR_DATA_LENGTH);
  assert_int_equal(write_u32(&d, 3, 14, 0, 1), DXL2_ERR_ACCESS);
  assert_int_equal(write_u32(&d, 3, 146, 0, 4), DXL2_ERR_DATA_LENGTH);
  /* the XL430 has no goal current */
  assert_int_equal(write_u32(&d, 3, DXL_GOAL_CURRENT, 10, 2), DXL2_ERR_ACCESS);
  /* an unknown instruction: instruction error */
  dxl2_packet odd = packet(3, 0x42, NULL, 0);
  assert_int_equal(reply_error(&d, &odd, NULL), DXL2_ERR_INSTRUCTION);
  assert_true(d.writes_refused >= 6);
}

static void test_registered_write_and_levels(void **state) {
  (void)state;
  dxl_device d;
  dxl_device_init(&d, DXL_MODEL_XM430_W350, 5);
  const uint8_t goal[] = {116, 0, 0x00, 0x08, 0, 0}; /* 2048 */
  dxl2_packet reg = packet(5, DXL2_REG_WRITE, goal, sizeof goal);
  assert_int_equal(reply_error(&d, &reg, NULL), 0);
  assert_int_equal(dxl_device_get(&d, DXL_GOAL_POSITION, 4), 0); /* not yet */
  assert_int_equal(d.mem[DXL_REGISTERED_INSTRUCTION], 1);
  dxl2_packet action = packet(DXL2_BROADCAST, DXL2_ACTION, NULL, 0);
  assert_int_equal(reply_error(&d, &action, NULL), -1); /* broadcast: silent */
  assert_int_equal(dxl_device_get(&d, DXL_GOAL_POSITION, 4), 2048);
  assert_int_equal(d.mem[DXL_REGISTERED_INSTRUCTION], 0);
  dxl2_packet again = packet(5, DXL2_ACTION, NULL, 0);
  assert_int_equal(reply_error(&d, &again, NULL), DXL2_ERR_INSTRUCTION);
  /* status return level 1: reads answered, writes not; 0: only pings */
  assert_int_equal(write_u32(&d, 5, DXL_STATUS_RETURN_LEVEL, 1, 1), 0);
  assert_int_equal(write_u32(&d, 5, DXL_LED, 1, 1), -1);
  assert_int_equal(d.mem[DXL_LED], 1);
  const uint8_t read_led[] = {65, 0, 1, 0};
  dxl2_packet read = packet(5, DXL2_READ, read_led, 4);
  assert_int_equal(reply_error(&d, &read, NULL), 0);
  d.mem[DXL_STATUS_RETURN_LEVEL] = 0;
  assert_int_equal(reply_error(&d, &read, NULL), -1);
  dxl2_packet ping = packet(DXL2_BROADCAST, DXL2_PING, NULL, 0);
  assert_int_equal(reply_error(&d, &ping, NULL), 0); /* a broadcast ping is answered */
}

/* An EEPROM field registered while torque is off, then torque on, then ACTION: the lock is
 * checked when the write happens, so ACTION answers the Access error and the field stays. */
static void test_registered_eeprom_write_meets_torque(void **state) {
  (void)state;
  dxl_device d;
  dxl_device_init(&d, DXL_MODEL_XL430_W250, 2);
  const uint8_t mode[] = {DXL_OPERATING_MODE, 0, DXL_MODE_VELOCITY};
  dxl2_packet reg = packet(2, DXL2_REG_WRITE, mode, sizeof mode);
  assert_int_equal(reply_error(&d, &reg, NULL), 0); /* torque off: registered */
  assert_int_equal(d.mem[DXL_REGISTERED_INSTRUCTION], 1);
  assert_int_equal(write_u32(&d, 2, DXL_TORQUE_ENABLE, 1, 1), 0);
  dxl2_packet action = packet(2, DXL2_ACTION, NULL, 0);
  assert_int_equal(reply_error(&d, &action, NULL), DXL2_ERR_ACCESS);
  assert_int_equal(d.mem[DXL_OPERATING_MODE], DXL_MODE_POSITION);
  assert_int_equal(d.mem[DXL_REGISTERED_INSTRUCTION], 0);
}

static void test_sync_read_and_write(void **state) {
  (void)state;
  dxl_device a, b;
  dxl_device_init(&a, DXL_MODEL_XM430_W350, 1);
  dxl_device_init(&b, DXL_MODEL_XL430_W250, 2);
  /* SYNC_WRITE goal position: 1 → 1000, 2 → 3000 */
  const uint8_t sw[] = {116, 0, 4, 0, 1, 0xE8, 0x03, 0, 0, 2, 0xB8, 0x0B, 0, 0};
  dxl2_packet p = packet(DXL2_BROADCAST, DXL2_SYNC_WRITE, sw, sizeof sw);
  assert_int_equal(reply_error(&a, &p, NULL), -1);
  assert_int_equal(reply_error(&b, &p, NULL), -1);
  assert_int_equal(dxl_device_get(&a, DXL_GOAL_POSITION, 4), 1000);
  assert_int_equal(dxl_device_get(&b, DXL_GOAL_POSITION, 4), 3000);
  /* SYNC_READ present position of both: each answers with its own */
  dxl_device_set(&a, DXL_PRESENT_POSITION, 4, 11);
  dxl_device_set(&b, DXL_PRESENT_POSITION, 4, 22);
  const uint8_t sr[] = {132, 0, 4, 0, 1, 2};
  dxl2_packet q = packet(DXL2_BROADCAST, DXL2_SYNC_READ, sr, sizeof sr);
  dxl2_packet st;
  assert_int_equal(reply_error(&a, &q, &st), 0);
  assert_int_equal(st.id, 1);
  assert_int_equal(dxl2_u32(st.params + 1), 11);
  assert_int_equal(reply_error(&b, &q, &st), 0);
  assert_int_equal(st.id, 2);
  assert_int_equal(dxl2_u32(st.params + 1), 22);
}

/* Goals past the EEPROM's limits: Data Limit error (position limits only in position mode) */
static void test_limits(void **state) {
  (void)state;
  dxl_device d;
  dxl_device_init(&d, DXL_MODEL_XM430_W350, 1);
  assert_int_equal(write_u32(&d, 1, DXL_MAX_POSITION_LIMIT, 3000, 4), 0);
  assert_int_equal(write_u32(&d, 1, DXL_GOAL_POSITION, 3001, 4), DXL2_ERR_DATA_LIMIT);
  assert_int_equal(write_u32(&d, 1, DXL_GOAL_POSITION, 3000, 4), 0);
  assert_int_equal(write_u32(&d, 1, DXL_OPERATING_MODE, DXL_MODE_EXTENDED_POSITION, 1), 0);
  assert_int_equal(write_u32(&d, 1, DXL_GOAL_POSITION, 9000, 4), 0); /* extended: no limit */
  assert_int_equal(write_u32(&d, 1, DXL_VELOCITY_LIMIT, 100, 4), 0);
  assert_int_equal(write_u32(&d, 1, DXL_GOAL_VELOCITY, (uint32_t)-101, 4), DXL2_ERR_DATA_LIMIT);
  assert_int_equal(write_u32(&d, 1, DXL_GOAL_VELOCITY, (uint32_t)-100, 4), 0);
  assert_int_equal(write_u32(&d, 1, DXL_PWM_LIMIT, 400, 2), 0);
  assert_int_equal(write_u32(&d, 1, DXL_GOAL_PWM, 401, 2), DXL2_ERR_DATA_LIMIT);
  assert_int_equal(write_u32(&d, 1, DXL_CURRENT_LIMIT, 500, 2), 0);
  assert_int_equal(write_u32(&d, 1, DXL_GOAL_CURRENT, (uint32_t)-501, 2), DXL2_ERR_DATA_LIMIT);
  assert_int_equal(write_u32(&d, 1, DXL_GOAL_CURRENT, 500, 2), 0);
}

/* BULK_WRITE gives each servo its own field; BULK_READ answers each with its own */
static void test_bulk(void **state) {
  (void)state;
  dxl_device a, b;
  dxl_device_init(&a, DXL_MODEL_XM430_W350, 1);
  dxl_device_init(&b, DXL_MODEL_XL430_W250, 2);
  const uint8_t bw[] = {1, 65, 0, 1, 0, 1,              /* LED of 1 */
                        2, 116, 0, 4, 0, 0xD0, 0x07, 0, 0}; /* goal position 2000 of 2 */
  dxl2_packet p = packet(DXL2_BROADCAST, DXL2_BULK_WRITE, bw, sizeof bw);
  assert_int_equal(reply_error(&a, &p, NULL), -1);
  assert_int_equal(reply_error(&b, &p, NULL), -1);
  assert_int_equal(a.mem[DXL_LED], 1);
  assert_int_equal(b.mem[DXL_LED], 0);
  assert_int_equal(dxl_device_get(&b, DXL_GOAL_POSITION, 4), 2000);
  assert_int_equal(dxl_device_get(&a, DXL_GOAL_POSITION, 4), 0);
  const uint8_t br[] = {1, 0, 0, 2, 0, 2, 116, 0, 4, 0};
  dxl2_packet q = packet(DXL2_BROADCAST, DXL2_BULK_READ, br, sizeof br);
  dxl2_packet st;
  assert_int_equal(reply_error(&a, &q, &st), 0);
  assert_int_equal(st.nparams, 3);
  assert_int_equal(dxl2_u16(st.params + 1), 1020);
  assert_int_equal(reply_error(&b, &q, &st), 0);
  assert_int_equal(st.nparams, 5);
  assert_int_equal(dxl2_u32(st.params + 1), 2000);
}

/* REBOOT answers, then RAM is back at its defaults and the EEPROM stays; FACTORY_RESET needs
 * torque off and keeps what its parameter says */
static void test_reboot_and_factory_reset(void **state) {
  (void)state;
  dxl_device d;
  dxl_device_init(&d, DXL_MODEL_XL430_W250, 7);
  assert_int_equal(write_u32(&d, 7, DXL_OPERATING_MODE, DXL_MODE_VELOCITY, 1), 0);
  assert_int_equal(write_u32(&d, 7, DXL_BAUD_RATE, 3, 1), 0);
  assert_int_equal(write_u32(&d, 7, DXL_TORQUE_ENABLE, 1, 1), 0);
  assert_int_equal(write_u32(&d, 7, DXL_LED, 1, 1), 0);
  dxl2_packet reboot = packet(7, DXL2_REBOOT, NULL, 0);
  assert_int_equal(reply_error(&d, &reboot, NULL), 0);
  assert_int_equal(d.reboots, 1);
  assert_int_equal(d.mem[DXL_TORQUE_ENABLE], 0);
  assert_int_equal(d.mem[DXL_LED], 0);
  assert_int_equal(d.mem[DXL_OPERATING_MODE], DXL_MODE_VELOCITY);
  /* torque on: refused */
  assert_int_equal(write_u32(&d, 7, DXL_TORQUE_ENABLE, 1, 1), 0);
  const uint8_t keep_id_baud = 0x02, keep_id = 0x01, all = 0xFF;
  dxl2_packet reset = packet(7, DXL2_FACTORY_RESET, &keep_id_baud, 1);
  assert_int_equal(reply_error(&d, &reset, NULL), DXL2_ERR_ACCESS);
  assert_int_equal(d.mem[DXL_OPERATING_MODE], DXL_MODE_VELOCITY);
  assert_int_equal(write_u32(&d, 7, DXL_TORQUE_ENABLE, 0, 1), 0);
  assert_int_equal(reply_error(&d, &reset, NULL), 0);
  assert_int_equal(d.mem[DXL_OPERATING_MODE], DXL_MODE_POSITION);
  assert_int_equal(d.mem[DXL_ID], 7);
  assert_int_equal(d.mem[DXL_BAUD_RATE], 3);
  reset = packet(7, DXL2_FACTORY_RESET, &keep_id, 1);
  assert_int_equal(reply_error(&d, &reset, NULL), 0);
  assert_int_equal(d.mem[DXL_ID], 7);
  assert_int_equal(d.mem[DXL_BAUD_RATE], 1); /* 57600, the default */
  reset = packet(7, DXL2_FACTORY_RESET, &all, 1);
  dxl2_packet st;
  assert_int_equal(reply_error(&d, &reset, &st), 0);
  assert_int_equal(st.id, 7); /* answered with the ID it had */
  assert_int_equal(d.mem[DXL_ID], 1);
  const uint8_t odd = 0x05;
  reset = packet(1, DXL2_FACTORY_RESET, &odd, 1);
  assert_int_equal(reply_error(&d, &reset, NULL), DXL2_ERR_DATA_RANGE);
  assert_int_equal(dxl_baud_rate(1), 57600);
  assert_int_equal(dxl_baud_rate(3), 1000000);
  assert_int_equal(dxl_baud_rate(8), -1);
}

TS_MAIN(test_manual_ping_and_read, test_write_rules, test_registered_write_and_levels,
        test_registered_eeprom_write_meets_torque, test_sync_read_and_write, test_limits, test_bulk,
        test_reboot_and_factory_reset)
