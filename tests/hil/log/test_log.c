/* tests/hil/log/test_log.c: the recording log (hil/record/log_*.c): CRC-32 check value, a round trip of
 * every record type bit for bit, corruption of every byte of a small log detected at the right
 * record and offset with every earlier record intact, truncation at every length of the last
 * record, a writer killed with SIGKILL, and the CSV import (missing values, bad headers, bad
 * rows). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hil/record/log.h"
#include "support/numbers.h"
#include "support/skip.h"
#include "support/tmp.h"
#include "support/wait.h"

/* --- helpers ---------------------------------------------------------------------------------- */

static char *read_all(const char *path, size_t *n) {
  char *buf = ts_read_file(path, n);
  assert_non_null(buf);
  return buf;
}

/* an encoder-like sensor with two channels, filled by hand */
static void make_sensor(sens_sensor *s, const char *name) {
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "%s", name);
  s->type = SENS_ENCODER;
  s->rate_hz = 1000;
  s->nch = 2;
  snprintf(s->channel[0], sizeof s->channel[0], "counts");
  snprintf(s->channel[1], sizeof s->channel[1], "angle");
}

static void make_header(hil_log_header *h) {
  memset(h, 0, sizeof *h);
  h->version = HIL_LOG_VERSION;
  snprintf(h->robot, sizeof h->robot, "club_arm");
  h->rate_hz = 1000;
  h->seed = 9007199254740992ULL; /* 2^53, the largest seed a sensors block takes */
  h->nsensors = 1;
  hil_log_sensor_info *si = &h->sensor[0];
  snprintf(si->name, sizeof si->name, "enc_shoulder");
  snprintf(si->type, sizeof si->type, "encoder");
  si->nch = 2;
  snprintf(si->channel[0], sizeof si->channel[0], "counts");
  snprintf(si->channel[1], sizeof si->channel[1], "angle");
  snprintf(si->unit[0], sizeof si->unit[0], "count");
  snprintf(si->unit[1], sizeof si->unit[1], "rad");
  si->rate_hz = 500;
  h->nactuators = 2;
  snprintf(h->actuator[0], sizeof h->actuator[0], "shoulder_motor");
  snprintf(h->actuator[1], sizeof h->actuator[1], "odd \"name\\");
  snprintf(h->started, sizeof h->started, "2026-11-29T21:51:18Z");
}

/* the values every sample of the small log carries: hard cases for the %.17g round trip */
static const double hard_values[] = {0.1,   1.0 / 3.0, -0.0,    1e-300, 4.9406564584124654e-324,
                                     1.7976931348623157e308, -2.5e-7, 123456789.125};
#define NHARD (sizeof hard_values / sizeof hard_values[0])

/* header, NHARD samples (the last one invalid), a command, a status: 2 + NHARD records + end */
static void write_small_log(const char *path) {
  hil_log_header h;
  make_header(&h);
  char err[256];
  hil_log_writer *w = hil_log_open(path, &h, err, sizeof err);
  assert_non_null(w);
  sens_sensor s;
  make_sensor(&s, "enc_shoulder");
  for (size_t i = 0; i < NHARD; i++) {
    sens_sample smp = {0};
    smp.t = 0.002 * (double)i;
    smp.t_truth = smp.t - 0.001;
    smp.seq = i;
    smp.valid = i + 1 < NHARD;
    smp.meas[0] = (double)i;
    smp.meas[1] = hard_values[i];
    smp.truth[0] = (double)i - 1;
    smp.truth[1] = -hard_values[i];
    assert_int_equal(hil_log_write_sample(w, &s, &smp, 1e-3 * (double)i + 1.0 / 7.0), 0);
  }
  assert_int_equal(
      hil_log_write_command(w, 0.0155, 0.25, "zmq", h.actuator[1], 1.0 / 3.0, "clamped"), 0);
  assert_int_equal(hil_log_write_status(w, 0.016, 0.3, "{\"steps\":16,\"overruns\":0}"), 0);
  assert_int_equal(hil_log_records(w), (long long)NHARD + 3);
  assert_int_equal(hil_log_close(&w), 0);
  assert_null(w);
}

