/* hil/view/server.c: the view's web server (libwebsockets), in a thread of its own. HTTP serves
 * the page and Debian's three.js and Chart.js from a fixed list of files (anything else: 404);
 * WebSocket speaks the view's own protocol (achilles.view.v1, also taken when a client names no
 * subprotocol) and Foxglove's (foxglove.websocket.v1). docs/view.md describes both. */
#include "hil/view/view_internal.h"

#include <cjson/cJSON.h>
#include <libwebsockets.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hil/error.h"

#define FRAME_MAX VIEW_MESSAGE_MAX /* the model message fits too (frame.c) */
#define STATUS_MAX 4096
#define OUTQ_MAX 64              /* messages waiting for one connection before it is dropped */
#define INFLIGHT_PER_SESSION 16  /* control requests one connection may have in flight */
#define FOX_SUBS_MAX 256
#define FOX_CLIENT_CHANNELS 16
#define FOX_OP_MESSAGE_DATA 1
#define FOX_OP_CLIENT_MESSAGE_DATA 1

enum { PROTO_HTTP = 0, PROTO_VIEW = 1, PROTO_FOX = 2 };

typedef struct out_msg {
  struct out_msg *next;
  int binary;
  size_t len;
  unsigned char buf[]; /* LWS_PRE + len */
} out_msg;

typedef struct fox_sub {
  uint32_t id;
  int channel;
  uint64_t sent_a, sent_b; /* what was last sent: sample seq and t bits, or a frame/status no */
} fox_sub;

typedef struct session {
  struct session *prev, *next;
  struct lws *wsi;
  int kind;        /* PROTO_VIEW or PROTO_FOX; 0 for plain HTTP */
  uint64_t id;
  int hello_sent;  /* the model message (view) or serverInfo + advertise (Foxglove) */
  out_msg *outq, *outq_tail;
  int outq_n;
  int inflight;
  int drop;        /* too much queued: close at the next chance */
  uint64_t frame_sent, status_sent;
  char *rx;        /* the message being received (fragments joined) */
  size_t rx_len;
  int rx_active;   /* inside a message (its first part came) */
  int rx_over;     /* the message grew past max_message_bytes: discard and answer once */
  size_t rx_total;
  fox_sub subs[FOX_SUBS_MAX];
  int nsubs, next_sub;
  uint32_t client_channels[FOX_CLIENT_CHANNELS];
  int nclient_channels;
} session;

struct view_server {
  view_shared *sh;
  struct lws_context *ctx;
  struct lws_vhost *vhost;
  int port;
  pthread_t thread;
  int started;
  atomic_int stop;
  session *sessions;
  uint64_t next_id;
  int inflight;
  /* the newest frame, encoded once for every connection */
  const view_frame *front;
  uint64_t frame_no, status_no;
  unsigned char *frame_buf; /* LWS_PRE + FRAME_MAX */
  size_t frame_len;
  unsigned char *status_buf;
  size_t status_len;
  unsigned char *scratch;   /* LWS_PRE + FRAME_MAX: per-connection messages (Foxglove data) */
};

/* --- outgoing queue ---------------------------------------------------------------------------- */

static int enqueue(session *ss, const char *data, size_t len, int binary) {
  if (ss->outq_n >= OUTQ_MAX) {
    ss->drop = 1;
    return -1;
  }
  out_msg *m = malloc(sizeof *m + LWS_PRE + len);
  if (!m) {
    ss->drop = 1;
    return -1;
  }
  m->next = NULL;
  m->binary = binary;
  m->len = len;
  memcpy(m->buf + LWS_PRE, data, len);
  if (ss->outq_tail) {
    ss->outq_tail->next = m;
  } else {
    ss->outq = m;
  }
  ss->outq_tail = m;
  ss->outq_n++;
  lws_callback_on_writable(ss->wsi);
  return 0;
}

static void clear_outq(session *ss) {
  while (ss->outq) {
    out_msg *m = ss->outq;
    ss->outq = m->next;
    free(m);
  }
  ss->outq_tail = NULL;
  ss->outq_n = 0;
}

/* An error for this connection: the view's reply form, or a Foxglove status message. */
static void send_error(session *ss, const char *message) {
  char buf[1024];
  int len;
  if (ss->kind == PROTO_FOX) {
    len = view__fox_status_message(buf, sizeof buf, 2, message);
  } else {
    char reply[768];
    const int n = hil_msg_encode_error(reply, sizeof reply, message);
    len = n > 0 ? snprintf(buf, sizeof buf, "{\"type\":\"reply\",\"reply\":%s}", reply) : -1;
  }
  if (len > 0 && (size_t)len < sizeof buf) {
    enqueue(ss, buf, (size_t)len, 0);
  }
}

