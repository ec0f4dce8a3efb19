/* hil/view/fox_session.c: one Foxglove client's connection (foxglove.websocket.v1, docs/view.md
 * section 4): its subscriptions, client channels and parameter subscriptions, and what it is
 * sent. At each frame the server took, a client gets one batch: a time message (the simulation
 * clock) when the time moved, then the new message of each subscribed channel, in the order of
 * their timestamps; a client still sending an older batch skips to the newest frame. */
#include "hil/view/server_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FOX_OP_MESSAGE_DATA 1
#define FOX_OP_TIME 2
#define FOX_OP_CLIENT_MESSAGE_DATA 1
#define FOX_HEADER 13 /* opcode, subscription id, timestamp */

/* A JSON number that is a whole number in [0, 2^32): ids of the protocol. 100.5, -1 and 1e300
 * are refused (converting them to an integer would be undefined behaviour in C). */
int view__fox_u32(const cJSON *v, uint32_t *out) {
  if (!cJSON_IsNumber(v)) {
    return -1;
  }
  const double d = v->valuedouble;
  if (!(d >= 0 && d <= 4294967295.0) || d != floor(d)) {
    return -1;
  }
  *out = (uint32_t)d;
  return 0;
}

static int find_sub(const session *ss, uint32_t id) {
  for (int i = 0; i < ss->nsubs; i++) {
    if (ss->subs[i].id == id) {
      return i;
    }
  }
  return -1;
}

/* --- subscriptions and client channels ---------------------------------------------------------- */

static void subscribe(view_server *s, session *ss, const cJSON *subs) {
  const cJSON *e;
  if (!cJSON_IsArray(subs)) {
    view__send_error(ss, "subscribe: expected \"subscriptions\": an array of {id, channelId}");
    return;
  }
  cJSON_ArrayForEach(e, subs) {
    uint32_t id, ch;
    if (view__fox_u32(cJSON_GetObjectItemCaseSensitive(e, "id"), &id) != 0 ||
        view__fox_u32(cJSON_GetObjectItemCaseSensitive(e, "channelId"), &ch) != 0) {
      view__send_error(ss, "subscribe: id and channelId must be whole numbers from 0 to "
                           "4294967295");
      continue;
    }
    if (ch < 1 || ch > (uint32_t)view__fox_nchannels(s->sh)) {
      view__send_error(ss, "subscribe: no such channel");
      continue;
    }
    if (find_sub(ss, id) >= 0 || ss->nsubs >= FOX_SUBS_MAX) {
      view__send_error(ss, "subscribe: subscription id in use, or too many subscriptions");
      continue;
    }
    ss->subs[ss->nsubs++] = (fox_sub){.id = id, .channel = (int)ch};
  }
  lws_callback_on_writable(ss->wsi);
}

static void unsubscribe(session *ss, const cJSON *ids) {
  const cJSON *e;
  cJSON_ArrayForEach(e, ids) {
    uint32_t id;
    const int i = view__fox_u32(e, &id) == 0 ? find_sub(ss, id) : -1;
    if (i < 0) {
      view__send_error(ss, "unsubscribe: no such subscription");
      continue;
    }
    ss->subs[i] = ss->subs[--ss->nsubs];
  }
}

/* Client channels: only the topic "commands" with JSON command messages (docs/messages.md). */
static void client_advertise(session *ss, const cJSON *channels) {
  const cJSON *e;
  cJSON_ArrayForEach(e, channels) {
    uint32_t id;
    const cJSON *topic = cJSON_GetObjectItemCaseSensitive(e, "topic");
    const cJSON *enc = cJSON_GetObjectItemCaseSensitive(e, "encoding");
    if (view__fox_u32(cJSON_GetObjectItemCaseSensitive(e, "id"), &id) != 0 ||
        !cJSON_IsString(topic) || !cJSON_IsString(enc) ||
        strcmp(topic->valuestring, "commands") != 0 || strcmp(enc->valuestring, "json") != 0) {
      view__send_error(ss, "advertise: only the topic \"commands\" with encoding \"json\" and a "
                           "whole-number id is taken");
      continue;
    }
    if (ss->nclient_channels >= FOX_CLIENT_CHANNELS) {
      view__send_error(ss, "advertise: too many client channels");
      continue;
    }
    ss->client_channels[ss->nclient_channels++] = id;
  }
}

