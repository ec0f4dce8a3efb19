/* hil/servo/servo_bus.c: the smart-servo bus transport: configuration, the bus thread (packets
 * in, timed status packets out) and the per-step servo loops. */
#define _GNU_SOURCE /* clock_nanosleep with TIMER_ABSTIME */
#include "hil/servo/servo_bus.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hil/clock.h"
#include "hil/config.h"
#include "hil/error.h"
#include "hil/serial/serial_port.h"
#include "hil/servo/dxl2.h"
#include "hil/servo/dxl_device.h"
#include "hil/servo/feetech.h"
#include "hil/servo/ft_device.h"
#include "hil/servo/pty_latency.h"
#include "hil/servo/servo_internal.h"
#include "hil/servo/servo_model.h"
#include "hil/servo/servo_watch.h"
#include "hil/transport.h"
#include "sim/json_read.h"
#include "sim/servo_spec.h"

#define MAX_SERVOS 32
#define REPLY_MAX 1100 /* a status packet of the whole X-series table, stuffed, fits */
#define BITS_PER_BYTE 10.0 /* start, 8 data, stop */
#define PTY_LATENCY_SAMPLES 33 /* a few ms at start */

/* --- models ----------------------------------------------------------------------------------- */

typedef struct model_info {
  const char *name;
  int number;
  servo_protocol protocol;
} model_info;

static const model_info models[] = {
    {"XL430-W250", DXL_MODEL_XL430_W250, SERVO_PROTOCOL_DYNAMIXEL2},
    {"XM430-W350", DXL_MODEL_XM430_W350, SERVO_PROTOCOL_DYNAMIXEL2},
    {"STS3215", FT_MODEL_STS3215, SERVO_PROTOCOL_FEETECH},
};
#define NMODELS (sizeof models / sizeof models[0])

/* --- one servo -------------------------------------------------------------------------------- */

typedef struct bus_servo {
  int actuator;       /* index in the model's actuators (= the robot file's order) */
  int qposadr, dofadr;
  const sens_sensor *encoder; /* the joint's encoder sensor, or NULL (the true joint) */
  int ch_angle;
  double meas_pos; /* its latest valid sample */
  int have_meas;
  const model_info *model;
  servo_motor motor;
  servo_state state;
  uint8_t seen[SERVO_WATCH_MEM_MAX]; /* the watched fields as the last recorded step took them */
  int watched;                       /* seen holds them (else the next record lists them all) */
  union {
    dxl_device dxl;
    ft_device ft;
  } dev;
} bus_servo;

typedef struct servo_bus {
  hil_transport base;
  servo_bus_options opt;
  servo_protocol protocol;
  hil_serial_port *port;
  int nservo;
  bus_servo servo[MAX_SERVOS];
  pthread_mutex_t lock; /* the control tables: the bus thread and the loop's step */
  pthread_t thread;
  int thread_started;
  atomic_int stop;
  hil_runtime *rt;
  double byte_time; /* s per byte at the bus baud rate */
  double wire_free; /* pty: when the half-duplex line is free again (monotonic s) */
  double pty_latency; /* pty: its delivery latency, s, measured before the pty is made
                         (pty_latency.h): taken out of both directions */
  dxl2_decoder dxl_dec;
  ft_decoder ft_dec;
  servo_bus_counters counters; /* under lock */
} servo_bus;

static const hil_transport_ops servo_bus_ops;

static void sleep_until(double t) {
  struct timespec ts;
  ts.tv_sec = (time_t)t;
  ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++, ts.tv_nsec -= 1000000000L;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
  }
}

/* Waits for t: sleeps until the last SERVO_BUS_SPIN_S before it, then spins (a sleep wakes
 * 0.1 ms late or more on a loaded machine; the wire's byte times are 10 µs at 1 Mbaud). */
static void wait_until(double t) {
  if (t - SERVO_BUS_SPIN_S > hil_monotonic_s()) {
    sleep_until(t - SERVO_BUS_SPIN_S);
  }
  while (hil_monotonic_s() < t) {
  }
}

/* --- protocol glue: each servo's ID, table and answers ---------------------------------------- */

static uint8_t servo_id(const servo_bus *b, const bus_servo *s) {
  return b->protocol == SERVO_PROTOCOL_DYNAMIXEL2 ? dxl_device_id(&s->dev.dxl)
                                                  : ft_device_id(&s->dev.ft);
}

