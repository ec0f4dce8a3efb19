/* hil/client/achilles_encode.c: the encoders: frames written with their CRC and COBS on the fly,
 * straight into the caller's buffer; payload sizes; COBS of a buffer (achilles_client.h). */
#include "achilles_client_internal.h"

#include <limits.h>
#include <string.h>

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
