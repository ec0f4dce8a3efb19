/* tests/hil/serial/test_homing.c: the example firmware homes an incremental encoder on its index
 * pulse over a pseudo-terminal, as club firmware does at power-up.
 *
 * The club arm runs in lockstep with its shipped sensors, except that the base encoder is made
 * incremental with its index mark at 0.25 rad (a temporary copy of both files). An incremental
 * encoder reads 0 at power-up, so a firmware that holds "0.1 rad" without homing holds 0.1 rad
 * from where the arm started; after homing (pd_firmware --home) it holds 0.1 rad from the index
 * mark, 0.35 rad from the start. The yaw axis has no gravity: the rest is the set point.
 */
#define _DEFAULT_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hil/error.h"
#include "hil/runtime/runtime.h"
#include "hil/serial/serial_transport.h"
#include "hil/transport.h"
#include "support/pty_board.h"
#include "support/runtime.h"
#include "support/skip.h"
#include "support/spawn.h"
#include "support/tmp.h"

#define CONFIGS ACHILLES_SOURCE_DIR "/configs/"
#define INDEX_ANGLE 0.25
#define SETPOINT 0.1
#define STOP_ANGLE 0.6

static cJSON *read_json(const char *path) {
  cJSON *j = cJSON_Parse(ts_slurp(path));
  assert_non_null(j);
  return j;
}

static void write_json(const char *path, const cJSON *j) {
  char *text = cJSON_Print(j);
  assert_non_null(text);
  ts_write_file(path, text);
  free(text);
}

/* dir/arm.json and dir/arm.sensors.json: the club arm with an incremental base encoder; with
 * stop, the base also starts at 0.3 rad and has a hard stop at 0.6 rad */
static void write_configs(const char *dir, char *arm, size_t arm_sz, int stop) {
  char sensors[512];
  snprintf(sensors, sizeof sensors, "%s/arm.sensors.json", dir);
  snprintf(arm, arm_sz, "%s/arm.json", dir);
  cJSON *s = read_json(CONFIGS "club_arm.sensors.json");
  cJSON *base = cJSON_GetArrayItem(cJSON_GetObjectItem(s, "list"), 0);
  assert_string_equal(cJSON_GetObjectItem(base, "name")->valuestring, "enc_base_yaw");
  cJSON_AddStringToObject(base, "mode", "incremental");
  cJSON_AddNumberToObject(base, "index_angle", INDEX_ANGLE);
  write_json(sensors, s);
  cJSON_Delete(s);
  cJSON *r = read_json(CONFIGS "club_arm.json");
  cJSON_ReplaceItemInObject(r, "sensors", cJSON_CreateString("arm.sensors.json"));
  if (stop) {
    cJSON *joint = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "bodies"), 0),
                                       "joint");
    assert_string_equal(cJSON_GetObjectItem(joint, "name")->valuestring, "base_yaw");
    cJSON_AddNumberToObject(joint, "initial", 0.3);
    const double range[2] = {-1.0, STOP_ANGLE};
    cJSON_ReplaceItemInObject(joint, "range", cJSON_CreateDoubleArray(range, 2));
    cJSON_AddBoolToObject(joint, "limited", 1);
  }
  write_json(arm, r);
  cJSON_Delete(r);
}

/* home: 0 none, 1 on the index, 2 on the hard stop (then the set point is 0.2 rad) */
static pid_t start_firmware(const char *path, int home) {
  const char *argv[] = {PD_FIRMWARE, path, "--quiet", "--setpoint", "0=0.1",
                        home ? "--home" : NULL, "0=0.08", NULL, NULL, NULL, NULL};
  if (home == 2) {
    argv[3] = "--setpoint", argv[4] = "0=0.2";
    argv[5] = "--home-stop", argv[6] = "0=0.15";
    argv[7] = "--stop-angle", argv[8] = "0=0.6";
  }
  return ts_spawn((char *const *)argv, NULL, NULL, NULL);
}

/* runs 3 s of lockstep with the firmware; returns the base joint's final angle */
static double run_firmware(const char *arm, int home) {
  hil_options o;
  ts_options(&o, HIL_MODE_LOCKSTEP, 3.0);
  o.status_period_s = 1; /* STATUS frames reach the firmware, as in a real run */
  hil_runtime *rt = ts_runtime_with(arm, &o);
  hil_transport *t = ts_serial_transport(rt, NULL);
  pid_t pid = start_firmware(hil_serial_transport_path(t), home);
  assert_true(pid > 0);
  ts_loop loop;
  ts_loop_start(&loop, rt);
  ts_loop_join(&loop, 50); /* lockstep reaches 3 s only while the firmware answers */
  const sim_model *m = hil_runtime_model(rt);
  const sim_data *d = hil_runtime_data(rt);
  double q = d->qpos[m->joints[sim_model_joint(m, "base_yaw")].qposadr];
  double v = d->qvel[m->joints[sim_model_joint(m, "base_yaw")].dofadr];
  printf("%s: base_yaw ends at %+.4f rad (velocity %+.4f)\n",
         home == 2 ? "homed on the stop" : home ? "homed" : "not homed", q, v);
  assert_true(fabs(v) < 0.05);
  hil_runtime_destroy(&rt); /* closes the pty: the firmware sees it and exits */
  assert_int_equal(ts_wait_exit(pid, 5), 0);
  return q;
}

static void test_firmware_homes_on_index(void **state) {
  (void)state;
  char dir[128], arm[512];
  ts_tmpdir(dir, sizeof dir, "homing");
  write_configs(dir, arm, sizeof arm, 0);
  /* the encoder's offset and scale error (a few mrad) and the PD's last counts bound the rest */
  double plain = run_firmware(arm, 0);
  assert_true(fabs(plain - SETPOINT) < 0.01);
  double homed = run_firmware(arm, 1);
  assert_true(fabs(homed - (INDEX_ANGLE + SETPOINT)) < 0.01);
  ts_rmtree(dir);
}

/* The base starts at 0.3 rad with a hard stop at 0.6 rad: without homing "0.2 rad" is counted
 * from the start (rest at 0.5); homed against the stop it is the joint's own 0.2 rad. */
static void test_firmware_homes_on_hard_stop(void **state) {
  (void)state;
  char dir[128], arm[512];
  ts_tmpdir(dir, sizeof dir, "homing");
  write_configs(dir, arm, sizeof arm, 1);
  double homed = run_firmware(arm, 2);
  /* the stop is soft by a few mrad under the homing push (MuJoCo's default solref/solimp) */
  assert_true(fabs(homed - 0.2) < 0.01);
  ts_rmtree(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_firmware_homes_on_index),
      cmocka_unit_test(test_firmware_homes_on_hard_stop),
  };
  return ts_run(tests);
}
