/* tests/hil/servo/test_servo_bus.c: the simulated arm as a Dynamixel Protocol 2.0 bus, end to end
 * over a pseudo-terminal (hil/servo/servo_bus.c, configs/servo_arm.json: four X-series servos).
 *
 * The controller side is written here from the Protocol 2.0 e-manual alone (its own CRC table,
 * stuffing and status parser; nothing from hil/servo), and the manual's published example
 * packets are sent as the manual prints them. The runtime runs in realtime mode in a thread.
 * The same for the Feetech SMS/STS protocol on configs/servo_arm_sts.json (four STS3215).
 */
#define _GNU_SOURCE /* cfmakeraw */
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hil/error.h"
#include "hil/runtime/runtime.h"
#include "hil/servo/servo_bus.h"
#include "hil/transport.h"
#include "servo_client.h"
#include "support/numbers.h"
#include "support/pty_board.h"
#include "support/runtime.h"
#include "support/skip.h"
#include "support/tmp.h"

#define ARM ACHILLES_SOURCE_DIR "/configs/servo_arm.json"
#define STS_ARM ACHILLES_SOURCE_DIR "/configs/servo_arm_sts.json"

/* --- tests ------------------------------------------------------------------------------------ */

/* The manual's examples, as printed (Protocol 2.0 e-manual, instruction examples). */
static const uint8_t manual_ping_id1[] = {0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x03, 0x00, 0x01, 0x19, 0x4E};
static const uint8_t manual_write_512_at_116[] = {0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x09, 0x00, 0x03,
                                                  0x74, 0x00, 0x00, 0x02, 0x00, 0x00, 0xCA, 0x89};
static const uint8_t manual_write_status[] = {0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x04,
                                              0x00, 0x55, 0x00, 0xA1, 0x0C};
/* sync read of 4 bytes at 132 (present position) from IDs 1 and 2 */
static const uint8_t manual_sync_read[] = {0xFF, 0xFF, 0xFD, 0x00, 0xFE, 0x09, 0x00, 0x82,
                                           0x84, 0x00, 0x04, 0x00, 0x01, 0x02, 0xCE, 0xFA};
/* sync write of goal position (116) 150 to ID 1 and 170 to ID 2 */
static const uint8_t manual_sync_write[] = {0xFF, 0xFF, 0xFD, 0x00, 0xFE, 0x11, 0x00, 0x83,
                                            0x74, 0x00, 0x04, 0x00, 0x01, 0x96, 0x00, 0x00,
                                            0x00, 0x02, 0xAA, 0x00, 0x00, 0x00, 0x82, 0x87};

static void test_ping_read_write_sync(void **state) {
  (void)state;
  fixture f;
  start_with(&f, ARM, 1000000, 1);
  /* the manual's ping: ID 1 (an XL430-W250) answers with its model number */
  send_bytes(&f.c, manual_ping_id1, sizeof manual_ping_id1);
  status s = expect_status(&f.c, 1, "the manual's PING");
  assert_int_equal(s.error, 0);
  assert_int_equal(s.ndata, 3);
  assert_int_equal(le(s.data, 2), 1060);
  /* each of the four, and a broadcast ping answered by all four in ID order */
  const unsigned models[4] = {1060, 1020, 1020, 1060};
  for (uint8_t id = 1; id <= 4; id++) {
    send_packet(&f.c, id, 0x01, NULL, 0);
    assert_int_equal(le(expect_status(&f.c, id, "PING").data, 2), models[id - 1]);
  }
  send_packet(&f.c, 0xFE, 0x01, NULL, 0);
  for (uint8_t id = 1; id <= 4; id++) {
    assert_int_equal(le(expect_status(&f.c, id, "broadcast PING").data, 2), models[id - 1]);
  }
  /* the manual's write and its status packet, byte for byte */
  send_bytes(&f.c, manual_write_512_at_116, sizeof manual_write_512_at_116);
  s = expect_status(&f.c, 1, "the manual's WRITE");
  assert_int_equal(s.raw_len, sizeof manual_write_status);
  assert_memory_equal(s.raw, manual_write_status, sizeof manual_write_status);
  assert_int_equal(read_field(&f.c, 1, 116, 4), 512);
  /* the manual's sync write, then its sync read: IDs 1 and 2 answer in that order */
  send_bytes(&f.c, manual_sync_write, sizeof manual_sync_write);
  assert_int_equal(read_field(&f.c, 1, 116, 4), 150);
  assert_int_equal(read_field(&f.c, 2, 116, 4), 170);
  send_bytes(&f.c, manual_sync_read, sizeof manual_sync_read);
  for (uint8_t id = 1; id <= 2; id++) {
    s = expect_status(&f.c, id, "the manual's SYNC_READ");
    assert_int_equal(s.ndata, 4);
  }
  /* sync read and sync write of four servos: LED on 1..4 */
  uint8_t sw[4 + 4 * 2] = {65, 0, 1, 0};
  for (int i = 0; i < 4; i++) {
    sw[4 + 2 * i] = (uint8_t)(i + 1), sw[5 + 2 * i] = 1;
  }
  send_packet(&f.c, 0xFE, 0x83, sw, sizeof sw);
  const uint8_t sr[] = {65, 0, 1, 0, 4, 3, 2, 1}; /* answered in the order asked */
  send_packet(&f.c, 0xFE, 0x82, sr, sizeof sr);
  for (uint8_t id = 4; id >= 1; id--) {
    s = expect_status(&f.c, id, "SYNC_READ of four");
    assert_int_equal(s.ndata, 1);
    assert_int_equal(s.data[0], 1);
  }
  /* bulk read: a different field from each */
  const uint8_t br[] = {1, 132, 0, 4, 0, 2, 0, 0, 2, 0, 3, 146, 0, 1, 0};
  send_packet(&f.c, 0xFE, 0x92, br, sizeof br);
  assert_int_equal(expect_status(&f.c, 1, "BULK_READ").ndata, 4);
  assert_int_equal(le(expect_status(&f.c, 2, "BULK_READ").data, 2), 1020);
  assert_int_equal(expect_status(&f.c, 3, "BULK_READ").data[0], 30); /* °C */
  stop(&f);
}

