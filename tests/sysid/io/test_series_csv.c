/* tests/sysid/io/test_series_csv.c: a CSV of a real arm read into a series through the column
 * map (sysid/series_csv.c, docs/sysid.md section 2): the default names, factors, counts a turn,
 * a millisecond time column, blank cells, and every error naming its line and column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "support/model.h"

#define TS_PI 3.14159265358979323846
#include "support/skip.h"
#include "support/tmp.h"
#include "sysid/series.h"

/* two hinges j1, j2 and a slide s3; motors m1 (on j1, ctrlrange ±2) and m2 (on j2) */
static const char *robot =
    "{\"name\":\"csv_arm\",\"gravity\":[0,0,0],\"bodies\":["
    "{\"name\":\"b1\",\"parent\":\"world\",\"joint\":{\"name\":\"j1\",\"type\":\"hinge\","
    "\"axis\":[0,0,1]},\"inertial\":{\"mass\":1,\"inertia\":[1,1,1,0,0,0]}},"
    "{\"name\":\"b2\",\"parent\":\"b1\",\"joint\":{\"name\":\"j2\",\"type\":\"hinge\","
    "\"axis\":[0,0,1]},\"inertial\":{\"mass\":1,\"inertia\":[1,1,1,0,0,0]}},"
    "{\"name\":\"b3\",\"parent\":\"b2\",\"joint\":{\"name\":\"s3\",\"type\":\"slide\","
    "\"axis\":[1,0,0]},\"inertial\":{\"mass\":1,\"inertia\":[1,1,1,0,0,0]}}],"
    "\"actuators\":[{\"name\":\"m1\",\"joint\":\"j1\",\"type\":\"motor\",\"ctrlrange\":[-2,2]},"
    "{\"name\":\"m2\",\"joint\":\"j2\",\"type\":\"motor\"}]}";

static sim_model *model;

static int setup(void **state) {
  model = ts_model(robot);
  return model ? ts_tmp_setup(state) : -1;
}

static int teardown(void **state) {
  sim_model_free(model);
  return ts_tmp_teardown(state);
}

/* loads text as a CSV through map; returns the reader's status, err its message */
static int load(sysid_series *s, const char *text, const char *map, char *err, size_t err_sz) {
  char path[512];
  ts_tmp_path(path, sizeof path, "arm.csv");
  ts_write_file(path, text);
  return sysid_series_load_csv(s, path, model, map, err, err_sz);
}

static void test_default_names(void **state) {
  (void)state;
  sysid_series s;
  char err[1024] = "";
  /* columns named as joints and actuators are read; others ("note") are not */
  const int rc = load(&s, "time,j1,note,m1,j2\n0,0.1,a,0.5,1\n0.001,0.2,b,,\n0.002,,c,-1,3\n",
                      NULL, err, sizeof err);
  assert_int_equal(rc, 0);
  assert_int_equal(s.n, 3);
  assert_int_equal(s.njoint, 2);
  assert_int_equal(s.nact, 1);
  assert_string_equal(s.joint_name[0], "j1");
  assert_string_equal(s.joint_name[1], "j2");
  assert_string_equal(s.act_name[0], "m1");
  assert_true(s.t[1] == 0.001 && s.q[0] == 0.1 && s.q[2 * 1 + 0] == 0.2);
  assert_true(isnan(s.q[2 * 1 + 1])); /* a blank reading is missing */
  assert_true(isnan(s.q[2 * 2 + 0]) && s.q[2 * 2 + 1] == 3);
  assert_true(s.u[1] == 0.5); /* a blank input holds the row before's */
  assert_true(s.u[2] == -1);
  sysid_series_free(&s);
}

static void test_map_factors_and_counts(void **state) {
  (void)state;
  sysid_series s;
  char err[1024] = "";
  /* milliseconds, encoder counts at 4096 a turn, duty in percent, a slide in mm */
  const int rc = load(&s, "t_ms,enc1,pwm1,pos3\n0,0,50,10\n2,1024,-25,20\n4,-2048,,30\n",
                      "time=t_ms*0.001,j1=enc1/4096,m1=pwm1*0.01,s3=pos3*0.001", err,
                      sizeof err);
  assert_int_equal(rc, 0);
  assert_int_equal(s.n, 3);
  assert_int_equal(s.njoint, 2);
  assert_string_equal(s.joint_name[1], "s3");
  assert_true(fabs(s.t[1] - 0.002) < 1e-15 && fabs(s.t[2] - 0.004) < 1e-15);
  assert_true(fabs(s.q[2 * 1] - TS_PI / 2) < 1e-15);
  assert_true(fabs(s.q[2 * 2] + TS_PI) < 1e-15);
  assert_true(fabs(s.q[2 * 2 + 1] - 0.03) < 1e-15);
  assert_true(fabs(s.u[0] - 0.5) < 1e-15 && fabs(s.u[1] + 0.25) < 1e-15 &&
              fabs(s.u[2] + 0.25) < 1e-15);
  sysid_series_free(&s);
}

