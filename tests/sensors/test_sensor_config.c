/* tests/sensors/test_sensor_config.c: the JSON loader accepts the shipped config and rejects bad
 * parameters with a message naming the JSON path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "sensors/sensors.h"
#include "support/model.h"
#include "support/skip.h"
#include "support/tmp.h"

static sim_model *model;

static int setup(void **state) {
  *state = model = ts_config("club_arm");
  return ts_tmp_setup(NULL);
}

static int teardown(void **state) {
  return ts_model_teardown(state) | ts_tmp_teardown(NULL);
}

static int load_text(const char *text, char *err, size_t err_sz) {
  cJSON *json = cJSON_Parse(text);
  assert_non_null(json);
  sens_set *set = NULL;
  const int rc = sens_set_load_json(&set, model, json, "cfg", err, err_sz);
  assert_true((rc == 0) == (set != NULL));
  sens_set_free(&set);
  cJSON_Delete(json);
  return rc;
}

static void test_shipped_config(void **state) {
  (void)state;
  char err[512] = "";
  sens_set *set = NULL;
  const int rc = sens_set_load_file(&set, model, ACHILLES_SOURCE_DIR "/configs/club_arm.sensors.json",
                                    err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "%s\n", err);
  }
  assert_int_equal(rc, 0);
  assert_int_equal(sens_set_count(set), 6);
  const sens_sensor *imu = sens_set_sensor(set, sens_set_find(set, "imu_wrist"));
  assert_non_null(imu);
  assert_int_equal(imu->divisor, 0); /* 800 Hz on 1 kHz: own clock */
  assert_int_equal(imu->delay_samples, 2);
  const sens_sensor *enc = sens_set_sensor(set, sens_set_find(set, "enc_shoulder"));
  assert_int_equal(enc->divisor, 1);
  assert_true(enc->u.enc.counts_per_turn == 16384);
  sens_set_free(&set);
  assert_null(set);
  sens_set_free(&set); /* NULL is accepted */
}

typedef struct bad_case {
  const char *sensor; /* one sensor object */
  const char *expect; /* substring of the message: the JSON path and what was expected */
} bad_case;

#define ENC "\"name\": \"e\", \"type\": \"encoder\", \"joint\": \"shoulder\", \"counts_per_rev\": 100"

static const bad_case bad_cases[] = {
    {"{" ENC ", \"noise\": {\"white\": {\"sigma\": -0.1}}}", "list[1].noise.white.sigma: must be"},
    {"{" ENC ", \"noise\": {\"gauss_markov\": {\"sigma\": 1, \"tau_s\": 0}}}",
     "list[1].noise.gauss_markov.tau_s: must be"},
    {"{" ENC ", \"noise\": {\"gauss_markov\": {\"sigma\": 1, \"tau_s\": -3}}}",
     "list[1].noise.gauss_markov.tau_s: must be > 0"},
    {"{" ENC ", \"noise\": {\"gauss_markov\": {\"sigma\": 1}}}",
     "list[1].noise.gauss_markov.tau_s: must be finite and > 0 s when sigma > 0"},
    {"{" ENC ", \"rate_hz\": 1000, \"filter\": {\"cutoff_hz\": 500}}",
     "list[1].filter.cutoff_hz: must be > 0 and below Nyquist (500 Hz"},
    {"{" ENC ", \"filter\": {\"type\": \"butterworth2\"}}", "list[1].filter.cutoff_hz: required"},
    {"{" ENC ", \"filter\": {\"type\": \"chebyshev\", \"cutoff_hz\": 5}}", "list[1].filter.type"},
    {"{\"name\": \"e\", \"type\": \"encoder\", \"joint\": \"shoulder\", \"counts_per_rev\": 0}",
     "list[1].counts_per_rev: required: an integer"},
    {"{\"name\": \"e\", \"type\": \"encoder\", \"joint\": \"shoulder\", \"counts_per_rev\": -4}",
     "list[1].counts_per_rev"},
    {"{\"name\": \"e\", \"type\": \"encoder\", \"joint\": \"shoulder\"}", "list[1].counts_per_rev"},
    {"{\"name\": \"e\", \"type\": \"encoder\", \"joint\": \"knee\", \"counts_per_rev\": 100}",
     "list[1].joint: no joint named \"knee\""},
    {"{\"name\": \"i\", \"type\": \"imu\", \"body\": \"hand\"}", "list[1].body: no moving body named \"hand\""},
    {"{\"name\": \"i\", \"type\": \"imu\", \"site\": \"nose\"}", "list[1].site: no site named"},
    {"{\"name\": \"i\", \"type\": \"imu\"}", "list[1]: give exactly one of"},
    {"{\"name\": \"i\", \"type\": \"imu\", \"body\": \"wrist\", \"gyro\": {\"noise\": {\"white\": "
     "{\"density\": -1}}}}",
     "list[1].gyro.noise.white.density: must be"},
    {"{\"name\": \"i\", \"type\": \"imu\", \"body\": \"wrist\", \"accel\": {\"resolution\": -1}}",
     "list[1].accel.resolution: must be"},
    {"{" ENC ", \"noise\": {\"white\": {\"sigma\": 0.1, \"density\": 0.1}}}",
     "list[1].noise.white: give either sigma"},
    {"{" ENC ", \"noise\": {\"whit\": {\"sigma\": 0.1}}}", "list[1].noise.whit: unknown key"},
    {"{" ENC ", \"rate\": 100}", "list[1].rate: unknown key"},
    {"{" ENC ", \"rate_hz\": 0}", "list[1].rate_hz: must be > 0"},
    {"{" ENC ", \"latency_s\": -0.1}", "list[1].latency_s: must be >= 0"},
    {"{" ENC ", \"drop_probability\": 1.5}", "list[1].drop_probability: must be in [0, 1]"},
    {"{" ENC ", \"noise\": {\"scale_error\": -1}}", "list[1].noise.scale_error: must be"},
    {"{" ENC ", \"resolution\": 0.1}", "list[1].resolution: unknown key"},
    {"{" ENC ", \"fault\": {\"mode\": \"spike\", \"probability\": 2}}",
     "list[1].fault.probability: must be in [0, 1]"},
    {"{" ENC ", \"noise\": {\"white\": {\"sigma\": \"big\"}}}",
     "list[1].noise.white.sigma: expected a finite number"},
    {"{\"name\": \"t\", \"type\": \"torque\", \"joint\": \"elbow\", \"gear_ratio\": 0}",
     "list[1].gear_ratio: must be > 0"},
    {"{\"name\": \"t\", \"type\": \"thermometer\"}", "list[1].type: expected \"encoder\""},
    {"{\"name\": \"ok\", \"type\": \"torque\", \"joint\": \"elbow\"}", "list[1].name: \"ok\" is already"},
};

