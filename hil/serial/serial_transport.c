/* hil/serial/serial_transport.c: the serial transport — decoding board frames into runtime actions,
 * batching sensor samples into frames, and its configuration. Bytes come from serial_port.c;
 * the object mapping is serial_codec.c. */
#include "hil/clock.h"
#include "hil/serial/serial_transport.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hil/config.h"
#include "hil/error.h"
#include "hil/serial/serial_codec.h"
#include "hil/serial/serial_port.h"
#include "hil/transport.h"
#include "sim/json_read.h"

#define TX_CAP 8192   /* frames waiting for the board to read; whole frames beyond are dropped */
#define RX_CHUNK 1024 /* bytes per read */
#define RX_MAX 65536  /* bytes read per poll at most, so a flood cannot hold the loop */
#define FRAME_MAX ACH_ENCODED_MAX(ACH_MAX_FRAME)

typedef struct serial_transport {
  hil_transport base;
  hil_serial_options opt;
  hil_serial_port *port;
  hil_runtime *rt; /* during poll: where decoded messages act */
  /* receiving */
  ach_decoder dec;
  ach_counters before;  /* counters of decoders replaced after a reconnection */
  uint32_t errors_seen; /* decoder errors already counted as malformed commands */
  uint32_t too_long_seen, bad_payload_seen; /* rejections of this decoder already answered */
  /* the board */
  int was_up;    /* the port was up at the last check */
  int connected; /* a HELLO was accepted on the current link */
  char board[4 * ACH_NAME_LEN + 1]; /* its HELLO name made printable (hil_printable) */
  int per_frame; /* sample entries per frame the board accepts */
  /* sending */
  uint16_t tx_seq;
  uint8_t tx[TX_CAP];
  size_t tx_len;
  /* sensor samples of one time, waiting to go out as one frame */
  hil_serial_table table;
  int have_table;
  ach_sensor_samples pending;
  double pending_time;
  int pending_sensors; /* distinct sensors in the current batch */
  uint8_t pending_seen[HIL_SERIAL_MAX_IDS + 1];
  uint64_t last_overruns;
  /* what the board was last told: STATUS goes out when the state changes, ERROR 7 on a trip */
  uint32_t state_sent;
  uint64_t trips_seen;
  /* a DESCRIBE of every id is answered over several polls when the queue fills */
  int describe_next, describe_end, describe_joints;
  hil_serial_counters c;
} serial_transport;

static const hil_transport_ops serial_ops;

/* --- sending ---------------------------------------------------------------------------------- */

/* Hands queued bytes to the port; what it does not take waits for the next call. */
static void flush_tx(serial_transport *st) {
  while (st->tx_len > 0) {
    long put = hil_serial_port_write(st->port, st->tx, st->tx_len, hil_monotonic_s());
    if (put <= 0) {
      if (put < 0) {
        st->tx_len = 0; /* the link went down: nothing queued is for the next board */
      }
      return;
    }
    memmove(st->tx, st->tx + put, st->tx_len - (size_t)put);
    st->tx_len -= (size_t)put;
  }
}

/* Queues one encoded frame whole, or drops it whole when the board is not keeping up. */
static void send_encoded(serial_transport *st, const uint8_t *frame, int n) {
  if (n <= 0) {
    return; /* cannot happen with a FRAME_MAX buffer; nothing sensible to send */
  }
  if (!hil_serial_port_is_up(st->port) || st->tx_len + (size_t)n > TX_CAP) {
    st->c.tx_dropped++;
    return;
  }
  memcpy(st->tx + st->tx_len, frame, (size_t)n);
  st->tx_len += (size_t)n;
  st->c.frames_out++;
  flush_tx(st);
}

static void send_message(serial_transport *st, const ach_message *m) {
  uint8_t frame[FRAME_MAX];
  send_encoded(st, frame, ach_encode(frame, sizeof frame, st->tx_seq++, m));
}

static void send_error(serial_transport *st, uint16_t code, uint16_t about, const char *text) {
  ach_message m;
  memset(&m, 0, sizeof m);
  m.type = ACH_MSG_ERROR;
  ach_error_set(&m.u.error, code, about, text);
  st->c.errors_sent++;
  send_message(st, &m);
}

/* Sends the batch of samples as one SENSOR_SAMPLES frame. */
static void flush_samples(serial_transport *st) {
  if (st->pending.count == 0) {
    return;
  }
  st->pending.sim_time_ns = hil_serial_time_ns(st->pending_time);
  uint8_t frame[FRAME_MAX];
  send_encoded(st, frame,
               ach_encode_sensor_samples(frame, sizeof frame, st->tx_seq++, &st->pending));
  st->pending.count = 0;
  st->pending_sensors = 0;
  memset(st->pending_seen, 0, sizeof st->pending_seen);
}

