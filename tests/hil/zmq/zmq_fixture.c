/* tests/hil/zmq/zmq_fixture.c: the ZeroMQ suites' robot, server thread and client
 * (zmq_fixture.h). */
#include "zmq_fixture.h"

#include <setjmp.h>
#include <stdarg.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "hil/error.h"
#include "support/tmp.h"
#include "support/wait.h"

double wait_until(void) {
  return ts_now() + WAIT_S;
}

int waiting(double until) {
  return ts_now() < until;
}

/* --- the test robot ----------------------------------------------------------------------------- */

static const char *const robot_fmt =
    "{\"name\":\"zmq_arm\",\"timestep\":0.001,\"integrator\":\"euler\",\"gravity\":[0,0,-9.81],"
    "\"bodies\":["
    "{\"name\":\"upper\",\"parent\":\"world\",\"joint\":{\"name\":\"shoulder\",\"type\":\"hinge\","
    "\"axis\":[0,0,1],\"damping\":0.05},\"inertial\":{\"mass\":1,\"com\":[0.1,0,0],"
    "\"inertia\":[0.001,0.001,0.001,0,0,0]}},"
    "{\"name\":\"fore\",\"parent\":\"upper\",\"pos\":[0.2,0,0],\"joint\":{\"name\":\"elbow\","
    "\"type\":\"hinge\",\"axis\":[0,0,1],\"damping\":0.02},\"inertial\":{\"mass\":1,"
    "\"com\":[0.1,0,0],\"inertia\":[0.001,0.001,0.001,0,0,0]}}],"
    "\"actuators\":["
    "{\"name\":\"shoulder_motor\",\"joint\":\"shoulder\",\"type\":\"motor\",\"ctrlrange\":[-5,5]},"
    "{\"name\":\"elbow_servo\",\"joint\":\"elbow\",\"type\":\"position_servo\",\"kp\":5,"
    "\"kd\":0.2}],"
    "\"sensors\":{\"seed\":7,\"list\":["
    "{\"name\":\"enc_shoulder\",\"type\":\"encoder\",\"joint\":\"shoulder\",\"rate_hz\":1000,"
    "\"counts_per_rev\":4096,\"quadrature\":true,\"output\":\"both\",\"velocity\":true,"
    "\"noise\":{\"white\":{\"sigma\":0.0005}}},"
    "{\"name\":\"enc_elbow\",\"type\":\"encoder\",\"joint\":\"elbow\",\"rate_hz\":500,"
    "\"counts_per_rev\":1024,\"quadrature\":true,\"output\":\"both\","
    "\"noise\":{\"white\":{\"sigma\":0.001}}},"
    "{\"name\":\"trq_shoulder\",\"type\":\"torque\",\"joint\":\"shoulder\",\"rate_hz\":1000,"
    "\"noise\":{\"white\":{\"sigma\":0.01}}},"
    "{\"name\":\"imu_fore\",\"type\":\"imu\",\"body\":\"fore\",\"rate_hz\":1000,"
    "\"gyro\":{\"noise\":{\"white\":{\"density\":0.0002}}},"
    "\"accel\":{\"noise\":{\"white\":{\"density\":0.002}}}}]},"
    "\"transports\":{\"serial\":{\"owned_by\":\"the serial transport\"},"
    "\"zmq\":{\"pub\":\"ipc://%s/pub\",\"cmd\":\"ipc://%s/cmd\",\"ctl\":\"ipc://%s/ctl\"%s}}}";

const char *const sensor_topics[NSENSORS] = {"enc/enc_shoulder", "enc/enc_elbow",
                                                    "trq/trq_shoulder", "imu/imu_fore"};
const double sensor_rates[NSENSORS] = {1000, 500, 1000, 1000};

void tmpdir_make_with(tmpdir *d, const char *zmq_extra) {
  ts_tmpdir(d->path, sizeof d->path, "zmq");
  ts_path(d->robot, sizeof d->robot, d->path, "robot.json");
  char text[8192];
  snprintf(text, sizeof text, robot_fmt, d->path, d->path, d->path, zmq_extra);
  ts_write_file(d->robot, text);
}

