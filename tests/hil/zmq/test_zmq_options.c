/* tests/hil/zmq/test_zmq_options.c: the ZeroMQ transport's configuration (transports.zmq) and
 * binding: local defaults, each key, errors naming the file and the JSON path, remote endpoints
 * only with allow_remote, wildcard ports reported as bound, a port in use named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "hil/error.h"
#include "support/skip.h"
#include "support/tmp.h"
#include "zmq_fixture.h"

static int parse_text(tmpdir *d, const char *json, hil_zmq_options *o, char *err, size_t err_sz) {
  char path[160];
  snprintf(path, sizeof path, "%s/bad.json", d->path);
  ts_write_file(path, json);
  hil_zmq_options_default(o);
  return hil_zmq_options_parse(o, path, err, err_sz);
}

static void expect_config_error(tmpdir *d, const char *json, const char *expected) {
  hil_zmq_options o;
  char err[512] = "";
  if (parse_text(d, json, &o, err, sizeof err) != HIL_ECONFIG) {
    fail_msg("accepted: %s", json);
  }
  if (!strstr(err, expected) || !strstr(err, "bad.json")) {
    fail_msg("%s: message \"%s\" lacks \"%s\" or the file name", json, err, expected);
  }
}

static void test_options(void **state) {
  (void)state;
  tmpdir d;
  tmpdir_make(&d);
  hil_zmq_options o;
  char err[512];
  /* no section: the local defaults */
  assert_int_equal(parse_text(&d, "{\"name\":\"x\"}", &o, err, sizeof err), HIL_OK);
  assert_string_equal(o.pub, "tcp://127.0.0.1:5555");
  assert_string_equal(o.cmd, "tcp://127.0.0.1:5556");
  assert_string_equal(o.ctl, "tcp://127.0.0.1:5557");
  assert_int_equal(o.truth, 1);
  assert_int_equal(o.allow_remote, 0);
  /* the test robot's section, with a "serial" sibling that belongs to someone else */
  assert_int_equal(hil_zmq_options_parse(&o, d.robot, err, sizeof err), HIL_OK);
  char expected[160];
  snprintf(expected, sizeof expected, "ipc://%s/ctl", d.path);
  assert_string_equal(o.ctl, expected);
  assert_int_equal(parse_text(&d,
                              "{\"transports\":{\"zmq\":{\"truth\":false,\"sndhwm\":10,"
                              "\"enabled\":false,\"comment\":\"x\"}}}",
                              &o, err, sizeof err),
                   HIL_OK);
  assert_int_equal(o.truth, 0);
  assert_int_equal(o.sndhwm, 10);
  assert_int_equal(o.enabled, 0);
  assert_int_equal(parse_text(&d,
                              "{\"transports\":{\"zmq\":{\"pub\":\"tcp://0.0.0.0:5555\","
                              "\"allow_remote\":true}}}",
                              &o, err, sizeof err),
                   HIL_OK);
  /* errors name the file and the JSON path */
  expect_config_error(&d, "{\"transports\":{\"zmq\":{\"pubb\":\"ipc:///tmp/x\"}}}",
                      "transports.zmq.pubb: unknown key");
  expect_config_error(&d, "{\"transports\":{\"zmq\":{\"pub\":\"tcp://0.0.0.0:5555\"}}}",
                      "transports.zmq.pub: \"tcp://0.0.0.0:5555\" is not a local endpoint");
  expect_config_error(&d, "{\"transports\":{\"zmq\":{\"ctl\":\"tcp://*:5557\"}}}",
                      "transports.zmq.allow_remote");
  expect_config_error(&d, "{\"transports\":{\"zmq\":{\"cmd\":\"tcp://192.168.1.4:5556\"}}}",
                      "transports.zmq.cmd");
  expect_config_error(&d, "{\"transports\":{\"zmq\":{\"cmd\":\"\"}}}",
                      "transports.zmq.cmd: expected an endpoint");

  expect_config_error(&d, "{\"transports\":{\"zmq\":{\"truth\":1}}}",
                      "transports.zmq.truth: expected true or false");
  expect_config_error(&d, "{\"transports\":{\"zmq\":{\"sndhwm\":0}}}",
                      "transports.zmq.sndhwm: expected an integer from 1");
  expect_config_error(&d, "{\"transports\":{\"zmq\":{\"sndhwm\":2.5}}}", "transports.zmq.sndhwm");
  expect_config_error(&d, "{\"transports\":{\"zmq\":[]}}", "transports.zmq: expected an object");
  expect_config_error(&d, "{\"transports\":7}", "transports: expected an object");
  expect_config_error(&d, "{\"transports\":", "invalid JSON");
  tmpdir_remove(&d);
}

static void test_bind_checks(void **state) {
  (void)state;
  hil_zmq_options o;
  hil_zmq_options_default(&o);
  char err[512];
  snprintf(o.pub, sizeof o.pub, "tcp://0.0.0.0:*");
  assert_null(hil_zmq_transport_new(&o, err, sizeof err));
  assert_non_null(strstr(err, "transports.zmq.pub"));
  assert_non_null(strstr(err, "allow_remote"));
  /* wildcard ports on loopback: the transport reports the ports the system chose */
  snprintf(o.pub, sizeof o.pub, "tcp://127.0.0.1:*");
  snprintf(o.cmd, sizeof o.cmd, "tcp://127.0.0.1:*");
  snprintf(o.ctl, sizeof o.ctl, "tcp://localhost:*");
  hil_transport *t = hil_zmq_transport_new(&o, err, sizeof err);
  if (!t) {
    fail_msg("%s", err);
  }
  const char *pub = hil_zmq_transport_endpoint(t, HIL_ZMQ_PUB);
  assert_true(strncmp(pub, "tcp://127.0.0.1:", 16) == 0);
  assert_null(strchr(pub, '*'));
  /* a second transport on the same port fails, naming the socket */
  hil_zmq_options o2 = o;
  snprintf(o2.cmd, sizeof o2.cmd, "%s", hil_zmq_transport_endpoint(t, HIL_ZMQ_CMD));
  assert_null(hil_zmq_transport_new(&o2, err, sizeof err));
  assert_non_null(strstr(err, "transports.zmq.cmd: cannot bind"));
  t->ops->destroy(t);
}

TS_MAIN(test_options, test_bind_checks)
