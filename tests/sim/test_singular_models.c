/* tests/sim/test_singular_models.c: a model whose joint-space inertia is singular is refused at
 * load, naming its joints, in every format; a state that turns non-finite anyway stops the
 * runtime and the batch commands, naming the time and the joint; and no sensor reports a
 * non-finite truth as a valid reading.
 *
 * Before: two hinges of one axis on one body loaded (JSON, MJCF and URDF alike), `achilles sim`
 * exited 0 with every state -nan from the second step, and `achilles run` published the encoder
 * as valid with angle 0 while the true angle was NaN. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sensors/sens_fixture.h"
#include "sim/import/import.h"
#include "sim/sim.h"
#include "support/model.h"
#include "support/skip.h"
#include "support/spawn.h"
#include "support/tmp.h"


static const char *write_file(const char *name, const char *text) {
  static char path[160];
  ts_tmp_path(path, sizeof path, name);
  ts_write_file(path, text);
  return path;
}

/* the load of TEXT (as NAME) fails with MESSAGE in its error */
static void expect_refused(const char *name, const char *text, const char *message) {
  char err[1024] = "";
  sim_model *m = sim_import_load_file(write_file(name, text), NULL, err, sizeof err);
  print_message("%s\n", err);
  if (m || !strstr(err, message)) {
    fail_msg("%s: %s, expected '%s' in '%s'", name, m ? "loaded" : "refused", message, err);
  }
}

static sim_model *expect_loads(const char *name, const char *text) {
  char err[1024] = "";
  sim_model *m = sim_import_load_file(write_file(name, text), NULL, err, sizeof err);
  if (!m) {
    fail_msg("%s: %s", name, err);
  }
  return m;
}

#define TWO_HINGES(arm2)                                                                         \
  "{ \"bodies\": [ { \"name\": \"b\", \"parent\": \"world\", \"joints\": [\n"                      \
  "  { \"name\": \"h1\", \"type\": \"hinge\", \"axis\": [0, 1, 0] },\n"                          \
  "  { \"name\": \"h2\", \"type\": \"hinge\", \"axis\": [0, 1, 0]" arm2 " } ],\n"                \
  "  \"inertial\": { \"mass\": 1, \"com\": [0.1, 0, 0], \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } } ] }\n"

static void test_dependent_axes_refused(void **state) {
  (void)state;
  expect_refused("two.json", TWO_HINGES(""),
                 "two.json: bodies[0].joints[0]: joints \"h1\" and \"h2\" move the same way at "
                 "the initial pose");
  /* with an armature on one the inertia is positive definite: it loads and steps finitely */
  sim_model *m = expect_loads("armature.json", TWO_HINGES(", \"armature\": 0.001"));
  sim_data *d = sim_data_new(m);
  ts_steps(m, d, 100);
  assert_int_equal(sim_state_nonfinite(m, d), -1);
  ts_sim_free(m, d);
  /* MJCF: the same two hinges */
  expect_refused("two.xml",
                 "<mujoco>\n  <worldbody>\n    <body name=\"b\">\n"
                 "      <joint name=\"h1\" axis=\"0 1 0\"/><joint name=\"h2\" axis=\"0 1 0\"/>\n"
                 "      <geom type=\"capsule\" fromto=\"0 0 0 0.2 0 0\" size=\"0.02\"/>\n"
                 "    </body>\n  </worldbody>\n</mujoco>\n",
                 "two.xml (converted): bodies[0].joints[0]: joints \"h1\" and \"h2\" move the same "
                 "way");
  /* URDF: two coaxial joints with a link between them that carries no inertia about the axis */
  expect_refused("coaxial.urdf",
                 "<robot name=\"r\">\n  <link name=\"base\"/>\n"
                 "  <link name=\"a\"><inertial><mass value=\"0.000001\"/><inertia ixx=\"1e-20\" "
                 "iyy=\"1e-20\" izz=\"1e-20\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
                 "  <link name=\"b\"><inertial><origin xyz=\"0.1 0 0\"/><mass value=\"1\"/>"
                 "<inertia ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>"
                 "</inertial></link>\n"
                 "  <joint name=\"h1\" type=\"continuous\"><parent link=\"base\"/><child link=\"a\"/>"
                 "<axis xyz=\"0 1 0\"/></joint>\n"
                 "  <joint name=\"h2\" type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/>"
                 "<axis xyz=\"0 1 0\"/></joint>\n</robot>\n",
                 "coaxial.urdf (converted): bodies[0].joint: joints \"h1\" and \"h2\" move the same "
                 "way");
  /* a gimbal (z, y, z) is singular where its middle angle is 0: refused there, loaded away */
  static const char gimbal[] =
      "{ \"bodies\": [ { \"name\": \"g\", \"parent\": \"world\", \"joints\": [\n"
      "  { \"name\": \"yaw\", \"type\": \"hinge\", \"axis\": [0, 0, 1] },\n"
      "  { \"name\": \"pitch\", \"type\": \"hinge\", \"axis\": [0, 1, 0], \"initial\": %s },\n"
      "  { \"name\": \"roll\", \"type\": \"hinge\", \"axis\": [0, 0, 1] } ],\n"
      "  \"inertial\": { \"mass\": 1, \"inertia\": [0.01, 0.02, 0.03, 0, 0, 0] } } ] }\n";
  char text[1024];
  snprintf(text, sizeof text, gimbal, "0");
  expect_refused("gimbal0.json", text, "joints \"yaw\" and \"roll\" move the same way");
  snprintf(text, sizeof text, gimbal, "0.5");
  sim_model_free(expect_loads("gimbal.json", text));
}