void tmpdir_make(tmpdir *d) {
  tmpdir_make_with(d, ",\"sndhwm\":10000000");
}

void tmpdir_remove(tmpdir *d) {
  ts_rmtree(d->path);
}

/* --- the simulator in a thread ---------------------------------------------------------------- */

/* the zmq transport of zo added to s's runtime, its endpoints noted */
static void add_zmq(server *s, const hil_zmq_options *zo) {
  char err[512];
  hil_transport *t = hil_zmq_transport_new(zo, err, sizeof err);
  if (!t) {
    fail_msg("%s", err);
  }
  for (int i = 0; i < 3; i++) {
    snprintf(s->endpoint[i], sizeof s->endpoint[i], "%s",
             hil_zmq_transport_endpoint(t, (hil_zmq_socket)i));
  }
  assert_int_equal(hil_runtime_add_transport(s->rt, t), HIL_OK);
}

void server_start_in(server *s, const char *config, uint64_t seed, hil_mode mode, double rate_hz) {
  char err[512];
  hil_options o;
  ts_options(&o, mode, 0);
  if (rate_hz > 0) {
    o.rate_hz = rate_hz;
  }
  o.seed = seed;
  o.has_seed = 1;
  s->rt = ts_runtime_with(config, &o);
  hil_zmq_options zo;
  hil_zmq_options_default(&zo);
  if (hil_zmq_options_parse(&zo, config, err, sizeof err) != HIL_OK) {
    fail_msg("%s", err);
  }
  add_zmq(s, &zo);
  ts_loop_start(&s->loop, s->rt);
}

void server_start(server *s, const char *config, uint64_t seed) {
  server_start_in(s, config, seed, HIL_MODE_LOCKSTEP, 0);
}

void server_stop(server *s) {
  ts_loop_stop(&s->loop);
  hil_runtime_destroy(&s->rt);
}

void club_arm_start(server *s, const tmpdir *d) {
  s->rt = ts_runtime(CLUB_ARM, HIL_MODE_LOCKSTEP, 0);
  hil_zmq_options zo;
  hil_zmq_options_default(&zo);
  snprintf(zo.pub, sizeof zo.pub, "ipc://%s/pub", d->path);
  snprintf(zo.cmd, sizeof zo.cmd, "ipc://%s/cmd", d->path);
  snprintf(zo.ctl, sizeof zo.ctl, "ipc://%s/ctl", d->path);
  zo.sndhwm = 10000000;
  add_zmq(s, &zo);
}

/* --- the client ------------------------------------------------------------------------------- */

/* rcvhwm: the SUB's receive queue, messages (0: unlimited) */
static void *client_socket(client *c, int type, const char *endpoint, int rcvhwm) {
  void *s = zmq_socket(c->ctx, type);
  assert_non_null(s);
  const int linger = 0, timeout = RECV_TIMEOUT_MS;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
  /* a loop that stops reading commands fills the PUSH queue: a send then fails instead of
   * blocking the test forever */
  zmq_setsockopt(s, ZMQ_SNDTIMEO, &timeout, sizeof timeout);
  zmq_setsockopt(s, ZMQ_RCVHWM, &rcvhwm, sizeof rcvhwm); /* before connecting, to count */
  if (type == ZMQ_SUB) {
    zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0);
  }
  assert_int_equal(zmq_connect(s, endpoint), 0);
  return s;
}

void client_open_hwm(client *c, const server *s, int rcvhwm) {
  c->ctx = zmq_ctx_new();
  assert_non_null(c->ctx);
  c->sub = client_socket(c, ZMQ_SUB, s->endpoint[HIL_ZMQ_PUB], rcvhwm);
  c->push = client_socket(c, ZMQ_PUSH, s->endpoint[HIL_ZMQ_CMD], 1000);
  c->req = client_socket(c, ZMQ_REQ, s->endpoint[HIL_ZMQ_CTL], 1000);
}

void client_open(client *c, const server *s) {
  client_open_hwm(c, s, 0);
}

