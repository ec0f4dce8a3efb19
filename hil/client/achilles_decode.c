/* hil/client/achilles_decode.c: the decoders: COBS of a buffer, bounds-checked payload parsers,
 * whole-frame checks and the byte-at-a-time stream decoder with its counters
 * (achilles_client.h). */
#include "achilles_client_internal.h"

#include <limits.h>
#include <string.h>

int ach_cobs_decode(uint8_t *out, size_t out_sz, const uint8_t *in, size_t n) {
  size_t pos = 0, i = 0;
  if (!out || (!in && n)) {
    return ACH_E_ARG;
  }
  while (i < n) {
    uint8_t code = in[i++];
    if (code == 0 || (size_t)(code - 1) > n - i) {
      return ACH_E_COBS;
    }
    for (uint8_t k = 1; k < code; k++) {
      if (in[i] == 0) {
        return ACH_E_COBS;
      }
      if (pos >= out_sz) {
        return ACH_E_NOSPACE;
      }
      out[pos++] = in[i++];
    }
    /* a block shorter than 254 implies a zero, except after the last block */
    if (code != 0xFF && i < n) {
      if (pos >= out_sz) {
        return ACH_E_NOSPACE;
      }
      out[pos++] = 0;
    }
  }
  if (pos > (size_t)INT_MAX) {
    return ACH_E_RANGE;
  }
  return (int)pos;
}
/* ---- reader: bounds-checked little-endian fields from a payload --------------------------- */

typedef struct reader {
  const uint8_t *p;
  size_t n;
  size_t pos;
  int short_read; /* a field ran past the end of the payload */
} reader;

static uint8_t r_u8(reader *r) {
  if (r->pos >= r->n) {
    r->short_read = 1;
    return 0;
  }
  return r->p[r->pos++];
}

static uint16_t r_u16(reader *r) {
  uint16_t lo = r_u8(r);
  return (uint16_t)(lo | (uint16_t)((unsigned)r_u8(r) << 8));
}

static uint32_t r_u32(reader *r) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    v |= (uint32_t)r_u8(r) << (8 * i);
  }
  return v;
}

static uint64_t r_u64(reader *r) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) {
    v |= (uint64_t)r_u8(r) << (8 * i);
  }
  return v;
}

