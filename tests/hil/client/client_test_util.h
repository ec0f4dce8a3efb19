/* tests/hil/client/client_test_util.h: a seeded random stream for the client tests.
 * xorshift64* (Vigna): deterministic across platforms, so every run feeds the same bytes. */
#ifndef ACHILLES_TESTS_CLIENT_TEST_UTIL_H
#define ACHILLES_TESTS_CLIENT_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "achilles_client.h"

static inline uint64_t rng_next(uint64_t *s) {
  uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ull; /* the state must never be 0 */
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1Dull;
}

static inline void rng_fill(uint64_t *s, uint8_t *buf, size_t n) {
  for (size_t i = 0; i < n; i++) {
    buf[i] = (uint8_t)(rng_next(s) >> 56);
  }
}

/* Reference CRC-16/CCITT-FALSE by textbook polynomial long division, bit by bit: with the
 * message M as a polynomial of L bits (MSB first: no reflection), the CRC is the remainder of
 * (M * x^16 + 0xFFFF * x^L) divided by x^16 + x^12 + x^5 + 1 (0x11021), i.e. the bit string
 * M || 16 zero bits with its first 16 bits inverted (the init value). Shares no code or
 * formulation with the shift-register loop in the library. */
static inline uint16_t crc_reference(const uint8_t *data, size_t n) {
  uint32_t reg = 0;
  size_t nbits = 8 * n + 16;
  for (size_t k = 0; k < nbits; k++) {
    unsigned bit = k < 8 * n ? (data[k / 8] >> (7 - k % 8)) & 1u : 0u;
    if (k < 16) {
      bit ^= 1u; /* + 0xFFFF * x^L: the top 16 bits of the string */
    }
    reg = (reg << 1) | bit;
    if (reg & 0x10000u) {
      reg ^= 0x11021u;
    }
  }
  return (uint16_t)reg;
}

/* A wire frame built by hand from its parts: header (version, type, seq, declared payload
 * length), payload, CRC-16 over both, COBS, delimiter. Lets a test make frames the encoders
 * would refuse to make. Returns the wire length (the buffer must be large enough). */
static inline size_t make_frame(uint8_t *wire, size_t cap, uint8_t version, uint8_t type,
                                uint16_t seq, uint16_t declared_len, const uint8_t *payload,
                                size_t n) {
  static uint8_t raw[70000];
  raw[0] = version;
  raw[1] = type;
  raw[2] = (uint8_t)(seq & 0xFF);
  raw[3] = (uint8_t)(seq >> 8);
  raw[4] = (uint8_t)(declared_len & 0xFF);
  raw[5] = (uint8_t)(declared_len >> 8);
  if (n) {
    memcpy(raw + 6, payload, n);
  }
  uint16_t crc = ach_crc16(ACH_CRC_INIT, raw, 6 + n);
  raw[6 + n] = (uint8_t)(crc & 0xFF);
  raw[7 + n] = (uint8_t)(crc >> 8);
  int len = ach_cobs_encode(wire, cap, raw, n + 8);
  return len > 0 ? (size_t)len : 0;
}

#endif
