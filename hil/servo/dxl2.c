/* hil/servo/dxl2.c: Dynamixel Protocol 2.0 packets: CRC, stuffing, building and decoding. */
#include "hil/servo/dxl2.h"

#include <string.h>

uint16_t dxl2_crc(uint16_t crc, const uint8_t *data, size_t n) {
  for (size_t i = 0; i < n; i++) {
    crc = (uint16_t)(crc ^ (data[i] << 8));
    for (int b = 0; b < 8; b++) {
      crc = (uint16_t)((crc & 0x8000) ? (crc << 1) ^ 0x8005 : crc << 1);
    }
  }
  return crc;
}

int dxl2_encode(uint8_t *out, size_t out_sz, uint8_t id, uint8_t instruction,
                const uint8_t *params, size_t nparams) {
  static const uint8_t header[4] = {0xFF, 0xFF, 0xFD, 0x00};
  if (out_sz < 10) {
    return -1;
  }
  memcpy(out, header, 4);
  out[4] = id;
  out[7] = instruction;
  size_t n = 8;
  /* stuffing looks at the bytes already written: FF FF FD gets an extra FD, counting the ID,
   * the length and the instruction before it (none of which can complete one here, since
   * LEN_H and INST come between) */
  for (size_t i = 0; i < nparams; i++) {
    if (n + 4 > out_sz) {
      return -1;
    }
    out[n++] = params[i];
    if (n >= 11 && out[n - 3] == 0xFF && out[n - 2] == 0xFF && out[n - 1] == 0xFD) {
      out[n++] = 0xFD;
    }
  }
  const size_t len = n - 8 + 3; /* instruction, stuffed parameters, CRC */
  if (len > 0xFFFF || n + 2 > out_sz) {
    return -1;
  }
  out[5] = (uint8_t)(len & 0xFF);
  out[6] = (uint8_t)(len >> 8);
  uint16_t crc = dxl2_crc(0, out, n);
  out[n++] = (uint8_t)(crc & 0xFF);
  out[n++] = (uint8_t)(crc >> 8);
  return (int)n;
}

int dxl2_encode_status(uint8_t *out, size_t out_sz, uint8_t id, uint8_t error,
                       const uint8_t *data, size_t ndata) {
  uint8_t params[1 + DXL2_MAX_PARAMS];
  if (ndata > DXL2_MAX_PARAMS) {
    return -1;
  }
  params[0] = error;
  if (ndata > 0) {
    memcpy(params + 1, data, ndata);
  }
  return dxl2_encode(out, out_sz, id, DXL2_STATUS, params, ndata + 1);
}

void dxl2_decoder_init(dxl2_decoder *d) { memset(d, 0, sizeof *d); }

/* drops the first byte and rescans what is left for a header, so a packet that starts inside
 * a damaged one is still found */
static void resync(dxl2_decoder *d) {
  size_t skip = 1;
  while (skip < d->n) {
    if (d->buf[skip] == 0xFF) {
      break;
    }
    skip++;
  }
  d->skipped_bytes += skip;
  memmove(d->buf, d->buf + skip, d->n - skip);
  d->n -= skip;
  d->need = 0;
}

/* the parameters, unstuffed; 0, or -1 when stuffing is broken or they do not fit */
static int unstuff(dxl2_decoder *d) {
  dxl2_packet *p = &d->packet;
  const size_t end = d->need - 2; /* before the CRC */
  p->nparams = 0;
  for (size_t i = 8; i < end; i++) {
    /* FF FF FD FD inside the parameters: the second FD is stuffing */
    if (i >= 11 && d->buf[i] == 0xFD && d->buf[i - 1] == 0xFD && d->buf[i - 2] == 0xFF &&
        d->buf[i - 3] == 0xFF) {
      continue;
    }
    if (p->nparams >= DXL2_MAX_PARAMS) {
      return -1;
    }
    p->params[p->nparams++] = d->buf[i];
  }
  return 0;
}

/* a whole raw packet is in buf: check it and unpack it */
static const dxl2_packet *finish(dxl2_decoder *d) {
  const uint16_t got = (uint16_t)(d->buf[d->need - 2] | (d->buf[d->need - 1] << 8));
  if (dxl2_crc(0, d->buf, d->need - 2) != got) {
    d->crc_errors++;
    resync(d);
    return NULL;
  }
  d->packet.id = d->buf[4];
  d->packet.instruction = d->buf[7];
  if (unstuff(d) != 0) {
    d->length_errors++;
    resync(d);
    return NULL;
  }
  d->packets++;
  d->n = 0, d->need = 0;
  return &d->packet;
}

const dxl2_packet *dxl2_decoder_feed(dxl2_decoder *d, uint8_t byte) {
  static const uint8_t header[4] = {0xFF, 0xFF, 0xFD, 0x00};
  if (d->n >= sizeof d->buf) { /* cannot happen with the length check; stay safe */
    resync(d);
  }
  d->buf[d->n++] = byte;
  for (;;) {
    /* the header, byte by byte */
    size_t h = d->n < 4 ? d->n : 4;
    if (memcmp(d->buf, header, h) != 0) {
      resync(d);
      if (d->n == 0) {
        return NULL;
      }
      continue;
    }
    if (d->n < 7) {
      return NULL;
    }
    if (d->need == 0) {
      const size_t len = (size_t)d->buf[5] | ((size_t)d->buf[6] << 8);
      if (len < 3 || 7 + len > sizeof d->buf) {
        d->length_errors++;
        resync(d);
        continue;
      }
      d->need = 7 + len;
    }
    if (d->n < d->need) {
      return NULL;
    }
    return finish(d);
  }
}
