/* hil/zmq/zmq_transport.c: the ZeroMQ transport — PUB sensor streams, PULL commands, REP control;
 * see zmq_transport.h and docs/messages.md. */
#include "hil/zmq/zmq_transport.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zmq.h>

#include "hil/runtime/cpu.h"
#include "hil/config.h"
#include "hil/error.h"
#include "hil/zmq/json_messages.h"
#include "sim/json_read.h"

#define CMD_BATCH 256          /* most command messages read per poll */
#define CTL_BATCH 16           /* most control requests answered per poll */
#define REPLY_MAX (256 * 1024) /* largest control reply (hello lists every name) */
#define STATUS_MAX 2048
#define NSOCK 3

/* One published stream (a sensor's samples, or their truth): its topic, the fixed parts of its
 * messages, and its newest message (the `latest` control request answers with it). */
typedef struct stream {
  char topic[HIL_MSG_TOPIC_MAX];
  hil_msg_sample_form form;
  char json[HIL_MSG_SAMPLE_MAX];
  int len;  /* of json; 0: no sample yet (since the last reset) */
  double t; /* the sample's time */
} stream;

/* The streams, sized by attach: sensor i at i, its truth at nsensor + i. */
typedef struct streams {
  stream *s; /* [n] */
  int nsensor, n;
  const sens_sensor *first; /* sensor i is first + i */
  double t;                 /* simulation time of the last step (a smaller one: a reset) */
} streams;

typedef struct zmq_transport {
  hil_transport base;
  hil_zmq_options opt;
  void *ctx;
  void *sock[NSOCK]; /* indexed by hil_zmq_socket */
  char endpoint[NSOCK][HIL_ZMQ_ENDPOINT_MAX];
  hil_zmq_counters n;
  char status[STATUS_MAX];
  char *reply; /* [REPLY_MAX] */
  streams streams;
  uint64_t step_samples;    /* sample messages published since the last end-of-step marker */
  double oversized_said_at; /* monotonic s of the last stderr line about an oversized message */
  uint64_t oversized_said;  /* the count that line gave */
} zmq_transport;

static const char *const socket_key[NSOCK] = {"pub", "cmd", "ctl"};

/* --- options ---------------------------------------------------------------------------------- */

void hil_zmq_options_default(hil_zmq_options *o) {
  memset(o, 0, sizeof *o);
  o->enabled = 1;
  snprintf(o->pub, sizeof o->pub, "tcp://127.0.0.1:5555");
  snprintf(o->cmd, sizeof o->cmd, "tcp://127.0.0.1:5556");
  snprintf(o->ctl, sizeof o->ctl, "tcp://127.0.0.1:5557");
  o->truth = 1;
  o->allow_remote = 0;
  o->sndhwm = 1000;
  o->max_message_bytes = 65536;
  o->io_cpu = -1;
  o->io_priority = 0;
}

static const char *option_endpoint(const hil_zmq_options *o, int which) {
  const char *const eps[NSOCK] = {o->pub, o->cmd, o->ctl};
  return eps[which];
}

/* ipc://, inproc://, or tcp:// on 127.0.0.1, localhost or the loopback interface "lo". */
static int endpoint_is_local(const char *ep) {
  static const char *const hosts[] = {"127.0.0.1", "localhost", "lo", NULL};
  if (strncmp(ep, "ipc://", 6) == 0 || strncmp(ep, "inproc://", 9) == 0) {
    return 1;
  }
  if (strncmp(ep, "tcp://", 6) != 0) {
    return 0;
  }
  const char *host = ep + 6, *colon = strrchr(host, ':');
  if (!colon) {
    return 0;
  }
  for (const char *const *h = hosts; *h; h++) {
    if (strlen(*h) == (size_t)(colon - host) && strncmp(host, *h, (size_t)(colon - host)) == 0) {
      return 1;
    }
  }
  return 0;
}

/* The endpoint checks, with messages prefixed by `source` (a file name, or NULL). */
static int check_options(const hil_zmq_options *o, const char *source, char *err, size_t err_sz) {
  const char *sep = source ? ": " : "";
  source = source ? source : "";
  for (int i = 0; i < NSOCK; i++) {
    const char *ep = option_endpoint(o, i);
    if (!ep[0]) {
      snprintf(err, err_sz, "%s%stransports.zmq.%s: empty endpoint", source, sep, socket_key[i]);
      return HIL_ECONFIG;
    }
    if (!o->allow_remote && !endpoint_is_local(ep)) {
      snprintf(err, err_sz,
               "%s%stransports.zmq.%s: \"%s\" is not a local endpoint (127.0.0.1, localhost, "
               "ipc://, inproc://); set transports.zmq.allow_remote to true to bind it",
               source, sep, socket_key[i], ep);
      return HIL_ECONFIG;
    }
  }
  if (o->sndhwm < 1 || o->max_message_bytes < 256) {
    snprintf(err, err_sz, "%s%stransports.zmq.%s: too small", source, sep,
             o->sndhwm < 1 ? "sndhwm" : "max_message_bytes");
    return HIL_ECONFIG;
  }
  return HIL_OK;
}