/* The shoulder (ID 2) with torque off falls under gravity; with torque on, the base (ID 1)
 * follows a goal with the profile's velocity; the wrist (ID 4) in extended position mode turns
 * past a whole turn; writing the EEPROM with torque on is refused with the Access error. */
static void test_position_modes(void **state) {
  (void)state;
  fixture f;
  start_with(&f, ARM, 1000000, 1);
  const double t0 = ts_now();
  int fell = 0;
  while (!fell && ts_now() < t0 + 5) {
    fell = fabs((double)(int32_t)read_field(&f.c, 2, 132, 4) - 2048.0) > 300;
  }
  assert_true(fell); /* torque off: the arm left its start by more than 26° */

  /* EEPROM with torque on: Access error 0x07; torque off: taken */
  assert_int_equal(write_field(&f.c, 1, 64, 1, 1), 0);
  assert_int_equal(write_field(&f.c, 1, 11, 4, 1), 0x07);
  assert_int_equal(read_field(&f.c, 1, 11, 1), 3);

  /* position mode on the base: profile velocity 40 (9.16 rpm = 625 ticks/s), accel 20 */
  const int32_t start = (int32_t)read_field(&f.c, 1, 132, 4);
  assert_int_equal(write_field(&f.c, 1, 112, 40, 4), 0);
  assert_int_equal(write_field(&f.c, 1, 108, 20, 4), 0);
  assert_int_equal(write_field(&f.c, 1, 116, (uint32_t)(start + 1024), 4), 0);
  /* the servo's own clock (Realtime Tick, ms of simulated time, modulo 32768): a loaded machine
   * that runs the simulation late does not slow the profile down */
  double traj_max = 0, t_quarter = -1, t_three_quarters = -1, t = 0;
  int arrived = 0, profiling_seen = 0;
  const double t1 = ts_now();
  const uint32_t tick0 = read_field(&f.c, 1, 120, 2);
  while (!arrived && ts_now() < t1 + 20) {
    const int32_t p = (int32_t)read_field(&f.c, 1, 132, 4);
    t = ((read_field(&f.c, 1, 120, 2) - tick0 + 32768) % 32768) * 1e-3;
    t_quarter = t_quarter < 0 && p >= start + 256 ? t : t_quarter;
    t_three_quarters = t_three_quarters < 0 && p >= start + 768 ? t : t_three_quarters;
    profiling_seen |= (read_field(&f.c, 1, 123, 1) & 2) != 0;
    traj_max = fmax(traj_max, fabs((double)(int32_t)read_field(&f.c, 1, 136, 4)));
    arrived = abs(p - (start + 1024)) <= 10 && read_field(&f.c, 1, 122, 1) == 0;
  }
  assert_true(arrived);
  assert_true(profiling_seen);
  const double took = t;
  /* the middle half of the move at the profile's speed: 40 × 0.229 rpm = 625 ticks/s */
  const double cruise = 512.0 / (t_three_quarters - t_quarter) / (0.229 / 60 * 4096);
  printf("position mode: 1024 ticks in %.2f s of simulated time, profile velocity peak %.0f, mean velocity over "
         "the middle half %.1f (profile 40)\n", took, traj_max, cruise);
  /* 1024 ticks at 625 ticks/s take at least 1.64 s; the arm follows the profile (on a swinging
   * arm the base wobbles about it, hence the mean) */
  assert_true(fabs(traj_max - 40) <= 1);
  assert_true(took > 1.6 && took < 1.64 + 3.0);
  assert_true(cruise >= 40 * 0.8 && cruise <= 40 * 1.25);

  /* a goal beyond the position limits in position mode: Data Limit error 0x06 */
  assert_int_equal(write_field(&f.c, 4, 116, 9000, 4), 0x06);
  /* extended position mode on the wrist: two and a quarter turns */
  assert_int_equal(write_field(&f.c, 4, 11, 4, 1), 0);
  assert_int_equal(write_field(&f.c, 4, 64, 1, 1), 0);
  const int32_t w0 = (int32_t)read_field(&f.c, 4, 132, 4);
  const int32_t goal = w0 + 2 * 4096 + 1024;
  assert_int_equal(write_field(&f.c, 4, 116, (uint32_t)goal, 4), 0);
  int turned = 0;
  const double t2 = ts_now();
  while (!turned && ts_now() < t2 + 10) {
    turned = abs((int32_t)read_field(&f.c, 4, 132, 4) - goal) <= 20;
  }
  assert_true(turned);
  stop(&f);
}

