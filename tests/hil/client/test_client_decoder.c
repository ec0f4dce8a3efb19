/* tests/hil/client/test_client_decoder.c: the stream decoder of hil/client/achilles_decode.c
 * under garbage, corruption, truncation, arbitrary splits, sequence gaps and over-long frames.
 * Every random byte comes from a fixed seed, so a failure reproduces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "achilles_client.h"
#include "client_test_util.h"
#include "support/skip.h"

static ach_decoder dec; /* large: keep it off the stack */

/* sum of every per-frame outcome counter: each non-empty frame adds exactly one */
static uint32_t outcomes(const ach_counters *c) {
  return c->frames_ok + c->cobs_errors + c->too_long + c->truncated + c->bad_length + c->bad_crc +
         c->bad_version + c->unknown_type + c->bad_payload;
}

static uint32_t errors(const ach_counters *c) {
  return outcomes(c) - c->frames_ok;
}

/* the frame the decoder just delivered carries a correct CRC (independent reference) */
static void assert_delivered_frame_valid(const ach_decoder *d, const ach_message *m) {
  size_t n = ACH_HEADER_SIZE + (size_t)m->payload_len + ACH_CRC_SIZE;
  assert_true(n <= ACH_MAX_FRAME);
  uint16_t crc = (uint16_t)(d->buf[n - 2] | (d->buf[n - 1] << 8));
  assert_int_equal(crc_reference(d->buf, n - 2), crc);
}

/* a heartbeat frame with the given seq, as wire bytes */
static size_t heartbeat(uint8_t *wire, size_t cap, uint16_t seq, uint64_t t) {
  ach_heartbeat hb = {t, ~t};
  int n = ach_encode_heartbeat(wire, cap, seq, &hb);
  assert_true(n > 0);
  return (size_t)n;
}

/* a heartbeat whose content is corrupted by one bit (framing intact): fails only the CRC */
static size_t corrupt_heartbeat(uint8_t *wire, size_t cap, uint16_t seq) {
  uint8_t raw[64];
  size_t n = heartbeat(wire, cap, seq, 0x1111);
  int rn = ach_cobs_decode(raw, sizeof raw, wire, n - 1);
  assert_int_equal(rn, 24);
  raw[ACH_HEADER_SIZE + 3] ^= 0x10;
  int len = ach_cobs_encode(wire, cap, raw, (size_t)rn);
  assert_true(len > 0);
  return (size_t)len;
}

static void feed_all(const uint8_t *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const ach_message *m = ach_decoder_feed(&dec, b[i]);
    assert_true(dec.len <= ACH_MAX_FRAME);
    if (m) {
      assert_delivered_frame_valid(&dec, m);
    }
  }
}

/* ---- garbage ------------------------------------------------------------------------------ */

static void run_garbage(uint64_t seed, unsigned zero_per_256, size_t total) {
  uint64_t rng = seed;
  uint32_t frames = 0; /* non-empty runs ended by a delimiter, counted independently */
  size_t run = 0;
  ach_decoder_init(&dec);
  for (size_t i = 0; i < total; i++) {
    uint8_t b = (uint8_t)(rng_next(&rng) >> 56);
    if ((rng_next(&rng) & 0xFF) < zero_per_256) {
      b = 0;
    }
    if (b == 0) {
      frames += run > 0;
      run = 0;
    } else {
      run++;
    }
    const ach_message *m = ach_decoder_feed(&dec, b);
    assert_true(dec.len <= ACH_MAX_FRAME);
    if (m) {
      assert_delivered_frame_valid(&dec, m);
    }
  }
  assert_int_equal(dec.bytes, (uint32_t)total);
  assert_int_equal(outcomes(&dec.counters), frames);
  assert_true(frames > 100); /* the stream really was cut into frames */
}

static void test_random_garbage(void **state) {
  (void)state;
  /* uniform bytes: frames average 256 bytes, mostly too long or broken COBS */
  run_garbage(0x5EED0001u, 0, 300000);
  assert_true(dec.counters.too_long > 0);
  assert_true(dec.counters.cobs_errors > 0);
  /* one zero in 16: short frames reach the length, CRC and payload checks */
  run_garbage(0x5EED0002u, 16, 300000);
  assert_true(dec.counters.truncated > 0);
  /* one zero in 128 */
  run_garbage(0x5EED0003u, 2, 300000);
}