/* --- requests to the loop ----------------------------------------------------------------------- */

/* After a push: the loop reads the queue at its next poll anyway; the eventfd wakes a loop that
 * waits (lockstep, pauses, between realtime ticks), once per batch of jobs. */
static int wake_loop(view_server *s) {
  const uint64_t one = 1;
  if (atomic_exchange(&s->sh->signalled, 1)) {
    return 0;
  }
  return write(s->sh->wake_fd, &one, sizeof one) == sizeof one ? 0 : -1;
}

static void collect_replies(view_server *s);

static void submit(view_server *s, session *ss, view_job_kind kind, const char *text, size_t len) {
  if (kind == VIEW_JOB_CONTROL &&
      (ss->inflight >= INFLIGHT_PER_SESSION || s->inflight >= VIEW_QUEUE)) {
    send_error(ss, "too many requests in flight: wait for the replies");
    return;
  }
  view_job *j = calloc(1, sizeof *j);
  if (j) {
    j->kind = kind;
    j->session = ss->id;
    j->text = malloc(len + 1);
    j->len = len;
    j->reply = kind == VIEW_JOB_CONTROL ? malloc(VIEW_REPLY_MAX) : NULL;
  }
  if (!j || !j->text || (kind == VIEW_JOB_CONTROL && !j->reply)) {
    view__job_free(j);
    send_error(ss, "out of memory");
    return;
  }
  memcpy(j->text, text, len);
  j->text[len] = '\0';
  if (s->sh->replay) { /* no loop to ask: answered here, from the newest frame */
    if (kind != VIEW_JOB_CONTROL) {
      view__job_free(j);
      send_error(ss, "replay: commands are not applied in a replay");
      return;
    }
    j->reply_len = view__replay_answer(j->reply, VIEW_REPLY_MAX, s->sh, s->front, j->text, len);
    if (view__queue_push(&s->sh->replies, j) != 0) { /* cannot happen: drained at once below */
      view__job_free(j);
      send_error(ss, "too many requests in flight: wait for the replies");
      return;
    }
    ss->inflight++;
    s->inflight++;
    collect_replies(s);
    return;
  }
  if (view__queue_push(&s->sh->requests, j) != 0) {
    view__job_free(j);
    send_error(ss, "the simulator is busy: request dropped");
    return;
  }
  if (kind == VIEW_JOB_CONTROL) {
    ss->inflight++;
    s->inflight++;
  }
  wake_loop(s);
}

static session *find_session(view_server *s, uint64_t id) {
  for (session *ss = s->sessions; ss; ss = ss->next) {
    if (ss->id == id) {
      return ss;
    }
  }
  return NULL;
}

/* Replies back from the loop go to their connections ({"type":"reply","reply":...}). */
static void collect_replies(view_server *s) {
  view_job *j;
  while ((j = view__queue_pop(&s->sh->replies))) {
    s->inflight--;
    session *ss = find_session(s, j->session);
    if (ss) {
      ss->inflight--;
      static const char head[] = "{\"type\":\"reply\",\"reply\":";
      const size_t n = sizeof head - 1 + (size_t)j->reply_len + 1;
      char *msg = malloc(n);
      if (msg) {
        memcpy(msg, head, sizeof head - 1);
        memcpy(msg + sizeof head - 1, j->reply, (size_t)j->reply_len);
        msg[n - 1] = '}';
        enqueue(ss, msg, n, 0);
        free(msg);
      }
    }
    view__job_free(j);
  }
}

/* Takes the newest frame (if the loop published one) and encodes it once for everyone. */
static void collect_frame(view_server *s) {
  view_frames *fr = &s->sh->frames;
  if (!(atomic_load(&fr->middle) & VIEW_FRESH)) {
    return;
  }
  fr->front = atomic_exchange(&fr->middle, fr->front) & 3;
  const view_frame *f = &fr->f[fr->front];
  s->front = f;
  const int len = view__encode_frame((char *)s->frame_buf + LWS_PRE, FRAME_MAX, s->sh, f);
  if (len > 0) {
    s->frame_len = (size_t)len;
    s->frame_no++;
  }
  if (f->status_seq > 0 && f->status_seq != s->status_no) {
    const int n = view__encode_status((char *)s->status_buf + LWS_PRE, STATUS_MAX, s->sh, f);
    if (n > 0) {
      s->status_len = (size_t)n;
      s->status_no = f->status_seq;
    }
  }
}

