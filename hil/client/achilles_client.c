/* hil/client/achilles_client.c: COBS framing, CRC-16, message encoding and the stream decoder.
 *
 * Portable C99: every multi-byte field is assembled byte by byte, so the code works on any
 * endianness and alignment. No allocation; no state outside the caller's structs.
 */
#include "achilles_client.h"

#include <limits.h>
#include <string.h>

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

/* ---- writer: CRC and COBS on the fly, straight into the caller's buffer ------------------ */

typedef struct writer {
  uint8_t *out;
  size_t cap;
  size_t pos;      /* next byte to write */
  size_t code_pos; /* where the current block's code byte goes */
  uint8_t code;    /* current block's code: 1 + data bytes so far */
  uint8_t open;    /* a block is open (0 right after a full 254-byte block) */
  int err;
  uint16_t crc;
} writer;

static void w_begin(writer *w, uint8_t *out, size_t cap) {
  w->out = out;
  w->cap = cap;
  w->pos = 0;
  w->code_pos = 0;
  w->code = 1;
  w->open = 0;
  w->err = 0;
  w->crc = ACH_CRC_INIT;
}

/* reserve the code byte of a new block */
static void w_open_block(writer *w) {
  if (w->pos >= w->cap) {
    w->err = ACH_E_NOSPACE;
    return;
  }
  w->code_pos = w->pos++;
  w->code = 1;
  w->open = 1;
}

static void w_close_block(writer *w) {
  w->out[w->code_pos] = w->code;
  w->open = 0;
}

/* one byte of the unencoded frame through COBS */
static void w_cobs(writer *w, uint8_t b) {
  if (!w->open) {
    w_open_block(w);
  }
  if (w->err) {
    return;
  }
  if (b == 0) {
    /* the zero ends the block; the next byte (or the end) needs a new block */
    w_close_block(w);
    w_open_block(w);
    return;
  }
  if (w->pos >= w->cap) {
    w->err = ACH_E_NOSPACE;
    return;
  }
  w->out[w->pos++] = b;
  if (++w->code == 0xFF) {
    w_close_block(w); /* 254 data bytes: a full block, no implied zero */
  }
}

/* close the last block and append the delimiter; returns the length or the first error */
static int w_end(writer *w) {
  if (!w->err && w->open) {
    w_close_block(w);
  }
  if (!w->err && w->pos >= w->cap) {
    w->err = ACH_E_NOSPACE;
  }
  if (w->err) {
    return w->err;
  }
  w->out[w->pos++] = 0x00;
  if (w->pos > (size_t)INT_MAX) {
    return ACH_E_RANGE; /* only where int is 16 bits and the frame huge */
  }
  return (int)w->pos;
}

/* a byte covered by the CRC */
static void w_u8(writer *w, uint8_t b) {
  w->crc = ach_crc16(w->crc, &b, 1);
  w_cobs(w, b);
}

static void w_u16(writer *w, uint16_t v) {
  w_u8(w, (uint8_t)(v & 0xFFu));
  w_u8(w, (uint8_t)(v >> 8));
}

static void w_u32(writer *w, uint32_t v) {
  for (int i = 0; i < 4; i++) {
    w_u8(w, (uint8_t)((v >> (8 * i)) & 0xFFu));
  }
}

static void w_u64(writer *w, uint64_t v) {
  for (int i = 0; i < 8; i++) {
    w_u8(w, (uint8_t)((v >> (8 * i)) & 0xFFu));
  }
}

static void w_f32(writer *w, float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  w_u32(w, bits);
}

/* header of a frame */
static void w_header(writer *w, uint8_t type, uint16_t seq, size_t payload_len) {
  w_u8(w, ACH_PROTOCOL_VERSION_MAJOR);
  w_u8(w, type);
  w_u16(w, seq);
  w_u16(w, (uint16_t)payload_len);
}

/* CRC (not itself covered), last block and delimiter */
static int w_finish(writer *w) {
  uint16_t crc = w->crc;
  w_cobs(w, (uint8_t)(crc & 0xFFu));
  w_cobs(w, (uint8_t)(crc >> 8));
  return w_end(w);
}

