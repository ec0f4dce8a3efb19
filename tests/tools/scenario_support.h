/* tests/tools/scenario_support.h: what the tests of `achilles test` and `achilles campaign` share —
 * running the achilles binary with the example firmware on the PATH, temporary folders and files,
 * and reading results. */
#ifndef ACHILLES_TESTS_TOOLS_SCENARIO_SUPPORT_H
#define ACHILLES_TESTS_TOOLS_SCENARIO_SUPPORT_H

#include <stddef.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

/* A fresh folder under /tmp (mkdtemp), removed with its content by st_rmdir. */
void st_tmpdir(char *out, size_t out_sz, const char *tag);
void st_rmdir(const char *dir);

/* Writes text to dir/name; the path into out. */
void st_write(char *out, size_t out_sz, const char *dir, const char *name, const char *text);
/* The whole file (static buffer, "" when missing). */
const char *st_slurp(const char *path);

/* Starts argv (argv[0] a path) with PATH led by the example firmware's folder, stdout and
 * stderr into out_path and err_path (NULL: /dev/null), in its own process group. */
pid_t st_spawn(char *const argv[], const char *out_path, const char *err_path);
/* Its exit status (128 + signal when killed); kills it (and its group) after timeout_s. */
int st_wait(pid_t pid, double timeout_s);
/* st_spawn then st_wait. */
int st_run(char *const argv[], const char *out_path, const char *err_path, double timeout_s);

/* dir/result.json parsed (the caller deletes it); fails the test when missing. */
cJSON *st_result(const char *dir);
/* The names of the failed checks of a result, joined with "|" (static buffer). */
const char *st_failed_checks(const cJSON *result);
/* A string member of a result ("" when missing). */
const char *st_string(const cJSON *obj, const char *key);

/* Skips the test (exit code 77 for CTest through cmocka's skip) unless CI=true, where a missing
 * tool is a failure. */
void st_need(const char *tool, const char *why);

#endif