/* Damaged and odd packets: silence or the documented error, and the bus goes on. */
static void test_bad_input(void **state) {
  (void)state;
  fixture f;
  start_with(&f, ARM, 1000000, 0);
  status s;
  /* a wrong CRC: silence; the ping after it is the first answer */
  uint8_t bad[sizeof manual_ping_id1];
  memcpy(bad, manual_ping_id1, sizeof bad);
  bad[sizeof bad - 1] ^= 0x01;
  send_bytes(&f.c, bad, sizeof bad);
  send_packet(&f.c, 2, 0x01, NULL, 0);
  assert_int_equal(expect_status(&f.c, 2, "PING after a bad CRC").ndata, 3);
  /* a truncated packet: given up after the packet timeout; pings until one is answered */
  send_bytes(&f.c, manual_write_512_at_116, 9);
  int answered = 0;
  for (int i = 0; i < 50 && !answered; i++) {
    send_packet(&f.c, 3, 0x01, NULL, 0);
    answered = receive(&f.c, &s, 0.1) && s.id == 3;
  }
  assert_true(answered);
  /* an unknown instruction: Instruction error 0x02 */
  send_packet(&f.c, 1, 0x30, NULL, 0);
  assert_int_equal(expect_status(&f.c, 1, "an unknown instruction").error, 0x02);
  /* a read beyond the table, and of length 0: Data Length error 0x05 */
  const uint8_t beyond[] = {200, 0, 4, 0}, none[] = {132, 0, 0, 0};
  send_packet(&f.c, 1, 0x02, beyond, 4);
  assert_int_equal(expect_status(&f.c, 1, "a read beyond the table").error, 0x05);
  send_packet(&f.c, 1, 0x02, none, 4);
  assert_int_equal(expect_status(&f.c, 1, "a read of 0 bytes").error, 0x05);
  /* a write into a read-only field: Access error; a value out of range: Data Range error */
  assert_int_equal(write_field(&f.c, 1, 132, 5, 4), 0x07);
  assert_int_equal(write_field(&f.c, 1, 65, 7, 1), 0x04);
  /* garbage between packets, then a good one */
  const uint8_t noise[] = {0x00, 0xFF, 0x13, 0xFF, 0xFF, 0x42};
  send_bytes(&f.c, noise, sizeof noise);
  send_packet(&f.c, 4, 0x01, NULL, 0);
  assert_int_equal(expect_status(&f.c, 4, "PING after garbage").ndata, 3);
  /* a broadcast write: done, but no reply; the next read shows it */
  const uint8_t led[] = {65, 0, 1};
  send_packet(&f.c, 0xFE, 0x03, led, 3);
  assert_int_equal(read_field(&f.c, 3, 65, 1), 1);
  assert_true(counters(&f).bad_packets >= 2);
  /* the controller closes the port and opens it again (a restart): the bus answers again */
  close(f.c.fd);
  client_open(&f.c, servo_bus_path(f.bus));
  answered = 0;
  for (int i = 0; i < 100 && !answered; i++) {
    send_packet(&f.c, 1, 0x01, NULL, 0);
    answered = receive(&f.c, &s, 0.05) && s.id == 1;
  }
  assert_true(answered);
  stop(&f);
}