/* every non-empty frame must be counted once: with a length field that matches by chance and
 * no CRC, random frames reach bad_crc; count that too */
static void test_random_frames_reach_crc_check(void **state) {
  (void)state;
  static uint8_t raw[64], wire[128];
  uint64_t rng = 0xC0FFEE;
  ach_decoder_init(&dec);
  for (int i = 0; i < 20000; i++) {
    size_t plen = (size_t)(rng_next(&rng) % 40);
    rng_fill(&rng, raw, plen + 8);
    raw[0] = 1;
    raw[4] = (uint8_t)plen; /* consistent length, random CRC */
    raw[5] = 0;
    int n = ach_cobs_encode(wire, sizeof wire, raw, plen + 8);
    assert_true(n > 0);
    feed_all(wire, (size_t)n);
  }
  assert_int_equal(outcomes(&dec.counters), 20000);
  /* a random 16-bit CRC matches about once in 65536 tries: well under 5 in 20000 */
  assert_true(dec.counters.frames_ok + dec.counters.unknown_type + dec.counters.bad_payload < 5);
  assert_true(dec.counters.bad_crc > 19990);
}

/* good frames survive any garbage in between when each is preceded by a 0x00 flush */
static void test_good_frames_between_garbage(void **state) {
  (void)state;
  static uint8_t junk[700], wire[64];
  uint64_t rng = 0xAB;
  uint16_t next = 0;
  ach_decoder_init(&dec);
  for (uint16_t k = 0; k < 2000; k++) {
    size_t n = (size_t)(rng_next(&rng) % sizeof junk);
    rng_fill(&rng, junk, n);
    for (size_t i = 0; i < n; i++) {
      const ach_message *m = ach_decoder_feed(&dec, junk[i]);
      if (m) {
        assert_delivered_frame_valid(&dec, m); /* by chance only; must still be valid */
      }
    }
    ach_decoder_feed(&dec, 0x00);
    size_t len = heartbeat(wire, sizeof wire, k, k * 1000u);
    for (size_t i = 0; i < len; i++) {
      const ach_message *m = ach_decoder_feed(&dec, wire[i]);
      if (m) {
        assert_int_equal(i, len - 1);
        assert_int_equal(m->type, ACH_MSG_HEARTBEAT);
        assert_int_equal(m->seq, next);
        assert_true(m->u.heartbeat.time_ns == k * 1000u);
        next++;
      }
    }
  }
  assert_int_equal(next, 2000);
}

/* ---- corruption --------------------------------------------------------------------------- */

static void test_flipped_bits(void **state) {
  (void)state;
  uint8_t wire[64], raw[64], bad[64], good[64];
  size_t glen = heartbeat(good, sizeof good, 1, 77);
  size_t wlen = heartbeat(wire, sizeof wire, 0, 0x0123456789ABCDEFull);
  int rn = ach_cobs_decode(raw, sizeof raw, wire, wlen - 1);
  assert_int_equal(rn, 8 + 16);
  size_t nbits = (size_t)rn * 8;

  /* one flipped bit: the length field is caught by the length check, anything else by the CRC;
   * never delivered, and the following good frame is */
  for (size_t bit = 0; bit < nbits; bit++) {
    memcpy(bad, raw, (size_t)rn);
    bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    int blen = ach_cobs_encode(wire, sizeof wire, bad, (size_t)rn);
    assert_true(blen > 0);
    ach_decoder_init(&dec);
    assert_int_equal(ach_decoder_push(&dec, wire, (size_t)blen, NULL, NULL), 0);
    if (bit / 8 == 4 || bit / 8 == 5) {
      assert_int_equal(dec.counters.truncated + dec.counters.bad_length, 1);
    } else {
      assert_int_equal(dec.counters.bad_crc, 1);
    }
    assert_int_equal(errors(&dec.counters), 1);
    assert_int_equal(ach_decoder_push(&dec, good, glen, NULL, NULL), 1);
    assert_true(dec.msg.u.heartbeat.time_ns == 77);
  }

  /* two flipped bits anywhere: CRC-16/CCITT has Hamming distance 4 up to 32751 data bits
   * (Koopman's CRC tables), so no double error in a 24-byte frame can pass */
  ach_decoder_init(&dec);
  uint32_t frames = 0;
  for (size_t b1 = 0; b1 < nbits; b1++) {
    for (size_t b2 = b1 + 1; b2 < nbits; b2++) {
      memcpy(bad, raw, (size_t)rn);
      bad[b1 / 8] ^= (uint8_t)(1u << (b1 % 8));
      bad[b2 / 8] ^= (uint8_t)(1u << (b2 % 8));
      int blen = ach_cobs_encode(wire, sizeof wire, bad, (size_t)rn);
      assert_true(blen > 0);
      assert_int_equal(ach_decoder_push(&dec, wire, (size_t)blen, NULL, NULL), 0);
      frames++;
    }
  }
  assert_int_equal(dec.counters.frames_ok, 0);
  assert_int_equal(errors(&dec.counters), frames);

  /* proof that the check can fail: flipping the CRC to match is delivered */
  memcpy(bad, raw, (size_t)rn);
  bad[10] ^= 0x01;
  uint16_t crc = ach_crc16(ACH_CRC_INIT, bad, (size_t)rn - 2);
  bad[rn - 2] = (uint8_t)(crc & 0xFF);
  bad[rn - 1] = (uint8_t)(crc >> 8);
  int blen = ach_cobs_encode(wire, sizeof wire, bad, (size_t)rn);
  ach_decoder_init(&dec);
  assert_int_equal(ach_decoder_push(&dec, wire, (size_t)blen, NULL, NULL), 1);
}