/* --- the sensor table ------------------------------------------------------------------------- */

static void ensure_table(serial_transport *st, hil_runtime *rt) {
  if (st->have_table) {
    return;
  }
  const sens_set *set = hil_runtime_sensors(rt);
  hil_serial_table_build(&st->table, set);
  st->have_table = 1;
  if (!st->opt.quiet && set) {
    fprintf(stderr, "serial: sensor ids on %s:\n", hil_serial_port_path(st->port));
    hil_serial_table_print(&st->table, set, stderr);
  }
}

static int sensor_index(hil_runtime *rt, const sens_sensor *s) {
  const sens_set *set = hil_runtime_sensors(rt);
  int n = set ? sens_set_count(set) : 0;
  for (int i = 0; i < n; i++) {
    if (sens_set_sensor(set, i) == s) {
      return i;
    }
  }
  return -1;
}

/* --- receiving -------------------------------------------------------------------------------- */

static ach_counters total_counters(const serial_transport *st) {
  ach_counters t = st->before;
  const ach_counters *d = &st->dec.counters;
  t.frames_ok += d->frames_ok, t.cobs_errors += d->cobs_errors, t.too_long += d->too_long;
  t.truncated += d->truncated, t.bad_length += d->bad_length, t.bad_crc += d->bad_crc;
  t.bad_version += d->bad_version, t.unknown_type += d->unknown_type;
  t.bad_payload += d->bad_payload, t.seq_gaps += d->seq_gaps, t.seq_lost += d->seq_lost;
  t.seq_resets += d->seq_resets;
  return t;
}

static uint32_t decoder_errors(const ach_counters *c) {
  return c->cobs_errors + c->too_long + c->truncated + c->bad_length + c->bad_crc + c->bad_version +
         c->unknown_type + c->bad_payload;
}

/* A new link: forget the partial frame and the board, keep the counts. */
static void restart_link(serial_transport *st) {
  st->before = total_counters(st);
  ach_decoder_init(&st->dec);
  st->errors_seen = 0;
  st->too_long_seen = st->bad_payload_seen = 0;
  st->connected = 0;
  st->tx_len = 0;
  st->describe_next = st->describe_end = 0;
  st->pending.count = 0;
  st->pending_sensors = 0;
  memset(st->pending_seen, 0, sizeof st->pending_seen);
}

static void serial_publish_sample(hil_transport *t, hil_runtime *rt, const sens_sensor *s,
                                  const sens_sample *smp);

/* --- state and status ------------------------------------------------------------------------- */

static int watchdog_holds(hil_runtime *rt) {
  const hil_commands *cmds = hil_runtime_commands(rt);
  for (int i = 0; i < cmds->count; i++) {
    if (cmds->slots[i].timed_out) {
      return 1;
    }
  }
  return 0;
}

/* The STATUS state bits that are sent on change (OVERRUN only rides on the periodic STATUS:
 * on a shared machine it would change every few ticks). */
static uint32_t link_state(hil_runtime *rt) {
  return ACH_STATE_CONNECTED |
         (hil_runtime_paused(rt) ? ACH_STATE_PAUSED : ACH_STATE_RUNNING) |
         (hil_runtime_options(rt)->mode == HIL_MODE_LOCKSTEP ? ACH_STATE_LOCKSTEP : 0u) |
         (watchdog_holds(rt) ? ACH_STATE_WATCHDOG : 0u);
}

static void send_status(serial_transport *st, hil_runtime *rt, const hil_status *s,
                        uint32_t overrun) {
  ach_counters rx = total_counters(st);
  ach_message m;
  memset(&m, 0, sizeof m);
  m.type = ACH_MSG_STATUS;
  ach_status *o = &m.u.status;
  o->sim_time_ns = hil_serial_time_ns(s->sim_time);
  o->state = link_state(rt) | overrun;
  o->rx_frames_ok = rx.frames_ok;
  o->rx_bad_crc = rx.bad_crc;
  o->rx_framing_errors = rx.cobs_errors + rx.truncated + rx.too_long + rx.bad_length;
  o->rx_seq_lost = rx.seq_lost;
  o->rx_rejected = rx.bad_version + rx.unknown_type + rx.bad_payload;
  o->watchdog_trips = (uint32_t)s->commands.watchdog_trips;
  o->overruns = (uint32_t)s->overruns;
  o->commands_clamped = (uint32_t)(s->commands.clamped + s->commands.rejected_nonfinite +
                                   s->commands.rejected_unknown);
  st->state_sent = o->state & ~ACH_STATE_OVERRUN;
  send_message(st, &m);
}

