/* tests/support/wait.c: waits with deadlines (wait.h). */
#include "support/wait.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sys/stat.h>
#include <time.h>

double ts_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void ts_sleep(double s) {
  if (!(s > 0)) {
    return;
  }
  struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

int ts_wait_readable(int fd, double seconds) {
  const double until = ts_now() + seconds;
  for (;;) {
    const double left = until - ts_now();
    struct pollfd p = {.fd = fd, .events = POLLIN};
    const int rc = poll(&p, 1, left > 0 ? (int)ceil(left * 1e3) : 0);
    if (rc > 0) {
      return 1;
    }
    if (rc == 0 || errno != EINTR || left <= 0) {
      return 0;
    }
  }
}

int ts_wait_file(const char *path, double seconds) {
  const double until = ts_now() + seconds;
  struct stat st;
  while (lstat(path, &st) != 0) {
    if (ts_now() > until) {
      return 0;
    }
    ts_sleep(1e-3);
  }
  return 1;
}
