/* tests/hil/view/test_view.c: the view's pieces without a browser — the --view address, the
 * errors of hil_view_new (a port in use, a missing page), the queue between the threads, the
 * rotation-matrix-to-quaternion conversion the frames and Foxglove's transforms use (checked
 * against the quaternion's own matrix), and the Host and Origin rules of who may connect. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hil/error.h"
#include "hil/view/view.h"
#include "hil/view/server_internal.h"
#include "hil/view/view_internal.h"

#include <cjson/cJSON.h>

static void test_parse_address(void **state) {
  (void)state;
  hil_view_options o;
  char err[256];
  hil_view_options_default(&o);
  assert_int_equal(hil_view_parse_address(&o, "0.0.0.0:9001", err, sizeof err), HIL_OK);
  assert_string_equal(o.address, "0.0.0.0");
  assert_int_equal(o.port, 9001);
  hil_view_options_default(&o);
  assert_int_equal(hil_view_parse_address(&o, "8081", err, sizeof err), HIL_OK);
  assert_string_equal(o.address, "127.0.0.1"); /* loopback unless an address is given */
  assert_int_equal(o.port, 8081);
  assert_int_equal(hil_view_parse_address(&o, ":0", err, sizeof err), HIL_OK);
  assert_int_equal(o.port, 0);
  const char *bad[] = {"127.0.0.1:65536", "127.0.0.1:", "host:80x", "abc", "127.0.0.1:-1", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hil_view_options_default(&o);
    assert_int_equal(hil_view_parse_address(&o, bad[i], err, sizeof err), HIL_EINVAL);
    assert_non_null(strstr(err, "--view"));
    assert_int_equal(o.port, 8080); /* unchanged */
  }
  char longname[200];
  memset(longname, 'a', sizeof longname);
  snprintf(longname + 150, 50, ":80");
  assert_int_equal(hil_view_parse_address(&o, longname, err, sizeof err), HIL_EINVAL);
}

static void test_port_in_use_and_missing_page(void **state) {
  (void)state;
  hil_view_options o;
  char err[512];
  hil_view_options_default(&o);
  snprintf(o.www, sizeof o.www, "%s/hil/view/www", ACHILLES_SOURCE_DIR);
  o.port = 0;
  hil_transport *a = hil_view_new(&o, NULL, err, sizeof err);
  assert_non_null(a);
  int port = 0;
  assert_int_equal(sscanf(hil_view_url(a), "http://127.0.0.1:%d/", &port), 1);
  assert_true(port > 0);
  o.port = port;
  hil_transport *b = hil_view_new(&o, NULL, err, sizeof err);
  assert_null(b);
  assert_non_null(strstr(err, "cannot listen on 127.0.0.1:"));
  a->ops->destroy(a);
  o.port = 0;
  snprintf(o.www, sizeof o.www, "/nonexistent/www");
  assert_null(hil_view_new(&o, NULL, err, sizeof err));
  assert_non_null(strstr(err, "/nonexistent/www/index.html"));
}

static void test_queue_order_and_bound(void **state) {
  (void)state;
  static view_queue q;
  static view_job jobs[VIEW_QUEUE + 1];
  for (int round = 0; round < 3; round++) { /* the indices wrap around the slots */
    for (int i = 0; i < VIEW_QUEUE; i++) {
      assert_int_equal(view__queue_push(&q, &jobs[i]), 0);
    }
    assert_int_equal(view__queue_push(&q, &jobs[VIEW_QUEUE]), -1); /* full */
    for (int i = 0; i < VIEW_QUEUE; i++) {
      assert_ptr_equal(view__queue_pop(&q), &jobs[i]);
    }
    assert_null(view__queue_pop(&q));
  }
}

