/* tests/hil/test_command.c: command validation, clamping and the watchdog. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "hil/runtime/command.h"
#include "hil/error.h"
#include "support/model.h"
#include "support/skip.h"

/* Two joints; "m1" drives j1, "s1" and "s2" both drive j2 (so "j2" is ambiguous). */
static const char *robot =
    "{\"gravity\":[0,0,0],\"bodies\":["
    "{\"name\":\"b1\",\"parent\":\"world\",\"joint\":{\"name\":\"j1\",\"type\":\"hinge\",\"axis\":"
    "[0,0,1]},\"inertial\":{\"mass\":1,\"inertia\":[1,1,1,0,0,0]}},"
    "{\"name\":\"b2\",\"parent\":\"b1\",\"joint\":{\"name\":\"j2\",\"type\":\"hinge\",\"axis\":"
    "[0,0,1]},\"inertial\":{\"mass\":1,\"inertia\":[1,1,1,0,0,0]}}],"
    "\"actuators\":[{\"name\":\"m1\",\"joint\":\"j1\",\"type\":\"motor\",\"ctrlrange\":[-2,2]},"
    "{\"name\":\"s1\",\"joint\":\"j2\",\"type\":\"motor\"},"
    "{\"name\":\"s2\",\"joint\":\"j2\",\"type\":\"motor\"}]}";

typedef struct fixture {
  sim_model *m;
  sim_data *d;
  hil_commands c;
} fixture;

static int setup(void **state) {
  static fixture f;
  f.m = ts_model(robot);
  f.d = sim_data_new(f.m);
  *state = &f;
  return hil_commands_init(&f.c, f.m, 0.1, HIL_TIMEOUT_ZERO) == HIL_OK ? 0 : -1;
}

static int teardown(void **state) {
  fixture *f = *state;
  hil_commands_free(&f->c);
  ts_sim_free(f->m, f->d);
  return 0;
}

static void test_names(void **state) {
  fixture *f = *state;
  assert_int_equal(hil_commands_find(&f->c, "m1"), 0);
  assert_int_equal(hil_commands_find(&f->c, "j1"), 0); /* the only actuator on j1 */
  assert_int_equal(hil_commands_find(&f->c, "j2"), -1); /* two actuators: ambiguous */
  assert_int_equal(hil_commands_find(&f->c, "s2"), 2);
  assert_int_equal(hil_commands_find(&f->c, "nope"), -1);
}

static void test_validation(void **state) {
  fixture *f = *state;
  hil_commands_clear(&f->c);
  hil_command_counters before = f->c.counters;
  assert_int_equal(hil_commands_submit_named(&f->c, "m1", 1.5, 0.0), HIL_OK);
  assert_int_equal(hil_commands_submit_named(&f->c, "m1", 7.0, 0.0), HIL_OK); /* clamped */
  assert_int_equal(hil_commands_submit_named(&f->c, "m1", NAN, 0.0), HIL_ENONFINITE);
  assert_int_equal(hil_commands_submit_named(&f->c, "m1", -INFINITY, 0.0), HIL_ENONFINITE);
  assert_int_equal(hil_commands_submit_named(&f->c, "zz", 1.0, 0.0), HIL_EUNKNOWN);
  assert_int_equal(hil_commands_submit(&f->c, 99, 1.0, 0.0), HIL_EUNKNOWN);
  assert_int_equal(hil_commands_submit(&f->c, -1, 1.0, 0.0), HIL_EUNKNOWN);
  hil_commands_apply(&f->c, f->d, 0.01);
  assert_true(f->d->ctrl[0] == 2.0); /* the clamped value stayed; NaN never replaced it */
  assert_int_equal(f->c.counters.accepted - before.accepted, 2);
  assert_int_equal(f->c.counters.clamped - before.clamped, 1);
  assert_int_equal(f->c.counters.rejected_nonfinite - before.rejected_nonfinite, 2);
  assert_int_equal(f->c.counters.rejected_unknown - before.rejected_unknown, 3);
  /* the physics sees only finite, in-range commands */
  sim_forward(f->m, f->d);
  assert_true(isfinite(f->d->qacc[0]) && isfinite(f->d->qacc[1]));
}

static void test_watchdog_zero_and_recover(void **state) {
  fixture *f = *state;
  hil_commands_clear(&f->c);
  uint64_t trips = f->c.counters.watchdog_trips;
  hil_commands_submit_named(&f->c, "s1", 0.7, 1.00);
  hil_commands_apply(&f->c, f->d, 1.05);
  assert_true(f->d->ctrl[1] == 0.7);
  hil_commands_apply(&f->c, f->d, 1.09); /* just inside the timeout */
  assert_true(f->d->ctrl[1] == 0.7);
  hil_commands_apply(&f->c, f->d, 1.11); /* older than 0.1 s: zeroed, one trip */
  assert_true(f->d->ctrl[1] == 0.0);
  hil_commands_apply(&f->c, f->d, 1.50); /* still tripped: no second count */
  assert_int_equal(f->c.counters.watchdog_trips - trips, 1);
  assert_true(f->c.slots[1].timed_out);
  hil_commands_submit_named(&f->c, "s1", -0.3, 1.51); /* control is back at once */
  hil_commands_apply(&f->c, f->d, 1.52);
  assert_true(f->d->ctrl[1] == -0.3);
  assert_false(f->c.slots[1].timed_out);
  /* actuators never commanded read zero and do not count as trips */
  assert_true(f->d->ctrl[2] == 0.0);
  assert_int_equal(f->c.counters.watchdog_trips - trips, 1);
}