/* the small log written as name in the suite folder (its path into path), and its bytes (n of
 * them; the caller frees them) */
static char *small_log(char *path, size_t path_sz, const char *name, size_t *n) {
  ts_tmp_path(path, path_sz, name);
  write_small_log(path);
  return read_all(path, n);
}

/* reads records until the end or an error; returns the count of good records and the code */
static int read_records(hil_log_reader *r, long long *good, hil_log_record *last_err_rec,
                        char *err, size_t err_sz) {
  hil_log_record rec;
  *good = 0;
  for (;;) {
    const int k = hil_log_next(r, &rec, err, err_sz);
    if (k <= 0) {
      (void)last_err_rec;
      return k;
    }
    (*good)++;
  }
}

/* --- CRC ---------------------------------------------------------------------------------------- */

static void test_crc32_check_value(void **state) {
  (void)state;
  /* the CRC-32/ISO-HDLC check value (zlib's crc32) */
  assert_int_equal(hil_crc32(0, "123456789", 9), 0xCBF43926u);
  assert_int_equal(hil_crc32(0, "", 0), 0u);
  /* in two pieces: the same */
  assert_int_equal(hil_crc32(hil_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
  /* "The quick brown fox jumps over the lazy dog": 0x414FA339 (published zlib value) */
  const char *fox = "The quick brown fox jumps over the lazy dog";
  assert_int_equal(hil_crc32(0, fox, strlen(fox)), 0x414FA339u);
}

/* --- round trip ---------------------------------------------------------------------------------- */

static void test_round_trip_every_record_type(void **state) {
  (void)state;
  char path[300], err[512];
  ts_tmp_path(path, sizeof path, "small.ndjson");
  write_small_log(path);
  hil_log_reader *r = hil_log_reader_open(path, err, sizeof err);
  assert_non_null(r);
  hil_log_header want;
  make_header(&want);
  const hil_log_header *h = hil_log_reader_header(r);
  assert_string_equal(h->robot, want.robot);
  assert_true(h->rate_hz == want.rate_hz);
  assert_true(h->seed == want.seed);
  assert_int_equal(h->nsensors, 1);
  assert_string_equal(h->sensor[0].name, "enc_shoulder");
  assert_string_equal(h->sensor[0].type, "encoder");
  assert_int_equal(h->sensor[0].nch, 2);
  assert_string_equal(h->sensor[0].channel[1], "angle");
  assert_string_equal(h->sensor[0].unit[0], "count");
  assert_true(h->sensor[0].rate_hz == 500);
  assert_int_equal(h->nactuators, 2);
  assert_string_equal(h->actuator[1], "odd \"name\\");
  assert_string_equal(h->started, want.started);

  hil_log_record rec;
  long long offset = 0;
  for (size_t i = 0; i < NHARD; i++) {
    assert_int_equal(hil_log_next(r, &rec, err, sizeof err), 1);
    assert_int_equal(rec.type, HIL_LOG_SAMPLE);
    assert_int_equal(rec.index, (long long)i + 2);
    assert_true(rec.offset > offset);
    offset = rec.offset;
    assert_string_equal(rec.sensor, "enc_shoulder");
    assert_string_equal(rec.topic, "enc/enc_shoulder");
    assert_true(rec.seq == i);
    assert_true(ts_same_bits(rec.t, 0.002 * (double)i));
    assert_true(ts_same_bits(rec.t_truth, 0.002 * (double)i - 0.001));
    assert_true(ts_same_bits(rec.wall, 1e-3 * (double)i + 1.0 / 7.0));
    assert_int_equal(rec.nch, 2);
    assert_string_equal(rec.channel[0], "counts");
    assert_true(ts_same_bits(rec.truth[1], -hard_values[i]));
    if (i + 1 < NHARD) {
      assert_true(rec.valid);
      assert_true(ts_same_bits(rec.value[0], (double)i));
      assert_true(ts_same_bits(rec.value[1], hard_values[i]));
    } else { /* invalid: values are null, read back as NaN */
      assert_false(rec.valid);
      assert_true(isnan(rec.value[0]) && isnan(rec.value[1]));
    }
  }
  assert_int_equal(hil_log_next(r, &rec, err, sizeof err), 1);
  assert_int_equal(rec.type, HIL_LOG_COMMAND);
  assert_string_equal(rec.source, "zmq");
  assert_string_equal(rec.actuator, "odd \"name\\");
  assert_true(ts_same_bits(rec.command, 1.0 / 3.0));
  assert_string_equal(rec.result, "clamped");
  assert_true(ts_same_bits(rec.t, 0.0155) && ts_same_bits(rec.wall, 0.25));

  assert_int_equal(hil_log_next(r, &rec, err, sizeof err), 1);
  assert_int_equal(rec.type, HIL_LOG_STATUS);
  cJSON *j = cJSON_Parse(rec.json);
  assert_non_null(j);
  assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"), "steps")->valueint, 16);
  cJSON_Delete(j);

  assert_false(hil_log_reader_saw_end(r));
  assert_int_equal(hil_log_next(r, &rec, err, sizeof err), 1);
  assert_int_equal(rec.type, HIL_LOG_END);
  assert_true(hil_log_reader_saw_end(r));
  assert_int_equal(hil_log_next(r, &rec, err, sizeof err), 0);
  assert_int_equal(hil_log_next(r, &rec, err, sizeof err), 0);
  hil_log_reader_close(&r);
  assert_null(r);
}

/* every line is "cccccccc {json}\n" with the CRC of the JSON text */
static void test_line_format(void **state) {
  (void)state;
  char path[300];
  size_t n;
  char *buf = small_log(path, sizeof path, "format.ndjson", &n);
  assert_true(n > 0 && buf[n - 1] == '\n');
  int lines = 0;
  for (char *line = buf; *line; lines++) {
    char *nl = strchr(line, '\n');
    assert_non_null(nl);
    *nl = '\0';
    char crc[9];
    memcpy(crc, line, 8);
    crc[8] = '\0';
    char expect[9];
    snprintf(expect, sizeof expect, "%08x", (unsigned)hil_crc32(0, line + 9, strlen(line + 9)));
    assert_string_equal(crc, expect);
    assert_int_equal(line[8], ' ');
    assert_int_equal(line[9], '{');
    line = nl + 1;
  }
  assert_int_equal(lines, (int)NHARD + 4);
  free(buf);
}

/* --- damage ---------------------------------------------------------------------------------- */

/* Flips one bit of every byte in turn: the reader must report the damaged record (its line
 * number) and the byte offset of its line, after returning every earlier record intact.
 * CRC-32 detects every error confined to 32 consecutive bits, so no single-byte change can pass:
 * a check that failed to detect one would fail this test. */
static void test_corruption_at_every_byte(void **state) {
  (void)state;
  char path[300], bad[300], err[512];
  ts_tmp_path(bad, sizeof bad, "bad.ndjson");
  size_t n;
  char *clean = small_log(path, sizeof path, "clean.ndjson", &n);
  char *copy = malloc(n);
  assert_non_null(copy);
  for (size_t p = 0; p < n; p++) {
    /* the line holding byte p: its number and first byte */
    long long line = 1, start = 0;
    for (size_t i = 0; i < p; i++) {
      if (clean[i] == '\n') {
        line++;
        start = (long long)i + 1;
      }
    }
    memcpy(copy, clean, n);
    copy[p] ^= 0x01;
    ts_write_bytes(bad, copy, n);
    char want[64];
    snprintf(want, sizeof want, "record %lld at byte %lld:", line, start);
    hil_log_reader *r = hil_log_reader_open(bad, err, sizeof err);
    if (line == 1) {
      assert_null(r);
      assert_non_null(strstr(err, want));
      assert_non_null(strstr(err, bad));
      continue;
    }
    assert_non_null(r);
    hil_log_record rec;
    long long good = 0;
    int k;
    while ((k = hil_log_next(r, &rec, err, sizeof err)) == 1) {
      assert_int_equal(rec.index, good + 2);
      good++;
    }
    if (k == 0) {
      fprintf(stderr, "byte %zu (line %lld) flipped: not detected\n", p, line);
    }
    assert_true(k < 0);
    assert_int_equal(good, line - 2); /* every record before the damaged one */
    if (!strstr(err, want)) {
      fprintf(stderr, "byte %zu: expected '%s' in '%s'\n", p, want, err);
    }
    assert_non_null(strstr(err, want));
    /* the reader goes on after a damaged record (skip it and continue), up to the end */
    int guard = 0;
    while (k != 0 && k != HIL_LOG_ETRUNC && guard++ < 100) {
      k = hil_log_next(r, &rec, err, sizeof err);
    }
    assert_true(guard < 100);
    hil_log_reader_close(&r);
  }
  free(copy);
  free(clean);
}

/* A log cut anywhere inside its last record (a writer killed mid-line): every complete record is
 * returned, then the cut one is reported as truncated; cut at a line boundary, no error, and no
 * end record tells that the run did not close the log. */
static void test_truncation_at_every_length(void **state) {
  (void)state;
  char path[300], cut[300], err[512];
  ts_tmp_path(cut, sizeof cut, "cut.ndjson");
  size_t n;
  char *buf = small_log(path, sizeof path, "full.ndjson", &n);
  /* the last two lines: the status record, then the end record */
  size_t last = n - 1;
  while (last > 0 && buf[last - 1] != '\n') {
    last--;
  }
  size_t prev = last - 1;
  while (prev > 0 && buf[prev - 1] != '\n') {
    prev--;
  }
  for (size_t len = prev; len < n; len++) {
    ts_write_bytes(cut, buf, len);
    hil_log_reader *r = hil_log_reader_open(cut, err, sizeof err);
    assert_non_null(r);
    long long good;
    const int k = read_records(r, &good, NULL, err, sizeof err);
    const long long before = (long long)NHARD + 1; /* samples and the command */
    if (len == prev || len == last) {
      assert_int_equal(k, 0);
      assert_int_equal(good, before + (len == last));
      assert_false(hil_log_reader_saw_end(r));
    } else {
      char want[96];
      const int in_last = len > last;
      snprintf(want, sizeof want, "record %lld at byte %zu: truncated record",
               before + 2 + in_last, in_last ? last : prev);
      assert_int_equal(k, HIL_LOG_ETRUNC);
      assert_int_equal(good, before + in_last);
      assert_non_null(strstr(err, want));
    }
    hil_log_reader_close(&r);
  }
  free(buf);
}

/* A child writes and flushes every 10 records until it is killed with SIGKILL: the log reads
 * back with every record intact up to the last flush (at most a truncated last line) and without
 * an end record. */
static void test_killed_writer(void **state) {
  (void)state;
  char path[300], err[512];
  ts_tmp_path(path, sizeof path, "killed.ndjson");
  int ready[2];
  assert_int_equal(pipe(ready), 0);
  const pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    hil_log_header h;
    make_header(&h);
    hil_log_writer *w = hil_log_open(path, &h, err, sizeof err);
    sens_sensor s;
    make_sensor(&s, "enc_shoulder");
    for (uint64_t i = 0;; i++) {
      sens_sample smp = {.t = 1e-3 * (double)i, .seq = i, .valid = 1};
      smp.meas[1] = 1.0 / (double)(i + 1);
      hil_log_write_sample(w, &s, &smp, 1e-3 * (double)i);
      if (i % 10 == 9) {
        hil_log_flush(w);
      }
      if (i == 1000 && write(ready[1], "x", 1) != 1) {
        _exit(1);
      }
    }
  }
  char c;
  assert_int_equal(read(ready[0], &c, 1), 1);
  /* killed while it writes on: once the log has grown past what it held at record 1000 */
  struct stat at_1000, now;
  assert_int_equal(stat(path, &at_1000), 0);
  TS_WAIT_FOR(stat(path, &now) == 0 && now.st_size > at_1000.st_size, "more records written");
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  close(ready[0]);
  close(ready[1]);
  hil_log_reader *r = hil_log_reader_open(path, err, sizeof err);
  assert_non_null(r);
  hil_log_record rec;
  long long good = 0;
  int k;
  while ((k = hil_log_next(r, &rec, err, sizeof err)) == 1) {
    assert_true(rec.seq == (uint64_t)good);
    good++;
  }
  assert_true(k == 0 || k == HIL_LOG_ETRUNC);
  assert_true(good >= 1000);
  assert_false(hil_log_reader_saw_end(r));
  hil_log_reader_close(&r);
}

static void test_not_a_log(void **state) {
  (void)state;
  char path[300], err[512];
  ts_tmp_path(path, sizeof path, "notalog.ndjson");
  ts_write_bytes(path, "", 0);
  assert_null(hil_log_reader_open(path, err, sizeof err));
  assert_non_null(strstr(err, "record 1 at byte 0: empty file"));
  /* a good checksum around the wrong first record */
  const char *text = "{\"type\":\"sample\"}";
  char line[64];
  snprintf(line, sizeof line, "%08x %s\n", (unsigned)hil_crc32(0, text, strlen(text)), text);
  ts_write_bytes(path, line, strlen(line));
  assert_null(hil_log_reader_open(path, err, sizeof err));
  assert_non_null(strstr(err, "record 1 at byte 0: header: bad or missing key type"));
  /* a newer version */
  const char *v3 = "{\"type\":\"header\",\"format\":\"achilles-log\",\"version\":3}";
  snprintf(line, sizeof line, "%08x %s\n", (unsigned)hil_crc32(0, v3, strlen(v3)), v3);
  ts_write_bytes(path, line, strlen(line));
  assert_null(hil_log_reader_open(path, err, sizeof err));
  assert_non_null(strstr(err, "version"));
  ts_tmp_path(path, sizeof path, "missing.ndjson");
  assert_null(hil_log_reader_open(path, err, sizeof err));
  assert_non_null(strstr(err, "No such file"));
}

/* the header from a real model and sensor set: names, channels and units */
static void test_header_from_model(void **state) {
  (void)state;
  char err[512];
  sim_model *m = sim_model_load_file(ACHILLES_SOURCE_DIR "/configs/club_arm.json", err, sizeof err);
  assert_non_null(m);
  sens_set *set = NULL;
  assert_int_equal(sens_set_load_robot(&set, m, ACHILLES_SOURCE_DIR "/configs/club_arm.json", err,
                                       sizeof err),
                   0);
  hil_log_header h;
  assert_int_equal(hil_log_header_init(&h, m, set), 0);
  assert_string_equal(h.robot, "club_arm");
  assert_true(fabs(h.rate_hz - 1000) < 1e-9);
  assert_int_equal(h.nsensors, sens_set_count(set));
  assert_int_equal(h.nactuators, m->nu);
  for (int i = 0; i < h.nsensors; i++) {
    const sens_sensor *s = sens_set_sensor(set, i);
    assert_string_equal(h.sensor[i].name, s->name);
    assert_int_equal(h.sensor[i].nch, s->nch);
    for (int c = 0; c < s->nch; c++) {
      assert_string_equal(h.sensor[i].channel[c], s->channel[c]);
      assert_true(h.sensor[i].unit[c][0] != '\0');
    }
  }
  assert_int_equal((int)strlen(h.started), 20); /* 2026-11-29T21:51:18Z */
  /* and it goes through the writer and back */
  char path[300];
  ts_tmp_path(path, sizeof path, "club.ndjson");
  hil_log_writer *w = hil_log_open(path, &h, err, sizeof err);
  assert_non_null(w);
  assert_int_equal(hil_log_close(&w), 0);
  hil_log_reader *r = hil_log_reader_open(path, err, sizeof err);
  assert_non_null(r);
  assert_int_equal(hil_log_reader_header(r)->nsensors, h.nsensors);
  assert_string_equal(hil_log_reader_header(r)->sensor[h.nsensors - 1].unit[0],
                      h.sensor[h.nsensors - 1].unit[0]);
  hil_log_reader_close(&r);
  sens_set_free(&set);
  sim_model_free(m);
}

/* --- series: log and CSV ---------------------------------------------------------------------- */

static void test_series_from_log(void **state) {
  (void)state;
  char path[300], err[512];
  ts_tmp_path(path, sizeof path, "series.ndjson");
  write_small_log(path);
  hil_series s;
  assert_int_equal(hil_series_load(&s, path, "enc_shoulder", "angle", err, sizeof err), 0);
  /* the invalid last sample is left out; NaN-free values bit for bit; truth present */
  assert_int_equal(s.n, NHARD - 1);
  for (size_t i = 0; i < s.n; i++) {
    assert_true(ts_same_bits(s.v[i], hard_values[i]));
    assert_true(ts_same_bits(s.truth[i], -hard_values[i]));
    assert_true(ts_same_bits(s.t[i], 0.002 * (double)i));
  }
  assert_string_equal(s.unit, "rad");
  assert_string_equal(s.type, "encoder");
  assert_int_equal(s.skipped, 0);
  hil_series_free(&s);
  assert_int_equal(hil_series_load(&s, path, "enc_shoulder", "velocity", err, sizeof err),
                   HIL_LOG_ENOTFOUND);
  assert_non_null(strstr(err, "sensor \"enc_shoulder\" has no channel \"velocity\" (channels: counts, angle)"));
  assert_int_equal(hil_series_load(&s, path, "enc_elbow", "angle", err, sizeof err),
                   HIL_LOG_ENOTFOUND);
  assert_non_null(strstr(err, "no sensor \"enc_elbow\" (sensors: enc_shoulder)"));
  /* a damaged record is skipped, counted and named */
  size_t n;
  char *buf = read_all(path, &n);
  char *third = strchr(strchr(buf, '\n') + 1, '\n') + 1; /* record 3 */
  third[20] ^= 0x01;
  ts_write_bytes(path, buf, n);
  free(buf);
  assert_int_equal(hil_series_load(&s, path, "enc_shoulder", "angle", err, sizeof err), 0);
  assert_int_equal(s.n, NHARD - 2);
  assert_int_equal(s.skipped, 1);
  assert_non_null(strstr(s.warning, "record 3 at byte"));
  assert_non_null(strstr(s.warning, "CRC mismatch"));
  hil_series_free(&s);
}

static void test_csv_import(void **state) {
  (void)state;
  char path[300], err[512];
  ts_tmp_path(path, sizeof path, "robot.csv");
  /* blank = missing; CRLF endings; spaces around cells; the .true column is the truth */
  const char *csv = "time, enc.angle ,enc.angle.true,imu.gyro.x\r\n"
                    "0,0.5,0.49,\r\n"
                    "0.001,,0.5,1\r\n"
                    "0.002, -0.25 ,,2\r\n"
                    "\r\n"
                    "0.003,1e-3,0.001,3\r\n";
  ts_write_bytes(path, csv, strlen(csv));
  hil_series s;
  assert_int_equal(hil_series_load(&s, path, "enc", "angle", err, sizeof err), 0);
  assert_int_equal(s.n, 3);
  assert_true(s.t[0] == 0 && s.t[1] == 0.002 && s.t[2] == 0.003);
  assert_true(s.v[0] == 0.5 && s.v[1] == -0.25 && s.v[2] == 1e-3);
  assert_non_null(s.truth);
  assert_true(s.truth[0] == 0.49 && isnan(s.truth[1]) && s.truth[2] == 0.001);
  assert_string_equal(s.unit, "");
  hil_series_free(&s);
  /* an IMU channel with a dot inside */
  assert_int_equal(hil_series_load(&s, path, "imu", "gyro.x", err, sizeof err), 0);
  assert_int_equal(s.n, 3);
  assert_null(s.truth);
  hil_series_free(&s);
  /* the layout of `achilles sensors --csv` */
  const char *sens = "time,enc.seq,enc.angle.true,enc.angle.meas\n0,0,0.1,0.11\n0.001,1,0.2,\n";
  ts_write_bytes(path, sens, strlen(sens));
  assert_int_equal(hil_series_load(&s, path, "enc", "angle", err, sizeof err), 0);
  assert_int_equal(s.n, 1);
  assert_true(s.v[0] == 0.11 && s.truth[0] == 0.1);
  hil_series_free(&s);
}

typedef struct bad_csv {
  const char *text, *message;
  int code;
} bad_csv;

static void test_csv_errors(void **state) {
  (void)state;
  static const bad_csv cases[] = {
      {"t,enc.angle\n0,1\n", "line 1: the first column must be \"time\" (got \"t\")",
       HIL_LOG_EFORMAT},
      {"time,enc.angle,enc.angle\n0,1,2\n", "line 1: column \"enc.angle\" appears twice",
       HIL_LOG_EFORMAT},
      {"time,,enc.angle\n0,1,2\n", "line 1: column 2 has no name", HIL_LOG_EFORMAT},
      {"time,enc.counts\n0,1\n", "line 1: no column \"enc.angle\"", HIL_LOG_ENOTFOUND},
      {"time,enc.angle\n0,1\n0.001,2,3\n", "line 3: expected 2 fields as in the header, got 3",
       HIL_LOG_EFORMAT},
      {"time,enc.angle\n0,1\n0.001,abc\n", "line 3, column 2: expected a number or a blank (got \"abc\")",
       HIL_LOG_EFORMAT},
      {"time,enc.angle\n,1\n", "line 2, column 1: expected a number (time may not be blank)",
       HIL_LOG_EFORMAT},
      {"time,enc.angle\n0,nan\n", "line 2, column 2: expected a number", HIL_LOG_EFORMAT},
      {"time,enc.angle\n0,1\n0.002,2\n0.002,3\n0.001,4\n",
       "line 5: time 0.001 goes back (the row before has 0.002)", HIL_LOG_EFORMAT},
      {"", "empty file", HIL_LOG_EFORMAT},
      {"time,enc\xff.angle,enc.angle\n0,1,2\n", "line 1: column 2: name is not valid UTF-8 (at byte 3)",
       HIL_LOG_EFORMAT},
  };
  char path[300], err[512];
  ts_tmp_path(path, sizeof path, "bad.csv");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ts_write_bytes(path, cases[i].text, strlen(cases[i].text));
    hil_series s;
    err[0] = '\0';
    assert_int_equal(hil_series_load(&s, path, "enc", "angle", err, sizeof err), cases[i].code);
    if (!strstr(err, cases[i].message)) {
      fprintf(stderr, "case %zu: expected '%s' in '%s'\n", i, cases[i].message, err);
    }
    assert_non_null(strstr(err, cases[i].message));
    assert_non_null(strstr(err, path));
    assert_null(s.t);
  }
}

