/* hil/json_writer.h: writes JSON text into a caller's fixed buffer, placing commas itself and
 * escaping strings as JSON requires; numbers through hil/number_format.h (the shortest digits
 * that read back to the same double; a non-finite value is written as null). No allocation: the
 * message encoders (hil/zmq/json_messages.h), the replay and the view run it at the
 * sensor rate. */
#ifndef ACHILLES_HIL_JSON_WRITER_H
#define ACHILLES_HIL_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HIL_JW_DEPTH 16

/* Writes JSON text into a fixed buffer, placing commas itself. The first overflow sticks:
 * hil_jw_finish() then returns HIL_ENOMEM. Value object, no allocation. */
typedef struct hil_jw {
  char *buf;
  size_t cap, len;
  int overflow;
  int depth;
  int after_key;
  unsigned char first[HIL_JW_DEPTH + 1]; /* no element written yet at this depth */
} hil_jw;

void hil_jw_init(hil_jw *w, char *buf, size_t cap);
void hil_jw_begin_object(hil_jw *w);
void hil_jw_end_object(hil_jw *w);
void hil_jw_begin_array(hil_jw *w);
void hil_jw_end_array(hil_jw *w);
void hil_jw_key(hil_jw *w, const char *key);
void hil_jw_string(hil_jw *w, const char *s); /* escaped as JSON requires */
void hil_jw_number(hil_jw *w, double v);      /* hil_num_format: round-trip digits or null */
void hil_jw_uint(hil_jw *w, uint64_t v);
void hil_jw_bool(hil_jw *w, int v);
void hil_jw_null(hil_jw *w);
/* A value already encoded as JSON (a sample message inside a snapshot), copied as it is. */
void hil_jw_raw(hil_jw *w, const char *json, size_t len);
/* Length of the text written (NUL-terminated), or HIL_ENOMEM when it did not fit. */
int hil_jw_finish(hil_jw *w);

/* For encoders that keep parts of a message already written (the sample forms): text appended
 * as it is, with no comma or quoting (inline: it runs for every number of every sample), and s
 * quoted and escaped between `before` and `after` (a comma, a colon). */
static inline void hil_jw_put(hil_jw *w, const char *s, size_t n) {
  if (w->overflow || n >= w->cap - w->len) {
    w->overflow = 1;
    return;
  }
  memcpy(w->buf + w->len, s, n);
  w->len += n;
  w->buf[w->len] = '\0';
}
static inline void hil_jw_puts(hil_jw *w, const char *s) { hil_jw_put(w, s, strlen(s)); }
void hil_jw_quoted_between(hil_jw *w, const char *before, const char *s, const char *after);

#endif
