/* hil/view/server_internal.h: what the server thread's files share: the server, its
 * connections (sessions) and their outgoing queues. server.c owns the libwebsockets context and
 * the callback; fox_session.c speaks Foxglove on a connection; requests.c carries requests to
 * the loop and replies back (the server's jobs part). Calls go server.c -> fox_session.c ->
 * requests.c, never back. */
#ifndef ACHILLES_HIL_VIEW_SERVER_INTERNAL_H
#define ACHILLES_HIL_VIEW_SERVER_INTERNAL_H

#include <libwebsockets.h>
#include <pthread.h>

#include "hil/view/view_internal.h"

#define OUTQ_MAX 64              /* messages waiting for one connection before it is dropped */
#define INFLIGHT_PER_SESSION 16  /* control requests one connection may have in flight */
#define FOX_SUBS_MAX 256
#define FOX_CLIENT_CHANNELS 16

enum { PROTO_HTTP = 0, PROTO_VIEW = 1, PROTO_FOX = 2 };

typedef struct out_msg {
  struct out_msg *next;
  int binary;
  size_t len;
  unsigned char buf[]; /* LWS_PRE + len */
} out_msg;

/* A list of messages (the replies and errors of one connection; the batch of one frame). */
typedef struct out_list {
  out_msg *head, *tail;
  int n;
} out_list;

typedef struct fox_sub {
  uint32_t id;
  int channel;
  uint64_t sent_a, sent_b; /* what was last sent: sample seq and t bits, or a frame/status no */
  double seen_t;           /* the time of the last frame looked at (a smaller one: a reset) */
  int sent;                /* anything sent yet */
} fox_sub;

typedef struct session {
  struct session *prev, *next;
  struct lws *wsi;
  int kind;        /* PROTO_VIEW or PROTO_FOX; 0 for plain HTTP */
  uint64_t id;
  int hello_sent;  /* the model message (view) or serverInfo + advertise (Foxglove) */
  out_list outq;   /* replies, errors, parameter values: sent first */
  int inflight;
  int drop;        /* too much queued: close at the next chance */
  uint64_t frame_sent, status_sent;
  char *rx;        /* the message being received (fragments joined) */
  size_t rx_len;
  int rx_active;   /* inside a message (its first part came) */
  int rx_over;     /* the message grew past max_message_bytes: discard and answer once */
  size_t rx_total;
  /* Foxglove */
  fox_sub subs[FOX_SUBS_MAX];
  int nsubs;
  uint32_t client_channels[FOX_CLIENT_CHANNELS];
  int nclient_channels;
  out_list batch;          /* the newest frame's messages in time order, being sent */
  uint64_t batch_frame;    /* the server's frame number the batch came from */
  int time_sent;           /* a time message went out; its time: */
  uint64_t time_ns;
  unsigned char *param_sub; /* [nparam]: parameters this client subscribed to */
  double *param_sent;       /* [nparam]: the values it was last told */
  uint64_t params_seq;      /* the frame's parameter reading it was compared with */
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
  unsigned char *frame_buf; /* LWS_PRE + VIEW_MESSAGE_MAX */
  size_t frame_len;
  unsigned char *status_buf;
  size_t status_len;
  unsigned char *model_buf; /* LWS_PRE + the model message */
  unsigned char *scratch;   /* LWS_PRE + scratch_cap: per-connection messages */
  size_t scratch_cap;
};

/* --- requests.c ---------------------------------------------------------------------------------- */

/* Appends a copy of data to a list; -1 when out of memory. */
int view__out_append(out_list *l, const void *data, size_t len, int binary);
out_msg *view__out_take(out_list *l);
void view__out_clear(out_list *l);
/* Queues a message for the connection (and asks for a writable callback); a connection with
 * OUTQ_MAX messages waiting is marked to be dropped. */
int view__enqueue(session *ss, const char *data, size_t len, int binary);
/* An error for this connection: the view's reply form, or a Foxglove status message (level
 * 2). */
void view__send_error(session *ss, const char *message);
/* A request to the loop (or, in a replay, answered at once): control requests get their reply
 * in order; commands and parameter requests as their kind says (view_job_kind). */
void view__submit(view_server *s, session *ss, view_job_kind kind, const char *text, size_t len);
/* Replies back from the loop go to their connections. */
void view__collect_replies(view_server *s);
/* Writes one message; -1 when the connection failed. */
int view__write(struct lws *wsi, unsigned char *buf, size_t len, int binary);

/* --- fox_session.c ------------------------------------------------------------------------------- */

/* An id of the protocol: a JSON number that is a whole number in [0, 2^32) into *out; -1 for
 * anything else (100.5, -1, 1e300: their conversion to an integer would be undefined). */
struct cJSON;
int view__fox_u32(const struct cJSON *v, uint32_t *out);
/* A text (JSON op) or binary message from a Foxglove client. */
void view__fox_text(view_server *s, session *ss, const char *text, size_t len);
void view__fox_binary(view_server *s, session *ss, const unsigned char *data, size_t len);
/* One message per writable callback: hello, replies, then the newest frame's batch. */
int view__fox_writable(view_server *s, session *ss);
/* Connection setup and teardown of the Foxglove part. -1 when out of memory. */
int view__fox_open(view_server *s, session *ss);
void view__fox_close(session *ss);

#endif
