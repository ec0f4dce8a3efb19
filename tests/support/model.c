/* tests/support/model.c: our model, loaded for a test (model.h). */
#include "support/model.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

sim_model *ts_model(const char *json) {
  return ts_model_in(json, "test");
}

/* m, or the test fails with the loader's message */
static sim_model *loaded(sim_model *m, const char *err) {
  if (!m) {
    fail_msg("%s", err);
  }
  return m;
}

sim_model *ts_model_in(const char *json, const char *source) {
  char err[1024];
  return loaded(sim_model_load_string(json, source, err, sizeof err), err);
}

sim_model *ts_model_file(const char *path) {
  char err[1024];
  return loaded(sim_model_load_file(path, err, sizeof err), err);
}

void ts_steps(const sim_model *m, sim_data *d, int n) {
  for (int i = 0; i < n; i++) {
    sim_step(m, d);
  }
}

double ts_normal_force(const sim_model *m, const sim_data *d) {
  double normal = 0;
  for (int c = 0; c < d->ncon; c++) {
    double f[3];
    sim_contact_force(m, d, c, f);
    normal += f[0];
  }
  return normal;
}

void ts_sim_free(sim_model *m, sim_data *d) {
  sim_data_free(d);
  sim_model_free(m);
}

int ts_model_teardown(void **state) {
  sim_model *m = *state;
  sim_model_free(m);
  *state = NULL;
  return 0;
}

sim_model *ts_config(const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/configs/%s.json", ACHILLES_SOURCE_DIR, name);
  return ts_model_file(path);
}

void ts_model_refused_edit(const char *json, const char *from, const char *to,
                           const char *message) {
  char edited[8192], err[512];
  const char *at = strstr(json, from);
  if (!at) {
    fail_msg("\"%s\" is not in the JSON to edit", from);
  }
  snprintf(edited, sizeof edited, "%.*s%s%s", (int)(at - json), json, to, at + strlen(from));
  sim_model *m = sim_model_load_string(edited, "edited.json", err, sizeof err);
  if (m || !strstr(err, message)) {
    sim_model_free(m);
    fail_msg("\"%s\" -> \"%s\": expected a refusal with \"%s\", got \"%s\"", from, to, message,
             m ? "a model" : err);
  }
}