int ach_cobs_encode(uint8_t *out, size_t out_sz, const uint8_t *in, size_t n) {
  writer w;
  if (!out || (!in && n)) {
    return ACH_E_ARG;
  }
  w_begin(&w, out, out_sz);
  for (size_t i = 0; i < n && !w.err; i++) {
    w_cobs(&w, in[i]);
  }
  if (!w.err && n == 0) {
    w_open_block(&w); /* an empty input is one empty block: 01 00 */
  }
  return w_end(&w);
}

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

/* ---- payload sizes ------------------------------------------------------------------------ */

#define HELLO_SIZE (4 + 2 + ACH_NAME_LEN)
#define HELLO_ACK_SIZE 20      /* 17 frozen bytes of 1.0, then the receive limits of 1.1 */
#define HEARTBEAT_SIZE 16
#define STATUS_SIZE (8 + 4 + 8 * 4)
#define ERROR_FIXED_SIZE 5
#define STEP_REQUEST_SIZE 4
#define DESCRIBE_SIZE 1           /* 1.1; 1.2 appends `what` when it is not sensors */
#define SENSOR_INFO_FIXED_SIZE 18 /* id, kind, type, joint, cpr u32, rate f32, two lengths, and
                                     (1.2) latency u32 after the name */
#define JOINT_INFO_FIXED_SIZE 13  /* id, mode, type, two f32, two lengths */
#define REQUEST_SIZE 1

/* length of a string in a char array of cap bytes, cap if not terminated */
static size_t bounded_len(const char *s, size_t cap) {
  size_t n = 0;
  while (n < cap && s[n] != '\0') {
    n++;
  }
  return n;
}

/* count <= max, as a function: with max 255 a direct u8 comparison is always true and warns */
static int count_fits(unsigned count, unsigned max) {
  return count <= max;
}

static int size_hello(const ach_hello *m) {
  return bounded_len(m->name, sizeof m->name) > ACH_NAME_LEN ? ACH_E_RANGE : HELLO_SIZE;
}

static int size_sensor_samples(const ach_sensor_samples *m) {
  if (!count_fits(m->count, ACH_MAX_SENSORS_PER_FRAME)) {
    return ACH_E_RANGE;
  }
  return ACH_SENSOR_FIXED_SIZE + ACH_SENSOR_ENTRY_SIZE * (int)m->count;
}

static int size_motor_command(const ach_motor_command *m) {
  if (!count_fits(m->count, ACH_MAX_JOINTS)) {
    return ACH_E_RANGE;
  }
  return ACH_MOTOR_FIXED_SIZE + ACH_MOTOR_ENTRY_SIZE * (int)m->count;
}

static int size_error(const ach_error *m) {
  return m->text_len > ACH_ERROR_TEXT_MAX ? ACH_E_RANGE : ERROR_FIXED_SIZE + (int)m->text_len;
}

static int size_describe(const ach_describe *m) {
  return m->what == ACH_DESCRIBE_SENSORS ? DESCRIBE_SIZE : DESCRIBE_SIZE + 1;
}

static int size_joint_info(const ach_joint_info *m) {
  size_t name = bounded_len(m->name, sizeof m->name);
  size_t actuator = bounded_len(m->actuator, sizeof m->actuator);
  if (name > ACH_INFO_NAME_LEN || actuator > ACH_ACTUATOR_NAME_LEN) {
    return ACH_E_RANGE;
  }
  return JOINT_INFO_FIXED_SIZE + (int)name + (int)actuator;
}

static int size_sensor_info(const ach_sensor_info *m) {
  size_t units = bounded_len(m->units, sizeof m->units);
  size_t name = bounded_len(m->name, sizeof m->name);
  if (units > ACH_UNITS_LEN || name > ACH_INFO_NAME_LEN) {
    return ACH_E_RANGE;
  }
  return SENSOR_INFO_FIXED_SIZE + (int)units + (int)name;
}

