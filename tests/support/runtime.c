/* tests/support/runtime.c: a runtime and its loop on a thread (runtime.h). */
#include "support/runtime.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support/wait.h"

void ts_options(hil_options *o, hil_mode mode, double duration_s) {
  hil_options_default(o);
  o->mode = mode;
  o->duration_s = duration_s;
  o->quiet = 1;
  o->status_period_s = 0;
}

hil_runtime *ts_runtime_with(const char *config, const hil_options *o) {
  char err[1024];
  hil_runtime *rt = hil_runtime_new(config, o, err, sizeof err);
  if (!rt) {
    fail_msg("%s", err);
  }
  return rt;
}

hil_runtime *ts_runtime(const char *config, hil_mode mode, double duration_s) {
  hil_options o;
  ts_options(&o, mode, duration_s);
  return ts_runtime_with(config, &o);
}

static void *loop_main(void *arg) {
  ts_loop *l = arg;
  l->rc = hil_runtime_run(l->rt);
  atomic_store(&l->done, 1);
  return NULL;
}

void ts_loop_start(ts_loop *l, hil_runtime *rt) {
  l->rt = rt;
  l->rc = 0;
  atomic_init(&l->done, 0);
  if (pthread_create(&l->thread, NULL, loop_main, l) != 0) {
    fail_msg("cannot start the loop's thread");
  }
}

int ts_loop_done(ts_loop *l) {
  return atomic_load(&l->done);
}

int ts_loop_wait_steps(ts_loop *l, uint64_t steps, double seconds) {
  const double until = ts_now() + seconds;
  while (hil_runtime_steps(l->rt) < steps && !atomic_load(&l->done) && ts_now() < until) {
    ts_sleep(1e-3);
  }
  return hil_runtime_steps(l->rt) >= steps;
}

int ts_loop_stop(ts_loop *l) {
  const int ended = atomic_load(&l->done);
  if (!ended) {
    hil_runtime_request_stop(l->rt);
  }
  pthread_join(l->thread, NULL);
  return ended;
}

int ts_loop_join(ts_loop *l, double seconds) {
  const double until = ts_now() + seconds;
  while (!atomic_load(&l->done) && ts_now() < until) {
    ts_sleep(1e-3);
  }
  if (!ts_loop_stop(l)) {
    fail_msg("the run did not end by itself within %g s", seconds);
  }
  return l->rc;
}
