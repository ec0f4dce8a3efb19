/* tests/hil/log/test_log_servo.c: the servo record of log version 2 (hil/record/log_*.c,
 * docs/logs.md): a round trip bit for bit, the writer's refusals (the log stays valid), a
 * version-1 log still read, a damaged or malformed servo record refused with its record number
 * and byte (the reader going on with the next line), and the other readers (a series) skipping
 * servo records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hil/record/log.h"
#include "support/numbers.h"
#include "support/skip.h"
#include "support/tmp.h"

static void make_header(hil_log_header *h) {
  memset(h, 0, sizeof *h);
  h->version = HIL_LOG_VERSION;
  snprintf(h->robot, sizeof h->robot, "servo_arm");
  h->rate_hz = 1000;
  h->nsensors = 1;
  hil_log_sensor_info *si = &h->sensor[0];
  snprintf(si->name, sizeof si->name, "enc_elbow");
  snprintf(si->type, sizeof si->type, "encoder");
  si->nch = 1;
  snprintf(si->channel[0], sizeof si->channel[0], "angle");
  snprintf(si->unit[0], sizeof si->unit[0], "rad");
  si->rate_hz = 1000;
  h->nactuators = 1;
  snprintf(h->actuator[0], sizeof h->actuator[0], "elbow_servo");
  snprintf(h->started, sizeof h->started, "2026-12-02T06:00:00Z");
}

static void write_sample(hil_log_writer *w, double t, uint64_t seq, double angle) {
  sens_sensor s;
  memset(&s, 0, sizeof s);
  snprintf(s.name, sizeof s.name, "enc_elbow");
  s.type = SENS_ENCODER;
  s.rate_hz = 1000;
  s.nch = 1;
  snprintf(s.channel[0], sizeof s.channel[0], "angle");
  sens_sample smp = {0};
  smp.t = smp.t_truth = t;
  smp.seq = seq;
  smp.valid = 1;
  smp.meas[0] = smp.truth[0] = angle;
  assert_int_equal(hil_log_write_sample(w, &s, &smp, t + 0.5), 0);
}

/* header, sample, servo record (every value's hard case), sample, end */
static void write_servo_log(const char *path) {
  hil_log_header h;
  make_header(&h);
  char err[256];
  hil_log_writer *w = hil_log_open(path, &h, err, sizeof err);
  assert_non_null(w);
  write_sample(w, 0.0, 0, 0.1);
  const char *names[] = {"torque_enable", "goal_position", "homing_offset"};
  const uint32_t values[] = {1, 4294967295u, 0};
  assert_int_equal(hil_log_write_servo(w, 1.0089999999999997, 9007199254740992ULL, 1.0 / 3.0,
                                       "elbow_servo", 252, 3, names, values),
                   0);
  write_sample(w, 0.001, 1, 0.2);
  assert_int_equal(hil_log_close(&w), 0);
}

static void test_servo_round_trip(void **state) {
  (void)state;
  char path[300], err[512];
  ts_tmp_path(path, sizeof path, "servo.ndjson");
  write_servo_log(path);
  hil_log_reader *r = hil_log_reader_open(path, err, sizeof err);
  assert_non_null(r);
  assert_int_equal(hil_log_reader_header(r)->version, 2);
  hil_log_record rec;
  assert_int_equal(hil_log_next(r, &rec, err, sizeof err), 1);
  assert_int_equal(rec.type, HIL_LOG_SAMPLE);
  assert_int_equal(hil_log_next(r, &rec, err, sizeof err), 1);
  assert_int_equal(rec.type, HIL_LOG_SERVO);
  assert_int_equal(rec.index, 3);
  assert_true(ts_same_bits(rec.t, 1.0089999999999997));
  assert_true(ts_same_bits(rec.wall, 1.0 / 3.0));
  assert_true(rec.step == 9007199254740992ULL);
  assert_string_equal(rec.actuator, "elbow_servo");
  assert_int_equal(rec.servo_id, 252);
  assert_int_equal(rec.nreg, 3);
  assert_string_equal(rec.reg_name[0], "torque_enable");
  assert_string_equal(rec.reg_name[1], "goal_position");
  assert_string_equal(rec.reg_name[2], "homing_offset");
  assert_true(rec.reg_value[0] == 1 && rec.reg_value[1] == 4294967295u && rec.reg_value[2] == 0);
  assert_int_equal(hil_log_next(r, &rec, err, sizeof err), 1);
  assert_int_equal(rec.type, HIL_LOG_SAMPLE);
  assert_true(ts_same_bits(rec.value[0], 0.2));
  assert_int_equal(hil_log_next(r, &rec, err, sizeof err), 1);
  assert_int_equal(rec.type, HIL_LOG_END);
  hil_log_reader_close(&r);
}