/* --- HTTP ---------------------------------------------------------------------------------------- */

typedef struct served {
  const char *url, *dir, *file, *mime;
} served;

/* The only files served; dir: 0 the page, 1 three.js, 2 Chart.js. */
static const struct {
  const char *url;
  int dir;
  const char *file, *mime;
} files[] = {
    {"/", 0, "index.html", "text/html; charset=utf-8"},
    {"/index.html", 0, "index.html", "text/html; charset=utf-8"},
    {"/view.js", 0, "view.js", "application/javascript"},
    {"/view.css", 0, "view.css", "text/css"},
    {"/lib/three.min.js", 1, "three.min.js", "application/javascript"},
    {"/lib/OrbitControls.js", 1, "examples/js/controls/OrbitControls.js",
     "application/javascript"},
    {"/lib/chart.min.js", 2, "chart.min.js", "application/javascript"},
};

static int http_request(view_server *s, struct lws *wsi, const char *url) {
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    if (strcmp(url, files[i].url) != 0) {
      continue;
    }
    const char *dir = files[i].dir == 0   ? s->sh->opt.www
                      : files[i].dir == 1 ? s->sh->opt.three
                                          : s->sh->opt.chartjs;
    char path[HIL_VIEW_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, files[i].file);
    static const char nocache[] = "Cache-Control: no-cache\r\n";
    const int rc = lws_serve_http_file(wsi, path, files[i].mime, nocache, sizeof nocache - 1);
    if (rc < 0 || (rc > 0 && lws_http_transaction_completed(wsi))) {
      return -1;
    }
    return 0;
  }
  if (lws_return_http_status(wsi, HTTP_STATUS_NOT_FOUND, NULL)) {
    return -1;
  }
  return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/* --- the view protocol -------------------------------------------------------------------------- */

static int write_msg(struct lws *wsi, unsigned char *buf, size_t len, int binary) {
  const int n = lws_write(wsi, buf + LWS_PRE, len, binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT);
  return n < (int)len ? -1 : 0;
}

/* One message per writable callback: the model first, then replies, the status, the frame. */
static int view_writable(view_server *s, session *ss) {
  int rc = 0;
  if (!ss->hello_sent) {
    ss->hello_sent = 1;
    memcpy(s->scratch + LWS_PRE, s->sh->model_json, (size_t)s->sh->model_len);
    rc = write_msg(ss->wsi, s->scratch, (size_t)s->sh->model_len, 0);
  } else if (ss->outq) {
    out_msg *m = ss->outq;
    ss->outq = m->next;
    if (!ss->outq) {
      ss->outq_tail = NULL;
    }
    ss->outq_n--;
    rc = write_msg(ss->wsi, m->buf, m->len, m->binary);
    free(m);
  } else if (s->status_no && ss->status_sent != s->status_no) {
    ss->status_sent = s->status_no;
    rc = write_msg(ss->wsi, s->status_buf, s->status_len, 0);
  } else if (s->frame_no && ss->frame_sent != s->frame_no) {
    ss->frame_sent = s->frame_no;
    rc = write_msg(ss->wsi, s->frame_buf, s->frame_len, 0);
  } else {
    return 0;
  }
  if (ss->outq || (s->status_no && ss->status_sent != s->status_no) ||
      (s->frame_no && ss->frame_sent != s->frame_no)) {
    lws_callback_on_writable(ss->wsi);
  }
  return rc;
}

/* --- the Foxglove protocol ---------------------------------------------------------------------- */

static int fox_find_sub(const session *ss, uint32_t id) {
  for (int i = 0; i < ss->nsubs; i++) {
    if (ss->subs[i].id == id) {
      return i;
    }
  }
  return -1;
}

