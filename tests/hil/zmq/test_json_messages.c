/* tests/hil/test_json_messages.c: the JSON codec of the ZeroMQ transport (hil/json_messages.c)
 * without sockets: samples and commands survive encode/decode bit for bit, and every malformed
 * input is rejected and counted the documented way. The number text itself is tested in
 * test_number_format.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hil/error.h"
#include "hil/zmq/json_messages.h"
#include "support/model.h"
#include "support/numbers.h"
#include "support/skip.h"

/* --- helpers ---------------------------------------------------------------------------------- */

/* xorshift64*: reproducible random bit patterns */
static uint64_t next_bits(uint64_t *state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 0x2545F4914F6CDD1DULL;
}

/* A heap copy of text without its NUL, as a socket delivers it: under AddressSanitizer a decoder
 * that reads past the end fails. The caller frees it. */
static char *exact_copy(const char *text) {
  const size_t len = strlen(text);
  char *copy = malloc(len ? len : 1);
  assert_non_null(copy);
  memcpy(copy, text, len);
  return copy;
}

/* A decoder refuses text (given as exact_copy makes it) as malformed, with a message that holds
 * expected_in_error. */
typedef int (*decoder)(const char *json, size_t len, char *err, size_t err_sz);
static void expect_malformed(decoder decode, const char *text, const char *expected_in_error) {
  char err[256] = "";
  char *copy = exact_copy(text);
  const int rc = decode(copy, strlen(text), err, sizeof err);
  free(copy);
  if (rc != HIL_EMALFORMED) {
    fail_msg("accepted: %s", text);
  }
  if (!strstr(err, expected_in_error)) {
    fail_msg("%s: message \"%s\" lacks \"%s\"", text, err, expected_in_error);
  }
}

static cJSON *parse_text(const char *text) {
  cJSON *root = cJSON_Parse(text);
  assert_non_null(root);
  return root;
}

/* --- writer ----------------------------------------------------------------------------------- */

static void test_writer_nesting_and_escapes(void **state) {
  (void)state;
  char buf[256];
  hil_jw w;
  hil_jw_init(&w, buf, sizeof buf);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "a");
  hil_jw_begin_array(&w);
  hil_jw_uint(&w, 1);
  hil_jw_begin_object(&w);
  hil_jw_end_object(&w);
  hil_jw_begin_array(&w);
  hil_jw_end_array(&w);
  hil_jw_null(&w);
  hil_jw_bool(&w, 0);
  hil_jw_end_array(&w);
  hil_jw_key(&w, "q\"\\\n\x01");
  hil_jw_string(&w, "tab\there");
  hil_jw_key(&w, "x");
  hil_jw_number(&w, NAN);
  hil_jw_end_object(&w);
  const int n = hil_jw_finish(&w);
  assert_true(n > 0);
  assert_string_equal(buf, "{\"a\":[1,{},[],null,false],\"q\\\"\\\\\\n\\u0001\":\"tab\\there\","
                           "\"x\":null}");
  cJSON *j = parse_text(buf);
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "q\"\\\n\x01")->valuestring,
                      "tab\there");
  cJSON_Delete(j);
}

static void test_writer_overflow_sticks(void **state) {
  (void)state;
  char buf[8];
  hil_jw w;
  hil_jw_init(&w, buf, sizeof buf);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "long key");
  hil_jw_uint(&w, 1);
  hil_jw_end_object(&w);
  assert_int_equal(hil_jw_finish(&w), HIL_ENOMEM);
  assert_string_equal(buf, "");
}

/* Every buffer size around the fit: the text and its NUL fit exactly, or the writer reports
 * overflow and leaves an empty string; never a byte past the buffer (ASan checks the build). */
static void test_writer_exact_fit(void **state) {
  (void)state;
  const char *const want = "{\"ab\":\"cd\",\"e\\\"\":\"f\"}"; /* {"ab":"cd","e\"":"f"} */
  const size_t need = strlen(want) + 1;
  for (size_t cap = 1; cap <= need + 4; cap++) {
    char *buf = malloc(cap);
    assert_non_null(buf);
    hil_jw w;
    hil_jw_init(&w, buf, cap);
    hil_jw_begin_object(&w);
    hil_jw_key(&w, "ab");
    hil_jw_string(&w, "cd");
    hil_jw_key(&w, "e\"");
    hil_jw_string(&w, "f");
    hil_jw_end_object(&w);
    const int n = hil_jw_finish(&w);
    if (cap >= need) {
      assert_int_equal(n, (int)strlen(want));
      assert_string_equal(buf, want);
    } else {
      assert_int_equal(n, HIL_ENOMEM);
      assert_string_equal(buf, "");
    }
    free(buf);
  }
}

/* --- sensor samples --------------------------------------------------------------------------- */

