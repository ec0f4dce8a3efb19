/* hil/runtime/status.c: the names of what status.h declares, so that whoever formats a status
 * (the messages, the log, the view) needs nothing of the runtime that fills it. */
#include "hil/runtime/status.h"

const char *hil_mode_name(hil_mode mode) {
  switch (mode) {
  case HIL_MODE_LOCKSTEP:
    return "lockstep";
  case HIL_MODE_FAST:
    return "fast";
  case HIL_MODE_REALTIME:
  default:
    return "realtime";
  }
}
