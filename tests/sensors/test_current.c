/* tests/sensors/test_current.c: a current sensor on a DC motor reads the winding current the
 * motor model computes (back-EMF, inductance, current limit), not a force divided back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sensors/sensors.h"
#include "support/model.h"
#include "support/skip.h"

static const char *robot =
    "{\"gravity\":[0,0,0],\"timestep\":0.001,\"bodies\":[{\"name\":\"l\",\"parent\":\"world\","
    "\"joint\":{\"name\":\"j\",\"type\":\"hinge\",\"axis\":[0,0,1]},\"inertial\":{\"mass\":1,"
    "\"com\":[0.2,0,0],\"inertia\":[0.01,0.01,0.01,0,0,0]}}],\"actuators\":["
    "{\"name\":\"dc\",\"joint\":\"j\",\"type\":\"dc_motor\",\"supply_voltage\":12,\"resistance\":"
    "2,\"inductance\":0.004,\"kt\":0.02,\"gear\":20,\"efficiency\":0.8,\"current_limit\":3},"
    "{\"name\":\"servo\",\"joint\":\"j\",\"type\":\"velocity_servo\",\"kv\":0.1}]}";

static sens_set *load(const sim_model *m, const char *sensor, char *err, size_t err_sz) {
  char json[1024];
  snprintf(json, sizeof json, "{\"seed\":3,\"list\":[%s]}", sensor);
  cJSON *block = cJSON_Parse(json);
  sens_set *set = NULL;
  int rc = sens_set_load_json(&set, m, block, "test", err, err_sz);
  cJSON_Delete(block);
  return rc == 0 ? set : NULL;
}

static void test_reads_the_model_current(void **state) {
  (void)state;
  char err[512];
  sim_model *m = sim_model_load_string(robot, "robot", err, sizeof err);
  assert_non_null(m);
  sim_data *d = sim_data_new(m);
  sens_set *set = load(m, "{\"name\":\"i\",\"type\":\"torque\",\"actuator\":\"dc\","
                          "\"rate_hz\":1000}", err, sizeof err);
  if (!set) {
    fail_msg("%s", err);
  }
  const sens_sensor *s = sens_set_sensor(set, 0);
  assert_string_equal(s->channel[0], "current");
  d->ctrl[0] = 0.75; /* duty: 9 V into 2 Ω, rising with L/R = 2 ms, back-EMF as it spins */
  int compared = 0;
  for (int k = 0; k < 300; k++) {
    sim_step(m, d);
    sim_forward(m, d);
    if (sens_set_update(set, m, d) > 0 && s->sample.valid) {
      /* noise-free: the measurement is exactly the model's current at that instant */
      assert_true(s->sample.meas[0] == d->actuator_current[0]);
      compared++;
    }
  }
  assert_true(compared >= 299);
  /* and it is the circuit's current, not force / (kt·gear), which would differ by the
   * efficiency: the two readings must disagree by that factor */
  double from_force = d->actuator_force[0] / (0.02 * 20);
  assert_true(fabs(from_force - 0.8 * d->actuator_current[0]) < 1e-12);
  assert_true(d->actuator_current[0] > 0.5); /* it did rise */
  sens_set_free(&set);
  ts_sim_free(m, d);
}

static void expect_error(const sim_model *m, const char *sensor, const char *fragment) {
  char err[512] = "";
  sens_set *set = load(m, sensor, err, sizeof err);
  sens_set_free(&set);
  if (!strstr(err, fragment)) {
    fail_msg("'%s' lacks '%s'", err, fragment);
  }
}

static void test_bad_current_sensors(void **state) {
  (void)state;
  char err[512];
  sim_model *m = sim_model_load_string(robot, "robot", err, sizeof err);
  assert_non_null(m);
  expect_error(m, "{\"name\":\"i\",\"type\":\"torque\",\"actuator\":\"nope\",\"rate_hz\":100}",
               "list[0].actuator: no actuator named \"nope\"");
  expect_error(m, "{\"name\":\"i\",\"type\":\"torque\",\"actuator\":\"servo\",\"rate_hz\":100}",
               "is not a dc_motor");
  expect_error(m, "{\"name\":\"i\",\"type\":\"torque\",\"actuator\":\"dc\",\"rate_hz\":100,"
                  "\"torque_constant_nm_per_a\":0.02}",
               "not both");
  sim_model_free(m);
}

TS_MAIN(test_reads_the_model_current, test_bad_current_sensors)
