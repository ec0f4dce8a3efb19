/* hil/zmq/json_messages.c: JSON encoding and decoding of the ZeroMQ messages; see json_messages.h
 * and docs/messages.md. */
#include "hil/zmq/json_messages.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "hil/error.h"
#include "hil/number_format.h"
#include "sim/json_read.h"

#define MAX_EXACT_INTEGER 9007199254740992.0 /* 2^53: larger integers do not survive a double */

/* --- JSON writer ------------------------------------------------------------------------------ */

void hil_jw_init(hil_jw *w, char *buf, size_t cap) {
  memset(w, 0, sizeof *w);
  w->buf = buf;
  w->cap = cap;
  w->first[0] = 1;
  if (cap > 0) {
    buf[0] = '\0';
  } else {
    w->overflow = 1;
  }
}

static void jw_put(hil_jw *w, const char *s, size_t n) {
  if (w->overflow || n >= w->cap - w->len) {
    w->overflow = 1;
    return;
  }
  memcpy(w->buf + w->len, s, n);
  w->len += n;
  w->buf[w->len] = '\0';
}

static void jw_puts(hil_jw *w, const char *s) {
  jw_put(w, s, strlen(s));
}

/* the comma before a value, unless it follows a key or opens its container */
static void jw_value_prefix(hil_jw *w) {
  if (w->after_key) {
    w->after_key = 0;
    return;
  }
  if (!w->first[w->depth]) {
    jw_put(w, ",", 1);
  }
  w->first[w->depth] = 0;
}

static void jw_open(hil_jw *w, const char *bracket) {
  jw_value_prefix(w);
  jw_puts(w, bracket);
  if (w->depth >= HIL_JW_DEPTH) {
    w->overflow = 1;
    return;
  }
  w->first[++w->depth] = 1;
}

static void jw_close(hil_jw *w, const char *bracket) {
  jw_puts(w, bracket);
  if (w->depth > 0) {
    w->depth--;
  }
}

void hil_jw_begin_object(hil_jw *w) {
  jw_open(w, "{");
}
void hil_jw_end_object(hil_jw *w) {
  jw_close(w, "}");
}
void hil_jw_begin_array(hil_jw *w) {
  jw_open(w, "[");
}
void hil_jw_end_array(hil_jw *w) {
  jw_close(w, "]");
}

/* The escaping of one byte that JSON requires (never NUL), written to esc; returns its length:
 * a short form for the five bytes that have one, \u00XX for other control bytes. */
static size_t jw_escape(unsigned char c, char *esc) {
  static const char shortened[] = "\"\\\n\t\r", letter[] = "\"\\ntr", hex[] = "0123456789abcdef";
  const char *hit = strchr(shortened, c);
  esc[0] = '\\';
  if (hit) {
    esc[1] = letter[hit - shortened];
    return 2;
  }
  memcpy(esc + 1, "u00", 3);
  esc[4] = hex[c >> 4];
  esc[5] = hex[c & 15];
  return 6;
}

/* Length of the leading run of s that needs no escaping (it stops at the terminating NUL). */
static size_t jw_plain_run(const char *s) {
  size_t n = 0;
  for (unsigned char c; (c = (unsigned char)s[n]) >= 0x20 && c != '"' && c != '\\';) {
    n++;
  }
  return n;
}

/* Copies the plain run of s after `before` and an opening quote, a byte at a time (these
 * strings are a few bytes long: library calls cost more than the copying). Returns the end of
 * what was written, or NULL when s needs escaping or the buffer is full; w is unchanged. */
static char *jw_plain_between(hil_jw *w, const char *before, const char *s, const char *after) {
  char *o = w->buf + w->len, *const end = w->buf + w->cap - 1; /* room for the NUL */
  for (const char *p = before; *p; p++) {
    if (o == end) {
      return NULL;
    }
    *o++ = *p;
  }
  if (o == end) {
    return NULL;
  }
  *o++ = '"';
  const char *p = s;
  for (unsigned char c; (c = (unsigned char)*p) >= 0x20 && c != '"' && c != '\\'; p++) {
    if (o >= end - 1) {
      return NULL;
    }
    *o++ = (char)c;
  }
  if (*p != '\0' || o == end) {
    return NULL;
  }
  *o++ = '"';
  for (const char *q = after; *q; q++) {
    if (o == end) {
      return NULL;
    }
    *o++ = *q;
  }
  return o;
}

/* Writes s quoted, with `before` and `after` (a comma, a colon) around it. Names and units never
 * need escaping: that case is one pass (it runs for every key and string of every message). */