/* Two servos at one ID answer at once: the controller gets both status packets ANDed together,
 * byte for byte (a wired AND: a bit is low when either servo pulls it low), whose CRC fails. */
static void test_collision(void **state) {
  (void)state;
  fixture f;
  start_with(&f, ARM, 1000000, 0);
  assert_int_equal(write_field(&f.c, 4, 7, 3, 1), 0); /* ID 4 becomes a second ID 3 */
  send_packet(&f.c, 3, 0x02, (const uint8_t[]){0, 0, 2, 0}, 4); /* model numbers differ */
  const double until = ts_now() + REPLY_WAIT_S;
  while (counters(&f).collisions == 0 && ts_now() < until) {
    ts_sleep(0.001);
  }
  assert_int_equal(counters(&f).collisions, 1);
  /* what arrives is one packet's worth of bytes that is not a valid status of ID 3 */
  const double until2 = ts_now() + REPLY_WAIT_S;
  while (f.c.n < 13 && ts_now() < until2) {
    struct pollfd p = {f.c.fd, POLLIN, 0};
    if (poll(&p, 1, 10) > 0) {
      const ssize_t got = read(f.c.fd, f.c.buf + f.c.n, sizeof f.c.buf - f.c.n);
      f.c.n += got > 0 ? (size_t)got : 0;
    }
  }
  assert_int_equal(f.c.n, 13);
  const uint16_t crc = (uint16_t)(f.c.buf[11] | (f.c.buf[12] << 8));
  assert_true(manual_crc(f.c.buf, 11) != crc); /* 1060 and 1020 garbled: the CRC fails */
  /* both servos' status packets, bit by bit low where either drives the line low */
  const unsigned models[2] = {1020, 1060}; /* XM430 (ID 3), XL430 (ID 4 renamed 3) */
  uint8_t wire[13];
  memset(wire, 0xFF, sizeof wire);
  for (int k = 0; k < 2; k++) {
    uint8_t st[13] = {0xFF, 0xFF, 0xFD, 0x00, 3, 6, 0, 0x55, 0, (uint8_t)models[k],
                      (uint8_t)(models[k] >> 8)};
    const uint16_t c = manual_crc(st, 11);
    st[11] = (uint8_t)c, st[12] = (uint8_t)(c >> 8);
    for (int i = 0; i < 13; i++) {
      wire[i] &= st[i];
    }
  }
  assert_memory_equal(f.c.buf, wire, sizeof wire);
  stop(&f);
}

/* The wire in both directions, on a pty (no UART paces the bytes): the request's own bytes take
 * their byte time on the half-duplex line before the servo acts, and those that arrived faster
 * than the baud rate allows are counted: the 10 bytes of a PING written at once are 1 on time
 * and 9 early. A reply never comes before (10 + 14) byte times + the return delay, less the
 * pty latency the bus takes out of each direction (measured at start, at most 100 µs, and the
 * pty always delivers at least that late on a quiet machine; a loaded one only delays). (How
 * close it comes is a wall-clock matter: test_servo_timing.) */
static void test_request_bytes_on_the_wire(void **state) {
  (void)state;
  fixture f;
  start_with(&f, ARM, 57600, 0);
  const double formula = 500e-6 + (10 + 14) * 10.0 / 57600;
  const double lat = counters(&f).pty_latency_s;
  assert_true(lat > 0 && lat <= 100e-6);
  for (int i = 0; i < 5; i++) {
    const unsigned long early = counters(&f).rx_early;
    const double t0 = ts_now();
    send_packet(&f.c, 1, 0x01, NULL, 0);
    expect_status(&f.c, 1, "PING at 57600 baud");
    const double took = ts_now() - t0;
    assert_int_equal(counters(&f).rx_early - early, 9);
    if (took < formula - 2 * lat - 20e-6) {
      fail_msg("a PING answered in %.0f us, before the wire allows (%.0f us, pty latency %.0f us)",
               took * 1e6, formula * 1e6, lat * 1e6);
    }
    ts_sleep(0.02); /* the line idle again: the next request's first byte is on time */
  }
  stop(&f);
}