static void fox_subscribe(view_server *s, session *ss, const cJSON *subs) {
  const cJSON *e;
  cJSON_ArrayForEach(e, subs) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
    const cJSON *ch = cJSON_GetObjectItemCaseSensitive(e, "channelId");
    if (!cJSON_IsNumber(id) || !cJSON_IsNumber(ch) || id->valuedouble < 0 ||
        id->valuedouble > 4294967295.0) {
      send_error(ss, "subscribe: each subscription needs numeric id and channelId");
      continue;
    }
    if (ch->valuedouble < 1 || ch->valuedouble > view__fox_nchannels(s->sh)) {
      send_error(ss, "subscribe: no such channel");
      continue;
    }
    if (fox_find_sub(ss, (uint32_t)id->valuedouble) >= 0 || ss->nsubs >= FOX_SUBS_MAX) {
      send_error(ss, "subscribe: subscription id in use, or too many subscriptions");
      continue;
    }
    ss->subs[ss->nsubs++] = (fox_sub){(uint32_t)id->valuedouble, (int)ch->valuedouble, 0, 0};
  }
  lws_callback_on_writable(ss->wsi);
}

static void fox_unsubscribe(session *ss, const cJSON *ids) {
  const cJSON *e;
  cJSON_ArrayForEach(e, ids) {
    const int i = cJSON_IsNumber(e) ? fox_find_sub(ss, (uint32_t)e->valuedouble) : -1;
    if (i < 0) {
      send_error(ss, "unsubscribe: no such subscription");
      continue;
    }
    ss->subs[i] = ss->subs[--ss->nsubs];
  }
}

/* Client channels: only the topic "commands" with JSON command messages (docs/messages.md). */
static void fox_client_advertise(session *ss, const cJSON *channels) {
  const cJSON *e;
  cJSON_ArrayForEach(e, channels) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
    const cJSON *topic = cJSON_GetObjectItemCaseSensitive(e, "topic");
    const cJSON *enc = cJSON_GetObjectItemCaseSensitive(e, "encoding");
    if (!cJSON_IsNumber(id) || !cJSON_IsString(topic) || !cJSON_IsString(enc) ||
        strcmp(topic->valuestring, "commands") != 0 || strcmp(enc->valuestring, "json") != 0) {
      send_error(ss, "advertise: only the topic \"commands\" with encoding \"json\" is taken");
      continue;
    }
    if (ss->nclient_channels >= FOX_CLIENT_CHANNELS) {
      send_error(ss, "advertise: too many client channels");
      continue;
    }
    ss->client_channels[ss->nclient_channels++] = (uint32_t)id->valuedouble;
  }
}

static void fox_client_unadvertise(session *ss, const cJSON *ids) {
  const cJSON *e;
  cJSON_ArrayForEach(e, ids) {
    for (int i = 0; cJSON_IsNumber(e) && i < ss->nclient_channels; i++) {
      if (ss->client_channels[i] == (uint32_t)e->valuedouble) {
        ss->client_channels[i] = ss->client_channels[--ss->nclient_channels];
        break;
      }
    }
  }
}

static void fox_text(view_server *s, session *ss, const char *text, size_t len) {
  cJSON *root = cJSON_ParseWithLength(text, len);
  const cJSON *op = root ? cJSON_GetObjectItemCaseSensitive(root, "op") : NULL;
  if (!cJSON_IsString(op)) {
    send_error(ss, root ? "expected an object with \"op\"" : "not JSON");
  } else if (strcmp(op->valuestring, "subscribe") == 0) {
    fox_subscribe(s, ss, cJSON_GetObjectItemCaseSensitive(root, "subscriptions"));
  } else if (strcmp(op->valuestring, "unsubscribe") == 0) {
    fox_unsubscribe(ss, cJSON_GetObjectItemCaseSensitive(root, "subscriptionIds"));
  } else if (strcmp(op->valuestring, "advertise") == 0) {
    fox_client_advertise(ss, cJSON_GetObjectItemCaseSensitive(root, "channels"));
  } else if (strcmp(op->valuestring, "unadvertise") == 0) {
    fox_client_unadvertise(ss, cJSON_GetObjectItemCaseSensitive(root, "channelIds"));
  } else {
    char msg[128];
    snprintf(msg, sizeof msg, "unsupported op \"%.64s\"", op->valuestring);
    send_error(ss, msg);
  }
  cJSON_Delete(root);
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le(unsigned char *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) {
    p[i] = (unsigned char)(v >> (8 * i));
  }
}