/* too many fields, or a name the reader would not take: that record is lost, the log goes on */
static void test_servo_writer_refuses(void **state) {
  (void)state;
  char path[300], err[512];
  ts_tmp_path(path, sizeof path, "refused.ndjson");
  hil_log_header h;
  make_header(&h);
  hil_log_writer *w = hil_log_open(path, &h, err, sizeof err);
  assert_non_null(w);
  const char *names[HIL_LOG_MAX_REGISTERS + 1];
  uint32_t values[HIL_LOG_MAX_REGISTERS + 1] = {0};
  for (int i = 0; i <= HIL_LOG_MAX_REGISTERS; i++) {
    names[i] = "goal_position";
  }
  assert_int_equal(hil_log_write_servo(w, 0, 0, 0, "elbow_servo", 3, HIL_LOG_MAX_REGISTERS + 1,
                                       names, values),
                   HIL_LOG_EARG);
  const char *longname[] = {"a_name_of_twenty_four_ch"}; /* 24 characters: no room for the NUL */
  assert_int_equal(hil_log_write_servo(w, 0, 0, 0, "elbow_servo", 3, 1, longname, values),
                   HIL_LOG_EARG);
  assert_int_equal(hil_log_write_servo(w, 0, 0, 0, "elbow_servo", 3, HIL_LOG_MAX_REGISTERS, names,
                                       values),
                   0);
  assert_int_equal(hil_log_close(&w), 0);
  hil_log_reader *r = hil_log_reader_open(path, err, sizeof err);
  assert_non_null(r);
  hil_log_record rec;
  assert_int_equal(hil_log_next(r, &rec, err, sizeof err), 1);
  assert_int_equal(rec.type, HIL_LOG_SERVO);
  assert_int_equal(rec.nreg, HIL_LOG_MAX_REGISTERS);
  assert_int_equal(hil_log_next(r, &rec, err, sizeof err), 1);
  assert_int_equal(rec.type, HIL_LOG_END);
  hil_log_reader_close(&r);
}

/* "cccccccc text\n" with the right checksum appended to f */
static void put_line(FILE *f, const char *text) {
  fprintf(f, "%08x %s\n", (unsigned)hil_crc32(0, text, strlen(text)), text);
}

#define V1_HEADER                                                                                  \
  "{\"type\":\"header\",\"format\":\"achilles-log\",\"version\":1,\"robot\":\"servo_arm\","        \
  "\"rate_hz\":1000,\"seed\":1,\"sensors\":[{\"name\":\"enc_elbow\",\"type\":\"encoder\","         \
  "\"channels\":[\"angle\"],\"units\":[\"rad\"],\"rate_hz\":1000}],"                               \
  "\"actuators\":[\"elbow_servo\"],"                                                               \
  "\"started\":\"2026-11-29T22:12:46Z\"}"
#define SAMPLE(seq, t, v)                                                                          \
  "{\"type\":\"sample\",\"sensor\":\"enc_elbow\",\"topic\":\"enc/enc_elbow\",\"seq\":" seq         \
  ",\"t\":" t ",\"t_truth\":" t ",\"wall\":0,\"valid\":true,\"values\":{\"angle\":" v "}}"