static void make_sensor(sens_sensor *s, const char *name, sens_type type, int nch,
                        const char *const *channels) {
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "%s", name);
  s->type = type;
  s->nch = nch;
  for (int i = 0; i < nch; i++) {
    snprintf(s->channel[i], sizeof s->channel[i], "%s", channels[i]);
  }
}

static const char *const enc_channels[] = {"counts", "angle", "velocity", "index"};

static void test_topics(void **state) {
  (void)state;
  sens_sensor s;
  char topic[HIL_MSG_TOPIC_MAX];
  make_sensor(&s, "shoulder", SENS_ENCODER, 4, enc_channels);
  assert_int_equal(hil_msg_topic(topic, sizeof topic, &s, 0), 12);
  assert_string_equal(topic, "enc/shoulder");
  hil_msg_topic(topic, sizeof topic, &s, 1);
  assert_string_equal(topic, "truth/enc/shoulder");
  s.type = SENS_IMU;
  hil_msg_topic(topic, sizeof topic, &s, 0);
  assert_string_equal(topic, "imu/shoulder");
  s.type = SENS_TORQUE;
  hil_msg_topic(topic, sizeof topic, &s, 0);
  assert_string_equal(topic, "trq/shoulder");
  s.type = SENS_TOUCH;
  hil_msg_topic(topic, sizeof topic, &s, 1);
  assert_string_equal(topic, "truth/tch/shoulder");
  s.type = SENS_TORQUE;
  assert_int_equal(hil_msg_topic(topic, 12, &s, 0), HIL_EINVAL); /* no room for the NUL */
}

static void test_units(void **state) {
  (void)state;
  sens_sensor s;
  make_sensor(&s, "e", SENS_ENCODER, 4, enc_channels);
  assert_string_equal(hil_msg_unit(NULL, &s, 0), "count");
  assert_string_equal(hil_msg_unit(NULL, &s, 1), "rad");
  assert_string_equal(hil_msg_unit(NULL, &s, 2), "rad/s");
  assert_string_equal(hil_msg_unit(NULL, &s, 3), "flag");
  const char *const imu[] = {"gyro.x", "accel.z"};
  make_sensor(&s, "i", SENS_IMU, 2, imu);
  assert_string_equal(hil_msg_unit(NULL, &s, 0), "rad/s");
  assert_string_equal(hil_msg_unit(NULL, &s, 1), "m/s^2");
  /* a torque sensor reads N*m on a hinge, N on a slide, A when it reports current */
  sim_joint joints[2];
  memset(joints, 0, sizeof joints);
  joints[0].type = SIM_JOINT_HINGE;
  joints[1].type = SIM_JOINT_SLIDE;
  sim_model m;
  memset(&m, 0, sizeof m);
  m.njnt = 2;
  m.joints = joints;
  const char *const trq[] = {"torque"};
  make_sensor(&s, "t", SENS_TORQUE, 1, trq);
  s.u.trq.joint = 0;
  assert_string_equal(hil_msg_unit(&m, &s, 0), "N*m");
  s.u.trq.joint = 1;
  assert_string_equal(hil_msg_unit(&m, &s, 0), "N");
  snprintf(s.channel[0], sizeof s.channel[0], "current");
  assert_string_equal(hil_msg_unit(&m, &s, 0), "A");
  /* a touch sensor's channels are all forces */
  const char *const tch[] = {"normal", "force.x"};
  make_sensor(&s, "p", SENS_TOUCH, 2, tch);
  assert_string_equal(hil_msg_unit(&m, &s, 0), "N");
  assert_string_equal(hil_msg_unit(&m, &s, 1), "N");
}

static sens_sample make_sample(void) {
  sens_sample smp = {.t = 0.123, .t_truth = 0.1225, .seq = 123, .valid = 1};
  const double meas[] = {-1234, 0.1 + 0.2, -3.0 / 7.0, 1};
  const double truth[] = {-1233, 0.30000000000000010, -0.4285, 0};
  memcpy(smp.meas, meas, sizeof meas);
  memcpy(smp.truth, truth, sizeof truth);
  return smp;
}

