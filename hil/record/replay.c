/* hil/record/replay.c: the player: sends a schedule (schedule.c) with its original timing on the
 * live wire formats (ZeroMQ JSON or the serial protocol); see replay.h and docs/replay.md. */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include "hil/record/replay.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zmq.h>

#include "hil/runtime/cpu.h"
#include "hil/error.h"
#include "hil/record/log.h"
#include "hil/serial/serial_codec.h"
#include "hil/serial/serial_port.h"

#define GROUP_MAX 64   /* messages of one instant encoded ahead of their deadline */
#define STAGE_FRAMES 256 /* serial frames of one instant built ahead (255 ids, 1 per frame) */
#define TX_CAP 8192    /* serial bytes waiting for the board; whole frames beyond are dropped */
#define FRAME_MAX ACH_ENCODED_MAX(ACH_MAX_FRAME)
#define STATUS_MAX 2048
#define SERVICE_S 0.05 /* longest sleep between two looks at the input while waiting */
#define REPLY_MAX (64 * 1024) /* largest control reply (hello lists every sensor) */
#define CTL_BATCH 8    /* control requests answered per look at the input */
#define CMD_BATCH 64   /* command messages discarded per look at the input */
#define SIDE_S 0.002   /* while playing, the control and command sockets at most this often */

/* --- the player ------------------------------------------------------------------------------- */

typedef struct pending_msg {
  int stream; /* sensor * 2 + truth */
  int topic_len, len;
  char topic[HIL_MSG_TOPIC_MAX];
  char body[HIL_MSG_SAMPLE_MAX];
} pending_msg;

struct hil_replay {
  const hil_replay_schedule *s;
  hil_replay_options o;
  atomic_int stop; /* set by another thread or a signal handler (lock-free: safe in both) */
  int rt;                    /* SCHED_FIFO granted */
  double start;              /* monotonic s of the first deadline */
  char where[HIL_SERIAL_PATH_MAX];
  /* ZeroMQ */
  void *ctx, *pub;
  void *ctl, *cmd;           /* REP (hello, status) and PULL (read and discarded); may be NULL */
  char ctl_where[HIL_ZMQ_ENDPOINT_MAX], cmd_where[HIL_ZMQ_ENDPOINT_MAX];
  char *reply;               /* [REPLY_MAX] */
  int status_subs;           /* subscriptions in place that receive "status" (wait_hello) */
  int hello_start;           /* wait_hello: a hello answered with such a subscription in place */
  double next_side;          /* monotonic s: the next look at ctl and cmd while playing */
  pending_msg *group;        /* [GROUP_MAX] */
  pending_msg *newest;       /* [2 * nsensors]: the last message sent of each stream (latest) */
  int ngroup;
  char status[STATUS_MAX];
  /* serial */
  hil_serial_port *port;
  ach_decoder dec;
  int connected, per_frame;
  int describe_next, describe_end; /* SENSOR_INFO ids still to send for a DESCRIBE */
  uint16_t tx_seq;
  uint8_t tx[TX_CAP];
  size_t tx_len;
  ach_sensor_samples stage[STAGE_FRAMES]; /* frames of the next instant, encoded when due */
  int nstage;
  hil_serial_table table;
  sens_sensor fake;          /* what hil_serial_sample_entries reads of a sensor */
  /* figures */
  hil_histogram all, period;
  hil_replay_report rep;
  double next_status;
};

