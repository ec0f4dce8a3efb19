/* tests/sysid/io/test_series_servo.c: the Goal Positions of a log's servo records as the inputs
 * of `sysid --servo-goals` (sysid/series_servo.c, docs/sysid.md section 10.1): a goal recorded at
 * step k is the input of the row of step k and holds after it; the rows before every servo runs
 * with torque on and its factory settings are left out; and the errors, each naming its place: a
 * log without servo records (version 1), a later record that turns torque off or changes another
 * field, a field the X-series lacks, a damaged record, a servo model the loop does not run. The
 * logs are written record by record here (CRC-32 + JSON, docs/logs.md) so each case is
 * visible. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hil/record/log.h"
#include "sensors/sensors.h"
#include "support/model.h"
#include "support/skip.h"
#include "support/tmp.h"
#include "sysid/series.h"
#include "sysid/sysid.h"

#define TWO_PI 6.283185307179586

static const char *robot =
    "{\"name\":\"goal_arm\",\"gravity\":[0,0,0],\"bodies\":["
    "{\"name\":\"b1\",\"parent\":\"world\",\"joint\":{\"name\":\"j1\",\"type\":\"hinge\","
    "\"axis\":[0,0,1]},\"inertial\":{\"mass\":1,\"inertia\":[0.01,0.01,0.01,0,0,0]}},"
    "{\"name\":\"b2\",\"parent\":\"b1\",\"joint\":{\"name\":\"j2\",\"type\":\"hinge\","
    "\"axis\":[0,0,1]},\"inertial\":{\"mass\":1,\"inertia\":[0.01,0.01,0.01,0,0,0]}}],"
    "\"actuators\":["
    "{\"name\":\"s1\",\"joint\":\"j1\",\"type\":\"servo\","
    "\"servo\":{\"id\":1,\"model\":\"XL430-W250\"}},"
    "{\"name\":\"s2\",\"joint\":\"j2\",\"type\":\"servo\","
    "\"servo\":{\"id\":2,\"model\":\"XM430-W350\"}}]}";

static const char *sensors =
    "{\"seed\":1,\"list\":["
    "{\"name\":\"e1\",\"type\":\"encoder\",\"joint\":\"j1\",\"rate_hz\":1000,"
    "\"counts_per_rev\":4096,\"quadrature\":false,\"output\":\"angle\"},"
    "{\"name\":\"e2\",\"type\":\"encoder\",\"joint\":\"j2\",\"rate_hz\":1000,"
    "\"counts_per_rev\":4096,\"quadrature\":false,\"output\":\"angle\"}]}";

static const char *header =
    "{\"type\":\"header\",\"format\":\"achilles-log\",\"version\":2,\"robot\":\"goal_arm\","
    "\"rate_hz\":1000,\"seed\":1,\"sensors\":["
    "{\"name\":\"e1\",\"type\":\"encoder\",\"channels\":[\"angle\"],\"units\":[\"rad\"],"
    "\"rate_hz\":1000},"
    "{\"name\":\"e2\",\"type\":\"encoder\",\"channels\":[\"angle\"],\"units\":[\"rad\"],"
    "\"rate_hz\":1000}],"
    "\"actuators\":[\"s1\",\"s2\"],\"started\":\"2026-12-02T06:00:00Z\"}";

static sim_model *model;
static sens_set *set;
static sysid_servo servos[2];

static int setup(void **state) {
  char err[512];
  model = ts_model(robot);
  cJSON *block = cJSON_Parse(sensors);
  const int rc = model && block ? sens_set_load_json(&set, model, block, "s.json", err, sizeof err)
                                : -1;
  cJSON_Delete(block);
  if (rc != 0) {
    fprintf(stderr, "sensors: %s\n", err);
    return -1;
  }
  memset(servos, 0, sizeof servos);
  snprintf(servos[0].actuator, sizeof servos[0].actuator, "s1");
  servos[0].model = 1060;
  snprintf(servos[1].actuator, sizeof servos[1].actuator, "s2");
  servos[1].model = 1020;
  return ts_tmp_setup(state);
}

static int teardown(void **state) {
  sens_set_free(&set);
  sim_model_free(model);
  return ts_tmp_teardown(state);
}

/* one framed record: CRC-32 of the JSON text, a space, the text */
static void put(FILE *f, const char *json) {
  fprintf(f, "%08x %s\n", (unsigned)hil_crc32(0, json, strlen(json)), json);
}

