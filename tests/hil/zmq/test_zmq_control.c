/* tests/hil/zmq/test_zmq_control.c: the control socket (REQ/REP) of the ZeroMQ transport: the
 * hello reply describes the model, its actuators and sensors (the test robot and the shipped
 * club arm); errors answer and keep the socket alive; pause, snapshots, live noise tuning and
 * the present state ({"cmd":"latest"}). The robot, server and client are zmq_fixture.h's. */
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

static const cJSON *array_item_named(const cJSON *array, const char *name) {
  const cJSON *it;
  cJSON_ArrayForEach(it, array) {
    const cJSON *n = cJSON_GetObjectItem(it, "name");
    if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) {
      return it;
    }
  }
  return NULL;
}

/* obj.key, which must be a string. */
static const char *text_member(const cJSON *obj, const char *key) {
  const cJSON *x = cJSON_GetObjectItem(obj, key);
  if (!cJSON_IsString(x)) {
    fail_msg("no string \"%s\"", key);
  }
  return x->valuestring;
}

static void test_hello(void **state) {
  fixture *f = *state;
  const cJSON *h = f->hello;
  assert_int_equal(cJSON_GetObjectItem(h, "v")->valueint, HIL_MSG_VERSION);
  assert_string_equal(cJSON_GetObjectItem(h, "model")->valuestring, "zmq_arm");
  assert_string_equal(cJSON_GetObjectItem(h, "mode")->valuestring, "lockstep");
  assert_true(cJSON_GetObjectItem(h, "rate_hz")->valuedouble == 1000);
  assert_true(cJSON_GetObjectItem(h, "timestep")->valuedouble == 0.001);
  assert_true(cJSON_GetObjectItem(h, "t")->valuedouble == 0);
  assert_int_equal(cJSON_GetObjectItem(h, "seed")->valueint, 42);
  assert_true(cJSON_IsTrue(cJSON_GetObjectItem(h, "truth")));
  const cJSON *joints = cJSON_GetObjectItem(h, "joints");
  assert_int_equal(cJSON_GetArraySize(joints), 2);
  assert_non_null(array_item_named(joints, "shoulder"));
  const cJSON *acts = cJSON_GetObjectItem(h, "actuators");
  assert_int_equal(cJSON_GetArraySize(acts), 2);
  const cJSON *motor = array_item_named(acts, "shoulder_motor");
  assert_non_null(motor);
  assert_string_equal(cJSON_GetObjectItem(motor, "type")->valuestring, "motor");
  assert_string_equal(cJSON_GetObjectItem(motor, "joint")->valuestring, "shoulder");
  assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(motor, "ctrlrange"), 1)->valuedouble == 5);
  const cJSON *sensors = cJSON_GetObjectItem(h, "sensors");
  assert_int_equal(cJSON_GetArraySize(sensors), NSENSORS);
  for (int i = 0; i < NSENSORS; i++) {
    const cJSON *s = cJSON_GetArrayItem(sensors, i);
    assert_string_equal(cJSON_GetObjectItem(s, "topic")->valuestring, sensor_topics[i]);
    assert_true(cJSON_GetObjectItem(s, "rate_hz")->valuedouble == sensor_rates[i]);
  }
  /* what each sensor is mounted on; an encoder's counts per revolution and resolution */
  const cJSON *enc = array_item_named(sensors, "enc_elbow");
  assert_string_equal(text_member(enc, "joint"), "elbow");
  assert_true(status_number(enc, "counts_per_rev", NULL) == 1024);
  assert_true(status_number(enc, "counts_per_turn", NULL) == 4096); /* quadrature */
  assert_true(fabs(status_number(enc, "resolution", NULL) - 6.283185307179586 / 4096) < 1e-15);
  assert_string_equal(text_member(array_item_named(sensors, "trq_shoulder"), "joint"), "shoulder");
  assert_string_equal(text_member(array_item_named(sensors, "imu_fore"), "body"), "fore");
  assert_null(cJSON_GetObjectItem(array_item_named(sensors, "imu_fore"), "counts_per_rev"));
  cJSON *gp = request_ok(&f->cli, "{\"cmd\":\"get_param\",\"sensor\":\"enc_shoulder\"}");
  const cJSON *gs = cJSON_GetObjectItem(gp, "sensor");
  assert_string_equal(text_member(gs, "joint"), "shoulder");
  assert_true(status_number(gs, "counts_per_turn", NULL) == 16384);
  cJSON_Delete(gp);
  const cJSON *imu = array_item_named(sensors, "imu_fore");
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(imu, "channels")), 6);
  assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(imu, "units"), 3)->valuestring,
                      "m/s^2");
  const cJSON *eps = cJSON_GetObjectItem(h, "endpoints");
  assert_string_equal(cJSON_GetObjectItem(eps, "ctl")->valuestring, f->srv.endpoint[HIL_ZMQ_CTL]);
}

