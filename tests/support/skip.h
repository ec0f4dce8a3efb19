/* tests/support/skip.h: a test that cannot run is reported as skipped, never as passed.
 *
 * cmocka 1.1.5 counts a skip() as a pass in the program's exit status, so ctest would say
 * "Passed" for a comparison that never ran. Here a skip is counted, and ts_run (the suite's
 * main) exits with 77 when something was skipped and nothing failed; achilles_test() gives
 * every test SKIP_RETURN_CODE 77, so ctest reports the suite as skipped, with the reason
 * printed in its output.
 *
 * Two kinds of skip:
 *   TS_REQUIRE(reference, available)  a reference the setup installs (libmujoco-dev, dart-doc,
 *                                     python3-zmq, gnuplot): skipped where it is missing, a
 *                                     FAILURE under CI=true (tools/scripts/bootstrap.sh installs it
 *                                     there, so missing means broken). ACHILLES_TEST_HIDE, a
 *                                     list of names ("libmujoco-dev dart-doc"), makes a
 *                                     reference missing on purpose.
 *   TS_SKIP(why...)                   a condition of the machine (not root, no SCHED_FIFO):
 *                                     skipped, CI or not.
 * Both end the running test (cmocka's skip()). */
#ifndef ACHILLES_TESTS_SUPPORT_SKIP_H
#define ACHILLES_TESTS_SUPPORT_SKIP_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <unistd.h>

#include "support/each.h"

/* the exit code ctest reads as "skipped" (SKIP_RETURN_CODE) */
#define TS_SKIP_EXIT 77

/* 1 when reference can be used: available (a build-time or run-time check) and not named by
 * ACHILLES_TEST_HIDE. Otherwise prints why, counts a skip and returns 0, or under CI=true fails
 * the test. Use TS_REQUIRE in a test; this is for helpers that decide before a test runs. */
int ts_reference(const char *reference, int available);
/* 1 when ACHILLES_TEST_HIDE names reference. */
int ts_hidden(const char *reference);

#define TS_REQUIRE(reference, available)                                                          \
  do {                                                                                             \
    if (!ts_reference(reference, available)) {                                                     \
      skip();                                                                                      \
    }                                                                                              \
  } while (0)

/* A reference that is a file a package installs (dart-doc's robots, MuJoCo's sample models). */
#define TS_REQUIRE_FILE(reference, path) TS_REQUIRE(reference, access(path, R_OK) == 0)

void ts_skip_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define TS_SKIP(...)                                                                               \
  do {                                                                                             \
    ts_skip_note(__VA_ARGS__);                                                                     \
    skip();                                                                                        \
  } while (0)

/* how many tests skipped so far */
int ts_skipped(void);

/* The suite's main: runs the group and returns ts_result of its failures. ts_run_with takes
 * cmocka group fixtures. */
int ts_run_group(const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
                 CMFixtureFunction teardown);
/* The exit status of a suite with failed failures: failed (never 77), or 77 when none failed
 * and some test skipped, or 0. For a main that runs several groups. */
int ts_result(int failed);
/* The main of a suite whose every test needs reference, where it is missing or hidden: one
 * test that says so and skips (fails under CI=true). */
int ts_run_missing(const char *reference);
/* A suite's main from its list of tests, with ts_run or cmocka group fixtures:
 *   TS_MAIN(test_a, test_b, test_c)
 *   TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_a, test_b)
 * (a suite whose tests have their own fixtures writes its CMUnitTest array and calls ts_run). */
#define TS_MAIN(...) TS_MAIN_WITH(NULL, NULL, __VA_ARGS__)
/* A test that is one call of the suite's check with its case, for a table of cases:
 *   TS_TEST(test_euler, check_replay(SIM_INTEGRATOR_EULER))
 *   TS_TEST(test_rk4, check_replay(SIM_INTEGRATOR_RK4)) */
#define TS_TEST(name, ...)                                                                         \
  static void name(void **state) {                                                                 \
    (void)state;                                                                                   \
    __VA_ARGS__;                                                                                   \
  }
#define TS_MAIN_WITH(setup, teardown, ...)                                                         \
  int main(void) {                                                                                 \
    const struct CMUnitTest ts_tests_[] = {TS_EACH(cmocka_unit_test, __VA_ARGS__)};                \
    return ts_run_with(ts_tests_, setup, teardown);                                                \
  }

#define ts_run(tests) ts_run_group(tests, sizeof(tests) / sizeof((tests)[0]), NULL, NULL)
#define ts_run_with(tests, setup, teardown)                                                        \
  ts_run_group(tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown)

#endif