/* ---- truncation --------------------------------------------------------------------------- */

static void test_truncated_then_good(void **state) {
  (void)state;
  uint8_t a[128], b[128], c[128];
  ach_sensor_samples ss;
  memset(&ss, 0, sizeof ss);
  ss.count = 3;
  for (int i = 0; i < 3; i++) {
    ss.samples[i] = (ach_sample){(uint8_t)i, 0, ACH_KIND_COUNTS, 100u + (uint32_t)i, 0,
                                 {.counts = -1000 * i}};
  }
  int alen = ach_encode_sensor_samples(a, sizeof a, 10, &ss);
  size_t blen = heartbeat(b, sizeof b, 11, 111);
  size_t clen = heartbeat(c, sizeof c, 12, 222);
  assert_true(alen > 0);
  /* every cut of A, then a 0x00 flush (as a restarting sender sends), then B: the cut frame
   * is one error and B arrives */
  for (int cut = 1; cut <= alen - 2; cut++) {
    ach_decoder_init(&dec);
    feed_all(a, (size_t)cut);
    ach_decoder_feed(&dec, 0x00);
    assert_int_equal(errors(&dec.counters), 1);
    assert_int_equal(dec.counters.truncated + dec.counters.cobs_errors, 1);
    assert_int_equal(ach_decoder_push(&dec, b, blen, NULL, NULL), 1);
    assert_true(dec.msg.u.heartbeat.time_ns == 111);
  }
  /* without the flush the cut frame swallows B (one error); C, after B's delimiter, arrives
   * and the sequence shows the two lost frames */
  for (int cut = 1; cut <= alen - 2; cut++) {
    ach_decoder_init(&dec);
    uint8_t first[64];
    size_t flen = heartbeat(first, sizeof first, 9, 9);
    assert_int_equal(ach_decoder_push(&dec, first, flen, NULL, NULL), 1);
    feed_all(a, (size_t)cut);
    assert_int_equal(ach_decoder_push(&dec, b, blen, NULL, NULL), 0);
    assert_int_equal(errors(&dec.counters), 1);
    assert_int_equal(ach_decoder_push(&dec, c, clen, NULL, NULL), 1);
    assert_true(dec.msg.u.heartbeat.time_ns == 222);
    assert_int_equal(dec.counters.seq_gaps, 1);
    assert_int_equal(dec.counters.seq_lost, 2);
  }
  /* a frame shorter than header + CRC */
  const uint8_t tiny[] = {0x02, 0x01, 0x02, 0x05, 0x00}; /* 01 00 05: 3 bytes */
  ach_decoder_init(&dec);
  feed_all(tiny, sizeof tiny);
  assert_int_equal(dec.counters.truncated, 1);
  assert_int_equal(dec.error, ACH_E_TRUNCATED);
}