void client_close(client *c) {
  zmq_close(c->sub);
  zmq_close(c->push);
  zmq_close(c->req);
  zmq_ctx_term(c->ctx);
}

cJSON *request(client *c, const char *text) {
  assert_int_equal(zmq_send(c->req, text, strlen(text), 0), (int)strlen(text));
  char buf[PAYLOAD_MAX * 16];
  const int n = zmq_recv(c->req, buf, sizeof buf - 1, 0);
  if (n < 0) {
    fail_msg("no reply to %s", text);
  }
  assert_true((size_t)n < sizeof buf - 1);
  buf[n] = '\0';
  cJSON *reply = cJSON_Parse(buf);
  if (!reply) {
    fail_msg("reply to %s is not JSON: %s", text, buf);
  }
  return reply;
}

cJSON *request_ok(client *c, const char *text) {
  cJSON *reply = request(c, text);
  if (!cJSON_IsTrue(cJSON_GetObjectItem(reply, "ok"))) {
    const cJSON *e = cJSON_GetObjectItem(reply, "error");
    fail_msg("%s failed: %s", text, cJSON_IsString(e) ? e->valuestring : "?");
  }
  return reply;
}

void request_ok_discard(client *c, const char *text) {
  cJSON_Delete(request_ok(c, text));
}

void receive(client *c, message *m) {
  const int t = zmq_recv(c->sub, m->topic, sizeof m->topic - 1, 0);
  if (t < 0) {
    fail_msg("no message on the stream");
  }
  m->topic[t] = '\0';
  int more = 0;
  size_t more_sz = sizeof more;
  zmq_getsockopt(c->sub, ZMQ_RCVMORE, &more, &more_sz);
  assert_true(more);
  const int n = zmq_recv(c->sub, m->payload, sizeof m->payload - 1, 0);
  assert_true(n > 0 && n < (int)sizeof m->payload - 1);
  m->payload[n] = '\0';
  m->len = (size_t)n;
  zmq_getsockopt(c->sub, ZMQ_RCVMORE, &more, &more_sz);
  assert_false(more);
}

void pause_briefly(void) {
  ts_sleep(200e-6);
}

int has_input(void *sock, long timeout_ms) {
  zmq_pollitem_t item = {sock, 0, ZMQ_POLLIN, 0};
  return zmq_poll(&item, 1, timeout_ms) > 0;
}

double status_number(const cJSON *st, const char *a, const char *b) {
  const cJSON *x = cJSON_GetObjectItem(st, a);
  if (b) {
    x = cJSON_GetObjectItem(x, b);
  }
  assert_true(cJSON_IsNumber(x));
  return x->valuedouble;
}

cJSON *handshake(client *c) {
  const double until = wait_until();
  for (int i = 0; i < MAX_ATTEMPTS && waiting(until); i++) {
    cJSON *hello = request_ok(c, "{\"cmd\":\"hello\"}");
    while (has_input(c->sub, i < 10 ? 2 : 20) && waiting(until)) {
      message m;
      receive(c, &m);
      if (strcmp(m.topic, "status") == 0) {
        while (has_input(c->sub, 0) && waiting(until)) { /* statuses of earlier hellos */
          receive(c, &m);
        }
        return hello;
      }
    }
    cJSON_Delete(hello);
  }
  fail_msg("the subscription never became live (%.0f s)", WAIT_S);
  return NULL;
}

void collect_until(client *c, double steps, sample_fn fn, void *user) {
  const double until = wait_until();
  for (int i = 0; i < MAX_ATTEMPTS * 10 && waiting(until); i++) {
    for (int b = 0; b < DRAIN_BATCH && has_input(c->sub, i == 0 ? 0 : 1); b++) {
      message m;
      receive(c, &m);
      if (strcmp(m.topic, "status") != 0) {
        fn(user, &m);
        continue;
      }
      cJSON *st = cJSON_Parse(m.payload);
      assert_non_null(st);
      const double now = status_number(st, "steps", NULL);
      cJSON_Delete(st);
      if (now > steps) {
        fail_msg("the loop took %.0f steps, more than the %.0f it was given", now, steps);
      }
      if (now == steps) {
        while (has_input(c->sub, 0) && waiting(until)) { /* statuses of other requests */
          receive(c, &m);
          assert_string_equal(m.topic, "status");
        }
        return;
      }
    }
    cJSON_Delete(request_ok(c, "{\"cmd\":\"status\"}"));
  }
  fail_msg("the loop did not reach %.0f steps (%.0f s)", steps, WAIT_S);
}

