/* tests/support/skip.c: skips counted and reported through the exit code (skip.h). */
#define _GNU_SOURCE /* program_invocation_short_name */
#include "support/skip.h"

#include <errno.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int skipped;

int ts_skipped(void) {
  return skipped;
}

static int under_ci(void) {
  const char *ci = getenv("CI");
  return ci && (strcmp(ci, "true") == 0 || strcmp(ci, "1") == 0);
}

int ts_hidden(const char *reference) {
  const char *list = getenv("ACHILLES_TEST_HIDE");
  const size_t n = strlen(reference);
  for (const char *p = list; p && *p;) {
    p += strspn(p, " ,");
    const size_t len = strcspn(p, " ,");
    if (len == n && strncmp(p, reference, n) == 0) {
      return 1;
    }
    p += len;
  }
  return 0;
}

int ts_reference(const char *reference, int available) {
  const int hidden = ts_hidden(reference);
  if (available && !hidden) {
    return 1;
  }
  const char *why = hidden ? "hidden by ACHILLES_TEST_HIDE" : "not installed";
  if (under_ci()) {
    fail_msg("%s is %s, and CI=true requires every reference (tools/scripts/bootstrap.sh deps "
             "installs it)",
             reference, why);
  }
  skipped++;
  print_message("SKIP: %s is %s: this comparison did not run\n", reference, why);
  return 0;
}

void ts_skip_note(const char *fmt, ...) {
  char why[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  skipped++;
  print_message("SKIP: %s\n", why);
}

int ts_result(int failed) {
  if (failed > 0) { /* an exit status: never 77 (skipped), never a multiple of 256 (passed) */
    return failed < TS_SKIP_EXIT ? failed : 1;
  }
  if (skipped > 0) {
    fprintf(stderr, "%d test(s) skipped: reported to ctest as skipped (exit %d)\n", skipped,
            TS_SKIP_EXIT);
    return TS_SKIP_EXIT;
  }
  return 0;
}

int ts_run_group(const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
                 CMFixtureFunction teardown) {
  return ts_result(
      _cmocka_run_group_tests(program_invocation_short_name, tests, n, setup, teardown));
}

static const char *missing_reference;

static void test_reference_missing(void **state) {
  (void)state;
  TS_REQUIRE(missing_reference, 0);
}

int ts_run_missing(const char *reference) {
  missing_reference = reference;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_reference_missing)};
  return ts_run(tests);
}
