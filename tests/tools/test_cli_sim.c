/* tests/tools/test_cli_sim.c: `achilles sim` as a user runs it: CSV layout, precision, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "support/skip.h"
#include "support/spawn.h"
#include "support/tmp.h"

/* a 1 kg box dropped from 5 cm onto the floor */
#define ROBOTS ACHILLES_SOURCE_DIR "/tests/support/robots"
#define BOX ROBOTS "/box_on_floor.json"

#define ARM ACHILLES_SOURCE_DIR "/configs/two_link_arm.json"

static char output[1 << 20];

/* `achilles sim ARGS` (printf-style), its standard output into output: it must exit 0 */
static void sim_ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sim_ok(const char *fmt, ...) {
  char args[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  assert_int_equal(ts_shellf(output, sizeof output, "%s sim %s", ACHILLES_BIN, args), 0);
}

static void test_csv_layout(void **state) {
  (void)state;
  sim_ok("%s --duration 0.1 --torque shoulder=1 --integrator rk4 --csv -", ARM);
  const char *header = "time,shoulder.q,elbow.q,shoulder.qd,elbow.qd,energy\n";
  assert_memory_equal(output, header, strlen(header));
  const int rows = ts_count_lines(output);
  assert_int_equal(rows, 1 + 1 + 50); /* header, t = 0, then 0.1 s / 2 ms steps */
  /* the last row: 17 significant digits and the time of the 50th step */
  const char *last = output + strlen(output) - 2;
  while (last > output && *last != '\n') {
    last--;
  }
  double t, q1, q2, qd1, qd2, e;
  assert_int_equal(sscanf(last + 1, "%lf,%lf,%lf,%lf,%lf,%lf", &t, &q1, &q2, &qd1, &qd2, &e), 6);
  assert_true(fabs(t - 0.1) < 1e-12);
  /* starting from rest with no gravity, the energy equals the work of the torque, τ·q1; RK4's
   * error over 50 steps of 2 ms is ~1e-13 relative here, so 1e-9 leaves a wide margin */
  assert_true(fabs(e - 1.0 * q1) < 1e-9 * fabs(q1));
}

static void test_every_and_qpos(void **state) {
  (void)state;
  sim_ok("%s --duration 1 --every 100 --qpos hinge2=0.5 --integrator rk4",
         ACHILLES_SOURCE_DIR "/configs/double_pendulum.json");
  const int rows = ts_count_lines(output);
  assert_int_equal(rows, 1 + 1 + 5); /* 500 steps written every 100th */
  double t, q1, q2;
  const char *second = strchr(output, '\n') + 1;
  assert_int_equal(sscanf(second, "%lf,%lf,%lf", &t, &q1, &q2), 3);
  assert_true(t == 0 && q1 == 0 && q2 == 0.5);
}

static void expect_failure(const char *args, const char *message) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s sim %s 2>&1", ACHILLES_BIN, args);
  int rc = ts_shell(cmd, output, sizeof output);
  assert_int_not_equal(rc, 0);
  if (!strstr(output, message)) {
    fail_msg("'%s' printed '%s', expected '%s'", args, output, message);
  }
}

static void test_errors(void **state) {
  (void)state;
  const char *cfg = ARM;
  char args[512];
  snprintf(args, sizeof args, "%s --duration 1 --torque wrist=1", cfg);
  expect_failure(args, "unknown joint 'wrist' (joints: shoulder, elbow)");
  snprintf(args, sizeof args, "%s --duration 1 --integrator leapfrog", cfg);
  expect_failure(args, "--integrator");
  snprintf(args, sizeof args, "%s --duration abc", cfg);
  expect_failure(args, "--duration: expected a finite number");
  snprintf(args, sizeof args, "%s --duration 1 --frobnicate", cfg);
  expect_failure(args, "frobnicate");
  snprintf(args, sizeof args, "%s", cfg);
  expect_failure(args, "--duration is required");
  expect_failure("/nonexistent.json --duration 1", "/nonexistent.json: cannot open");
  snprintf(args, sizeof args, "%s --duration 1 --torque shoulder=nan", cfg);
  expect_failure(args, "expected a finite number");
}