/* the servo's return delay time, s (both protocols count 2 µs units) */
static double return_delay(const servo_bus *b, const bus_servo *s) {
  const uint8_t v = b->protocol == SERVO_PROTOCOL_DYNAMIXEL2 ? s->dev.dxl.mem[DXL_RETURN_DELAY_TIME]
                                                             : s->dev.ft.mem[FT_RETURN_DELAY_TIME];
  return v * 2e-6;
}

/* A servo whose Baud Rate no longer matches the bus hears only noise and stays silent. */
static int hears(const servo_bus *b, const bus_servo *s) {
  const long baud = b->protocol == SERVO_PROTOCOL_DYNAMIXEL2
                        ? dxl_baud_rate(s->dev.dxl.mem[DXL_BAUD_RATE])
                        : ft_baud_rate(s->dev.ft.mem[FT_BAUD_RATE]);
  return baud == b->opt.baud;
}

/* --- replies on the wire ---------------------------------------------------------------------- */

typedef struct reply {
  int order; /* place in the answering sequence */
  uint8_t id;
  double delay; /* return delay time, s */
  int n;
  uint8_t bytes[REPLY_MAX];
} reply;

/* The order a servo answers in: its place in a SYNC/BULK read's list, its ID for a broadcast
 * ping, else 0 (one servo). */
static int answer_order(const servo_bus *b, const uint8_t *params, size_t nparams,
                        uint8_t instruction, uint8_t packet_id, uint8_t id) {
  const int dxl = b->protocol == SERVO_PROTOCOL_DYNAMIXEL2;
  if (instruction == (dxl ? DXL2_SYNC_READ : FT_SYNC_READ)) {
    const size_t first = dxl ? 4 : 2;
    for (size_t i = first; i < nparams; i++) {
      if (params[i] == id) {
        return (int)(i - first);
      }
    }
  }
  if (dxl && instruction == DXL2_BULK_READ) {
    for (size_t i = 0; i + 5 <= nparams; i += 5) {
      if (params[i] == id) {
        return (int)(i / 5);
      }
    }
  }
  return packet_id == 0xFE ? id : 0;
}

static int by_order(const void *a, const void *b) {
  const reply *x = a, *y = b;
  return (x->order > y->order) - (x->order < y->order);
}

/* Two servos at one ID drive the line at once: each bit is low if either pulls it low (a wired
 * AND of the two byte streams), which garbles the packet. */
static int merge_collisions(reply *r, int n, unsigned long *collisions) {
  int out = 0;
  for (int i = 0; i < n; i++) {
    int merged = 0;
    for (int k = 0; k < out && !merged; k++) {
      if (r[k].id == r[i].id) {
        for (int j = 0; j < r[i].n; j++) {
          r[k].bytes[j] = j < r[k].n ? (uint8_t)(r[k].bytes[j] & r[i].bytes[j]) : r[i].bytes[j];
        }
        r[k].n = r[k].n > r[i].n ? r[k].n : r[i].n;
        merged = 1;
        (*collisions)++;
      }
    }
    if (!merged && out != i) {
      r[out] = r[i];
    }
    out += !merged;
  }
  return out;
}

/* Writes the replies as the wire delivers them: each starts after the one before it has ended
 * and the servo's return delay has passed; on a pty, where no UART paces the bytes, a reply is
 * written when its last byte would have arrived, and the line is busy until then. */
static void send_replies(servo_bus *b, reply *r, int n, double t_rx) {
  double line_free = b->opt.use_pty ? fmax(t_rx, b->wire_free) : t_rx;
  for (int i = 0; i < n; i++) {
    const double start = line_free + r[i].delay, end = start + r[i].n * b->byte_time;
    wait_until(b->opt.use_pty ? end - b->pty_latency : start);
    long sent = hil_serial_port_write(b->port, r[i].bytes, (size_t)r[i].n, hil_monotonic_s());
    pthread_mutex_lock(&b->lock);
    b->counters.replies++;
    b->counters.tx_dropped += sent < 0 ? (unsigned long)r[i].n : (unsigned long)(r[i].n - sent);
    pthread_mutex_unlock(&b->lock);
    line_free = end;
  }
  if (b->opt.use_pty) {
    b->wire_free = fmax(b->wire_free, line_free);
  }
}

