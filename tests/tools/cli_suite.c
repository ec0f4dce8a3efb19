/* tests/tools/cli_suite.c: see cli_suite.h. */
#define _DEFAULT_SOURCE /* setenv */
#include "cli_suite.h"

#include <stdio.h>
#include <stdlib.h>

#include "support/tmp.h"

int cli_suite_setup(void **state) {
  if (ts_tmp_setup(state) != 0) {
    return -1;
  }
  char path[8192];
  snprintf(path, sizeof path, "%s:%s", PD_FIRMWARE_DIR, getenv("PATH") ? getenv("PATH") : "");
  return setenv("PATH", path, 1);
}