/* A STATUS between periodic ones: the runtime's counters as they are now. */
static void send_status_now(serial_transport *st, hil_runtime *rt) {
  hil_status s;
  hil_runtime_status(rt, &s);
  send_status(st, rt, &s, 0);
}

/* Once per poll: ERROR 7 for each new watchdog trip, and STATUS when the state changed. */
static void report_changes(serial_transport *st, hil_runtime *rt) {
  uint64_t trips = hil_runtime_commands(rt)->counters.watchdog_trips;
  if (!st->connected) {
    st->trips_seen = trips;
    return;
  }
  if (trips > st->trips_seen) {
    char text[ACH_ERROR_TEXT_MAX + 1];
    snprintf(text, sizeof text, "no command for %g s: actuators at their safe value",
             hil_runtime_commands(rt)->timeout_s);
    send_error(st, ACH_ERRC_WATCHDOG, 0xFFFF, text);
    st->trips_seen = trips;
  }
  if (link_state(rt) != st->state_sent) {
    send_status_now(st, rt);
  }
}

/* The latest sample of every sensor, so a board that just said HELLO has a state to act on
 * (in lockstep the simulator waits for its commands; it must not wait for the next step). */
static void send_latest_samples(serial_transport *st) {
  const sens_set *set = hil_runtime_sensors(st->rt);
  int n = set ? sens_set_count(set) : 0;
  for (int i = 0; i < n; i++) {
    const sens_sensor *s = sens_set_sensor(set, i);
    serial_publish_sample(&st->base, st->rt, s, &s->sample);
  }
  flush_samples(st);
}

static void on_hello(serial_transport *st, const ach_message *m) {
  const ach_hello *h = &m->u.hello;
  const sim_model *model = hil_runtime_model(st->rt);
  ach_message ack;
  memset(&ack, 0, sizeof ack);
  ack.type = ACH_MSG_HELLO_ACK;
  ack.u.hello_ack.version_major = ACH_PROTOCOL_VERSION_MAJOR;
  ack.u.hello_ack.version_minor = ACH_PROTOCOL_VERSION_MINOR;
  ack.u.hello_ack.n_joints = (uint8_t)(model->nu < 255 ? model->nu : 255);
  ack.u.hello_ack.n_sensors = (uint8_t)st->table.n;
  ack.u.hello_ack.physics_rate_hz = (uint32_t)lround(1.0 / model->opt.timestep);
  ack.u.hello_ack.sim_time_ns = hil_serial_time_ns(hil_runtime_data(st->rt)->time);
  ack.u.hello_ack.rx_max_payload = ACH_MAX_PAYLOAD; /* the receive limits, announced */
  ack.u.hello_ack.max_joints = ACH_MAX_JOINTS;
  char name[4 * ACH_NAME_LEN + 1]; /* the board's bytes, never raw on a terminal or in JSON */
  hil_printable(name, sizeof name, h->name);
  if (h->version_major != ACH_PROTOCOL_VERSION_MAJOR) {
    ack.u.hello_ack.result = ACH_HELLO_VERSION_MISMATCH;
    st->connected = 0;
    fprintf(stderr, "serial: board \"%s\" speaks protocol %u.%u, we speak %d.%d: ignored\n",
            name, h->version_major, h->version_minor, ACH_PROTOCOL_VERSION_MAJOR,
            ACH_PROTOCOL_VERSION_MINOR);
    send_message(st, &ack);
    return;
  }
  if (h->rx_max_payload < ACH_MIN_PAYLOAD) {
    /* STATUS (44 bytes) and ERROR (up to 69) would not fit: refused, not exceeded later */
    char text[ACH_ERROR_TEXT_MAX + 1];
    ack.u.hello_ack.result = ACH_HELLO_REFUSED;
    st->connected = 0;
    send_message(st, &ack);
    snprintf(text, sizeof text, "rx_max_payload %u is below the minimum %d", h->rx_max_payload,
             ACH_MIN_PAYLOAD);
    send_error(st, ACH_ERRC_UNSUPPORTED, m->seq, text);
    fprintf(stderr, "serial: board \"%s\" refused: %s\n", name, text);
    return;
  }
  /* as many entries per frame as the board's receive buffer takes */
  int fit = ((int)h->rx_max_payload - ACH_SENSOR_FIXED_SIZE) / ACH_SENSOR_ENTRY_SIZE;
  st->per_frame = fit > ACH_MAX_SENSORS_PER_FRAME ? ACH_MAX_SENSORS_PER_FRAME : fit;
  snprintf(st->board, sizeof st->board, "%s", name);
  st->pending.count = 0;
  st->describe_next = st->describe_end = 0;
  ack.u.hello_ack.result = ACH_HELLO_OK;
  send_message(st, &ack);
  if (!st->connected) {
    fprintf(stderr, "serial: board \"%s\" connected on %s (protocol %u.%u)\n", name,
            hil_serial_port_path(st->port), h->version_major, h->version_minor);
  }
  st->connected = 1;
  st->trips_seen = hil_runtime_commands(st->rt)->counters.watchdog_trips;
  send_status_now(st, st->rt);
  send_latest_samples(st);
}

