/* tests/hil/zmq/test_zmq_stepping.c: lockstep over ZeroMQ: step N gives exactly the samples due
 * in N steps, each with its truth, a marker closing each step; commands move the arm exactly as
 * the physics does in process; runs of one seed are bit-identical; a step request outside
 * lockstep is refused. The robot, server and client are zmq_fixture.h's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "support/skip.h"
#include "zmq_fixture.h"

typedef struct tally {
  int count[NSENSORS], truth_count[NSENSORS];
  uint64_t last_seq[NSENSORS];
  double last_t[NSENSORS];
  int others, markers;
} tally;

static void on_counted(void *user, const message *m) {
  tally *y = user;
  if (strcmp(m->topic, "step") == 0) {
    y->markers++;
    return;
  }
  const int truth = strncmp(m->topic, "truth/", 6) == 0;
  const char *topic = truth ? m->topic + 6 : m->topic;
  for (int i = 0; i < NSENSORS; i++) {
    if (strcmp(topic, sensor_topics[i]) != 0) {
      continue;
    }
    const hil_msg_sample s = decode(m);
    assert_int_equal(s.truth, truth);
    if (truth) {
      /* the ground truth shares the sample's sequence number and time */
      assert_true(y->count[i] > 0 && s.seq == y->last_seq[i] && s.t == y->last_t[i]);
      y->truth_count[i]++;
      return;
    }
    if (y->count[i] > 0) {
      assert_int_equal(s.seq, y->last_seq[i] + 1); /* consecutive */
      assert_true(s.t > y->last_t[i]);
      assert_true(fabs(s.t - y->last_t[i] - 1.0 / sensor_rates[i]) < 1e-9);
    }
    y->count[i]++;
    y->last_seq[i] = s.seq;
    y->last_t[i] = s.t;
    return;
  }
  y->others++;
}

/* step N gives exactly the samples due in N steps, in order, each with its ground truth. */
static void test_step_n(void **state) {
  fixture *f = *state;
  tally y;
  memset(&y, 0, sizeof y);
  cJSON *r = request_ok(&f->cli, "{\"cmd\":\"step\",\"n\":10}");
  assert_int_equal(cJSON_GetObjectItem(r, "granted")->valueint, 10);
  cJSON_Delete(r);
  collect_until(&f->cli, 10, on_counted, &y);
  request_ok_discard(&f->cli, "{\"cmd\":\"step\",\"n\":25}");
  collect_until(&f->cli, 35, on_counted, &y);
  assert_int_equal(y.others, 0);
  assert_int_equal(y.markers, 35); /* one end-of-step marker a step */
  for (int i = 0; i < NSENSORS; i++) {
    const int k = (int)(1000 / sensor_rates[i]); /* physics steps per sample */
    const int expected = 35 / k;
    assert_int_equal(y.count[i], expected);
    assert_int_equal(y.truth_count[i], expected);
    assert_int_equal(y.last_seq[i], (uint64_t)expected); /* seq 0 was the sample at t = 0 */
    assert_true(fabs(y.last_t[i] - 0.001 * expected * k) < 1e-12);
  }
  /* the status counts what went out */
  cJSON *st = request_ok(&f->cli, "{\"cmd\":\"status\"}");
  const cJSON *s = cJSON_GetObjectItem(st, "status");
  assert_true(status_number(s, "steps", NULL) == 35);
  assert_true(fabs(status_number(s, "t", NULL) - 0.035) < 1e-12);
  assert_true(status_number(s, "zmq", "send_failed") == 0);
  cJSON_Delete(st);
}

/* A lockstep client knows when a step's samples are complete: each step ends with a "step"
 * marker that comes after every sample of that step (the 500 Hz elbow encoder's too, on even
 * steps), names the step and its time, and counts the sample messages before it. */
typedef struct marker_check {
  int samples_since; /* sample messages since the last marker */
  int elbow_since;   /* of which the elbow encoder's */
  double t_since;    /* their simulation time (all equal: no sensor has latency) */
  int markers;
  uint64_t last_step;
} marker_check;