/* A controller that closes and opens the port again (as DynamixelSDK's setBaudRate does) gets
 * its first PING after every reopen answered: the bus hears the reopening at once. */
static void test_reopen_first_ping_answered(void **state) {
  (void)state;
  fixture f;
  start_with(&f, ARM, 1000000, 0);
  for (int i = 0; i < 20; i++) {
    close(f.c.fd);
    client_open(&f.c, servo_bus_path(f.bus));
    send_packet(&f.c, 1, 0x01, NULL, 0);
    status s;
    if (!receive(&f.c, &s, REPLY_WAIT_S) || s.id != 1) {
      fail_msg("reopen %d: the first PING was not answered within %g s", i + 1, REPLY_WAIT_S);
    }
  }
  stop(&f);
}

/* A shoulder too weak for the arm (PWM Limit 100 of 885) stalls against gravity: after the
 * overload time its Hardware Error Status has Overload, torque is off, every status carries the
 * alert bit; REBOOT clears it. */
static void test_overload_and_reboot(void **state) {
  (void)state;
  fixture f;
  start_with(&f, ARM, 1000000, 1);
  assert_int_equal(write_field(&f.c, 2, 36, 100, 2), 0); /* PWM Limit (EEPROM, torque off) */
  assert_int_equal(write_field(&f.c, 2, 64, 1, 1), 0);
  const double t0 = ts_now();
  uint32_t hw = 0;
  while (hw == 0 && ts_now() < t0 + 10) {
    uint8_t p[4] = {70, 0, 1, 0};
    send_packet(&f.c, 2, 0x02, p, 4);
    const status s = expect_status(&f.c, 2, "READ of Hardware Error Status");
    hw = s.data[0];
    assert_int_equal(s.error, hw ? 0x80 : 0); /* the alert bit with the error, not before */
  }
  printf("overload: after %.2f s\n", ts_now() - t0);
  assert_int_equal(hw, 0x20);
  assert_int_equal(read_field_alert(&f.c, 2, 64), 0); /* torque off */
  send_packet(&f.c, 2, 0x08, NULL, 0); /* REBOOT */
  assert_int_equal(expect_status(&f.c, 2, "REBOOT").error, 0x80);
  assert_int_equal(read_field(&f.c, 2, 70, 1), 0);
  assert_int_equal(read_field(&f.c, 2, 36, 2), 100); /* the EEPROM stays */
  stop(&f);
}

/* The joint's encoder sensor is the servo's position sensor: a 0.1 rad offset in its noise
 * chain shows in Present Position (2048 + 0.1 × 4096 / 2π = 2113), the servo without an encoder
 * reads the true angle (2048). One link about z, no gravity, at rest. */
