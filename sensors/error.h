/* sensors/error.h: error codes of the sensors module.
 *
 * Every function of sens_ that can fail returns 0 or one of these negative codes, and (where it
 * takes `err, err_sz`) writes a message naming the place (file, JSON path, sensor) and what was
 * expected. The table below generates both the enum and sens_strerror().
 */
#ifndef ACHILLES_SENSORS_ERROR_H
#define ACHILLES_SENSORS_ERROR_H

#include <stddef.h>

#define SENS_ERRORS(X)                                                      \
  X(SENS_OK, 0, "success")                                                  \
  X(SENS_EINVAL, -1, "invalid parameter")                                   \
  X(SENS_ENOMEM, -2, "out of memory")                                       \
  X(SENS_EIO, -3, "cannot read file")                                       \
  X(SENS_EJSON, -4, "malformed JSON")                                       \
  X(SENS_ENOTFOUND, -5, "no such sensor, channel, joint, body or site")

typedef enum sens_err {
#define SENS_X_ENUM(name, value, text) name = value,
  SENS_ERRORS(SENS_X_ENUM)
#undef SENS_X_ENUM
} sens_err;

/* A static description of a code; "unknown error" for anything else. */
const char *sens_strerror(int code);

/* Writes a formatted message into err (when err_sz > 0) and returns code: lets a failing
 * function end with `return sens_fail(err, err_sz, SENS_EINVAL, "...", ...)`. */
int sens_fail(char *err, size_t err_sz, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