/* One decoded instruction: every servo that hears the bus handles it; their replies go out in
 * order. The replies array is the thread's (too large for its stack). */
static void dispatch(servo_bus *b, uint8_t id, uint8_t instruction, const uint8_t *params,
                     size_t nparams, const void *packet, double t_rx, reply *replies) {
  int n = 0;
  pthread_mutex_lock(&b->lock);
  b->counters.packets++;
  for (int i = 0; i < b->nservo; i++) {
    bus_servo *s = &b->servo[i];
    if (!hears(b, s)) {
      continue;
    }
    reply *r = &replies[n];
    r->id = servo_id(b, s); /* before the packet: a reply carries the ID it had */
    r->delay = return_delay(b, s);
    r->order = answer_order(b, params, nparams, instruction, id, r->id);
    r->n = b->protocol == SERVO_PROTOCOL_DYNAMIXEL2
               ? dxl_device_handle(&s->dev.dxl, packet, r->bytes, sizeof r->bytes)
               : ft_device_handle(&s->dev.ft, packet, r->bytes, sizeof r->bytes);
    n += r->n > 0;
  }
  qsort(replies, (size_t)n, sizeof *replies, by_order);
  n = merge_collisions(replies, n, &b->counters.collisions);
  pthread_mutex_unlock(&b->lock);
  send_replies(b, replies, n, t_rx);
}

/* On a pty the request's bytes arrive at once: each takes its byte time on the half-duplex
 * line after the one before it (and after a reply still on the line), and the servo acts when
 * the packet's last byte has arrived. A byte that came before the line could have carried it
 * is counted (rx_early). A device's UART paces the bytes itself. */
static double byte_arrival(servo_bus *b, double t_rx) {
  if (!b->opt.use_pty) {
    return t_rx;
  }
  if (t_rx < b->wire_free) {
    pthread_mutex_lock(&b->lock);
    b->counters.rx_early++;
    pthread_mutex_unlock(&b->lock);
  }
  b->wire_free = fmax(t_rx, b->wire_free) + b->byte_time;
  return b->wire_free;
}

static void receive(servo_bus *b, const uint8_t *bytes, long n, double t_rx, reply *replies) {
  for (long i = 0; i < n; i++) {
    const double t_byte = byte_arrival(b, t_rx);
    if (b->protocol == SERVO_PROTOCOL_DYNAMIXEL2) {
      const unsigned long bad = b->dxl_dec.crc_errors + b->dxl_dec.length_errors;
      const dxl2_packet *p = dxl2_decoder_feed(&b->dxl_dec, bytes[i]);
      if (b->dxl_dec.crc_errors + b->dxl_dec.length_errors != bad) {
        pthread_mutex_lock(&b->lock);
        b->counters.bad_packets++;
        pthread_mutex_unlock(&b->lock);
      }
      if (p) {
        dispatch(b, p->id, p->instruction, p->params, p->nparams, p, t_byte, replies);
      }
    } else {
      const unsigned long bad = b->ft_dec.checksum_errors + b->ft_dec.length_errors;
      const ft_packet *p = ft_decoder_feed(&b->ft_dec, bytes[i]);
      if (b->ft_dec.checksum_errors + b->ft_dec.length_errors != bad) {
        pthread_mutex_lock(&b->lock);
        b->counters.bad_packets++;
        pthread_mutex_unlock(&b->lock);
      }
      if (p) {
        dispatch(b, p->id, p->instruction, p->params, p->nparams, p, t_byte, replies);
      }
    }
  }
}

/* A packet that stopped arriving (a truncated one) is given up after the packet timeout, so the
 * next packet is heard, as a servo's firmware does. */
static void drop_partial(servo_bus *b) {
  const int partial = b->protocol == SERVO_PROTOCOL_DYNAMIXEL2 ? b->dxl_dec.n > 0 : b->ft_dec.n > 0;
  if (!partial) {
    return;
  }
  if (b->protocol == SERVO_PROTOCOL_DYNAMIXEL2) {
    b->dxl_dec.n = 0, b->dxl_dec.need = 0;
  } else {
    b->ft_dec.n = 0;
  }
  pthread_mutex_lock(&b->lock);
  b->counters.bad_packets++;
  pthread_mutex_unlock(&b->lock);
}

