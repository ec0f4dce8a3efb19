/* hil/clock.c: monotonic wall time in seconds; see clock.h. */
#include "hil/clock.h"

#include <time.h>

double hil_monotonic_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
