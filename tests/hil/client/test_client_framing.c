/* tests/hil/client/test_client_framing.c: CRC-16 and COBS of hil/client/achilles_client.c
 * against published check values, the worked COBS examples and an independent reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "achilles_client.h"
#include "client_test_util.h"

/* ---- CRC ---------------------------------------------------------------------------------- */

static void test_crc_check_values(void **state) {
  (void)state;
  /* CRC-16/CCITT-FALSE check value (Greg Cook's CRC catalogue: check=0x29b1) */
  const uint8_t digits[] = "123456789";
  assert_int_equal(ach_crc16(ACH_CRC_INIT, digits, 9), 0x29B1);
  assert_int_equal(crc_reference(digits, 9), 0x29B1);
  /* further values of the same CRC as tabulated for "CRC-CCITT (0xFFFF)" (and given by Python's
   * binascii.crc_hqx(data, 0xFFFF)): empty -> init, "A" -> 0xB915, 256 x "A" -> 0xEA0B */
  assert_int_equal(ach_crc16(ACH_CRC_INIT, digits, 0), 0xFFFF);
  assert_int_equal(ach_crc16(ACH_CRC_INIT, (const uint8_t *)"A", 1), 0xB915);
  uint8_t as[256];
  memset(as, 'A', sizeof as);
  assert_int_equal(ach_crc16(ACH_CRC_INIT, as, sizeof as), 0xEA0B);
  assert_int_equal(crc_reference(as, sizeof as), 0xEA0B);
  /* and the test can fail: one different character changes it */
  assert_int_not_equal(ach_crc16(ACH_CRC_INIT, (const uint8_t *)"123456780", 9), 0x29B1);
}

static void test_crc_matches_reference_and_is_incremental(void **state) {
  (void)state;
  uint64_t rng = 1;
  uint8_t buf[300];
  for (int trial = 0; trial < 200; trial++) {
    size_t n = (size_t)(rng_next(&rng) % sizeof buf);
    rng_fill(&rng, buf, n);
    uint16_t whole = ach_crc16(ACH_CRC_INIT, buf, n);
    assert_int_equal(whole, crc_reference(buf, n));
    /* continuing from a partial CRC is the same as one pass */
    size_t cut = n ? (size_t)(rng_next(&rng) % (n + 1)) : 0;
    uint16_t part = ach_crc16(ACH_CRC_INIT, buf, cut);
    assert_int_equal(ach_crc16(part, buf + cut, n - cut), whole);
  }
}

/* ---- COBS: the worked examples of Cheshire & Baker as tabulated on Wikipedia -------------- */

static void check_cobs_example(const uint8_t *raw, size_t n, const uint8_t *wire, size_t m) {
  uint8_t out[600], back[600];
  int len = ach_cobs_encode(out, sizeof out, raw, n);
  assert_int_equal(len, (int)m);
  assert_memory_equal(out, wire, m);
  /* and back: the decoder takes the bytes before the delimiter */
  int dlen = ach_cobs_decode(back, sizeof back, wire, m - 1);
  assert_int_equal(dlen, (int)n);
  if (n) {
    assert_memory_equal(back, raw, n);
  }
}