/* a log of version 1 (before the servo records), written as the old writer did: read as before */
static void test_version_1_still_reads(void **state) {
  (void)state;
  char path[300], err[512];
  ts_tmp_path(path, sizeof path, "v1.ndjson");
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  put_line(f, V1_HEADER);
  put_line(f, SAMPLE("0", "0", "0.5"));
  put_line(f, "{\"type\":\"command\",\"t\":0,\"wall\":0,\"source\":\"api\",\"actuator\":"
              "\"elbow_servo\",\"value\":0.25,\"result\":\"ok\"}");
  put_line(f, SAMPLE("1", "0.001", "0.75"));
  put_line(f, "{\"type\":\"end\",\"t\":0.001,\"wall\":0,\"records\":5}");
  fclose(f);
  hil_log_reader *r = hil_log_reader_open(path, err, sizeof err);
  if (!r) {
    fail_msg("%s", err);
  }
  assert_int_equal(hil_log_reader_header(r)->version, 1);
  hil_log_record rec;
  const hil_log_rtype want[] = {HIL_LOG_SAMPLE, HIL_LOG_COMMAND, HIL_LOG_SAMPLE, HIL_LOG_END};
  for (int i = 0; i < 4; i++) {
    assert_int_equal(hil_log_next(r, &rec, err, sizeof err), 1);
    assert_int_equal(rec.type, want[i]);
  }
  assert_int_equal(hil_log_next(r, &rec, err, sizeof err), 0);
  hil_log_reader_close(&r);
  hil_series s;
  assert_int_equal(hil_series_load(&s, path, "enc_elbow", "angle", err, sizeof err), 0);
  assert_int_equal((int)s.n, 2);
  hil_series_free(&s);
}

#define SERVO_HEAD "{\"type\":\"servo\",\"t\":0.001,\"wall\":0,"

/* malformed servo records (each with a good checksum) are refused with their place and what is
 * wrong; the reader goes on with the next line */
static void test_bad_servo_records(void **state) {
  (void)state;
  static const struct {
    const char *text, *what;
  } bad[] = {
      {SERVO_HEAD "\"actuator\":\"elbow_servo\",\"id\":3,\"registers\":{}}", "key step"},
      {SERVO_HEAD "\"step\":-1,\"actuator\":\"elbow_servo\",\"id\":3,\"registers\":{}}",
       "key step"},
      {SERVO_HEAD "\"step\":1.5,\"actuator\":\"elbow_servo\",\"id\":3,\"registers\":{}}",
       "key step"},
      {SERVO_HEAD "\"step\":1,\"id\":3,\"registers\":{}}", "key actuator"},
      {SERVO_HEAD "\"step\":1,\"actuator\":\"elbow_servo\",\"id\":253,\"registers\":{}}", "key id"},
      {SERVO_HEAD "\"step\":1,\"actuator\":\"elbow_servo\",\"id\":3,\"registers\":[1]}",
       "key registers"},
      {SERVO_HEAD "\"step\":1,\"actuator\":\"elbow_servo\",\"id\":3,"
                  "\"registers\":{\"goal_position\":-1}}",
       "key registers"},
      {SERVO_HEAD "\"step\":1,\"actuator\":\"elbow_servo\",\"id\":3,"
                  "\"registers\":{\"goal_position\":4294967296}}",
       "key registers"},
      {SERVO_HEAD "\"step\":1,\"actuator\":\"elbow_servo\",\"id\":3,"
                  "\"registers\":{\"goal_position\":\"2048\"}}",
       "key registers"},
      {SERVO_HEAD "\"step\":1,\"actuator\":\"elbow_servo\",\"id\":3,"
                  "\"registers\":{\"a_name_of_twenty_four_ch\":1}}",
       "key registers"},
      {"{\"type\":\"servo\",\"t\":null,\"wall\":0,\"step\":1,\"actuator\":\"elbow_servo\",\"id\":3,"
       "\"registers\":{}}",
       "t is not a number (a servo needs its simulation time)"},
  };
  char path[300], err[512];
  ts_tmp_path(path, sizeof path, "bad_servo.ndjson");
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  put_line(f, V1_HEADER);
  long long offset[sizeof bad / sizeof bad[0]];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    offset[i] = ftell(f);
    put_line(f, bad[i].text);
    put_line(f, SAMPLE("0", "0", "0.5"));
  }
  fclose(f);
  hil_log_reader *r = hil_log_reader_open(path, err, sizeof err);
  assert_non_null(r);
  hil_log_record rec;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char want[400];
    snprintf(want, sizeof want, "%s: record %zu at byte %lld: ", path, 2 + 2 * i, offset[i]);
    assert_int_equal(hil_log_next(r, &rec, err, sizeof err), HIL_LOG_EFORMAT);
    if (!strstr(err, want) || !strstr(err, bad[i].what)) {
      fail_msg("case %zu: expected '%s' ... '%s' in '%s'", i, want, bad[i].what, err);
    }
    assert_int_equal(hil_log_next(r, &rec, err, sizeof err), 1);
    assert_int_equal(rec.type, HIL_LOG_SAMPLE);
  }
  hil_log_reader_close(&r);
}

