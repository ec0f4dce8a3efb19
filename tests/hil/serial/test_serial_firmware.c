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
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#include "support/wait.h"

#define ARM ACHILLES_SOURCE_DIR "/configs/club_arm.json"
#define NJ 4
/* the firmware's default gains, given explicitly: stiff on the big joints, soft on the light
 * wrist (its inertia is ~100 times smaller) */
static const double KP[NJ] = {20, 20, 20, 2};
static const double KD[NJ] = {0.3, 0.3, 0.3, 0.01};

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
  return ts_spawn((char *const *)argv, NULL, NULL, NULL);
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

/* The firmware holds the arm of `config` at four set points in lockstep for 4 s. */
static void hold_set_points(const char *config) {
  hil_options o;
  ts_options(&o, HIL_MODE_LOCKSTEP, 4.0);
  o.status_period_s = 0.5; /* STATUS frames go to the firmware too */
  hil_runtime *rt = ts_runtime_with(config, &o);
  hil_transport *t = ts_serial_transport(rt, NULL);

  const double sp[NJ] = {0.5, 0.3, -0.4, 0.2};
  const sim_model *m = hil_runtime_model(rt);
  assert_int_equal(m->nu, NJ);
  pid_t pid = start_firmware(hil_serial_transport_path(t), sp);
  assert_true(pid > 0);
  const double t0 = ts_now();
  ts_loop loop;
  ts_loop_start(&loop, rt);
  /* lockstep reaches 4 s only if the firmware answers every step */
  ts_loop_join(&loop, 50);
  /* information only: one closed-loop step = samples out, firmware computes, command back */
  const double wall = ts_now() - t0;
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
  assert_int_equal(ts_wait_exit(pid, 5), 0);
}

TS_TEST(test_pd_firmware_holds_set_points, hold_set_points(ARM))

/* The arm of tests/hil/serial/club_arm_enc.json has its encoder counts at ids 0, 2, 4, 6 with
 * 16384 counts per turn, not the firmware's defaults (0, 4, 7, 10; 8192 ...): it holds the set
 * points only by reading ids and counts per turn from DESCRIBE. */
TS_TEST(test_pd_firmware_finds_its_encoders_by_describe,
        hold_set_points(ACHILLES_SOURCE_DIR "/tests/hil/serial/club_arm_enc.json"))

TS_MAIN(test_pd_firmware_holds_set_points, test_pd_firmware_finds_its_encoders_by_describe)