/* Client message data: [1][channel id, u32 LE][a command message]. */
static void fox_binary(view_server *s, session *ss, const unsigned char *data, size_t len) {
  if (len < 5 || data[0] != FOX_OP_CLIENT_MESSAGE_DATA) {
    send_error(ss, "binary message: only client message data (op 1) is taken");
    return;
  }
  const uint32_t ch = le32(data + 1);
  for (int i = 0; i < ss->nclient_channels; i++) {
    if (ss->client_channels[i] == ch) {
      submit(s, ss, VIEW_JOB_COMMANDS, (const char *)data + 5, len - 5);
      return;
    }
  }
  send_error(ss, "client message data: channel not advertised");
}

/* The data of subscription k if its channel has something new, into s->scratch; its length, or
 * 0 when there is nothing to send. */
static size_t fox_data(view_server *s, fox_sub *sub) {
  const view_frame *f = s->front;
  const view_shared *sh = s->sh;
  if (!f) {
    return 0;
  }
  uint64_t a = 0, b = 0;
  int len = -1;
  char *payload = (char *)s->scratch + LWS_PRE + 13;
  const size_t cap = FRAME_MAX - 13;
  double t = f->t;
  if (sub->channel <= 2 * sh->nsensor) {
    const int k = sub->channel - 1, i = k % sh->nsensor;
    if (!f->has[i]) {
      return 0;
    }
    a = f->smp[i].seq + 1;
    memcpy(&b, &f->smp[i].t, sizeof b);
    t = f->smp[i].t;
    if (a != sub->sent_a || b != sub->sent_b) {
      len = view__encode_stream(payload, cap, sh, f, k);
    }
  } else if (sub->channel == view__fox_status_channel(sh)) {
    a = f->status_seq;
    if (a && a != sub->sent_a) {
      len = view__encode_status(payload, cap, sh, f);
    }
  } else {
    a = f->seq;
    if (a != sub->sent_a) {
      len = view__fox_encode_tf(payload, cap, sh, f);
    }
  }
  if (len <= 0) {
    return 0;
  }
  sub->sent_a = a, sub->sent_b = b;
  unsigned char *h = s->scratch + LWS_PRE;
  h[0] = FOX_OP_MESSAGE_DATA;
  put_le(h + 1, sub->id, 4);
  put_le(h + 5, t > 0 ? (uint64_t)(t * 1e9 + 0.5) : 0, 8);
  return 13 + (size_t)len;
}

static int fox_writable(view_server *s, session *ss) {
  char *text = (char *)s->scratch + LWS_PRE;
  int rc = 0;
  if (ss->hello_sent < 2) {
    const int len = ss->hello_sent == 0 ? view__fox_server_info(text, FRAME_MAX, s->sh)
                                        : view__fox_advertise(text, FRAME_MAX, s->sh);
    ss->hello_sent++;
    lws_callback_on_writable(ss->wsi);
    return len > 0 ? write_msg(ss->wsi, s->scratch, (size_t)len, 0) : -1;
  }
  if (ss->outq) {
    out_msg *m = ss->outq;
    ss->outq = m->next;
    if (!ss->outq) {
      ss->outq_tail = NULL;
    }
    ss->outq_n--;
    rc = write_msg(ss->wsi, m->buf, m->len, m->binary);
    free(m);
    lws_callback_on_writable(ss->wsi);
    return rc;
  }
  for (int n = 0; n < ss->nsubs; n++) { /* round robin: every subscription gets its turn */
    fox_sub *sub = &ss->subs[(ss->next_sub + n) % ss->nsubs];
    const size_t len = fox_data(s, sub);
    if (len > 0) {
      ss->next_sub = (ss->next_sub + n + 1) % ss->nsubs;
      lws_callback_on_writable(ss->wsi);
      return write_msg(ss->wsi, s->scratch, len, 1);
    }
  }
  return 0;
}

/* --- receiving ----------------------------------------------------------------------------------- */

/* Joins fragments; hands over whole messages. Over max_message_bytes: one error, the rest
 * discarded. */
