/* hil/record/replay_zmq.c: the replay's ZeroMQ side: samples on a PUB in the live layout, the
 * status message, a REP that answers hello, status and latest as the live simulator does, and a
 * PULL whose commands are read and discarded (docs/replay.md). */
#include "hil/record/replay_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "hil/error.h"
#include "hil/runtime/cpu.h"

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

int hil__replay_zmq_open(hil_replay *r, char *err, size_t err_sz) {
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
int hil__replay_zmq_drain(hil_replay *r) {
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
void hil__replay_zmq_send_msg(hil_replay *r, const pending_msg *m) {
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
void hil__replay_zmq_add(hil_replay *r, const hil_replay_sample *smp, int truth, int now) {
  pending_msg local, *m = now ? &local : r->ngroup < GROUP_MAX ? &r->group[r->ngroup] : NULL;
  if (!m) {
    return;
  }
  if (zmq_encode(m, r->s, smp, truth) != 0) {
    r->rep.send_failed++;
  } else if (now) {
    hil__replay_zmq_send_msg(r, m);
  } else {
    r->ngroup++;
  }
}

/* Physics steps as the recording counted them: a log's simulation starts at t = 0 and steps
 * 1 / rate_hz at a time, so the steps at the latest t are round(t * rate_hz) (one sample per
 * instant would count a step split by a sensor on its own clock several times); a CSV holds no
 * steps: its rows played. */
uint64_t hil__replay_played_steps(const hil_replay *r) {
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
  st.steps = hil__replay_played_steps(r);
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

void hil__replay_zmq_status(hil_replay *r, int final) {
  hil_jw w;
  hil_jw_init(&w, r->status, sizeof r->status);
  write_status_object(r, &w, final);
  const int len = hil_jw_finish(&w);
  if (len > 0) {
    zmq_send_two(r, "status", 6, r->status, (size_t)len);
  }
}

/* As live (docs/messages.md, section 7): t and steps as in the status, and the last
 * message sent of every stream. */
static void reply_latest(hil_replay *r, hil_jw *w) {
  hil_msg_begin_latest(w, r->rep.t, hil__replay_played_steps(r));
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
  hil_jw_uint(w, hil__replay_played_steps(r));
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
    hil__replay_zmq_status(r, 0);
  }
}

/* control requests and command messages waiting, without blocking */
void hil__replay_zmq_service_sides(hil_replay *r) {
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