/* ---- splitting ---------------------------------------------------------------------------- */

typedef struct stream {
  uint8_t bytes[200000];
  size_t len;
  size_t frame_end[3000]; /* offset after each frame */
  size_t nframes;
} stream;

static stream st;

typedef struct collected {
  size_t n;
  int mismatch;
} collected;

/* a delivered message re-encodes to exactly the bytes it was sent as */
static void check_against_stream(const ach_message *m, void *user) {
  collected *c = user;
  static uint8_t wire[ACH_ENCODED_MAX(ACH_MAX_FRAME)];
  assert_true(c->n < st.nframes);
  size_t start = c->n ? st.frame_end[c->n - 1] : 0;
  size_t len = st.frame_end[c->n] - start;
  int n = ach_encode(wire, sizeof wire, m->seq, m);
  if (n != (int)len || memcmp(wire, st.bytes + start, len) != 0) {
    c->mismatch++;
  }
  c->n++;
}

static void build_stream(uint64_t seed) {
  uint64_t rng = seed;
  ach_message m;
  st.len = 0;
  st.nframes = 0;
  for (uint16_t k = 0; k < 2000; k++) {
    memset(&m, 0, sizeof m);
    m.type = (uint8_t)(1 + rng_next(&rng) % 8);
    uint8_t *p = (uint8_t *)&m.u;
    rng_fill(&rng, p, sizeof m.u); /* random field values ... */
    /* ... made valid where the encoder has rules */
    m.u.hello.name[rng_next(&rng) % (ACH_NAME_LEN + 1)] = '\0';
    if (m.type == ACH_MSG_SENSOR_SAMPLES) {
      m.u.sensor_samples.count = (uint8_t)(rng_next(&rng) % (ACH_MAX_SENSORS_PER_FRAME + 1));
    } else if (m.type == ACH_MSG_MOTOR_COMMAND) {
      m.u.motor_command.count = (uint8_t)(rng_next(&rng) % (ACH_MAX_JOINTS + 1));
    } else if (m.type == ACH_MSG_ERROR) {
      m.u.error.text_len = (uint8_t)(rng_next(&rng) % (ACH_ERROR_TEXT_MAX + 1));
    }
    int n = ach_encode(st.bytes + st.len, sizeof st.bytes - st.len, k, &m);
    assert_true(n > 0);
    st.len += (size_t)n;
    st.frame_end[st.nframes++] = st.len;
  }
}

static void test_split_anywhere(void **state) {
  (void)state;
  collected c;
  uint64_t rng = 99;
  build_stream(4242);
  /* in one push */
  ach_decoder_init(&dec);
  c = (collected){0, 0};
  assert_int_equal(ach_decoder_push(&dec, st.bytes, st.len, check_against_stream, &c),
                   st.nframes);
  assert_int_equal(c.n, st.nframes);
  assert_int_equal(c.mismatch, 0);
  /* byte by byte */
  ach_decoder_init(&dec);
  c = (collected){0, 0};
  for (size_t i = 0; i < st.len; i++) {
    ach_decoder_push(&dec, st.bytes + i, 1, check_against_stream, &c);
  }
  assert_int_equal(c.n, st.nframes);
  assert_int_equal(c.mismatch, 0);
  /* random chunks, empty ones included */
  ach_decoder_init(&dec);
  c = (collected){0, 0};
  for (size_t i = 0; i < st.len;) {
    size_t chunk = (size_t)(rng_next(&rng) % 90);
    if (chunk > st.len - i) {
      chunk = st.len - i;
    }
    ach_decoder_push(&dec, st.bytes + i, chunk, check_against_stream, &c);
    i += chunk;
  }
  assert_int_equal(c.n, st.nframes);
  assert_int_equal(c.mismatch, 0);
  assert_int_equal(errors(&dec.counters), 0);
  assert_int_equal(dec.counters.seq_gaps + dec.counters.seq_resets, 0);
  /* the comparison can fail: corrupt one frame's content and its CRC to match */
  c = (collected){0, 0};
  ach_decoder_init(&dec);
  st.frame_end[0]++; /* the recorded frame boundary is now wrong */
  ach_decoder_push(&dec, st.bytes, st.len, check_against_stream, &c);
  assert_true(c.mismatch > 0);
}

