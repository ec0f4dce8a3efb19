/* hil/record/replay_serial.c: the replay's serial side: the protocol's handshake (HELLO /
 * HELLO_ACK), the sensor descriptions a board asks for, and one SENSOR_SAMPLES frame per instant
 * with the id table of docs/serial-transport.md. */
#include "hil/record/replay_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hil/clock.h"
#include "hil/error.h"

/* the flat id table of docs/serial-transport.md, from the file's sensors */
void hil__replay_serial_table(hil_replay *r) {
  hil_serial_table_clear(&r->table);
  for (int i = 0; i < r->s->nsensors; i++) {
    const hil_replay_sensor *sn = &r->s->sensor[i];
    for (int c = 0; c < sn->nch; c++) {
      const int counts = strcmp(sn->type, "encoder") == 0 && strcmp(sn->channel[c], "counts") == 0;
      hil_serial_table_add(&r->table, i, c, counts ? ACH_KIND_COUNTS : ACH_KIND_VALUE);
    }
  }
}

void hil__replay_serial_print_table(const hil_replay *r, FILE *out) {
  for (int i = 0; i < r->s->nsensors; i++) {
    const hil_replay_sensor *sn = &r->s->sensor[i];
    fprintf(out, "replay:   %-16s %s", sn->name, sn->type);
    for (int id = r->table.first_id[i]; id >= 0 && id < r->table.n && r->table.id[id].sensor == i;
         id++) {
      fprintf(out, " %d=%s%s", id, sn->channel[r->table.id[id].channel],
              r->table.id[id].kind == ACH_KIND_COUNTS ? "(int32)" : "");
    }
    fputc('\n', out);
  }
}

void hil__replay_serial_flush(hil_replay *r) {
  while (r->tx_len > 0) {
    const long put = hil_serial_port_write(r->port, r->tx, r->tx_len, hil_monotonic_s());
    if (put <= 0) {
      if (put < 0) {
        r->tx_len = 0;
        r->connected = 0;
      }
      return;
    }
    memmove(r->tx, r->tx + put, r->tx_len - (size_t)put);
    r->tx_len -= (size_t)put;
  }
}

/* queues whole frames, or drops them whole when the board does not read */
static void serial_queue(hil_replay *r, const uint8_t *bytes, size_t n, int frames) {
  if (!hil_serial_port_is_up(r->port) || r->tx_len + n > TX_CAP) {
    r->rep.send_failed += (uint64_t)frames;
    return;
  }
  memcpy(r->tx + r->tx_len, bytes, n);
  r->tx_len += n;
  r->rep.messages += (uint64_t)frames;
  hil__replay_serial_flush(r);
}

static void serial_send(hil_replay *r, const ach_message *m) {
  uint8_t frame[FRAME_MAX];
  const int n = ach_encode(frame, sizeof frame, r->tx_seq++, m);
  if (n > 0) {
    serial_queue(r, frame, (size_t)n, 1);
  }
}

static void serial_error(hil_replay *r, uint16_t code, uint16_t about, const char *text) {
  ach_message m;
  memset(&m, 0, sizeof m);
  m.type = ACH_MSG_ERROR;
  ach_error_set(&m.u.error, code, about, text);
  serial_send(r, &m);
}

static void on_hello(hil_replay *r, const ach_message *m) {
  const ach_hello *h = &m->u.hello;
  ach_message ack;
  memset(&ack, 0, sizeof ack);
  ack.type = ACH_MSG_HELLO_ACK;
  ack.u.hello_ack.version_major = ACH_PROTOCOL_VERSION_MAJOR;
  ack.u.hello_ack.version_minor = 1; /* 1.1: a replay has no joints to describe and no
                                         REQUEST (docs/replay.md, section 2) */
  ack.u.hello_ack.n_joints = (uint8_t)(r->s->nactuators < 255 ? r->s->nactuators : 255);
  ack.u.hello_ack.n_sensors = (uint8_t)r->table.n;
  ack.u.hello_ack.physics_rate_hz = (uint32_t)lround(r->s->rate_hz > 0 ? r->s->rate_hz : 0);
  ack.u.hello_ack.sim_time_ns = hil_serial_time_ns(r->rep.t);
  ack.u.hello_ack.rx_max_payload = ACH_MAX_PAYLOAD; /* the receive limits, as the live simulator */
  ack.u.hello_ack.max_joints = ACH_MAX_JOINTS;
  if (h->version_major != ACH_PROTOCOL_VERSION_MAJOR) {
    ack.u.hello_ack.result = ACH_HELLO_VERSION_MISMATCH;
    r->connected = 0;
    serial_send(r, &ack);
    return;
  }
  if (h->rx_max_payload < ACH_MIN_PAYLOAD) { /* as the live simulator: STATUS and ERROR fit */
    char text[ACH_ERROR_TEXT_MAX + 1];
    ack.u.hello_ack.result = ACH_HELLO_REFUSED;
    r->connected = 0;
    serial_send(r, &ack);
    snprintf(text, sizeof text, "rx_max_payload %u is below the minimum %d", h->rx_max_payload,
             ACH_MIN_PAYLOAD);
    serial_error(r, ACH_ERRC_UNSUPPORTED, m->seq, text);
    return;
  }
  const int fit = ((int)h->rx_max_payload - ACH_SENSOR_FIXED_SIZE) / ACH_SENSOR_ENTRY_SIZE;
  r->per_frame = fit < 1 ? 1 : fit > ACH_MAX_SENSORS_PER_FRAME ? ACH_MAX_SENSORS_PER_FRAME : fit;
  r->describe_next = r->describe_end = 0;
  ack.u.hello_ack.result = ACH_HELLO_OK;
  serial_send(r, &ack);
  if (!r->connected && r->o.progress) {
    char name[4 * ACH_NAME_LEN + 1];
    fprintf(r->o.progress, "replay: board \"%s\" connected on %s\n",
            hil_printable(name, sizeof name, h->name), r->where);
  }
  r->connected = 1;
}