static void test_encoder_chain_feeds_present_position(void **state) {
  (void)state;
  char dir[128], path[160];
  ts_tmpdir(dir, sizeof dir, "servo-enc");
  ts_path(path, sizeof path, dir, "one.json");
  ts_write_file(path, "{\"name\": \"one\", \"timestep\": 0.001, \"gravity\": [0, 0, 0],\n"
        " \"bodies\": [\n"
        "  {\"name\": \"a\", \"parent\": \"world\", \"joint\": {\"name\": \"ja\", \"type\": "
        "\"hinge\", \"axis\": [0, 0, 1]},\n"
        "   \"inertial\": {\"mass\": 0.1, \"com\": [0.05, 0, 0], \"inertia\": [1e-5, 1e-4, 1e-4, "
        "0, 0, 0]}},\n"
        "  {\"name\": \"b\", \"parent\": \"world\", \"joint\": {\"name\": \"jb\", \"type\": "
        "\"hinge\", \"axis\": [0, 0, 1]},\n"
        "   \"inertial\": {\"mass\": 0.1, \"com\": [0.05, 0, 0], \"inertia\": [1e-5, 1e-4, 1e-4, "
        "0, 0, 0]}}],\n"
        " \"actuators\": [\n"
        "  {\"name\": \"sa\", \"joint\": \"ja\", \"type\": \"servo\", \"servo\": {\"id\": 1, "
        "\"model\": \"XM430-W350\"}},\n"
        "  {\"name\": \"sb\", \"joint\": \"jb\", \"type\": \"servo\", \"servo\": {\"id\": 2, "
        "\"model\": \"XM430-W350\"}}],\n"
        " \"sensors\": {\"seed\": 1, \"list\": [\n"
        "  {\"name\": \"enc_a\", \"type\": \"encoder\", \"joint\": \"ja\", \"rate_hz\": 1000, "
        "\"counts_per_rev\": 4096, \"quadrature\": false, \"output\": \"angle\",\n"
        "   \"noise\": {\"offset\": 0.1}}]}}\n");
  fixture f;
  start_with(&f, path, 1000000, 1);
  const double t0 = ts_now();
  int32_t a = 0; /* the table's value before the first step; then the true angle until the
                    encoder's first sample */
  while (abs(a - 2113) > 1 && ts_now() < t0 + REPLY_WAIT_S) {
    a = (int32_t)read_field(&f.c, 1, 132, 4);
  }
  const int32_t b = (int32_t)read_field(&f.c, 2, 132, 4);
  printf("encoder chain: present position %d with a 0.1 rad offset, %d without an encoder\n", a,
         b);
  assert_true(abs(a - 2113) <= 1);
  assert_int_equal(b, 2048);
  stop(&f);
  ts_rmtree(dir);
}

/* --- Feetech SMS/STS ---------------------------------------------------------------------------- */

/* The manual's ping and read of present position, the model numbers, sync write and sync read
 * of four servos, the EEPROM lock, position mode, and silence for damaged or unknown packets. */
static void test_feetech_bus(void **state) {
  (void)state;
  static const uint8_t manual_ping[] = {0xFF, 0xFF, 0x01, 0x02, 0x01, 0xFB};
  static const uint8_t manual_ping_reply[] = {0xFF, 0xFF, 0x01, 0x02, 0x00, 0xFC};
  static const uint8_t manual_read_position[] = {0xFF, 0xFF, 0x01, 0x04, 0x02, 0x38, 0x02, 0xBE};
  fixture f;
  start_with(&f, STS_ARM, 1000000, 1);
  send_bytes(&f.c, manual_ping, sizeof manual_ping);
  status s = ft_expect(&f.c, 1, "the manual's PING");
  assert_int_equal(s.raw_len, sizeof manual_ping_reply);
  assert_memory_equal(s.raw, manual_ping_reply, sizeof manual_ping_reply);
  send_bytes(&f.c, manual_read_position, sizeof manual_read_position);
  s = ft_expect(&f.c, 1, "the manual's READ of present position");
  assert_int_equal(s.ndata, 2);
  assert_true(le(s.data, 2) < 4096);
  for (uint8_t id = 1; id <= 4; id++) {
    assert_int_equal(ft_read(&f.c, id, 3, 2), 777); /* STS3215 */
  }
  /* EEPROM: locked at power-on, a new ID is taken at once and lost at a REBOOT (no reply);
   * unlocked, kept */
  ft_write(&f.c, 4, 5, 9, 1);
  assert_int_equal(ft_read(&f.c, 9, 5, 1), 9);
  ft_send(&f.c, 9, 0x08, NULL, 0);
  assert_int_equal(ft_read(&f.c, 4, 5, 1), 4);
  ft_write(&f.c, 4, 55, 0, 1);
  ft_write(&f.c, 4, 5, 9, 1);
  ft_write(&f.c, 9, 55, 1, 1);
  ft_send(&f.c, 9, 0x08, NULL, 0);
  assert_int_equal(ft_read(&f.c, 9, 5, 1), 9);
  ft_write(&f.c, 9, 55, 0, 1);
  ft_write(&f.c, 9, 5, 4, 1);
  ft_write(&f.c, 4, 55, 1, 1);
  /* sync write: torque on for all four; the arm holds where it was put up at power-on */
  const uint8_t torque[] = {40, 1, 1, 1, 2, 1, 3, 1, 4, 1};
  ft_send(&f.c, 0xFE, 0x83, torque, sizeof torque);
  /* sync read of present position: the four answer in the order asked */
  const uint8_t sr[] = {56, 2, 3, 1, 4, 2};
  ft_send(&f.c, 0xFE, 0x82, sr, sizeof sr);
  const uint8_t order[] = {3, 1, 4, 2};
  for (int i = 0; i < 4; i++) {
    assert_int_equal(ft_expect(&f.c, order[i], "SYNC_READ").ndata, 2);
  }
  for (uint8_t id = 1; id <= 4; id++) {
    assert_int_equal(ft_read(&f.c, id, 40, 1), 1);
  }
  /* position mode on the base, goal 2048 + 800 at 1000 steps/s */
  const uint8_t goal[] = {42, 0x20, 0x0B, 0, 0, 0xE8, 0x03}; /* 2848, time 0, speed 1000 */
  ft_send(&f.c, 1, 0x03, goal, sizeof goal);
  ft_expect(&f.c, 1, "WRITE goal");
  int arrived = 0;
  const double t0 = ts_now();
  while (!arrived && ts_now() < t0 + 10) {
    arrived = abs((int)ft_read(&f.c, 1, 56, 2) - 2848) <= 12 && ft_read(&f.c, 1, 66, 1) == 0;
  }
  assert_true(arrived);
  printf("feetech: base moved 800 steps in %.2f s (800 / 1000 steps/s = 0.8 s at least)\n",
         ts_now() - t0);
  /* the shoulder holds the outstretched arm: within 2.5° of where it started */
  assert_true(abs((int)ft_read(&f.c, 2, 56, 2) - 2048) < 30);
  /* a bad checksum and an unknown instruction: silence; the bus goes on */
  const uint8_t bad[] = {0xFF, 0xFF, 0x01, 0x02, 0x01, 0xFA};
  send_bytes(&f.c, bad, sizeof bad);
  ft_send(&f.c, 2, 0x30, NULL, 0);
  ft_send(&f.c, 3, 0x01, NULL, 0);
  assert_int_equal(ft_expect(&f.c, 3, "PING after bad packets").ndata, 0);
  stop(&f);
}