static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_until(double t) {
  struct timespec ts;
  ts.tv_sec = (time_t)t;
  ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

void hil_replay_options_default(hil_replay_options *o) {
  memset(o, 0, sizeof *o);
  o->rate = 1.0;
  o->output = HIL_REPLAY_ZMQ;
  snprintf(o->zmq_endpoint, sizeof o->zmq_endpoint, "tcp://127.0.0.1:5555");
  o->sndhwm = 1000;
  o->wait_subscriber = 1;
  snprintf(o->ctl_endpoint, sizeof o->ctl_endpoint, "tcp://127.0.0.1:5557");
  snprintf(o->cmd_endpoint, sizeof o->cmd_endpoint, "tcp://127.0.0.1:5556");
  hil_serial_options_default(&o->serial);
  o->spin_s = 500e-6;
  o->shift_after_s = 0.5e-3;
  o->cpu = -1;
  o->lead_s = 2e-3;
  o->status_period_s = 1.0;
}

/* --- ZeroMQ output ---------------------------------------------------------------------------- */

/* 1 when ep is local (127.0.0.1, localhost, ipc://, inproc://) or remote endpoints are allowed */
static int endpoint_allowed(const char *ep, int allow_remote) {
  hil_zmq_options zo;
  hil_zmq_options_default(&zo);
  snprintf(zo.pub, sizeof zo.pub, "%s", ep);
  zo.allow_remote = allow_remote;
  char err[512];
  return hil_zmq_options_check(&zo, err, sizeof err) == HIL_OK;
}

/* ep, with tcp://localhost:P as tcp://127.0.0.1:P (libzmq binds to addresses, not names) */
static const char *bind_address(const char *ep, char *buf, size_t n) {
  if (strncmp(ep, "tcp://localhost:", 16) == 0) {
    snprintf(buf, n, "tcp://127.0.0.1:%s", ep + 16);
    return buf;
  }
  return ep;
}

/* The REP or PULL at ep; NULL when ep is "" or the bind failed (an error when required, else
 * said on progress). *rc = HIL_ESYSTEM on a required failure. */
static void *bind_side(hil_replay *r, int type, const char *ep, const char *option, int required,
                       char *where, size_t where_sz, int *rc, char *err, size_t err_sz) {
  where[0] = '\0';
  if (!ep[0]) {
    return NULL;
  }
  char buf[HIL_ZMQ_ENDPOINT_MAX + 16];
  const char *addr = bind_address(ep, buf, sizeof buf);
  const int linger = 0;
  void *sock = zmq_socket(r->ctx, type);
  if (!sock || zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger) ||
      zmq_bind(sock, addr) != 0) {
    const char *why = zmq_strerror(zmq_errno());
    if (sock) {
      zmq_close(sock);
    }
    if (required) {
      snprintf(err, err_sz, "%s: cannot bind \"%s\": %s", option, addr, why);
      *rc = HIL_ESYSTEM;
    } else if (r->o.progress) {
      fprintf(r->o.progress, "replay: %s: cannot bind \"%s\": %s; playing without it\n", option,
              addr, why);
    }
    return NULL;
  }
  size_t sz = where_sz;
  if (zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, where, &sz) != 0) {
    snprintf(where, where_sz, "%s", addr);
  }
  return sock;
}

static int zmq_open(hil_replay *r, char *err, size_t err_sz) {
  const char *const eps[3] = {r->o.zmq_endpoint, r->o.ctl_endpoint, r->o.cmd_endpoint};
  const char *const opts[3] = {"--zmq", "--ctl", "--cmd"};
  for (int i = 0; i < 3; i++) {
    if ((i == 0 || eps[i][0]) && !endpoint_allowed(eps[i], r->o.allow_remote)) {
      snprintf(err, err_sz, "%s: \"%s\" is not a local endpoint (127.0.0.1, localhost, ipc://, "
               "inproc://); pass --allow-remote to bind it", opts[i], eps[i]);
      return HIL_ECONFIG;
    }
  }
  char bind_ep[HIL_ZMQ_ENDPOINT_MAX + 16];
  const char *ep = bind_address(r->o.zmq_endpoint, bind_ep, sizeof bind_ep);
  const int linger = 1000; /* what was sent before the end still reaches the subscribers */
  const int hwm = r->o.sndhwm > 0 ? r->o.sndhwm : 1000;
  r->ctx = zmq_ctx_new();
  if (r->ctx) { /* the I/O thread carries every message: same priority and CPU as the player */
    hil_cpu_place_zmq_io(r->ctx, r->o.cpu, r->rt ? r->o.rt_priority : 0);
  }
  r->pub = r->ctx ? zmq_socket(r->ctx, ZMQ_XPUB) : NULL;
  if (!r->pub || zmq_setsockopt(r->pub, ZMQ_LINGER, &linger, sizeof linger) ||
      zmq_setsockopt(r->pub, ZMQ_SNDHWM, &hwm, sizeof hwm) || zmq_bind(r->pub, ep) != 0) {
    snprintf(err, err_sz, "--zmq: cannot bind \"%s\": %s", ep, zmq_strerror(zmq_errno()));
    return HIL_ESYSTEM;
  }
  size_t sz = sizeof r->where;
  if (zmq_getsockopt(r->pub, ZMQ_LAST_ENDPOINT, r->where, &sz) != 0) {
    snprintf(r->where, sizeof r->where, "%s", ep);
  }
  int rc = HIL_OK;
  r->ctl = bind_side(r, ZMQ_REP, r->o.ctl_endpoint, "--ctl", r->o.ctl_required, r->ctl_where,
                     sizeof r->ctl_where, &rc, err, err_sz);
  if (rc == HIL_OK) {
    r->cmd = bind_side(r, ZMQ_PULL, r->o.cmd_endpoint, "--cmd", r->o.cmd_required, r->cmd_where,
                       sizeof r->cmd_where, &rc, err, err_sz);
  }
  if (rc != HIL_OK) {
    return rc;
  }
  r->group = calloc(GROUP_MAX, sizeof *r->group);
  r->newest = calloc(2 * (size_t)(r->s->nsensors > 0 ? r->s->nsensors : 1), sizeof *r->newest);
  r->reply = r->ctl ? malloc(REPLY_MAX) : NULL;
  return r->group && r->newest && (r->reply || !r->ctl) ? HIL_OK : HIL_ENOMEM;
}

/* subscription messages of the XPUB: returns 1 when a subscription (not an unsubscription)
 * came. Counts those whose prefix receives "status" (the XPUB passes on the first subscription
 * to a prefix and the last unsubscription from it). */