/* ---- sequence numbers --------------------------------------------------------------------- */

static void send_seq(uint16_t seq) {
  uint8_t wire[64];
  size_t n = heartbeat(wire, sizeof wire, seq, seq);
  assert_int_equal(ach_decoder_push(&dec, wire, n, NULL, NULL), 1);
}

static void expect_seq(uint32_t gaps, uint32_t lost, uint32_t resets) {
  assert_int_equal(dec.counters.seq_gaps, gaps);
  assert_int_equal(dec.counters.seq_lost, lost);
  assert_int_equal(dec.counters.seq_resets, resets);
}

static void test_sequence_gaps(void **state) {
  (void)state;
  uint8_t wire[64];
  ach_decoder_init(&dec);
  send_seq(500); /* the first frame sets the start */
  expect_seq(0, 0, 0);
  send_seq(501);
  send_seq(502);
  expect_seq(0, 0, 0);
  send_seq(505); /* 503, 504 missing */
  expect_seq(1, 2, 0);
  send_seq(506);
  send_seq(510); /* 507..509 */
  expect_seq(2, 5, 0);
  /* a jump of 32768 or more forward is read as a jump backwards: the peer restarted */
  send_seq(65534);
  expect_seq(2, 5, 1);
  /* wrap-around is not a gap */
  send_seq(65535);
  send_seq(0);
  send_seq(1);
  expect_seq(2, 5, 1);
  send_seq(3); /* 2 missing */
  expect_seq(3, 6, 1);
  /* repeated or backwards */
  send_seq(3);
  expect_seq(3, 6, 2);
  send_seq(0);
  expect_seq(3, 6, 3);
  send_seq(1);
  expect_seq(3, 6, 3);
  /* HELLO restarts tracking at its own number, whatever it is */
  ach_decoder_init(&dec);
  send_seq(10);
  ach_hello hello = {1, 0, 0, 256, "b"};
  int n = ach_encode_hello(wire, sizeof wire, 7000, &hello);
  assert_int_equal(ach_decoder_push(&dec, wire, (size_t)n, NULL, NULL), 1);
  send_seq(7001);
  expect_seq(0, 0, 0);
  /* a corrupted frame shows as one lost frame */
  n = (int)corrupt_heartbeat(wire, sizeof wire, 7002);
  assert_int_equal(ach_decoder_push(&dec, wire, (size_t)n, NULL, NULL), 0);
  send_seq(7003);
  expect_seq(1, 1, 0);
  /* the largest forward jump counted as loss is 32767 */
  send_seq((uint16_t)(7004 + 32767));
  expect_seq(2, 1 + 32767, 0);
  send_seq((uint16_t)(7004 + 32767 + 1 + 32768));
  expect_seq(2, 1 + 32767, 1);
}

/* ---- over-long frames --------------------------------------------------------------------- */

static void test_overlong_frames(void **state) {
  (void)state;
  static uint8_t payload[ACH_MAX_PAYLOAD + 1], wire[ACH_ENCODED_MAX(ACH_MAX_FRAME + 1)];
  uint8_t good[64];
  size_t glen = heartbeat(good, sizeof good, 1, 5);
  memset(payload, 0x11, sizeof payload);
  /* exactly the largest payload: accepted (HEARTBEAT with appended bytes) */
  ach_decoder_init(&dec);
  size_t n = make_frame(wire, sizeof wire, 1, ACH_MSG_HEARTBEAT, 0, ACH_MAX_PAYLOAD, payload,
                        ACH_MAX_PAYLOAD);
  feed_all(wire, n);
  assert_int_equal(dec.counters.frames_ok, 1);
  /* one byte more: dropped and counted, the next frame decoded */
  ach_decoder_init(&dec);
  n = make_frame(wire, sizeof wire, 1, ACH_MSG_HEARTBEAT, 0, ACH_MAX_PAYLOAD + 1, payload,
                 ACH_MAX_PAYLOAD + 1);
  feed_all(wire, n);
  assert_int_equal(dec.counters.too_long, 1);
  assert_int_equal(dec.counters.frames_ok, 0);
  assert_int_equal(ach_decoder_push(&dec, good, glen, NULL, NULL), 1);
  /* 100 kB without a delimiter: one drop, the buffer never overflows (feed_all checks len) */
  static uint8_t flood[100000];
  uint64_t rng = 3;
  for (size_t i = 0; i < sizeof flood; i++) {
    flood[i] = (uint8_t)(rng_next(&rng) % 255 + 1);
  }
  ach_decoder_init(&dec);
  feed_all(flood, sizeof flood);
  ach_decoder_feed(&dec, 0x00);
  assert_int_equal(dec.counters.too_long, 1);
  assert_int_equal(errors(&dec.counters), 1);
  assert_int_equal(ach_decoder_push(&dec, good, glen, NULL, NULL), 1);
}