/* No sensor reports a reading of a NaN state as valid: an encoder's count of a NaN angle read 0 */
static void test_sensors_refuse_nonfinite_truth(void **state) {
  (void)state;
  fixture f;
  assert_int_equal(fixture_load(&f, "{\"list\": [\n"
                                    "{\"name\": \"enc\", \"type\": \"encoder\", \"joint\": \"j\","
                                    " \"rate_hz\": 1000, \"counts_per_rev\": 4096, \"output\": \"counts\"},\n"
                                    "{\"name\": \"both\", \"type\": \"encoder\", \"joint\": \"j\","
                                    " \"rate_hz\": 1000, \"counts_per_rev\": 4096, \"output\": \"both\","
                                    " \"velocity\": true},\n"
                                    "{\"name\": \"imu\", \"type\": \"imu\", \"site\": \"tip\", \"rate_hz\": 1000},\n"
                                    "{\"name\": \"trq\", \"type\": \"torque\", \"joint\": \"j\", \"rate_hz\": 1000}]}"),
                   0);
  fixture_at(&f, 0, 0.3, 0.1);
  for (int i = 0; i < sens_set_count(f.set); i++) {
    assert_true(sens_set_sensor(f.set, i)->sample.valid);
  }
  f.d->qfrc_applied[0] = NAN; /* the torque sensor's source */
  fixture_at(&f, 1, NAN, NAN);
  for (int i = 0; i < sens_set_count(f.set); i++) {
    const sens_sensor *s = sens_set_sensor(f.set, i);
    print_message("%s at a NaN state: valid %d, measurement %g\n", s->name, s->sample.valid,
                  s->sample.meas[0]);
    assert_false(s->sample.valid);
  }
  fixture_free(&f);
}

/* runs ARGS (ACHILLES and its arguments, NULL-terminated), stderr into the suite folder's
 * "err"; the exit status */
static int run(const char *const *args) {
  char err_path[160];
  ts_tmp_path(err_path, sizeof err_path, "err");
  return ts_wait_exit(ts_spawn((char *const *)args, NULL, "/dev/null", err_path), 120);
}

static const char *stderr_text(void) {
  char path[160];
  ts_tmp_path(path, sizeof path, "err");
  return ts_slurp(path);
}

/* A stiff spring on a light link stepped far too coarsely blows up to infinity and NaN: each
 * command stops at the first non-finite state, says when and which joint, and exits 1 (sim
 * exited 0 with rows of -nan) */
static void test_commands_stop_on_nonfinite_state(void **state) {
  (void)state;
  const char *robot = write_file(
      "blowup.json",
      "{ \"timestep\": 1.0, \"gravity\": [0, 0, 0], \"bodies\": [ { \"name\": \"link\",\n"
      "  \"parent\": \"world\", \"joint\": { \"name\": \"spring\", \"type\": \"hinge\", \"axis\": [0, 1, 0],\n"
      "  \"stiffness\": 1e6, \"initial\": 0.1 }, \"inertial\": { \"mass\": 0.001,\n"
      "  \"inertia\": [1e-6, 1e-6, 1e-6, 0, 0, 0] } } ],\n"
      "  \"sensors\": { \"seed\": 1, \"list\": [ { \"name\": \"enc\", \"type\": \"encoder\",\n"
      "  \"joint\": \"spring\", \"rate_hz\": 1, \"counts_per_rev\": 4096 } ] } }\n");
  const char *sim[] = {ACHILLES_BIN, "sim", robot, "--duration", "1000", NULL};
  assert_int_equal(run(sim), 1);
  assert_non_null(strstr(stderr_text(), "achilles sim: t="));
  assert_non_null(strstr(stderr_text(), "s: joint \"spring\": the state is not finite: stopped"));
  const char *sensors[] = {ACHILLES_BIN, "sensors", robot, "--duration", "1000", NULL};
  assert_int_equal(run(sensors), 1);
  assert_non_null(strstr(stderr_text(), "joint \"spring\": the state is not finite"));
  const char *live[] = {ACHILLES_BIN, "run", robot, "--mode", "fast", "--rate", "1",
                        "--duration", "1000", "--no-zmq", "--quiet", NULL};
  assert_int_equal(run(live), 1);
  print_message("%s", stderr_text());
  assert_non_null(strstr(stderr_text(), "joint \"spring\": the state is not finite"));
  assert_non_null(strstr(stderr_text(), "the run stops"));
  assert_non_null(strstr(stderr_text(), "its state turned non-finite"));
}

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_dependent_axes_refused,
             test_sensors_refuse_nonfinite_truth, test_commands_stop_on_nonfinite_state)