/* step k's samples (t = k ms, as the runtime's steps) and api torques */
static void step(FILE *f, int k) {
  char json[512];
  const double t = 0.001 * k;
  for (int j = 1; j <= 2; j++) {
    snprintf(json, sizeof json, "{\"type\":\"sample\",\"sensor\":\"e%d\",\"topic\":\"enc/e%d\","
             "\"seq\":%d,\"t\":%.17g,\"t_truth\":%.17g,\"wall\":0,\"valid\":true,"
             "\"values\":{\"angle\":%.17g}}", j, j, k, t, t, 0.001 * k * j);
    put(f, json);
  }
  for (int j = 1; j <= 2; j++) {
    snprintf(json, sizeof json, "{\"type\":\"command\",\"t\":%.17g,\"wall\":0,\"source\":\"api\","
             "\"actuator\":\"s%d\",\"value\":0.5,\"result\":\"ok\"}", t, j);
    put(f, json);
  }
}

/* a servo record of step k; returns its byte offset */
static long servo(FILE *f, int k, const char *act, const char *registers) {
  char json[512];
  snprintf(json, sizeof json, "{\"type\":\"servo\",\"t\":%.17g,\"wall\":0,\"step\":%d,"
           "\"actuator\":\"%s\",\"id\":%c,\"registers\":{%s}}", 0.001 * k, k, act, act[1],
           registers);
  const long at = ftell(f);
  put(f, json);
  return at;
}

/* steps 0..20: torque on at step 2 (s1) and 3 (s2), goals at 3, 6 and 10; `extra` (when not
 * NULL) a record of s2 at step 12, its byte offset into *extra_at */
static void write_log(const char *path, const char *extra, long *extra_at) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  put(f, header);
  for (int k = 0; k <= 20; k++) {
    step(f, k);
    if (k == 0) { /* the first look: where power-on put the goals, torque off */
      servo(f, 0, "s1", "\"torque_enable\":0,\"goal_position\":2048,\"profile_velocity\":0");
      servo(f, 0, "s2", "\"torque_enable\":0,\"goal_position\":2048");
    }
    if (k == 1) { /* set and reset before torque on: the fit's regime from then */
      servo(f, 1, "s2", "\"position_p_gain\":100");
    }
    if (k == 2) {
      servo(f, 2, "s1", "\"torque_enable\":1");
      servo(f, 2, "s2", "\"position_p_gain\":800");
    }
    if (k == 3) {
      servo(f, 3, "s2", "\"torque_enable\":1,\"goal_position\":2148");
    }
    if (k == 6) {
      servo(f, 6, "s1", "\"goal_position\":1948");
    }
    if (k == 10) {
      servo(f, 10, "s1", "\"goal_position\":2448");
      servo(f, 10, "s2", "\"goal_position\":4095");
    }
    if (k == 12 && extra) {
      *extra_at = servo(f, 12, "s2", extra);
    }
  }
  put(f, "{\"type\":\"end\",\"t\":0.02,\"wall\":0,\"records\":1}");
  fclose(f);
}

static double rad(int ticks) { return (ticks - 2048) * TWO_PI / 4096; }

static void test_goals_at_their_steps(void **state) {
  (void)state;
  char path[300], err[512];
  ts_tmp_path(path, sizeof path, "goals.ndjson");
  write_log(path, NULL, NULL);
  sysid_series s;
  if (sysid_series_load_log(&s, path, model, set, err, sizeof err) != 0) {
    fail_msg("%s", err);
  }
  assert_int_equal(s.n, 21);
  assert_true(s.from_log);
  if (sysid_series_servo_goals(&s, path, servos, 2, err, sizeof err) != 0) {
    fail_msg("%s", err);
  }
  /* from step 3, where both servos run torque on with the factory settings */
  assert_int_equal(s.n, 18);
  assert_true(fabs(s.t[0] - 0.003) < 1e-12);
  assert_true(fabs(s.q[1] - 0.006) < 1e-12); /* the readings moved with their rows */
  for (int i = 0; i < s.n; i++) {
    const int k = 3 + i;
    const double g1 = rad(k < 6 ? 2048 : k < 10 ? 1948 : 2448);
    const double g2 = rad(k < 10 ? 2148 : 4095);
    if (s.u[2 * i] != g1 || s.u[2 * i + 1] != g2) {
      fail_msg("row of step %d: inputs %.17g, %.17g, expected %.17g, %.17g", k, s.u[2 * i],
               s.u[2 * i + 1], g1, g2);
    }
  }
  sysid_series_free(&s);
}