/* hello lists what the model and its sensors hold. */
static void test_hello_club_arm(void **state) {
  (void)state;
  tmpdir d;
  tmpdir_make(&d);
  server s;
  club_arm_start(&s, &d);
  const sim_model *m = hil_runtime_model(s.rt); /* immutable: safe to read beside the loop */
  const sens_set *set = hil_runtime_sensors(s.rt);
  ts_loop_start(&s.loop, s.rt);
  client c;
  client_open(&c, &s);
  cJSON *h = handshake(&c);
  assert_string_equal(cJSON_GetObjectItem(h, "model")->valuestring, "club_arm");
  const cJSON *joints = cJSON_GetObjectItem(h, "joints");
  assert_int_equal(cJSON_GetArraySize(joints), m->njnt);
  for (int j = 0; j < m->njnt; j++) {
    assert_non_null(array_item_named(joints, m->joints[j].name));
  }
  const cJSON *acts = cJSON_GetObjectItem(h, "actuators");
  assert_int_equal(cJSON_GetArraySize(acts), m->nu);
  for (int i = 0; i < m->nu; i++) {
    assert_non_null(array_item_named(acts, m->actuators[i].name));
  }
  const cJSON *sensors = cJSON_GetObjectItem(h, "sensors");
  assert_int_equal(cJSON_GetArraySize(sensors), set ? sens_set_count(set) : 0);
  for (int i = 0; set && i < sens_set_count(set); i++) {
    assert_non_null(array_item_named(sensors, sens_set_sensor(set, i)->name));
  }
  cJSON_Delete(h);
  client_close(&c);
  server_stop(&s);
  tmpdir_remove(&d);
}

static void expect_refused(client *c, const char *text, const char *expected) {
  cJSON *r = request(c, text);
  assert_true(cJSON_IsFalse(cJSON_GetObjectItem(r, "ok")));
  const cJSON *e = cJSON_GetObjectItem(r, "error");
  assert_true(cJSON_IsString(e));
  if (!strstr(e->valuestring, expected)) {
    fail_msg("%s: error \"%s\" lacks \"%s\"", text, e->valuestring, expected);
  }
  cJSON_Delete(r);
}

static void test_control_errors_keep_rep_alive(void **state) {
  fixture *f = *state;
  expect_refused(&f->cli, "garbage", "not JSON");
  expect_refused(&f->cli, "{\"cmd\":\"fly\"}", "unknown request");
  expect_refused(&f->cli, "{\"cmd\":\"step\",\"n\":-3}", "n: expected an integer");
  expect_refused(&f->cli, "{\"cmd\":\"snapshot_restore\"}", "no snapshot saved");
  expect_refused(&f->cli, "{\"cmd\":\"get_param\",\"sensor\":\"nope\"}", "no such sensor");
  expect_refused(&f->cli, "{\"cmd\":\"get_param\",\"sensor\":\"enc_shoulder\",\"path\":\"x.y\"}",
                 "no such parameter");
  expect_refused(&f->cli,
                 "{\"cmd\":\"set_param\",\"sensor\":\"enc_shoulder\",\"path\":"
                 "\"noise.white.sigma\",\"value\":-1}",
                 "noise.white.sigma");
  expect_refused(&f->cli, "{\"cmd\":\"fault\",\"sensor\":\"imu_fore\",\"group\":\"sonar\","
                          "\"mode\":\"dead\"}",
                 "sonar");
  /* a multipart request gets one reply too */
  assert_true(zmq_send(f->cli.req, "{}", 2, ZMQ_SNDMORE) == 2);
  assert_true(zmq_send(f->cli.req, "{}", 2, 0) == 2);
  char buf[256];
  const int n = zmq_recv(f->cli.req, buf, sizeof buf - 1, 0);
  assert_true(n > 0);
  buf[n] = '\0';
  assert_non_null(strstr(buf, "\"ok\":false"));
  /* still answering */
  cJSON *st = request_ok(&f->cli, "{\"cmd\":\"status\"}");
  assert_true(status_number(cJSON_GetObjectItem(st, "status"), "zmq", "ctl_errors") == 9);
  cJSON_Delete(st);
}

