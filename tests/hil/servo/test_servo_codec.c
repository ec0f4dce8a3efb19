/* tests/hil/servo/test_servo_codec.c: the packet layers of the smart-servo buses (hil/servo):
 * Dynamixel Protocol 2.0 and Feetech SMS/STS.
 *
 * The golden packets are the published examples of the ROBOTIS e-manual (Protocol 2.0: ping,
 * read and write of an X-series servo and their status packets, broadcast ping) and the Feetech
 * ping; each must be built byte for byte from its fields and decoded back. Stuffing, streams
 * split anywhere, garbage, bad CRCs and impossible lengths follow.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "hil/servo/dxl2.h"
#include "hil/servo/feetech.h"
#include "support/skip.h"

#include "dxl_decode.h"

typedef struct golden {
  const char *what;
  uint8_t id, instruction;
  uint8_t params[8];
  size_t nparams;
  uint8_t bytes[20];
  size_t nbytes;
} golden;

static const golden dxl[] = {
    {"ping ID 1", 1, DXL2_PING, {0}, 0, {0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x03, 0x00, 0x01, 0x19, 0x4E}, 10},
    {"ping status: model 1030, firmware 38", 1, DXL2_STATUS, {0x00, 0x06, 0x04, 0x26}, 4,
     {0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x07, 0x00, 0x55, 0x00, 0x06, 0x04, 0x26, 0x65, 0x5D}, 14},
    {"read 4 bytes at 132 (present position)", 1, DXL2_READ, {0x84, 0x00, 0x04, 0x00}, 4,
     {0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x07, 0x00, 0x02, 0x84, 0x00, 0x04, 0x00, 0x1D, 0x15}, 14},
    {"read status: position 166", 1, DXL2_STATUS, {0x00, 0xA6, 0x00, 0x00, 0x00}, 5,
     {0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x08, 0x00, 0x55, 0x00, 0xA6, 0x00, 0x00, 0x00, 0x8C, 0xC0}, 15},
    {"write 512 at 116 (goal position)", 1, DXL2_WRITE, {0x74, 0x00, 0x00, 0x02, 0x00, 0x00}, 6,
     {0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x09, 0x00, 0x03, 0x74, 0x00, 0x00, 0x02, 0x00, 0x00, 0xCA,
      0x89}, 16},
    {"write status", 1, DXL2_STATUS, {0x00}, 1,
     {0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x04, 0x00, 0x55, 0x00, 0xA1, 0x0C}, 11},
    {"broadcast ping", DXL2_BROADCAST, DXL2_PING, {0}, 0,
     {0xFF, 0xFF, 0xFD, 0x00, 0xFE, 0x03, 0x00, 0x01, 0x31, 0x42}, 10},
};

static void test_dxl2_golden_packets(void **state) {
  (void)state;
  for (size_t g = 0; g < sizeof dxl / sizeof dxl[0]; g++) {
    uint8_t out[64];
    int n = dxl2_encode(out, sizeof out, dxl[g].id, dxl[g].instruction, dxl[g].params,
                        dxl[g].nparams);
    if (n != (int)dxl[g].nbytes || memcmp(out, dxl[g].bytes, dxl[g].nbytes) != 0) {
      fail_msg("%s: built differently from the manual", dxl[g].what);
    }
    dxl2_decoder d;
    dxl2_decoder_init(&d);
    const dxl2_packet *p = NULL;
    for (size_t i = 0; i < dxl[g].nbytes; i++) {
      const dxl2_packet *q = dxl2_decoder_feed(&d, dxl[g].bytes[i]);
      assert_true(q == NULL || i == dxl[g].nbytes - 1); /* only the last byte completes it */
      p = q ? q : p;
    }
    assert_non_null(p);
    assert_int_equal(p->id, dxl[g].id);
    assert_int_equal(p->instruction, dxl[g].instruction);
    assert_int_equal(p->nparams, dxl[g].nparams);
    assert_memory_equal(p->params, dxl[g].params, dxl[g].nparams);
  }
  /* the status helper builds the same bytes as the manual's status packet */
  uint8_t out[32];
  const uint8_t position[4] = {0xA6, 0, 0, 0};
  assert_int_equal(dxl2_encode_status(out, sizeof out, 1, DXL2_ERR_NONE, position, 4), 15);
  assert_memory_equal(out, dxl[3].bytes, 15);
}