/* While the controller has the port closed: wait for it to open it again (a pty wakes the
 * thread at once, hil_serial_port_wakeup_fd), so that the first request after a reopen is
 * answered on time; a packet cut by the close is dropped. */
static void wait_for_link(servo_bus *b) {
  drop_partial(b);
  const int wake = hil_serial_port_wakeup_fd(b->port);
  if (wake >= 0) {
    struct pollfd pfd = {wake, POLLIN, 0};
    poll(&pfd, 1, 10);
  } else {
    sleep_until(hil_monotonic_s() + 0.01);
  }
  hil_serial_port_service(b->port, hil_monotonic_s());
}

/* The bus thread: wait for bytes (10 ms at most, to notice a stop), answer, and keep the link
 * (a controller closing the pty and opening it again, a device unplugged). */
static void *bus_thread(void *arg) {
  servo_bus *b = arg;
  reply replies[MAX_SERVOS]; /* 35 KB: the thread's stack holds it */
  uint8_t buf[512];
  double last_rx = 0;
  while (!atomic_load(&b->stop)) {
    const int fd = hil_serial_port_fd(b->port);
    if (fd < 0) {
      wait_for_link(b);
      continue;
    }
    struct pollfd pfd = {fd, POLLIN, 0};
    const double t_wait = hil_monotonic_s();
    const int ready = poll(&pfd, 1, 10);
    const double t_rx = hil_monotonic_s();
    /* bytes that woke the thread were written pty_latency before it woke; bytes already there
     * when it looked came at an unknown time before: no earlier than it began to wait is all
     * that is known, so it never answers early for them */
    const double seen_late = fmin(b->pty_latency, t_rx - t_wait);
    if (t_rx - last_rx > SERVO_BUS_PACKET_TIMEOUT_S) {
      drop_partial(b);
    }
    if (ready <= 0) {
      continue;
    }
    const long n = hil_serial_port_read(b->port, buf, sizeof buf, t_rx);
    if (n > 0) {
      last_rx = hil_monotonic_s();
      receive(b, buf, n, last_rx - seen_late, replies);
    }
  }
  return NULL;
}

/* --- the per-step loop ------------------------------------------------------------------------ */

/* The servo's position sensor: the joint's encoder sensor when one is configured (its noise,
 * quantization, latency), else the true angle, which the servo's own 12-bit encoder reads
 * (4096 ticks a turn, with its hysteresis: servo_read_encoder). */
static servo_feedback feedback(const bus_servo *s, const sim_data *d) {
  const double two_pi = 6.283185307179586, q = d->qpos[s->qposadr];
  servo_feedback fb = {q, d->qvel[s->dofadr]};
  if (s->encoder && s->have_meas) {
    /* a wrapped encoder angle is unwound around the true angle: turns are counted by the
     * servo, not by the sensor's output format */
    fb.position = s->meas_pos + two_pi * round((q - s->meas_pos) / two_pi);
  }
  return fb;
}

static void bus_publish_step(hil_transport *t, hil_runtime *rt, uint64_t steps, double sim_time) {
  (void)steps, (void)sim_time;
  servo_bus *b = (servo_bus *)t;
  const sim_data *d = hil_runtime_data(rt);
  const double dt = 1.0 / hil_runtime_options(rt)->rate_hz;
  double torque[MAX_SERVOS];
  const int recording = hil_runtime_recording(rt), dxl = b->protocol == SERVO_PROTOCOL_DYNAMIXEL2;
  servo_taken tk[MAX_SERVOS]; /* the recording's: what each loop took at this step */
  pthread_mutex_lock(&b->lock);
  for (int i = 0; i < b->nservo; i++) {
    bus_servo *s = &b->servo[i];
    const servo_feedback fb = feedback(s, d);
    torque[i] = b->protocol == SERVO_PROTOCOL_DYNAMIXEL2
                    ? dxl_servo_step(&s->dev.dxl, &s->state, &s->motor, &fb, dt)
                    : ft_servo_step(&s->dev.ft, &s->state, &s->motor, &fb, dt);
    if (recording) { /* the client's writes and the loop's own changes, as this step took them */
      tk[i].id = servo_id(b, s);
      servo_watch_take(&tk[i], dxl ? SERVO_WATCH_DXL : SERVO_WATCH_STS, s->model->number,
                       dxl ? s->dev.dxl.mem : s->dev.ft.mem, s->seen, !s->watched);
      s->watched = 1;
    }
  }
  b->counters.steps++;
  pthread_mutex_unlock(&b->lock);
  hil_commands *c = hil_runtime_commands(rt);
  const double now = hil_runtime_loop_time(rt);
  for (int i = 0; i < b->nservo; i++) {
    hil_commands_submit(c, b->servo[i].actuator, torque[i], now);
    if (recording && tk[i].n > 0) { /* the log is the loop thread's: written outside the lock */
      hil_runtime_record_servo(rt, hil_runtime_model(rt)->actuators[b->servo[i].actuator].name,
                               tk[i].id, tk[i].n, tk[i].name, tk[i].value);
    }
  }
}