static void test_sample_round_trip(void **state) {
  (void)state;
  sens_sensor s;
  make_sensor(&s, "shoulder", SENS_ENCODER, 4, enc_channels);
  const sens_sample smp = make_sample();
  char buf[HIL_MSG_SAMPLE_MAX], err[256];
  for (int truth = 0; truth <= 1; truth++) {
    const int n = hil_msg_encode_sample(buf, sizeof buf, NULL, &s, &smp, truth);
    assert_true(n > 0);
    assert_int_equal(n, (int)strlen(buf));
    hil_msg_sample d;
    if (hil_msg_decode_sample(&d, buf, (size_t)n, err, sizeof err) != HIL_OK) {
      fail_msg("%s: %s", buf, err);
    }
    assert_string_equal(d.sensor, "shoulder");
    assert_string_equal(d.type, "encoder");
    assert_int_equal(d.truth, truth);
    assert_int_equal(d.seq, 123);
    assert_true(ts_same_bits(d.t, smp.t));
    assert_true(ts_same_bits(d.t_truth, truth ? smp.t : smp.t_truth));
    assert_int_equal(d.valid, 1);
    assert_int_equal(d.n, 4);
    for (int i = 0; i < 4; i++) {
      assert_string_equal(d.channel[i], enc_channels[i]);
      assert_string_equal(d.unit[i], hil_msg_unit(NULL, &s, i));
      assert_true(ts_same_bits(d.value[i], truth ? smp.truth[i] : smp.meas[i]));
    }
  }
}

static void test_invalid_sample_uses_null(void **state) {
  (void)state;
  sens_sensor s;
  make_sensor(&s, "shoulder", SENS_ENCODER, 4, enc_channels);
  sens_sample smp = make_sample();
  smp.valid = 0;
  for (int i = 0; i < 4; i++) {
    smp.meas[i] = NAN;
  }
  smp.meas[1] = INFINITY;
  char buf[HIL_MSG_SAMPLE_MAX];
  const int n = hil_msg_encode_sample(buf, sizeof buf, NULL, &s, &smp, 0);
  assert_true(n > 0);
  assert_non_null(strstr(buf, "\"values\":{\"counts\":null,\"angle\":null,"));
  assert_non_null(strstr(buf, "\"valid\":false"));
  cJSON *j = parse_text(buf); /* still valid JSON */
  cJSON_Delete(j);
  hil_msg_sample d;
  assert_int_equal(hil_msg_decode_sample(&d, buf, (size_t)n, NULL, 0), HIL_OK);
  assert_int_equal(d.valid, 0);
  assert_true(isnan(d.value[0]) && isnan(d.value[1]));
  /* the ground truth of the same sample is whole */
  hil_msg_encode_sample(buf, sizeof buf, NULL, &s, &smp, 1);
  assert_null(strstr(buf, "null"));
}

static void test_sample_buffer_too_small(void **state) {
  (void)state;
  sens_sensor s;
  make_sensor(&s, "shoulder", SENS_ENCODER, 4, enc_channels);
  const sens_sample smp = make_sample();
  char buf[64];
  assert_int_equal(hil_msg_encode_sample(buf, sizeof buf, NULL, &s, &smp, 0), HIL_ENOMEM);
}

/* A form encodes byte for byte what hil_msg_encode_sample does: for encoders, IMUs and torque
 * sensors, names that need escaping, measured and truth messages, valid and invalid samples,
 * and values drawn as random bit patterns (NaN, infinities and subnormals among them). */
static void test_sample_form_matches_encoder(void **state) {
  (void)state;
  const char *const imu[] = {"gyro.x", "gyro.y", "gyro.z", "accel.x", "accel.y", "accel.z"};
  const char *const odd[] = {"a\"b", "tab\there", "back\\slash", "caf\xc3\xa9"};
  sens_sensor sensors[4];
  make_sensor(&sensors[0], "shoulder", SENS_ENCODER, 4, enc_channels);
  make_sensor(&sensors[1], "imu_wrist", SENS_IMU, 6, imu);
  make_sensor(&sensors[2], "trq", SENS_TORQUE, 1, enc_channels + 1);
  make_sensor(&sensors[3], "we\"ird\n", SENS_ENCODER, 4, odd);
  uint64_t bits = 0x9E3779B97F4A7C15ULL;
  int compared = 0;
  for (int k = 0; k < 4; k++) {
    for (int truth = 0; truth <= 1; truth++) {
      hil_msg_sample_form f;
      assert_int_equal(hil_msg_sample_form_init(&f, NULL, &sensors[k], truth), HIL_OK);
      for (int trial = 0; trial < 500; trial++) {
        sens_sample smp = make_sample();
        smp.seq = next_bits(&bits) >> (trial % 64);
        smp.valid = trial % 3 != 0;
        uint64_t b = next_bits(&bits);
        memcpy(&smp.t, &b, sizeof b);
        smp.t_truth = trial % 2 ? smp.t - 1e-3 : (double)trial;
        for (int i = 0; i < SENS_MAX_CHANNELS; i++) {
          b = next_bits(&bits);
          memcpy(trial % 4 ? &smp.meas[i] : &smp.truth[i], &b, sizeof b);
          smp.truth[i] = trial % 5 ? smp.truth[i] : NAN;
        }
        char want[HIL_MSG_SAMPLE_MAX], got[HIL_MSG_SAMPLE_MAX];
        const int nw = hil_msg_encode_sample(want, sizeof want, NULL, &sensors[k], &smp, truth);
        const int ng = hil_msg_encode_sample_form(got, sizeof got, &f, &smp);
        assert_true(nw > 0);
        if (ng != nw || memcmp(got, want, (size_t)nw + 1) != 0) {
          fail_msg("form and encoder differ:\n%s\n%s", got, want);
        }
        /* too small a buffer: both refuse */
        assert_int_equal(hil_msg_encode_sample_form(got, (size_t)nw, &f, &smp), HIL_ENOMEM);
        assert_int_equal(hil_msg_encode_sample(want, (size_t)nw, NULL, &sensors[k], &smp, truth),
                         HIL_ENOMEM);
        compared++;
      }
    }
  }
  assert_int_equal(compared, 4 * 2 * 500);
}

