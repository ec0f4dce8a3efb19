/* tests/hil/replay/test_replay_control.c: the replay's control and command sockets answer a
 * controller as the live simulator's do: hello from the log's header, status, the refused
 * requests, latest, commands read and discarded; --wait-hello starts the replay on the
 * handshake of docs/messages.md section 8. The test log is replay_fixture.h's. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

#include "replay_fixture.h"
#include "support/skip.h"
#include "support/tmp.h"
#include "support/wait.h"

static void test_control_socket(void **state) {
  (void)state;
  char path[128];
  const long nsteps = 400; /* 0.4 s at rate 1 */
  hil_replay_schedule s;
  load_test_log(&s, path, sizeof path, "control.log", nsteps, NULL);
  hil_replay_options o = default_options();
  ts_tmp_ipc(o.zmq_endpoint, sizeof o.zmq_endpoint, "pub");
  o.wait_subscriber = 1;
  char err[512];
  hil_replay *r = hil_replay_new(&s, &o, err, sizeof err);
  if (!r) {
    fail_msg("hil_replay_new: %s", err);
  }
  char want[512];
  ts_tmp_ipc(want, sizeof want, "ctl");
  assert_string_equal(hil_replay_ctl_where(r), want);
  void *ctx = zmq_ctx_new();
  const int timeout = RECV_TIMEOUT_MS, big = 100000, linger = 0;
  void *req = zmq_socket(ctx, ZMQ_REQ);
  void *push = zmq_socket(ctx, ZMQ_PUSH);
  void *sub = zmq_socket(ctx, ZMQ_SUB);
  zmq_setsockopt(req, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
  zmq_setsockopt(req, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(push, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(sub, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
  zmq_setsockopt(sub, ZMQ_RCVHWM, &big, sizeof big);
  assert_int_equal(zmq_connect(req, hil_replay_ctl_where(r)), 0);
  assert_int_equal(zmq_connect(push, hil_replay_cmd_where(r)), 0);
  pthread_t th;
  replay_thread_start(&th, r);

  /* hello while the replay waits for its first subscriber: the live layout, from the header */
  static char reply[65536];
  request(req, "{\"cmd\":\"hello\"}", reply, sizeof reply);
  assert_non_null(strstr(reply, "{\"ok\":true,\"v\":1,\"model\":\"replay_arm\",\"rate_hz\":1000,"
                                "\"timestep\":0.001,\"mode\":\"realtime\",\"t\":0,\"steps\":0,"
                                "\"paused\":false,\"truth\":false,\"seed\":3,\"joints\":[],"
                                "\"actuators\":[{\"name\":\"motor_a\",\"joint\":\"\",\"type\":"
                                "\"unknown\",\"ctrlrange\":[null,null]},{\"name\":\"motor_b\","));
  for (int i = 0; i < NSENS; i++) { /* each sensor with its topic, rate, channels and units */
    const sens_sensor *sn = &test_sensor[i];
    char topic[HIL_MSG_TOPIC_MAX], one[1024];
    assert_true(hil_msg_topic(topic, sizeof topic, sn, 0) > 0);
    int len = snprintf(one, sizeof one,
                       "{\"name\":\"%s\",\"type\":\"%s\",\"topic\":\"%s\",\"rate_hz\":%g,"
                       "\"latency_s\":0,\"drop_probability\":0,\"dead\":false,\"channels\":[",
                       sn->name, sens_type_name(sn->type), topic, sn->rate_hz);
    for (int c = 0; c < sn->nch; c++) {
      len += snprintf(one + len, sizeof one - (size_t)len, "%s\"%s\"", c ? "," : "",
                      sn->channel[c]);
    }
    len += snprintf(one + len, sizeof one - (size_t)len, "],\"units\":[");
    for (int c = 0; c < sn->nch; c++) {
      len += snprintf(one + len, sizeof one - (size_t)len, "%s\"%s\"", c ? "," : "",
                      hil_msg_unit(NULL, sn, c));
    }
    snprintf(one + len, sizeof one - (size_t)len, "]}");
    if (!strstr(reply, one)) {
      fail_msg("hello reply lacks %s: %s", one, reply);
    }
  }
  snprintf(want, sizeof want, "\"endpoints\":{\"pub\":\"ipc://%s/pub\",\"cmd\":\"ipc://%s/cmd\","
           "\"ctl\":\"ipc://%s/ctl\"}", ts_tmp_dir(), ts_tmp_dir(), ts_tmp_dir());
  assert_non_null(strstr(reply, want));
  assert_non_null(strstr(reply, "\"replay\":{\"file\":"));

  /* a controller's commands: read and discarded, not queued */
  for (int k = 0; k < 3; k++) {
    const char *cmd = "{\"v\":1,\"commands\":{\"motor_a\":0.1}}";
    assert_int_equal(zmq_send(push, cmd, strlen(cmd), 0), (int)strlen(cmd));
  }

  /* the subscription starts the replay; once samples flow, status and the refused requests */
  zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0);
  assert_int_equal(zmq_connect(sub, hil_replay_where(r)), 0);
  char topic[HIL_MSG_TOPIC_MAX + 1];
  static char body[HIL_MSG_SAMPLE_MAX * 2];
  int samples = 0, finished = 0, asked = 0;
  while (!finished) {
    const int tl = zmq_recv(sub, topic, sizeof topic - 1, 0);
    if (tl < 0) {
      fail_msg("no message within %d ms (%d samples)", RECV_TIMEOUT_MS, samples);
    }
    topic[tl < (int)sizeof topic - 1 ? tl : (int)sizeof topic - 1] = '\0';
    const int bl = zmq_recv(sub, body, sizeof body - 1, 0);
    assert_true(bl >= 0 && bl < (int)sizeof body - 1);
    body[bl] = '\0';
    if (strcmp(topic, "status") == 0) {
      finished = strstr(body, "\"finished\":true") != NULL;
      if (finished) {
        assert_non_null(strstr(
            body, "\"cmd_messages\":3,\"oversized\":0,\"ctl_requests\":5,\"ctl_errors\":2}"));
      }
      continue;
    }
    samples++;
    if (samples == 50 && !asked) {
      asked = 1;
      request(req, "{\"cmd\":\"status\"}", reply, sizeof reply);
      assert_non_null(strstr(reply, "{\"ok\":true,\"status\":{\"v\":1,\"t\":"));
      assert_non_null(strstr(reply, "\"mode\":\"realtime\",\"paused\":false"));
      assert_non_null(strstr(reply, "\"ctl_requests\":1,\"ctl_errors\":0}"));
      snprintf(want, sizeof want, "\"replay\":{\"file\":\"%s\",\"played\":", path);
      assert_non_null(strstr(reply, want));
      assert_non_null(strstr(reply, ",\"total\":700,\"pass\":1,\"rate\":1,\"instants\":"));
      assert_non_null(strstr(reply, ",\"finished\":false}}}"));
      request(req, "{\"cmd\":\"pause\"}", reply, sizeof reply);
      assert_string_equal(reply, "{\"ok\":false,\"error\":\"replay: pause is not available in "
                                 "a replay\"}");
      /* latest: the stream just read, at least as new as what the subscriber holds */
      request(req, "{\"cmd\":\"latest\"}", reply, sizeof reply);
      assert_true(strncmp(reply, "{\"ok\":true,\"t\":", 15) == 0);
      snprintf(want, sizeof want, "\"%s\":{\"v\":1,", topic);
      const char *mine = strstr(reply, want);
      assert_non_null(mine);
      assert_true(json_number(mine, "seq") >= json_number(body, "seq"));
      assert_true(json_number(reply, "t") >= json_number(body, "t"));
      request(req, "nonsense", reply, sizeof reply);
      assert_true(strncmp(reply, "{\"ok\":false,\"error\":\"", 21) == 0);
    }
  }
  assert_int_equal(samples, 700);
  pthread_join(th, NULL);
  hil_replay_report rep;
  hil_replay_get_report(r, &rep);
  assert_int_equal(rep.ctl_requests, 5);
  assert_int_equal(rep.ctl_errors, 2);
  assert_int_equal(rep.cmd_messages, 3);
  assert_int_equal(rep.played, 700);
  hil_replay_destroy(&r);
  zmq_close(req);
  zmq_close(push);
  zmq_close(sub);
  zmq_ctx_term(ctx);
  hil_replay_free(&s);
}

/* Issue 18, item 2: --wait-hello. The replay starts right after answering a hello while a
 * subscription receiving "status" is in place, so a controller doing the handshake of
 * docs/messages.md section 8 (drain, hello, read up to 20 ms for the status it publishes, again
 * if none) gets every sample from the first. A hello before any subscription does not start it. */
static void test_wait_hello_controller(void **state) {
  (void)state;
  hil_replay_schedule s;
  load_test_log(&s, NULL, 0, "hello.log", 300, "enc/");
  hil_replay_options o = default_options();
  o.wait_hello = 1;
  ts_tmp_ipc(o.zmq_endpoint, sizeof o.zmq_endpoint, "pub");
  char err[512];
  hil_replay *r = hil_replay_new(&s, &o, err, sizeof err);
  if (!r) {
    fail_msg("hil_replay_new: %s", err);
  }
  void *ctx = zmq_ctx_new();
  void *req = zmq_socket(ctx, ZMQ_REQ), *sub = zmq_socket(ctx, ZMQ_SUB);
  const int timeout = RECV_TIMEOUT_MS, linger = 0;
  zmq_setsockopt(req, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
  zmq_setsockopt(req, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(sub, ZMQ_LINGER, &linger, sizeof linger);
  assert_int_equal(zmq_connect(req, hil_replay_ctl_where(r)), 0);
  pthread_t th;
  replay_thread_start(&th, r);
  static char reply[64 * 1024];
  /* no subscriber yet: a hello is answered, the replay keeps waiting */
  request(req, "{\"cmd\":\"hello\"}", reply, sizeof reply);
  assert_true(strncmp(reply, "{\"ok\":true", 10) == 0);
  request(req, "{\"cmd\":\"status\"}", reply, sizeof reply);
  assert_non_null(strstr(reply, "\"played\":0,"));
  /* the controller of section 8 */
  zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "enc/enc_a", 9);
  zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "status", 6);
  assert_int_equal(zmq_connect(sub, hil_replay_where(r)), 0);
  char topic[HIL_MSG_TOPIC_MAX + 1];
  static char body[HIL_MSG_SAMPLE_MAX * 8];
  int hellos = 0, live = 0;
  const double give_up = ts_now() + RECV_TIMEOUT_MS / 1000.0;
  while (!live && ts_now() < give_up) {
    while (zmq_recv(sub, topic, sizeof topic, ZMQ_DONTWAIT) >= 0) { /* drain */
      zmq_recv(sub, body, sizeof body, 0);
    }
    request(req, "{\"cmd\":\"hello\"}", reply, sizeof reply);
    hellos++;
    for (const double until = ts_now() + 0.02; !live && ts_now() < until;) {
      zmq_pollitem_t it = {.socket = sub, .fd = 0, .events = ZMQ_POLLIN, .revents = 0};
      if (zmq_poll(&it, 1, 5) == 1) {
        const int tl = zmq_recv(sub, topic, sizeof topic - 1, 0);
        assert_true(tl >= 0);
        topic[tl] = '\0';
        zmq_recv(sub, body, sizeof body, 0);
        live = strcmp(topic, "status") == 0;
      }
    }
  }
  if (!live) {
    fail_msg("no status on the SUB after %d hellos", hellos);
  }
  print_message("handshake: %d hellos\n", hellos);
  /* every sample, from the first */
  const int timeout_sub = RECV_TIMEOUT_MS;
  zmq_setsockopt(sub, ZMQ_RCVTIMEO, &timeout_sub, sizeof timeout_sub);
  long next = 0;
  for (;;) {
    const int tl = zmq_recv(sub, topic, sizeof topic - 1, 0);
    if (tl < 0) {
      fail_msg("no message within %d ms (%ld samples)", RECV_TIMEOUT_MS, next);
    }
    topic[tl] = '\0';
    const int bl = zmq_recv(sub, body, sizeof body - 1, 0);
    assert_true(bl >= 0);
    body[bl] = '\0';
    if (strcmp(topic, "status") == 0) {
      if (strstr(body, "\"finished\":true")) {
        break;
      }
      continue;
    }
    assert_int_equal((long)json_number(body, "seq"), next);
    next++;
  }
  assert_int_equal(next, 300);
  pthread_join(th, NULL);
  hil_replay_destroy(&r);
  zmq_close(req);
  zmq_close(sub);
  zmq_ctx_term(ctx);
  hil_replay_free(&s);

  /* without a control socket there is no hello to wait for */
  o.ctl_endpoint[0] = '\0';
  assert_null(hil_replay_new(&s, &o, err, sizeof err));
  assert_non_null(strstr(err, "--wait-hello: no control socket"));
}

TS_MAIN_WITH(replay_setup, replay_teardown, test_control_socket, test_wait_hello_controller)