static void bus_publish_sample(hil_transport *t, hil_runtime *rt, const sens_sensor *sensor,
                               const sens_sample *smp) {
  (void)rt;
  servo_bus *b = (servo_bus *)t;
  for (int i = 0; i < b->nservo; i++) {
    bus_servo *s = &b->servo[i];
    if (s->encoder == sensor && smp->valid) {
      s->meas_pos = smp->meas[s->ch_angle];
      s->have_meas = 1;
    }
  }
}

/* The encoder sensor on the servo's joint (the first, when several). */
static void find_encoder(bus_servo *s, const sim_model *m, const sens_set *set) {
  const int joint = m->actuators[s->actuator].joint;
  s->encoder = NULL;
  for (int i = 0; set && i < sens_set_count(set); i++) {
    const sens_sensor *e = sens_set_sensor(set, i);
    if (e->type == SENS_ENCODER && e->u.enc.joint == joint && e->u.enc.ch_angle >= 0) {
      s->encoder = e;
      s->ch_angle = e->u.enc.ch_angle;
      return;
    }
  }
}

static int bus_attach(hil_transport *t, hil_runtime *rt) {
  servo_bus *b = (servo_bus *)t;
  const sim_model *m = hil_runtime_model(rt);
  for (int i = 0; i < b->nservo; i++) {
    bus_servo *s = &b->servo[i];
    if (s->actuator >= m->nu || m->actuators[s->actuator].type != SIM_ACT_SMART_SERVO) {
      return HIL_ECONFIG; /* the model is not the file the servos were read from */
    }
    s->qposadr = m->actuators[s->actuator].qposadr;
    s->dofadr = m->actuators[s->actuator].dof;
    find_encoder(s, m, hil_runtime_sensors(rt));
  }
  b->rt = rt;
  if (pthread_create(&b->thread, NULL, bus_thread, b) != 0) {
    return HIL_ESYSTEM;
  }
  b->thread_started = 1;
  return HIL_OK;
}

static void bus_poll(hil_transport *t, hil_runtime *rt) { (void)t, (void)rt; }

static void bus_publish_status(hil_transport *t, hil_runtime *rt, const hil_status *st) {
  (void)t, (void)rt, (void)st;
}

static void bus_describe(hil_transport *t, char *out, size_t out_sz) {
  servo_bus *b = (servo_bus *)t;
  pthread_mutex_lock(&b->lock);
  const servo_bus_counters c = b->counters;
  pthread_mutex_unlock(&b->lock);
  snprintf(out, out_sz, "servo bus %s: %lu packets, %lu replies, %lu bad",
           hil_serial_port_path(b->port), c.packets, c.replies, c.bad_packets);
}

static void bus_destroy(hil_transport *t) {
  servo_bus *b = (servo_bus *)t;
  if (b->thread_started) {
    atomic_store(&b->stop, 1);
    pthread_join(b->thread, NULL);
  }
  hil_serial_port_destroy(&b->port);
  pthread_mutex_destroy(&b->lock);
  free(b);
}

/* the bus thread reads and writes the port; the fault's settings are atomics (line_fault.h) */
static void bus_link_fault(hil_transport *t, const hil_link_fault *f, hil_link_counters *out) {
  hil_serial_port_link_fault(((servo_bus *)t)->port, f, out);
}

static const hil_transport_ops servo_bus_ops = {
    .name = "servo_bus",
    .link_fault = bus_link_fault,
    .attach = bus_attach,
    .pollitems = NULL,
    .poll = bus_poll,
    .publish_sample = bus_publish_sample,
    .publish_step = bus_publish_step,
    .publish_status = bus_publish_status,
    .describe = bus_describe,
    .destroy = bus_destroy,
};