int ach_payload_size(const ach_message *msg) {
  if (!msg) {
    return ACH_E_ARG;
  }
  switch (msg->type) {
  case ACH_MSG_HELLO:
    return size_hello(&msg->u.hello);
  case ACH_MSG_HELLO_ACK:
    return HELLO_ACK_SIZE;
  case ACH_MSG_SENSOR_SAMPLES:
    return size_sensor_samples(&msg->u.sensor_samples);
  case ACH_MSG_MOTOR_COMMAND:
    return size_motor_command(&msg->u.motor_command);
  case ACH_MSG_HEARTBEAT:
    return HEARTBEAT_SIZE;
  case ACH_MSG_STATUS:
    return STATUS_SIZE;
  case ACH_MSG_ERROR:
    return size_error(&msg->u.error);
  case ACH_MSG_STEP_REQUEST:
    return STEP_REQUEST_SIZE;
  case ACH_MSG_DESCRIBE:
    return size_describe(&msg->u.describe);
  case ACH_MSG_SENSOR_INFO:
    return size_sensor_info(&msg->u.sensor_info);
  case ACH_MSG_JOINT_INFO:
    return size_joint_info(&msg->u.joint_info);
  case ACH_MSG_REQUEST:
    return REQUEST_SIZE;
  default:
    return ACH_E_TYPE;
  }
}

/* ---- encoders: size check, header, payload fields in wire order, CRC ---------------------- */

/* start a frame after the checks every encoder shares; returns 0 or an error */
static int begin_frame(writer *w, uint8_t *out, size_t out_sz, const void *msg, int size,
                       uint8_t type, uint16_t seq) {
  if (!out || !msg) {
    return ACH_E_ARG;
  }
  if (size < 0) {
    return size;
  }
  w_begin(w, out, out_sz);
  w_header(w, type, seq, (size_t)size);
  return 0;
}

int ach_encode_hello(uint8_t *out, size_t out_sz, uint16_t seq, const ach_hello *msg) {
  writer w;
  int rc = begin_frame(&w, out, out_sz, msg, msg ? size_hello(msg) : 0, ACH_MSG_HELLO, seq);
  if (rc) {
    return rc;
  }
  size_t name_len = bounded_len(msg->name, sizeof msg->name);
  w_u8(&w, msg->version_major);
  w_u8(&w, msg->version_minor);
  w_u16(&w, msg->flags);
  w_u16(&w, msg->rx_max_payload);
  for (size_t i = 0; i < ACH_NAME_LEN; i++) {
    uint8_t c = 0;
    if (i < name_len) {
      c = (uint8_t)msg->name[i];
    }
    w_u8(&w, c);
  }
  return w_finish(&w);
}

int ach_encode_hello_ack(uint8_t *out, size_t out_sz, uint16_t seq, const ach_hello_ack *msg) {
  writer w;
  int rc = begin_frame(&w, out, out_sz, msg, HELLO_ACK_SIZE, ACH_MSG_HELLO_ACK, seq);
  if (rc) {
    return rc;
  }
  w_u8(&w, msg->version_major);
  w_u8(&w, msg->version_minor);
  w_u8(&w, msg->result);
  w_u8(&w, msg->n_joints);
  w_u8(&w, msg->n_sensors);
  w_u32(&w, msg->physics_rate_hz);
  w_u64(&w, msg->sim_time_ns);
  w_u16(&w, msg->rx_max_payload);
  w_u8(&w, msg->max_joints);
  return w_finish(&w);
}

int ach_encode_sensor_samples(uint8_t *out, size_t out_sz, uint16_t seq,
                              const ach_sensor_samples *msg) {
  writer w;
  int rc = begin_frame(&w, out, out_sz, msg, msg ? size_sensor_samples(msg) : 0,
                       ACH_MSG_SENSOR_SAMPLES, seq);
  if (rc) {
    return rc;
  }
  w_u64(&w, msg->sim_time_ns);
  w_u8(&w, msg->count);
  for (int i = 0; i < msg->count; i++) {
    const ach_sample *s = &msg->samples[i];
    w_u8(&w, s->sensor_id);
    w_u8(&w, s->flags);
    w_u8(&w, s->kind);
    w_u32(&w, s->sample_seq);
    w_u32(&w, s->age_ns);
    if (s->kind == ACH_KIND_VALUE) {
      w_f32(&w, s->v.value);
    } else if (s->kind == ACH_KIND_COUNTS) {
      w_u32(&w, (uint32_t)s->v.counts);
    } else {
      w_u32(&w, s->v.raw);
    }
  }
  return w_finish(&w);
}