int hil_zmq_options_check(const hil_zmq_options *o, char *err, size_t err_sz) {
  return check_options(o, NULL, err, err_sz);
}

static int read_bool(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                     int *out) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!item) {
    return 0;
  }
  if (!cJSON_IsBool(item)) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_join(p, path, key);
    return sim_json_fail(L, p, "expected true or false");
  }
  *out = cJSON_IsTrue(item);
  return 0;
}

static int read_endpoint(const sim_json_ctx *L, const cJSON *obj, const char *path,
                         const char *key, char out[HIL_ZMQ_ENDPOINT_MAX]) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!item) {
    return 0;
  }
  char p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, key);
  if (!cJSON_IsString(item) || !item->valuestring[0] ||
      strlen(item->valuestring) >= HIL_ZMQ_ENDPOINT_MAX) {
    return sim_json_fail(L, p, "expected an endpoint such as \"tcp://127.0.0.1:5555\" or "
                               "\"ipc:///tmp/achilles.pub\" (at most %d characters)",
                         HIL_ZMQ_ENDPOINT_MAX - 1);
  }
  snprintf(out, HIL_ZMQ_ENDPOINT_MAX, "%s", item->valuestring);
  return 0;
}

static int parse_zmq(const sim_json_ctx *L, const cJSON *z, hil_zmq_options *o) {
  static const char *const keys[] = {"enabled",      "pub",    "cmd",
                                     "ctl",          "truth",  "allow_remote",
                                     "sndhwm",       "max_message_bytes", "comment", NULL};
  const char *path = "transports.zmq";
  if (sim_json_expect_object(L, z, path) || sim_json_check_keys(L, z, path, keys) ||
      read_bool(L, z, path, "enabled", &o->enabled) ||
      read_endpoint(L, z, path, "pub", o->pub) || read_endpoint(L, z, path, "cmd", o->cmd) ||
      read_endpoint(L, z, path, "ctl", o->ctl) || read_bool(L, z, path, "truth", &o->truth) ||
      read_bool(L, z, path, "allow_remote", &o->allow_remote) ||
      sim_json_read_int(L, z, path, "sndhwm", 1, 10000000, &o->sndhwm) ||
      sim_json_read_int(L, z, path, "max_message_bytes", 256, 64 * 1024 * 1024,
                        &o->max_message_bytes)) {
    return -1;
  }
  return 0;
}

int hil_zmq_options_parse(hil_zmq_options *o, const char *config_path, char *err, size_t err_sz) {
  hil_zmq_options_default(o);
  const sim_json_ctx L = {config_path, err, err_sz};
  cJSON *root;
  int rc = hil_config_parse(&root, config_path, err, err_sz);
  if (root) {
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(root, "transports");
    const cJSON *z = tr ? cJSON_GetObjectItemCaseSensitive(tr, "zmq") : NULL;
    if (tr && sim_json_expect_object(&L, tr, "transports")) {
      rc = HIL_ECONFIG;
    } else if (z && parse_zmq(&L, z, o)) {
      rc = HIL_ECONFIG;
    } else if (check_options(o, config_path, err, err_sz) != HIL_OK) {
      rc = HIL_ECONFIG;
    }
  }
  cJSON_Delete(root);
  return rc;
}

/* --- publishing ------------------------------------------------------------------------------- */

static void send_two(zmq_transport *z, const char *topic, const char *body, size_t len) {
  void *pub = z->sock[HIL_ZMQ_PUB];
  if (zmq_send(pub, topic, strlen(topic), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
      zmq_send(pub, body, len, ZMQ_DONTWAIT) < 0) {
    z->n.send_failed++;
    return;
  }
  z->n.sent++;
}

static stream *stream_of(zmq_transport *z, const sens_sensor *s, int truth) {
  streams *st = &z->streams;
  const ptrdiff_t i = s - st->first;
  if (!st->s || i < 0 || i >= st->nsensor) {
    return NULL;
  }
  return &st->s[truth ? st->nsensor + i : i];
}

/* Keeps `latest` from offering samples of before a reset (or a restore to an earlier time):
 * at the end of a step that went back in time, a sample later than that step is from the lost
 * future. Judged per step, not per sample: a sensor on its own clock (an 800 Hz IMU) publishes
 * samples from inside the step, earlier than the step's other samples. */
static void forget_the_future(streams *st, double t) {
  if (t < st->t) {
    for (int i = 0; i < st->n; i++) {
      if (st->s[i].t > t) {
        st->s[i].len = 0;
      }
    }
  }
  st->t = t;
}

/* Samples come only from the sensors attach sized the streams for (the runtime adds a transport
 * through attach); a sensor outside them would count as a failed send. */
static void publish_one(zmq_transport *z, const sens_sensor *s, const sens_sample *smp,
                        int truth) {
  stream *st = stream_of(z, s, truth);
  const int len =
      st ? hil_msg_encode_sample_form(st->json, sizeof st->json, &st->form, smp) : HIL_EINVAL;
  if (len < 0) {
    z->n.send_failed++;
    return;
  }
  st->len = len;
  st->t = smp->t;
  send_two(z, st->topic, st->json, (size_t)len);
  z->step_samples++;
}

/* The end-of-step marker, topic "step": {"v":1,"step":N,"t":T,"samples":K} after the K sample
 * messages (truth ones included) of the state at simulation time T, N steps since start. */
static void zt_publish_step(hil_transport *t, hil_runtime *rt, uint64_t steps, double sim_time) {
  zmq_transport *z = (zmq_transport *)t;
  (void)rt;
  forget_the_future(&z->streams, sim_time);
  char json[160];
  hil_jw w;
  hil_jw_init(&w, json, sizeof json);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "v");
  hil_jw_uint(&w, HIL_MSG_VERSION);
  hil_jw_key(&w, "step");
  hil_jw_uint(&w, steps);
  hil_jw_key(&w, "t");
  hil_jw_number(&w, sim_time);
  hil_jw_key(&w, "samples");
  hil_jw_uint(&w, z->step_samples);
  hil_jw_end_object(&w);
  const int len = hil_jw_finish(&w);
  z->step_samples = 0;
  if (len < 0) {
    z->n.send_failed++;
    return;
  }
  send_two(z, "step", json, (size_t)len);
}