/* Every joint command goes through the runtime's intake: same rules as every transport. */
static void on_motor_command(serial_transport *st, const ach_message *m) {
  const sim_model *model = hil_runtime_model(st->rt);
  hil_commands *cmds = hil_runtime_commands(st->rt);
  double now = hil_runtime_loop_time(st->rt);
  int replied = 0;
  for (int i = 0; i < m->u.motor_command.count; i++) {
    const ach_joint_command *jc = &m->u.motor_command.joints[i];
    ach_error_code bad = hil_serial_check_command(model, jc);
    char text[ACH_ERROR_TEXT_MAX + 1];
    if (bad != ACH_ERRC_NONE) {
      hil_commands_submit(cmds, -1, jc->value, now); /* counted as rejected by the intake */
      if (bad == ACH_ERRC_BAD_JOINT) {
        snprintf(text, sizeof text, "joint %u: no such actuator (%d)", jc->joint_id, model->nu);
      } else {
        snprintf(text, sizeof text, "joint %u: mode %s, expected %s", jc->joint_id,
                 hil_serial_mode_name(jc->mode),
                 hil_serial_mode_name(hil_serial_actuator_mode(&model->actuators[jc->joint_id])));
      }
    } else if (hil_commands_submit(cmds, jc->joint_id, jc->value, now) == HIL_ENONFINITE) {
      bad = ACH_ERRC_BAD_VALUE;
      snprintf(text, sizeof text, "joint %u: value is not finite", jc->joint_id);
    }
    if (bad != ACH_ERRC_NONE && !replied) {
      send_error(st, (uint16_t)bad, m->seq, text); /* one ERROR per frame is enough */
      replied = 1;
    }
  }
}

static void on_heartbeat(serial_transport *st, const ach_message *m) {
  ach_message out;
  memset(&out, 0, sizeof out);
  out.type = ACH_MSG_HEARTBEAT;
  out.u.heartbeat.time_ns = hil_serial_time_ns(hil_runtime_data(st->rt)->time);
  out.u.heartbeat.echo_ns = m->u.heartbeat.time_ns;
  send_message(st, &out);
}

static void on_step_request(serial_transport *st, const ach_message *m) {
  if (hil_runtime_options(st->rt)->mode != HIL_MODE_LOCKSTEP) {
    send_error(st, ACH_ERRC_UNSUPPORTED, m->seq, "STEP_REQUEST needs lockstep mode");
    return;
  }
  hil_runtime_request_steps(st->rt, m->u.step_request.steps);
}

/* SENSOR_INFO (or JOINT_INFO) for ids describe_next .. describe_end - 1, as many as the queue
 * takes now. */
static void send_sensor_infos(serial_transport *st) {
  const sens_set *set = hil_runtime_sensors(st->rt);
  while (st->describe_next < st->describe_end && st->tx_len + FRAME_MAX <= TX_CAP &&
         hil_serial_port_is_up(st->port)) {
    ach_message out;
    memset(&out, 0, sizeof out);
    if (st->describe_joints) {
      out.type = ACH_MSG_JOINT_INFO;
      hil_serial_joint_info(&out.u.joint_info, hil_runtime_model(st->rt), st->describe_next++);
    } else {
      out.type = ACH_MSG_SENSOR_INFO;
      hil_serial_sensor_info(&out.u.sensor_info, &st->table, set, hil_runtime_model(st->rt),
                             st->describe_next++);
    }
    send_message(st, &out);
  }
}

/* DESCRIBE of sensor ids (1.1), or (1.2) of joint ids: JOINT_INFO, one per actuator */
static void on_describe(serial_transport *st, const ach_message *m) {
  const int id = m->u.describe.sensor_id, joints = m->u.describe.what == ACH_DESCRIBE_JOINTS;
  const int count = joints ? hil_runtime_model(st->rt)->nu : st->table.n;
  char text[ACH_ERROR_TEXT_MAX + 1];
  if (m->u.describe.what > ACH_DESCRIBE_JOINTS) {
    snprintf(text, sizeof text, "DESCRIBE what %u: 0 sensors, 1 joints", m->u.describe.what);
    send_error(st, ACH_ERRC_UNSUPPORTED, m->seq, text);
    return;
  }
  if (id != ACH_DESCRIBE_ALL && id >= count) {
    snprintf(text, sizeof text, "%s %d: no such id (%d ids)", joints ? "joint" : "sensor", id,
             count);
    send_error(st, joints ? ACH_ERRC_BAD_JOINT : ACH_ERRC_BAD_SENSOR, m->seq, text);
    return;
  }
  st->describe_joints = joints;
  st->describe_next = id == ACH_DESCRIBE_ALL ? 0 : id;
  st->describe_end = id == ACH_DESCRIBE_ALL ? count : id + 1;
  send_sensor_infos(st);
}