/* Device mode: the bus opens a serial device through libserialport (here the slave of a pty the
 * test holds, which CTest lets libserialport open with LD_PRELOAD=libachilles_sp_shim.so, see
 * tests/hil/serial/sp_shim.c). A UART paces the bytes of a device, so the reply is written after
 * the return delay alone: at 57 600 baud the round trip stays well below the pty's
 * 500 µs + 14 × 10 / 57 600 = 2931 µs. */
static void test_device_mode(void **state) {
  (void)state;
  if (!getenv("LD_PRELOAD")) {
    TS_SKIP("libserialport 0.1.1 cannot open a pty without the shim (ctest preloads it)");
  }
  ts_pty pty;
  ts_pty_open(&pty);
  const int master = pty.master;
  char dir[128], path[160];
  ts_tmpdir(dir, sizeof dir, "servo-device");
  ts_path(path, sizeof path, dir, "ttyUSB0");
  ts_pty_link(path, pty.slave);
  char err[1024];
  hil_runtime *rt = ts_runtime(ARM, HIL_MODE_REALTIME, 0);
  servo_bus_options bo;
  servo_bus_options_default(&bo);
  bo.quiet = 1, bo.use_pty = 0, bo.baud = 57600;
  snprintf(bo.port, sizeof bo.port, "%s", path);
  hil_transport *bus = servo_bus_new(&bo, ARM, err, sizeof err);
  if (!bus) {
    fail_msg("%s", err);
  }
  assert_int_equal(hil_runtime_add_transport(rt, bus), HIL_OK);
  client c = {.fd = master, .n = 0};
  fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
  double t[31];
  for (int i = 0; i < 31; i++) {
    const double t0 = ts_now();
    send_packet(&c, 1, 0x01, NULL, 0);
    assert_int_equal(le(expect_status(&c, 1, "PING over the device").data, 2), 1060);
    t[i] = ts_now() - t0;
  }
  const double med = ts_quantile(t, 31, 0.5);
  printf("device mode, 57600 baud: ping round trip median %.0f us (return delay 500 us)\n",
         med * 1e6);
  assert_true(med >= 480e-6); /* never before the return delay */
  hil_runtime_destroy(&rt);
  close(master);
  ts_rmtree(dir);
}

TS_MAIN(test_ping_read_write_sync, test_position_modes, test_bad_input, test_collision,
        test_request_bytes_on_the_wire, test_reopen_first_ping_answered, test_overload_and_reboot,
        test_encoder_chain_feeds_present_position, test_feetech_bus, test_device_mode)