/* the message of a failing load, which must leave the series zeroed */
static const char *fails(const char *text, const char *map) {
  static char err[1024];
  sysid_series s;
  err[0] = '\0';
  assert_int_equal(load(&s, text, map, err, sizeof err), -1);
  assert_int_equal(s.n, 0);
  assert_null(s.t);
  return err;
}

#define ASSERT_HAS(text, part)                                                                   \
  do {                                                                                           \
    const char *msg_ = (text);                                                                   \
    if (!strstr(msg_, part)) {                                                                   \
      fail_msg("expected \"%s\" in \"%s\"", part, msg_);                                         \
    }                                                                                            \
  } while (0)

static void test_column_errors(void **state) {
  (void)state;
  ASSERT_HAS(fails("t,j1,m1\n0,0,0\n", NULL), "line 1: no column \"time\"");
  ASSERT_HAS(fails("time,j1,m1\n0,0,0\n1,0,0\n", "j1=enc1"), "line 1: no column \"enc1\" (j1=enc1)");
  ASSERT_HAS(fails("time,a,b\n0,0,0\n1,0,0\n", NULL), "line 1: no column is a joint's reading");
  ASSERT_HAS(fails("time,j1\n0,0\n", "knee=j1"), "knee is neither \"time\", a joint nor an actuator");
  ASSERT_HAS(fails("time,j1\n0,0\n", "knee=j1"), "joints: j1, j2, s3; actuators: m1, m2");
  ASSERT_HAS(fails("time,j1\n0,0\n", "j1=j1,j1=j1"), "j1 is mapped twice");
  ASSERT_HAS(fails("time,j1\n0,0\n", "j1=j1*0"), "expected a finite nonzero factor after '*'");
  ASSERT_HAS(fails("time,j1\n0,0\n", "j1=j1/-4"), "positive number of counts a turn");
  ASSERT_HAS(fails("time,j1,m1\n0,0,0\n", "j1=j1,m1=m1/4"), "an actuator's input takes");
  ASSERT_HAS(fails("time,j1\n0,0\n", "j1"), "expected NAME=COLUMN");
}

static void test_row_errors(void **state) {
  (void)state;
  const char *head = "time,j1,m1\n0,0,0\n";
  char text[256];
  snprintf(text, sizeof text, "%s0.001,0,0\n0.001,1,0\n", head);
  ASSERT_HAS(fails(text, NULL), "line 4: time 0.001 is not after the row before's 0.001 (line 3)");
  snprintf(text, sizeof text, "%s0.002,0,0\n0.001,1,0\n", head);
  ASSERT_HAS(fails(text, NULL), "line 4: time 0.001 is not after");
  snprintf(text, sizeof text, "%s0.001,nan,0\n", head);
  ASSERT_HAS(fails(text, NULL), "line 3, column 2 (\"j1\"): expected a finite number or a blank (got \"nan\")");
  snprintf(text, sizeof text, "%s0.001,0,inf\n", head);
  ASSERT_HAS(fails(text, NULL), "line 3, column 3 (\"m1\"): expected a finite number");
  snprintf(text, sizeof text, "%s,0,0\n", head);
  ASSERT_HAS(fails(text, NULL), "line 3, column 1 (\"time\"): expected a finite number (time may not be blank)");
  snprintf(text, sizeof text, "%s0.001,0\n", head);
  ASSERT_HAS(fails(text, NULL), "line 3: expected 3 fields as in the header, got 2");
  /* a factor that overflows a finite cell is not finite either */
  ASSERT_HAS(fails("time,j1\n0,1e300\n1,0\n", "j1=j1*1e300"), "line 2, column 2 (\"j1\")");
  ASSERT_HAS(fails(head, NULL), "1 data row: a series needs at least two");
  ASSERT_HAS(fails("", NULL), "empty file");
}

static void test_blank_lines_and_crlf(void **state) {
  (void)state;
  sysid_series s;
  char err[1024] = "";
  assert_int_equal(load(&s, "time , j1 ,m1\r\n0, 0.5 ,1\r\n\r\n\n0.01,0.25,2\r\n", NULL, err,
                        sizeof err),
                   0);
  assert_int_equal(s.n, 2);
  assert_true(s.q[1] == 0.25 && s.u[1] == 2);
  sysid_series_free(&s);
}

TS_MAIN_WITH(setup, teardown, test_default_names, test_map_factors_and_counts,
             test_column_errors, test_row_errors, test_blank_lines_and_crlf)
