/* tests/hil/zmq/test_zmq_loop.c: a controller closes the loop over ZeroMQ in lockstep: a PD loop
 * holds the test arm's shoulder at its set point, and a PID loop holds the shipped club arm's
 * shoulder against gravity through its DC gearmotor. The robot, server and client are
 * zmq_fixture.h's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "support/skip.h"
#include "zmq_fixture.h"

/* A controller closes a PID loop on the club arm's shoulder over zmq: it reads the shoulder
 * encoder each lockstep step and sends PWM duties to the DC gearmotors (shoulder: PID; others:
 * 0, which brakes them through their shorted windings). The shoulder must settle at the
 * setpoint against gravity; the true angle within 0.01 rad (the loop regulates the measured
 * angle, so the true one settles off by the encoder's configured offset, 0.002 rad). */
static void test_club_arm_holds_shoulder(void **state) {
  (void)state;
  enum { N = 4000, HOLD = 500 };
  const double target = 0.3, kp = 2.0, ki = 4.0, kd = 0.05; /* duty/rad, duty/(rad·s), duty·s/rad */
  const double dt = 0.001;
  tmpdir d;
  tmpdir_make(&d);
  server s;
  club_arm_start(&s, &d);
  const sim_model *m = hil_runtime_model(s.rt);
  if (sim_model_actuator(m, "shoulder_motor") < 0 ||
      !sens_set_sensor(hil_runtime_sensors(s.rt), 0)) {
    fail_msg("configs/club_arm.json has no shoulder_motor or no sensors");
  }
  ts_loop_start(&s.loop, s.rt);
  client c;
  client_open(&c, &s);
  cJSON_Delete(handshake(&c));
  const char *names[8];
  double duty[8];
  const int nu = m->nu < 8 ? m->nu : 8;
  int shoulder = -1;
  for (int i = 0; i < nu; i++) {
    names[i] = m->actuators[i].name;
    duty[i] = 0;
    shoulder = strcmp(names[i], "shoulder_motor") == 0 ? i : shoulder;
  }
  char buf[512];
  int n = hil_msg_encode_commands(buf, sizeof buf, names, duty, nu, NAN);
  zmq_send(c.push, buf, (size_t)n, 0); /* releases the first step */
  double integral = 0, worst = 0, first_truth = NAN;
  int steps = 1, truths = 0;
  const double until = wait_until();
  while (truths < N && waiting(until)) {
    message msg;
    receive(&c, &msg);
    if (strcmp(msg.topic, "truth/enc/enc_shoulder") == 0) {
      const hil_msg_sample smp = decode(&msg);
      const double q = channel(&smp, "angle");
      first_truth = truths++ == 0 ? q : first_truth;
      if (truths > N - HOLD) {
        worst = fmax(worst, fabs(q - target));
      }
      continue;
    }
    if (strcmp(msg.topic, "enc/enc_shoulder") != 0) {
      continue;
    }
    const hil_msg_sample smp = decode(&msg);
    if (smp.valid) { /* the first sample is still in the encoder's latency line */
      const double e = target - channel(&smp, "angle");
      integral += e * dt;
      duty[shoulder] = kp * e + ki * integral - kd * channel(&smp, "velocity");
    }
    if (steps++ < N) {
      n = hil_msg_encode_commands(buf, sizeof buf, names, duty, nu, NAN);
      zmq_send(c.push, buf, (size_t)n, 0);
    }
  }
  if (truths < N) {
    fail_msg("%d of %d shoulder truth samples in %.0f s", truths, N, WAIT_S);
  }
  if (worst > 0.01) {
    fail_msg("the shoulder strays %.4f rad from %.2f over the last %d steps", worst, target, HOLD);
  }
  assert_true(fabs(first_truth - target) > 0.2); /* it started far from the setpoint */
  cJSON *st = request_ok(&c, "{\"cmd\":\"status\"}");
  const cJSON *sj = cJSON_GetObjectItem(st, "status");
  assert_true(status_number(sj, "commands", "accepted") == (double)(N * nu));
  assert_true(status_number(sj, "commands", "watchdog_trips") == 0);
  cJSON_Delete(st);
  client_close(&c);
  server_stop(&s);
  tmpdir_remove(&d);
}

static void test_pd_loop_holds_setpoint(void **state) {
  fixture *f = *state;
  enum { N = 2000, HOLD = 500 };
  const double target = 0.5, kp = 4.0, kd = 1.2; /* about critically damped */
  trace *tr = calloc(1, sizeof *tr);
  send_commands(&f->cli, 0, 0); /* releases the first step */
  int steps = 1;
  const double until = wait_until();
  while (steps <= N && waiting(until)) {
    message m;
    receive(&f->cli, &m);
    on_trace(tr, &m);
    if (strcmp(m.topic, "enc/enc_shoulder") != 0) {
      continue;
    }
    const hil_msg_sample s = decode(&m);
    assert_true(s.valid);
    const double u = kp * (target - channel(&s, "angle")) - kd * channel(&s, "velocity");
    if (steps < N) {
      send_commands(&f->cli, u, 0);
    }
    steps++;
  }
  /* the truth of the last sample follows its measurement: wait for it */
  while (tr->n < N && waiting(until)) {
    message m;
    receive(&f->cli, &m);
    on_trace(tr, &m);
  }
  if (steps <= N || tr->n < N) {
    fail_msg("%d of %d steps and %d of %d truth samples in %.0f s", steps - 1, N, tr->n, N, WAIT_S);
  }
  double worst = 0;
  for (int k = N - HOLD; k < N; k++) {
    worst = fmax(worst, fabs(tr->angle[k] - target));
  }
  if (worst > 0.01) {
    fail_msg("the shoulder strays %.4f rad from %.2f over the last %d steps", worst, target, HOLD);
  }
  assert_true(fabs(tr->angle[0]) < 1e-3); /* it started from rest, far from the setpoint */
  free(tr);
}

ZMQ_MAIN((test_club_arm_holds_shoulder),
         (test_pd_loop_holds_setpoint))