/* --- configuration ---------------------------------------------------------------------------- */

void servo_bus_options_default(servo_bus_options *o) {
  memset(o, 0, sizeof *o);
  o->use_pty = 1;
  o->baud = 1000000;
}

static const char *const protocol_names[] = {"dynamixel2", "feetech", NULL};

static int parse_bus(const sim_json_ctx *L, const cJSON *obj, const char *path,
                     servo_bus_options *o) {
  static const char *const keys[] = {"port", "link", "protocol", "baud", "comment", NULL};
  char p[SIM_JSON_PATH_MAX], port[SERVO_BUS_PATH_MAX] = "", protocol[32] = "";
  double baud = (double)o->baud;
  if (sim_json_expect_object(L, obj, path) || sim_json_check_keys(L, obj, path, keys) ||
      sim_json_read_string(L, obj, path, "port", port, sizeof port) ||
      sim_json_read_string(L, obj, path, "link", o->link, sizeof o->link) ||
      sim_json_read_string(L, obj, path, "protocol", protocol, sizeof protocol) ||
      sim_json_read_number(L, obj, path, "baud", &baud, 0)) {
    return -1;
  }
  if (baud != floor(baud) || baud < 1 || baud > 4500000) {
    sim_json_path_join(p, path, "baud");
    return sim_json_fail(L, p, "expected an integer number of bits per second (got %g)", baud);
  }
  o->baud = (long)baud;
  if (port[0]) {
    o->use_pty = strcmp(port, "pty") == 0;
    snprintf(o->port, sizeof o->port, "%s", o->use_pty ? "" : port);
  }
  if (protocol[0]) {
    int k = -1;
    for (int i = 0; protocol_names[i]; i++) {
      k = strcmp(protocol, protocol_names[i]) == 0 ? i : k;
    }
    if (k < 0) {
      sim_json_path_join(p, path, "protocol");
      return sim_json_fail(L, p, "expected \"dynamixel2\" or \"feetech\" (got \"%s\")", protocol);
    }
    o->protocol = (servo_protocol)k, o->has_protocol = 1;
  }
  return 0;
}

int servo_bus_options_parse(servo_bus_options *o, int *present, const char *config_path,
                            char *err, size_t err_sz) {
  *present = 0;
  const sim_json_ctx L = {config_path, err, err_sz};
  cJSON *root;
  int rc = hil_config_parse(&root, config_path, err, err_sz);
  if (root) {
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(root, "transports");
    const cJSON *bus = cJSON_IsObject(tr) ? cJSON_GetObjectItemCaseSensitive(tr, "servo_bus") : NULL;
    if (bus) {
      *present = 1;
      rc = parse_bus(&L, bus, "transports.servo_bus", o) ? HIL_ECONFIG : HIL_OK;
    }
  }
  cJSON_Delete(root);
  return rc;
}

int servo_bus_options_read(servo_bus_options *o, const cJSON *section, const char *source,
                           const char *path, char *err, size_t err_sz) {
  const sim_json_ctx L = {source, err, err_sz};
  return parse_bus(&L, section, path, o) ? HIL_ECONFIG : HIL_OK;
}

static int is_servo_actuator(const cJSON *a) {
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(a, "type");
  return cJSON_IsString(type) && strcmp(type->valuestring, "servo") == 0;
}

int servo_bus_config_has_servos(const char *config_path) {
  char err[256];
  cJSON *root = NULL;
  int found = 0;
  if (hil_config_parse(&root, config_path, err, sizeof err) == HIL_OK && root) {
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "actuators");
    for (const cJSON *a = cJSON_IsArray(list) ? list->child : NULL; a; a = a->next) {
      found |= is_servo_actuator(a);
    }
  }
  cJSON_Delete(root);
  return found;
}

static const model_info *find_model(const char *name) {
  for (size_t i = 0; i < NMODELS; i++) {
    if (strcmp(models[i].name, name) == 0) {
      return &models[i];
    }
  }
  return NULL;
}

const char *servo_bus_protocol_name(servo_protocol p) { return protocol_names[p]; }