static void jw_quoted_between(hil_jw *w, const char *before, const char *s, const char *after) {
  if (!w->overflow) {
    char *o = jw_plain_between(w, before, s, after);
    if (o) {
      *o = '\0';
      w->len = (size_t)(o - w->buf);
      return;
    }
  }
  jw_put(w, before, strlen(before));
  jw_put(w, "\"", 1);
  for (const char *p = s; *p;) {
    const size_t n = jw_plain_run(p);
    jw_put(w, p, n);
    p += n;
    if (*p) {
      char esc[6];
      jw_put(w, esc, jw_escape((unsigned char)*p++, esc));
    }
  }
  jw_put(w, "\"", 1);
  jw_put(w, after, strlen(after));
}

void hil_jw_key(hil_jw *w, const char *key) {
  const char *comma = w->first[w->depth] ? "" : ",";
  w->first[w->depth] = 0;
  jw_quoted_between(w, comma, key, ":");
  w->after_key = 1;
}

void hil_jw_string(hil_jw *w, const char *s) {
  jw_value_prefix(w);
  jw_quoted_between(w, "", s, "");
}

void hil_jw_number(hil_jw *w, double v) {
  char num[HIL_NUM_MAX];
  const int n = hil_num_format(num, v);
  jw_value_prefix(w);
  jw_put(w, num, (size_t)n);
}

void hil_jw_uint(hil_jw *w, uint64_t v) {
  char num[24];
  char *p = num + sizeof num;
  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  jw_value_prefix(w);
  jw_put(w, p, (size_t)(num + sizeof num - p));
}

void hil_jw_bool(hil_jw *w, int v) {
  jw_value_prefix(w);
  jw_puts(w, v ? "true" : "false");
}

void hil_jw_raw(hil_jw *w, const char *json, size_t len) {
  jw_value_prefix(w);
  jw_put(w, json, len);
}

void hil_jw_null(hil_jw *w) {
  jw_value_prefix(w);
  jw_puts(w, "null");
}

int hil_jw_finish(hil_jw *w) {
  if (w->overflow || w->len > (size_t)0x7fffffff) {
    if (w->cap > 0) {
      w->buf[0] = '\0';
    }
    return HIL_ENOMEM;
  }
  return (int)w->len;
}

/* --- sensor samples --------------------------------------------------------------------------- */

const char *hil_msg_topic_prefix(sens_type type) {
  switch (type) {
  case SENS_ENCODER:
    return "enc";
  case SENS_IMU:
    return "imu";
  case SENS_TOUCH:
    return "tch";
  case SENS_TORQUE:
  default:
    return "trq";
  }
}

const char *hil_msg_unit(const sim_model *m, const sens_sensor *s, int ch) {
  const char *name = s->channel[ch];
  switch (s->type) {
  case SENS_ENCODER:
    if (strcmp(name, "counts") == 0) {
      return "count";
    }
    if (strcmp(name, "angle") == 0) {
      return "rad";
    }
    return strcmp(name, "velocity") == 0 ? "rad/s" : "flag";
  case SENS_IMU:
    return strncmp(name, "gyro", 4) == 0 ? "rad/s" : "m/s^2";
  case SENS_TOUCH:
    return "N";
  case SENS_TORQUE:
  default:
    if (strcmp(name, "current") == 0) {
      return "A";
    }
    if (m && s->u.trq.joint >= 0 && s->u.trq.joint < m->njnt &&
        m->joints[s->u.trq.joint].type == SIM_JOINT_SLIDE) {
      return "N";
    }
    return "N*m";
  }
}

/* Built by copying (it runs for every message published: snprintf was a tenth of the cost). */
int hil_msg_topic(char *out, size_t out_sz, const sens_sensor *s, int truth) {
  const char *const parts[4] = {truth ? "truth/" : "", hil_msg_topic_prefix(s->type), "/",
                                s->name};
  size_t n = 0;
  for (int i = 0; i < 4; i++) {
    const size_t len = strlen(parts[i]);
    if (n + len >= out_sz) {
      if (out_sz > 0) {
        out[0] = '\0';
      }
      return HIL_EINVAL;
    }
    memcpy(out + n, parts[i], len);
    n += len;
  }
  out[n] = '\0';
  return (int)n;
}