static void test_watchdog_hold(void **state) {
  fixture *f = *state;
  f->c.on_timeout = HIL_TIMEOUT_HOLD;
  hil_commands_clear(&f->c);
  hil_commands_submit_named(&f->c, "m1", 1.25, 0.0);
  hil_commands_apply(&f->c, f->d, 5.0);
  assert_true(f->d->ctrl[0] == 1.25);
  assert_true(f->c.slots[0].timed_out); /* reported as timed out even when holding */
  f->c.on_timeout = HIL_TIMEOUT_ZERO;
}

static void test_all_fresh(void **state) {
  fixture *f = *state;
  hil_commands_clear(&f->c);
  hil_commands_apply(&f->c, f->d, 0);
  assert_false(hil_commands_all_fresh(&f->c));
  hil_commands_submit_named(&f->c, "m1", 0, 0);
  hil_commands_submit_named(&f->c, "s1", 0, 0);
  assert_false(hil_commands_all_fresh(&f->c));
  hil_commands_submit_named(&f->c, "s2", 0, 0);
  assert_true(hil_commands_all_fresh(&f->c));
  hil_commands_apply(&f->c, f->d, 0);
  assert_false(hil_commands_all_fresh(&f->c));
}

/* Issue 9: the boundary. A command is stale when it is OLDER than the timeout: submitted at
 * t = 0 and applied at exactly t = 0.1 s (the fixture's timeout) it still holds; one 1 kHz tick
 * later it trips. (0.1 - 0.0 is exactly 0.1 in binary, so the comparison meets the boundary.) */
static void test_watchdog_boundary(void **state) {
  fixture *f = *state;
  hil_commands_clear(&f->c);
  const uint64_t trips = f->c.counters.watchdog_trips;
  assert_int_equal(hil_commands_submit_named(&f->c, "m1", 1.5, 0.0), HIL_OK);
  hil_commands_apply(&f->c, f->d, 0.1);
  assert_true(f->d->ctrl[0] == 1.5);
  assert_false(f->c.slots[0].timed_out);
  assert_int_equal(f->c.counters.watchdog_trips - trips, 0);
  hil_commands_apply(&f->c, f->d, 0.101);
  assert_true(f->d->ctrl[0] == 0.0);
  assert_true(f->c.slots[0].timed_out);
  assert_int_equal(f->c.counters.watchdog_trips - trips, 1);
}

/* the observer a recording uses sees the watchdog's zero: once per trip, value 0, result
 * HIL_COMMAND_WATCHDOG (a log then holds every input the physics got; docs/logs.md) */
typedef struct seen {
  int calls, watchdog, actuator;
  double value;
} seen;

static void observe(void *user, int actuator, const char *name, double value, int result,
                    int clamped) {
  (void)name, (void)clamped;
  seen *s = user;
  s->calls++;
  if (result == HIL_COMMAND_WATCHDOG) {
    s->watchdog++;
    s->actuator = actuator;
    s->value = value;
  }
}

static void test_watchdog_observed(void **state) {
  fixture *f = *state;
  seen s = {0, 0, -1, NAN};
  hil_commands_clear(&f->c);
  f->c.observer = observe;
  f->c.observer_user = &s;
  hil_commands_submit_named(&f->c, "s1", 0.7, 1.00);
  hil_commands_apply(&f->c, f->d, 1.05);
  assert_int_equal(s.watchdog, 0);
  hil_commands_apply(&f->c, f->d, 1.11); /* trips */
  hil_commands_apply(&f->c, f->d, 1.20); /* still tripped: not again */
  assert_int_equal(s.watchdog, 1);
  assert_int_equal(s.actuator, 1);
  assert_true(s.value == 0.0);
  f->c.on_timeout = HIL_TIMEOUT_HOLD; /* holding: the input did not change, nothing to record */
  hil_commands_submit_named(&f->c, "s1", 0.7, 2.00);
  hil_commands_apply(&f->c, f->d, 3.00);
  assert_int_equal(s.watchdog, 1);
  f->c.on_timeout = HIL_TIMEOUT_ZERO;
  f->c.observer = NULL;
}

TS_MAIN_WITH(setup, teardown, test_names, test_validation, test_watchdog_zero_and_recover,
                              test_watchdog_hold, test_all_fresh, test_watchdog_boundary,
                              test_watchdog_observed)
