/* tests/tools/test_cli_campaign.c: `achilles campaign` on small campaigns (runs of 0.05 s) — run
 * ids, the expanded scenarios, what --resume skips and what it runs again, a crashed run kept as
 * a failed one, the gathered tables, and a spec that is wrong. The 200-run campaign (1 and 2
 * workers, an interruption, Slurm) is tests/tools/test_campaign.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "cli_suite.h"
#include "support/skip.h"
#include "support/spawn.h"
#include "support/tmp.h"

/* a scenario of 0.05 s holding the club arm, with a check the noise axis can break */
static void write_scenario(char *path, size_t path_sz) {
  char text[2048];
  snprintf(text, sizeof text,
           "{\"name\": \"tiny\", \"robot\": \"%s/configs/club_arm.json\", \"seed\": 1,"
           " \"duration_s\": 0.05, \"sensor_overrides\": [{\"sensor\": \"enc_*\", \"set\": "
           "{\"noise.white.sigma\": 0.00001}}], \"firmware\": {\"command\": [\"pd_firmware\","
           " \"{serial}\", \"--quiet\"]}, \"checks\": [{\"name\": \"shoulder still\", \"type\": "
           "\"settle\", \"joint\": \"shoulder\", \"value\": 0, \"tolerance\": 0.02}]}\n",
           ACHILLES_SOURCE_DIR);
  ts_path(path, path_sz, ts_tmp_dir(), "tiny.json");
  ts_write_file(path, text);
}

/* a spec over it: 2 seeds x 2 noise levels (the second breaks the check) */
static void write_spec(char *path, size_t path_sz, const char *name, const char *extra) {
  char text[2048], scenario[512];
  write_scenario(scenario, sizeof scenario);
  snprintf(text, sizeof text,
           "{\"name\": \"%s\", \"scenario\": \"tiny.json\", \"workers\": 2, \"axes\": ["
           "{\"name\": \"seed\", \"path\": \"/seed\", \"values\": {\"from\": 1, \"to\": 2}},"
           "{\"name\": \"noise\", \"path\": \"/sensor_overrides/0/set/noise.white.sigma\","
           " \"values\": [0.00001, 0.05]}]%s}\n", name, extra);
  char file[128];
  snprintf(file, sizeof file, "%s.json", name);
  ts_path(path, path_sz, ts_tmp_dir(), file);
  ts_write_file(path, text);
}

static int campaign(const char *spec, const char *out, const char *opt, char *log, size_t log_sz) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' campaign '%s' --out '%s' %s 2>&1", ACHILLES_BIN, spec, out,
           opt ? opt : "");
  return ts_shell(cmd, log, log_sz);
}

static const char *run_file(const char *out, const char *id, const char *name) {
  static char path[1024];
  snprintf(path, sizeof path, "%s/runs/%s/%s", out, id, name);
  return path;
}

static const char *const ids[] = {"tiny.seed=1.noise=1e-05", "tiny.seed=1.noise=0.05",
                                  "tiny.seed=2.noise=1e-05", "tiny.seed=2.noise=0.05"};

/* four runs with stable ids, each its own scenario with the axes' values; the noisy ones fail,
 * so the campaign exits 1; the tables say so */
static void test_runs_ids_and_tables(void **state) {
  (void)state;
  char spec[512], out[512], log[8192];
  write_spec(spec, sizeof spec, "ids", "");
  ts_path(out, sizeof out, ts_tmp_dir(), "ids.out");
  if (campaign(spec, out, NULL, log, sizeof log) != 1) {
    fail_msg("expected exit 1 (the noisy runs fail):\n%s", log);
  }
  for (int i = 0; i < 4; i++) {
    cJSON *s = cJSON_Parse(ts_slurp(run_file(out, ids[i], "scenario.json")));
    assert_non_null(s);
    assert_int_equal(cJSON_GetObjectItem(s, "seed")->valueint, 1 + i / 2);
    const cJSON *sigma = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(
        cJSON_GetObjectItem(s, "sensor_overrides"), 0), "set"), "noise.white.sigma");
    assert_true(sigma->valuedouble == (i % 2 ? 0.05 : 0.00001));
    cJSON_Delete(s);
    cJSON *r = cJSON_Parse(ts_slurp(run_file(out, ids[i], "result.json")));
    assert_non_null(r);
    assert_string_equal(cJSON_GetObjectItem(r, "id")->valuestring, ids[i]);
    assert_string_equal(cJSON_GetObjectItem(r, "verdict")->valuestring, i % 2 ? "fail" : "pass");
    cJSON_Delete(r);
  }
  char path[1024];
  ts_path(path, sizeof path, out, "results.csv");
  const char *csv = ts_slurp(path);
  assert_non_null(
      strstr(csv, "id,scenario,seed,noise,verdict,failed,error,shoulder still [measured]"));
  assert_non_null(strstr(csv, "tiny.seed=2.noise=0.05,tiny,2,0.05,fail,1,,"));
  ts_path(path, sizeof path, out, "summary.md");
  const char *md = ts_slurp(path);
  assert_non_null(strstr(md, "4 runs"));
  assert_non_null(strstr(md, "| 1e-05 | 2 | 100.0 % | 100.0 % |"));
  assert_non_null(strstr(md, "| 0.05 | 2 | 0.0 % | 0.0 % |"));
  assert_non_null(strstr(md, "## The 2 worst runs"));
  assert_non_null(strstr(md, "(seed 1)"));
  assert_non_null(strstr(md, "`achilles test "));
}