static void zt_publish_sample(hil_transport *t, hil_runtime *rt, const sens_sensor *s,
                              const sens_sample *smp) {
  zmq_transport *z = (zmq_transport *)t;
  (void)rt;
  publish_one(z, s, smp, 0);
  if (z->opt.truth) {
    publish_one(z, s, smp, 1);
  }
}

/* One stream per sensor (and per truth stream) with its topic and message form. */
static int zt_attach(hil_transport *t, hil_runtime *rt) {
  zmq_transport *z = (zmq_transport *)t;
  streams *st = &z->streams;
  const sens_set *set = hil_runtime_sensors(rt);
  if (!set || sens_set_count(set) == 0) {
    return HIL_OK;
  }
  st->nsensor = sens_set_count(set);
  st->first = sens_set_sensor(set, 0);
  st->n = z->opt.truth ? 2 * st->nsensor : st->nsensor;
  st->s = calloc((size_t)st->n, sizeof *st->s);
  if (!st->s) {
    return HIL_ENOMEM;
  }
  for (int i = 0; i < st->n; i++) {
    const sens_sensor *s = sens_set_sensor(set, i % st->nsensor);
    const int truth = i >= st->nsensor;
    if (hil_msg_topic(st->s[i].topic, sizeof st->s[i].topic, s, truth) < 0 ||
        hil_msg_sample_form_init(&st->s[i].form, hil_runtime_model(rt), s, truth) != HIL_OK) {
      return HIL_ENOMEM;
    }
  }
  return HIL_OK;
}

void hil_zmq_write_counters(hil_jw *w, const hil_zmq_counters *c) {
  hil_jw_key(w, "zmq");
  hil_jw_begin_object(w);
  hil_jw_key(w, "sent");
  hil_jw_uint(w, c->sent);
  hil_jw_key(w, "send_failed");
  hil_jw_uint(w, c->send_failed);
  hil_jw_key(w, "cmd_messages");
  hil_jw_uint(w, c->cmd_messages);
  hil_jw_key(w, "oversized");
  hil_jw_uint(w, c->oversized);
  hil_jw_key(w, "ctl_requests");
  hil_jw_uint(w, c->ctl_requests);
  hil_jw_key(w, "ctl_errors");
  hil_jw_uint(w, c->ctl_errors);
  hil_jw_end_object(w);
}

static void zt_publish_status(hil_transport *t, hil_runtime *rt, const hil_status *st) {
  zmq_transport *z = (zmq_transport *)t;
  (void)rt;
  hil_jw w;
  hil_jw_init(&w, z->status, sizeof z->status);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "v");
  hil_jw_uint(&w, HIL_MSG_VERSION);
  hil_msg_write_status_fields(&w, st);
  hil_zmq_write_counters(&w, &z->n);
  hil_jw_end_object(&w);
  const int len = hil_jw_finish(&w);
  if (len < 0) {
    z->n.send_failed++;
    return;
  }
  send_two(z, "status", z->status, (size_t)len);
}

/* --- commands --------------------------------------------------------------------------------- */

/* See zmq_transport.h. */
int hil_zmq_recv_message(void *sock, zmq_msg_t *msg) {
  zmq_msg_init(msg);
  if (zmq_msg_recv(msg, sock, ZMQ_DONTWAIT) < 0) {
    return 0;
  }
  int parts = 1;
  int more = zmq_msg_more(msg);
  while (more) { /* the rest of a message arrives together with its first part */
    zmq_msg_t extra;
    zmq_msg_init(&extra);
    if (zmq_msg_recv(&extra, sock, 0) < 0) {
      zmq_msg_close(&extra);
      break;
    }
    more = zmq_msg_more(&extra);
    zmq_msg_close(&extra);
    parts++;
  }
  return parts;
}

/* Counts a message over max_message_bytes and says so on stderr: the first at once, then at most
 * one line a second (a flood must not become a flood of lines), each with the count so far. */
