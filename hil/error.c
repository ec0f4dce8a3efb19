/* hil/error.c: names of the status codes; text from outside made safe to print. */
#include "hil/error.h"

const char *hil_strerror(int code) {
  switch (code) {
#define HIL_X_CASE(name, value, text)                                                          \
  case value:                                                                                  \
    return text;
    HIL_ERRORS(HIL_X_CASE)
#undef HIL_X_CASE
  default:
    return "unknown error";
  }
}

/* Length of the UTF-8 sequence at p (1 to 4), 0 when p does not start a well-formed one. */
static int utf8_length(const unsigned char *p) {
  const int len = *p < 0x80                  ? 1
                  : (*p >= 0xc2 && *p <= 0xdf) ? 2
                  : (*p >= 0xe0 && *p <= 0xef) ? 3
                  : (*p >= 0xf0 && *p <= 0xf4) ? 4
                                               : 0;
  for (int i = 1; i < len; i++) {
    if ((p[i] & 0xc0) != 0x80) {
      return 0;
    }
  }
  /* RFC 3629: no overlong three- and four-byte forms, no surrogates, nothing past U+10FFFF */
  if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f) ||
      (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] > 0x8f)) {
    return 0;
  }
  return len;
}

char *hil_printable(char *out, size_t out_sz, const char *text) {
  const unsigned char *p = (const unsigned char *)text;
  size_t n = 0;
  while (*p) {
    const int len = utf8_length(p);
    const int c1 = len == 2 && p[0] == 0xc2 && p[1] <= 0x9f;
    if (len == 0 || c1 || (len == 1 && (*p < 0x20 || *p == 0x7f))) {
      static const char hex[] = "0123456789abcdef";
      const unsigned char b = c1 ? p[1] : *p;
      if (n + 4 >= out_sz) {
        break;
      }
      out[n++] = '\\';
      out[n++] = 'x';
      out[n++] = hex[b >> 4];
      out[n++] = hex[b & 15];
      p += c1 ? 2 : 1;
      continue;
    }
    if (n + (size_t)len >= out_sz) {
      break;
    }
    for (int i = 0; i < len; i++) {
      out[n++] = (char)p[i];
    }
    p += len;
  }
  if (out_sz > 0) {
    out[n < out_sz ? n : out_sz - 1] = '\0';
  }
  return out;
}