int hil_msg_encode_sample_view(char *out, size_t out_sz, const hil_msg_sample_view *v) {
  hil_jw w;
  hil_jw_init(&w, out, out_sz);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "v");
  hil_jw_uint(&w, HIL_MSG_VERSION);
  hil_jw_key(&w, "sensor");
  hil_jw_string(&w, v->sensor);
  hil_jw_key(&w, "type");
  hil_jw_string(&w, v->type);
  hil_jw_key(&w, "truth");
  hil_jw_bool(&w, v->truth);
  hil_jw_key(&w, "seq");
  hil_jw_uint(&w, v->seq);
  hil_jw_key(&w, "t");
  hil_jw_number(&w, v->t);
  hil_jw_key(&w, "t_truth");
  hil_jw_number(&w, v->truth ? v->t : v->t_truth);
  hil_jw_key(&w, "valid");
  hil_jw_bool(&w, v->truth ? 1 : v->valid);
  hil_jw_key(&w, "values");
  hil_jw_begin_object(&w);
  for (int i = 0; i < v->nch; i++) {
    hil_jw_key(&w, v->channel[i]);
    hil_jw_number(&w, v->values[i]);
  }
  hil_jw_end_object(&w);
  hil_jw_key(&w, "units");
  hil_jw_begin_object(&w);
  for (int i = 0; i < v->nch; i++) {
    hil_jw_key(&w, v->channel[i]);
    hil_jw_string(&w, v->unit[i]);
  }
  hil_jw_end_object(&w);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}

void hil_msg_write_sensor_fields(hil_jw *w, const hil_msg_sensor_view *v) {
  hil_jw_key(w, "name");
  hil_jw_string(w, v->name);
  hil_jw_key(w, "type");
  hil_jw_string(w, v->type);
  hil_jw_key(w, "topic");
  hil_jw_string(w, v->topic);
  hil_jw_key(w, "rate_hz");
  hil_jw_number(w, v->rate_hz);
  hil_jw_key(w, "latency_s");
  hil_jw_number(w, v->latency_s);
  hil_jw_key(w, "drop_probability");
  hil_jw_number(w, v->drop_probability);
  hil_jw_key(w, "dead");
  hil_jw_bool(w, v->dead);
  hil_jw_key(w, "channels");
  hil_jw_begin_array(w);
  for (int i = 0; i < v->nch; i++) {
    hil_jw_string(w, v->channel[i]);
  }
  hil_jw_end_array(w);
  hil_jw_key(w, "units");
  hil_jw_begin_array(w);
  for (int i = 0; i < v->nch; i++) {
    hil_jw_string(w, v->unit[i]);
  }
  hil_jw_end_array(w);
  if (v->joint) {
    hil_jw_key(w, "joint");
    hil_jw_string(w, v->joint);
  }
  if (v->body) {
    hil_jw_key(w, "body");
    hil_jw_string(w, v->body);
  }
  if (v->geom) {
    hil_jw_key(w, "geom");
    hil_jw_string(w, v->geom);
  }
  if (v->counts_per_turn > 0) {
    hil_jw_key(w, "counts_per_rev");
    hil_jw_uint(w, (uint64_t)v->counts_per_rev);
    hil_jw_key(w, "counts_per_turn");
    hil_jw_uint(w, (uint64_t)v->counts_per_turn);
    hil_jw_key(w, "resolution");
    hil_jw_number(w, v->resolution);
  }
}

/* The view of sensor s's sample smp (smp NULL: only the fixed parts, for a form). */
static hil_msg_sample_view sample_view(const sim_model *m, const sens_sensor *s,
                                       const sens_sample *smp, int truth) {
  hil_msg_sample_view v = {.sensor = s->name,
                           .type = sens_type_name(s->type),
                           .truth = truth,
                           .nch = s->nch};
  if (smp) {
    v.seq = smp->seq;
    v.t = smp->t;
    v.t_truth = smp->t_truth;
    v.valid = smp->valid;
    v.values = truth ? smp->truth : smp->meas;
  }
  for (int i = 0; i < s->nch; i++) {
    v.channel[i] = s->channel[i];
    v.unit[i] = hil_msg_unit(m, s, i);
  }
  return v;
}

int hil_msg_encode_sample(char *out, size_t out_sz, const sim_model *m, const sens_sensor *s,
                          const sens_sample *smp, int truth) {
  const hil_msg_sample_view v = sample_view(m, s, smp, truth);
  return hil_msg_encode_sample_view(out, out_sz, &v);
}

/* --- sample forms ----------------------------------------------------------------------------- */

/* The form holds, escaped as hil_msg_encode_sample_view escapes them, the parts of the message
 * that never change: the head up to "seq":, each key of the values object, and the tail from the
 * end of the values object. Only the numbers are formatted per sample. */