/* a later record that the fit's loop cannot follow: an error naming it */
static void expect_refused(const char *extra, const char *what) {
  char path[300], err[1024], want[512];
  ts_tmp_path(path, sizeof path, "refused.ndjson");
  long at = -1;
  write_log(path, extra, &at);
  sysid_series s;
  assert_int_equal(sysid_series_load_log(&s, path, model, set, err, sizeof err), 0);
  assert_int_equal(sysid_series_servo_goals(&s, path, servos, 2, err, sizeof err), -1);
  /* record 63: the header, 13 steps of 4 records and the 9 servo records before it */
  snprintf(want, sizeof want, "%s: record 63 at byte %ld: servo \"s2\"", path, at);
  if (!strstr(err, want) || !strstr(err, what)) {
    fail_msg("expected '%s' ... '%s' in '%s'", want, what, err);
  }
  sysid_series_free(&s);
}

static void test_later_changes_refused(void **state) {
  (void)state;
  expect_refused("\"torque_enable\":0", "at step 12: torque_enable 0 (the fit's servo loop runs 1");
  expect_refused("\"profile_velocity\":50", "profile_velocity 50 (the fit's servo loop runs 0");
  expect_refused("\"position_d_gain\":10", "position_d_gain 10");
  expect_refused("\"goal_pwm\":7", "goal_pwm 7");
  expect_refused("\"no_such_field\":7", "\"no_such_field\" is not a field of a Dynamixel");
}

static void test_errors(void **state) {
  (void)state;
  char path[300], err[1024];
  sysid_series s;
  /* no servo record: a version-1 log */
  ts_tmp_path(path, sizeof path, "v1.ndjson");
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  put(f, header);
  for (int k = 0; k < 5; k++) {
    step(f, k);
  }
  fclose(f);
  assert_int_equal(sysid_series_load_log(&s, path, model, set, err, sizeof err), 0);
  assert_int_equal(sysid_series_servo_goals(&s, path, servos, 2, err, sizeof err), -1);
  assert_non_null(strstr(err, "no servo record of \"s1\""));
  sysid_series_free(&s);
  /* torque never on together */
  ts_tmp_path(path, sizeof path, "off.ndjson");
  f = fopen(path, "w");
  assert_non_null(f);
  put(f, header);
  for (int k = 0; k < 5; k++) {
    step(f, k);
    if (k == 0) {
      servo(f, 0, "s1", "\"torque_enable\":1");
      servo(f, 0, "s2", "\"torque_enable\":0");
    }
  }
  fclose(f);
  assert_int_equal(sysid_series_load_log(&s, path, model, set, err, sizeof err), 0);
  assert_int_equal(sysid_series_servo_goals(&s, path, servos, 2, err, sizeof err), -1);
  assert_non_null(strstr(err, "at no sample does every servo run with torque on"));
  sysid_series_free(&s);
  /* a servo model the loop does not run */
  write_log(path, NULL, NULL);
  assert_int_equal(sysid_series_load_log(&s, path, model, set, err, sizeof err), 0);
  sysid_servo sts = servos[1];
  sts.model = 777;
  assert_int_equal(sysid_series_servo_goals(&s, path, &sts, 1, err, sizeof err), -1);
  assert_non_null(strstr(err, "servo \"s2\": not a Dynamixel X-series model"));
  sysid_series_free(&s);
}

/* a servo record damaged after the series was read (its checksum): an error at its place */
static void test_damaged_record(void **state) {
  (void)state;
  char path[300], err[1024], want[512];
  ts_tmp_path(path, sizeof path, "damaged.ndjson");
  long at = -1;
  write_log(path, "\"goal_position\":2000", &at);
  sysid_series s;
  assert_int_equal(sysid_series_load_log(&s, path, model, set, err, sizeof err), 0);
  FILE *f = fopen(path, "r+");
  assert_non_null(f);
  assert_int_equal(fseek(f, at + 20, SEEK_SET), 0);
  fputc('X', f);
  fclose(f);
  assert_int_equal(sysid_series_servo_goals(&s, path, servos, 2, err, sizeof err), -1);
  snprintf(want, sizeof want, "record 63 at byte %ld: CRC mismatch", at);
  if (!strstr(err, want)) {
    fail_msg("expected '%s' in '%s'", want, err);
  }
  sysid_series_free(&s);
}

TS_MAIN_WITH(setup, teardown, test_goals_at_their_steps, test_later_changes_refused, test_errors,
             test_damaged_record)