static int decode_sample(const char *json, size_t len, char *err, size_t err_sz) {
  hil_msg_sample d;
  return hil_msg_decode_sample(&d, json, len, err, err_sz);
}

static void expect_bad_sample(const char *text, const char *expected_in_error) {
  expect_malformed(decode_sample, text, expected_in_error);
}

#define SAMPLE_HEAD "\"sensor\":\"a\",\"type\":\"encoder\",\"truth\":false,\"seq\":1,\"t\":0.1,"
#define SAMPLE_TAIL                                                                               \
  "\"t_truth\":0.1,\"valid\":true,\"values\":{\"angle\":1},\"units\":{\"angle\":\"rad\"}"

static void test_sample_malformed(void **state) {
  (void)state;
  const char *good = "{\"v\":1," SAMPLE_HEAD SAMPLE_TAIL "}";
  hil_msg_sample d;
  assert_int_equal(hil_msg_decode_sample(&d, good, strlen(good), NULL, 0), HIL_OK);
  expect_bad_sample("nope", "not JSON");
  expect_bad_sample("[1]", "expected a JSON object");
  expect_bad_sample("{\"v\":2," SAMPLE_HEAD SAMPLE_TAIL "}", "v: expected protocol version 1");
  expect_bad_sample("{" SAMPLE_HEAD SAMPLE_TAIL "}", "v: missing");
  const char *newer = "{\"v\":1,\"x\":0," SAMPLE_HEAD SAMPLE_TAIL "}"; /* a key added later */
  assert_int_equal(hil_msg_decode_sample(&d, newer, strlen(newer), NULL, 0), HIL_OK);
  expect_bad_sample("{\"v\":1," SAMPLE_HEAD SAMPLE_TAIL "} x", "text after the value");
  expect_bad_sample("{\"v\":1,\"sensor\":1,\"type\":\"encoder\",\"truth\":false,\"seq\":1,"
                    "\"t\":0.1," SAMPLE_TAIL "}",
                    "sensor: expected a string");
  expect_bad_sample("{\"v\":1,\"sensor\":\"a\",\"type\":\"encoder\",\"truth\":false,\"seq\":-1,"
                    "\"t\":0.1," SAMPLE_TAIL "}",
                    "seq: expected an integer");
  expect_bad_sample("{\"v\":1,\"sensor\":\"a\",\"type\":\"encoder\",\"truth\":false,\"seq\":1,"
                    "\"t\":null," SAMPLE_TAIL "}",
                    "t: expected a finite number");
  expect_bad_sample("{\"v\":1," SAMPLE_HEAD "\"t_truth\":0.1,\"valid\":true,\"values\":{\"angle\""
                    ":\"1\"},\"units\":{\"angle\":\"rad\"}}",
                    "values.angle");
  expect_bad_sample("{\"v\":1," SAMPLE_HEAD "\"t_truth\":0.1,\"valid\":true,\"values\":{\"angle\""
                    ":1},\"units\":{\"counts\":\"count\"}}",
                    "units: expected \"angle\"");
  expect_bad_sample("{\"v\":1," SAMPLE_HEAD "\"t_truth\":0.1,\"valid\":true,\"values\":{},"
                    "\"units\":{\"angle\":\"rad\"}}",
                    "units.angle: no such value");
  const char with_nul[] = "{\"v\":1}\0{}";
  assert_int_equal(hil_msg_decode_sample(&d, with_nul, sizeof with_nul - 1, NULL, 0),
                   HIL_EMALFORMED);
}

/* --- status ----------------------------------------------------------------------------------- */

