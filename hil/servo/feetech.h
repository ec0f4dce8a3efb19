/* hil/servo/feetech.h: the Feetech SMS/STS servo protocol packet layer (STS3215 and kin), as a
 * servo on the bus sees it.
 *
 *   FF FF | ID | LEN | INST | PARAM... | CHK
 *
 * LEN counts the parameters plus 2 (INST and CHK); CHK = ~(ID + LEN + INST + Σ PARAM) & 0xFF. A
 * reply has the same form with the servo's error byte where INST stands. Multi-byte fields of the
 * STS series are little-endian. No stuffing: the length tells where a packet ends.
 *
 * Plain data: no allocation, no I/O.
 */
#ifndef ACHILLES_HIL_SERVO_FEETECH_H
#define ACHILLES_HIL_SERVO_FEETECH_H

#include <stddef.h>
#include <stdint.h>

#define FT_BROADCAST 0xFE
#define FT_MAX_PARAMS 253 /* LEN is one byte: 255 − INST − CHK */

typedef enum ft_instruction {
  FT_PING = 0x01,
  FT_READ = 0x02,
  FT_WRITE = 0x03,
  FT_REG_WRITE = 0x04,
  FT_ACTION = 0x05,
  FT_SYNC_READ = 0x82,
  FT_SYNC_WRITE = 0x83,
} ft_instruction;

typedef struct ft_packet {
  uint8_t id;
  uint8_t instruction; /* or the error byte of a reply */
  uint8_t nparams;
  uint8_t params[FT_MAX_PARAMS];
} ft_packet;

/* The checksum of ID, LEN, INST and the parameters. */
uint8_t ft_checksum(uint8_t id, uint8_t len, uint8_t instruction, const uint8_t *params,
                    size_t nparams);
/* A whole packet into out; its length, or -1 when it does not fit or has too many parameters. */
int ft_encode(uint8_t *out, size_t out_sz, uint8_t id, uint8_t instruction,
              const uint8_t *params, size_t nparams);

/* The stream decoder, as dxl2's: complete packets with a good checksum come out, the rest is
 * counted and skipped. */
typedef struct ft_decoder {
  uint8_t buf[4 + 255];
  size_t n;
  ft_packet packet;
  unsigned long packets, checksum_errors, length_errors, skipped_bytes;
} ft_decoder;

void ft_decoder_init(ft_decoder *d);
const ft_packet *ft_decoder_feed(ft_decoder *d, uint8_t byte);

#endif