int hil_msg_sample_form_init(hil_msg_sample_form *f, const sim_model *m, const sens_sensor *s,
                             int truth) {
  const hil_msg_sample_view v = sample_view(m, s, NULL, truth);
  f->nch = v.nch;
  f->truth = truth;
  hil_jw w;
  hil_jw_init(&w, f->text, sizeof f->text);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "v");
  hil_jw_uint(&w, HIL_MSG_VERSION);
  hil_jw_key(&w, "sensor");
  hil_jw_string(&w, v.sensor);
  hil_jw_key(&w, "type");
  hil_jw_string(&w, v.type);
  hil_jw_key(&w, "truth");
  hil_jw_bool(&w, v.truth);
  hil_jw_key(&w, "seq");
  f->head_end = (uint16_t)w.len;
  for (int i = 0; i < v.nch; i++) {
    jw_quoted_between(&w, i ? "," : "", v.channel[i], ":");
    f->key_end[i] = (uint16_t)w.len;
  }
  jw_puts(&w, "},\"units\":{");
  for (int i = 0; i < v.nch; i++) {
    jw_quoted_between(&w, i ? "," : "", v.channel[i], ":");
    jw_quoted_between(&w, "", v.unit[i], "");
  }
  jw_puts(&w, "}}");
  f->tail_end = (uint16_t)w.len;
  return hil_jw_finish(&w) < 0 ? HIL_ENOMEM : HIL_OK;
}

static void jw_put_number(hil_jw *w, double v) {
  char num[HIL_NUM_MAX];
  jw_put(w, num, (size_t)hil_num_format(num, v));
}

int hil_msg_encode_sample_form(char *out, size_t out_sz, const hil_msg_sample_form *f,
                               const sens_sample *smp) {
  hil_jw w;
  hil_jw_init(&w, out, out_sz);
  jw_put(&w, f->text, f->head_end);
  w.after_key = 1; /* the value of "seq" */
  hil_jw_uint(&w, smp->seq);
  jw_puts(&w, ",\"t\":");
  jw_put_number(&w, smp->t);
  jw_puts(&w, ",\"t_truth\":");
  jw_put_number(&w, f->truth ? smp->t : smp->t_truth);
  jw_puts(&w, f->truth || smp->valid ? ",\"valid\":true,\"values\":{"
                                     : ",\"valid\":false,\"values\":{");
  const double *values = f->truth ? smp->truth : smp->meas;
  size_t from = f->head_end;
  for (int i = 0; i < f->nch; i++) {
    jw_put(&w, f->text + from, f->key_end[i] - from);
    jw_put_number(&w, values[i]);
    from = f->key_end[i];
  }
  jw_put(&w, f->text + from, f->tail_end - from);
  return hil_jw_finish(&w);
}

/* --- the latest reply ------------------------------------------------------------------------ */

void hil_msg_begin_latest(hil_jw *w, double t, uint64_t steps) {
  hil_jw_begin_object(w);
  hil_jw_key(w, "ok");
  hil_jw_bool(w, 1);
  hil_jw_key(w, "t");
  hil_jw_number(w, t);
  hil_jw_key(w, "steps");
  hil_jw_uint(w, steps);
  hil_jw_key(w, "samples");
  hil_jw_begin_object(w);
}

void hil_msg_latest_sample(hil_jw *w, const char *topic, const char *json, int len) {
  if (len > 0) {
    hil_jw_key(w, topic);
    hil_jw_raw(w, json, (size_t)len);
  }
}

void hil_msg_end_latest(hil_jw *w) {
  hil_jw_end_object(w);
  hil_jw_end_object(w);
}

/* --- decoding helpers ------------------------------------------------------------------------- */

static int fail(char *err, size_t err_sz, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t err_sz, int code, const char *fmt, ...) {
  if (err && err_sz > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_sz, fmt, ap);
    va_end(ap);
  }
  return code;
}

/* Parses exactly `len` bytes: no embedded NUL, nothing but white space after the value. */
static cJSON *parse_exact(const char *json, size_t len, char *err, size_t err_sz) {
  if (len == 0 || memchr(json, '\0', len)) {
    fail(err, err_sz, HIL_EMALFORMED, len ? "not JSON: contains a NUL byte" : "empty message");
    return NULL;
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
  if (!root) {
    const size_t at = end && end >= json && end <= json + len ? (size_t)(end - json) : 0;
    fail(err, err_sz, HIL_EMALFORMED, "not JSON (parse error at byte %zu)", at);
    return NULL;
  }
  for (const char *p = end; p && p < json + len; p++) {
    if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
      fail(err, err_sz, HIL_EMALFORMED, "not JSON: text after the value at byte %zu",
           (size_t)(p - json));
      cJSON_Delete(root);
      return NULL;
    }
  }
  return root;
}

/* Every member of obj is named in `allowed` (NULL-terminated). */
static int check_keys(const cJSON *obj, const char *where, const char *const *allowed, char *err,
                      size_t err_sz) {
  for (const cJSON *item = obj->child; item; item = item->next) {
    int known = 0;
    for (const char *const *k = allowed; *k && !known; k++) {
      known = strcmp(item->string, *k) == 0;
    }
    if (!known) {
      return fail(err, err_sz, HIL_EMALFORMED, "%s%s%s: unknown key", where, *where ? "." : "",
                  item->string);
    }
  }
  return HIL_OK;
}

