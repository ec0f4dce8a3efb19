/* tests/sysid/io/test_series_log.c: an Achilles log read into a series (sysid/series_log.c,
 * docs/sysid.md section 2): encoder samples as joint readings (angle, or counts × step; a
 * wrapping angle unwound; invalid samples missing; other sensors ignored), command records as
 * held inputs (clamped, rejected, watchdog), and the errors: no sensors file, a log of another
 * robot, an incremental encoder, a damaged record, a CSV map given to a log. The logs are
 * written record by record here (CRC-32 + JSON, docs/logs.md) so each case is visible. */
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

#define TS_PI 3.14159265358979323846
#include "support/skip.h"
#include "support/tmp.h"
#include "sysid/sensor_meas.h"
#include "sysid/series.h"

static const char *robot =
    "{\"name\":\"log_arm\",\"gravity\":[0,0,0],\"bodies\":["
    "{\"name\":\"b1\",\"parent\":\"world\",\"joint\":{\"name\":\"j1\",\"type\":\"hinge\","
    "\"axis\":[0,0,1]},\"inertial\":{\"mass\":1,\"inertia\":[1,1,1,0,0,0]}},"
    "{\"name\":\"b2\",\"parent\":\"b1\",\"joint\":{\"name\":\"j2\",\"type\":\"hinge\","
    "\"axis\":[0,0,1]},\"inertial\":{\"mass\":1,\"inertia\":[1,1,1,0,0,0]}}],"
    "\"actuators\":[{\"name\":\"m1\",\"joint\":\"j1\",\"type\":\"motor\",\"ctrlrange\":[-2,2]},"
    "{\"name\":\"m2\",\"joint\":\"j2\",\"type\":\"motor\"}]}";

/* e1 on j1: angle output, wrapped to [-π, π), 1024 lines (step 2π/1024), latency 1 sample,
 * scale error 1e-3, offset 0.01; e2 on j2: counts only, 256 lines ×4 (step 2π/1024); g: an IMU */
static const char *sensors =
    "{\"seed\":1,\"list\":["
    "{\"name\":\"e1\",\"type\":\"encoder\",\"joint\":\"j1\",\"rate_hz\":1000,\"latency_s\":0.001,"
    "\"counts_per_rev\":1024,\"output\":\"angle\",\"wrap\":true,"
    "\"noise\":{\"scale_error\":0.001,\"offset\":0.01,\"white\":{\"sigma\":0.0003}}},"
    "{\"name\":\"e2\",\"type\":\"encoder\",\"joint\":\"j2\",\"rate_hz\":1000,"
    "\"counts_per_rev\":256,\"quadrature\":true,\"output\":\"counts\"},"
    "{\"name\":\"g\",\"type\":\"imu\",\"body\":\"b2\",\"rate_hz\":1000}]}";

static const char *header =
    "{\"type\":\"header\",\"format\":\"achilles-log\",\"version\":1,\"robot\":\"log_arm\","
    "\"rate_hz\":1000,\"seed\":1,\"sensors\":["
    "{\"name\":\"e1\",\"type\":\"encoder\",\"channels\":[\"angle\"],\"units\":[\"rad\"],\"rate_hz\":1000},"
    "{\"name\":\"e2\",\"type\":\"encoder\",\"channels\":[\"counts\"],\"units\":[\"count\"],\"rate_hz\":1000},"
    "{\"name\":\"g\",\"type\":\"imu\",\"channels\":[\"gyro.x\"],\"units\":[\"rad/s\"],\"rate_hz\":1000}],"
    "\"actuators\":[\"m1\",\"m2\"],\"started\":\"2026-12-02T03:00:00Z\"}";

static sim_model *model;
static sens_set *set;

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

static void sample(FILE *f, const char *sensor, double t, const char *values, int valid) {
  char json[512];
  snprintf(json, sizeof json, "{\"type\":\"sample\",\"sensor\":\"%s\",\"topic\":\"x/%s\","
           "\"seq\":0,\"t\":%.17g,\"t_truth\":%.17g,\"wall\":0,\"valid\":%s,\"values\":{%s}}",
           sensor, sensor, t, t, valid ? "true" : "false", values);
  put(f, json);
}

static void command(FILE *f, double t, const char *source, const char *act, const char *value,
                    const char *result) {
  char json[512];
  snprintf(json, sizeof json, "{\"type\":\"command\",\"t\":%.17g,\"wall\":0,\"source\":\"%s\","
           "\"actuator\":\"%s\",\"value\":%s,\"result\":\"%s\"}", t, source, act, value, result);
  put(f, json);
}

static void path_of(char *path, size_t sz) {
  ts_tmp_path(path, sz, "run.ndjson");
}