/* --resume runs nothing when nothing changed, everything when the scenario did, and again a run
 * whose result was from an interrupted run */
static void test_resume(void **state) {
  (void)state;
  char spec[512], out[512], log[8192], scenario[512];
  write_spec(spec, sizeof spec, "resume", "");
  ts_path(out, sizeof out, ts_tmp_dir(), "resume.out");
  assert_int_equal(campaign(spec, out, NULL, log, sizeof log), 1);
  assert_int_equal(campaign(spec, out, "--resume", log, sizeof log), 1);
  if (!strstr(log, "4 runs, 0 to run")) {
    fail_msg("nothing should run again:\n%s", log);
  }
  /* an interrupted result is not done */
  cJSON *r = cJSON_Parse(ts_slurp(run_file(out, ids[2], "result.json")));
  cJSON_AddBoolToObject(r, "interrupted", 1);
  char *printed = cJSON_Print(r);
  ts_write_file(run_file(out, ids[2], "result.json"), printed);
  free(printed);
  cJSON_Delete(r);
  assert_int_equal(campaign(spec, out, "--resume", log, sizeof log), 1);
  if (!strstr(log, "4 runs, 1 to run")) {
    fail_msg("the interrupted run should run again:\n%s", log);
  }
  /* a changed scenario: new inputs for every run */
  write_scenario(scenario, sizeof scenario);
  char changed[2048];
  snprintf(changed, sizeof changed, "%s", ts_slurp(scenario));
  char *d = strstr(changed, "0.05,");
  assert_non_null(d);
  memcpy(d, "0.04,", 5);
  ts_write_file(scenario, changed);
  assert_int_equal(campaign(spec, out, "--resume", log, sizeof log), 1);
  if (!strstr(log, "4 runs, 4 to run")) {
    fail_msg("a changed scenario should run everything again:\n%s", log);
  }
}

/* a firmware command that kills `achilles test` itself (SIGKILL to its parent): the run is kept
 * as a failed one with a result that says so, and the campaign goes on to the end */
static void test_crashed_run_is_a_failed_run(void **state) {
  (void)state;
  char spec[512], out[512], log[8192];
  write_spec(spec, sizeof spec, "crash",
             ", \"firmware\": [\"sh\", \"-c\", \"kill -9 $PPID\"]");
  ts_path(out, sizeof out, ts_tmp_dir(), "crash.out");
  assert_int_equal(campaign(spec, out, NULL, log, sizeof log), 1);
  for (int i = 0; i < 4; i++) {
    cJSON *r = cJSON_Parse(ts_slurp(run_file(out, ids[i], "result.json")));
    assert_non_null(r);
    assert_string_equal(cJSON_GetObjectItem(r, "verdict")->valuestring, "fail");
    assert_non_null(strstr(cJSON_GetObjectItem(r, "error")->valuestring, "died of signal 9"));
    cJSON_Delete(r);
  }
}

/* a spec that is wrong: exit 2, the file and the field named; nothing is run */
static void test_wrong_spec(void **state) {
  (void)state;
  char spec[512], out[512], log[8192];
  write_spec(spec, sizeof spec, "wrong1", ", \"workrs\": 2");
  ts_path(out, sizeof out, ts_tmp_dir(), "wrong.out");
  assert_int_equal(campaign(spec, out, NULL, log, sizeof log), 2);
  assert_non_null(strstr(log, "wrong1.json: workrs: unknown key"));
  write_spec(spec, sizeof spec, "wrong2", ", \"slurm\": {\"chunk\": 0}");
  assert_int_equal(campaign(spec, out, NULL, log, sizeof log), 2);
  assert_non_null(strstr(log, "wrong2.json: slurm.chunk"));
  char text[1024];
  snprintf(text, sizeof text, "{\"scenario\": \"tiny.json\", \"axes\": [{\"name\": \"x\", \"path\":"
           " \"/checks/7/value\", \"values\": [1, 2]}]}");
  ts_path(spec, sizeof spec, ts_tmp_dir(), "wrong3.json");
  ts_write_file(spec, text);
  assert_int_equal(campaign(spec, out, NULL, log, sizeof log), 2);
  assert_non_null(strstr(log, "axes[0] (x=1): \"/checks/7/value\": \"7\" is not an index"));
  snprintf(text, sizeof text, "{\"scenario\": \"tiny.json\", \"axes\": [{\"name\": \"x\", \"path\":"
           " \"/duration_s\", \"values\": [-1]}]}");
  ts_write_file(spec, text);
  assert_int_equal(campaign(spec, out, NULL, log, sizeof log), 2);
  assert_non_null(strstr(log, "run tiny.x=-1:"));
  assert_non_null(strstr(log, "duration_s"));
  struct stat st;
  char result[1024];
  snprintf(result, sizeof result, "%s/runs/tiny.x=-1/result.json", out);
  assert_int_not_equal(stat(result, &st), 0);
}

TS_MAIN_WITH(cli_suite_setup, ts_tmp_teardown, test_runs_ids_and_tables, test_resume,
        test_crashed_run_is_a_failed_run, test_wrong_spec)