int ach_encode_motor_command(uint8_t *out, size_t out_sz, uint16_t seq,
                             const ach_motor_command *msg) {
  writer w;
  int rc = begin_frame(&w, out, out_sz, msg, msg ? size_motor_command(msg) : 0,
                       ACH_MSG_MOTOR_COMMAND, seq);
  if (rc) {
    return rc;
  }
  w_u32(&w, msg->board_time_us);
  w_u8(&w, msg->count);
  for (int i = 0; i < msg->count; i++) {
    w_u8(&w, msg->joints[i].joint_id);
    w_u8(&w, msg->joints[i].mode);
    w_f32(&w, msg->joints[i].value);
  }
  return w_finish(&w);
}

int ach_encode_heartbeat(uint8_t *out, size_t out_sz, uint16_t seq, const ach_heartbeat *msg) {
  writer w;
  int rc = begin_frame(&w, out, out_sz, msg, HEARTBEAT_SIZE, ACH_MSG_HEARTBEAT, seq);
  if (rc) {
    return rc;
  }
  w_u64(&w, msg->time_ns);
  w_u64(&w, msg->echo_ns);
  return w_finish(&w);
}

int ach_encode_status(uint8_t *out, size_t out_sz, uint16_t seq, const ach_status *msg) {
  writer w;
  int rc = begin_frame(&w, out, out_sz, msg, STATUS_SIZE, ACH_MSG_STATUS, seq);
  if (rc) {
    return rc;
  }
  w_u64(&w, msg->sim_time_ns);
  w_u32(&w, msg->state);
  w_u32(&w, msg->rx_frames_ok);
  w_u32(&w, msg->rx_bad_crc);
  w_u32(&w, msg->rx_framing_errors);
  w_u32(&w, msg->rx_seq_lost);
  w_u32(&w, msg->rx_rejected);
  w_u32(&w, msg->watchdog_trips);
  w_u32(&w, msg->overruns);
  w_u32(&w, msg->commands_clamped);
  return w_finish(&w);
}

int ach_encode_error(uint8_t *out, size_t out_sz, uint16_t seq, const ach_error *msg) {
  writer w;
  int rc = begin_frame(&w, out, out_sz, msg, msg ? size_error(msg) : 0, ACH_MSG_ERROR, seq);
  if (rc) {
    return rc;
  }
  w_u16(&w, msg->code);
  w_u16(&w, msg->about_seq);
  w_u8(&w, msg->text_len);
  for (int i = 0; i < msg->text_len; i++) {
    w_u8(&w, (uint8_t)msg->text[i]);
  }
  return w_finish(&w);
}

int ach_encode_step_request(uint8_t *out, size_t out_sz, uint16_t seq,
                            const ach_step_request *msg) {
  writer w;
  int rc = begin_frame(&w, out, out_sz, msg, STEP_REQUEST_SIZE, ACH_MSG_STEP_REQUEST, seq);
  if (rc) {
    return rc;
  }
  w_u32(&w, msg->steps);
  return w_finish(&w);
}

int ach_encode_describe(uint8_t *out, size_t out_sz, uint16_t seq, const ach_describe *msg) {
  writer w;
  int rc = begin_frame(&w, out, out_sz, msg, msg ? size_describe(msg) : 0, ACH_MSG_DESCRIBE, seq);
  if (rc) {
    return rc;
  }
  w_u8(&w, msg->sensor_id);
  if (msg->what != ACH_DESCRIBE_SENSORS) { /* 1.1's one byte for sensors, as before */
    w_u8(&w, msg->what);
  }
  return w_finish(&w);
}

/* a length byte, then the string's bytes up to its NUL */
static void w_string(writer *w, const char *s, size_t cap) {
  size_t n = bounded_len(s, cap);
  w_u8(w, (uint8_t)n);
  for (size_t i = 0; i < n; i++) {
    w_u8(w, (uint8_t)s[i]);
  }
}

