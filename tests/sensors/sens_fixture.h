/* tests/sensors/sens_fixture.h: a one-link robot and helpers shared by the sensor suites.
 * The true state is set directly (qpos, qvel, time, nstep, then sim_forward), so each test knows
 * the truth exactly without integrating. */
#ifndef ACHILLES_TESTS_SENS_FIXTURE_H
#define ACHILLES_TESTS_SENS_FIXTURE_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "sensors/sensors.h"

/* hinge "j" about y on body "link" (site "tip" at x = 0.5 m), 1 kHz, no gravity */
static const char fixture_robot[] =
    "{\"name\": \"fixture\", \"timestep\": 0.001, \"gravity\": [0, 0, 0],"
    " \"bodies\": [{\"name\": \"link\", \"parent\": \"world\", \"pos\": [0, 0, 0],"
    "   \"joint\": {\"name\": \"j\", \"type\": \"hinge\", \"axis\": [0, 1, 0]},"
    "   \"inertial\": {\"mass\": 1.0, \"com\": [0.25, 0, 0],"
    "                  \"inertia\": [0.001, 0.02, 0.02, 0, 0, 0]}}],"
    " \"sites\": [{\"name\": \"tip\", \"body\": \"link\", \"pos\": [0.5, 0, 0]}]}";

typedef struct fixture {
  sim_model *m;
  sim_data *d;
  sens_set *set;
  char err[512];
} fixture;

/* loads the robot and a sensors block given as JSON text; returns the loader's code */
static inline int fixture_load(fixture *f, const char *sensors_json) {
  f->m = sim_model_load_string(fixture_robot, "fixture", f->err, sizeof f->err);
  if (!f->m) {
    fprintf(stderr, "%s\n", f->err);
    return -100;
  }
  f->d = sim_data_new(f->m);
  cJSON *json = cJSON_Parse(sensors_json);
  if (!json) {
    return -101;
  }
  const int rc = sens_set_load_json(&f->set, f->m, json, "test", f->err, sizeof f->err);
  cJSON_Delete(json);
  if (rc != 0) {
    fprintf(stderr, "load: %s\n", f->err);
  }
  return rc;
}

static inline void fixture_free(fixture *f) {
  sens_set_free(&f->set);
  sim_data_free(f->d);
  sim_model_free(f->m);
}

/* physics step n with the joint at (q, qd): sensors sample what is due */
static inline int fixture_at(fixture *f, long long n, double q, double qd) {
  f->d->qpos[0] = q;
  f->d->qvel[0] = qd;
  f->d->time = (double)n * f->m->opt.timestep;
  f->d->nstep = n;
  sim_forward(f->m, f->d);
  return sens_set_update(f->set, f->m, f->d);
}

static inline const sens_sample *fixture_sample(const fixture *f, const char *sensor) {
  return &sens_set_sensor(f->set, sens_set_find(f->set, sensor))->sample;
}

#endif
