/* tests/hil/replay/test_replay_load.c: what `achilles replay` loads from a log or a CSV file
 * (hil_replay_load): damage named by its record and byte, what came before it still played,
 * truncated tails, CSV columns and their errors, windows that absorb accumulated rounding, times
 * checked at load, and incomplete logs. The test log is replay_fixture.h's. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay_fixture.h"
#include "support/skip.h"
#include "support/tmp.h"

static void flip_byte(const char *path, long at) {
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  fseek(f, at, SEEK_SET);
  const int c = fgetc(f);
  fseek(f, at, SEEK_SET);
  fputc(c ^ 0x01, f);
  fclose(f);
}

/* samples of steps [0, k) of the test log, in its record order: (record -> sample count) */
static int samples_before_record(int record) {
  int rec = 2, n = 0; /* record 1 is the header */
  for (long k = 0;; k++) {
    for (int i = 0; i < NSENS; i++) {
      sens_sample smp;
      if (sample_of(i, k, &smp)) {
        if (rec++ == record) {
          return n;
        }
        n++;
      }
    }
    if (k % 10 == 0 && rec++ == record) {
      return n;
    }
  }
}

static void test_damaged_record(void **state) {
  (void)state;
  char path[128];
  write_log_as(path, sizeof path, "damaged.log", 50);
  const int k = 40;
  const long at = ts_line_offset(path, k);
  flip_byte(path, at + 30); /* inside the JSON: the CRC no longer matches */
  hil_replay_select sel = {0};
  hil_replay_schedule s;
  load(&s, path, &sel);
  char want[256];
  snprintf(want, sizeof want, "damaged.log: record %d at byte %ld: CRC mismatch", k, at);
  print_message("%s\n", s.damage);
  assert_non_null(strstr(s.damage, want));
  assert_true(s.stopped);
  const int before = samples_before_record(k);
  assert_int_equal(s.n, before);
  /* what came before it still replays, all of it */
  hil_replay_options o = default_options();
  o.rate = 4;
  hil_replay_report rep;
  replay_zmq(&s, &o, &rep);
  assert_int_equal(rx->n, before);
  assert_int_equal(rep.played, before);
  hil_replay_free(&s);

  /* --skip-damaged: everything but that record */
  sel.skip_damaged = 1;
  load(&s, path, &sel);
  assert_false(s.stopped);
  assert_int_equal(s.damaged, 1);
  assert_int_equal(s.n, 50 + 25 + 13 - 1);
  hil_replay_free(&s);
}

static void test_truncated_tail(void **state) {
  (void)state;
  char path[128];
  write_log_as(path, sizeof path, "truncated.log", 30);
  /* cut the file in the middle of the last sample record (the end record goes too) */
  const int last_sample = ts_file_lines(path) - 1; /* the end record is the last line */
  const long at = ts_line_offset(path, last_sample);
  assert_int_equal(truncate(path, at + 25), 0);
  hil_replay_select sel = {0};
  hil_replay_schedule s;
  load(&s, path, &sel);
  char want[256];
  snprintf(want, sizeof want, "truncated.log: record %d at byte %ld: truncated record",
           last_sample, at);
  print_message("%s\n", s.damage);
  assert_non_null(strstr(s.damage, want));
  assert_int_equal(s.n, 30 + 15 + 8 - 1);
  hil_replay_options o = default_options();
  o.rate = 4;
  hil_replay_report rep;
  replay_zmq(&s, &o, &rep);
  assert_int_equal(rx->n, 30 + 15 + 8 - 1);
  hil_replay_free(&s);
}

