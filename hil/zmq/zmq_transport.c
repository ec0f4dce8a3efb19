/* hil/zmq/zmq_transport.c: the ZeroMQ transport — PUB sensor streams, PULL commands, REP control;
 * see zmq_transport.h and docs/messages.md. */
#include "hil/zmq/zmq_transport.h"
#include "hil/zmq/zmq_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "hil/clock.h"
#include "hil/error.h"
#include "hil/runtime/cpu.h"

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
  const double now = hil_monotonic_s();
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
    len = hil__zmq_respond(z, rt, zmq_msg_data(req), zmq_msg_size(req), z->reply, REPLY_MAX, &failed);
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
                                          .attach = hil__zmq_attach,
                                          .pollitems = zt_pollitems,
                                          .poll = zt_poll,
                                          .publish_sample = hil__zmq_publish_sample,
                                          .publish_step = hil__zmq_publish_step,
                                          .publish_status = hil__zmq_publish_status,
                                          .describe = zt_describe,
                                          .destroy = zt_destroy,
};

/* Creates, configures and binds socket `which`. */
static int open_socket(zmq_transport *z, int which, char *err, size_t err_sz) {
  static const int types[NSOCK] = {ZMQ_PUB, ZMQ_PULL, ZMQ_REP};
  const char *ep = hil__zmq_option_endpoint(&z->opt, which);
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
    snprintf(err, err_sz, "transports.zmq.%s: cannot create the socket: %s", hil__zmq_socket_key[which],
             zmq_strerror(zmq_errno()));
    return HIL_ESYSTEM;
  }
  char bind_ep[HIL_ZMQ_ENDPOINT_MAX];
  if (strncmp(ep, "tcp://localhost:", 16) == 0) { /* libzmq binds to addresses, not names */
    snprintf(bind_ep, sizeof bind_ep, "tcp://127.0.0.1:%s", ep + 16);
    ep = bind_ep;
  }
  if (zmq_bind(s, ep) != 0) {
    snprintf(err, err_sz, "transports.zmq.%s: cannot bind \"%s\": %s", hil__zmq_socket_key[which], ep,
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
  if (hil_zmq_options_check(o, err, err_sz) != HIL_OK) {
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
