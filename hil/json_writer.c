/* hil/json_writer.c: JSON text into a fixed buffer, commas placed, strings escaped; see
 * json_writer.h. */
#include "hil/json_writer.h"

#include <string.h>

#include "hil/error.h"
#include "hil/number_format.h"

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

/* the comma before a value, unless it follows a key or opens its container */
static void jw_value_prefix(hil_jw *w) {
  if (w->after_key) {
    w->after_key = 0;
    return;
  }
  if (!w->first[w->depth]) {
    hil_jw_put(w, ",", 1);
  }
  w->first[w->depth] = 0;
}

static void jw_open(hil_jw *w, const char *bracket) {
  jw_value_prefix(w);
  hil_jw_puts(w, bracket);
  if (w->depth >= HIL_JW_DEPTH) {
    w->overflow = 1;
    return;
  }
  w->first[++w->depth] = 1;
}

static void jw_close(hil_jw *w, const char *bracket) {
  hil_jw_puts(w, bracket);
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
void hil_jw_quoted_between(hil_jw *w, const char *before, const char *s, const char *after) {
  if (!w->overflow) {
    char *o = jw_plain_between(w, before, s, after);
    if (o) {
      *o = '\0';
      w->len = (size_t)(o - w->buf);
      return;
    }
  }
  hil_jw_put(w, before, strlen(before));
  hil_jw_put(w, "\"", 1);
  for (const char *p = s; *p;) {
    const size_t n = jw_plain_run(p);
    hil_jw_put(w, p, n);
    p += n;
    if (*p) {
      char esc[6];
      hil_jw_put(w, esc, jw_escape((unsigned char)*p++, esc));
    }
  }
  hil_jw_put(w, "\"", 1);
  hil_jw_put(w, after, strlen(after));
}

void hil_jw_key(hil_jw *w, const char *key) {
  const char *comma = w->first[w->depth] ? "" : ",";
  w->first[w->depth] = 0;
  hil_jw_quoted_between(w, comma, key, ":");
  w->after_key = 1;
}

void hil_jw_string(hil_jw *w, const char *s) {
  jw_value_prefix(w);
  hil_jw_quoted_between(w, "", s, "");
}

void hil_jw_number(hil_jw *w, double v) {
  char num[HIL_NUM_MAX];
  const int n = hil_num_format(num, v);
  jw_value_prefix(w);
  hil_jw_put(w, num, (size_t)n);
}

void hil_jw_uint(hil_jw *w, uint64_t v) {
  char num[24];
  char *p = num + sizeof num;
  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  jw_value_prefix(w);
  hil_jw_put(w, p, (size_t)(num + sizeof num - p));
}

void hil_jw_bool(hil_jw *w, int v) {
  jw_value_prefix(w);
  hil_jw_puts(w, v ? "true" : "false");
}

void hil_jw_raw(hil_jw *w, const char *json, size_t len) {
  jw_value_prefix(w);
  hil_jw_put(w, json, len);
}

void hil_jw_null(hil_jw *w) {
  jw_value_prefix(w);
  hil_jw_puts(w, "null");
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