/* "v": absent is accepted when optional; otherwise it must be HIL_MSG_VERSION. */
static int check_version(const cJSON *root, int required, char *err, size_t err_sz) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "v");
  if (!v && !required) {
    return HIL_OK;
  }
  if (!cJSON_IsNumber(v) || v->valuedouble != HIL_MSG_VERSION) {
    return fail(err, err_sz, HIL_EMALFORMED, "v: expected protocol version %d", HIL_MSG_VERSION);
  }
  return HIL_OK;
}

/* A string member shorter than cap; absent is an error when required. */
static int read_string(const cJSON *obj, const char *key, char *out, size_t cap, int required,
                       char *err, size_t err_sz) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!item) {
    return required ? fail(err, err_sz, HIL_EMALFORMED, "%s: missing (expected a string)", key)
                    : HIL_OK;
  }
  if (!cJSON_IsString(item) || !item->valuestring) {
    return fail(err, err_sz, HIL_EMALFORMED, "%s: expected a string", key);
  }
  if (strlen(item->valuestring) >= cap) {
    return fail(err, err_sz, HIL_EMALFORMED, "%s: longer than %zu characters", key, cap - 1);
  }
  snprintf(out, cap, "%s", item->valuestring);
  return HIL_OK;
}

/* A finite number member; absent is an error when required, else leaves *out. */
static int read_finite(const cJSON *obj, const char *key, double *out, int required, char *err,
                       size_t err_sz) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!item) {
    return required ? fail(err, err_sz, HIL_EMALFORMED, "%s: missing (expected a number)", key)
                    : HIL_OK;
  }
  if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble)) {
    return fail(err, err_sz, HIL_EMALFORMED, "%s: expected a finite number", key);
  }
  *out = item->valuedouble;
  return HIL_OK;
}

static int read_bool(const cJSON *obj, const char *key, int *out, char *err, size_t err_sz) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsBool(item)) {
    return fail(err, err_sz, HIL_EMALFORMED, "%s: expected true or false", key);
  }
  *out = cJSON_IsTrue(item);
  return HIL_OK;
}

/* An integer in [lo, hi] (hi at most 2^53). */
static int read_integer(const cJSON *obj, const char *key, double lo, double hi, double *out,
                        char *err, size_t err_sz) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsNumber(item) || !(item->valuedouble >= lo && item->valuedouble <= hi) ||
      item->valuedouble != floor(item->valuedouble)) {
    return fail(err, err_sz, HIL_EMALFORMED, "%s: expected an integer from %.0f to %.0f", key, lo,
                hi);
  }
  *out = item->valuedouble;
  return HIL_OK;
}

/* --- sample decoding -------------------------------------------------------------------------- */

static int decode_channels(hil_msg_sample *out, const cJSON *values, const cJSON *units,
                           char *err, size_t err_sz) {
  if (!cJSON_IsObject(values) || !cJSON_IsObject(units)) {
    return fail(err, err_sz, HIL_EMALFORMED, "%s: expected an object",
                cJSON_IsObject(values) ? "units" : "values");
  }
  const cJSON *u = units->child;
  for (const cJSON *v = values->child; v; v = v->next, u = u->next) {
    if (out->n >= SENS_MAX_CHANNELS) {
      return fail(err, err_sz, HIL_EMALFORMED, "values: more than %d channels",
                  SENS_MAX_CHANNELS);
    }
    if (!u || strcmp(u->string, v->string) != 0) {
      return fail(err, err_sz, HIL_EMALFORMED, "units: expected \"%s\" in the order of values",
                  v->string);
    }
    if (!(cJSON_IsNumber(v) || cJSON_IsNull(v)) || !cJSON_IsString(u) ||
        strlen(v->string) >= SENS_CHANNEL_NAME_MAX || strlen(u->valuestring) >= HIL_MSG_UNIT_MAX) {
      return fail(err, err_sz, HIL_EMALFORMED, "values.%s: expected a number or null and a unit",
                  v->string);
    }
    const int i = out->n++;
    snprintf(out->channel[i], SENS_CHANNEL_NAME_MAX, "%s", v->string);
    snprintf(out->unit[i], HIL_MSG_UNIT_MAX, "%s", u->valuestring);
    out->value[i] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
  }
  return u ? fail(err, err_sz, HIL_EMALFORMED, "units.%s: no such value", u->string) : HIL_OK;
}