/* each bad sensor follows one good one, so the index in the path is checked too */
static void test_bad_parameters(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
    char text[2048], err[512] = "";
    snprintf(text, sizeof text,
             "{\"list\": [{\"name\": \"ok\", \"type\": \"torque\", \"joint\": \"elbow\"}, %s]}",
             bad_cases[i].sensor);
    const int rc = load_text(text, err, sizeof err);
    if (rc == 0 || !strstr(err, bad_cases[i].expect) || strncmp(err, "cfg: ", 5) != 0) {
      fprintf(stderr, "case %zu: rc %d, message \"%s\", expected \"%s\"\n", i, rc, err,
              bad_cases[i].expect);
    }
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err, bad_cases[i].expect));
    assert_int_equal(strncmp(err, "cfg: ", 5), 0); /* the source comes first */
  }
}

static void test_block_errors(void **state) {
  (void)state;
  char err[512];
  assert_int_not_equal(load_text("{\"sede\": 1, \"list\": []}", err, sizeof err), 0);
  assert_non_null(strstr(err, "sede: unknown key"));
  assert_int_not_equal(load_text("{\"seed\": -1, \"list\": []}", err, sizeof err), 0);
  assert_non_null(strstr(err, "seed: expected an integer"));
  assert_int_not_equal(load_text("{\"seed\": 1}", err, sizeof err), 0);
  assert_non_null(strstr(err, "list: required"));
  assert_int_equal(load_text("{\"list\": []}", err, sizeof err), 0);
}