/* FF FF FD in the parameters gets an FD after it, and comes back without it */
static void test_dxl2_stuffing(void **state) {
  (void)state;
  const uint8_t params[] = {0xFF, 0xFF, 0xFD, 0x01, 0xFF, 0xFF, 0xFD, 0xFD, 0xFF, 0xFF, 0xFD};
  uint8_t out[64];
  int n = dxl2_encode(out, sizeof out, 3, DXL2_WRITE, params, sizeof params);
  assert_int_equal(n, 10 + (int)sizeof params + 3); /* three patterns, three stuffed bytes */
  const uint8_t stuffed[] = {0xFF, 0xFF, 0xFD, 0xFD, 0x01, 0xFF, 0xFF, 0xFD, 0xFD, 0xFD,
                             0xFF, 0xFF, 0xFD, 0xFD};
  assert_memory_equal(out + 8, stuffed, sizeof stuffed);
  assert_int_equal(out[5] | out[6] << 8, (int)sizeof stuffed + 3); /* LEN counts stuffed bytes */
  const dxl2_packet p = dxl2_decode_whole(out, n);
  assert_int_equal(p.nparams, sizeof params);
  assert_memory_equal(p.params, params, sizeof params);
}

/* garbage before, a bad CRC, an impossible length: counted, skipped, the next packet found */
static void test_dxl2_damage(void **state) {
  (void)state;
  uint8_t stream[128];
  size_t n = 0;
  const uint8_t garbage[] = {0x00, 0xFF, 0x12, 0xFF, 0xFF, 0xFD, 0x01};
  memcpy(stream + n, garbage, sizeof garbage), n += sizeof garbage;
  memcpy(stream + n, dxl[0].bytes, 10), n += 10;
  stream[n - 1] ^= 0x40; /* a bad CRC */
  const uint8_t bad_len[] = {0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x01, 0x00};
  memcpy(stream + n, bad_len, sizeof bad_len), n += sizeof bad_len;
  memcpy(stream + n, dxl[2].bytes, 14), n += 14;
  dxl2_decoder d;
  dxl2_decoder_init(&d);
  int good = 0;
  for (size_t i = 0; i < n; i++) {
    const dxl2_packet *p = dxl2_decoder_feed(&d, stream[i]);
    if (p) {
      good++;
      assert_int_equal(p->instruction, DXL2_READ);
    }
  }
  assert_int_equal(good, 1);
  assert_true(d.crc_errors >= 1);
  assert_true(d.length_errors >= 1);
  assert_true(d.skipped_bytes > 0);
  /* too big to build is refused, not truncated */
  uint8_t small[12];
  assert_int_equal(dxl2_encode(small, sizeof small, 1, DXL2_WRITE, dxl[4].params, 6), -1);
}

static void test_feetech_packets(void **state) {
  (void)state;
  /* ping ID 1: FF FF 01 02 01 FB (checksum ~(1 + 2 + 1)) */
  const uint8_t ping[] = {0xFF, 0xFF, 0x01, 0x02, 0x01, 0xFB};
  uint8_t out[32];
  assert_int_equal(ft_encode(out, sizeof out, 1, FT_PING, NULL, 0), 6);
  assert_memory_equal(out, ping, sizeof ping);
  /* write goal position 2048 at address 42 of ID 3, then read 2 bytes at 56 */
  const uint8_t write_params[] = {42, 0x00, 0x08};
  int n = ft_encode(out, sizeof out, 3, FT_WRITE, write_params, sizeof write_params);
  assert_int_equal(n, 9);
  assert_int_equal(out[3], 5);
  assert_int_equal(out[8], (uint8_t)~(3 + 5 + 3 + 42 + 0 + 8));
  ft_decoder d;
  ft_decoder_init(&d);
  /* garbage, FF FF FF, a damaged packet, then the good one */
  const uint8_t noise[] = {0x10, 0xFF, 0xFF, 0xFF, 0x01, 0x02, 0x01, 0x00};
  int good = 0;
  for (size_t i = 0; i < sizeof noise; i++) {
    good += ft_decoder_feed(&d, noise[i]) != NULL;
  }
  const ft_packet *p = NULL;
  for (int i = 0; i < n; i++) {
    p = ft_decoder_feed(&d, out[i]);
  }
  assert_int_equal(good, 0);
  assert_true(d.checksum_errors >= 1);
  assert_non_null(p);
  assert_int_equal(p->id, 3);
  assert_int_equal(p->instruction, FT_WRITE);
  assert_int_equal(p->nparams, 3);
  assert_memory_equal(p->params, write_params, 3);
  assert_int_equal(ft_encode(out, 8, 1, FT_WRITE, write_params, 3), -1);
}

TS_MAIN(test_dxl2_golden_packets, test_dxl2_stuffing, test_dxl2_damage, test_feetech_packets)