/* REQUEST (1.2): a STATUS with the counters as they are now (the periodic one follows wall
 * time and may be a period old), or the latest sample of every sensor again, as right after
 * HELLO_ACK (for a board that did its discovery before reading samples) */
static void on_request(serial_transport *st, const ach_message *m) {
  if (m->u.request.what == ACH_REQUEST_STATUS) {
    send_status_now(st, st->rt);
  } else if (m->u.request.what == ACH_REQUEST_SAMPLES) {
    send_latest_samples(st);
  } else {
    char text[ACH_ERROR_TEXT_MAX + 1];
    snprintf(text, sizeof text, "REQUEST what %u: 0 status, 1 samples", m->u.request.what);
    send_error(st, ACH_ERRC_UNSUPPORTED, m->seq, text);
  }
}

static void on_message(const ach_message *m, void *user) {
  serial_transport *st = user;
  st->c.frames_in++;
  if (m->type == ACH_MSG_HELLO) {
    on_hello(st, m);
    return;
  }
  if (!st->connected) {
    st->c.not_connected++;
    send_error(st, ACH_ERRC_NOT_CONNECTED, m->seq, "send HELLO first");
    return;
  }
  switch (m->type) {
  case ACH_MSG_MOTOR_COMMAND:
    on_motor_command(st, m);
    break;
  case ACH_MSG_HEARTBEAT:
    on_heartbeat(st, m);
    break;
  case ACH_MSG_STEP_REQUEST:
    on_step_request(st, m);
    break;
  case ACH_MSG_DESCRIBE:
    on_describe(st, m);
    break;
  case ACH_MSG_REQUEST:
    on_request(st, m);
    break;
  case ACH_MSG_ERROR: {
    char text[4 * ACH_ERROR_TEXT_MAX + 1];
    fprintf(stderr, "serial: board \"%s\" reports error %u: %s\n", st->board, m->u.error.code,
            hil_printable(text, sizeof text, m->u.error.text));
    break;
  }
  default:
    send_error(st, ACH_ERRC_UNSUPPORTED, m->seq, "message goes from simulator to board");
    break;
  }
}

/* A frame over the receive limits gets an ERROR (the limits are announced in HELLO_ACK): a
 * board told nothing would only see its commands vanish. Other rejections (CRC, framing) are
 * line noise whose header cannot be trusted; they are counted, not answered. */
static void answer_rejection(serial_transport *st) {
  const ach_counters *now = &st->dec.counters;
  char text[ACH_ERROR_TEXT_MAX + 1];
  int too_long = now->too_long != st->too_long_seen;
  int bad_payload = now->bad_payload != st->bad_payload_seen;
  st->too_long_seen = now->too_long;
  st->bad_payload_seen = now->bad_payload;
  if (!st->connected) {
    return; /* the board hears ERROR 2 for its messages until it says HELLO */
  }
  if (too_long) {
    snprintf(text, sizeof text, "frame over %d payload bytes: dropped", ACH_MAX_PAYLOAD);
    send_error(st, ACH_ERRC_TOO_LONG, 0xFFFF, text);
  } else if (bad_payload) {
    const ach_message *m = &st->dec.msg; /* its header passed the CRC */
    if (m->type == ACH_MSG_MOTOR_COMMAND && m->payload_len > ACH_MOTOR_FIXED_SIZE - 1 &&
        st->dec.buf[ACH_HEADER_SIZE + ACH_MOTOR_FIXED_SIZE - 1] > ACH_MAX_JOINTS) {
      snprintf(text, sizeof text, "MOTOR_COMMAND of %u entries: at most %d per frame",
               st->dec.buf[ACH_HEADER_SIZE + ACH_MOTOR_FIXED_SIZE - 1], ACH_MAX_JOINTS);
    } else {
      snprintf(text, sizeof text, "type %u: %u payload bytes do not match its fields", m->type,
               m->payload_len);
    }
    send_error(st, ACH_ERRC_BAD_PAYLOAD, m->seq, text);
  }
}