static void test_csv(void **state) {
  (void)state;
  char path[128];
  ts_tmp_path(path, sizeof path, "import.csv");
  ts_write_file(path, "time,enc.seq,enc.counts.true,enc.counts.meas,enc.angle.true,enc.angle.meas,"
                      "pot.volts\n"
                      "0,0,10,11,0.5,0.25,1.5\n"
                      "0.001,1,12,,0.75,,\n"      /* enc not valid; pot has no sample */
                      "0.002,,,,,,2.5\n"          /* only pot */
                      "0.003,3,14,15,1,1.125,x\n" /* damaged: "x" */
                      "0.004,4,16,17,1.5,1.25,3\n");
  hil_replay_select sel = {0};
  hil_replay_schedule s;
  load(&s, path, &sel);
  assert_true(s.is_csv);
  assert_int_equal(s.nsensors, 2);
  assert_string_equal(s.sensor[0].topic, "enc/enc");
  assert_string_equal(s.sensor[0].type, "encoder");
  assert_string_equal(s.sensor[0].unit[1], "rad");
  assert_string_equal(s.sensor[1].topic, "csv/pot");
  assert_non_null(strstr(s.damage, "import.csv: line 5 at byte "));
  assert_non_null(strstr(s.damage, "column 7"));
  assert_int_equal(s.n, 4); /* enc t=0, pot t=0, enc t=0.001, pot t=0.002 */
  assert_true(fabs(s.rate_hz - 1000) < 1e-6);
  hil_replay_options o = default_options();
  o.truth = 1;
  hil_replay_report rep;
  replay_zmq(&s, &o, &rep);
  assert_int_equal(rx->n, 2 + 1 + 2 + 1);
  assert_string_equal(rx->topic[0], "enc/enc");
  assert_string_equal(rx->body[0],
                      "{\"v\":1,\"sensor\":\"enc\",\"type\":\"encoder\",\"truth\":false,\"seq\":0,"
                      "\"t\":0,\"t_truth\":0,\"valid\":true,\"values\":{\"counts\":11,"
                      "\"angle\":0.25},\"units\":{\"counts\":\"count\",\"angle\":\"rad\"}}");
  assert_string_equal(rx->topic[1], "truth/enc/enc");
  assert_string_equal(rx->topic[2], "csv/pot");
  assert_string_equal(rx->body[2],
                      "{\"v\":1,\"sensor\":\"pot\",\"type\":\"csv\",\"truth\":false,\"seq\":0,"
                      "\"t\":0,\"t_truth\":0,\"valid\":true,\"values\":{\"volts\":1.5},"
                      "\"units\":{\"volts\":\"\"}}");
  assert_non_null(strstr(rx->body[3], "\"seq\":1,\"t\":0.001,\"t_truth\":0.001,\"valid\":false,"
                                      "\"values\":{\"counts\":null,\"angle\":null}"));
  assert_non_null(strstr(rx->body[5], "\"sensor\":\"pot\",\"type\":\"csv\",\"truth\":false,"
                                      "\"seq\":1,\"t\":0.002"));
  hil_replay_free(&s);

  /* a touch sensor's columns: its live topic and units */
  ts_write_file(path, "time,pad.normal,pad.force.z\n0,19.62,19.62\n0.001,19.6,19.6\n");
  load(&s, path, &sel);
  assert_int_equal(s.nsensors, 1);
  assert_string_equal(s.sensor[0].topic, "tch/pad");
  assert_string_equal(s.sensor[0].type, "touch");
  assert_string_equal(s.sensor[0].unit[0], "N");
  assert_string_equal(s.sensor[0].unit[1], "N");
  hil_replay_free(&s);

  /* a column given twice is an error of the header, not a damaged row */
  ts_write_file(path, "time,enc.counts,enc.angle,enc.counts.meas\n0,1,2,3\n");
  char err[512];
  assert_int_equal(hil_replay_load(&s, path, &sel, err, sizeof err), HIL_LOG_EFORMAT);
  assert_non_null(strstr(err, "import.csv: line 1: columns 2 and 4 are the same: enc.counts"));

  /* a name that is not UTF-8 would reach the JSON messages: refused with its column */
  ts_write_file(path, "time,enc.counts,pot\xe2\x82.v\n0,1,2\n");
  assert_int_equal(hil_replay_load(&s, path, &sel, err, sizeof err), HIL_LOG_EFORMAT);
  assert_non_null(strstr(err, "import.csv: line 1: column 3: name is not valid UTF-8 (at byte 3)"));
}

/* Issue 18, item 1: simulation time accumulates rounding (t += 0.001 a thousand times gives
 * 1.0000000000000007), so --from 0.5 --to 1 must still hold the sample at "1.000": both ends
 * are included within 1/1000 of the physics period (1 µs here), and no further. */
static void test_window_tolerance(void **state) {
  (void)state;
  char path[128];
  hil_log_writer *w = custom_log(path, sizeof path, "accumulated.log", 1000);
  double t = 0;
  for (int k = 0; k <= 1200; k++, t += 0.001) {
    put(w, 0, t, t, (uint64_t)k);
  }
  assert_int_equal(hil_log_close(&w), 0);
  hil_replay_select sel = {.has_from = 1, .has_to = 1, .from = 0.5, .to = 1.0};
  hil_replay_schedule s;
  load(&s, path, &sel);
  print_message("t of the last sample in the window: %.17g\n", s.t_last);
  assert_true(s.t_last > 1.0); /* the rounding the window must absorb */
  assert_int_equal(s.n, 501);  /* k = 500 .. 1000 */
  assert_int_equal(s.entry[0].seq, 500);
  assert_int_equal(s.entry[500].seq, 1000);
  assert_true(fabs(s.window_tol - 1e-6) < 1e-15);
  hil_replay_free(&s);
  /* 2 µs short of the next sample is not "within rounding": k = 1001 stays out */
  sel.to = 1.001 - 2e-6;
  load(&s, path, &sel);
  assert_int_equal(s.n, 501);
  hil_replay_free(&s);
  /* the same for a CSV: its tolerance is 1/1000 of its smallest time step */
  ts_tmp_path(path, sizeof path, "accumulated.csv");
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "time,enc.counts\n");
  t = 0;
  for (int k = 0; k <= 1200; k++, t += 0.001) {
    fprintf(f, "%.17g,%d\n", t, k);
  }
  fclose(f);
  sel.to = 1.0;
  load(&s, path, &sel);
  assert_int_equal(s.n, 501);
  hil_replay_free(&s);
}