static void client_unadvertise(session *ss, const cJSON *ids) {
  const cJSON *e;
  cJSON_ArrayForEach(e, ids) {
    uint32_t id;
    for (int i = 0; view__fox_u32(e, &id) == 0 && i < ss->nclient_channels; i++) {
      if (ss->client_channels[i] == id) {
        ss->client_channels[i] = ss->client_channels[--ss->nclient_channels];
        break;
      }
    }
  }
}

/* --- parameters ---------------------------------------------------------------------------------- */

/* subscribeParameterUpdates / unsubscribeParameterUpdates: names, or all when empty. The
 * current values go out at once (then whenever one changes). */
static void param_subscription(view_server *s, session *ss, const cJSON *names, int on) {
  const view_shared *sh = s->sh;
  if (!cJSON_IsArray(names)) {
    view__send_error(ss, "parameter updates: expected \"parameterNames\": an array of names");
    return;
  }
  const int all = cJSON_GetArraySize(names) == 0;
  for (int i = 0; all && i < sh->nparam; i++) {
    ss->param_sub[i] = (unsigned char)on;
  }
  const cJSON *e;
  cJSON_ArrayForEach(e, names) {
    int found = -1;
    for (int i = 0; cJSON_IsString(e) && i < sh->nparam && found < 0; i++) {
      found = strcmp(sh->params[i].name, e->valuestring) == 0 ? i : -1;
    }
    if (found < 0) {
      char msg[VIEW_PARAM_NAME_MAX + 64];
      snprintf(msg, sizeof msg, "parameter updates: no parameter \"%s\"",
               cJSON_IsString(e) ? e->valuestring : "(not a string)");
      view__send_error(ss, msg);
      continue;
    }
    ss->param_sub[found] = (unsigned char)on;
  }
  if (on) {
    ss->params_seq = 0; /* compare again with the next reading: everything subscribed is new */
    for (int i = 0; i < sh->nparam; i++) {
      ss->param_sent[i] = NAN;
    }
  }
}

/* The subscribed parameters that changed since the client was last told. */
static void param_updates(view_server *s, session *ss) {
  const view_frame *f = s->front;
  const view_shared *sh = s->sh;
  if (!f || !f->param || f->params_seq == ss->params_seq) {
    return;
  }
  ss->params_seq = f->params_seq;
  int *idx = malloc((size_t)(sh->nparam > 0 ? sh->nparam : 1) * sizeof *idx), n = 0;
  for (int i = 0; idx && i < sh->nparam; i++) {
    /* a value equal to what was sent (NaN never is: a first reading) is no news */
    if (ss->param_sub[i] && !(f->param[i] == ss->param_sent[i])) {
      idx[n++] = i;
      ss->param_sent[i] = f->param[i];
    }
  }
  const size_t cap = 256 + (size_t)n * (VIEW_PARAM_NAME_MAX + 64);
  char *msg = n > 0 ? malloc(cap) : NULL;
  const int len = msg ? view__params_values(msg, cap, sh, idx, n, f->param, NULL) : -1;
  if (len > 0) {
    view__enqueue(ss, msg, (size_t)len, 0);
  }
  free(msg);
  free(idx);
}

/* --- receiving ----------------------------------------------------------------------------------- */

static const char *const param_ops[] = {"getParameters", "setParameters"};