/* Bytes from the port through the decoder, one at a time so that each rejected frame can be
 * answered at its delimiter. */
static void receive_bytes(serial_transport *st, const uint8_t *bytes, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const ach_message *m = ach_decoder_feed(&st->dec, bytes[i]);
    if (m) {
      on_message(m, st);
    } else if (bytes[i] == 0x00) {
      answer_rejection(st); /* a delimiter that delivered nothing: a rejection, or a flush */
    }
  }
}

/* Frames the decoder rejected count as malformed messages in the runtime's counters. */
static void count_rejected_frames(serial_transport *st) {
  uint32_t errors = decoder_errors(&st->dec.counters);
  hil_commands *cmds = hil_runtime_commands(st->rt);
  for (; st->errors_seen < errors; st->errors_seen++) {
    hil_commands_count_malformed(cmds);
  }
}

/* --- the transport's operations --------------------------------------------------------------- */

static int serial_pollitems(hil_transport *t, zmq_pollitem_t *items, int max) {
  serial_transport *st = (serial_transport *)t;
  int fd = hil_serial_port_fd(st->port);
  if (fd < 0 || max < 1) {
    return 0; /* link down: not offered, so a hung-up fd cannot make the loop spin */
  }
  items[0] = (zmq_pollitem_t){.socket = NULL, .fd = fd, .events = ZMQ_POLLIN, .revents = 0};
  return 1;
}

/* The port went down (on a read, or on a write at any time since the last check): the board
 * is gone until it says HELLO on a new link. */
static void check_link(serial_transport *st) {
  int up = hil_serial_port_is_up(st->port);
  if (st->was_up && !up) {
    if (st->connected) {
      fprintf(stderr, "serial: board \"%s\" disconnected\n", st->board);
    }
    st->c.link_down++;
    restart_link(st);
  }
  st->was_up = up;
}

static void serial_poll(hil_transport *t, hil_runtime *rt) {
  serial_transport *st = (serial_transport *)t;
  st->rt = rt;
  ensure_table(st, rt);
  flush_samples(st); /* what the last tick left (see docs/serial-transport.md) */
  check_link(st);
  double now = hil_monotonic_s();
  if (hil_serial_port_service(st->port, now)) {
    st->c.link_up++;
    restart_link(st);
    st->was_up = 1;
  }
  uint8_t buf[RX_CHUNK];
  long n = 0;
  for (size_t total = 0; total < RX_MAX;) {
    if (total > 0 && !hil_runtime_input_budget_left(rt)) { /* the rest waits in the kernel */
      if (n == (long)sizeof buf) { /* a full chunk: more is likely waiting */
        hil_runtime_input_deferred(rt);
      }
      break;
    }
    n = hil_serial_port_read(st->port, buf, sizeof buf, now);
    if (n <= 0) {
      break; /* nothing more, or the link went down (check_link below) */
    }
    receive_bytes(st, buf, (size_t)n);
    count_rejected_frames(st);
    total += (size_t)n;
  }
  flush_tx(st);
  send_sensor_infos(st);
  report_changes(st, rt);
  check_link(st);
}

static void serial_publish_sample(hil_transport *t, hil_runtime *rt, const sens_sensor *s,
                                  const sens_sample *smp) {
  serial_transport *st = (serial_transport *)t;
  ensure_table(st, rt);
  int index = sensor_index(rt, s);
  ach_sample entries[SENS_MAX_CHANNELS];
  /* a frame carries the simulation time of the step that publishes it, whatever the sensor's own
   * clock (an 800 Hz IMU's sample of t = 1.25 ms goes out with the step of t = 2 ms, age
   * 2 ms − its measurement's time): frame times never go back, and a new one is a new step */
  const double now = hil_runtime_data(rt)->time;
  /* always: the table keeps each channel's last good value for dropped samples */
  int n = hil_serial_sample_entries(entries, SENS_MAX_CHANNELS, &st->table, index, s, smp, now);
  if (!st->connected || n == 0) {
    return;
  }
  /* one frame holds the samples of one step: another step starts another frame */
  if (st->pending.count > 0 && st->pending_time != now) {
    flush_samples(st);
  }
  for (int i = 0; i < n; i++) {
    if (st->pending.count >= st->per_frame) {
      flush_samples(st);
    }
    st->pending.samples[st->pending.count++] = entries[i];
    st->pending_time = now;
  }
  if (!st->pending_seen[index]) {
    st->pending_seen[index] = 1;
    st->pending_sensors++;
  }
  /* sensors publish in set order: after every sensor, or after the last one, nothing more can
   * come in this update, so send now rather than at the next poll */
  if (st->pending_sensors >= st->table.nsensors || index == st->table.id[st->table.n - 1].sensor) {
    flush_samples(st);
  }
}