/* Who may reach the view (access.c): Host names and Origins, whole names compared. */
static void test_host_and_origin(void **state) {
  (void)state;
  hil_view_options o;
  char err[256];
  hil_view_options_default(&o);
  const char *taken[] = {"127.0.0.1:8080", "127.0.0.1", "localhost:8080", "LOCALHOST", "localhost.:1"};
  for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++) {
    assert_true(view__host_allowed(&o, taken[i]));
  }
  const char *refused[] = {"evil.example:8080", "127.0.0.1.evil.example:8080", "127.0.0.10:8080",
                           "localhost.evil.example", "10.0.0.2:8080", "", ":8080", "robot.lan"};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    assert_false(view__host_allowed(&o, refused[i]));
  }
  assert_false(view__host_allowed(&o, NULL));
  assert_int_equal(hil_view_add_host(&o, "robot.lan", err, sizeof err), HIL_OK);
  assert_true(view__host_allowed(&o, "robot.lan:8080"));
  assert_true(view__host_allowed(&o, "ROBOT.lan"));
  assert_false(view__host_allowed(&o, "robot.lan.evil.example"));
  assert_int_equal(hil_view_add_host(&o, "bad name", err, sizeof err), HIL_EINVAL);
  assert_non_null(strstr(err, "--view-host"));
  assert_int_equal(hil_view_add_host(&o, "host:80", err, sizeof err), HIL_EINVAL);
  assert_int_equal(hil_view_add_host(&o, "", err, sizeof err), HIL_EINVAL);
  snprintf(o.address, sizeof o.address, "0.0.0.0"); /* every interface: any IPv4 address */
  assert_true(view__host_allowed(&o, "10.0.0.2:8080"));
  assert_false(view__host_allowed(&o, "10.0.0.256:8080"));
  assert_false(view__host_allowed(&o, "evil.example:8080"));

  assert_true(view__origin_allowed(NULL, "127.0.0.1:8080"));
  assert_true(view__origin_allowed("http://127.0.0.1:8080", "127.0.0.1:8080"));
  assert_true(view__origin_allowed("https://app.foxglove.dev", "127.0.0.1:8080"));
  assert_true(view__origin_allowed("file://", "127.0.0.1:8080"));
  const char *foreign[] = {"http://127.0.0.1:80801", "http://127.0.0.1:8080.evil.example",
                           "http://127.0.0.1:808", "https://127.0.0.1:8080", "http://evil.example",
                           "https://app.foxglove.dev.evil.example", "file://evil", "null"};
  for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
    assert_false(view__origin_allowed(foreign[i], "127.0.0.1:8080"));
  }
  assert_false(view__origin_allowed("http://127.0.0.1:8080", NULL));
}

/* Foxglove ids from JSON numbers: whole numbers in [0, 2^32) only; the rest refused before any
 * conversion (under UBSan, a cast of -1 or 1e300 to an unsigned integer is reported). */
static void test_fox_ids(void **state) {
  (void)state;
  const struct {
    const char *json;
    int ok;
    uint32_t value;
  } cases[] = {{"0", 1, 0},      {"7", 1, 7},          {"4294967295", 1, 4294967295u},
               {"1e3", 1, 1000}, {"-0", 1, 0},         {"-1", 0, 0},
               {"1e300", 0, 0},  {"-1e300", 0, 0},     {"100.5", 0, 0},
               {"4294967296", 0, 0}, {"1e999", 0, 0},  {"\"7\"", 0, 0},
               {"true", 0, 0},   {"null", 0, 0},       {"[1]", 0, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cJSON *v = cJSON_Parse(cases[i].json);
    uint32_t out = 12345;
    const int rc = view__fox_u32(v, &out);
    assert_int_equal(rc, cases[i].ok ? 0 : -1);
    assert_int_equal(out, cases[i].ok ? cases[i].value : 12345u);
    cJSON_Delete(v);
  }
  assert_int_equal(view__fox_u32(NULL, NULL), -1);
}

/* The rotation matrix of a unit quaternion [w x y z] (row-major), the textbook formula. */
static void quat_mat(double r[9], const double q[4]) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  const double m[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                       2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                       2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
  memcpy(r, m, sizeof m);
}

static void test_mat_quat(void **state) {
  (void)state;
  srand(7);
  for (int k = 0; k < 2000; k++) {
    double q[4], n = 0;
    for (int i = 0; i < 4; i++) {
      q[i] = k < 8 ? (i == k % 4) * (k < 4 ? 1.0 : -1.0) /* the axes and half turns */
                   : (double)rand() / RAND_MAX - 0.5;
      n += q[i] * q[i];
    }
    for (int i = 0; i < 4; i++) {
      q[i] /= sqrt(n);
    }
    double r[9], back[4];
    quat_mat(r, q);
    view__mat_quat(back, r);
    const double sign = back[0] * q[0] + back[1] * q[1] + back[2] * q[2] + back[3] * q[3] < 0 ? -1 : 1;
    for (int i = 0; i < 4; i++) {
      assert_true(fabs(back[i] - sign * q[i]) < 1e-12);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_address),
      cmocka_unit_test(test_port_in_use_and_missing_page),
      cmocka_unit_test(test_queue_order_and_bound),
      cmocka_unit_test(test_mat_quat),
      cmocka_unit_test(test_host_and_origin),
      cmocka_unit_test(test_fox_ids),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