static void count_oversized(zmq_transport *z, const char *what, size_t size) {
  z->n.oversized++;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const double now = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
  if (z->oversized_said > 0 && now - z->oversized_said_at < 1.0) {
    return;
  }
  fprintf(stderr,
          "[achilles] zmq: %s of %zu bytes refused: over transports.zmq.max_message_bytes (%d);"
          " %llu oversized so far\n",
          what, size, z->opt.max_message_bytes, (unsigned long long)z->n.oversized);
  z->oversized_said_at = now;
  z->oversized_said = z->n.oversized;
}

static int oversized(const zmq_transport *z, const zmq_msg_t *msg) {
  return zmq_msg_size(msg) > (size_t)z->opt.max_message_bytes;
}

/* 1 when lockstep already holds a full command set: leave the next set for the next step. */
static int commands_wait_for_step(hil_runtime *rt) {
  if (hil_runtime_options(rt)->mode != HIL_MODE_LOCKSTEP ||
      !hil_commands_all_fresh(hil_runtime_commands(rt))) {
    return 0;
  }
  return !hil_runtime_paused(rt); /* paused: newer commands replace older ones */
}

/* After a pass's budget ran out: counts the pass as deferred when input is still waiting. */
static int out_of_budget(hil_runtime *rt, void *sock) {
  if (hil_runtime_input_budget_left(rt)) {
    return 0;
  }
  int events = 0;
  size_t sz = sizeof events;
  if (zmq_getsockopt(sock, ZMQ_EVENTS, &events, &sz) == 0 && (events & ZMQ_POLLIN)) {
    hil_runtime_input_deferred(rt);
  }
  return 1;
}

static void poll_commands(zmq_transport *z, hil_runtime *rt) {
  hil_commands *c = hil_runtime_commands(rt);
  for (int i = 0; i < CMD_BATCH && !commands_wait_for_step(rt); i++) {
    if (i > 0 && out_of_budget(rt, z->sock[HIL_ZMQ_CMD])) {
      return;
    }
    zmq_msg_t msg;
    const int parts = hil_zmq_recv_message(z->sock[HIL_ZMQ_CMD], &msg);
    if (parts == 0) {
      zmq_msg_close(&msg);
      return;
    }
    z->n.cmd_messages++;
    if (oversized(z, &msg)) {
      count_oversized(z, "command message", zmq_msg_size(&msg));
    } else if (parts > 1) {
      hil_commands_count_malformed(c); /* commands are one-part messages */
    } else {
      hil_msg_submit_commands(c, zmq_msg_data(&msg), zmq_msg_size(&msg),
                              hil_runtime_loop_time(rt), NULL, NULL, 0);
    }
    zmq_msg_close(&msg);
  }
}

/* --- control replies -------------------------------------------------------------------------- */

static void jw_ok(hil_jw *w) {
  hil_jw_begin_object(w);
  hil_jw_key(w, "ok");
  hil_jw_bool(w, 1);
}

static const char *joint_type_name(sim_joint_type type) {
  return type == SIM_JOINT_HINGE ? "hinge" : type == SIM_JOINT_SLIDE ? "slide" : "fixed";
}

static const char *actuator_type_name(sim_actuator_type type) {
  switch (type) {
  case SIM_ACT_DC_MOTOR:
    return "dc_motor";
  case SIM_ACT_POSITION_SERVO:
    return "position_servo";
  case SIM_ACT_VELOCITY_SERVO:
    return "velocity_servo";
  case SIM_ACT_SMART_SERVO:
    return "servo";
  case SIM_ACT_MOTOR:
  default:
    return "motor";
  }
}

/* The members describing one sensor (hello, get_param without a path). */
static void jw_sensor_fields(hil_jw *w, const sim_model *m, const sens_sensor *s) {
  char topic[HIL_MSG_TOPIC_MAX];
  hil_msg_topic(topic, sizeof topic, s, 0);
  hil_msg_sensor_view v = {.name = s->name,
                           .type = sens_type_name(s->type),
                           .topic = topic,
                           .rate_hz = s->rate_hz,
                           .latency_s = s->delay_s,
                           .drop_probability = s->drop_probability,
                           .dead = s->dead,
                           .nch = s->nch};
  for (int i = 0; i < s->nch; i++) {
    v.channel[i] = s->channel[i];
    v.unit[i] = hil_msg_unit(m, s, i);
  }
  if (s->type == SENS_ENCODER) {
    v.joint = m->joints[s->u.enc.joint].name;
    v.counts_per_rev = s->u.enc.counts_per_rev;
    v.counts_per_turn = s->u.enc.counts_per_turn;
    v.resolution = s->u.enc.step;
  } else if (s->type == SENS_TORQUE) {
    v.joint = m->joints[s->u.trq.joint].name;
  } else if (s->type == SENS_IMU) {
    v.body = m->bodies[s->u.imu.body].name;
  } else if (s->type == SENS_TOUCH) {
    v.geom = m->geoms[s->u.tch.geom].name;
  }
  hil_msg_write_sensor_fields(w, &v);
}

