/* tests/sensors/fit/encoder_log.c: logs of known parameters (encoder_log.h). */
#include "encoder_log.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>

#include "hil/record/log.h"
#include "sensors/sensors.h"
#include "sim/sim.h"

#define PI 3.14159265358979323846

const char encoder_log_robot[] =
    "{\"name\": \"fixture\", \"timestep\": 0.001, \"gravity\": [0, 0, 0],"
    " \"bodies\": [{\"name\": \"link\", \"parent\": \"world\", \"pos\": [0, 0, 0],"
    "   \"joint\": {\"name\": \"j\", \"type\": \"hinge\", \"axis\": [0, 1, 0]},"
    "   \"inertial\": {\"mass\": 1.0, \"com\": [0.25, 0, 0],"
    "                  \"inertia\": [0.001, 0.02, 0.02, 0, 0, 0]}}]}";

void encoder_log_record(const char *path, const char *sensors_json, double seconds, double rest,
                        double amp, int flush_every) {
  char err[512];
  sim_model *m = sim_model_load_string(encoder_log_robot, "fixture", err, sizeof err);
  assert_non_null(m);
  sim_data *d = sim_data_new(m);
  cJSON *json = cJSON_Parse(sensors_json);
  assert_non_null(json);
  sens_set *set = NULL;
  if (sens_set_load_json(&set, m, json, "test", err, sizeof err) != 0) {
    fail_msg("%s", err);
  }
  cJSON_Delete(json);
  hil_log_header h;
  assert_int_equal(hil_log_header_init(&h, m, set), 0);
  hil_log_writer *w = hil_log_open(path, &h, err, sizeof err);
  assert_non_null(w);
  const long long n = llround(seconds / m->opt.timestep);
  const double om = 2 * PI * 0.25;
  for (long long k = 0; k < n; k++) {
    const double t = (double)k * m->opt.timestep;
    d->qpos[0] = rest + amp * sin(om * t);
    d->qvel[0] = amp * om * cos(om * t);
    d->time = t;
    d->nstep = k;
    sim_forward(m, d);
    if (sens_set_update(set, m, d) > 0) {
      const sens_sensor *s = sens_set_sensor(set, 0);
      assert_int_equal(hil_log_write_sample(w, s, &s->sample, t), 0);
    }
    if (flush_every > 0 && k % flush_every == flush_every - 1) {
      assert_int_equal(hil_log_flush(w), 0);
    }
  }
  assert_int_equal(hil_log_close(&w), 0);
  sens_set_free(&set);
  sim_data_free(d);
  sim_model_free(m);
}