static void test_status(void **state) {
  (void)state;
  hil_status st;
  memset(&st, 0, sizeof st);
  st.sim_time = 1.25;
  st.wall_time = 1.5;
  st.steps = 1250;
  st.mode = HIL_MODE_LOCKSTEP;
  st.paused = 1;
  st.overruns = 3;
  st.skipped = 4;
  st.whole_run = 1;
  st.late_p50 = 1e-4, st.late_p99 = 3e-4, st.late_max = 2e-3;
  st.compute_p50 = 2e-6, st.compute_p99 = 5e-6, st.compute_max = 9e-6;
  st.deadline_offset = 4321.5;
  st.commands.accepted = 10;
  st.commands.clamped = 11;
  st.commands.rejected_nonfinite = 12;
  st.commands.rejected_unknown = 13;
  st.commands.rejected_malformed = 14;
  st.commands.watchdog_trips = 15;
  st.samples_published = 16;
  char buf[2048];
  assert_true(hil_msg_encode_status(buf, sizeof buf, &st) > 0);
  cJSON *j = parse_text(buf);
  assert_int_equal(cJSON_GetObjectItem(j, "v")->valueint, HIL_MSG_VERSION);
  assert_true(cJSON_GetObjectItem(j, "t")->valuedouble == 1.25);
  assert_true(cJSON_GetObjectItem(j, "wall_time")->valuedouble == 1.5);
  assert_int_equal(cJSON_GetObjectItem(j, "steps")->valueint, 1250);
  assert_string_equal(cJSON_GetObjectItem(j, "mode")->valuestring, "lockstep");
  assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "paused")));
  assert_int_equal(cJSON_GetObjectItem(j, "overruns")->valueint, 3);
  assert_int_equal(cJSON_GetObjectItem(j, "skipped")->valueint, 4);
  assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "whole_run")));
  assert_true(cJSON_GetObjectItem(j, "deadline_offset_s")->valuedouble == 4321.5);
  const cJSON *late = cJSON_GetObjectItem(j, "late_s"), *cmp = cJSON_GetObjectItem(j, "compute_s");
  assert_true(cJSON_GetObjectItem(late, "p99")->valuedouble == 3e-4);
  assert_true(cJSON_GetObjectItem(late, "max")->valuedouble == 2e-3);
  assert_true(cJSON_GetObjectItem(cmp, "p50")->valuedouble == 2e-6);
  const cJSON *c = cJSON_GetObjectItem(j, "commands");
  const char *const names[] = {"accepted",         "clamped",            "rejected_nonfinite",
                               "rejected_unknown", "rejected_malformed", "watchdog_trips"};
  for (int i = 0; i < 6; i++) {
    assert_int_equal(cJSON_GetObjectItem(c, names[i])->valueint, 10 + i);
  }
  assert_int_equal(cJSON_GetObjectItem(j, "samples_published")->valueint, 16);
  cJSON_Delete(j);
}

/* --- commands --------------------------------------------------------------------------------- */

static const char *const arm_json =
    "{\"name\":\"arm\",\"timestep\":0.001,\"gravity\":[0,0,0],\"bodies\":["
    "{\"name\":\"upper\",\"parent\":\"world\",\"joint\":{\"name\":\"shoulder\",\"type\":\"hinge\","
    "\"axis\":[0,0,1]},\"inertial\":{\"mass\":1,\"com\":[0.1,0,0],\"inertia\":[0.001,0.001,0.001,"
    "0,0,0]}},"
    "{\"name\":\"fore\",\"parent\":\"upper\",\"pos\":[0.2,0,0],\"joint\":{\"name\":\"elbow\","
    "\"type\":\"hinge\",\"axis\":[0,0,1]},\"inertial\":{\"mass\":1,\"com\":[0.1,0,0],"
    "\"inertia\":[0.001,0.001,0.001,0,0,0]}}],"
    "\"actuators\":["
    "{\"name\":\"shoulder_motor\",\"joint\":\"shoulder\",\"type\":\"motor\",\"ctrlrange\":[-2,2]},"
    "{\"name\":\"elbow_servo\",\"joint\":\"elbow\",\"type\":\"position_servo\",\"kp\":5}]}";

typedef struct cmd_fixture {
  sim_model *m;
  hil_commands c;
} cmd_fixture;

static int cmd_setup(void **state) {
  static cmd_fixture f;
  memset(&f, 0, sizeof f); /* a fresh fixture per test, as calloc gave */
  f.m = ts_model(arm_json);
  *state = &f;
  return hil_commands_init(&f.c, f.m, 0, HIL_TIMEOUT_ZERO) == HIL_OK ? 0 : -1;
}

static int cmd_teardown(void **state) {
  cmd_fixture *f = *state;
  hil_commands_free(&f->c);
  sim_model_free(f->m);
  return 0;
}

/* The text in a heap block of exactly its length, without a NUL, as a socket delivers it: under
 * AddressSanitizer a decoder that reads past the end fails. */
static int submit_exact(cmd_fixture *f, const char *text, hil_msg_cmd_report *rep, char *err,
                        size_t err_sz) {
  const size_t len = strlen(text);
  char *copy = malloc(len ? len : 1);
  assert_non_null(copy);
  memcpy(copy, text, len);
  const int rc = hil_msg_submit_commands(&f->c, copy, len, 0.5, rep, err, err_sz);
  free(copy);
  return rc;
}

