/* hil/error.c: names of the status codes. */
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