static void test_cobs_worked_examples(void **state) {
  (void)state;
  { /* 1: 00 -> 01 01 00 */
    const uint8_t r[] = {0x00}, w[] = {0x01, 0x01, 0x00};
    check_cobs_example(r, sizeof r, w, sizeof w);
  }
  { /* 2: 00 00 -> 01 01 01 00 */
    const uint8_t r[] = {0x00, 0x00}, w[] = {0x01, 0x01, 0x01, 0x00};
    check_cobs_example(r, sizeof r, w, sizeof w);
  }
  { /* 3: 00 11 00 -> 01 02 11 01 00 */
    const uint8_t r[] = {0x00, 0x11, 0x00}, w[] = {0x01, 0x02, 0x11, 0x01, 0x00};
    check_cobs_example(r, sizeof r, w, sizeof w);
  }
  { /* 4: 11 22 00 33 -> 03 11 22 02 33 00 */
    const uint8_t r[] = {0x11, 0x22, 0x00, 0x33}, w[] = {0x03, 0x11, 0x22, 0x02, 0x33, 0x00};
    check_cobs_example(r, sizeof r, w, sizeof w);
  }
  { /* 5: 11 22 33 44 -> 05 11 22 33 44 00 */
    const uint8_t r[] = {0x11, 0x22, 0x33, 0x44}, w[] = {0x05, 0x11, 0x22, 0x33, 0x44, 0x00};
    check_cobs_example(r, sizeof r, w, sizeof w);
  }
  { /* 6: 11 00 00 00 -> 02 11 01 01 01 00 */
    const uint8_t r[] = {0x11, 0x00, 0x00, 0x00}, w[] = {0x02, 0x11, 0x01, 0x01, 0x01, 0x00};
    check_cobs_example(r, sizeof r, w, sizeof w);
  }
  { /* empty input -> 01 00 */
    const uint8_t w[] = {0x01, 0x00};
    check_cobs_example(NULL, 0, w, sizeof w);
  }
  uint8_t r[300], w[300];
  /* 7: 01 02 ... FE (254 bytes) -> FF 01 ... FE 00: a full block needs no trailing code */
  for (int i = 0; i < 254; i++) {
    r[i] = (uint8_t)(i + 1);
  }
  w[0] = 0xFF;
  memcpy(w + 1, r, 254);
  w[255] = 0x00;
  check_cobs_example(r, 254, w, 256);
  /* 8: 00 01 ... FE (255 bytes) -> 01 FF 01 ... FE 00 */
  for (int i = 0; i < 255; i++) {
    r[i] = (uint8_t)i;
  }
  w[0] = 0x01;
  w[1] = 0xFF;
  memcpy(w + 2, r + 1, 254);
  w[256] = 0x00;
  check_cobs_example(r, 255, w, 257);
  /* 9: 01 02 ... FE FF (255 bytes) -> FF 01 ... FE 02 FF 00 */
  for (int i = 0; i < 255; i++) {
    r[i] = (uint8_t)(i + 1);
  }
  w[0] = 0xFF;
  memcpy(w + 1, r, 254);
  w[255] = 0x02;
  w[256] = 0xFF;
  w[257] = 0x00;
  check_cobs_example(r, 255, w, 258);
  /* 10: 02 03 ... FF 00 (255 bytes) -> FF 02 ... FF 01 01 00 */
  for (int i = 0; i < 254; i++) {
    r[i] = (uint8_t)(i + 2);
  }
  r[254] = 0x00;
  w[0] = 0xFF;
  memcpy(w + 1, r, 254);
  w[255] = 0x01;
  w[256] = 0x01;
  w[257] = 0x00;
  check_cobs_example(r, 255, w, 258);
  /* 11: 03 04 ... FF 00 01 (255 bytes) -> FE 03 ... FF 02 01 00 */
  for (int i = 0; i < 253; i++) {
    r[i] = (uint8_t)(i + 3);
  }
  r[253] = 0x00;
  r[254] = 0x01;
  w[0] = 0xFE;
  memcpy(w + 1, r, 253);
  w[254] = 0x02;
  w[255] = 0x01;
  w[256] = 0x00;
  check_cobs_example(r, 255, w, 257);
}

/* encoded output holds no zero before the delimiter, and its length is within the bound */
static void check_cobs_round_trip(const uint8_t *raw, size_t n) {
  static uint8_t wire[4096], back[4096];
  int len = ach_cobs_encode(wire, sizeof wire, raw, n);
  assert_true(len >= 2);
  assert_true((size_t)len <= ACH_ENCODED_MAX(n));
  assert_int_equal(wire[len - 1], 0x00);
  assert_null(memchr(wire, 0x00, (size_t)len - 1));
  int dlen = ach_cobs_decode(back, sizeof back, wire, (size_t)len - 1);
  assert_int_equal(dlen, (int)n);
  if (n) {
    assert_memory_equal(back, raw, n);
  }
}