static void jw_model(hil_jw *w, const sim_model *m) {
  hil_jw_key(w, "joints");
  hil_jw_begin_array(w);
  for (int j = 0; j < m->njnt; j++) {
    hil_jw_begin_object(w);
    hil_jw_key(w, "name");
    hil_jw_string(w, m->joints[j].name);
    hil_jw_key(w, "type");
    hil_jw_string(w, joint_type_name(m->joints[j].type));
    hil_jw_end_object(w);
  }
  hil_jw_end_array(w);
  hil_jw_key(w, "actuators");
  hil_jw_begin_array(w);
  for (int i = 0; i < m->nu; i++) {
    const sim_actuator *a = &m->actuators[i];
    hil_jw_begin_object(w);
    hil_jw_key(w, "name");
    hil_jw_string(w, a->name);
    hil_jw_key(w, "joint");
    hil_jw_string(w, m->joints[a->joint].name);
    hil_jw_key(w, "type");
    hil_jw_string(w, actuator_type_name(a->type));
    hil_jw_key(w, "ctrlrange");
    hil_jw_begin_array(w);
    hil_jw_number(w, a->ctrlrange[0]); /* null when unlimited */
    hil_jw_number(w, a->ctrlrange[1]);
    hil_jw_end_array(w);
    hil_jw_end_object(w);
  }
  hil_jw_end_array(w);
}

static void reply_hello(zmq_transport *z, hil_runtime *rt, hil_jw *w) {
  const sim_model *m = hil_runtime_model(rt);
  sens_set *set = hil_runtime_sensors(rt);
  hil_status st;
  hil_runtime_status(rt, &st);
  jw_ok(w);
  hil_jw_key(w, "v");
  hil_jw_uint(w, HIL_MSG_VERSION);
  hil_jw_key(w, "model");
  hil_jw_string(w, m->name);
  hil_jw_key(w, "rate_hz");
  hil_jw_number(w, hil_runtime_options(rt)->rate_hz);
  hil_jw_key(w, "timestep");
  hil_jw_number(w, m->opt.timestep);
  hil_jw_key(w, "mode");
  hil_jw_string(w, hil_mode_name(st.mode));
  hil_jw_key(w, "t");
  hil_jw_number(w, st.sim_time);
  hil_jw_key(w, "steps");
  hil_jw_uint(w, st.steps);
  hil_jw_key(w, "paused");
  hil_jw_bool(w, st.paused);
  hil_jw_key(w, "truth");
  hil_jw_bool(w, z ? z->opt.truth : 0);
  if (set) {
    hil_jw_key(w, "seed");
    hil_jw_uint(w, sens_set_seed(set));
  }
  jw_model(w, m);
  hil_jw_key(w, "sensors");
  hil_jw_begin_array(w);
  for (int i = 0; set && i < sens_set_count(set); i++) {
    hil_jw_begin_object(w);
    jw_sensor_fields(w, m, sens_set_sensor(set, i));
    hil_jw_end_object(w);
  }
  hil_jw_end_array(w);
  hil_jw_key(w, "endpoints");
  hil_jw_begin_object(w);
  for (int i = 0; z && i < NSOCK; i++) {
    hil_jw_key(w, socket_key[i]);
    hil_jw_string(w, z->endpoint[i]);
  }
  hil_jw_end_object(w);
  hil_jw_end_object(w);
  /* a status message on the stream: a client that sees it knows its subscription is live */
  if (z) {
    zt_publish_status(&z->base, rt, &st);
  }
}

static void reply_status(zmq_transport *z, hil_runtime *rt, hil_jw *w) {
  hil_status st;
  hil_runtime_status(rt, &st);
  jw_ok(w);
  hil_jw_key(w, "status");
  hil_jw_begin_object(w);
  hil_jw_key(w, "v");
  hil_jw_uint(w, HIL_MSG_VERSION);
  hil_msg_write_status_fields(w, &st);
  if (z) {
    hil_zmq_write_counters(w, &z->n);
  }
  hil_jw_end_object(w);
  hil_jw_end_object(w);
  if (z) {
    zt_publish_status(&z->base, rt, &st);
  }
}

/* {"ok":true,"t":T,"steps":N,"samples":{topic: sample message, ...}}: the newest message of
 * every stream, byte for byte as the PUB sent it (a stream without a sample since the start or
 * the last reset is left out). Answered between ticks, so it is the state after the last step:
 * what a subscriber that fell behind would want, at the cost of one round trip. */
static void reply_latest(zmq_transport *z, hil_runtime *rt, hil_jw *w) {
  hil_msg_begin_latest(w, hil_runtime_data(rt)->time, hil_runtime_steps(rt));
  for (int i = 0; z && i < z->streams.n; i++) {
    const streams *st = &z->streams;
    hil_msg_latest_sample(w, st->s[i].topic, st->s[i].json, st->s[i].len);
  }
  hil_msg_end_latest(w);
}

/* The value at `path` of sensor s: a sensor-level key, or a chain parameter ("noise.white.sigma";
 * an IMU's prefixed by its group, "gyro.noise.white.sigma"). Returns 0, or -1 when unknown. */
