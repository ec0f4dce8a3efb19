/* tests/hil/client/fuzz_decoder.c: libFuzzer harness for the serial protocol decoder.
 *
 * Properties checked on every input (abort() on violation):
 *   - the stream decoder never reads or writes out of bounds (ASan/UBSan);
 *   - every delivered frame carries a correct CRC;
 *   - every non-empty frame adds exactly one outcome counter;
 *   - a delivered message re-encodes to a frame that decodes to the same bytes again;
 *   - COBS-encoding the input and decoding it gives the input back.
 * Built only with -DACHILLES_FUZZ=ON and clang; see tests/hil/client/CMakeLists.txt.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "achilles_client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ach_decoder dec, again;
static uint8_t wire[ACH_ENCODED_MAX(ACH_MAX_FRAME)], wire2[ACH_ENCODED_MAX(ACH_MAX_FRAME)];
static uint8_t cobs_out[ACH_ENCODED_MAX(70000)], cobs_back[70000];

static void check(int ok) {
  if (!ok) {
    abort();
  }
}

static void check_message(const ach_message *m) {
  size_t n = ACH_HEADER_SIZE + (size_t)m->payload_len + ACH_CRC_SIZE;
  check(n <= ACH_MAX_FRAME);
  uint16_t crc = (uint16_t)(dec.buf[n - 2] | (dec.buf[n - 1] << 8));
  check(ach_crc16(ACH_CRC_INIT, dec.buf, n - 2) == crc);
  /* re-encode, decode, re-encode: the two encodings agree */
  int len = ach_encode(wire, sizeof wire, m->seq, m);
  check(len > 0);
  ach_decoder_init(&again);
  const ach_message *m2 = NULL;
  for (int i = 0; i < len; i++) {
    const ach_message *r = ach_decoder_feed(&again, wire[i]);
    check(r == NULL || i == len - 1);
    m2 = r ? r : m2;
  }
  check(m2 != NULL);
  int len2 = ach_encode(wire2, sizeof wire2, m2->seq, m2);
  check(len2 == len && memcmp(wire, wire2, (size_t)len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint32_t frames = 0;
  size_t run = 0;
  ach_decoder_init(&dec);
  for (size_t i = 0; i < size; i++) {
    if (data[i] == 0) {
      frames += run > 0;
      run = 0;
    } else {
      run++;
    }
    const ach_message *m = ach_decoder_feed(&dec, data[i]);
    if (m) {
      check_message(m);
    }
  }
  const ach_counters *c = &dec.counters;
  check(c->frames_ok + c->cobs_errors + c->too_long + c->truncated + c->bad_length + c->bad_crc +
            c->bad_version + c->unknown_type + c->bad_payload ==
        frames);
  if (size < sizeof cobs_back) {
    int n = ach_cobs_encode(cobs_out, sizeof cobs_out, data, size);
    check(n > 0 && cobs_out[n - 1] == 0 && memchr(cobs_out, 0, (size_t)n - 1) == NULL);
    int back = ach_cobs_decode(cobs_back, sizeof cobs_back, cobs_out, (size_t)n - 1);
    check(back == (int)size && (size == 0 || memcmp(cobs_back, data, size) == 0));
  }
  /* and ach_cobs_decode on raw input never overruns */
  (void)ach_cobs_decode(cobs_back, size % 300, data, size);
  return 0;
}