int servo__read_block(const sim_json_ctx *L, const cJSON *block, const char *path, int *id) {
  char p[SIM_JSON_PATH_MAX];
  double v = -1;
  const sim_servo_spec *spec = sim_servo_block_read(L, block, path);
  if (!spec || sim_json_read_number(L, block, path, "id", &v, 1)) {
    return -1;
  }
  if (v != floor(v) || v < 0 || v > 252) {
    sim_json_path_join(p, path, "id");
    return sim_json_fail(L, p, "expected an integer from 0 to 252 (got %g)", v);
  }
  *id = (int)v;
  return (int)(find_model(spec->name) - models); /* every spec has a bus model */
}

int servo__model_protocol(int model) { return (int)models[model].protocol; }
const char *servo__model_name(int model) { return models[model].name; }

/* One actuator's "servo" block: {"id", "model", and the motor's datasheet figures to override}. */
static int parse_servo(const sim_json_ctx *L, const cJSON *obj, const char *path, bus_servo *s) {
  int id = 0;
  const int k = servo__read_block(L, obj, path, &id);
  if (k < 0) {
    return -1;
  }
  s->model = &models[k];
  servo_motor_of_model(&s->motor, s->model->number);
  if (sim_json_read_number(L, obj, path, "stall_torque", &s->motor.stall_torque, 0) ||
      sim_json_check_min(L, path, "stall_torque", s->motor.stall_torque, 0, 1) ||
      sim_json_read_number(L, obj, path, "stall_current", &s->motor.stall_current, 0) ||
      sim_json_check_min(L, path, "stall_current", s->motor.stall_current, 0, 1) ||
      sim_json_read_number(L, obj, path, "no_load_speed", &s->motor.no_load_speed, 0) ||
      sim_json_check_min(L, path, "no_load_speed", s->motor.no_load_speed, 0, 1)) {
    return -1;
  }
  return s->model->protocol == SERVO_PROTOCOL_DYNAMIXEL2
             ? dxl_device_init(&s->dev.dxl, (dxl_model)s->model->number, (uint8_t)id)
             : ft_device_init(&s->dev.ft, s->model->number, (uint8_t)id);
}

/* The servo blocks of the robot file's actuators. */
static int parse_servos(const sim_json_ctx *L, const cJSON *root, servo_bus *b) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "actuators");
  int index = 0;
  for (const cJSON *a = cJSON_IsArray(list) ? list->child : NULL; a; a = a->next, index++) {
    if (!is_servo_actuator(a)) {
      continue;
    }
    char path[SIM_JSON_PATH_MAX], p[SIM_JSON_PATH_MAX];
    sim_json_path_index(path, "actuators", index);
    sim_json_path_join(p, path, "servo");
    if (b->nservo == MAX_SERVOS) {
      return sim_json_fail(L, path, "more than %d servos on one bus", MAX_SERVOS);
    }
    bus_servo *s = &b->servo[b->nservo];
    s->actuator = index;
    const cJSON *block = cJSON_GetObjectItemCaseSensitive(a, "servo");
    if (!block) {
      return sim_json_fail(L, p, "missing (a servo needs {\"id\", \"model\"})");
    }
    if (parse_servo(L, block, p, s)) {
      return -1;
    }
    if (b->nservo > 0 && s->model->protocol != b->protocol) {
      return sim_json_fail(L, p, "model %s speaks another protocol than the servos before it",
                           s->model->name);
    }
    b->protocol = s->model->protocol;
    b->nservo++;
  }
  return b->nservo > 0 ? 0 : sim_json_fail(L, "actuators", "no actuator of type \"servo\"");
}

/* Every servo starts at the bus's baud rate, which must be one its table can hold. */
static int set_baud(servo_bus *b, char *err, size_t err_sz) {
  for (int i = 0; i < b->nservo; i++) {
    bus_servo *s = &b->servo[i];
    int index = -1;
    for (int k = 0; k < 8; k++) {
      const long rate = b->protocol == SERVO_PROTOCOL_DYNAMIXEL2 ? dxl_baud_rate((uint8_t)k)
                                                                 : ft_baud_rate((uint8_t)k);
      index = rate == b->opt.baud ? k : index;
    }
    if (index < 0) {
      snprintf(err, err_sz, "servo bus: %ld baud is not a rate %s servos can be set to", b->opt.baud,
               b->protocol == SERVO_PROTOCOL_DYNAMIXEL2 ? "Dynamixel X-series" : "Feetech STS");
      return HIL_ECONFIG;
    }
    if (b->protocol == SERVO_PROTOCOL_DYNAMIXEL2) {
      s->dev.dxl.mem[DXL_BAUD_RATE] = (uint8_t)index;
    } else {
      s->dev.ft.mem[FT_BAUD_RATE] = (uint8_t)index;
    }
  }
  return HIL_OK;
}

