/* hil/servo/dxl2.h: the ROBOTIS Dynamixel Protocol 2.0 packet layer, as a servo on the bus sees
 * it: instruction packets in, status packets out.
 *
 *   FF FF FD 00 | ID | LEN_L LEN_H | INST | PARAM... | CRC_L CRC_H
 *
 * LEN counts INST, the parameters and the CRC (so parameters + 3), after byte stuffing. The CRC
 * is CRC-16 with polynomial 0x8005, initial value 0, no reflection, over everything before it
 * (header included, stuffed bytes included). Byte stuffing keeps the header out of the payload:
 * wherever FF FF FD appears from the ID on, an extra FD follows it (FF FF FD FD). A status
 * packet is an instruction packet whose INST is 0x55 and whose first parameter is the error byte.
 *
 * Plain data: no allocation, no I/O; the transport feeds bytes and writes what these build.
 */
#ifndef ACHILLES_HIL_SERVO_DXL2_H
#define ACHILLES_HIL_SERVO_DXL2_H

#include <stddef.h>
#include <stdint.h>

#define DXL2_BROADCAST 0xFE
#define DXL2_MAX_PARAMS 1024 /* unstuffed parameter bytes accepted in one packet */

typedef enum dxl2_instruction {
  DXL2_PING = 0x01,
  DXL2_READ = 0x02,
  DXL2_WRITE = 0x03,
  DXL2_REG_WRITE = 0x04,
  DXL2_ACTION = 0x05,
  DXL2_FACTORY_RESET = 0x06,
  DXL2_REBOOT = 0x08,
  DXL2_CLEAR = 0x10,
  DXL2_STATUS = 0x55,
  DXL2_SYNC_READ = 0x82,
  DXL2_SYNC_WRITE = 0x83,
  DXL2_BULK_READ = 0x92,
  DXL2_BULK_WRITE = 0x93,
} dxl2_instruction;

/* The error byte of a status packet: bit 7 "alert" (hardware error status is set), bits 0-6 a
 * number. */
typedef enum dxl2_error {
  DXL2_ERR_NONE = 0x00,
  DXL2_ERR_RESULT_FAIL = 0x01,
  DXL2_ERR_INSTRUCTION = 0x02,
  DXL2_ERR_CRC = 0x03,
  DXL2_ERR_DATA_RANGE = 0x04,
  DXL2_ERR_DATA_LENGTH = 0x05,
  DXL2_ERR_DATA_LIMIT = 0x06,
  DXL2_ERR_ACCESS = 0x07,
  DXL2_ERR_ALERT = 0x80,
} dxl2_error;

typedef struct dxl2_packet {
  uint8_t id;
  uint8_t instruction;
  uint16_t nparams;                /* unstuffed */
  uint8_t params[DXL2_MAX_PARAMS]; /* unstuffed */
} dxl2_packet;

/* CRC-16 of the protocol over n bytes, continuing from crc (0 to start). */
uint16_t dxl2_crc(uint16_t crc, const uint8_t *data, size_t n);

/* Builds a whole packet (header, stuffing, length, CRC) into out; returns its length, or -1
 * when it does not fit. */
int dxl2_encode(uint8_t *out, size_t out_sz, uint8_t id, uint8_t instruction,
                const uint8_t *params, size_t nparams);
/* A status packet: error byte, then the data. */
int dxl2_encode_status(uint8_t *out, size_t out_sz, uint8_t id, uint8_t error,
                       const uint8_t *data, size_t ndata);

/* The stream decoder: feed bytes as they arrive; a complete packet with a good CRC is returned
 * (valid until the next call), anything else NULL. Garbage before a header is skipped; a packet
 * with a bad CRC or an impossible length is dropped and counted, and the search for the next
 * header starts over, as a servo on a shared bus does. */
typedef struct dxl2_decoder {
  uint8_t buf[8 + 2 * DXL2_MAX_PARAMS + 8]; /* the raw (stuffed) packet being gathered */
  size_t n;
  size_t need; /* total raw length once LEN is known, else 0 */
  dxl2_packet packet;
  unsigned long packets, crc_errors, length_errors, skipped_bytes;
} dxl2_decoder;

void dxl2_decoder_init(dxl2_decoder *d);
const dxl2_packet *dxl2_decoder_feed(dxl2_decoder *d, uint8_t byte);

/* Little-endian fields of a parameter block. */
static inline uint16_t dxl2_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t dxl2_u32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

#endif