/* Four instants at 1 ms: e1's angle crosses ±π (3.1 → −3.1 is +0.083 rad, unwound), e2 reads
 * counts; commands before, between and after samples; the IMU's own clock in between. */
static void write_good_log(void) {
  char path[512];
  path_of(path, sizeof path);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  put(f, header);
  command(f, 0, "serial", "m1", "0.5", "ok");
  sample(f, "e1", 0.001, "\"angle\":3.1", 1);
  sample(f, "e2", 0.001, "\"counts\":256", 1);
  sample(f, "g", 0.0015, "\"gyro.x\":1", 1); /* another clock: ignored, no new instant */
  command(f, 0.001, "serial", "m1", "7", "clamped"); /* applied as 2 from t = 0.001 */
  command(f, 0.001, "serial", "m2", "-1", "ok");
  sample(f, "e1", 0.002, "\"angle\":-3.1", 1);
  sample(f, "e2", 0.002, "\"counts\":null", 0); /* invalid: missing */
  command(f, 0.002, "serial", "m1", "null", "rejected:nonfinite");
  command(f, 0.002, "serial", "knee", "1", "rejected:unknown");
  sample(f, "e1", 0.003, "\"angle\":-3.0", 1);
  sample(f, "e2", 0.003, "\"counts\":-512", 1);
  command(f, 0.0035, "watchdog", "m2", "0", "ok");
  sample(f, "e2", 0.004, "\"counts\":-513", 1); /* e1 has no sample here */
  put(f, "{\"type\":\"end\",\"t\":0.004,\"wall\":0,\"records\":17}");
  fclose(f);
}

static void test_readings_and_inputs(void **state) {
  (void)state;
  char path[512], err[1024] = "";
  write_good_log();
  path_of(path, sizeof path);
  sysid_series s;
  assert_int_equal(sysid_series_load(&s, path, model, set, NULL, err, sizeof err), 0);
  assert_int_equal(s.n, 4);
  assert_int_equal(s.njoint, 2);
  assert_int_equal(s.nact, 2);
  assert_string_equal(s.joint_name[0], "j1");
  assert_string_equal(s.joint_name[1], "j2");
  assert_string_equal(s.warning, "");
  const double step = 2 * TS_PI / 1024, two_pi = 2 * TS_PI;
  assert_true(s.t[0] == 0.001 && s.t[3] == 0.004);
  assert_true(s.q[0] == 3.1 && fabs(s.q[1] - 256 * step) < 1e-15);
  assert_true(fabs(s.q[2] - (-3.1 + two_pi)) < 1e-12); /* unwound across ±π */
  assert_true(isnan(s.q[3]));                           /* the invalid sample */
  assert_true(fabs(s.q[4] - (-3.0 + two_pi)) < 1e-12 && fabs(s.q[5] + 512 * step) < 1e-15);
  assert_true(isnan(s.q[6]) && fabs(s.q[7] + 513 * step) < 1e-15);
  /* u at tᵢ: the last accepted command at or before tᵢ */
  assert_true(s.u[0] == 2 && s.u[1] == -1);   /* 0.001: the clamped 7 is 2 */
  assert_true(s.u[2] == 2 && s.u[3] == -1);   /* 0.002: the rejected ones changed nothing */
  assert_true(s.u[4] == 2 && s.u[5] == -1);   /* 0.003 */
  assert_true(s.u[6] == 2 && s.u[7] == 0);    /* 0.004: the watchdog's zero */
  sysid_series_free(&s);
}

static void test_meas_from_sensors(void **state) {
  (void)state;
  char path[512], err[1024] = "";
  write_good_log();
  path_of(path, sizeof path);
  sysid_series s;
  assert_int_equal(sysid_series_load_log(&s, path, model, set, err, sizeof err), 0);
  sysid_meas m[2];
  char name[2][SENS_NAME_MAX];
  assert_int_equal(sysid_meas_from_sensors(m, name, &s, model, set), 2);
  assert_string_equal(name[0], "e1");
  assert_true(fabs(m[0].latency - 0.001) < 1e-15);
  assert_true(fabs(m[0].scale - 1.001) < 1e-15 && fabs(m[0].offset - 0.01) < 1e-15);
  const double step = 2 * TS_PI / 1024;
  /* white ⊕ quantization */
  assert_true(fabs(m[0].sigma - sqrt(0.0003 * 0.0003 + step * step / 12)) < 1e-15);
  assert_true(m[1].latency == 0 && m[1].scale == 1 && m[1].offset == 0);
  assert_true(fabs(m[1].sigma - step / sqrt(12)) < 1e-15);
  /* no sensors: exact readings */
  assert_int_equal(sysid_meas_from_sensors(m, name, &s, model, NULL), 0);
  assert_string_equal(name[1], "");
  assert_true(m[1].scale == 1 && m[1].sigma > 0);
  sysid_series_free(&s);
}