static int submit(cmd_fixture *f, const char *text, hil_msg_cmd_report *rep) {
  return submit_exact(f, text, rep, NULL, 0);
}

static void test_commands_round_trip(void **state) {
  cmd_fixture *f = *state;
  const char *const names[] = {"shoulder_motor", "elbow"}; /* an actuator and a joint name */
  const double values[] = {0.1 + 0.2, -1.0 / 3.0};
  char buf[256];
  const int n = hil_msg_encode_commands(buf, sizeof buf, names, values, 2, 0.25);
  assert_true(n > 0);
  assert_string_equal(buf, "{\"v\":1,\"t\":0.25,\"commands\":{\"shoulder_motor\":"
                           "0.30000000000000004,\"elbow\":-0.3333333333333333}}");
  hil_msg_cmd_report rep;
  char err[128];
  assert_int_equal(hil_msg_submit_commands(&f->c, buf, (size_t)n, 0.5, &rep, err, sizeof err),
                   HIL_OK);
  assert_int_equal(rep.entries, 2);
  assert_int_equal(rep.accepted, 2);
  assert_int_equal(rep.rejected, 0);
  assert_true(rep.has_t && rep.t == 0.25);
  assert_true(ts_same_bits(f->c.slots[0].value, values[0]));
  assert_true(ts_same_bits(f->c.slots[1].value, values[1]));
  assert_true(f->c.slots[0].received_at == 0.5);
  assert_true(hil_commands_all_fresh(&f->c));
  assert_int_equal(f->c.counters.accepted, 2);
}

static void test_commands_clamped(void **state) {
  cmd_fixture *f = *state;
  hil_msg_cmd_report rep;
  assert_int_equal(submit(f, "{\"v\":1,\"commands\":{\"shoulder_motor\":7.5}}", &rep), HIL_OK);
  assert_int_equal(rep.accepted, 1);
  assert_true(f->c.slots[0].value == 2.0); /* the motor's ctrlrange */
  assert_int_equal(f->c.counters.clamped, 1);
  assert_false(rep.has_t);
}

/* Bad values: each entry is rejected and counted once, the good entry beside them lands. */
static void test_commands_bad_entries(void **state) {
  cmd_fixture *f = *state;
  f->c.slots[1].value = 0.75;
  hil_msg_cmd_report rep;
  char err[128];
  const char *text = "{\"v\":1,\"commands\":{\"wrist\":1,\"elbow_servo\":null,"
                     "\"elbow\":\"NaN\",\"elbow_servo\":1e999,\"elbow\":-1e999,"
                     "\"elbow_servo\":true,\"elbow\":[1],\"shoulder_motor\":0.5}}";
  assert_int_equal(hil_msg_submit_commands(&f->c, text, strlen(text), 0.5, &rep, err, sizeof err),
                   HIL_OK);
  assert_int_equal(rep.entries, 8);
  assert_int_equal(rep.accepted, 1);
  assert_int_equal(rep.rejected, 7);
  assert_non_null(strstr(err, "commands.wrist"));
  assert_int_equal(f->c.counters.rejected_unknown, 1);
  assert_int_equal(f->c.counters.rejected_nonfinite, 4); /* null, "NaN", 1e999, -1e999 */
  assert_int_equal(f->c.counters.rejected_malformed, 2); /* true, [1] */
  assert_int_equal(f->c.counters.accepted, 1);
  assert_true(f->c.slots[1].value == 0.75); /* the elbow keeps its previous command */
  assert_false(f->c.slots[1].fresh);
  assert_true(f->c.slots[0].value == 0.5);
}

