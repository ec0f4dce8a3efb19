/* tests/support/wait.h: waiting for a condition, with a deadline.
 *
 * A test waits for what it needs (a file, a byte, a counter), never for a fixed time, and a wait
 * that reaches its deadline fails the test naming what did not happen: a broken build fails at
 * once instead of hanging until ctest's timeout. Deadlines are generous (TS_DEADLINE_S): they
 * guard against a hang and are never a verdict on speed, so a loaded machine passes too.
 *
 *   TS_WAIT_FOR(board.acks > 0, "the HELLO_ACK");       polls until true or fails
 *   if (!ts_wait_file(path, TS_DEADLINE_S)) fail_msg(...);
 */
#ifndef ACHILLES_TESTS_SUPPORT_WAIT_H
#define ACHILLES_TESTS_SUPPORT_WAIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* the deadline of a wait that only guards against a hang, s */
#define TS_DEADLINE_S 20.0

/* CLOCK_MONOTONIC, s */
double ts_now(void);
/* Sleeps s seconds: only between two looks at a condition (TS_WAIT_FOR does it for you). */
void ts_sleep(double s);

/* Polls cond every millisecond until it holds; after TS_DEADLINE_S fails the test with
 * "waited N s for WHAT". cond is evaluated in the caller's scope (it may call a function that
 * reads a socket or a pty, advancing the test's state). */
#define TS_WAIT_FOR(cond, what)                                                                    \
  do {                                                                                             \
    const double ts_until_ = ts_now() + TS_DEADLINE_S;                                             \
    while (!(cond)) {                                                                              \
      if (ts_now() > ts_until_) {                                                                  \
        fail_msg("waited %.0f s for %s (%s)", TS_DEADLINE_S, what, #cond);                         \
      }                                                                                            \
      ts_sleep(1e-3);                                                                              \
    }                                                                                              \
  } while (0)

/* 1 when fd has something to read (or its peer hung up) within seconds, else 0. */
int ts_wait_readable(int fd, double seconds);
/* 1 when path exists (lstat: a link counts before its target does) within seconds, else 0. */
int ts_wait_file(const char *path, double seconds);

#endif
