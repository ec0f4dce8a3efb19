/* tests/tools/cli_suite.h: the fixture of the suites that run `achilles test` and `achilles
 * campaign` with the example firmware: a folder of their own, and the firmware's folder first on
 * the PATH (the shipped scenarios name it as `pd_firmware`, as a user's PATH would). */
#ifndef ACHILLES_TESTS_TOOLS_CLI_SUITE_H
#define ACHILLES_TESTS_TOOLS_CLI_SUITE_H

/* The group fixture: the suite folder (support/tmp.h's ts_tmp_setup; ts_tmp_dir() names it)
 * and PD_FIRMWARE_DIR put first on the PATH; ts_tmp_teardown removes the folder. */
int cli_suite_setup(void **state);

#endif