/* one byte of the servo record flipped, at every byte of its line: a CRC or framing error at its
 * record and byte, the record before intact and the one after read */
static void test_servo_record_damage(void **state) {
  (void)state;
  char path[300], bad[300], err[512];
  ts_tmp_path(path, sizeof path, "clean_servo.ndjson");
  ts_tmp_path(bad, sizeof bad, "damaged_servo.ndjson");
  write_servo_log(path);
  size_t n;
  char *clean = ts_read_file(path, &n);
  assert_non_null(clean);
  const char *l2 = strchr(clean, '\n') + 1, *l3 = strchr(l2, '\n') + 1, *l4 = strchr(l3, '\n') + 1;
  char *copy = malloc(n);
  assert_non_null(copy);
  for (const char *p = l3; p < l4 - 1; p++) { /* every byte of the servo line but its '\n' */
    memcpy(copy, clean, n);
    copy[p - clean] ^= 0x20;
    ts_write_bytes(bad, copy, n);
    hil_log_reader *r = hil_log_reader_open(bad, err, sizeof err);
    assert_non_null(r);
    hil_log_record rec;
    assert_int_equal(hil_log_next(r, &rec, err, sizeof err), 1);
    assert_int_equal(rec.type, HIL_LOG_SAMPLE);
    char want[400];
    snprintf(want, sizeof want, "record 3 at byte %td: ", l3 - clean);
    const int k = hil_log_next(r, &rec, err, sizeof err);
    if (!(k == HIL_LOG_ECRC || k == HIL_LOG_EFORMAT) || !strstr(err, want)) {
      fail_msg("byte %td flipped: got %d '%s'", p - clean, k, err);
    }
    assert_int_equal(hil_log_next(r, &rec, err, sizeof err), 1);
    assert_int_equal(rec.type, HIL_LOG_SAMPLE);
    hil_log_reader_close(&r);
  }
  (void)l2;
  free(copy);
  free(clean);
}

/* the readers that want samples pass the servo records by */
static void test_series_skips_servo_records(void **state) {
  (void)state;
  char path[300], err[512];
  ts_tmp_path(path, sizeof path, "series_servo.ndjson");
  write_servo_log(path);
  hil_series s;
  assert_int_equal(hil_series_load(&s, path, "enc_elbow", "angle", err, sizeof err), 0);
  assert_int_equal((int)s.n, 2);
  assert_true(s.skipped == 0 && s.warning[0] == '\0');
  assert_true(ts_same_bits(s.v[1], 0.2));
  hil_series_free(&s);
}

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_servo_round_trip, test_servo_writer_refuses,
             test_version_1_still_reads, test_bad_servo_records, test_servo_record_damage,
             test_series_skips_servo_records)