static int sensor_param(const sens_sensor *s, const char *path, double *out) {
  const struct {
    const char *path;
    double value;
  } sensor_level[] = {
      {"drop_probability", s->drop_probability},
      {"rate_hz", s->rate_hz},
      {"latency_s", s->delay_s},
  };
  for (size_t i = 0; i < sizeof sensor_level / sizeof sensor_level[0]; i++) {
    if (strcmp(path, sensor_level[i].path) == 0) {
      *out = sensor_level[i].value;
      return 0;
    }
  }
  if (s->type == SENS_ENCODER && strcmp(path, "resolution") == 0) {
    *out = s->u.enc.step; /* one count */
    return 0;
  }
  int chain = s->nchain > 0 ? 0 : -1;
  const char *rel = path;
  const char *dot = strchr(path, '.');
  if (s->type == SENS_IMU) {
    chain = -1;
    for (int k = 0; dot && k < s->nchain && chain < 0; k++) {
      const char *g = s->group[s->group_of_chain[k]];
      if (strlen(g) == (size_t)(dot - path) && strncmp(path, g, strlen(g)) == 0) {
        chain = k;
        rel = dot + 1;
      }
    }
  }
  if (chain < 0) {
    return -1;
  }
  sens_chain_params p = s->chain[chain].p; /* sens_chain_field wants a mutable struct */
  const double *field = sens_chain_field(&p, rel);
  if (!field) {
    return -1;
  }
  *out = *field;
  return 0;
}

static void jw_param_reply(hil_jw *w, const char *sensor, const char *path, double value) {
  jw_ok(w);
  hil_jw_key(w, "sensor");
  hil_jw_string(w, sensor);
  hil_jw_key(w, "path");
  hil_jw_string(w, path);
  hil_jw_key(w, "value");
  hil_jw_number(w, value);
  hil_jw_end_object(w);
}

/* Returns NULL with a reply written, or the error message to reply with. */
static const char *reply_get_param(hil_runtime *rt, const hil_ctl_request *r, hil_jw *w,
                                   char *err, size_t err_sz) {
  sens_set *set = hil_runtime_sensors(rt);
  const int i = set ? sens_set_find(set, r->sensor) : -1;
  if (i < 0) {
    snprintf(err, err_sz, "sensor \"%s\": no such sensor", r->sensor);
    return err;
  }
  const sens_sensor *s = sens_set_sensor(set, i);
  if (!r->path[0]) {
    jw_ok(w);
    hil_jw_key(w, "sensor");
    hil_jw_begin_object(w);
    jw_sensor_fields(w, hil_runtime_model(rt), s);
    hil_jw_end_object(w);
    hil_jw_end_object(w);
    return NULL;
  }
  double value = 0;
  if (sensor_param(s, r->path, &value) != 0) {
    snprintf(err, err_sz, "%s.%s: no such parameter", s->name, r->path);
    return err;
  }
  jw_param_reply(w, s->name, r->path, value);
  return NULL;
}

static const char *reply_set_param(hil_runtime *rt, const hil_ctl_request *r, hil_jw *w,
                                   char *err, size_t err_sz) {
  sens_set *set = hil_runtime_sensors(rt);
  if (!set) {
    snprintf(err, err_sz, "sensor \"%s\": no such sensor", r->sensor);
    return err;
  }
  if (sens_set_param(set, r->sensor, r->path, r->value, err, err_sz) != 0) {
    return err;
  }
  double now = r->value;
  sensor_param(sens_set_sensor(set, sens_set_find(set, r->sensor)), r->path, &now);
  jw_param_reply(w, r->sensor, r->path, now);
  return NULL;
}

static const char *reply_fault(hil_runtime *rt, const hil_ctl_request *r, hil_jw *w, char *err,
                               size_t err_sz) {
  sens_set *set = hil_runtime_sensors(rt);
  if (!set) {
    snprintf(err, err_sz, "sensor \"%s\": no such sensor", r->sensor);
    return err;
  }
  if (sens_set_fault(set, r->sensor, r->group[0] ? r->group : NULL, &r->fault, err, err_sz)) {
    return err;
  }
  jw_ok(w);
  hil_jw_key(w, "sensor");
  hil_jw_string(w, r->sensor);
  hil_jw_key(w, "mode");
  hil_jw_string(w, sens_fault_name(r->fault.mode));
  hil_jw_end_object(w);
  return NULL;
}

/* ok with the simulation time and one flag. */
static void reply_time(hil_runtime *rt, hil_jw *w, const char *key, uint64_t value) {
  hil_status st;
  hil_runtime_status(rt, &st);
  jw_ok(w);
  hil_jw_key(w, "t");
  hil_jw_number(w, st.sim_time);
  hil_jw_key(w, "steps");
  hil_jw_uint(w, st.steps);
  hil_jw_key(w, "paused");
  hil_jw_bool(w, st.paused);
  if (key) {
    hil_jw_key(w, key);
    hil_jw_uint(w, value);
  }
  hil_jw_end_object(w);
}