/* a robot file names its sensors inline or through a file relative to itself */
static void test_robot_forms(void **state) {
  (void)state;
  char err[512] = "";
  sens_set *set = NULL;
  char robot[512], sensors[512];
  ts_tmp_path(robot, sizeof robot, "sens_cfg_robot.json");
  ts_tmp_path(sensors, sizeof sensors, "sens_cfg_sensors.json");
  ts_write_file(sensors, "{\"seed\": 5, \"list\": [{\"name\": \"t\", \"type\": \"torque\", "
                      "\"joint\": \"j\"}]}");
  ts_write_file(robot, "{\"name\": \"r\", \"timestep\": 0.001, \"sensors\": \"sens_cfg_sensors.json\","
                    " \"bodies\": [{\"name\": \"b\", \"parent\": \"world\", \"joint\": {\"name\": "
                    "\"j\", \"type\": \"hinge\", \"axis\": [0, 0, 1]}, \"inertial\": {\"mass\": 1,"
                    " \"inertia\": [1, 1, 1, 0, 0, 0]}}]}");
  sim_model *m = sim_model_load_file(robot, err, sizeof err);
  if (!m) {
    fprintf(stderr, "%s\n", err);
  }
  assert_non_null(m);
  assert_int_equal(sens_set_load_robot(&set, m, robot, err, sizeof err), 0);
  assert_int_equal(sens_set_count(set), 1);
  assert_true(sens_set_seed(set) == 5);
  sens_set_free(&set);
  /* inline form, with an error: the message names the robot file and the key */
  ts_write_file(robot, "{\"name\": \"r\", \"sensors\": {\"list\": [{\"name\": \"t\", \"type\": "
                    "\"torque\", \"joint\": \"x\"}]}}");
  assert_int_equal(sens_set_load_robot(&set, m, robot, err, sizeof err), SENS_EINVAL);
  assert_non_null(strstr(err, "sens_cfg_robot.json: sensors: list[0].joint: no joint named"));
  /* a missing sensors file and malformed JSON */
  ts_write_file(robot, "{\"sensors\": \"missing.json\"}");
  assert_int_equal(sens_set_load_robot(&set, m, robot, err, sizeof err), SENS_EIO);
  /* the message names the robot file that referenced the sensors file */
  assert_non_null(strstr(err, "sens_cfg_robot.json: sensors: "));
  assert_non_null(strstr(err, "missing.json: cannot open"));
  /* standard input is only for the command line's CONFIG: a robot file cannot make us wait on it */
  ts_write_file(robot, "{\"sensors\": \"/dev/stdin\"}");
  assert_int_equal(sens_set_load_robot(&set, m, robot, err, sizeof err), SENS_EINVAL);
  assert_non_null(strstr(err, "sensors: \"/dev/stdin\" is standard input (expected a file)"));
  ts_write_file(sensors, "{\"list\": [}");
  assert_int_equal(sens_set_load_file(&set, m, sensors, err, sizeof err), SENS_EJSON);
  assert_non_null(strstr(err, "line 1, column 11: invalid JSON"));
  assert_null(set);
  sim_model_free(m);
}

/* the robot loader rejects text after the JSON value; the sensors loader does the same */
static void test_text_after_the_json(void **state) {
  (void)state;
  char err[512] = "", path[512];
  sens_set *set = NULL;
  ts_tmp_path(path, sizeof path, "sens_cfg_trailing.json");
  ts_write_file(path, "{\"list\": []}\n{\"list\": [1]}\n");
  assert_int_equal(sens_set_load_file(&set, model, path, err, sizeof err), SENS_EJSON);
  assert_non_null(strstr(err, "sens_cfg_trailing.json: line 2, column 1: invalid JSON (text after"));
  assert_null(set);
  ts_write_file(path, "{\"list\": []}\n\t \n");
  assert_int_equal(sens_set_load_file(&set, model, path, err, sizeof err), 0);
  sens_set_free(&set);
}

/* names reach CSV headers, logs and JSON messages: UTF-8 text without control characters */
static void test_names_are_utf8_text(void **state) {
  (void)state;
  char err[512] = "";
  assert_int_equal(load_text("{\"list\": [{\"name\": \"t\\u001b[31m\", \"type\": \"torque\", "
                             "\"joint\": \"shoulder\"}]}",
                             err, sizeof err),
                   SENS_EINVAL);
  assert_non_null(strstr(err, "list[0].name: required: a name of 1 to 63 bytes without commas or "
                              "control characters"));
  assert_int_equal(load_text("{\"list\": [{\"name\": \"t\xc3\", \"type\": \"torque\", "
                             "\"joint\": \"shoulder\"}]}",
                             err, sizeof err),
                   SENS_EINVAL);
  assert_non_null(strstr(err, "cfg: list[0].name: the string is not valid UTF-8 (at byte 1)"));
}

/* every sensor without latency: no delay storage at all (clang's UBSan saw NULL + 0 here) */
static void test_no_latency_anywhere(void **state) {
  (void)state;
  char err[512] = "";
  sens_set *set = NULL;
  const char *path = ACHILLES_SOURCE_DIR "/configs/latency_probe.json";
  sim_model *m = sim_model_load_file(path, err, sizeof err);
  if (!m || sens_set_load_robot(&set, m, path, err, sizeof err) != 0) {
    fail_msg("%s", err);
  }
  sens_set_free(&set);
  sim_model_free(m);
}

TS_MAIN_WITH(setup, teardown, test_shipped_config, test_bad_parameters, test_block_errors,
                              test_robot_forms, test_text_after_the_json, test_names_are_utf8_text,
                              test_no_latency_anywhere)
