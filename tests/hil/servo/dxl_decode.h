/* tests/hil/servo/dxl_decode.h: a whole Protocol 2.0 packet through a fresh decoder, as the bus
 * reads it byte by byte. Header only (static inline): the packet suites share nothing else. */
#ifndef ACHILLES_TESTS_HIL_SERVO_DXL_DECODE_H
#define ACHILLES_TESTS_HIL_SERVO_DXL_DECODE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "hil/servo/dxl2.h"

/* the packet the last of n bytes completes; the test fails when none does */
static inline dxl2_packet dxl2_decode_whole(const uint8_t *bytes, int n) {
  dxl2_decoder dec;
  dxl2_decoder_init(&dec);
  const dxl2_packet *p = NULL;
  for (int i = 0; i < n; i++) {
    p = dxl2_decoder_feed(&dec, bytes[i]);
  }
  assert_non_null(p);
  return *p;
}

#endif