/* Carries out one request; returns NULL after writing the reply, or an error message. */
static const char *execute(zmq_transport *z, hil_runtime *rt, const hil_ctl_request *r,
                           hil_jw *w, char *err, size_t err_sz) {
  switch (r->op) {
  case HIL_CTL_HELLO:
    reply_hello(z, rt, w);
    return NULL;
  case HIL_CTL_STATUS:
    reply_status(z, rt, w);
    return NULL;
  case HIL_CTL_LATEST:
    reply_latest(z, rt, w);
    return NULL;
  case HIL_CTL_PAUSE:
    hil_runtime_pause(rt);
    break;
  case HIL_CTL_RESUME:
    hil_runtime_resume(rt);
    break;
  case HIL_CTL_STEP:
    if (hil_runtime_options(rt)->mode != HIL_MODE_LOCKSTEP) {
      snprintf(err, err_sz, "step: only in lockstep mode (running %s)",
               hil_mode_name(hil_runtime_options(rt)->mode));
      return err;
    }
    hil_runtime_request_steps(rt, r->n);
    reply_time(rt, w, "granted", r->n);
    return NULL;
  case HIL_CTL_RESET:
    hil_runtime_reset(rt);
    break;
  case HIL_CTL_SNAPSHOT_SAVE:
    hil_runtime_snapshot_save(rt);
    break;
  case HIL_CTL_SNAPSHOT_RESTORE:
    if (hil_runtime_snapshot_restore(rt) != HIL_OK) {
      snprintf(err, err_sz, "snapshot_restore: no snapshot saved");
      return err;
    }
    break;
  case HIL_CTL_GET_PARAM:
    return reply_get_param(rt, r, w, err, err_sz);
  case HIL_CTL_SET_PARAM:
    return reply_set_param(rt, r, w, err, err_sz);
  case HIL_CTL_FAULT:
    return reply_fault(rt, r, w, err, err_sz);
  default:
    snprintf(err, err_sz, "cmd: no handler for \"%s\"", hil_ctl_op_name(r->op));
    return err;
  }
  reply_time(rt, w, NULL, 0);
  return NULL;
}

/* Decodes and carries out one request into out: the reply, or an error reply. Returns the
 * length and sets *failed. z may be NULL (see hil_zmq_control_answer). */
static int respond(zmq_transport *z, hil_runtime *rt, const char *req, size_t len, char *out,
                   size_t out_sz, int *failed) {
  char err[512];
  const char *failure = NULL;
  hil_ctl_request r;
  hil_jw w;
  hil_jw_init(&w, out, out_sz);
  if (hil_msg_decode_control(&r, req, len, err, sizeof err) != HIL_OK) {
    failure = err;
  } else {
    failure = execute(z, rt, &r, &w, err, sizeof err);
  }
  int n = failure ? -1 : hil_jw_finish(&w);
  if (!failure && n < 0) {
    failure = "reply too large";
  }
  *failed = failure != NULL;
  if (failure) {
    n = hil_msg_encode_error(out, out_sz, failure);
  }
  return n > 0 ? n : 0;
}

/* See zmq_transport.h. */
int hil_zmq_control_answer(hil_transport *t, hil_runtime *rt, const char *req, size_t len,
                           char *out, size_t out_sz) {
  int failed = 0;
  return respond((zmq_transport *)t, rt, req, len, out, out_sz, &failed);
}

/* Answers one request: always exactly one reply, so the REP socket stays in step. */
static void answer(zmq_transport *z, hil_runtime *rt, zmq_msg_t *req, int parts) {
  char err[512];
  const char *failure = NULL;
  int len = 0;
  if (oversized(z, req)) {
    count_oversized(z, "control request", zmq_msg_size(req));
    snprintf(err, sizeof err, "request of %zu bytes is over max_message_bytes (%d)",
             zmq_msg_size(req), z->opt.max_message_bytes);
    failure = err;
  } else if (parts > 1) {
    failure = "control requests are one-part messages";
  } else {
    int failed = 0;
    len = respond(z, rt, zmq_msg_data(req), zmq_msg_size(req), z->reply, REPLY_MAX, &failed);
    z->n.ctl_errors += (uint64_t)failed;
  }
  if (failure) {
    z->n.ctl_errors++;
    len = hil_msg_encode_error(z->reply, REPLY_MAX, failure);
  }
  z->n.ctl_requests++;
  zmq_send(z->sock[HIL_ZMQ_CTL], z->reply, (size_t)(len > 0 ? len : 0), 0);
}

static void poll_control(zmq_transport *z, hil_runtime *rt) {
  for (int i = 0; i < CTL_BATCH; i++) {
    if (i > 0 && out_of_budget(rt, z->sock[HIL_ZMQ_CTL])) {
      return;
    }
    zmq_msg_t msg;
    const int parts = hil_zmq_recv_message(z->sock[HIL_ZMQ_CTL], &msg);
    if (parts > 0) {
      answer(z, rt, &msg, parts);
    }
    zmq_msg_close(&msg);
    if (parts == 0) {
      return;
    }
  }
}

/* --- transport ops ---------------------------------------------------------------------------- */

static int zt_pollitems(hil_transport *t, zmq_pollitem_t *items, int max) {
  zmq_transport *z = (zmq_transport *)t;
  int n = 0;
  for (int i = HIL_ZMQ_CMD; i <= HIL_ZMQ_CTL && n < max; i++) {
    items[n].socket = z->sock[i];
    items[n].fd = 0;
    items[n].events = ZMQ_POLLIN;
    items[n].revents = 0;
    n++;
  }
  return n;
}

