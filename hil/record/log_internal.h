/* hil/record/log_internal.h: what the log's writer (log_write.c) and reader (log_read.c) share.
 * Internal to hil/record. */
#ifndef ACHILLES_HIL_LOG_INTERNAL_H
#define ACHILLES_HIL_LOG_INTERNAL_H

#include <string.h>

#include "hil/record/log.h"

/* Copies a NUL-terminated name into dst; HIL_LOG_EARG when it does not fit (dst unchanged). */
static inline int hil__log_copy_name(char *dst, size_t dst_sz, const char *src) {
  const size_t n = strlen(src);
  if (n >= dst_sz) {
    return HIL_LOG_EARG;
  }
  memcpy(dst, src, n + 1);
  return 0;
}

/* The value of a lowercase hex digit (the checksum of a record), or -1. */
static inline int hil__log_hexval(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  return -1;
}

#endif