static void test_pause_and_snapshots(void **state) {
  fixture *f = *state;
  trace *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
  for (int k = 0; k < 20; k++) {
    send_commands(&f->cli, 1.0, 0);
  }
  collect_until(&f->cli, 20, on_trace, a);
  request_ok_discard(&f->cli, "{\"cmd\":\"snapshot_save\"}");
  /* paused: a full command set does not step */
  cJSON *r = request_ok(&f->cli, "{\"cmd\":\"pause\"}");
  assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "paused")));
  cJSON_Delete(r);
  send_commands(&f->cli, -1.0, 0);
  cJSON_Delete(wait_for_cmd_messages(&f->cli, 21));
  request_ok_discard(&f->cli, "{\"cmd\":\"step\",\"n\":5}");
  r = request_ok(&f->cli, "{\"cmd\":\"status\"}");
  assert_true(status_number(cJSON_GetObjectItem(r, "status"), "steps", NULL) == 20);
  cJSON_Delete(r);
  r = request_ok(&f->cli, "{\"cmd\":\"resume\"}");
  assert_true(cJSON_IsFalse(cJSON_GetObjectItem(r, "paused")));
  cJSON_Delete(r);
  collect_until(&f->cli, 25, on_trace, a); /* the 5 granted steps */
  /* back to the snapshot: 5 granted steps with the same command repeat the same motion */
  r = request_ok(&f->cli, "{\"cmd\":\"snapshot_restore\"}");
  assert_true(fabs(cJSON_GetObjectItem(r, "t")->valuedouble - 0.020) < 1e-12);
  cJSON_Delete(r);
  request_ok_discard(&f->cli, "{\"cmd\":\"step\",\"n\":5}");
  collect_until(&f->cli, 30, on_trace, b);
  assert_int_equal(a->n, 25);
  assert_int_equal(b->n, 5);
  for (int k = 0; k < 5; k++) {
    assert_true(b->angle[k] == a->angle[20 + k]);
  }
  assert_true(a->angle[19] > 0); /* the +1 N·m pushed it */
  free(a);
  free(b);
}

typedef struct counts_pair {
  int n, differ;
  double last_meas; /* the measured message comes first, then its truth */
} counts_pair;

static void on_counts(void *user, const message *m) {
  counts_pair *p = user;
  if (strcmp(m->topic, "enc/enc_shoulder") == 0) {
    const hil_msg_sample s = decode(m);
    p->last_meas = channel(&s, "counts");
  } else if (strcmp(m->topic, "truth/enc/enc_shoulder") == 0) {
    const hil_msg_sample s = decode(m);
    p->n++;
    p->differ += channel(&s, "counts") != p->last_meas;
  }
}

static void test_set_param(void **state) {
  fixture *f = *state;
  cJSON *r = request_ok(&f->cli, "{\"cmd\":\"get_param\",\"sensor\":\"enc_shoulder\","
                                 "\"path\":\"noise.white.sigma\"}");
  assert_true(cJSON_GetObjectItem(r, "value")->valuedouble == 0.0005);
  cJSON_Delete(r);
  r = request_ok(&f->cli, "{\"cmd\":\"get_param\",\"sensor\":\"enc_shoulder\"}");
  const cJSON *desc = cJSON_GetObjectItem(r, "sensor");
  assert_string_equal(cJSON_GetObjectItem(desc, "topic")->valuestring, "enc/enc_shoulder");
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(desc, "channels")), 3);
  cJSON_Delete(r);
  r = request_ok(&f->cli, "{\"cmd\":\"get_param\",\"sensor\":\"imu_fore\","
                          "\"path\":\"accel.noise.white.density\"}");
  assert_true(cJSON_GetObjectItem(r, "value")->valuedouble == 0.002);
  cJSON_Delete(r);
  /* drive the arm so the angle sweeps many counts */
  counts_pair noisy = {0, 0, 0}, clean = {0, 0, 0};
  for (int k = 0; k < 100; k++) {
    send_commands(&f->cli, 2.0, 0);
  }
  collect_until(&f->cli, 100, on_counts, &noisy);
  /* 0.5 mrad of noise on a 0.38 mrad count: most samples read off by a count or more */
  assert_int_equal(noisy.n, 100);
  assert_true(noisy.differ > 20);
  r = request_ok(&f->cli, "{\"cmd\":\"set_param\",\"sensor\":\"enc_shoulder\","
                          "\"path\":\"noise.white.sigma\",\"value\":0}");
  assert_true(cJSON_GetObjectItem(r, "value")->valuedouble == 0);
  cJSON_Delete(r);
  for (int k = 0; k < 100; k++) {
    send_commands(&f->cli, -2.0, 0);
  }
  collect_until(&f->cli, 200, on_counts, &clean);
  /* no noise left: the encoder counts exactly the quantized true angle */
  assert_int_equal(clean.n, 100);
  assert_int_equal(clean.differ, 0);
}