static void zt_poll(hil_transport *t, hil_runtime *rt) {
  zmq_transport *z = (zmq_transport *)t;
  poll_commands(z, rt);
  poll_control(z, rt);
}

static void zt_describe(hil_transport *t, char *out, size_t out_sz) {
  const zmq_transport *z = (const zmq_transport *)t;
  snprintf(out, out_sz, "zmq %s: %llu sent, %llu cmd msgs, %llu ctl", z->endpoint[HIL_ZMQ_PUB],
           (unsigned long long)z->n.sent, (unsigned long long)z->n.cmd_messages,
           (unsigned long long)z->n.ctl_requests);
}

static void zt_destroy(hil_transport *t) {
  zmq_transport *z = (zmq_transport *)t;
  if (!z) {
    return;
  }
  for (int i = 0; i < NSOCK; i++) {
    if (z->sock[i]) {
      zmq_close(z->sock[i]);
    }
  }
  if (z->ctx) {
    zmq_ctx_term(z->ctx);
  }
  free(z->streams.s);
  free(z->reply);
  free(z);
}

static const hil_transport_ops zmq_ops = {
    .name = "zmq",
    .attach = zt_attach,
    .pollitems = zt_pollitems,
    .poll = zt_poll,
    .publish_sample = zt_publish_sample,
    .publish_step = zt_publish_step,
    .publish_status = zt_publish_status,
    .describe = zt_describe,
    .destroy = zt_destroy,
};

/* Creates, configures and binds socket `which`. */
static int open_socket(zmq_transport *z, int which, char *err, size_t err_sz) {
  static const int types[NSOCK] = {ZMQ_PUB, ZMQ_PULL, ZMQ_REP};
  const char *ep = option_endpoint(&z->opt, which);
  void *s = zmq_socket(z->ctx, types[which]);
  z->sock[which] = s;
  const int linger = 0;
  /* the transport refuses what is over max_message_bytes itself, so that it can count it and
   * answer it; ZeroMQ's own limit (it drops the connection) is only a bound on memory */
  const int64_t max_size = HIL_ZMQ_HARD_MAX_BYTES;
  if (!s || zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
      (which == HIL_ZMQ_PUB &&
       zmq_setsockopt(s, ZMQ_SNDHWM, &z->opt.sndhwm, sizeof z->opt.sndhwm) != 0) ||
      (which != HIL_ZMQ_PUB && zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &max_size, sizeof max_size))) {
    snprintf(err, err_sz, "transports.zmq.%s: cannot create the socket: %s", socket_key[which],
             zmq_strerror(zmq_errno()));
    return HIL_ESYSTEM;
  }
  char bind_ep[HIL_ZMQ_ENDPOINT_MAX];
  if (strncmp(ep, "tcp://localhost:", 16) == 0) { /* libzmq binds to addresses, not names */
    snprintf(bind_ep, sizeof bind_ep, "tcp://127.0.0.1:%s", ep + 16);
    ep = bind_ep;
  }
  if (zmq_bind(s, ep) != 0) {
    snprintf(err, err_sz, "transports.zmq.%s: cannot bind \"%s\": %s", socket_key[which], ep,
             zmq_strerror(zmq_errno()));
    return HIL_ESYSTEM;
  }
  size_t sz = sizeof z->endpoint[which];
  if (zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, z->endpoint[which], &sz) != 0) {
    snprintf(z->endpoint[which], sizeof z->endpoint[which], "%s", ep);
  }
  return HIL_OK;
}

hil_transport *hil_zmq_transport_new(const hil_zmq_options *o, char *err, size_t err_sz) {
  if (check_options(o, NULL, err, err_sz) != HIL_OK) {
    return NULL;
  }
  zmq_transport *z = calloc(1, sizeof *z);
  if (!z || !(z->reply = malloc(REPLY_MAX))) {
    free(z);
    snprintf(err, err_sz, "out of memory");
    return NULL;
  }
  z->base.ops = &zmq_ops;
  z->opt = *o;
  z->ctx = zmq_ctx_new();
  if (z->ctx) {
    hil_cpu_place_zmq_io(z->ctx, o->io_cpu, o->io_priority); /* every message crosses it */
  }
  if (!z->ctx) {
    snprintf(err, err_sz, "transports.zmq: cannot create a context: %s",
             zmq_strerror(zmq_errno()));
    zt_destroy(&z->base);
    return NULL;
  }
  for (int i = 0; i < NSOCK; i++) {
    if (open_socket(z, i, err, err_sz) != HIL_OK) {
      zt_destroy(&z->base);
      return NULL;
    }
  }
  return &z->base;
}

const char *hil_zmq_transport_endpoint(const hil_transport *t, hil_zmq_socket which) {
  const zmq_transport *z = (const zmq_transport *)t;
  return (int)which >= 0 && (int)which < NSOCK ? z->endpoint[which] : "";
}

void hil_zmq_transport_counters(const hil_transport *t, hil_zmq_counters *out) {
  *out = ((const zmq_transport *)t)->n;
}
