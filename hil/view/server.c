/* hil/view/server.c: the view's web server (libwebsockets), in a thread of its own. HTTP serves
 * the page and Debian's three.js and Chart.js from a fixed list of files (anything else: 404);
 * WebSocket speaks the view's own protocol (achilles.view.v1, also taken when a client names no
 * subprotocol) and Foxglove's (foxglove.websocket.v1, fox_session.c). A request whose Host or
 * Origin the view does not answer to is refused before it is read (access.c). docs/view.md
 * describes it all. */
#include "hil/view/server_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hil/error.h"

#define FRAME_MAX VIEW_MESSAGE_MAX
#define STATUS_MAX 4096

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

/* --- who may ask ------------------------------------------------------------------------------------ */

/* A header's value into buf (cap bytes); NULL when absent or too long (a refusal then). */
static const char *header(struct lws *wsi, enum lws_token_indexes token, char *buf, int cap,
                          int *present) {
  const int n = lws_hdr_total_length(wsi, token);
  *present = n > 0;
  if (n <= 0 || n >= cap || lws_hdr_copy(wsi, buf, cap, token) < 0) {
    return NULL;
  }
  return buf;
}

/* The Host names the server (DNS rebinding: access.c); for a WebSocket, also the Origin. */
static int request_allowed(const view_server *s, struct lws *wsi, int websocket) {
  char host[256], origin[256];
  int has_host, has_origin;
  const char *h = header(wsi, WSI_TOKEN_HOST, host, sizeof host, &has_host);
  if (!view__host_allowed(&s->sh->opt, h)) {
    return 0;
  }
  const char *o = header(wsi, WSI_TOKEN_ORIGIN, origin, sizeof origin, &has_origin);
  return !websocket || (has_origin ? o && view__origin_allowed(o, h) : 1);
}

/* --- HTTP ---------------------------------------------------------------------------------------- */

static int http_refuse(struct lws *wsi, unsigned status) {
  if (lws_return_http_status(wsi, status, NULL)) {
    return -1;
  }
  return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static int http_request(view_server *s, struct lws *wsi, const char *url) {
  if (!request_allowed(s, wsi, 0)) {
    return http_refuse(wsi, HTTP_STATUS_FORBIDDEN);
  }
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
  return http_refuse(wsi, HTTP_STATUS_NOT_FOUND);
}

/* --- the view protocol -------------------------------------------------------------------------- */

/* One message per writable callback: the model first, then replies, the status, the frame. */
static int view_writable(view_server *s, session *ss) {
  int rc = 0;
  if (!ss->hello_sent) {
    ss->hello_sent = 1;
    rc = view__write(ss->wsi, s->model_buf, (size_t)s->sh->model_len, 0);
  } else if (ss->outq.head) {
    out_msg *m = view__out_take(&ss->outq);
    rc = view__write(ss->wsi, m->buf, m->len, m->binary);
    free(m);
  } else if (s->status_no && ss->status_sent != s->status_no) {
    ss->status_sent = s->status_no;
    rc = view__write(ss->wsi, s->status_buf, s->status_len, 0);
  } else if (s->frame_no && ss->frame_sent != s->frame_no) {
    ss->frame_sent = s->frame_no;
    rc = view__write(ss->wsi, s->frame_buf, s->frame_len, 0);
  } else {
    return 0;
  }
  if (ss->outq.head || (s->status_no && ss->status_sent != s->status_no) ||
      (s->frame_no && ss->frame_sent != s->frame_no)) {
    lws_callback_on_writable(ss->wsi);
  }
  return rc;
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
    view__send_error(ss, msg);
    return;
  }
  const int binary = lws_frame_is_binary(wsi);
  if (ss->kind == PROTO_FOX) {
    if (binary) {
      view__fox_binary(s, ss, (const unsigned char *)ss->rx, ss->rx_len);
    } else {
      view__fox_text(s, ss, ss->rx, ss->rx_len);
    }
  } else if (binary) {
    view__send_error(ss, "binary messages are not requests: send a control request as JSON text");
  } else {
    view__submit(s, ss, VIEW_JOB_CONTROL, ss->rx, ss->rx_len);
  }
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
    return request_allowed(s, wsi, 1) ? 0 : -1; /* nonzero refuses the upgrade */
  case LWS_CALLBACK_ESTABLISHED:
    memset(ss, 0, sizeof *ss);
    ss->wsi = wsi;
    ss->kind = p && p->id == PROTO_FOX ? PROTO_FOX : PROTO_VIEW;
    ss->id = ++s->next_id;
    if (ss->kind == PROTO_FOX && view__fox_open(s, ss) != 0) {
      view__fox_close(ss);
      return -1;
    }
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
    view__out_clear(&ss->outq);
    view__fox_close(ss);
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
    return ss->kind == PROTO_FOX ? view__fox_writable(s, ss) : view_writable(s, ss);
  case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
    if (p && p->id == PROTO_HTTP) { /* sent to every protocol: act once */
      view__collect_replies(s);
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
  if (!s->frame_buf || !s->status_buf) {
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

/* The model, the robot's SceneUpdate and the advertisement can outgrow a frame (meshes, many
 * sensors): the buffers are sized once the shared part is filled. */
static int size_buffers(view_server *s) {
  const view_shared *sh = s->sh;
  size_t cap = FRAME_MAX;
  const size_t need[] = {(size_t)sh->model_len, view__fox_advertise_size(sh),
                         view__scene_robot_size(sh) + 64};
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
    cap = need[i] > cap ? need[i] : cap;
  }
  s->scratch_cap = cap;
  s->scratch = malloc(LWS_PRE + cap);
  s->model_buf = malloc(LWS_PRE + (size_t)sh->model_len);
  if (!s->scratch || !s->model_buf) {
    return HIL_ENOMEM;
  }
  memcpy(s->model_buf + LWS_PRE, sh->model_json, (size_t)sh->model_len);
  return HIL_OK;
}

int view__server_start(view_server *s) {
  if (size_buffers(s) != HIL_OK) {
    return HIL_ENOMEM;
  }
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
  free(s->model_buf);
  free(s);
}