/* A file that lists a child before its parent (tests/support/robots/child_first.json): columns
 * still follow the file, and each column holds its own joint's value (the model itself orders
 * parents first). */
static void test_columns_in_file_order(void **state) {
  (void)state;
  sim_ok("%s --duration 0.002 --qpos elbow=0.3 --qpos shoulder=-0.2 --csv -",
         ROBOTS "/child_first.json");
  const char *header = "time,elbow.q,shoulder.q,elbow.qd,shoulder.qd,energy\n";
  assert_memory_equal(output, header, strlen(header));
  double t, q_elbow, q_shoulder;
  assert_int_equal(sscanf(output + strlen(header), "%lf,%lf,%lf", &t, &q_elbow, &q_shoulder), 3);
  assert_true(t == 0 && q_elbow == 0.3 && q_shoulder == -0.2);
}

/* ball, free and several joints per body (a ball, a free body and a body with several joints:
 * tests/support/robots/multi_dof.json): one column per coordinate, named by its meaning; the
 * free body starts at its placement with a unit quaternion; --qpos on a ball is refused */
static void test_multi_dof_columns(void **state) {
  (void)state;
  sim_ok("%s --duration 0.002 --qpos x=0.25 --csv -", ROBOTS "/multi_dof.json");
  const char *header =
      "time,root.x,root.y,root.z,root.qw,root.qx,root.qy,root.qz,sh.qw,sh.qx,sh.qy,sh.qz,x.q,"
      "ry.q,root.vx,root.vy,root.vz,root.wx,root.wy,root.wz,sh.wx,sh.wy,sh.wz,x.qd,ry.qd,energy\n";
  assert_memory_equal(output, header, strlen(header));
  double v[14];
  assert_int_equal(sscanf(output + strlen(header),
                          "%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &v[0], &v[1],
                          &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11],
                          &v[12], &v[13]),
                   14);
  const double expect[14] = {0, 1, 2, 3, 1, 0, 0, 0, 1, 0, 0, 0, 0.25, 0};
  for (int k = 0; k < 14; k++) {
    assert_true(v[k] == expect[k]);
  }
  expect_failure(ROBOTS "/multi_dof.json --duration 0.002 --qpos sh=0.25",
                 "joint 'sh' has several coordinates");
}

/* --solver: a box dropped on the floor ends resting on its four bottom corners (4 contacts, 16
 * pyramid rows, iterations run); a robot without constraints reports zeros */
static void test_solver_columns(void **state) {
  (void)state;
  sim_ok("%s --duration 1 --every 500 --solver", BOX);
  const char *header = "time,z.q,z.qd,energy,contacts,rows,active,iterations,cost\n";
  assert_memory_equal(output, header, strlen(header));
  const char *last = output + strlen(output) - 2;
  while (last > output && *last != '\n') {
    last--;
  }
  double t, q, qd, e, cost;
  int contacts, rows, active, iterations;
  assert_int_equal(sscanf(last + 1, "%lf,%lf,%lf,%lf,%d,%d,%d,%d,%lf", &t, &q, &qd, &e, &contacts,
                          &rows, &active, &iterations, &cost), 9);
  assert_int_equal(contacts, 4);
  assert_int_equal(rows, 16);
  assert_true(active > 0 && iterations > 0);
  assert_true(q < -0.04 && q > -0.06); /* resting on the floor: centre near 0.1 m up */
  sim_ok("%s --duration 0.01 --solver", ARM);
  assert_non_null(strstr(output, ",0,0,0,0,0\n"));
}

static void test_help(void **state) {
  (void)state;
  assert_int_equal(ts_shell(ACHILLES_BIN " sim --help", output, sizeof output), 0);
  assert_non_null(strstr(output, "usage: achilles sim CONFIG --duration SECONDS"));
  assert_int_equal(ts_shell(ACHILLES_BIN " --help", output, sizeof output), 0);
  assert_non_null(strstr(output, "sim"));
}

TS_MAIN(test_csv_layout, test_every_and_qpos, test_errors, test_columns_in_file_order,
        test_solver_columns, test_multi_dof_columns, test_help)
