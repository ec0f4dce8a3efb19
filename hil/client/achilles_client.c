/* hil/client/achilles_client.c: what both directions share: error names and the CRC-16. The
 * encoders are in achilles_encode.c, the decoders in achilles_decode.c (achilles_client.h).
 *
 * Portable C99: every multi-byte field is assembled byte by byte, so the code works on any
 * endianness and alignment. No allocation; no state outside the caller's structs.
 */
#include "achilles_client_internal.h"

/* floats travel as IEEE-754 binary32: refuse to build where float is anything else */
typedef char ach_float_is_32_bits[(sizeof(float) == 4) ? 1 : -1];

const char *ach_strerror(int err) {
  switch (err) {
#define ACH_X_CASE(name, value, text) \
  case value:                         \
    return text;
    ACH_ERRORS(ACH_X_CASE)
#undef ACH_X_CASE
  default:
    return "unknown error";
  }
}

/* ---- CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, MSB first, no final xor ---------------- */

uint16_t ach_crc16(uint16_t crc, const uint8_t *data, size_t n) {
  for (size_t i = 0; i < n; i++) {
    crc = (uint16_t)(crc ^ (uint16_t)((unsigned)data[i] << 8));
    for (int bit = 0; bit < 8; bit++) {
      unsigned c = crc;
      crc = (uint16_t)((c & 0x8000u) ? ((c << 1) ^ 0x1021u) : (c << 1));
    }
  }
  return crc;
}