/* Issue 11, item 5: times are checked at load. A CRC-valid sample at t = 1e9 s is damage named by
 * its record (the player would wait 31 years for it); --skip-damaged leaves out that record only.
 * A t of null, and a t more than one physics period earlier than the latest, are damage too; a
 * t earlier by less (a sensor on its own clock) is not. */
static void test_time_checks_at_load(void **state) {
  (void)state;
  char path[128];
  hil_log_writer *w = custom_log(path, sizeof path, "times.log", 1000);
  for (int k = 0; k < 30; k++) {
    const double t = 0.001 * k;
    put(w, 0, k == 12 ? 1e9 : k == 20 ? NAN : k == 25 ? t - 0.0021 : t, t, (uint64_t)k);
    if (k == 5) {
      put(w, 1, t - 0.0009, t - 0.0009, 0); /* less than one period back: fine */
    }
  }
  assert_int_equal(hil_log_close(&w), 0);
  hil_replay_select sel = {0};
  hil_replay_schedule s;
  load(&s, path, &sel);
  char want[256];
  /* record 1 is the header; k = 0..5 are records 2..7, the imu record 8, k = 12 record 15 */
  snprintf(want, sizeof want, "times.log: record 15 at byte %ld: t jumps from 0.011 s to 1e+09 s",
           ts_line_offset(path, 15));
  print_message("%s\n", s.damage);
  assert_non_null(strstr(s.damage, want));
  assert_non_null(strstr(s.damage, "longer than the 10 s limit"));
  assert_true(s.stopped);
  assert_int_equal(s.n, 13); /* k = 0..11 and the imu sample */
  hil_replay_free(&s);
  sel.skip_damaged = 1;
  load(&s, path, &sel);
  assert_int_equal(s.damaged, 3);
  assert_int_equal(s.n, 31 - 3);
  assert_true(s.t_last < 0.03);
  hil_replay_free(&s);
  /* the null t is named by the log reader (noise-fit meets it too) */
  char err[512];
  hil_log_reader *rd = hil_log_reader_open(path, err, sizeof err);
  assert_non_null(rd);
  hil_log_record *rec = malloc(sizeof *rec);
  assert_non_null(rec);
  int k, bad = 0;
  while ((k = hil_log_next(rd, rec, err, sizeof err)) != 0) {
    if (k < 0) {
      assert_int_equal(k, HIL_LOG_EFORMAT);
      print_message("%s\n", err);
      assert_non_null(strstr(err, "record 23 at byte"));
      assert_non_null(strstr(err, "t is not a number"));
      bad++;
    }
  }
  assert_int_equal(bad, 1);
  free(rec);
  hil_log_reader_close(&rd);
  /* the replay names a t going back more than one period */
  w = custom_log(path, sizeof path, "back.log", 1000);
  for (int i = 0; i < 10; i++) {
    put(w, 0, i == 6 ? 0.0025 : 0.001 * i, 0, (uint64_t)i);
  }
  assert_int_equal(hil_log_close(&w), 0);
  sel.skip_damaged = 0;
  load(&s, path, &sel);
  print_message("%s\n", s.damage);
  snprintf(want, sizeof want, "back.log: record 8 at byte %ld: t = 0.0025 s goes back from "
           "t = 0.005 s of an earlier sample by more than one physics period (0.001 s)",
           ts_line_offset(path, 8));
  assert_string_equal(s.damage + strlen(s.damage) - strlen(want), want);
  assert_int_equal(s.n, 6);
  hil_replay_free(&s);
}

/* Issue 18, item 7, and issue 11, item 12 (replay): a log without its end record (a killed
 * recorder) is said to be incomplete; a CSV whose time goes back is damage named by its line. */
static void test_incomplete_log_and_csv_time_back(void **state) {
  (void)state;
  char path[128];
  write_log_as(path, sizeof path, "no_end.log", 20);
  hil_replay_select sel = {0};
  hil_replay_schedule s;
  load(&s, path, &sel);
  assert_false(s.incomplete);
  hil_replay_free(&s);
  /* the end record goes */
  assert_int_equal(truncate(path, ts_line_offset(path, ts_file_lines(path))), 0);
  load(&s, path, &sel);
  assert_true(s.incomplete);
  assert_int_equal(s.damage[0], '\0');
  assert_int_equal(s.n, 20 + 10 + 5);
  hil_replay_free(&s);

  ts_tmp_path(path, sizeof path, "back.csv");
  ts_write_file(path, "time,enc.counts\n0,1\n0.001,2\n0.001,3\n0.0005,4\n0.002,5\n");
  load(&s, path, &sel);
  print_message("%s\n", s.damage);
  assert_non_null(strstr(s.damage, "back.csv: line 5 at byte 36: time 0.0005 goes back (an "
                                   "earlier row has 0.001; time must not decrease)"));
  assert_true(s.stopped);
  assert_int_equal(s.n, 3); /* an equal time is not going back */
  hil_replay_free(&s);
}

TS_MAIN_WITH(replay_setup, replay_teardown, test_damaged_record, test_truncated_tail, test_csv,
                                            test_window_tolerance, test_time_checks_at_load,
                                            test_incomplete_log_and_csv_time_back)