static int read_servos(servo_bus *b, const char *config_path, char *err, size_t err_sz) {
  const sim_json_ctx L = {config_path, err, err_sz};
  cJSON *root;
  int rc = hil_config_parse(&root, config_path, err, err_sz);
  if (rc == HIL_OK && !root) {
    snprintf(err, err_sz, "%s: servo bus: an MJCF or URDF robot has no servo actuators",
             config_path);
    return HIL_ECONFIG;
  }
  if (root && parse_servos(&L, root, b)) {
    rc = HIL_ECONFIG;
  }
  cJSON_Delete(root);
  if (rc == HIL_OK && b->opt.has_protocol && b->opt.protocol != b->protocol) {
    snprintf(err, err_sz, "%s: servo bus: --bus-protocol %s, but the servos are %s", config_path,
             protocol_names[b->opt.protocol], protocol_names[b->protocol]);
    rc = HIL_ECONFIG;
  }
  return rc == HIL_OK ? set_baud(b, err, err_sz) : rc;
}

static void print_table(const servo_bus *b) {
  fprintf(stderr, "servo bus (%s, %ld baud) on %s", protocol_names[b->protocol], b->opt.baud,
          hil_serial_port_path(b->port));
  if (b->opt.use_pty) {
    fprintf(stderr, " (pty latency %.0f us, taken out of both directions)", b->pty_latency * 1e6);
  }
  fprintf(stderr, ":\n");
  for (int i = 0; i < b->nservo; i++) {
    const bus_servo *s = &b->servo[i];
    fprintf(stderr, "  id %3u  %-10s  actuator %d\n", servo_id(b, s), s->model->name,
            s->actuator);
  }
}

hil_transport *servo_bus_new(const servo_bus_options *o, const char *config_path, char *err,
                             size_t err_sz) {
  servo_bus *b = calloc(1, sizeof *b);
  if (!b) {
    snprintf(err, err_sz, "servo bus: out of memory");
    return NULL;
  }
  b->base.ops = &servo_bus_ops;
  b->opt = *o;
  b->byte_time = BITS_PER_BYTE / (double)o->baud;
  pthread_mutex_init(&b->lock, NULL);
  dxl2_decoder_init(&b->dxl_dec);
  ft_decoder_init(&b->ft_dec);
  if (read_servos(b, config_path, err, err_sz) != HIL_OK) {
    bus_destroy(&b->base);
    return NULL;
  }
  /* before the pty exists: a controller that opens it at once is answered at once */
  b->pty_latency = o->use_pty ? pty_latency_measure(PTY_LATENCY_SAMPLES) : 0;
  b->counters.pty_latency_s = b->pty_latency;
  hil_serial_options so;
  hil_serial_options_default(&so);
  so.use_pty = o->use_pty;
  snprintf(so.port, sizeof so.port, "%s", o->port);
  snprintf(so.link, sizeof so.link, "%s", o->link);
  so.baud = (int)o->baud;
  so.quiet = 1;
  snprintf(so.label, sizeof so.label, "servo bus");
  char why[512];
  b->port = hil_serial_port_new(&so, why, sizeof why);
  if (!b->port) {
    snprintf(err, err_sz, "servo bus: port: %s", why);
    bus_destroy(&b->base);
    return NULL;
  }
  if (!o->quiet) {
    print_table(b);
  }
  return &b->base;
}

const char *servo_bus_path(const hil_transport *t) {
  return t && t->ops == &servo_bus_ops ? hil_serial_port_path(((const servo_bus *)t)->port) : NULL;
}

int servo_bus_counters_get(const hil_transport *t, servo_bus_counters *out) {
  if (!t || t->ops != &servo_bus_ops) {
    return HIL_EINVAL;
  }
  servo_bus *b = (servo_bus *)t;
  pthread_mutex_lock(&b->lock);
  *out = b->counters;
  pthread_mutex_unlock(&b->lock);
  return HIL_OK;
}
