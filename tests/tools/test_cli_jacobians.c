/* tests/tools/test_cli_jacobians.c: `achilles sim --jacobians FILE` as a user runs it: the JSON
 * and CSV layouts, the same numbers as the library (sim_deriv_step), a run unchanged by them,
 * and errors that name their option. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/deriv/deriv.h"
#include "support/skip.h"
#include "support/spawn.h"
#include "support/tmp.h"

/* a pendulum with a damped hinge and a motor (its linearization: tests/sim/test_deriv_closed_form) */
static const char pendulum[] =
    "{ \"name\": \"pendulum\", \"timestep\": 0.01, \"integrator\": \"euler\",\n"
    "  \"bodies\": [ { \"name\": \"pole\", \"parent\": \"world\",\n"
    "    \"joint\": { \"name\": \"swing\", \"type\": \"hinge\", \"axis\": [0, 1, 0], \"damping\": 0.7,\n"
    "                 \"initial\": 0.3 },\n"
    "    \"inertial\": { \"mass\": 1.3, \"com\": [0, 0, -0.45], \"inertia\": [0.03, 0.02, 0.01, 0, 0, 0] } } ],\n"
    "  \"actuators\": [ { \"name\": \"motor\", \"joint\": \"swing\", \"type\": \"motor\", \"gear\": 2.5 } ] }\n";

static char output[1 << 20], robot[512];

static int setup(void **state) {
  ts_tmp_setup(state);
  ts_tmp_path(robot, sizeof robot, "pendulum.json");
  ts_write_file(robot, pendulum);
  return 0;
}

/* A, B and P of the library at the pendulum's initial state after `steps` steps */
static void library(int steps, double *A, double *B, double *P) {
  char err[256];
  sim_model *m = sim_model_load_file(robot, err, sizeof err);
  assert_non_null(m);
  sim_param p;
  assert_int_equal(sim_param_parse(m, "body/pole/mass", &p, 1, err, sizeof err), 1);
  sim_data *d = sim_data_new(m);
  sim_deriv *w = sim_deriv_new(m, &p, 1, err, sizeof err);
  for (int s = 0; s < steps; s++) {
    sim_step(m, d);
  }
  assert_int_equal(sim_deriv_step(m, d, w, A, B, P), SIM_DERIV_OK);
  sim_deriv_free(&w);
  sim_data_free(d);
  sim_model_free(m);
}

static void assert_row(const cJSON *matrix, int row, const double *expect, int n) {
  const cJSON *r = cJSON_GetArrayItem(matrix, row);
  assert_int_equal(cJSON_GetArraySize(r), n);
  for (int c = 0; c < n; c++) {
    assert_true(cJSON_GetArrayItem(r, c)->valuedouble == expect[c]); /* %.17g: the same bits */
  }
}

static void test_json_layout_and_numbers(void **state) {
  (void)state;
  char file[512];
  ts_tmp_path(file, sizeof file, "jac.json");
  int rc = ts_shellf(output, sizeof output,
                     "%s sim %s --duration 0.1 --csv /dev/null --jacobians %s --jacobians-at "
                     "0.05,0 --params body/pole/mass 2>&1",
                     ACHILLES_BIN, robot, file);
  assert_int_equal(rc, 0);
  cJSON *root = cJSON_Parse(ts_slurp(file));
  assert_non_null(root);
  const cJSON *st = cJSON_GetObjectItem(root, "state"), *jac = cJSON_GetObjectItem(root, "jacobians");
  assert_int_equal(cJSON_GetArraySize(st), 2);
  assert_string_equal(cJSON_GetArrayItem(st, 0)->valuestring, "swing.q");
  assert_string_equal(cJSON_GetArrayItem(st, 1)->valuestring, "swing.qd");
  assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "controls"), 0)->valuestring,
                      "motor");
  assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "parameters"), 0)->valuestring,
                      "body/pole/mass");
  assert_string_equal(
      cJSON_GetArrayItem(cJSON_GetObjectItem(root, "parameter_units"), 0)->valuestring, "kg");
  assert_int_equal(cJSON_GetArraySize(jac), 2); /* in time order */
  const int steps[2] = {0, 5};
  for (int k = 0; k < 2; k++) {
    const cJSON *e = cJSON_GetArrayItem(jac, k);
    double A[4], B[2], P[2];
    library(steps[k], A, B, P);
    assert_true(fabs(cJSON_GetObjectItem(e, "time")->valuedouble - 0.01 * steps[k]) < 1e-12);
    for (int r = 0; r < 2; r++) {
      assert_row(cJSON_GetObjectItem(e, "A"), r, A + 2 * r, 2);
      assert_row(cJSON_GetObjectItem(e, "B"), r, B + r, 1);
      assert_row(cJSON_GetObjectItem(e, "P"), r, P + r, 1);
    }
  }
  cJSON_Delete(root);
}

