/* hil/servo/feetech.c: Feetech SMS/STS packets: checksum, building and decoding. */
#include "hil/servo/feetech.h"

#include <string.h>

uint8_t ft_checksum(uint8_t id, uint8_t len, uint8_t instruction, const uint8_t *params,
                    size_t nparams) {
  unsigned sum = (unsigned)id + len + instruction;
  for (size_t i = 0; i < nparams; i++) {
    sum += params[i];
  }
  return (uint8_t)(~sum & 0xFF);
}

int ft_encode(uint8_t *out, size_t out_sz, uint8_t id, uint8_t instruction,
              const uint8_t *params, size_t nparams) {
  if (nparams > FT_MAX_PARAMS || out_sz < nparams + 6) {
    return -1;
  }
  const uint8_t len = (uint8_t)(nparams + 2);
  out[0] = 0xFF, out[1] = 0xFF, out[2] = id, out[3] = len, out[4] = instruction;
  if (nparams > 0) {
    memcpy(out + 5, params, nparams);
  }
  out[5 + nparams] = ft_checksum(id, len, instruction, params, nparams);
  return (int)nparams + 6;
}

void ft_decoder_init(ft_decoder *d) { memset(d, 0, sizeof *d); }

/* drops the first byte and looks for the next FF */
static void resync(ft_decoder *d) {
  size_t skip = 1;
  while (skip < d->n && d->buf[skip] != 0xFF) {
    skip++;
  }
  d->skipped_bytes += skip;
  memmove(d->buf, d->buf + skip, d->n - skip);
  d->n -= skip;
}

const ft_packet *ft_decoder_feed(ft_decoder *d, uint8_t byte) {
  d->buf[d->n++] = byte;
  for (;;) {
    if ((d->n >= 1 && d->buf[0] != 0xFF) || (d->n >= 2 && d->buf[1] != 0xFF)) {
      resync(d);
      continue;
    }
    if (d->n >= 3 && d->buf[2] == 0xFF) { /* FF FF FF: the header starts one byte later */
      resync(d);
      continue;
    }
    if (d->n < 4) {
      return NULL;
    }
    const uint8_t len = d->buf[3];
    if (len < 2) {
      d->length_errors++;
      resync(d);
      continue;
    }
    const size_t need = 4 + (size_t)len;
    if (d->n < need) {
      return NULL;
    }
    const uint8_t *params = d->buf + 5;
    const size_t nparams = (size_t)len - 2;
    if (ft_checksum(d->buf[2], len, d->buf[4], params, nparams) != d->buf[need - 1]) {
      d->checksum_errors++;
      resync(d);
      continue;
    }
    d->packet.id = d->buf[2];
    d->packet.instruction = d->buf[4];
    d->packet.nparams = (uint8_t)nparams;
    memcpy(d->packet.params, params, nparams);
    d->packets++;
    d->n = 0;
    return &d->packet;
  }
}
