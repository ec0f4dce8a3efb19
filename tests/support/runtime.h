/* tests/support/runtime.h: a runtime built the way tests build it, and its loop on a thread.
 *
 *   hil_runtime *rt = ts_runtime(CONFIG, HIL_MODE_LOCKSTEP, 1.0);   quiet, no status period
 *   ts_loop loop;
 *   ts_loop_start(&loop, rt);       hil_runtime_run on a thread of its own
 *   ... the test plays the controller ...
 *   ts_loop_stop(&loop);            a stop request (unless it ended), then join
 *   hil_runtime_destroy(&rt);
 *
 * Link achilles_test_runtime (with achilles_hil). */
#ifndef ACHILLES_TESTS_SUPPORT_RUNTIME_H
#define ACHILLES_TESTS_SUPPORT_RUNTIME_H

#include <pthread.h>
#include <stdatomic.h>

#include "hil/runtime/runtime.h"

/* hil_options_default, then the mode, the duration (0: until stopped), quiet and no periodic
 * status: what most tests want before they change a field or two. */
void ts_options(hil_options *o, hil_mode mode, double duration_s);
/* hil_runtime_new(config, o); fails the test with the loader's message when it cannot. */
hil_runtime *ts_runtime_with(const char *config, const hil_options *o);
/* ts_options then ts_runtime_with. */
hil_runtime *ts_runtime(const char *config, hil_mode mode, double duration_s);

typedef struct ts_loop {
  hil_runtime *rt;
  pthread_t thread;
  atomic_int done; /* the loop returned (by itself or stopped) */
  int rc;          /* hil_runtime_run's result, once done */
} ts_loop;

void ts_loop_start(ts_loop *l, hil_runtime *rt);
/* 1 once hil_runtime_run has returned. */
int ts_loop_done(ts_loop *l);
/* Waits up to seconds until the runtime has made at least steps steps or its loop ended;
 * returns 1 when the steps were reached. */
int ts_loop_wait_steps(ts_loop *l, uint64_t steps, double seconds);
/* Requests a stop unless the loop ended, and joins it. Returns 1 when it had ended by itself
 * (a duration reached, a fatal error) before the request. */
int ts_loop_stop(ts_loop *l);
/* Waits up to seconds for a loop that should end by itself, then joins it; the test fails
 * (after stopping it) when it did not end. Returns hil_runtime_run's result. */
int ts_loop_join(ts_loop *l, double seconds);

#endif
