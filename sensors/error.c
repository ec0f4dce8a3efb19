/* sensors/error.c: sens_strerror and the message helper. */
#include "sensors/error.h"

#include <stdarg.h>
#include <stdio.h>

const char *sens_strerror(int code) {
  switch (code) {
#define SENS_X_CASE(name, value, text) \
  case value:                          \
    return text;
    SENS_ERRORS(SENS_X_CASE)
#undef SENS_X_CASE
  default:
    return "unknown error";
  }
}

int sens_fail(char *err, size_t err_sz, int code, const char *fmt, ...) {
  if (err && err_sz > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_sz, fmt, ap);
    va_end(ap);
  }
  return code;
}