static void test_errors(void **state) {
  (void)state;
  char path[512], err[1024] = "";
  write_good_log();
  path_of(path, sizeof path);
  sysid_series s;
  assert_int_equal(sysid_series_load(&s, path, model, NULL, NULL, err, sizeof err), -1);
  assert_non_null(strstr(err, "needs the sensors file that recorded it"));
  assert_int_equal(sysid_series_load(&s, path, model, set, "j1=x", err, sizeof err), -1);
  assert_non_null(strstr(err, "--map is for CSV files"));

  /* a robot whose actuators differ: the log is another robot's */
  sim_model *other = ts_model(
      "{\"name\":\"other\",\"bodies\":[{\"name\":\"b1\",\"parent\":\"world\",\"joint\":{\"name\":"
      "\"j1\",\"type\":\"hinge\",\"axis\":[0,0,1]},\"inertial\":{\"mass\":1,\"inertia\":[1,1,1,0,"
      "0,0]}},{\"name\":\"b2\",\"parent\":\"b1\",\"joint\":{\"name\":\"j2\",\"type\":\"hinge\","
      "\"axis\":[0,0,1]},\"inertial\":{\"mass\":1,\"inertia\":[1,1,1,0,0,0]}}],\"actuators\":["
      "{\"name\":\"m1\",\"joint\":\"j1\",\"type\":\"motor\"}]}");
  assert_int_equal(sysid_series_load_log(&s, path, other, set, err, sizeof err), -1);
  assert_non_null(strstr(err, "record 1: the log's actuator \"m2\" is not an actuator of other "
                              "(a log of another robot? the log's robot is \"log_arm\")"));
  sim_model_free(other);

  /* one byte changed in record 3: named by record and byte, not skipped */
  char *text = ts_read_file(path, NULL);
  assert_non_null(text);
  char *third = strchr(strchr(text, '\n') + 1, '\n') + 1;
  char *digit = strstr(third, "3.1");
  digit[0] = '4';
  ts_write_file(path, text);
  free(text);
  assert_int_equal(sysid_series_load(&s, path, model, set, NULL, err, sizeof err), -1);
  assert_non_null(strstr(err, "record 3 at byte"));
  assert_non_null(strstr(err, "CRC mismatch"));
  assert_int_equal(s.n, 0);
}

static void test_incremental_and_no_encoder(void **state) {
  (void)state;
  char path[512], err[1024] = "";
  write_good_log();
  path_of(path, sizeof path);
  sens_set *inc = NULL, *none = NULL;
  cJSON *b = cJSON_Parse("{\"list\":[{\"name\":\"e1\",\"type\":\"encoder\",\"joint\":\"j1\","
                         "\"rate_hz\":1000,\"counts_per_rev\":1024,\"output\":\"angle\","
                         "\"mode\":\"incremental\"}]}");
  assert_int_equal(sens_set_load_json(&inc, model, b, "i.json", err, sizeof err), 0);
  cJSON_Delete(b);
  b = cJSON_Parse("{\"list\":[{\"name\":\"g\",\"type\":\"imu\",\"body\":\"b2\",\"rate_hz\":1000}]}");
  assert_int_equal(sens_set_load_json(&none, model, b, "n.json", err, sizeof err), 0);
  cJSON_Delete(b);
  sysid_series s;
  assert_int_equal(sysid_series_load_log(&s, path, model, inc, err, sizeof err), -1);
  assert_non_null(strstr(err, "encoder \"e1\" is incremental"));
  assert_int_equal(sysid_series_load_log(&s, path, model, none, err, sizeof err), -1);
  assert_non_null(strstr(err, "none of the log's sensors (e1, e2, g) is an encoder"));
  sens_set_free(&inc);
  sens_set_free(&none);
}

static void test_killed_run(void **state) {
  (void)state;
  char path[512], err[1024] = "";
  write_good_log();
  path_of(path, sizeof path);
  /* cut inside the end record: the records before it are read, with a warning */
  char *text = ts_read_file(path, NULL);
  assert_non_null(text);
  *strrchr(text, ',') = '\0';
  ts_write_file(path, text);
  free(text);
  sysid_series s;
  assert_int_equal(sysid_series_load(&s, path, model, set, NULL, err, sizeof err), 0);
  assert_int_equal(s.n, 4);
  assert_non_null(strstr(s.warning, "truncated record"));
  sysid_series_free(&s);
}

TS_MAIN_WITH(setup, teardown, test_readings_and_inputs, test_meas_from_sensors, test_errors,
             test_incremental_and_no_encoder, test_killed_run)