/* A subscriber that reads nothing while 3000 steps go by gets old samples from its queues;
 * {"cmd":"latest"} answers with the present instead: the state after the last step, holding for
 * every topic exactly the newest message of that topic's stream (read here from the streams,
 * which keep every message in this test). Then after a reset, only samples of the new run. */
static void test_latest_request_gives_the_present(void **state) {
  (void)state;
  enum { N = 3000 };
  fixture f;
  fixture_start(&f, NULL, 1, HIL_MODE_LOCKSTEP, 0, 0);
  cJSON_Delete(handshake(&f.cli));
  for (int k = 0; k < N; k++) {
    send_commands(&f.cli, 0.1, 0);
  }
  cJSON *st = NULL;
  for (const double until = wait_until(); !st || waiting(until);) {
    cJSON_Delete(st);
    st = request_ok(&f.cli, "{\"cmd\":\"status\"}");
    if (status_number(cJSON_GetObjectItem(st, "status"), "steps", NULL) == N) {
      break;
    }
    pause_briefly();
  }
  const double t_end = status_number(cJSON_GetObjectItem(st, "status"), "t", NULL);
  cJSON_Delete(st);
  assert_true(t_end > 0);

  message m;
  receive(&f.cli, &m); /* what the stalled subscriber reads first: from the start of the run */
  assert_true(strcmp(m.topic, "status") == 0 || strcmp(m.topic, "step") == 0 ||
              decode(&m).t < t_end);

  cJSON *latest = request_ok(&f.cli, "{\"cmd\":\"latest\"}");
  assert_true(cJSON_GetObjectItem(latest, "t")->valuedouble == t_end);
  assert_true(cJSON_GetObjectItem(latest, "steps")->valuedouble == N);
  cJSON *newest = cJSON_CreateObject();
  for (const double until = wait_until(); has_input(f.cli.sub, 100) && waiting(until);) {
    receive(&f.cli, &m);
    if (strcmp(m.topic, "status") != 0 && strcmp(m.topic, "step") != 0) {
      cJSON_DeleteItemFromObjectCaseSensitive(newest, m.topic);
      cJSON_AddItemToObject(newest, m.topic, cJSON_Parse(m.payload));
    }
  }
  const cJSON *samples = cJSON_GetObjectItem(latest, "samples");
  assert_int_equal(cJSON_GetArraySize(samples), 2 * NSENSORS); /* each sensor and its truth */
  assert_int_equal(cJSON_GetArraySize(newest), 2 * NSENSORS);
  for (const cJSON *want = newest->child; want; want = want->next) {
    const cJSON *got = cJSON_GetObjectItemCaseSensitive(samples, want->string);
    if (!got || !cJSON_Compare(got, want, 1)) {
      char *text = cJSON_PrintUnformatted(want);
      fail_msg("%s: latest does not hold the stream's newest message %s", want->string, text);
    }
  }
  cJSON_Delete(newest);
  cJSON_Delete(latest);

  /* after a reset: t = 0 and nothing from before it (every sensor samples at t = 0) */
  request_ok_discard(&f.cli, "{\"cmd\":\"reset\"}");
  latest = request_ok(&f.cli, "{\"cmd\":\"latest\"}");
  assert_true(cJSON_GetObjectItem(latest, "t")->valuedouble == 0);
  samples = cJSON_GetObjectItem(latest, "samples");
  assert_true(cJSON_GetArraySize(samples) > 0);
  for (const cJSON *one = samples->child; one; one = one->next) {
    assert_true(cJSON_GetObjectItem(one, "t")->valuedouble == 0);
    assert_true(cJSON_GetObjectItem(one, "seq")->valuedouble == 0);
  }
  cJSON_Delete(latest);
  fixture_stop(&f);
}

ZMQ_MAIN((test_hello_club_arm, test_latest_request_gives_the_present),
         (test_hello, test_control_errors_keep_rep_alive, test_pause_and_snapshots, test_set_param))