static int zmq_drain(hil_replay *r) {
  int subscribed = 0;
  char buf[256];
  int n;
  while ((n = zmq_recv(r->pub, buf, sizeof buf, ZMQ_DONTWAIT)) >= 0) {
    const int len = n < (int)sizeof buf ? n : (int)sizeof buf;
    const int on = len >= 1 && buf[0] == 1;
    subscribed |= on;
    const int to_status =
        len >= 1 && buf[0] <= 1 && len - 1 <= 6 && memcmp(buf + 1, "status", (size_t)len - 1) == 0;
    if (to_status) {
      r->status_subs += on ? 1 : r->status_subs > 0 ? -1 : 0;
    }
  }
  return subscribed;
}

static void zmq_send_two(hil_replay *r, const char *topic, size_t tlen, const char *body,
                         size_t len) {
  if (zmq_send(r->pub, topic, tlen, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
      zmq_send(r->pub, body, len, ZMQ_DONTWAIT) < 0) {
    r->rep.send_failed++;
    return;
  }
  r->rep.messages++;
}

/* Sends m and keeps it as its stream's newest (the answer to `latest`). */
static void zmq_send_msg(hil_replay *r, const pending_msg *m) {
  zmq_send_two(r, m->topic, (size_t)m->topic_len, m->body, (size_t)m->len);
  pending_msg *keep = &r->newest[m->stream];
  if (keep->topic_len != m->topic_len) {
    memcpy(keep->topic, m->topic, (size_t)m->topic_len + 1);
    keep->topic_len = m->topic_len;
  }
  memcpy(keep->body, m->body, (size_t)m->len + 1);
  keep->len = m->len;
}

static int zmq_encode(pending_msg *m, const hil_replay_schedule *s, const hil_replay_sample *smp,
                      int truth) {
  const hil_replay_sensor *sn = &s->sensor[smp->sensor];
  m->stream = 2 * smp->sensor + truth;
  m->topic_len = hil_replay_topic(m->topic, sizeof m->topic, sn, truth);
  m->len = hil_replay_encode_json(m->body, sizeof m->body, sn, smp, truth);
  return m->topic_len < 0 || m->len < 0 ? -1 : 0;
}

/* now = 0: encodes into the group sent at the deadline (beyond GROUP_MAX messages, nothing:
 * send_instant encodes those); now = 1: encodes and sends at once */
static void zmq_add(hil_replay *r, const hil_replay_sample *smp, int truth, int now) {
  pending_msg local, *m = now ? &local : r->ngroup < GROUP_MAX ? &r->group[r->ngroup] : NULL;
  if (!m) {
    return;
  }
  if (zmq_encode(m, r->s, smp, truth) != 0) {
    r->rep.send_failed++;
  } else if (now) {
    zmq_send_msg(r, m);
  } else {
    r->ngroup++;
  }
}

/* Physics steps as the recording counted them: a log's simulation starts at t = 0 and steps
 * 1 / rate_hz at a time, so the steps at the latest t are round(t * rate_hz) (one sample per
 * instant would count a step split by a sensor on its own clock several times); a CSV holds no
 * steps: its rows played. */
static uint64_t played_steps(const hil_replay *r) {
  if (r->s->is_csv || !(r->s->rate_hz > 0) || !(r->rep.t > 0)) {
    return r->s->is_csv ? r->rep.instants : 0;
  }
  return (uint64_t)llround(r->rep.t * r->s->rate_hz);
}

/* the "replay" object: progress of the replay (status message, status and hello replies) */
static void write_replay_object(hil_replay *r, hil_jw *w, int final) {
  hil_jw_key(w, "replay");
  hil_jw_begin_object(w);
  hil_jw_key(w, "file");
  hil_jw_string(w, r->s->path);
  hil_jw_key(w, "played");
  hil_jw_uint(w, r->rep.played);
  hil_jw_key(w, "total");
  hil_jw_uint(w, (uint64_t)r->s->n);
  hil_jw_key(w, "pass");
  hil_jw_uint(w, (uint64_t)(r->rep.passes > 0 ? r->rep.passes : 1));
  hil_jw_key(w, "rate");
  hil_jw_number(w, r->o.rate);
  hil_jw_key(w, "instants");
  hil_jw_uint(w, r->rep.instants);
  hil_jw_key(w, "finished");
  hil_jw_bool(w, final);
  hil_jw_end_object(w);
}

/* the status object of the live layout plus "replay" */
static void write_status_object(hil_replay *r, hil_jw *w, int final) {
  hil_status st;
  memset(&st, 0, sizeof st);
  st.sim_time = r->rep.t;
  st.wall_time = r->rep.wall;
  st.steps = played_steps(r);
  st.mode = HIL_MODE_REALTIME;
  st.overruns = r->rep.late_1ms;
  const hil_histogram *h = final ? &r->all : &r->period;
  st.late_p50 = hil_histogram_quantile(h, 0.5);
  st.late_p99 = hil_histogram_quantile(h, 0.99);
  st.late_max = h->count ? h->max : 0;
  st.whole_run = final;
  st.samples_published = r->rep.played;
  hil_jw_begin_object(w);
  hil_jw_key(w, "v");
  hil_jw_uint(w, HIL_MSG_VERSION);
  hil_msg_write_status_fields(w, &st);
  /* sent counts the status message that goes out with this object */
  const hil_zmq_counters zmq = {.sent = r->rep.messages + 1,
                                 .send_failed = r->rep.send_failed,
                                 .cmd_messages = r->rep.cmd_messages,
                                 .ctl_requests = r->rep.ctl_requests,
                                 .ctl_errors = r->rep.ctl_errors};
  hil_zmq_write_counters(w, &zmq);
  write_replay_object(r, w, final);
  hil_jw_end_object(w);
}

static void zmq_status(hil_replay *r, int final) {
  hil_jw w;
  hil_jw_init(&w, r->status, sizeof r->status);
  write_status_object(r, &w, final);
  const int len = hil_jw_finish(&w);
  if (len > 0) {
    zmq_send_two(r, "status", 6, r->status, (size_t)len);
  }
}

/* --- ZeroMQ control and commands -------------------------------------------------------------- */

/* As live (docs/messages.md, section 7): t and steps as in the status, and the last
 * message sent of every stream. */
static void reply_latest(hil_replay *r, hil_jw *w) {
  hil_msg_begin_latest(w, r->rep.t, played_steps(r));
  for (int i = 0; r->newest && i < 2 * r->s->nsensors; i++) {
    hil_msg_latest_sample(w, r->newest[i].topic, r->newest[i].body, r->newest[i].len);
  }
  hil_msg_end_latest(w);
}

/* the live hello reply (hil/zmq_transport.c) from what the file holds; what it cannot hold gets
 * neutral values (docs/replay.md) */
static void reply_hello(hil_replay *r, hil_jw *w) {
  const hil_replay_schedule *s = r->s;
  hil_jw_begin_object(w);
  hil_jw_key(w, "ok");
  hil_jw_bool(w, 1);
  hil_jw_key(w, "v");
  hil_jw_uint(w, HIL_MSG_VERSION);
  hil_jw_key(w, "model");
  hil_jw_string(w, s->robot);
  hil_jw_key(w, "rate_hz");
  hil_jw_number(w, s->rate_hz);
  hil_jw_key(w, "timestep");
  hil_jw_number(w, s->period);
  hil_jw_key(w, "mode");
  hil_jw_string(w, hil_mode_name(HIL_MODE_REALTIME));
  hil_jw_key(w, "t");
  hil_jw_number(w, r->rep.t);
  hil_jw_key(w, "steps");
  hil_jw_uint(w, played_steps(r));
  hil_jw_key(w, "paused");
  hil_jw_bool(w, 0);
  hil_jw_key(w, "truth");
  hil_jw_bool(w, r->o.truth);
  if (s->has_seed) {
    hil_jw_key(w, "seed");
    hil_jw_uint(w, s->seed);
  }
  hil_jw_key(w, "joints"); /* a log names no joints */
  hil_jw_begin_array(w);
  hil_jw_end_array(w);
  hil_jw_key(w, "actuators");
  hil_jw_begin_array(w);
  for (int a = 0; a < s->nactuators && a < HIL_LOG_MAX_ACTUATORS; a++) {
    hil_jw_begin_object(w);
    hil_jw_key(w, "name");
    hil_jw_string(w, s->actuator[a]);
    hil_jw_key(w, "joint");
    hil_jw_string(w, "");
    hil_jw_key(w, "type");
    hil_jw_string(w, "unknown");
    hil_jw_key(w, "ctrlrange");
    hil_jw_begin_array(w);
    hil_jw_null(w);
    hil_jw_null(w);
    hil_jw_end_array(w);
    hil_jw_end_object(w);
  }
  hil_jw_end_array(w);
  hil_jw_key(w, "sensors");
  hil_jw_begin_array(w);
  for (int i = 0; i < s->nsensors; i++) {
    const hil_replay_sensor *sn = &s->sensor[i];
    if (!sn->selected) {
      continue;
    }
    /* what a log does not record (latency, drops, faults) reads as zero */
    hil_msg_sensor_view v = {.name = sn->name,
                             .type = sn->type,
                             .topic = sn->topic,
                             .rate_hz = sn->rate_hz,
                             .nch = sn->nch};
    for (int c = 0; c < sn->nch; c++) {
      v.channel[c] = sn->channel[c];
      v.unit[c] = sn->unit[c];
    }
    hil_jw_begin_object(w);
    hil_msg_write_sensor_fields(w, &v);
    hil_jw_end_object(w);
  }
  hil_jw_end_array(w);
  hil_jw_key(w, "endpoints");
  hil_jw_begin_object(w);
  hil_jw_key(w, "pub");
  hil_jw_string(w, r->where);
  hil_jw_key(w, "cmd");
  hil_jw_string(w, r->cmd_where);
  hil_jw_key(w, "ctl");
  hil_jw_string(w, r->ctl_where);
  hil_jw_end_object(w);
  write_replay_object(r, w, 0);
  hil_jw_end_object(w);
}

/* Answers one request: always exactly one reply, so the REP socket stays in step. hello and
 * status also publish a status message, as live. */
static void ctl_answer(hil_replay *r, zmq_msg_t *req, int parts) {
  char err[512];
  const char *failure = NULL;
  int publish = 0;
  hil_ctl_request q;
  hil_jw w;
  hil_jw_init(&w, r->reply, REPLY_MAX);
  if (parts > 1) {
    failure = "control requests are one-part messages";
  } else if (hil_msg_decode_control(&q, zmq_msg_data(req), zmq_msg_size(req), err,
                                    sizeof err) != HIL_OK) {
    failure = err;
  } else if (q.op == HIL_CTL_HELLO) {
    reply_hello(r, &w);
    publish = 1;
    /* the status published below reaches a subscriber to status: its handshake ends with it */
    r->hello_start |= r->status_subs > 0;
  } else if (q.op == HIL_CTL_LATEST) {
    reply_latest(r, &w);
  } else if (q.op == HIL_CTL_STATUS) {
    hil_jw_begin_object(&w);
    hil_jw_key(&w, "ok");
    hil_jw_bool(&w, 1);
    hil_jw_key(&w, "status");
    write_status_object(r, &w, 0);
    hil_jw_end_object(&w);
    publish = 1;
  } else {
    snprintf(err, sizeof err, "replay: %s is not available in a replay", hil_ctl_op_name(q.op));
    failure = err;
  }
  int len = failure ? -1 : hil_jw_finish(&w);
  if (!failure && len < 0) {
    failure = "reply too large";
    publish = 0;
  }
  r->rep.ctl_requests++;
  if (failure) {
    r->rep.ctl_errors++;
    len = hil_msg_encode_error(r->reply, REPLY_MAX, failure);
  }
  zmq_send(r->ctl, r->reply, (size_t)(len > 0 ? len : 0), ZMQ_DONTWAIT);
  if (publish) {
    zmq_status(r, 0);
  }
}

/* control requests and command messages waiting, without blocking */
static void zmq_service_sides(hil_replay *r) {
  for (int i = 0; r->ctl && i < CTL_BATCH; i++) {
    zmq_msg_t msg;
    const int parts = hil_zmq_recv_message(r->ctl, &msg);
    if (parts > 0) {
      ctl_answer(r, &msg, parts);
    }
    zmq_msg_close(&msg);
    if (parts == 0) {
      break;
    }
  }
  for (int i = 0; r->cmd && i < CMD_BATCH; i++) {
    zmq_msg_t msg;
    const int parts = hil_zmq_recv_message(r->cmd, &msg);
    zmq_msg_close(&msg);
    if (parts == 0) {
      break;
    }
    r->rep.cmd_messages++;
  }
}

/* --- serial output ---------------------------------------------------------------------------- */

/* the flat id table of docs/serial-transport.md, from the file's sensors */
static void serial_table(hil_replay *r) {
  hil_serial_table_clear(&r->table);
  for (int i = 0; i < r->s->nsensors; i++) {
    const hil_replay_sensor *sn = &r->s->sensor[i];
    for (int c = 0; c < sn->nch; c++) {
      const int counts = strcmp(sn->type, "encoder") == 0 && strcmp(sn->channel[c], "counts") == 0;
      hil_serial_table_add(&r->table, i, c, counts ? ACH_KIND_COUNTS : ACH_KIND_VALUE);
    }
  }
}

static void serial_print_table(const hil_replay *r, FILE *out) {
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

static void serial_flush(hil_replay *r) {
  while (r->tx_len > 0) {
    const long put = hil_serial_port_write(r->port, r->tx, r->tx_len, mono_now());
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
  serial_flush(r);
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
  ack.u.hello_ack.version_minor = ACH_PROTOCOL_VERSION_MINOR;
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
static void serial_service(hil_replay *r) {
  const double now = mono_now();
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
  serial_flush(r);
}

static void serial_status(hil_replay *r) {
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
static void serial_add(hil_replay *r, const hil_replay_sample *smp) {
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
static void serial_send_stage(hil_replay *r) {
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

/* --- creation --------------------------------------------------------------------------------- */

/* Whether this process may use SCHED_FIFO at prio: tried on the calling thread, then undone
 * (libzmq aborts when it cannot give its I/O thread the policy it was asked for). */
static int realtime_allowed(int prio) {
  int policy;
  struct sched_param old, sp = {.sched_priority = prio};
  if (pthread_getschedparam(pthread_self(), &policy, &old) != 0 ||
      pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0) {
    return 0;
  }
  pthread_setschedparam(pthread_self(), policy, &old);
  return 1;
}

hil_replay *hil_replay_new(const hil_replay_schedule *s, const hil_replay_options *o, char *err,
                           size_t err_sz) {
  if (!(o->rate > 0) || !isfinite(o->rate)) {
    snprintf(err, err_sz, "--rate: must be a positive number");
    return NULL;
  }
  hil_replay *r = calloc(1, sizeof *r);
  if (!r) {
    snprintf(err, err_sz, "out of memory");
    return NULL;
  }
  r->s = s;
  r->o = *o;
  r->rep.t = s->t_first;
  r->rt = o->rt_priority > 0 && realtime_allowed(o->rt_priority);
  if (o->rt_priority > 0 && !r->rt && o->progress) {
    fprintf(o->progress, "replay: SCHED_FIFO not granted (needs root or CAP_SYS_NICE); playing "
                         "without it\n");
  }
  hil_histogram_clear(&r->all);
  hil_histogram_clear(&r->period);
  int rc;
  if (o->output == HIL_REPLAY_ZMQ) {
    rc = zmq_open(r, err, err_sz);
  } else {
    r->o.serial.quiet = 1;
    r->port = hil_serial_port_new(&r->o.serial, err, err_sz);
    rc = r->port ? HIL_OK : HIL_ESYSTEM;
    if (r->port) {
      snprintf(r->where, sizeof r->where, "%s", hil_serial_port_path(r->port));
      ach_decoder_init(&r->dec);
      serial_table(r);
      r->per_frame = ACH_MAX_SENSORS_PER_FRAME;
    }
  }
  if (rc == HIL_OK && o->output == HIL_REPLAY_ZMQ && o->wait_hello && !r->ctl) {
    snprintf(err, err_sz, "--wait-hello: no control socket to hear a hello on (--ctl)");
    rc = HIL_ECONFIG;
  }
  if (rc != HIL_OK) {
    hil_replay_destroy(&r);
  }
  return r;
}

void hil_replay_destroy(hil_replay **pr) {
  if (!pr || !*pr) {
    return;
  }
  hil_replay *r = *pr;
  if (r->pub) {
    zmq_close(r->pub);
  }
  if (r->ctl) {
    zmq_close(r->ctl);
  }
  if (r->cmd) {
    zmq_close(r->cmd);
  }
  if (r->ctx) {
    zmq_ctx_term(r->ctx);
  }
  if (r->port) {
    serial_flush(r);
    hil_serial_port_destroy(&r->port);
  }
  free(r->group);
  free(r->newest);
  free(r->reply);
  free(r);
  *pr = NULL;
}

const char *hil_replay_where(const hil_replay *r) { return r->where; }
const char *hil_replay_ctl_where(const hil_replay *r) { return r->ctl_where; }
const char *hil_replay_cmd_where(const hil_replay *r) { return r->cmd_where; }
void hil_replay_request_stop(hil_replay *r) { r->stop = 1; }

void hil_replay_get_report(const hil_replay *r, hil_replay_report *out) {
  *out = r->rep;
  out->steps = played_steps(r);
  out->err_p50 = hil_histogram_quantile(&r->all, 0.5);
  out->err_p99 = hil_histogram_quantile(&r->all, 0.99);
  out->err_max = r->all.count ? r->all.max : 0;
}

/* --- playing ---------------------------------------------------------------------------------- */

static void service_input(hil_replay *r) {
  if (r->pub) {
    zmq_drain(r);
  } else {
    serial_service(r);
  }
}

/* ZeroMQ: the first subscription, or (wait_hello) a hello answered while a subscriber to status
 * is connected; serial: an accepted HELLO. 0, or -1 when stopped. */
static int wait_for_peer(hil_replay *r) {
  const int hello = r->pub && r->o.wait_hello && r->ctl;
  if (r->pub && !r->o.wait_subscriber && !hello) {
    return 0;
  }
  if (r->o.progress && hello) {
    fprintf(r->o.progress, "replay: waiting for a controller's hello on %s (with a subscriber to "
            "status on %s)\n", r->ctl_where, r->where);
  } else if (r->o.progress) {
    fprintf(r->o.progress, r->pub ? "replay: waiting for a subscriber on %s\n"
                                  : "replay: waiting for HELLO on %s (firmware should open it)\n",
            r->where);
  }
  while (!r->stop) {
    if (r->pub) {
      zmq_pollitem_t it[3] = {{.socket = r->pub, .fd = 0, .events = ZMQ_POLLIN, .revents = 0}};
      int n = 1;
      void *const side[2] = {r->ctl, r->cmd};
      for (int k = 0; k < 2; k++) {
        if (side[k]) {
          it[n++] = (zmq_pollitem_t){.socket = side[k], .fd = 0, .events = ZMQ_POLLIN,
                                     .revents = 0};
        }
      }
      zmq_poll(it, n, (long)(SERVICE_S * 1000));
      const int subscribed = zmq_drain(r); /* first: a hello sees the subscriptions so far */
      zmq_service_sides(r);                /* a controller's hello is answered while waiting */
      if (hello ? r->hello_start : subscribed || (r->o.ready && r->o.ready(r->o.user))) {
        return 0;
      }
      continue;
    }
    serial_service(r);
    if (r->connected) {
      return 0;
    }
    const int fd = hil_serial_port_fd(r->port);
    struct pollfd pfd = {.fd = fd, .events = POLLIN, .revents = 0};
    if (fd < 0 || poll(&pfd, 1, (int)(SERVICE_S * 1000)) < 0 || (pfd.revents & POLLHUP)) {
      sleep_until(mono_now() + 0.01);
    }
  }
  return -1;
}

/* The control and command sockets while playing: non-blocking, at most every SIDE_S, and only
 * once the player has slept since its last send (on a shared CPU, work right after a send delays
 * the I/O thread that delivers it), unless that has not happened for SERVICE_S (catching up). */
static void service_sides(hil_replay *r, double now, int slept) {
  if ((r->ctl || r->cmd) && now >= r->next_side && (slept || now >= r->next_side + SERVICE_S)) {
    r->next_side = now + SIDE_S;
    zmq_service_sides(r);
  }
}

/* sleeps until spin_s before the deadline (looking at the input every SERVICE_S), then spins */
static void wait_deadline(hil_replay *r, double deadline) {
  for (int slept = 0;; slept = 1) {
    service_input(r);
    const double now = mono_now(), wake = deadline - r->o.spin_s;
    if (r->pub) {
      service_sides(r, now, slept);
    }
    if (now >= wake || r->stop) {
      break;
    }
    sleep_until(fmin(wake, now + SERVICE_S));
  }
  while (!r->stop && mono_now() < deadline) {
    sched_yield(); /* threads of the same priority on this CPU (the I/O thread) still run */
  }
}

static void format_s(char *out, size_t n, double s) {
  if (s < 1e-3) {
    snprintf(out, n, "%.0f us", s * 1e6);
  } else if (s < 1.0) {
    snprintf(out, n, "%.2f ms", s * 1e3);
  } else {
    snprintf(out, n, "%.3f s", s);
  }
}

static void print_progress(hil_replay *r, const char *what, const hil_histogram *h) {
  if (!r->o.progress) {
    return;
  }
  char p50[32], p99[32], mx[32];
  format_s(p50, sizeof p50, hil_histogram_quantile(h, 0.5));
  format_s(p99, sizeof p99, hil_histogram_quantile(h, 0.99));
  format_s(mx, sizeof mx, h->count ? h->max : 0);
  const uint64_t total = (uint64_t)r->s->n;
  char behind[64] = "";
  if (r->rep.shifts) {
    snprintf(behind, sizeof behind, ", %.2f ms behind after %llu stalls", r->rep.behind * 1e3,
             (unsigned long long)r->rep.shifts);
  }
  fprintf(r->o.progress,
          "replay: %s %llu/%llu samples (pass %lld), t %.3f s, wall %.3f s, timing error p50 %s "
          "p99 %s max %s, %llu late > 1 ms%s\n",
          what, (unsigned long long)(total ? r->rep.played - (uint64_t)(r->rep.passes - 1) * total
                                           : 0),
          (unsigned long long)total, r->rep.passes, r->rep.t, r->rep.wall, p50, p99, mx,
          (unsigned long long)r->rep.late_1ms, behind);
}

static void periodic(hil_replay *r, double now) {
  if (r->o.status_period_s <= 0 || now < r->next_status) {
    return;
  }
  r->next_status += r->o.status_period_s;
  if (r->next_status < now) {
    r->next_status = now + r->o.status_period_s;
  }
  print_progress(r, "played", &r->period);
  if (r->pub) {
    zmq_status(r, 0);
  } else {
    serial_status(r);
  }
  hil_histogram_clear(&r->period);
}

/* encodes every sample of the instant [i, j) ahead of its deadline */
static void prepare(hil_replay *r, size_t i, size_t j, long long pass) {
  hil_replay_sample smp;
  r->ngroup = 0;
  for (size_t k = i; k < j && r->pub; k++) {
    hil_replay_sample_at(&smp, r->s, k, pass);
    zmq_add(r, &smp, 0, 0);
    if (r->o.truth && smp.has_truth) {
      zmq_add(r, &smp, 1, 0);
    }
  }
  if (r->pub) {
    return;
  }
  r->nstage = 1;
  r->stage[0].count = 0;
  r->stage[0].sim_time_ns =
      hil_serial_time_ns(r->s->entry[i].t + (double)pass * hil_replay_pass_length(r->s));
  for (size_t k = i; k < j; k++) {
    hil_replay_sample_at(&smp, r->s, k, pass);
    serial_add(r, &smp);
  }
}

/* sends what prepare() encoded, and the messages that did not fit in the group */
static void send_instant(hil_replay *r, size_t i, size_t j, long long pass) {
  if (!r->pub) {
    if (r->connected) {
      serial_send_stage(r);
    } else {
      r->rep.send_failed += (uint64_t)r->nstage; /* the board went away: said on stderr */
    }
    return;
  }
  for (int k = 0; k < r->ngroup; k++) {
    zmq_send_msg(r, &r->group[k]);
  }
  /* an instant with more messages than the group holds: the rest encoded now, in order */
  int m = 0;
  hil_replay_sample smp;
  for (size_t k = i; k < j; k++) {
    const int truth = r->o.truth && r->s->entry[k].has_truth;
    if (m + 1 + truth > GROUP_MAX) {
      hil_replay_sample_at(&smp, r->s, k, pass);
      if (m >= GROUP_MAX) {
        zmq_add(r, &smp, 0, 1);
      }
      if (truth && m + 1 >= GROUP_MAX) {
        zmq_add(r, &smp, 1, 1);
      }
    }
    m += 1 + truth;
  }
}

/* Instant [i, j) of pass `pass`. Its due time is that of its t, less the gaps played across
 * (hil_replay_due_offset); one earlier than the latest t (a sensor on its own clock) is due with
 * the latest, so it goes out right after it and its timing error is measured from there. */
static void play_instant(hil_replay *r, size_t i, size_t j, long long pass, double *deadline) {
  const hil_replay_schedule *s = r->s;
  const double t = s->entry[i].t + (double)pass * hil_replay_pass_length(s);
  const double due = r->start + r->rep.behind + hil_replay_due_offset(s, i, pass) / r->o.rate;
  *deadline = fmax(*deadline, due);
  prepare(r, i, j, pass);
  wait_deadline(r, *deadline);
  if (r->stop) {
    return;
  }
  send_instant(r, i, j, pass);
  const double now = mono_now(), late = fmax(now - *deadline, 0.0);
  hil_histogram_add(&r->all, late);
  hil_histogram_add(&r->period, late);
  r->rep.late_1ms += late > 1e-3;
  if (r->o.shift && late > r->o.shift_after_s) { /* the rest keeps its intervals */
    r->rep.behind += late;
    r->rep.shifts++;
    *deadline += late;
  }
  r->rep.instants++;
  r->rep.played += (uint64_t)(j - i);
  r->rep.t = fmax(r->rep.t, t);
  r->rep.wall = now - r->start;
  periodic(r, now);
  if (r->o.on_instant) {
    r->o.on_instant(r->o.user, r, i, j, pass);
  }
}

/* the passes, then the final status and the summary */
static void play(hil_replay *r) {
  const hil_replay_schedule *s = r->s;
  r->start = mono_now() + r->o.lead_s;
  r->next_status = r->start + r->o.status_period_s;
  double deadline = r->start;
  for (long long pass = 0; !r->stop; pass++) {
    r->rep.passes = pass + 1;
    for (size_t i = 0; i < s->n && !r->stop;) {
      size_t j = i + 1;
      while (j < s->n && s->entry[j].t == s->entry[i].t) {
        j++;
      }
      play_instant(r, i, j, pass, &deadline);
      i = j;
    }
    if (!r->o.loop || (r->o.loops > 0 && pass + 1 >= r->o.loops)) {
      break;
    }
  }
  r->rep.stopped = r->stop != 0;
  if (r->pub) {
    zmq_status(r, 1);
  } else {
    serial_status(r);
    serial_flush(r);
  }
  print_progress(r, r->rep.stopped ? "stopped after" : "done:", &r->all);
}

int hil_replay_run(hil_replay *r) {
  if (r->s->n == 0) {
    return HIL_EINVAL;
  }
  if (r->port && r->o.progress) {
    fprintf(r->o.progress, "replay: sensor ids on %s:\n", r->where);
    serial_print_table(r, r->o.progress);
  }
  int policy = SCHED_OTHER;
  struct sched_param old, sp = {.sched_priority = r->o.rt_priority};
  const int rt = r->rt && pthread_getschedparam(pthread_self(), &policy, &old) == 0 &&
                 pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
  r->rep.realtime = rt;
  cpu_set_t old_cpus;
  const int pinned = r->o.cpu >= 0 && r->o.cpu < CPU_SETSIZE &&
                     sched_getaffinity(0, sizeof old_cpus, &old_cpus) == 0;
  if (pinned) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(r->o.cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
  }
  char why[128];
  hil_cpu_awake *awake =
      pinned && r->o.keep_awake ? hil_cpu_awake_start(r->o.cpu, why, sizeof why) : NULL;
  if (pinned && r->o.keep_awake && !awake && r->o.progress) {
    fprintf(r->o.progress, "replay: %s; playing on\n", why);
  }
  if (wait_for_peer(r) == 0) {
    play(r);
  } else if (r->o.progress) {
    fprintf(r->o.progress, "replay: stopped before the first sample\n");
  }
  r->rep.stopped = r->stop != 0;
  hil_cpu_awake_stop(&awake);
  if (rt) {
    pthread_setschedparam(pthread_self(), policy, &old);
  }
  if (pinned) {
    sched_setaffinity(0, sizeof old_cpus, &old_cpus);
  }
  return HIL_OK;
}