/* Malformed messages: dropped whole, one count each, no command touched. */
static void test_commands_malformed_messages(void **state) {
  cmd_fixture *f = *state;
  const char *const bad[] = {
      "",
      "not json",
      "[1,2]",
      "null",
      "{}",
      "{\"v\":1}",
      "{\"commands\":{\"elbow\":1}}",
      "{\"v\":2,\"commands\":{\"elbow\":1}}",
      "{\"v\":\"1\",\"commands\":{\"elbow\":1}}",
      "{\"v\":1,\"commands\":[[\"elbow\",1]]}",
      "{\"v\":1,\"commands\":{\"elbow\":1},\"extra\":0}",
      "{\"v\":1,\"t\":\"now\",\"commands\":{\"elbow\":1}}",
      "{\"v\":1,\"t\":1e999,\"commands\":{\"elbow\":1}}",
      "{\"v\":1,\"commands\":{\"elbow\":NaN}}", /* not JSON: cJSON refuses the bare word */
      "{\"v\":1,\"commands\":{\"elbow\":Infinity}}",
      "{\"v\":1,\"commands\":{\"elbow\":1}} trailing",
      "{\"v\":1,\"commands\":{\"elbow\":1}",
      "{\"v\":1,\"commands\":{\"elbow\":1",
      "{\"v\":1,\"commands\":{\"elbow\":1e",
      "{\"v\":1,\"commands\":{\"elbow\":-",
      "{\"v\":1,\"commands\":{\"elb",
      "{\"v\":1,\"commands\":{\"elbow\\u00",
      "{\"v\":1,\"commands\":{\"elbow\":tru",
      "{\"v\":1,\"commands\":{\"elbow\":nul",
      "{",
      "\"",
  };
  const size_t nbad = sizeof bad / sizeof bad[0];
  for (size_t i = 0; i < nbad; i++) {
    char err[128] = "";
    if (submit_exact(f, bad[i], NULL, err, sizeof err) != HIL_EMALFORMED) {
      fail_msg("accepted: %s", bad[i]);
    }
    assert_true(err[0] != '\0');
  }
  const char with_nul[] = "{\"v\":1,\"commands\":{}}\0";
  assert_int_equal(hil_msg_submit_commands(&f->c, with_nul, sizeof with_nul, 0.5, NULL, NULL, 0),
                   HIL_EMALFORMED);
  assert_int_equal(f->c.counters.rejected_malformed, nbad + 1);
  assert_int_equal(f->c.counters.accepted, 0);
  assert_int_equal(f->c.counters.rejected_unknown + f->c.counters.rejected_nonfinite, 0);
  assert_false(f->c.slots[1].fresh);
  /* white space around the value is fine; an empty command set is fine */
  assert_int_equal(submit(f, " \n{\"v\":1,\"commands\":{}}\r\n", NULL), HIL_OK);
  assert_int_equal(f->c.counters.rejected_malformed, nbad + 1);
}

static void test_commands_nan_encoded_as_null(void **state) {
  cmd_fixture *f = *state;
  const char *const names[] = {"elbow"};
  const double values[] = {NAN};
  char buf[128];
  const int n = hil_msg_encode_commands(buf, sizeof buf, names, values, 1, NAN);
  assert_string_equal(buf, "{\"v\":1,\"commands\":{\"elbow\":null}}");
  assert_int_equal(hil_msg_submit_commands(&f->c, buf, (size_t)n, 0, NULL, NULL, 0), HIL_OK);
  assert_int_equal(f->c.counters.rejected_nonfinite, 1);
  assert_int_equal(f->c.counters.accepted, 0);
}

/* --- control requests ------------------------------------------------------------------------- */

static hil_ctl_request expect_control(const char *text) {
  hil_ctl_request r;
  char err[256] = "";
  if (hil_msg_decode_control(&r, text, strlen(text), err, sizeof err) != HIL_OK) {
    fail_msg("%s refused: %s", text, err);
  }
  return r;
}

static int decode_control(const char *json, size_t len, char *err, size_t err_sz) {
  hil_ctl_request r;
  return hil_msg_decode_control(&r, json, len, err, err_sz);
}

static void expect_bad_control(const char *text, const char *expected_in_error) {
  expect_malformed(decode_control, text, expected_in_error);
}

static void test_control_requests(void **state) {
  (void)state;
  for (int op = 0; op < HIL_CTL_COUNT; op++) {
    char text[128];
    snprintf(text, sizeof text, "{\"cmd\":\"%s\"}", hil_ctl_op_name((hil_ctl_op)op));
    if (op == HIL_CTL_GET_PARAM || op == HIL_CTL_SET_PARAM || op == HIL_CTL_FAULT) {
      expect_bad_control(text, "sensor: missing");
    } else {
      assert_int_equal(expect_control(text).op, op);
    }
  }
  hil_ctl_request r = expect_control("{\"cmd\":\"step\"}");
  assert_int_equal(r.n, 1);
  r = expect_control("{\"v\":1,\"cmd\":\"step\",\"n\":250}");
  assert_int_equal(r.n, 250);
  r = expect_control("{\"cmd\":\"get_param\",\"sensor\":\"enc\"}");
  assert_string_equal(r.sensor, "enc");
  assert_string_equal(r.path, "");
  r = expect_control("{\"cmd\":\"set_param\",\"sensor\":\"enc\",\"path\":\"noise.white.sigma\","
                     "\"value\":0.001}");
  assert_int_equal(r.op, HIL_CTL_SET_PARAM);
  assert_string_equal(r.path, "noise.white.sigma");
  assert_true(r.value == 0.001);
  r = expect_control("{\"cmd\":\"fault\",\"sensor\":\"imu\",\"group\":\"gyro\",\"mode\":\"spike\","
                     "\"probability\":0.5,\"size\":2}");
  assert_int_equal(r.fault.mode, SENS_FAULT_SPIKE);
  assert_string_equal(r.group, "gyro");
  assert_true(r.fault.probability == 0.5 && r.fault.size == 2 && r.fault.offset == 0);
}