/* SENSOR_INFO of id: what the file says of the sensor (type, rate, units, name); a log does not
 * say which joint a sensor measures nor an encoder's counts per turn, so joint is ACH_NO_JOINT
 * and counts_per_rev 0 */
static void replay_sensor_info(ach_sensor_info *out, const hil_replay *r, int id) {
  const hil_serial_channel *ch = &r->table.id[id];
  const hil_replay_sensor *sn = &r->s->sensor[ch->sensor];
  memset(out, 0, sizeof *out);
  out->sensor_id = (uint8_t)id;
  out->kind = ch->kind;
  out->sensor_type = strcmp(sn->type, "encoder") == 0 ? ACH_SENSOR_ENCODER
                     : strcmp(sn->type, "imu") == 0   ? ACH_SENSOR_IMU
                     : strcmp(sn->type, "torque") == 0 ? ACH_SENSOR_TORQUE
                                                       : ACH_SENSOR_OTHER;
  out->joint = ACH_NO_JOINT;
  out->rate_hz = (float)sn->rate_hz;
  snprintf(out->units, sizeof out->units, "%s", sn->unit[ch->channel]);
  char name[HIL_LOG_NAME_MAX + SENS_CHANNEL_NAME_MAX + 2] = {0};
  snprintf(name, sizeof name, "%s.%s", sn->name, sn->channel[ch->channel]);
  memcpy(out->name, name, ACH_INFO_NAME_LEN); /* cut at the field's length, as live */
  out->name[ACH_INFO_NAME_LEN] = '\0';
}

/* the SENSOR_INFO frames a DESCRIBE asked for, as many as the transmit buffer takes now */
static void serial_describe_more(hil_replay *r) {
  while (r->describe_next < r->describe_end && r->tx_len + FRAME_MAX <= TX_CAP &&
         hil_serial_port_is_up(r->port)) {
    ach_message out;
    memset(&out, 0, sizeof out);
    out.type = ACH_MSG_SENSOR_INFO;
    replay_sensor_info(&out.u.sensor_info, r, r->describe_next++);
    serial_send(r, &out);
  }
}

static void on_describe(hil_replay *r, const ach_message *m) {
  const int id = m->u.describe.sensor_id;
  if (id == ACH_DESCRIBE_ALL || id < r->table.n) {
    r->describe_next = id == ACH_DESCRIBE_ALL ? 0 : id;
    r->describe_end = id == ACH_DESCRIBE_ALL ? r->table.n : id + 1;
    serial_describe_more(r);
    return;
  }
  char text[ACH_ERROR_TEXT_MAX + 1];
  snprintf(text, sizeof text, "sensor %d: no such id (%d ids)", id, r->table.n);
  serial_error(r, ACH_ERRC_BAD_SENSOR, m->seq, text);
}

static void on_message(const ach_message *m, void *user) {
  hil_replay *r = user;
  r->rep.frames_in++;
  if (m->type == ACH_MSG_HELLO) {
    on_hello(r, m);
    return;
  }
  if (!r->connected) {
    serial_error(r, ACH_ERRC_NOT_CONNECTED, m->seq, "send HELLO first");
    return;
  }
  if (m->type == ACH_MSG_MOTOR_COMMAND) {
    if (r->rep.motor_commands++ == 0 && r->o.progress) {
      fprintf(r->o.progress, "replay: MOTOR_COMMAND frames are counted and ignored (a replay "
                             "moves nothing)\n");
    }
  } else if (m->type == ACH_MSG_HEARTBEAT) {
    ach_message out;
    memset(&out, 0, sizeof out);
    out.type = ACH_MSG_HEARTBEAT;
    out.u.heartbeat.time_ns = hil_serial_time_ns(r->rep.t);
    out.u.heartbeat.echo_ns = m->u.heartbeat.time_ns;
    serial_send(r, &out);
  } else if (m->type == ACH_MSG_STEP_REQUEST) {
    serial_error(r, ACH_ERRC_UNSUPPORTED, m->seq, "STEP_REQUEST needs lockstep mode");
  } else if (m->type == ACH_MSG_DESCRIBE && m->u.describe.what != ACH_DESCRIBE_SENSORS) {
    serial_error(r, ACH_ERRC_UNSUPPORTED, m->seq, "a replay has no joints to describe (1.1)");
  } else if (m->type == ACH_MSG_REQUEST) {
    serial_error(r, ACH_ERRC_UNSUPPORTED, m->seq, "a replay speaks 1.1: no REQUEST");
  } else if (m->type == ACH_MSG_DESCRIBE) {
    on_describe(r, m);
  } else if (m->type == ACH_MSG_ERROR) {
    if (r->o.progress) {
      char text[4 * ACH_ERROR_TEXT_MAX + 1];
      fprintf(r->o.progress, "replay: board reports error %u: %s\n", m->u.error.code,
              hil_printable(text, sizeof text, m->u.error.text));
    }
  } else {
    serial_error(r, ACH_ERRC_UNSUPPORTED, m->seq, "message goes from simulator to board");
  }
}