static float r_f32(reader *r) {
  uint32_t bits = r_u32(r);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* int32 from its two's-complement bits without implementation-defined conversion */
static int32_t i32_from_bits(uint32_t u) {
  return u <= (uint32_t)INT32_MAX ? (int32_t)u : (int32_t)(u - 0x80000000u) + INT32_MIN;
}

/* ---- payload parsers: fields in wire order; 0 or ACH_E_PAYLOAD -------------------------- */

static int read_hello(reader *r, ach_hello *m) {
  int ended = 0;
  m->version_major = r_u8(r);
  m->version_minor = r_u8(r);
  m->flags = r_u16(r);
  m->rx_max_payload = r_u16(r);
  /* keep the name up to its first NUL; zero the rest so equal names compare equal */
  for (size_t i = 0; i < ACH_NAME_LEN; i++) {
    char c = (char)r_u8(r);
    ended = ended || c == '\0';
    m->name[i] = ended ? '\0' : c;
  }
  m->name[ACH_NAME_LEN] = '\0';
  return 0;
}

static int read_hello_ack(reader *r, ach_hello_ack *m) {
  m->version_major = r_u8(r);
  m->version_minor = r_u8(r);
  m->result = r_u8(r);
  m->n_joints = r_u8(r);
  m->n_sensors = r_u8(r);
  m->physics_rate_hz = r_u32(r);
  m->sim_time_ns = r_u64(r);
  /* the receive limits of 1.1; a 1.0 simulator sends only the frozen 17 bytes */
  m->rx_max_payload = 0;
  m->max_joints = 0;
  if (r->n >= HELLO_ACK_SIZE) {
    m->rx_max_payload = r_u16(r);
    m->max_joints = r_u8(r);
  }
  return 0;
}

static int read_sensor_samples(reader *r, ach_sensor_samples *m) {
  m->sim_time_ns = r_u64(r);
  m->count = r_u8(r);
  if (!count_fits(m->count, ACH_MAX_SENSORS_PER_FRAME)) {
    return ACH_E_PAYLOAD;
  }
  for (int i = 0; i < m->count; i++) {
    ach_sample *s = &m->samples[i];
    s->sensor_id = r_u8(r);
    s->flags = r_u8(r);
    s->kind = r_u8(r);
    s->sample_seq = r_u32(r);
    s->age_ns = r_u32(r);
    if (s->kind == ACH_KIND_VALUE) {
      s->v.value = r_f32(r);
    } else if (s->kind == ACH_KIND_COUNTS) {
      s->v.counts = i32_from_bits(r_u32(r));
    } else {
      s->v.raw = r_u32(r);
    }
  }
  return 0;
}

static int read_motor_command(reader *r, ach_motor_command *m) {
  m->board_time_us = r_u32(r);
  m->count = r_u8(r);
  if (!count_fits(m->count, ACH_MAX_JOINTS)) {
    return ACH_E_PAYLOAD;
  }
  for (int i = 0; i < m->count; i++) {
    m->joints[i].joint_id = r_u8(r);
    m->joints[i].mode = r_u8(r);
    m->joints[i].value = r_f32(r);
  }
  return 0;
}

static int read_heartbeat(reader *r, ach_heartbeat *m) {
  m->time_ns = r_u64(r);
  m->echo_ns = r_u64(r);
  return 0;
}

static int read_status(reader *r, ach_status *m) {
  m->sim_time_ns = r_u64(r);
  m->state = r_u32(r);
  m->rx_frames_ok = r_u32(r);
  m->rx_bad_crc = r_u32(r);
  m->rx_framing_errors = r_u32(r);
  m->rx_seq_lost = r_u32(r);
  m->rx_rejected = r_u32(r);
  m->watchdog_trips = r_u32(r);
  m->overruns = r_u32(r);
  m->commands_clamped = r_u32(r);
  return 0;
}

static int read_error(reader *r, ach_error *m) {
  m->code = r_u16(r);
  m->about_seq = r_u16(r);
  m->text_len = r_u8(r);
  if (m->text_len > ACH_ERROR_TEXT_MAX) {
    return ACH_E_PAYLOAD;
  }
  memset(m->text, 0, sizeof m->text);
  for (int i = 0; i < m->text_len; i++) {
    m->text[i] = (char)r_u8(r);
  }
  return 0;
}

static int read_step_request(reader *r, ach_step_request *m) {
  m->steps = r_u32(r);
  return 0;
}

static int read_describe(reader *r, ach_describe *m) {
  m->sensor_id = r_u8(r);
  m->what = r->n > DESCRIBE_SIZE ? r_u8(r) : ACH_DESCRIBE_SENSORS; /* 1.2 appended it */
  return 0;
}

/* a length byte and that many bytes into a NUL-padded field of cap bytes; longer is an error */
static int read_string(reader *r, char *out, size_t cap) {
  uint8_t n = r_u8(r);
  memset(out, 0, cap + 1);
  if (n > cap) {
    return ACH_E_PAYLOAD;
  }
  for (size_t i = 0; i < n; i++) {
    out[i] = (char)r_u8(r);
  }
  return 0;
}

static int read_sensor_info(reader *r, ach_sensor_info *m) {
  m->sensor_id = r_u8(r);
  m->kind = r_u8(r);
  m->sensor_type = r_u8(r);
  m->joint = r_u8(r);
  m->counts_per_rev = r_u32(r);
  m->rate_hz = r_f32(r);
  if (read_string(r, m->units, ACH_UNITS_LEN) || read_string(r, m->name, ACH_INFO_NAME_LEN)) {
    return ACH_E_PAYLOAD;
  }
  m->latency_ns = r->pos + 4 <= r->n ? r_u32(r) : 0; /* 1.2 appended it; a 1.1 simulator not */
  return 0;
}

static int read_joint_info(reader *r, ach_joint_info *m) {
  m->joint_id = r_u8(r);
  m->mode = r_u8(r);
  m->joint_type = r_u8(r);
  m->ctrl_min = r_f32(r);
  m->ctrl_max = r_f32(r);
  if (read_string(r, m->name, ACH_INFO_NAME_LEN)) {
    return ACH_E_PAYLOAD;
  }
  return read_string(r, m->actuator, ACH_ACTUATOR_NAME_LEN);
}

static int known_type(uint8_t type) {
  return type >= ACH_MSG_HELLO && type <= ACH_MSG_REQUEST;
}

static int read_payload(reader *r, ach_message *m) {
  int rc;
  switch (m->type) {
  case ACH_MSG_HELLO:
    rc = read_hello(r, &m->u.hello);
    break;
  case ACH_MSG_HELLO_ACK:
    rc = read_hello_ack(r, &m->u.hello_ack);
    break;
  case ACH_MSG_SENSOR_SAMPLES:
    rc = read_sensor_samples(r, &m->u.sensor_samples);
    break;
  case ACH_MSG_MOTOR_COMMAND:
    rc = read_motor_command(r, &m->u.motor_command);
    break;
  case ACH_MSG_HEARTBEAT:
    rc = read_heartbeat(r, &m->u.heartbeat);
    break;
  case ACH_MSG_STATUS:
    rc = read_status(r, &m->u.status);
    break;
  case ACH_MSG_ERROR:
    rc = read_error(r, &m->u.error);
    break;
  case ACH_MSG_STEP_REQUEST:
    rc = read_step_request(r, &m->u.step_request);
    break;
  case ACH_MSG_DESCRIBE:
    rc = read_describe(r, &m->u.describe);
    break;
  case ACH_MSG_SENSOR_INFO:
    rc = read_sensor_info(r, &m->u.sensor_info);
    break;
  case ACH_MSG_JOINT_INFO:
    rc = read_joint_info(r, &m->u.joint_info);
    break;
  case ACH_MSG_REQUEST:
    m->u.request.what = r_u8(r);
    rc = 0;
    break;
  default:
    return ACH_E_TYPE;
  }
  return (rc || r->short_read) ? ACH_E_PAYLOAD : 0;
}

/* ---- frame checks ------------------------------------------------------------------------- */

/* length, CRC and version: after these pass, the header (and its sequence number) is trusted */
static int check_frame(ach_message *out, const uint8_t *f, size_t n) {
  if (n < ACH_HEADER_SIZE + ACH_CRC_SIZE) {
    return ACH_E_TRUNCATED;
  }
  out->version = f[0];
  out->type = f[1];
  out->seq = (uint16_t)(f[2] | (uint16_t)((unsigned)f[3] << 8));
  out->payload_len = (uint16_t)(f[4] | (uint16_t)((unsigned)f[5] << 8));
  size_t expect = ACH_HEADER_SIZE + (size_t)out->payload_len + ACH_CRC_SIZE;
  if (n < expect) {
    return ACH_E_TRUNCATED;
  }
  if (n > expect) {
    return ACH_E_LENGTH;
  }
  uint16_t crc = (uint16_t)(f[n - 2] | (uint16_t)((unsigned)f[n - 1] << 8));
  if (ach_crc16(ACH_CRC_INIT, f, n - ACH_CRC_SIZE) != crc) {
    return ACH_E_CRC;
  }
  /* HELLO and HELLO_ACK have a frozen layout: any version may read them */
  if (out->version != ACH_PROTOCOL_VERSION_MAJOR && out->type != ACH_MSG_HELLO &&
      out->type != ACH_MSG_HELLO_ACK) {
    return ACH_E_VERSION;
  }
  return 0;
}

static int parse_payload(ach_message *out, const uint8_t *f) {
  reader r = {f + ACH_HEADER_SIZE, out->payload_len, 0, 0};
  if (!known_type(out->type)) {
    return ACH_E_TYPE;
  }
  return read_payload(&r, out);
}

int ach_parse_frame(ach_message *out, const uint8_t *frame, size_t n) {
  if (!out || !frame) {
    return ACH_E_ARG;
  }
  int rc = check_frame(out, frame, n);
  return rc ? rc : parse_payload(out, frame);
}

/* ---- stream decoder ----------------------------------------------------------------------- */

void ach_decoder_init(ach_decoder *dec) {
  if (dec) {
    memset(dec, 0, sizeof *dec);
  }
}

static void count_error(ach_decoder *dec, int err) {
  ach_counters *c = &dec->counters;
  switch (err) {
  case ACH_E_COBS:
    c->cobs_errors++;
    break;
  case ACH_E_TOO_LONG:
    c->too_long++;
    break;
  case ACH_E_TRUNCATED:
    c->truncated++;
    break;
  case ACH_E_LENGTH:
    c->bad_length++;
    break;
  case ACH_E_CRC:
    c->bad_crc++;
    break;
  case ACH_E_VERSION:
    c->bad_version++;
    break;
  case ACH_E_TYPE:
    c->unknown_type++;
    break;
  default:
    c->bad_payload++;
    break;
  }
  if (!dec->error) {
    dec->error = err;
    dec->error_at = dec->bytes;
  }
}

/* expected-sequence bookkeeping for a frame whose header passed the checks */
static void track_seq(ach_decoder *dec, const ach_message *m) {
  if (dec->seq_known && m->type != ACH_MSG_HELLO) {
    uint16_t d = (uint16_t)(m->seq - dec->expected_seq);
    if (d != 0 && d < 0x8000u) {
      dec->counters.seq_gaps++;
      dec->counters.seq_lost += d;
    } else if (d != 0) {
      dec->counters.seq_resets++;
    }
  }
  dec->expected_seq = (uint16_t)(m->seq + 1u);
  dec->seq_known = 1;
}

/* a delimiter: judge the frame collected so far, then start afresh */
static const ach_message *end_frame(ach_decoder *dec) {
  int rc = 0;
  const ach_message *out = NULL;
  if (dec->block_code == 0) {
    return NULL; /* empty frame: a flush, not an error */
  }
  if (dec->overflow) {
    rc = ACH_E_TOO_LONG;
  } else if (dec->block_left != 0) {
    rc = ACH_E_COBS; /* the frame ended inside a block */
  } else {
    rc = check_frame(&dec->msg, dec->buf, dec->len);
    if (!rc) {
      track_seq(dec, &dec->msg);
      rc = parse_payload(&dec->msg, dec->buf);
    }
  }
  if (rc) {
    count_error(dec, rc);
  } else {
    dec->counters.frames_ok++;
    out = &dec->msg;
  }
  dec->len = 0;
  dec->block_code = 0;
  dec->block_left = 0;
  dec->overflow = 0;
  return out;
}

static void store(ach_decoder *dec, uint8_t b) {
  if (dec->len >= ACH_MAX_FRAME) {
    dec->overflow = 1;
    return;
  }
  dec->buf[dec->len++] = b;
}

const ach_message *ach_decoder_feed(ach_decoder *dec, uint8_t byte) {
  if (!dec) {
    return NULL;
  }
  dec->bytes++;
  if (byte == 0x00) {
    return end_frame(dec);
  }
  if (dec->block_left == 0) {
    /* a code byte: the block before it (if shorter than 254) implied a zero */
    if (dec->block_code != 0 && dec->block_code != 0xFF) {
      store(dec, 0);
    }
    dec->block_code = byte;
    dec->block_left = (uint8_t)(byte - 1);
    return NULL;
  }
  store(dec, byte);
  dec->block_left--;
  return NULL;
}

size_t ach_decoder_push(ach_decoder *dec, const uint8_t *bytes, size_t n, ach_message_fn fn,
                        void *user) {
  size_t delivered = 0;
  if (!dec || !bytes) {
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    const ach_message *m = ach_decoder_feed(dec, bytes[i]);
    if (m) {
      delivered++;
      if (fn) {
        fn(m, user);
      }
    }
  }
  return delivered;
}