static void receive(view_server *s, session *ss, const void *in, size_t len) {
  struct lws *wsi = ss->wsi;
  const size_t max = s->sh->opt.max_message_bytes;
  if (!ss->rx_active) { /* lws hands a long frame over in parts: count them ourselves */
    ss->rx_active = 1;
    ss->rx_len = 0, ss->rx_over = 0, ss->rx_total = 0;
  }
  ss->rx_total += len;
  if (!ss->rx_over && ss->rx_len + len > max) {
    ss->rx_over = 1;
    free(ss->rx);
    ss->rx = NULL;
  }
  if (!ss->rx_over) {
    if (!ss->rx) {
      ss->rx = malloc(max + 1);
    }
    if (!ss->rx) {
      ss->rx_over = 1;
    } else {
      memcpy(ss->rx + ss->rx_len, in, len);
      ss->rx_len += len;
    }
  }
  if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi) > 0) {
    return;
  }
  ss->rx_active = 0;
  if (ss->rx_over) {
    char msg[160];
    snprintf(msg, sizeof msg, "message of %zu bytes is over max_message_bytes (%zu)",
             ss->rx_total, max);
    send_error(ss, msg);
    return;
  }
  const int binary = lws_frame_is_binary(wsi);
  if (ss->kind == PROTO_FOX) {
    if (binary) {
      fox_binary(s, ss, (const unsigned char *)ss->rx, ss->rx_len);
    } else {
      fox_text(s, ss, ss->rx, ss->rx_len);
    }
  } else if (binary) {
    send_error(ss, "binary messages are not requests: send a control request as JSON text");
  } else {
    submit(s, ss, VIEW_JOB_CONTROL, ss->rx, ss->rx_len);
  }
}

/* --- who may open a WebSocket ---------------------------------------------------------------------- */

/* A browser lets any web page open a WebSocket to 127.0.0.1 and says which page in Origin; the
 * view has no login, so a foreign page could pause or drive the arm. Taken: no Origin (programs:
 * Node, Python, Foxglove's desktop app), our own page (Origin http://<the Host it asked>), the
 * Foxglove web app, and desktop apps on file:// (Lichtblick). docs/view.md, section 7. */
static int origin_allowed(struct lws *wsi) {
  char origin[256], host[256], own[300];
  if (lws_hdr_total_length(wsi, WSI_TOKEN_ORIGIN) <= 0) {
    return 1;
  }
  if (lws_hdr_total_length(wsi, WSI_TOKEN_ORIGIN) >= (int)sizeof origin ||
      lws_hdr_copy(wsi, origin, sizeof origin, WSI_TOKEN_ORIGIN) < 0) {
    return 0;
  }
  static const char *const trusted[] = {"https://app.foxglove.dev", "https://studio.foxglove.dev",
                                        "file://"};
  for (size_t i = 0; i < sizeof trusted / sizeof trusted[0]; i++) {
    if (strcmp(origin, trusted[i]) == 0) {
      return 1;
    }
  }
  if (lws_hdr_total_length(wsi, WSI_TOKEN_HOST) <= 0 ||
      lws_hdr_total_length(wsi, WSI_TOKEN_HOST) >= (int)sizeof host ||
      lws_hdr_copy(wsi, host, sizeof host, WSI_TOKEN_HOST) < 0) {
    return 0;
  }
  snprintf(own, sizeof own, "http://%s", host);
  return strcmp(origin, own) == 0;
}

/* --- the callback --------------------------------------------------------------------------------- */

static void wake_all(view_server *s) {
  for (session *ss = s->sessions; ss; ss = ss->next) {
    lws_callback_on_writable(ss->wsi);
  }
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len) {
  struct lws_vhost *vh = lws_get_vhost(wsi);
  view_server *s = vh ? lws_get_vhost_user(vh) : NULL;
  const struct lws_protocols *p = lws_get_protocol(wsi);
  session *ss = user;
  if (!s) {
    return lws_callback_http_dummy(wsi, reason, user, in, len);
  }
  switch (reason) {
  case LWS_CALLBACK_HTTP:
    return http_request(s, wsi, (const char *)in);
  case LWS_CALLBACK_HTTP_FILE_COMPLETION:
    return lws_http_transaction_completed(wsi) ? -1 : 0;
  case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
    return origin_allowed(wsi) ? 0 : -1; /* nonzero refuses the upgrade */
  case LWS_CALLBACK_ESTABLISHED:
    memset(ss, 0, sizeof *ss);
    ss->wsi = wsi;
    ss->kind = p && p->id == PROTO_FOX ? PROTO_FOX : PROTO_VIEW;
    ss->id = ++s->next_id;
    atomic_fetch_add(&s->sh->viewers, 1);
    ss->next = s->sessions;
    if (s->sessions) {
      s->sessions->prev = ss;
    }
    s->sessions = ss;
    lws_callback_on_writable(wsi);
    return 0;
  case LWS_CALLBACK_CLOSED:
    if (ss->prev) {
      ss->prev->next = ss->next;
    } else if (s->sessions == ss) {
      s->sessions = ss->next;
    }
    if (ss->next) {
      ss->next->prev = ss->prev;
    }
    clear_outq(ss);
    free(ss->rx);
    ss->rx = NULL;
    return 0;
  case LWS_CALLBACK_RECEIVE:
    receive(s, ss, in, len);
    return ss->drop ? -1 : 0;
  case LWS_CALLBACK_SERVER_WRITEABLE:
    if (ss->drop) {
      return -1;
    }
    return ss->kind == PROTO_FOX ? fox_writable(s, ss) : view_writable(s, ss);
  case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
    if (p && p->id == PROTO_HTTP) { /* sent to every protocol: act once */
      collect_replies(s);
      collect_frame(s);
      wake_all(s);
    }
    return 0;
  default:
    return lws_callback_http_dummy(wsi, reason, user, in, len);
  }
}