static void serial_publish_status(hil_transport *t, hil_runtime *rt, const hil_status *s) {
  serial_transport *st = (serial_transport *)t;
  flush_samples(st);
  if (!st->connected) {
    st->last_overruns = s->overruns;
    return;
  }
  send_status(st, rt, s, s->overruns > st->last_overruns ? ACH_STATE_OVERRUN : 0u);
  st->last_overruns = s->overruns;
}

static void serial_describe(hil_transport *t, char *out, size_t out_sz) {
  serial_transport *st = (serial_transport *)t;
  hil_serial_counters c = {0}; /* filled below; zeroed so -O3 sees no path without it */
  hil_serial_transport_counters(t, &c);
  const char *kind = hil_serial_port_is_pty(st->port) ? "pty" : "serial";
  const char *path = hil_serial_port_path(st->port);
  /* the counters in every state: the line after the firmware closed is the run's summary */
  char who[ACH_NAME_LEN + 24];
  if (!hil_serial_port_is_up(st->port)) {
    snprintf(who, sizeof who, "link down,");
  } else if (!st->connected) {
    snprintf(who, sizeof who, "waiting for HELLO,");
  } else {
    snprintf(who, sizeof who, "\"%s\"", st->board);
  }
  snprintf(out, out_sz,
           "%s %s: %s %lu in %lu out, bad crc %lu framing %lu rejected %lu lost %lu dropped %lu",
           kind, path, who, c.frames_in, c.frames_out, c.rx_bad_crc, c.rx_framing,
           c.rx_rejected, c.rx_seq_lost, c.tx_dropped);
}

static void serial_destroy(hil_transport *t) {
  serial_transport *st = (serial_transport *)t;
  if (st) {
    hil_serial_port_destroy(&st->port);
    free(st);
  }
}

static void serial_link_fault(hil_transport *t, const hil_link_fault *f, hil_link_counters *out) {
  hil_serial_port_link_fault(((serial_transport *)t)->port, f, out);
}

static const hil_transport_ops serial_ops = {
    .name = "serial",
    .link_fault = serial_link_fault,
    .pollitems = serial_pollitems,
    .poll = serial_poll,
    .publish_sample = serial_publish_sample,
    .publish_status = serial_publish_status,
    .describe = serial_describe,
    .destroy = serial_destroy,
};

/* --- public ----------------------------------------------------------------------------------- */

hil_transport *hil_serial_transport_new(const hil_serial_options *o, char *err, size_t err_sz) {
  serial_transport *st = calloc(1, sizeof *st);
  if (!st) {
    snprintf(err, err_sz, "out of memory");
    return NULL;
  }
  st->base.ops = &serial_ops;
  st->opt = *o;
  if (!(st->opt.reopen_interval_s > 0)) {
    st->opt.reopen_interval_s = 0.05;
  }
  st->per_frame = ACH_MAX_SENSORS_PER_FRAME;
  ach_decoder_init(&st->dec);
  st->port = hil_serial_port_new(&st->opt, err, err_sz);
  if (!st->port) {
    free(st);
    return NULL;
  }
  st->was_up = hil_serial_port_is_up(st->port);
  if (o->use_pty) {
    if (o->link[0]) {
      fprintf(stderr, "serial: firmware should open %s (link %s)\n", hil_serial_port_path(st->port),
              o->link);
    } else {
      fprintf(stderr, "serial: firmware should open %s\n", hil_serial_port_path(st->port));
    }
  } else {
    fprintf(stderr, "serial: %s (%s) at %d baud %d%c%d\n", o->port,
            hil_serial_port_resolved(st->port), o->baud, o->data_bits, o->parity, o->stop_bits);
  }
  return &st->base;
}

const char *hil_serial_transport_path(const hil_transport *t) {
  if (!t || t->ops != &serial_ops) {
    return NULL;
  }
  return hil_serial_port_path(((const serial_transport *)t)->port);
}

int hil_serial_transport_counters(const hil_transport *t, hil_serial_counters *out) {
  if (!t || t->ops != &serial_ops) {
    return HIL_EINVAL;
  }
  const serial_transport *st = (const serial_transport *)t;
  ach_counters rx = total_counters(st);
  *out = st->c;
  out->rx_bad_crc = rx.bad_crc;
  out->rx_framing = rx.cobs_errors + rx.truncated + rx.too_long + rx.bad_length;
  out->rx_rejected = rx.bad_version + rx.unknown_type + rx.bad_payload;
  out->rx_seq_gaps = rx.seq_gaps;
  out->rx_seq_lost = rx.seq_lost;
  out->connected = st->connected;
  return HIL_OK;
}