cJSON *wait_for_cmd_messages(client *c, double n) {
  const double until = wait_until();
  for (int i = 0; i < MAX_ATTEMPTS * 10 && waiting(until); i++) {
    cJSON *st = request_ok(c, "{\"cmd\":\"status\"}");
    if (status_number(cJSON_GetObjectItem(st, "status"), "zmq", "cmd_messages") >= n) {
      return st;
    }
    cJSON_Delete(st);
    pause_briefly();
  }
  fail_msg("the transport did not read %.0f command messages (%.0f s)", n, WAIT_S);
  return NULL;
}

void send_commands(client *c, double shoulder, double elbow) {
  const char *const names[] = {"shoulder_motor", "elbow_servo"};
  const double values[] = {shoulder, elbow};
  char buf[256];
  const int n = hil_msg_encode_commands(buf, sizeof buf, names, values, 2, NAN);
  assert_true(n > 0);
  assert_int_equal(zmq_send(c->push, buf, (size_t)n, 0), n);
}

void send_text(client *c, const char *text) {
  assert_int_equal(zmq_send(c->push, text, strlen(text), 0), (int)strlen(text));
}

hil_msg_sample decode(const message *m) {
  hil_msg_sample s;
  char err[256];
  if (hil_msg_decode_sample(&s, m->payload, m->len, err, sizeof err) != HIL_OK) {
    fail_msg("%s: %s: %s", m->topic, err, m->payload);
  }
  return s;
}

double channel(const hil_msg_sample *s, const char *name) {
  for (int i = 0; i < s->n; i++) {
    if (strcmp(s->channel[i], name) == 0) {
      return s->value[i];
    }
  }
  fail_msg("%s has no channel %s", s->sensor, name);
  return NAN;
}

/* --- what a run's streams show ----------------------------------------------------------------- */

void on_trace(void *user, const message *m) {
  trace *tr = user;
  if (strstr(m->payload, "\"seq\":0,")) {
    return;
  }
  if (strcmp(m->topic, "truth/enc/enc_shoulder") == 0 && tr->n < 4096) {
    const hil_msg_sample s = decode(m);
    tr->angle[tr->n++] = channel(&s, "angle");
  } else if (strcmp(m->topic, "truth/trq/trq_shoulder") == 0 && tr->ntorque < 4096) {
    const hil_msg_sample s = decode(m);
    tr->truth_torque[tr->ntorque++] = channel(&s, "torque");
  }
}

double shoulder_command(int k) {
  return 0.8 * sin(0.01 * k) + 0.3;
}

/* --- fixture: a server and a connected client per test ---------------------------------------- */

void fixture_start(fixture *f, const char *zmq_extra, uint64_t seed, hil_mode mode, double rate_hz,
                   int rcvhwm) {
  if (zmq_extra) {
    tmpdir_make_with(&f->dir, zmq_extra);
  } else {
    tmpdir_make(&f->dir);
  }
  server_start_in(&f->srv, f->dir.robot, seed, mode, rate_hz);
  client_open_hwm(&f->cli, &f->srv, rcvhwm);
  f->hello = NULL;
}

void fixture_stop(fixture *f) {
  cJSON_Delete(f->hello);
  client_close(&f->cli);
  server_stop(&f->srv);
  tmpdir_remove(&f->dir);
}

int zmq_setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f) {
    return -1;
  }
  fixture_start(f, NULL, 42, HIL_MODE_LOCKSTEP, 0, 0);
  f->hello = handshake(&f->cli);
  *state = f;
  return 0;
}

int zmq_teardown(void **state) {
  fixture_stop(*state);
  free(*state);
  return 0;
}
