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
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hil/error.h"
#include "hil/runtime/runtime.h"
#include "hil/serial/serial_transport.h"
#include "hil/transport.h"

#define CONFIGS ACHILLES_SOURCE_DIR "/configs/"
#define INDEX_ANGLE 0.25
#define SETPOINT 0.1
#define STOP_ANGLE 0.6

static cJSON *read_json(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static char text[1 << 16];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  cJSON *j = cJSON_Parse(text);
  assert_non_null(j);
  return j;
}

static void write_json(const char *path, const cJSON *j) {
  char *text = cJSON_Print(j);
  assert_non_null(text);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
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

typedef struct run_arg {
  hil_runtime *rt;
  volatile int done;
} run_arg;

static void *run_thread(void *p) {
  run_arg *a = p;
  hil_runtime_run(a->rt);
  a->done = 1;
  return NULL;
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
  pid_t pid = fork();
  if (pid == 0) {
    execv(PD_FIRMWARE, (char *const *)argv);
    _exit(127);
  }
  return pid;
}

/* waits for the firmware to exit (it does when the pty closes), killing it after about 5 s */
static int reap(pid_t pid) {
  int status = 0;
  for (int i = 0; i < 500; i++) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return status;
    }
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

/* runs 3 s of lockstep with the firmware; returns the base joint's final angle */
static double run_firmware(const char *arm, int home) {
  hil_options o;
  hil_options_default(&o);
  o.mode = HIL_MODE_LOCKSTEP;
  o.quiet = 1;
  o.duration_s = 3.0;
  char err[512];
  hil_runtime *rt = hil_runtime_new(arm, &o, err, sizeof err);
  if (!rt) {
    fail_msg("%s", err);
  }
  hil_serial_options so;
  hil_serial_options_default(&so);
  hil_transport *t = hil_serial_transport_new(&so, err, sizeof err);
  assert_non_null(t);
  assert_int_equal(hil_runtime_add_transport(rt, t), HIL_OK);
  pid_t pid = start_firmware(hil_serial_transport_path(t), home);
  assert_true(pid > 0);
  run_arg a = {rt, 0};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, run_thread, &a), 0);
  for (int i = 0; i < 5000 && !a.done; i++) { /* bound: 50 s of wall time */
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  int finished = a.done;
  if (!finished) {
    hil_runtime_request_stop(rt);
  }
  pthread_join(th, NULL);
  if (!finished) {
    fail_msg("lockstep did not reach 3 s within 50 s: the firmware stopped answering");
  }
  const sim_model *m = hil_runtime_model(rt);
  const sim_data *d = hil_runtime_data(rt);
  double q = d->qpos[m->joints[sim_model_joint(m, "base_yaw")].qposadr];
  double v = d->qvel[m->joints[sim_model_joint(m, "base_yaw")].dofadr];
  printf("%s: base_yaw ends at %+.4f rad (velocity %+.4f)\n",
         home == 2 ? "homed on the stop" : home ? "homed" : "not homed", q, v);
  assert_true(fabs(v) < 0.05);
  hil_runtime_destroy(&rt); /* closes the pty: the firmware sees it and exits */
  int status = reap(pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  return q;
}

static void test_firmware_homes_on_index(void **state) {
  (void)state;
  char dir[] = "/tmp/achilles_homing_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char arm[512];
  write_configs(dir, arm, sizeof arm, 0);
  /* the encoder's offset and scale error (a few mrad) and the PD's last counts bound the rest */
  double plain = run_firmware(arm, 0);
  assert_true(fabs(plain - SETPOINT) < 0.01);
  double homed = run_firmware(arm, 1);
  assert_true(fabs(homed - (INDEX_ANGLE + SETPOINT)) < 0.01);
  char path[600];
  snprintf(path, sizeof path, "%s/arm.json", dir);
  remove(path);
  snprintf(path, sizeof path, "%s/arm.sensors.json", dir);
  remove(path);
  rmdir(dir);
}

/* The base starts at 0.3 rad with a hard stop at 0.6 rad: without homing "0.2 rad" is counted
 * from the start (rest at 0.5); homed against the stop it is the joint's own 0.2 rad. */
static void test_firmware_homes_on_hard_stop(void **state) {
  (void)state;
  char dir[] = "/tmp/achilles_homing_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char arm[512];
  write_configs(dir, arm, sizeof arm, 1);
  double homed = run_firmware(arm, 2);
  /* the stop is soft by a few mrad under the homing push (MuJoCo's default solref/solimp) */
  assert_true(fabs(homed - 0.2) < 0.01);
  char path[600];
  snprintf(path, sizeof path, "%s/arm.json", dir);
  remove(path);
  snprintf(path, sizeof path, "%s/arm.sensors.json", dir);
  remove(path);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_firmware_homes_on_index),
      cmocka_unit_test(test_firmware_homes_on_hard_stop),
  };
  return cmocka_run_group_tests_name("homing", tests, NULL, NULL);
}