/* --- configuration ---------------------------------------------------------------------------- */

void hil_serial_options_default(hil_serial_options *o) {
  memset(o, 0, sizeof *o);
  o->use_pty = 1;
  o->baud = 1000000;
  o->data_bits = 8;
  o->parity = 'N';
  o->stop_bits = 1;
  o->flow = HIL_SERIAL_FLOW_NONE;
  o->reopen_interval_s = 0.05;
  snprintf(o->label, sizeof o->label, "serial");
}

/* One of `names` (NULL-terminated) at obj.key, as its index (absent: unchanged). */
static int read_choice(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                       const char *const *names, int *out) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!item) {
    return 0;
  }
  char p[SIM_JSON_PATH_MAX], list[128] = "";
  for (int i = 0; names[i]; i++) {
    if (cJSON_IsString(item) && strcmp(item->valuestring, names[i]) == 0) {
      *out = i;
      return 0;
    }
    size_t used = strlen(list);
    snprintf(list + used, sizeof list - used, "%s\"%s\"", i ? ", " : "", names[i]);
  }
  sim_json_path_join(p, path, key);
  return sim_json_fail(L, p, "expected one of %s", list);
}

static int parse_serial(const sim_json_ctx *L, const cJSON *obj, hil_serial_options *o) {
  static const char *const keys[] = {"mode",
                                     "port",
                                     "link",
                                     "baud",
                                     "data_bits",
                                     "parity",
                                     "stop_bits",
                                     "flow_control",
                                     "reopen_interval_s",
                                     "comment",
                                     NULL};
  static const char *const modes[] = {"device", "pty", NULL};
  static const char *const parities[] = {"none", "odd", "even", NULL};
  static const char *const flows[] = {"none", "xonxoff", "rtscts", NULL};
  const char *path = "transports.serial";
  int has_port = cJSON_GetObjectItemCaseSensitive(obj, "port") != NULL;
  int mode = has_port ? 0 : 1, parity = o->parity == 'O' ? 1 : o->parity == 'E' ? 2 : 0;
  int flow = (int)o->flow;
  if (sim_json_expect_object(L, obj, path) || sim_json_check_keys(L, obj, path, keys) ||
      read_choice(L, obj, path, "mode", modes, &mode) ||
      sim_json_read_string(L, obj, path, "port", o->port, sizeof o->port) ||
      sim_json_read_string(L, obj, path, "link", o->link, sizeof o->link) ||
      sim_json_read_int(L, obj, path, "baud", 1, 100000000, &o->baud) ||
      sim_json_read_int(L, obj, path, "data_bits", 5, 8, &o->data_bits) ||
      read_choice(L, obj, path, "parity", parities, &parity) ||
      sim_json_read_int(L, obj, path, "stop_bits", 1, 2, &o->stop_bits) ||
      read_choice(L, obj, path, "flow_control", flows, &flow) ||
      sim_json_read_number(L, obj, path, "reopen_interval_s", &o->reopen_interval_s, 0) ||
      sim_json_check_min(L, path, "reopen_interval_s", o->reopen_interval_s, 0, 1)) {
    return -1;
  }
  o->use_pty = mode == 1;
  if (o->use_pty && has_port) {
    return sim_json_fail(L, "transports.serial.port",
                         "a device is only opened in mode \"device\" (mode is \"pty\")");
  }
  if (!o->use_pty && !has_port) {
    return sim_json_fail(L, "transports.serial.port", "missing (mode \"device\" needs a port)");
  }
  if (!o->use_pty && cJSON_GetObjectItemCaseSensitive(obj, "link")) {
    return sim_json_fail(L, "transports.serial.link", "only in mode \"pty\"");
  }
  o->parity = "NOE"[parity];
  o->flow = (hil_serial_flow)flow;
  return 0;
}

int hil_serial_options_parse(hil_serial_options *o, int *present, const char *config_path,
                             char *err, size_t err_sz) {
  *present = 0;
  const sim_json_ctx L = {config_path, err, err_sz};
  cJSON *root;
  int rc = hil_config_parse(&root, config_path, err, err_sz);
  if (root) {
    const cJSON *transports = cJSON_GetObjectItemCaseSensitive(root, "transports");
    const cJSON *serial =
        transports ? cJSON_GetObjectItemCaseSensitive(transports, "serial") : NULL;
    if (transports && sim_json_expect_object(&L, transports, "transports")) {
      rc = HIL_ECONFIG;
    } else if (serial) {
      *present = 1;
      rc = parse_serial(&L, serial, o) ? HIL_ECONFIG : HIL_OK;
    }
  }
  cJSON_Delete(root);
  return rc;
}