/* The small log with a CRC-valid record of the given JSON text inserted as record 2; returns
 * the record's byte offset. */
static size_t small_log_with_record_2(const char *path, const char *text) {
  write_small_log(path);
  size_t n;
  char *buf = read_all(path, &n);
  char line[512];
  const int len = snprintf(line, sizeof line, "%08x %s\n",
                           (unsigned)hil_crc32(0, text, strlen(text)), text);
  char *second = strchr(buf, '\n') + 1;
  const size_t head = (size_t)(second - buf);
  char *out = malloc(n + (size_t)len);
  assert_non_null(out);
  memcpy(out, buf, head);
  memcpy(out + head, line, (size_t)len);
  memcpy(out + head + (size_t)len, second, n - head);
  ts_write_bytes(path, out, n + (size_t)len);
  free(out);
  free(buf);
  return head;
}

/* issue 11, item 5: a sample record whose t is null (CRC-valid) is damage named by its record;
 * readers skip it as any damaged record (noise-fit counts it) */
static void test_sample_without_time(void **state) {
  (void)state;
  char path[300], err[512];
  ts_tmp_path(path, sizeof path, "null_t.ndjson");
  const char *text = "{\"type\":\"sample\",\"sensor\":\"enc_shoulder\","
                     "\"topic\":\"enc/enc_shoulder\","
                     "\"seq\":99,\"t\":null,\"t_truth\":0,\"wall\":0,\"valid\":true,"
                     "\"values\":{\"counts\":1,\"angle\":2}}";
  const size_t head = small_log_with_record_2(path, text);
  hil_log_reader *r = hil_log_reader_open(path, err, sizeof err);
  assert_non_null(r);
  hil_log_record *rec = malloc(sizeof *rec);
  assert_non_null(rec);
  char want[400];
  snprintf(want, sizeof want, "%s: record 2 at byte %zu: t is not a number", path, head);
  assert_int_equal(hil_log_next(r, rec, err, sizeof err), HIL_LOG_EFORMAT);
  assert_non_null(strstr(err, want));
  assert_int_equal(hil_log_next(r, rec, err, sizeof err), 1); /* and it goes on */
  assert_int_equal(rec->index, 3);
  free(rec);
  hil_log_reader_close(&r);
  hil_series s;
  assert_int_equal(hil_series_load(&s, path, "enc_shoulder", "angle", err, sizeof err), 0);
  assert_int_equal(s.skipped, 1);
  assert_non_null(strstr(s.warning, "t is not a number"));
  hil_series_free(&s);
}