void view__fox_text(view_server *s, session *ss, const char *text, size_t len) {
  cJSON *root = cJSON_ParseWithLength(text, len);
  const cJSON *op = root ? cJSON_GetObjectItemCaseSensitive(root, "op") : NULL;
  const char *name = cJSON_IsString(op) ? op->valuestring : NULL;
  if (!name) {
    view__send_error(ss, root ? "expected an object with \"op\"" : "not JSON");
  } else if (strcmp(name, "subscribe") == 0) {
    subscribe(s, ss, cJSON_GetObjectItemCaseSensitive(root, "subscriptions"));
  } else if (strcmp(name, "unsubscribe") == 0) {
    unsubscribe(ss, cJSON_GetObjectItemCaseSensitive(root, "subscriptionIds"));
  } else if (strcmp(name, "advertise") == 0) {
    client_advertise(ss, cJSON_GetObjectItemCaseSensitive(root, "channels"));
  } else if (strcmp(name, "unadvertise") == 0) {
    client_unadvertise(ss, cJSON_GetObjectItemCaseSensitive(root, "channelIds"));
  } else if (strcmp(name, param_ops[0]) == 0 || strcmp(name, param_ops[1]) == 0) {
    view__submit(s, ss, VIEW_JOB_PARAMS, text, len); /* the sensors live on the loop thread */
  } else if (strcmp(name, "subscribeParameterUpdates") == 0 ||
             strcmp(name, "unsubscribeParameterUpdates") == 0) {
    param_subscription(s, ss, cJSON_GetObjectItemCaseSensitive(root, "parameterNames"),
                       name[0] == 's');
  } else {
    char msg[128];
    snprintf(msg, sizeof msg, "unsupported op \"%.64s\"", name);
    view__send_error(ss, msg);
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
void view__fox_binary(view_server *s, session *ss, const unsigned char *data, size_t len) {
  if (len < 5 || data[0] != FOX_OP_CLIENT_MESSAGE_DATA) {
    view__send_error(ss, "binary message: only client message data (op 1) is taken");
    return;
  }
  const uint32_t ch = le32(data + 1);
  for (int i = 0; i < ss->nclient_channels; i++) {
    if (ss->client_channels[i] == ch) {
      view__submit(s, ss, VIEW_JOB_COMMANDS, (const char *)data + 5, len - 5);
      return;
    }
  }
  view__send_error(ss, "client message data: channel not advertised");
}

/* --- the batch of a frame ------------------------------------------------------------------------ */

typedef struct batch_item {
  int sub;
  uint64_t ns;
} batch_item;

/* Whether subscription `sub` has something new in frame f, and its timestamp. */
static int has_news(const view_shared *sh, const view_frame *f, const fox_sub *sub,
                    uint64_t *ns) {
  *ns = view__ns(f->t);
  if (sub->channel <= 2 * sh->nsensor) {
    const int i = (sub->channel - 1) % sh->nsensor;
    uint64_t bits;
    memcpy(&bits, &f->smp[i].t, sizeof bits);
    *ns = view__ns(f->smp[i].t);
    return f->has[i] && (!sub->sent || f->smp[i].seq + 1 != sub->sent_a || bits != sub->sent_b);
  }
  if (sub->channel == view__fox_status_channel(sh)) {
    *ns = view__ns(f->status.sim_time);
    return f->status_seq && f->status_seq != sub->sent_a;
  }
  if (sub->channel == view__fox_robot_channel(sh)) { /* once, and again after a reset */
    return !sub->sent || f->t < sub->seen_t;
  }
  if (sub->channel == view__fox_contacts_channel(sh)) { /* no news: no contacts, none before */
    return f->seq != sub->sent_a && (f->ncon > 0 || sub->sent_b > 0 || !sub->sent);
  }
  return f->seq != sub->sent_a; /* /tf */
}

static int encode(view_server *s, const view_frame *f, const fox_sub *sub, char *out,
                  size_t cap) {
  const view_shared *sh = s->sh;
  if (sub->channel <= 2 * sh->nsensor) {
    return view__fox_encode_sample(out, cap, sh, f, sub->channel - 1);
  }
  if (sub->channel == view__fox_status_channel(sh)) {
    return view__encode_status(out, cap, sh, f);
  }
  if (sub->channel == view__fox_robot_channel(sh)) {
    return view__scene_encode_robot(out, cap, sh, f->t);
  }
  if (sub->channel == view__fox_contacts_channel(sh)) {
    return view__scene_encode_contacts(out, cap, sh, f);
  }
  return view__fox_encode_tf(out, cap, sh, f);
}

static void mark_sent(fox_sub *sub, const view_frame *f, const view_shared *sh) {
  sub->sent = 1;
  if (sub->channel <= 2 * sh->nsensor) {
    const int i = (sub->channel - 1) % sh->nsensor;
    sub->sent_a = f->smp[i].seq + 1;
    memcpy(&sub->sent_b, &f->smp[i].t, sizeof sub->sent_b);
  } else if (sub->channel == view__fox_status_channel(sh)) {
    sub->sent_a = f->status_seq;
  } else {
    sub->sent_a = f->seq;
    sub->sent_b = (uint64_t)f->ncon;
  }
}

/* Fills the batch from the newest frame: the time first, then the news of every subscription
 * sorted by timestamp (stable: equal times keep the subscriptions' order). */
static void fill_batch(view_server *s, session *ss) {
  const view_frame *f = s->front;
  const view_shared *sh = s->sh;
  ss->batch_frame = s->frame_no;
  unsigned char *h = s->scratch + LWS_PRE;
  const uint64_t now = view__ns(f->t);
  if (!ss->time_sent || ss->time_ns != now) {
    h[0] = FOX_OP_TIME;
    put_le(h + 1, now, 8);
    if (view__out_append(&ss->batch, h, 9, 1) == 0) {
      ss->time_sent = 1, ss->time_ns = now;
    }
  }
  batch_item item[FOX_SUBS_MAX];
  int n = 0;
  for (int k = 0; k < ss->nsubs; k++) {
    uint64_t ns;
    const int news = has_news(sh, f, &ss->subs[k], &ns);
    ss->subs[k].seen_t = f->t;
    if (!news) {
      continue;
    }
    int at = n++;
    for (; at > 0 && item[at - 1].ns > ns; at--) {
      item[at] = item[at - 1];
    }
    item[at] = (batch_item){k, ns};
  }
  for (int k = 0; k < n; k++) {
    fox_sub *sub = &ss->subs[item[k].sub];
    const int len = encode(s, f, sub, (char *)h + FOX_HEADER, s->scratch_cap - FOX_HEADER);
    if (len <= 0) {
      continue;
    }
    h[0] = FOX_OP_MESSAGE_DATA;
    put_le(h + 1, sub->id, 4);
    put_le(h + 5, item[k].ns, 8);
    if (view__out_append(&ss->batch, h, FOX_HEADER + (size_t)len, 1) == 0) {
      mark_sent(sub, f, sh);
    }
  }
}

static int send_one(session *ss, out_list *l) {
  out_msg *m = view__out_take(l);
  const int rc = view__write(ss->wsi, m->buf, m->len, m->binary);
  free(m);
  lws_callback_on_writable(ss->wsi);
  return rc;
}

int view__fox_writable(view_server *s, session *ss) {
  if (ss->hello_sent < 2) {
    char *text = (char *)s->scratch + LWS_PRE;
    const int len = ss->hello_sent == 0 ? view__fox_server_info(text, s->scratch_cap, s->sh)
                                        : view__fox_advertise(text, s->scratch_cap, s->sh);
    ss->hello_sent++;
    lws_callback_on_writable(ss->wsi);
    return len > 0 ? view__write(ss->wsi, s->scratch, (size_t)len, 0) : -1;
  }
  param_updates(s, ss);
  if (ss->outq.head) {
    return send_one(ss, &ss->outq);
  }
  if (!ss->batch.head && s->front && ss->batch_frame != s->frame_no) {
    fill_batch(s, ss);
  }
  return ss->batch.head ? send_one(ss, &ss->batch) : 0;
}

int view__fox_open(view_server *s, session *ss) {
  const size_t n = (size_t)(s->sh->nparam > 0 ? s->sh->nparam : 1);
  ss->param_sub = calloc(n, sizeof *ss->param_sub);
  ss->param_sent = calloc(n, sizeof *ss->param_sent);
  return ss->param_sub && ss->param_sent ? 0 : -1;
}

void view__fox_close(session *ss) {
  view__out_clear(&ss->batch);
  free(ss->param_sub);
  free(ss->param_sent);
  ss->param_sub = NULL;
  ss->param_sent = NULL;
}