int hil_msg_decode_sample(hil_msg_sample *out, const char *json, size_t len, char *err,
                          size_t err_sz) {
  static const char *const keys[] = {"v",       "sensor", "type",   "truth", "seq", "t",
                                     "t_truth", "valid",  "values", "units", NULL};
  memset(out, 0, sizeof *out);
  cJSON *root = parse_exact(json, len, err, err_sz);
  if (!root) {
    return HIL_EMALFORMED;
  }
  double seq = 0;
  int rc = cJSON_IsObject(root) ? HIL_OK
                                : fail(err, err_sz, HIL_EMALFORMED, "expected a JSON object");
  if (rc == HIL_OK) {
    for (const char *const *k = keys; *k && rc == HIL_OK; k++) {
      if (!cJSON_GetObjectItemCaseSensitive(root, *k)) {
        rc = fail(err, err_sz, HIL_EMALFORMED, "%s: missing", *k);
      }
    }
  }
  if (rc == HIL_OK) { /* keys added by a later minor revision are ignored (docs/messages.md) */
    rc = check_version(root, 1, err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = read_string(root, "sensor", out->sensor, sizeof out->sensor, 1, err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = read_string(root, "type", out->type, sizeof out->type, 1, err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = read_bool(root, "truth", &out->truth, err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = read_bool(root, "valid", &out->valid, err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = read_integer(root, "seq", 0, MAX_EXACT_INTEGER, &seq, err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = read_finite(root, "t", &out->t, 1, err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = read_finite(root, "t_truth", &out->t_truth, 1, err, err_sz);
  }
  if (rc == HIL_OK) {
    out->seq = (uint64_t)seq;
    rc = decode_channels(out, cJSON_GetObjectItemCaseSensitive(root, "values"),
                         cJSON_GetObjectItemCaseSensitive(root, "units"), err, err_sz);
  }
  cJSON_Delete(root);
  return rc;
}

/* --- status ----------------------------------------------------------------------------------- */

static void jw_quantiles(hil_jw *w, const char *key, double p50, double p99, double max) {
  hil_jw_key(w, key);
  hil_jw_begin_object(w);
  hil_jw_key(w, "p50");
  hil_jw_number(w, p50);
  hil_jw_key(w, "p99");
  hil_jw_number(w, p99);
  hil_jw_key(w, "max");
  hil_jw_number(w, max);
  hil_jw_end_object(w);
}

static void jw_counter(hil_jw *w, const char *key, uint64_t v) {
  hil_jw_key(w, key);
  hil_jw_uint(w, v);
}

void hil_msg_write_status_fields(hil_jw *w, const hil_status *st) {
  hil_jw_key(w, "t");
  hil_jw_number(w, st->sim_time);
  hil_jw_key(w, "wall_time");
  hil_jw_number(w, st->wall_time);
  jw_counter(w, "steps", st->steps);
  hil_jw_key(w, "mode");
  hil_jw_string(w, hil_mode_name(st->mode));
  hil_jw_key(w, "paused");
  hil_jw_bool(w, st->paused);
  jw_counter(w, "overruns", st->overruns);
  jw_counter(w, "skipped", st->skipped);
  hil_jw_key(w, "whole_run");
  hil_jw_bool(w, st->whole_run);
  jw_quantiles(w, "late_s", st->late_p50, st->late_p99, st->late_max);
  jw_quantiles(w, "compute_s", st->compute_p50, st->compute_p99, st->compute_max);
  hil_jw_key(w, "deadline_offset_s");
  hil_jw_number(w, st->deadline_offset);
  hil_jw_key(w, "commands");
  hil_jw_begin_object(w);
  jw_counter(w, "accepted", st->commands.accepted);
  jw_counter(w, "clamped", st->commands.clamped);
  jw_counter(w, "rejected_nonfinite", st->commands.rejected_nonfinite);
  jw_counter(w, "rejected_unknown", st->commands.rejected_unknown);
  jw_counter(w, "rejected_malformed", st->commands.rejected_malformed);
  jw_counter(w, "watchdog_trips", st->commands.watchdog_trips);
  hil_jw_end_object(w);
  jw_counter(w, "record_errors", st->record_errors);
  jw_counter(w, "input_deferred", st->input_deferred);
  jw_quantiles(w, "input_s", st->input_p50, st->input_p99, st->input_max);
  hil_jw_key(w, "constraints");
  hil_jw_begin_object(w);
  jw_counter(w, "contacts", (uint64_t)st->contacts);
  jw_counter(w, "rows", (uint64_t)st->constraint_rows);
  jw_counter(w, "active", (uint64_t)st->constraint_active);
  jw_counter(w, "iterations", (uint64_t)st->solver_iterations);
  jw_counter(w, "stops", (uint64_t)st->stops);
  hil_jw_key(w, "normal_force");
  hil_jw_number(w, st->normal_force);
  hil_jw_end_object(w);
  jw_counter(w, "samples_published", st->samples_published);
}

int hil_msg_encode_status(char *out, size_t out_sz, const hil_status *st) {
  hil_jw w;
  hil_jw_init(&w, out, out_sz);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "v");
  hil_jw_uint(&w, HIL_MSG_VERSION);
  hil_msg_write_status_fields(&w, st);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}

/* --- commands --------------------------------------------------------------------------------- */

/* The message around the entries: object, version, keys, "t", "commands". */
static int check_command_envelope(const cJSON *root, hil_msg_cmd_report *rep, char *err,
                                  size_t err_sz) {
  static const char *const keys[] = {"v", "t", "commands", NULL};
  if (!cJSON_IsObject(root)) {
    return fail(err, err_sz, HIL_EMALFORMED, "expected a JSON object");
  }
  int rc = check_keys(root, "", keys, err, err_sz);
  if (rc == HIL_OK) {
    rc = check_version(root, 1, err, err_sz);
  }
  if (rc == HIL_OK && cJSON_GetObjectItemCaseSensitive(root, "t")) {
    rc = read_finite(root, "t", &rep->t, 0, err, err_sz);
    rep->has_t = rc == HIL_OK;
  }
  if (rc == HIL_OK && !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "commands"))) {
    rc = fail(err, err_sz, HIL_EMALFORMED, "commands: missing or not an object");
  }
  return rc;
}

/* 1 when s is well-formed UTF-8 (RFC 3629), by the robot loader's own check */
static int utf8_valid(const char *s) { return s[sim_json_utf8_valid_prefix(s)] == '\0'; }

int hil_msg_submit_commands(hil_commands *c, const char *json, size_t len, double now,
                            hil_msg_cmd_report *rep, char *err, size_t err_sz) {
  hil_msg_cmd_report local;
  rep = rep ? rep : &local;
  memset(rep, 0, sizeof *rep);
  if (err && err_sz > 0) {
    err[0] = '\0';
  }
  cJSON *root = parse_exact(json, len, err, err_sz);
  if (!root || check_command_envelope(root, rep, err, err_sz) != HIL_OK) {
    hil_commands_count_malformed(c);
    cJSON_Delete(root);
    return HIL_EMALFORMED;
  }
  const cJSON *cmds = cJSON_GetObjectItemCaseSensitive(root, "commands");
  for (const cJSON *e = cmds->child; e; e = e->next) {
    rep->entries++;
    int rc;
    if (!utf8_valid(e->string)) { /* no actuator has such a name: the sender's encoding is broken */
      hil_commands_count_malformed(c);
      rc = HIL_EMALFORMED;
    } else if (cJSON_IsNumber(e) || cJSON_IsNull(e) || cJSON_IsString(e)) {
      /* null and strings ("NaN", "inf") stand for values JSON cannot carry: non-finite */
      const double value = cJSON_IsNumber(e) ? e->valuedouble : NAN;
      rc = hil_commands_submit_named(c, e->string, value, now);
    } else {
      hil_commands_count_malformed(c);
      rc = HIL_EMALFORMED;
    }
    if (rc == HIL_OK) {
      rep->accepted++;
      continue;
    }
    if (rep->rejected++ == 0 && err && err_sz > 0) {
      fail(err, err_sz, rc, "commands.%s: %s", utf8_valid(e->string) ? e->string : "?",
           !utf8_valid(e->string)      ? "name is not valid UTF-8"
           : rc == HIL_EMALFORMED ? "expected a number"
                                  : hil_strerror(rc));
    }
  }
  cJSON_Delete(root);
  return HIL_OK;
}

int hil_msg_encode_commands(char *out, size_t out_sz, const char *const *names,
                            const double *values, int n, double t) {
  hil_jw w;
  hil_jw_init(&w, out, out_sz);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "v");
  hil_jw_uint(&w, HIL_MSG_VERSION);
  if (!isnan(t)) {
    hil_jw_key(&w, "t");
    hil_jw_number(&w, t);
  }
  hil_jw_key(&w, "commands");
  hil_jw_begin_object(&w);
  for (int i = 0; i < n; i++) {
    hil_jw_key(&w, names[i]);
    hil_jw_number(&w, values[i]);
  }
  hil_jw_end_object(&w);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}

/* --- control requests ------------------------------------------------------------------------- */

const char *hil_ctl_op_name(hil_ctl_op op) {
  static const char *const names[] = {
#define HIL_X_NAME(name, text) text,
      HIL_CTL_OPS(HIL_X_NAME)
#undef HIL_X_NAME
  };
  return (int)op >= 0 && (int)op < HIL_CTL_COUNT ? names[(int)op] : "unknown";
}

/* Keys each operation accepts besides "cmd" and "v". */
static const char *const *control_keys(hil_ctl_op op) {
  static const char *const none[] = {"cmd", "v", NULL};
  static const char *const step[] = {"cmd", "v", "n", NULL};
  static const char *const get[] = {"cmd", "v", "sensor", "path", NULL};
  static const char *const set[] = {"cmd", "v", "sensor", "path", "value", NULL};
  static const char *const fault[] = {"cmd",  "v",           "sensor", "group",
                                      "mode", "probability", "size",   "offset", NULL};
  switch (op) {
  case HIL_CTL_STEP:
    return step;
  case HIL_CTL_GET_PARAM:
    return get;
  case HIL_CTL_SET_PARAM:
    return set;
  case HIL_CTL_FAULT:
    return fault;
  default:
    return none;
  }
}

static int decode_fault(hil_ctl_request *out, const cJSON *root, char *err, size_t err_sz) {
  char mode[16] = "";
  int rc = read_string(root, "mode", mode, sizeof mode, 1, err, err_sz);
  if (rc == HIL_OK && sens_fault_parse(mode) < 0) {
    rc = fail(err, err_sz, HIL_EMALFORMED,
              "mode: expected \"none\", \"stuck\", \"spike\", \"offset\" or \"dead\"");
  }
  if (rc != HIL_OK) {
    return rc;
  }
  out->fault.mode = (sens_fault_mode)sens_fault_parse(mode);
  if (read_string(root, "group", out->group, sizeof out->group, 0, err, err_sz) ||
      read_finite(root, "probability", &out->fault.probability, 0, err, err_sz) ||
      read_finite(root, "size", &out->fault.size, 0, err, err_sz) ||
      read_finite(root, "offset", &out->fault.offset, 0, err, err_sz)) {
    return HIL_EMALFORMED;
  }
  return HIL_OK;
}

/* The arguments of op, after "cmd" was recognised and the keys checked. */
static int decode_arguments(hil_ctl_request *out, const cJSON *root, char *err, size_t err_sz) {
  double n = 1;
  switch (out->op) {
  case HIL_CTL_STEP:
    if (cJSON_GetObjectItemCaseSensitive(root, "n") &&
        read_integer(root, "n", 1, (double)HIL_CTL_STEP_MAX, &n, err, err_sz)) {
      return HIL_EMALFORMED;
    }
    out->n = (uint64_t)n;
    return HIL_OK;
  case HIL_CTL_GET_PARAM:
    return read_string(root, "sensor", out->sensor, sizeof out->sensor, 1, err, err_sz) ||
                   read_string(root, "path", out->path, sizeof out->path, 0, err, err_sz)
               ? HIL_EMALFORMED
               : HIL_OK;
  case HIL_CTL_SET_PARAM:
    return read_string(root, "sensor", out->sensor, sizeof out->sensor, 1, err, err_sz) ||
                   read_string(root, "path", out->path, sizeof out->path, 1, err, err_sz) ||
                   read_finite(root, "value", &out->value, 1, err, err_sz)
               ? HIL_EMALFORMED
               : HIL_OK;
  case HIL_CTL_FAULT:
    return read_string(root, "sensor", out->sensor, sizeof out->sensor, 1, err, err_sz)
               ? HIL_EMALFORMED
               : decode_fault(out, root, err, err_sz);
  default:
    return HIL_OK;
  }
}

int hil_msg_decode_control(hil_ctl_request *out, const char *json, size_t len, char *err,
                           size_t err_sz) {
  memset(out, 0, sizeof *out);
  out->n = 1;
  out->fault.mode = SENS_FAULT_NONE;
  cJSON *root = parse_exact(json, len, err, err_sz);
  if (!root) {
    return HIL_EMALFORMED;
  }
  int rc = HIL_OK;
  const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(root, "cmd");
  if (!cJSON_IsObject(root)) {
    rc = fail(err, err_sz, HIL_EMALFORMED, "expected a JSON object");
  } else if (!cJSON_IsString(cmd) || !cmd->valuestring) {
    rc = fail(err, err_sz, HIL_EMALFORMED, "cmd: missing (expected a string)");
  } else {
    int op = 0;
    while (op < HIL_CTL_COUNT && strcmp(cmd->valuestring, hil_ctl_op_name((hil_ctl_op)op)) != 0) {
      op++;
    }
    out->op = (hil_ctl_op)op;
    if (op == HIL_CTL_COUNT) {
      rc = fail(err, err_sz, HIL_EMALFORMED, "cmd: unknown request \"%.40s\"", cmd->valuestring);
    }
  }
  if (rc == HIL_OK) {
    rc = check_keys(root, hil_ctl_op_name(out->op), control_keys(out->op), err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = check_version(root, 0, err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = decode_arguments(out, root, err, err_sz);
  }
  cJSON_Delete(root);
  return rc;
}

int hil_msg_encode_error(char *out, size_t out_sz, const char *message) {
  hil_jw w;
  hil_jw_init(&w, out, out_sz);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "ok");
  hil_jw_bool(&w, 0);
  hil_jw_key(&w, "error");
  hil_jw_string(&w, message);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}