static const struct lws_protocols protocols[] = {
    {"http", callback, sizeof(session), 4096, PROTO_HTTP, NULL, 0},
    {"achilles.view.v1", callback, sizeof(session), 4096, PROTO_VIEW, NULL, 0},
    {"foxglove.websocket.v1", callback, sizeof(session), 4096, PROTO_FOX, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0}};

/* --- lifecycle ------------------------------------------------------------------------------------ */

static void log_line(int level, const char *line) {
  (void)level;
  fprintf(stderr, "[achilles] view: %s", line);
}

view_server *view__server_new(view_shared *sh, char *err, size_t err_sz) {
  view_server *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(err, err_sz, "view: out of memory");
    return NULL;
  }
  s->sh = sh;
  s->frame_buf = malloc(LWS_PRE + FRAME_MAX);
  s->status_buf = malloc(LWS_PRE + STATUS_MAX);
  s->scratch = malloc(LWS_PRE + FRAME_MAX);
  if (!s->frame_buf || !s->status_buf || !s->scratch) {
    snprintf(err, err_sz, "view: out of memory");
    view__server_destroy(s);
    return NULL;
  }
  char index[HIL_VIEW_PATH_MAX + 16];
  snprintf(index, sizeof index, "%s/index.html", sh->opt.www);
  if (access(index, R_OK) != 0) {
    snprintf(err, err_sz, "view: the page is missing: cannot read %s (set ACHILLES_VIEW_WWW)",
             index);
    view__server_destroy(s);
    return NULL;
  }
  lws_set_log_level(LLL_ERR, log_line);
  struct lws_context_creation_info info;
  memset(&info, 0, sizeof info);
  info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_DISABLE_IPV6;
  info.port = CONTEXT_PORT_NO_LISTEN;
  s->ctx = lws_create_context(&info);
  if (!s->ctx) {
    snprintf(err, err_sz, "view: cannot create the web server (libwebsockets)");
    view__server_destroy(s);
    return NULL;
  }
  info.port = sh->opt.port;
  info.iface = sh->opt.address;
  info.protocols = protocols;
  info.user = s;
  info.vhost_name = "achilles";
  s->vhost = lws_create_vhost(s->ctx, &info);
  if (!s->vhost) {
    snprintf(err, err_sz, "view: cannot listen on %s:%d (in use, or no such address)",
             sh->opt.address, sh->opt.port);
    view__server_destroy(s);
    return NULL;
  }
  s->port = lws_get_vhost_listen_port(s->vhost);
  return s;
}

int view__server_port(const view_server *s) {
  return s->port;
}

static void *serve(void *arg) {
  view_server *s = arg;
  while (!atomic_load(&s->stop)) {
    if (lws_service(s->ctx, 0) < 0) {
      break;
    }
  }
  return NULL;
}

int view__server_start(view_server *s) {
  if (pthread_create(&s->thread, NULL, serve, s) != 0) {
    return HIL_ENOMEM;
  }
  s->started = 1;
  return HIL_OK;
}

void view__server_wake(view_server *s) {
  if (s && s->ctx) {
    lws_cancel_service(s->ctx);
  }
}

void view__server_destroy(view_server *s) {
  if (!s) {
    return;
  }
  if (s->started) {
    atomic_store(&s->stop, 1);
    lws_cancel_service(s->ctx);
    pthread_join(s->thread, NULL);
  }
  if (s->ctx) {
    lws_context_destroy(s->ctx); /* closes every connection (CLOSED frees their queues) */
  }
  free(s->frame_buf);
  free(s->status_buf);
  free(s->scratch);
  free(s);
}
