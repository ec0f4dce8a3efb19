/* tests/support/model.h: our model, loaded for a test.
 *
 *   sim_model *m = ts_model(json);                   robot JSON text
 *   sim_model *m = ts_model_in(json, source);        the same named source (a path: its meshes
 *                                                    are found in the folder that path is in)
 *   sim_model *m = ts_model_file(path);              a robot file (JSON, MJCF or URDF by name)
 *   sim_model *m = ts_config("double_pendulum");     configs/double_pendulum.json
 *
 * Each fails the test with the loader's message (the file, the JSON path, what was expected);
 * the caller frees the model (sim_model_free). Link achilles_test_model (with achilles_sim). */
#ifndef ACHILLES_TESTS_SUPPORT_MODEL_H
#define ACHILLES_TESTS_SUPPORT_MODEL_H

#include "sim/sim.h"

sim_model *ts_model(const char *json);
sim_model *ts_model_in(const char *json, const char *source);
sim_model *ts_model_file(const char *path);
sim_model *ts_config(const char *name);
/* The robot JSON text with the first `from` replaced by `to` must be refused with a message
 * holding `message` (the test fails on a model, on another message, or when `from` is not in
 * the text): a loader's error named by its JSON path. */
void ts_model_refused_edit(const char *json, const char *from, const char *to,
                           const char *message);
/* n steps (sim_step) */
void ts_steps(const sim_model *m, sim_data *d, int n);
/* The sum of the contacts' normal forces (the first component of sim_contact_force), N. */
double ts_normal_force(const sim_model *m, const sim_data *d);
/* sim_data_free(d), then sim_model_free(m): a test's data and the model it was made for, at
 * the end of the test (either may be NULL). */
void ts_sim_free(sim_model *m, sim_data *d);
/* A suite's group fixture: its setup loads the suite's model and leaves it in *state as well;
 * this teardown frees it. */
int ts_model_teardown(void **state);

#endif
