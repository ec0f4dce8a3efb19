/* hil/view/requests.c: the server's jobs part. A browser's control request, a Foxglove client's
 * command message or parameter request becomes a job that travels to the loop through the
 * request queue (jobs.c) and comes back through the reply queue; what comes back goes to the
 * connection's outgoing queue. A replay has no loop: its requests are answered here, from the
 * newest frame. */
#include "hil/view/server_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- outgoing lists ------------------------------------------------------------------------------ */

int view__out_append(out_list *l, const void *data, size_t len, int binary) {
  out_msg *m = malloc(sizeof *m + LWS_PRE + len);
  if (!m) {
    return -1;
  }
  m->next = NULL;
  m->binary = binary;
  m->len = len;
  memcpy(m->buf + LWS_PRE, data, len);
  if (l->tail) {
    l->tail->next = m;
  } else {
    l->head = m;
  }
  l->tail = m;
  l->n++;
  return 0;
}

out_msg *view__out_take(out_list *l) {
  out_msg *m = l->head;
  if (m) {
    l->head = m->next;
    if (!l->head) {
      l->tail = NULL;
    }
    l->n--;
  }
  return m;
}

void view__out_clear(out_list *l) {
  out_msg *m;
  while ((m = view__out_take(l))) {
    free(m);
  }
}

int view__enqueue(session *ss, const char *data, size_t len, int binary) {
  if (ss->outq.n >= OUTQ_MAX || view__out_append(&ss->outq, data, len, binary) != 0) {
    ss->drop = 1;
    return -1;
  }
  lws_callback_on_writable(ss->wsi);
  return 0;
}

void view__send_error(session *ss, const char *message) {
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
    view__enqueue(ss, buf, (size_t)len, 0);
  }
}

int view__write(struct lws *wsi, unsigned char *buf, size_t len, int binary) {
  const int n = lws_write(wsi, buf + LWS_PRE, len, binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT);
  return n < (int)len ? -1 : 0;
}

/* --- requests to the loop ------------------------------------------------------------------------ */

/* After a push: the loop reads the queue at its next poll anyway; the eventfd wakes a loop that
 * waits (lockstep, pauses, between realtime ticks), once per batch of jobs. */
static int wake_loop(view_server *s) {
  const uint64_t one = 1;
  if (atomic_exchange(&s->sh->signalled, 1)) {
    return 0;
  }
  return write(s->sh->wake_fd, &one, sizeof one) == sizeof one ? 0 : -1;
}

static view_job *new_job(view_job_kind kind, uint64_t session_id, const char *text, size_t len) {
  view_job *j = calloc(1, sizeof *j);
  if (!j) {
    return NULL;
  }
  j->kind = kind;
  j->session = session_id;
  j->text = malloc(len + 1);
  j->len = len;
  j->reply = malloc(kind == VIEW_JOB_COMMANDS ? VIEW_COMMAND_ERROR_MAX : VIEW_REPLY_MAX);
  if (!j->text || !j->reply) {
    view__job_free(j);
    return NULL;
  }
  memcpy(j->text, text, len);
  j->text[len] = '\0';
  return j;
}

/* A replay answers here: control requests from the newest frame; commands and parameters are
 * not applied (a replay has no sensors to tune). */
static void replay_answer(view_server *s, session *ss, view_job *j) {
  if (j->kind != VIEW_JOB_CONTROL) {
    view__send_error(ss, j->kind == VIEW_JOB_COMMANDS
                             ? "replay: commands are not applied in a replay"
                             : "replay: a replay has no parameters");
    view__job_free(j);
    return;
  }
  j->reply_len = view__replay_answer(j->reply, VIEW_REPLY_MAX, s->sh, s->front, j->text, j->len);
  if (view__queue_push(&s->sh->replies, j) != 0) { /* cannot happen: drained at once below */
    view__job_free(j);
    view__send_error(ss, "too many requests in flight: wait for the replies");
    return;
  }
  ss->inflight++;
  s->inflight++;
  view__collect_replies(s);
}

void view__submit(view_server *s, session *ss, view_job_kind kind, const char *text, size_t len) {
  const int counted = kind != VIEW_JOB_COMMANDS; /* a reply always comes back */
  if (counted && (ss->inflight >= INFLIGHT_PER_SESSION || s->inflight >= VIEW_QUEUE)) {
    view__send_error(ss, "too many requests in flight: wait for the replies");
    return;
  }
  view_job *j = new_job(kind, ss->id, text, len);
  if (!j) {
    view__send_error(ss, "out of memory");
    return;
  }
  if (s->sh->replay) {
    replay_answer(s, ss, j);
    return;
  }
  if (view__queue_push(&s->sh->requests, j) != 0) {
    view__job_free(j);
    view__send_error(ss, "the simulator is busy: request dropped");
    return;
  }
  if (counted) {
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

/* A control reply travels as {"type":"reply","reply":...}; a parameter reply and a refused
 * command's status message as they are (a parameter reply may hold two messages, each ended by
 * a NUL: the values, then a status message saying what was refused). */
static void deliver(session *ss, const view_job *j) {
  if (j->kind != VIEW_JOB_CONTROL) {
    for (size_t at = 0; at < (size_t)j->reply_len;) {
      const size_t n = strnlen(j->reply + at, (size_t)j->reply_len - at);
      if (n > 0) {
        view__enqueue(ss, j->reply + at, n, 0);
      }
      at += n + 1;
    }
    return;
  }
  static const char head[] = "{\"type\":\"reply\",\"reply\":";
  const size_t n = sizeof head - 1 + (size_t)j->reply_len + 1;
  char *msg = malloc(n);
  if (msg) {
    memcpy(msg, head, sizeof head - 1);
    memcpy(msg + sizeof head - 1, j->reply, (size_t)j->reply_len);
    msg[n - 1] = '}';
    view__enqueue(ss, msg, n, 0);
    free(msg);
  }
}

void view__collect_replies(view_server *s) {
  view_job *j;
  while ((j = view__queue_pop(&s->sh->replies))) {
    const int counted = j->kind != VIEW_JOB_COMMANDS;
    s->inflight -= counted;
    session *ss = find_session(s, j->session);
    if (ss) {
      ss->inflight -= counted;
      if (j->reply_len > 0) {
        deliver(ss, j);
      }
    }
    view__job_free(j);
  }
}