static void test_control_malformed(void **state) {
  (void)state;
  expect_bad_control("", "empty message");
  expect_bad_control("status", "not JSON");
  expect_bad_control("{\"cmd\":\"sta", "not JSON");
  expect_bad_control("{\"cmd\":\"status\"", "not JSON");
  expect_bad_control("[\"status\"]", "expected a JSON object");
  expect_bad_control("{}", "cmd: missing");
  expect_bad_control("{\"cmd\":7}", "cmd: missing");
  expect_bad_control("{\"cmd\":\"launch\"}", "unknown request \"launch\"");
  expect_bad_control("{\"cmd\":\"pause\",\"n\":1}", "pause.n: unknown key");
  expect_bad_control("{\"cmd\":\"status\",\"v\":9}", "protocol version");
  expect_bad_control("{\"cmd\":\"step\",\"n\":0}", "n: expected an integer from 1");
  expect_bad_control("{\"cmd\":\"step\",\"n\":1.5}", "n: expected an integer");
  expect_bad_control("{\"cmd\":\"step\",\"n\":\"3\"}", "n: expected an integer");
  expect_bad_control("{\"cmd\":\"step\",\"n\":1e999}", "n: expected an integer");
  expect_bad_control("{\"cmd\":\"set_param\",\"sensor\":\"a\",\"path\":\"p\"}",
                     "value: missing");
  expect_bad_control("{\"cmd\":\"set_param\",\"sensor\":\"a\",\"path\":\"p\",\"value\":null}",
                     "value: expected a finite number");
  expect_bad_control("{\"cmd\":\"set_param\",\"sensor\":\"a\",\"path\":\"p\",\"value\":1e999}",
                     "value: expected a finite number");
  expect_bad_control("{\"cmd\":\"set_param\",\"sensor\":\"a\",\"value\":1}", "path: missing");
  expect_bad_control("{\"cmd\":\"fault\",\"sensor\":\"a\",\"mode\":\"melt\"}", "mode: expected");
  expect_bad_control("{\"cmd\":\"get_param\",\"sensor\":\"a\",\"path\":3}",
                     "path: expected a string");
  char long_name[200];
  memset(long_name, 'x', sizeof long_name);
  long_name[sizeof long_name - 1] = '\0';
  char text[300];
  snprintf(text, sizeof text, "{\"cmd\":\"get_param\",\"sensor\":\"%s\"}", long_name);
  expect_bad_control(text, "sensor: longer than");
}

static void test_error_reply(void **state) {
  (void)state;
  char buf[128];
  assert_true(hil_msg_encode_error(buf, sizeof buf, "bad \"thing\"") > 0);
  cJSON *j = parse_text(buf);
  assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "ok")));
  assert_string_equal(cJSON_GetObjectItem(j, "error")->valuestring, "bad \"thing\"");
  cJSON_Delete(j);
}

int main(void) {
  const struct CMUnitTest codec[] = {
      cmocka_unit_test(test_writer_nesting_and_escapes),
      cmocka_unit_test(test_writer_exact_fit),
      cmocka_unit_test(test_writer_overflow_sticks),
      cmocka_unit_test(test_topics),
      cmocka_unit_test(test_units),
      cmocka_unit_test(test_sample_round_trip),
      cmocka_unit_test(test_invalid_sample_uses_null),
      cmocka_unit_test(test_sample_buffer_too_small),
      cmocka_unit_test(test_sample_form_matches_encoder),
      cmocka_unit_test(test_sample_malformed),
      cmocka_unit_test(test_status),
      cmocka_unit_test(test_control_requests),
      cmocka_unit_test(test_control_malformed),
      cmocka_unit_test(test_error_reply),
  };
  /* each command test gets a fresh command table */
  const struct CMUnitTest commands[] = {
      cmocka_unit_test_setup_teardown(test_commands_round_trip, cmd_setup, cmd_teardown),
      cmocka_unit_test_setup_teardown(test_commands_clamped, cmd_setup, cmd_teardown),
      cmocka_unit_test_setup_teardown(test_commands_bad_entries, cmd_setup, cmd_teardown),
      cmocka_unit_test_setup_teardown(test_commands_malformed_messages, cmd_setup, cmd_teardown),
      cmocka_unit_test_setup_teardown(test_commands_nan_encoded_as_null, cmd_setup, cmd_teardown),
  };
  int failed = cmocka_run_group_tests_name("json_messages", codec, NULL, NULL);
  failed += cmocka_run_group_tests_name("json_commands", commands, NULL, NULL);
  return ts_result(failed);
}
