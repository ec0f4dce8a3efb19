/* hil/error.h: status codes of the hardware-in-the-loop runtime, and text for messages.
 * Functions return 0 (HIL_OK) or a negative code; hil_strerror() names it. */
#ifndef ACHILLES_HIL_ERROR_H
#define ACHILLES_HIL_ERROR_H

#define HIL_ERRORS(X)                                                                          \
  X(HIL_OK, 0, "success")                                                                      \
  X(HIL_EINVAL, -1, "invalid argument")                                                        \
  X(HIL_ENOMEM, -2, "out of memory")                                                           \
  X(HIL_ENONFINITE, -3, "value is NaN or infinite")                                            \
  X(HIL_EUNKNOWN, -4, "unknown actuator, joint or sensor")                                     \
  X(HIL_EMALFORMED, -5, "malformed message")                                                   \
  X(HIL_EIO, -6, "input/output error")                                                         \
  X(HIL_ECONFIG, -7, "bad configuration")                                                      \
  X(HIL_ESTATE, -8, "not possible in the current state")                                       \
  X(HIL_ESYSTEM, -9, "the operating system refused")

typedef enum hil_status_code {
#define HIL_X_ENUM(name, value, text) name = value,
  HIL_ERRORS(HIL_X_ENUM)
#undef HIL_X_ENUM
} hil_status_code;

const char *hil_strerror(int code);

#include <stddef.h>

/* Copies text from outside (a board's name, a file's header) into out for a message: control
 * characters (C0, DEL, C1 whether UTF-8 or raw) and bytes that are not UTF-8 become \xNN, so
 * that what is echoed cannot drive the terminal. Always NUL-terminates (out_sz > 0); a copy cut
 * short ends at a whole character. Returns out. */
char *hil_printable(char *out, size_t out_sz, const char *text);

#endif