/* issue 11, item 10: a CRC-valid record that is not UTF-8 (a name from a broken writer) would
 * reach JSON that Python cannot decode: damage named by its record, and the reader goes on */
static void test_record_not_utf8(void **state) {
  (void)state;
  char path[300], err[512];
  ts_tmp_path(path, sizeof path, "not_utf8.ndjson");
  const char *text = "{\"type\":\"sample\",\"sensor\":\"enc_\xc3\x28\","
                     "\"topic\":\"enc/enc_shoulder\",\"seq\":99,\"t\":0,\"t_truth\":0,"
                     "\"wall\":0,\"valid\":true,\"values\":{\"counts\":1,\"angle\":2}}";
  const size_t head = small_log_with_record_2(path, text);
  hil_log_reader *r = hil_log_reader_open(path, err, sizeof err);
  assert_non_null(r);
  hil_log_record *rec = malloc(sizeof *rec);
  assert_non_null(rec);
  char want[400];
  snprintf(want, sizeof want, "%s: record 2 at byte %zu: the checksum matches but the text is "
           "not valid UTF-8 (byte 31 of the JSON text)", path, head);
  assert_int_equal(hil_log_next(r, rec, err, sizeof err), HIL_LOG_EFORMAT);
  if (!strstr(err, want)) {
    fprintf(stderr, "expected '%s' in '%s'\n", want, err);
  }
  assert_non_null(strstr(err, want));
  assert_int_equal(hil_log_next(r, rec, err, sizeof err), 1);
  assert_int_equal(rec->index, 3);
  free(rec);
  hil_log_reader_close(&r);
}

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_record_not_utf8, test_crc32_check_value,
                                            test_round_trip_every_record_type, test_line_format,
                                            test_corruption_at_every_byte,
                                            test_truncation_at_every_length, test_killed_writer,
                                            test_not_a_log, test_header_from_model,
                                            test_series_from_log, test_csv_import, test_csv_errors,
                                            test_sample_without_time)