/* reads what the board sent; follows the link going down and coming back */
void hil__replay_serial_service(hil_replay *r) {
  const double now = hil_monotonic_s();
  if (!hil_serial_port_is_up(r->port)) {
    if (hil_serial_port_service(r->port, now)) {
      ach_decoder_init(&r->dec);
    }
    return;
  }
  uint8_t buf[1024];
  long n;
  while ((n = hil_serial_port_read(r->port, buf, sizeof buf, now)) > 0) {
    ach_decoder_push(&r->dec, buf, (size_t)n, on_message, r);
  }
  serial_describe_more(r); /* the rest of a DESCRIBE as the board reads */
  if (n < 0) {
    r->connected = 0;
    r->tx_len = 0;
    if (r->o.progress) {
      fprintf(r->o.progress, "replay: the board went away; waiting for a new HELLO\n");
    }
  }
  hil__replay_serial_flush(r);
}

void hil__replay_serial_status(hil_replay *r) {
  if (!r->connected) {
    return;
  }
  ach_message m;
  memset(&m, 0, sizeof m);
  m.type = ACH_MSG_STATUS;
  m.u.status.sim_time_ns = hil_serial_time_ns(r->rep.t);
  m.u.status.state = ACH_STATE_RUNNING | ACH_STATE_CONNECTED;
  const ach_counters *c = &r->dec.counters;
  m.u.status.rx_frames_ok = c->frames_ok;
  m.u.status.rx_bad_crc = c->bad_crc;
  m.u.status.rx_framing_errors = c->cobs_errors + c->truncated + c->too_long + c->bad_length;
  m.u.status.rx_seq_lost = c->seq_lost;
  m.u.status.rx_rejected = c->bad_version + c->unknown_type + c->bad_payload;
  m.u.status.overruns = (uint32_t)r->rep.late_1ms;
  serial_send(r, &m);
}

/* appends the entries of one sample to the frames of the instant, opening a new frame when the
 * current one holds what the board accepts */
void hil__replay_serial_add(hil_replay *r, const hil_replay_sample *smp) {
  const hil_replay_sensor *sn = &r->s->sensor[smp->sensor];
  sens_sample ss;
  memset(&ss, 0, sizeof ss);
  ss.t = smp->t;
  ss.t_truth = smp->t_truth;
  ss.seq = smp->seq;
  ss.valid = smp->valid;
  memcpy(ss.meas, smp->value, sizeof ss.meas);
  r->fake.nch = sn->nch;
  ach_sample e[SENS_MAX_CHANNELS];
  const int n = hil_serial_sample_entries(e, SENS_MAX_CHANNELS, &r->table, smp->sensor, &r->fake,
                                          &ss, smp->t);
  for (int i = 0; i < n; i++) {
    ach_sensor_samples *f = &r->stage[r->nstage - 1];
    if (f->count >= r->per_frame) {
      if (r->nstage == STAGE_FRAMES) {
        r->rep.send_failed++; /* more than 255 entries in one instant cannot happen */
        return;
      }
      r->stage[r->nstage] = (ach_sensor_samples){.sim_time_ns = f->sim_time_ns, .count = 0};
      f = &r->stage[r->nstage++];
    }
    f->samples[f->count++] = e[i];
  }
}

/* encodes the frames of the instant with the next sequence numbers and queues them at once */
void hil__replay_serial_send_stage(hil_replay *r) {
  uint8_t bytes[TX_CAP];
  size_t len = 0;
  int frames = 0;
  for (int k = 0; k < r->nstage; k++) {
    if (r->stage[k].count == 0) {
      continue;
    }
    const int n =
        ach_encode_sensor_samples(bytes + len, sizeof bytes - len, r->tx_seq, &r->stage[k]);
    if (n <= 0) {
      r->rep.send_failed++;
      continue;
    }
    r->tx_seq++;
    len += (size_t)n;
    frames++;
  }
  if (frames > 0) {
    serial_queue(r, bytes, len, frames);
  }
}