static void on_marker_check(void *user, const message *m) {
  marker_check *mc = user;
  if (strcmp(m->topic, "step") != 0) {
    const hil_msg_sample s = decode(m);
    if (mc->samples_since > 0 && s.t != mc->t_since) {
      fail_msg("%s at t = %.6f among samples of t = %.6f before one marker", m->topic, s.t,
               mc->t_since);
    }
    mc->t_since = s.t;
    mc->samples_since++;
    mc->elbow_since += strcmp(m->topic, "enc/enc_elbow") == 0;
    return;
  }
  cJSON *j = cJSON_Parse(m->payload);
  assert_non_null(j);
  const uint64_t step = (uint64_t)status_number(j, "step", NULL);
  const double t = status_number(j, "t", NULL);
  const int samples = (int)status_number(j, "samples", NULL);
  assert_int_equal((int)status_number(j, "v", NULL), HIL_MSG_VERSION);
  cJSON_Delete(j);
  assert_int_equal(step, mc->last_step + 1);
  assert_true(fabs(t - 0.001 * (double)step) < 1e-12);
  assert_true(mc->samples_since == 0 || mc->t_since == t);
  /* 3 sensors at 1 kHz each step, the elbow on even steps; each with its truth */
  const int due = 3 + (step % 2 == 0);
  if (samples != 2 * due || mc->samples_since != samples || mc->elbow_since != (step % 2 == 0)) {
    fail_msg("step %llu: marker counts %d samples, %d arrived before it (%d of the elbow)",
             (unsigned long long)step, samples, mc->samples_since, mc->elbow_since);
  }
  mc->samples_since = mc->elbow_since = 0;
  mc->last_step = step;
  mc->markers++;
}

static void test_step_marker_closes_each_step(void **state) {
  fixture *f = *state;
  marker_check mc;
  memset(&mc, 0, sizeof mc);
  request_ok_discard(&f->cli, "{\"cmd\":\"step\",\"n\":20}");
  collect_until(&f->cli, 20, on_marker_check, &mc);
  assert_int_equal(mc.markers, 20);
  assert_int_equal(mc.samples_since, 0); /* nothing after the last marker */
}

static void test_commands_move_arm(void **state) {
  fixture *f = *state;
  enum { N = 200 };
  /* without commands: granted steps leave the arm exactly at rest */
  trace *idle = calloc(1, sizeof *idle), *driven = calloc(1, sizeof *driven);
  request_ok_discard(&f->cli, "{\"cmd\":\"step\",\"n\":200}");
  collect_until(&f->cli, N, on_trace, idle);
  assert_int_equal(idle->n, N);
  for (int k = 0; k < N; k++) {
    assert_true(idle->angle[k] == 0.0);
  }
  /* with commands: each full command set releases one lockstep step; send them all at once */
  request_ok_discard(&f->cli, "{\"cmd\":\"reset\"}");
  for (int k = 0; k < N; k++) {
    send_commands(&f->cli, shoulder_command(k), 0.1);
  }
  collect_until(&f->cli, 2 * N, on_trace, driven); /* reset keeps the step counter */
  assert_int_equal(driven->n, N);
  assert_int_equal(driven->ntorque, N);
  /* the same commands applied in-process give the same bits */
  char err[512];
  sim_model *m = sim_model_load_file(f->dir.robot, err, sizeof err);
  assert_non_null(m);
  sim_data *d = sim_data_new(m);
  const sim_joint *shoulder = &m->joints[sim_model_joint(m, "shoulder")];
  const int q = shoulder->qposadr, dof = shoulder->dofadr;
  for (int k = 0; k < N; k++) {
    d->ctrl[0] = shoulder_command(k);
    d->ctrl[1] = 0.1;
    sim_step(m, d);
    sim_forward(m, d);
    if (driven->angle[k] != d->qpos[q]) {
      fail_msg("step %d: shoulder %.17g over zmq, %.17g in process", k, driven->angle[k],
               d->qpos[q]);
    }
    /* the torque sensor reads what the motor applies: gear 1 times the command */
    assert_true(driven->truth_torque[k] == d->qfrc_actuator[dof]);
  }
  assert_true(fabs(driven->angle[N - 1]) > 0.01); /* it moved */
  sim_data_free(d);
  sim_model_free(m);
  cJSON *st = request_ok(&f->cli, "{\"cmd\":\"status\"}");
  const cJSON *s = cJSON_GetObjectItem(st, "status");
  assert_true(status_number(s, "commands", "accepted") == 2 * N);
  assert_true(status_number(s, "zmq", "cmd_messages") == N);
  cJSON_Delete(st);
  free(idle);
  free(driven);
}