static void test_cobs_round_trips(void **state) {
  (void)state;
  uint64_t rng = 7;
  static uint8_t raw[3000];
  /* random buffers, zero density from none to all */
  for (int trial = 0; trial < 400; trial++) {
    size_t n = (size_t)(rng_next(&rng) % sizeof raw);
    unsigned zero_per_256 = (unsigned)(rng_next(&rng) % 257);
    for (size_t i = 0; i < n; i++) {
      uint8_t b = (uint8_t)(rng_next(&rng) % 255 + 1);
      raw[i] = (rng_next(&rng) % 256) < zero_per_256 ? 0 : b;
    }
    check_cobs_round_trip(raw, n);
  }
  /* runs of non-zero bytes around the 254-byte block size, alone and between zeros */
  for (size_t run = 250; run <= 512; run++) {
    for (int zeros = 0; zeros < 4; zeros++) {
      size_t n = 0;
      if (zeros & 1) {
        raw[n++] = 0;
      }
      for (size_t i = 0; i < run; i++) {
        raw[n++] = (uint8_t)(i % 255 + 1);
      }
      if (zeros & 2) {
        raw[n++] = 0;
      }
      check_cobs_round_trip(raw, n);
    }
  }
}

static void test_cobs_errors_and_bounds(void **state) {
  (void)state;
  uint8_t out[8];
  /* a code that promises more bytes than there are */
  const uint8_t short_block[] = {0x05, 0x11, 0x22};
  assert_int_equal(ach_cobs_decode(out, sizeof out, short_block, sizeof short_block), ACH_E_COBS);
  /* a zero inside the data */
  const uint8_t zero_code[] = {0x02, 0x11, 0x00, 0x01};
  assert_int_equal(ach_cobs_decode(out, sizeof out, zero_code, sizeof zero_code), ACH_E_COBS);
  const uint8_t zero_data[] = {0x03, 0x00, 0x11};
  assert_int_equal(ach_cobs_decode(out, sizeof out, zero_data, sizeof zero_data), ACH_E_COBS);
  /* decoding into a too small buffer writes nothing past it */
  const uint8_t five[] = {0x06, 1, 2, 3, 4, 5};
  uint8_t guard[16];
  memset(guard, 0xA5, sizeof guard);
  assert_int_equal(ach_cobs_decode(guard, 4, five, sizeof five), ACH_E_NOSPACE);
  for (size_t i = 4; i < sizeof guard; i++) {
    assert_int_equal(guard[i], 0xA5);
  }
  /* encoding: every too small size fails and leaves the rest of the buffer alone */
  const uint8_t raw[] = {0x11, 0x00, 0x22, 0x33, 0x00};
  uint8_t wire[32];
  int need = ach_cobs_encode(wire, sizeof wire, raw, sizeof raw);
  assert_int_equal(need, 7); /* 02 11 03 22 33 01 00 */
  for (size_t sz = 0; sz < (size_t)need; sz++) {
    memset(wire, 0xA5, sizeof wire);
    assert_int_equal(ach_cobs_encode(wire, sz, raw, sizeof raw), ACH_E_NOSPACE);
    for (size_t i = sz; i < sizeof wire; i++) {
      assert_int_equal(wire[i], 0xA5);
    }
  }
  assert_int_equal(ach_cobs_encode(NULL, 4, raw, 1), ACH_E_ARG);
  assert_int_equal(ach_cobs_decode(NULL, 4, raw, 1), ACH_E_ARG);
}

static void test_strerror(void **state) {
  (void)state;
  assert_string_equal(ach_strerror(ACH_OK), "ok");
  assert_string_equal(ach_strerror(ACH_E_CRC), "CRC mismatch");
  assert_string_equal(ach_strerror(12345), "unknown error");
  for (int e = ACH_E_PAYLOAD; e <= 0; e++) {
    assert_string_not_equal(ach_strerror(e), "unknown error");
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_crc_check_values),
      cmocka_unit_test(test_crc_matches_reference_and_is_incremental),
      cmocka_unit_test(test_cobs_worked_examples),
      cmocka_unit_test(test_cobs_round_trips),
      cmocka_unit_test(test_cobs_errors_and_bounds),
      cmocka_unit_test(test_strerror),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