int ach_encode_sensor_info(uint8_t *out, size_t out_sz, uint16_t seq, const ach_sensor_info *msg) {
  writer w;
  int rc = begin_frame(&w, out, out_sz, msg, msg ? size_sensor_info(msg) : 0, ACH_MSG_SENSOR_INFO,
                       seq);
  if (rc) {
    return rc;
  }
  w_u8(&w, msg->sensor_id);
  w_u8(&w, msg->kind);
  w_u8(&w, msg->sensor_type);
  w_u8(&w, msg->joint);
  w_u32(&w, msg->counts_per_rev);
  w_f32(&w, msg->rate_hz);
  w_string(&w, msg->units, sizeof msg->units);
  w_string(&w, msg->name, sizeof msg->name);
  w_u32(&w, msg->latency_ns);
  return w_finish(&w);
}

int ach_encode_joint_info(uint8_t *out, size_t out_sz, uint16_t seq, const ach_joint_info *msg) {
  writer w;
  int rc = begin_frame(&w, out, out_sz, msg, msg ? size_joint_info(msg) : 0, ACH_MSG_JOINT_INFO,
                       seq);
  if (rc) {
    return rc;
  }
  w_u8(&w, msg->joint_id);
  w_u8(&w, msg->mode);
  w_u8(&w, msg->joint_type);
  w_f32(&w, msg->ctrl_min);
  w_f32(&w, msg->ctrl_max);
  w_string(&w, msg->name, sizeof msg->name);
  w_string(&w, msg->actuator, sizeof msg->actuator);
  return w_finish(&w);
}

int ach_encode_request(uint8_t *out, size_t out_sz, uint16_t seq, const ach_request *msg) {
  writer w;
  int rc = begin_frame(&w, out, out_sz, msg, REQUEST_SIZE, ACH_MSG_REQUEST, seq);
  if (rc) {
    return rc;
  }
  w_u8(&w, msg->what);
  return w_finish(&w);
}

int ach_encode(uint8_t *out, size_t out_sz, uint16_t seq, const ach_message *msg) {
  if (!msg) {
    return ACH_E_ARG;
  }
  switch (msg->type) {
  case ACH_MSG_HELLO:
    return ach_encode_hello(out, out_sz, seq, &msg->u.hello);
  case ACH_MSG_HELLO_ACK:
    return ach_encode_hello_ack(out, out_sz, seq, &msg->u.hello_ack);
  case ACH_MSG_SENSOR_SAMPLES:
    return ach_encode_sensor_samples(out, out_sz, seq, &msg->u.sensor_samples);
  case ACH_MSG_MOTOR_COMMAND:
    return ach_encode_motor_command(out, out_sz, seq, &msg->u.motor_command);
  case ACH_MSG_HEARTBEAT:
    return ach_encode_heartbeat(out, out_sz, seq, &msg->u.heartbeat);
  case ACH_MSG_STATUS:
    return ach_encode_status(out, out_sz, seq, &msg->u.status);
  case ACH_MSG_ERROR:
    return ach_encode_error(out, out_sz, seq, &msg->u.error);
  case ACH_MSG_STEP_REQUEST:
    return ach_encode_step_request(out, out_sz, seq, &msg->u.step_request);
  case ACH_MSG_DESCRIBE:
    return ach_encode_describe(out, out_sz, seq, &msg->u.describe);
  case ACH_MSG_SENSOR_INFO:
    return ach_encode_sensor_info(out, out_sz, seq, &msg->u.sensor_info);
  case ACH_MSG_JOINT_INFO:
    return ach_encode_joint_info(out, out_sz, seq, &msg->u.joint_info);
  case ACH_MSG_REQUEST:
    return ach_encode_request(out, out_sz, seq, &msg->u.request);
  default:
    return ACH_E_TYPE;
  }
}

void ach_error_set(ach_error *err, uint16_t code, uint16_t about_seq, const char *text) {
  size_t n = text ? bounded_len(text, ACH_ERROR_TEXT_MAX) : 0;
  if (!err) {
    return;
  }
  memset(err, 0, sizeof *err);
  err->code = code;
  err->about_seq = about_seq;
  err->text_len = (uint8_t)n;
  if (n) {
    memcpy(err->text, text, n);
  }
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