/* ---- API details -------------------------------------------------------------------------- */

static void test_sticky_error_and_empty_frames(void **state) {
  (void)state;
  uint8_t wire[64];
  ach_decoder_init(&dec);
  /* runs of delimiters are flushes, not errors */
  for (int i = 0; i < 100; i++) {
    assert_null(ach_decoder_feed(&dec, 0x00));
  }
  assert_int_equal(outcomes(&dec.counters), 0);
  assert_int_equal(dec.error, 0);
  /* the first error sticks, with the offset of its delimiter */
  size_t n = corrupt_heartbeat(wire, sizeof wire, 0);
  feed_all(wire, n);
  assert_int_equal(dec.error, ACH_E_CRC);
  assert_int_equal(dec.error_at, 100 + n);
  const uint8_t broken[] = {0x05, 0x11, 0x00};
  feed_all(broken, sizeof broken);
  assert_int_equal(dec.counters.cobs_errors, 1);
  assert_int_equal(dec.error, ACH_E_CRC);
  assert_int_equal(dec.error_at, 100 + n);
  /* good frames do not clear it; init does */
  n = heartbeat(wire, sizeof wire, 1, 1);
  assert_int_equal(ach_decoder_push(&dec, wire, n, NULL, NULL), 1);
  assert_int_equal(dec.error, ACH_E_CRC);
  ach_decoder_init(&dec);
  assert_int_equal(dec.error, 0);
  assert_int_equal(outcomes(&dec.counters), 0);
}

static void count_calls(const ach_message *m, void *user) {
  (void)m;
  (*(int *)user)++;
}

static void test_push_api(void **state) {
  (void)state;
  uint8_t wire[256];
  size_t n = 0;
  for (uint16_t k = 0; k < 3; k++) {
    n += heartbeat(wire + n, sizeof wire - n, k, k);
  }
  int calls = 0;
  ach_decoder_init(&dec);
  assert_int_equal(ach_decoder_push(&dec, wire, n, count_calls, &calls), 3);
  assert_int_equal(calls, 3);
  assert_int_equal(ach_decoder_push(&dec, wire, n, NULL, NULL), 3); /* fn may be NULL */
  assert_int_equal(ach_decoder_push(NULL, wire, n, NULL, NULL), 0);
  assert_int_equal(ach_decoder_push(&dec, NULL, n, NULL, NULL), 0);
  assert_null(ach_decoder_feed(NULL, 0));
  /* ach_parse_frame works on a raw frame directly */
  uint8_t raw[64];
  ach_message m;
  size_t len = heartbeat(wire, sizeof wire, 33, 44);
  int rn = ach_cobs_decode(raw, sizeof raw, wire, len - 1);
  assert_int_equal(ach_parse_frame(&m, raw, (size_t)rn), 0);
  assert_int_equal(m.seq, 33);
  assert_true(m.u.heartbeat.time_ns == 44);
  raw[7] ^= 1;
  assert_int_equal(ach_parse_frame(&m, raw, (size_t)rn), ACH_E_CRC);
  assert_int_equal(ach_parse_frame(&m, raw, (size_t)rn + 1), ACH_E_LENGTH);
  assert_int_equal(ach_parse_frame(&m, raw, 7), ACH_E_TRUNCATED);
  assert_int_equal(ach_parse_frame(NULL, raw, 7), ACH_E_ARG);
}

TS_MAIN(test_random_garbage, test_random_frames_reach_crc_check, test_good_frames_between_garbage,
        test_flipped_bits, test_truncated_then_good, test_split_anywhere, test_sequence_gaps,
        test_overlong_frames, test_sticky_error_and_empty_frames, test_push_api)
