/* tests/hil/serial/test_serial_firmware.c: the example firmware (hil/client/examples/
 * pd_firmware.c), a separate host program, closes a position loop on the simulated arm over a
 * pseudo-terminal — exactly as a board would over USB — and holds its set points.
 *
 * The runtime (the club arm with DC motors and the shipped sensors, in lockstep so the result
 * does not depend on the machine's speed) runs in a thread; the firmware is started with the
 * pty path the transport printed. The expected resting angles come from the physics: at rest
 * the motor torque K·kp·(set point − angle) balances gravity (qfrc_bias), with
 * K = kt·gear·efficiency·supply/resistance the stall torque per unit duty.
 */
#define _DEFAULT_SOURCE
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

#define ARM ACHILLES_SOURCE_DIR "/configs/club_arm.json"
#define NJ 4
/* the firmware's default gains, given explicitly: stiff on the big joints, soft on the light
 * wrist (its inertia is ~100 times smaller) */
static const double KP[NJ] = {20, 20, 20, 2};
static const double KD[NJ] = {0.3, 0.3, 0.3, 0.01};

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

static pid_t start_firmware(const char *path, const double *sp) {
  char arg[3][NJ][40];
  const char *argv[4 + 6 * NJ];
  int n = 0;
  argv[n++] = PD_FIRMWARE;
  argv[n++] = path;
  argv[n++] = "--quiet";
  for (int j = 0; j < NJ; j++) {
    snprintf(arg[0][j], sizeof arg[0][j], "%d=%.17g", j, sp[j]);
    snprintf(arg[1][j], sizeof arg[1][j], "%d=%.17g", j, KP[j]);
    snprintf(arg[2][j], sizeof arg[2][j], "%d=%.17g", j, KD[j]);
    argv[n++] = "--setpoint", argv[n++] = arg[0][j];
    argv[n++] = "--kp", argv[n++] = arg[1][j];
    argv[n++] = "--kd", argv[n++] = arg[2][j];
  }
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid == 0) {
    execv(PD_FIRMWARE, (char *const *)argv);
    _exit(127);
  }
  return pid;
}

/* gravity at the final angles, at rest: what the motors must hold */
static void gravity(const sim_model *m, const sim_data *d, double *out) {
  sim_data *g = sim_data_new(m);
  assert_non_null(g);
  memcpy(g->qpos, d->qpos, sizeof(double) * (size_t)m->nq);
  sim_kinematics(m, g);
  sim_rnea_bias(m, g);
  memcpy(out, g->qfrc_bias, sizeof(double) * (size_t)m->nv);
  sim_data_free(g);
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

/* The firmware holds the arm of `config` at four set points in lockstep for 4 s. */
static void hold_set_points(const char *config) {
  hil_options o;
  hil_options_default(&o);
  o.mode = HIL_MODE_LOCKSTEP;
  o.quiet = 1;
  o.status_period_s = 0.5; /* STATUS frames go to the firmware too */
  o.duration_s = 4.0;
  char err[512];
  hil_runtime *rt = hil_runtime_new(config, &o, err, sizeof err);
  if (!rt) {
    fail_msg("%s", err);
  }
  hil_serial_options so;
  hil_serial_options_default(&so);
  hil_transport *t = hil_serial_transport_new(&so, err, sizeof err);
  assert_non_null(t);
  assert_int_equal(hil_runtime_add_transport(rt, t), HIL_OK);

  const double sp[NJ] = {0.5, 0.3, -0.4, 0.2};
  const sim_model *m = hil_runtime_model(rt);
  assert_int_equal(m->nu, NJ);
  pid_t pid = start_firmware(hil_serial_transport_path(t), sp);
  assert_true(pid > 0);
  run_arg a = {rt, 0};
  pthread_t th;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
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
  clock_gettime(CLOCK_MONOTONIC, &t1);
  assert_true(finished); /* lockstep reached 4 s only if the firmware answered every step */
  /* information only: one closed-loop step = samples out, firmware computes, command back */
  double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  printf("lockstep: %.0f steps in %.3f s of wall time, %.1f us per closed-loop step\n",
         hil_runtime_data(rt)->time * 1000, wall, 1e6 * wall / (hil_runtime_data(rt)->time * 1000));

  const sim_data *d = hil_runtime_data(rt);
  hil_status st;
  hil_runtime_status(rt, &st);
  /* the run ends on the step that reaches the duration (time accumulates in binary, so allow
   * half a step) */
  assert_true(d->time >= o.duration_s - 0.5 * hil_runtime_model(rt)->opt.timestep);
  assert_int_equal(st.commands.rejected_malformed + st.commands.rejected_unknown +
                       st.commands.rejected_nonfinite,
                   0);
  assert_int_equal(st.commands.watchdog_trips, 0);
  double g[16];
  assert_true(m->nv <= 16);
  gravity(m, d, g);
  for (int j = 0; j < NJ; j++) {
    const sim_actuator *act = &m->actuators[j];
    double k = act->kt * act->gear * act->efficiency * act->supply_voltage / act->resistance;
    double rest = sp[j] - g[act->dof] / (k * KP[j]); /* gravity's steady error */
    double q = d->qpos[act->qposadr];
    printf("joint %d: set point %+.4f, predicted rest %+.4f, reached %+.4f (velocity %+.4f)\n", j,
           sp[j], rest, q, d->qvel[act->dof]);
    /* the motor figures docs/serial-transport.md quotes */
    printf("joint %d: stall torque per unit duty %.3g N*m, back-EMF damping %.3g N*m*s/rad\n", j, k,
           act->kt * act->ke * act->gear * act->gear * act->efficiency / act->resistance);
    /* encoder offsets and scale errors (configs/club_arm.sensors.json) are a few mrad */
    assert_true(fabs(q - rest) < 0.01);
    assert_true(fabs(q - sp[j]) < 0.05);
    assert_true(fabs(d->qvel[act->dof]) < 0.1); /* at rest (the last step is the shutdown's) */
  }
  hil_runtime_destroy(&rt); /* closes the pty: the firmware sees it and exits */
  int status = reap(pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_pd_firmware_holds_set_points(void **state) {
  (void)state;
  hold_set_points(ARM);
}

/* The arm of tests/hil/serial/club_arm_enc.json has its encoder counts at ids 0, 2, 4, 6 with
 * 16384 counts per turn, not the firmware's defaults (0, 4, 7, 10; 8192 ...): it holds the set
 * points only by reading ids and counts per turn from DESCRIBE. */
static void test_pd_firmware_finds_its_encoders_by_describe(void **state) {
  (void)state;
  hold_set_points(ACHILLES_SOURCE_DIR "/tests/hil/serial/club_arm_enc.json");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pd_firmware_holds_set_points),
      cmocka_unit_test(test_pd_firmware_finds_its_encoders_by_describe),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