static void test_csv_layout(void **state) {
  (void)state;
  int rc = ts_shellf(output, sizeof output,
                     "%s sim %s --duration 0.1 --csv /dev/null --jacobians - --jacobians-at 0.02",
                     ACHILLES_BIN, robot);
  assert_int_equal(rc, 0);
  const char *expect = "time,matrix,row,column,value\n0.02,A,swing.q,swing.q,";
  assert_memory_equal(output, expect, strlen(expect));
  const int rows = ts_count_lines(output);
  assert_int_equal(rows, 1 + 4 + 2); /* the header, A's four entries, B's two */
  assert_non_null(strstr(output, "0.02,B,swing.qd,motor,"));
}

/* the trajectory written with and without Jacobians: the same bytes */
static void test_run_unchanged(void **state) {
  (void)state;
  static char plain[1 << 16];
  assert_int_equal(ts_shellf(plain, sizeof plain, "%s sim %s --duration 0.2 --integrator rk4",
                             ACHILLES_BIN, robot), 0);
  assert_int_equal(ts_shellf(output, sizeof output,
                             "%s sim %s --duration 0.2 --integrator rk4 --jacobians /dev/null "
                             "--jacobians-at 0,0.05,0.1,0.15,0.19 --params joint/swing/damping",
                             ACHILLES_BIN, robot), 0);
  assert_string_equal(output, plain);
}

static void expect_error(const char *args, int status, const char *message) {
  int rc = ts_shellf(output, sizeof output, "%s sim %s --duration 0.1 --csv /dev/null %s 2>&1",
                     ACHILLES_BIN, robot, args);
  if (!strstr(output, message)) {
    fail_msg("'%s': expected '%s' in: %s", args, message, output);
  }
  assert_int_equal(rc, status);
}

static void test_errors(void **state) {
  (void)state;
  expect_error("--jacobians - --params joint/nope/damping", 2,
               "--params: parameter 'joint/nope/damping': the model has no joint named 'nope'");
  expect_error("--jacobians - --params body/pole/weight", 2, "unknown field 'weight'");
  expect_error("--jacobians - --params actuator/motor/kp", 2, "only position servos have kp");
  expect_error("--jacobians - --jacobians-at 0.5", 2, "--jacobians-at 0.5: outside the run");
  expect_error("--jacobians - --jacobians-at soon", 2, "--jacobians-at: expected seconds");
  expect_error("--jacobians - --integrator verlet", 2, "no derivatives for this integrator");
  expect_error("--params body/pole/mass", 2, "need --jacobians FILE");
  /* a step with a contact of a pair without derivatives (a cylinder on the floor): the run
   * stops there and says so, naming the pair */
  char can[512];
  ts_tmp_path(can, sizeof can, "can.json");
  ts_write_file(can, "{ \"name\": \"can\", \"bodies\": [ { \"name\": \"b\", \"parent\": \"world\",\n"
                     "  \"pos\": [0, 0, 0.09], \"joint\": { \"name\": \"z\", \"type\": \"slide\", \"axis\": [0, 0, 1] },\n"
                     "  \"inertial\": { \"mass\": 1, \"inertia\": [0.001, 0.001, 0.001, 0, 0, 0] } } ],\n"
                     "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },\n"
                     "    { \"name\": \"can\", \"body\": \"b\", \"type\": \"cylinder\", \"size\": [0.1, 0.1] } ] }\n");
  int rc = ts_shellf(output, sizeof output,
                     "%s sim %s --duration 0.5 --csv /dev/null --jacobians - --jacobians-at 0.4 2>&1",
                     ACHILLES_BIN, can);
  assert_non_null(strstr(output, "--jacobians at t = 0.4"));
  assert_non_null(strstr(output, "a contact of a pair without derivatives yet"));
  assert_non_null(strstr(output, "contact 0, plane 'floor' against cylinder 'can'")); /* the pair */
  assert_int_equal(rc, 1);
}

TS_MAIN_WITH(setup, ts_tmp_teardown, test_json_layout_and_numbers, test_csv_layout,
             test_run_unchanged, test_errors)