typedef struct stream {
  char *bytes;
  size_t len, cap;
  int messages;
} stream;

static void on_stream(void *user, const message *m) {
  stream *s = user;
  const size_t tl = strlen(m->topic), need = tl + 1 + m->len + 1;
  if (s->len + need > s->cap) {
    s->cap = 2 * (s->cap + need);
    s->bytes = realloc(s->bytes, s->cap);
    assert_non_null(s->bytes);
  }
  memcpy(s->bytes + s->len, m->topic, tl + 1);
  memcpy(s->bytes + s->len + tl + 1, m->payload, m->len + 1);
  s->len += need;
  s->messages++;
}

/* Every message of a 300-step lockstep run driven by fixed commands. */
static void record_run(stream *out, uint64_t seed) {
  fixture f;
  fixture_start(&f, NULL, seed, HIL_MODE_LOCKSTEP, 0, 0);
  cJSON_Delete(handshake(&f.cli));
  for (int k = 0; k < 300; k++) {
    send_commands(&f.cli, shoulder_command(k), -0.2);
  }
  memset(out, 0, sizeof *out);
  collect_until(&f.cli, 300, on_stream, out);
  fixture_stop(&f);
}

static void test_lockstep_bit_identical(void **state) {
  (void)state;
  stream a, b, other;
  record_run(&a, 1234);
  record_run(&b, 1234);
  record_run(&other, 1235);
  /* 300 steps: 3 sensors at 1 kHz and one at 500 Hz, each with its truth, and a marker a step */
  assert_int_equal(a.messages, 2 * (300 * 3 + 150) + 300);
  assert_int_equal(a.messages, b.messages);
  assert_int_equal(a.len, b.len);
  assert_memory_equal(a.bytes, b.bytes, a.len);
  /* another seed changes the measured values (the comparison can fail) */
  assert_true(a.len != other.len || memcmp(a.bytes, other.bytes, a.len) != 0);
  free(a.bytes);
  free(b.bytes);
  free(other.bytes);
}

/* A step request outside lockstep is refused, with a message that says why (a realtime run at
 * 1 Hz, so the request meets a loop that is waiting for its next tick). */
static void test_step_refused_outside_lockstep(void **state) {
  (void)state;
  fixture f;
  fixture_start(&f, NULL, 1, HIL_MODE_REALTIME, 1, 0);
  cJSON *reply = request(&f.cli, "{\"cmd\":\"step\",\"n\":100}");
  const cJSON *ok = cJSON_GetObjectItem(reply, "ok"), *e = cJSON_GetObjectItem(reply, "error");
  if (!cJSON_IsFalse(ok) || !cJSON_IsString(e) || !strstr(e->valuestring, "lockstep")) {
    char *text = cJSON_PrintUnformatted(reply);
    fail_msg("step in realtime mode answered %s (expected ok false naming lockstep)", text);
  }
  cJSON_Delete(reply);
  fixture_stop(&f);
}

ZMQ_MAIN((test_lockstep_bit_identical, test_step_refused_outside_lockstep),
         (test_step_n, test_step_marker_closes_each_step, test_commands_move_arm))
