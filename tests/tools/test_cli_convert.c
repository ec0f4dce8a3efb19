/* tests/tools/test_cli_convert.c: `achilles convert` and `achilles sim` on a URDF, as a user runs
 * them: the JSON written loads and simulates exactly as the URDF read directly; notes and
 * --strict; exit codes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "support/skip.h"
#include "support/spawn.h"
#include "support/tmp.h"
#include <unistd.h>

static const char urdf[] =
    "<robot name=\"pendulum\">\n"
    "  <link name=\"world\"/>\n"
    "  <link name=\"rod\">\n"
    "    <inertial><origin xyz=\"0 0 -0.5\"/><mass value=\"1\"/>\n"
    "      <inertia ixx=\"0.0834\" ixy=\"0\" ixz=\"0\" iyy=\"0.0834\" iyz=\"0\" izz=\"0.0002\"/>\n"
    "    </inertial>\n"
    "    <visual><geometry><cylinder radius=\"0.01\" length=\"1\"/></geometry></visual>\n"
    "  </link>\n"
    "  <joint name=\"pivot\" type=\"continuous\"><parent link=\"world\"/><child link=\"rod\"/>\n"
    "    <axis xyz=\"0 1 0\"/></joint>\n"
    "</robot>\n";

static char out_direct[1 << 16], out_converted[1 << 16], text[1 << 16];

static void test_convert_then_sim(void **state) {
  (void)state;
  char dir[128];
  ts_tmpdir(dir, sizeof dir, "convert");
  char path[256], json[256], cmd[1024];
  snprintf(path, sizeof path, "%s/pendulum.urdf", dir);
  snprintf(json, sizeof json, "%s/pendulum.json", dir);
  ts_write_file(path, urdf);
  /* the note names the line of what was ignored; the JSON goes to --out */
  snprintf(cmd, sizeof cmd, "%s convert %s --out %s 2>&1", ACHILLES_BIN, path, json);
  assert_int_equal(ts_shell(cmd, text, sizeof text), 0);
  assert_non_null(strstr(text, "pendulum.urdf:7: <visual> ignored: visual only"));
  /* the converted file and the URDF simulate to the same digits */
  snprintf(cmd, sizeof cmd, "%s sim %s --duration 1 --qpos pivot=0.5 --every 100", ACHILLES_BIN,
           path);
  assert_int_equal(ts_shell(cmd, out_direct, sizeof out_direct), 0);
  snprintf(cmd, sizeof cmd, "%s sim %s --duration 1 --qpos pivot=0.5 --every 100", ACHILLES_BIN,
           json);
  assert_int_equal(ts_shell(cmd, out_converted, sizeof out_converted), 0);
  assert_string_equal(out_direct, out_converted);
  assert_non_null(strstr(out_direct, "time,pivot.q,pivot.qd,energy\n"));
  /* achilles sensors on the URDF: sensors from --sensors (an URDF has none of its own) */
  char sensors[256];
  snprintf(sensors, sizeof sensors, "%s/pendulum.sensors.json", dir);
  ts_write_file(sensors, "{\"list\": [{\"name\": \"enc\", \"type\": \"encoder\", \"joint\": "
                         "\"pivot\", \"counts_per_rev\": 1000}]}\n");
  snprintf(cmd, sizeof cmd, "%s sensors %s --sensors %s --duration 0.01 2>&1", ACHILLES_BIN, path,
           sensors);
  assert_int_equal(ts_shell(cmd, text, sizeof text), 0);
  assert_non_null(strstr(text, "enc.counts.meas"));
  snprintf(cmd, sizeof cmd, "%s sensors %s --duration 0.01 2>&1", ACHILLES_BIN, path);
  assert_int_not_equal(ts_shell(cmd, text, sizeof text), 0);
  assert_non_null(strstr(text, "an MJCF or URDF file has no sensors: pass --sensors FILE"));
  /* achilles run on the URDF with those sensors: fast, no sockets */
  snprintf(cmd, sizeof cmd,
           "%s run %s --sensors %s --mode fast --duration 0.5 --no-zmq 2>&1", ACHILLES_BIN, path,
           sensors);
  assert_int_equal(ts_shell(cmd, text, sizeof text), 0);
  if (!strstr(text, "pendulum: 1 joints, 0 actuators, 1 sensors") || !strstr(text, "steps=500")) {
    fail_msg("achilles run on a URDF printed '%s'", text);
  }
  remove(sensors);
  /* --strict: the visual element is an error, exit 1, nothing written */
  remove(json);
  snprintf(cmd, sizeof cmd, "%s convert %s --strict --out %s 2>&1", ACHILLES_BIN, path, json);
  assert_int_equal(ts_shell(cmd, text, sizeof text), 1);
  assert_non_null(strstr(text, "pendulum.urdf:7: <visual> ignored: visual only (an error with "
                               "--strict)"));
  assert_int_not_equal(access(json, F_OK), 0);
  /* a JSON file is not converted; a missing argument is a usage error */
  snprintf(cmd, sizeof cmd, "%s convert %s 2>&1", ACHILLES_BIN, ACHILLES_SOURCE_DIR "/configs/club_arm.json");
  assert_int_equal(ts_shell(cmd, text, sizeof text), 2);
  assert_non_null(strstr(text, "expected an MJCF (.xml, .mjcf) or URDF (.urdf) file"));
  snprintf(cmd, sizeof cmd, "%s convert --help", ACHILLES_BIN);
  assert_int_equal(ts_shell(cmd, text, sizeof text), 0);
  assert_non_null(strstr(text, "usage: achilles convert"));
  ts_rmtree(dir);
}

/* A URDF whose link collides through a mesh beside it: the JSON written into another folder
 * names the mesh relative to its own folder, so that the two folders can move together (the
 * importer resolves mesh names to absolute paths; standard output keeps them absolute). */
static void test_convert_names_meshes_relative(void **state) {
  (void)state;
  char dir[128];
  ts_tmpdir(dir, sizeof dir, "convert-mesh");
  char path[512], cmd[2048], moved[600];
  snprintf(cmd, sizeof cmd, "mkdir -p %s/robot/meshes %s/out", dir, dir);
  assert_int_equal(system(cmd), 0);
  snprintf(path, sizeof path, "%s/robot/meshes/tet.stl", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  static const char *const faces[4][3] = {{"0 0 0", "0.1 0 0", "0 0.1 0"},
                                          {"0 0 0", "0 0 0.1", "0.1 0 0"},
                                          {"0 0 0", "0 0.1 0", "0 0 0.1"},
                                          {"0.1 0 0", "0 0 0.1", "0 0.1 0"}};
  fputs("solid tet\n", f);
  for (int k = 0; k < 4; k++) {
    fprintf(f, "facet normal 0 0 0\nouter loop\nvertex %s\nvertex %s\nvertex %s\nendloop\n"
            "endfacet\n", faces[k][0], faces[k][1], faces[k][2]);
  }
  fputs("endsolid tet\n", f);
  fclose(f);
  snprintf(path, sizeof path, "%s/robot/arm.urdf", dir);
  f = fopen(path, "w");
  assert_non_null(f);
  fputs("<robot name=\"arm\">\n  <link name=\"world\"/>\n  <link name=\"rod\">\n"
        "    <inertial><mass value=\"1\"/>\n"
        "      <inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/>"
        "</inertial>\n"
        "    <collision><geometry><mesh filename=\"meshes/tet.stl\"/></geometry></collision>\n"
        "  </link>\n"
        "  <joint name=\"pivot\" type=\"continuous\"><parent link=\"world\"/>"
        "<child link=\"rod\"/></joint>\n</robot>\n", f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "%s convert %s --out %s/out/arm.json --quiet 2>&1", ACHILLES_BIN,
           path, dir);
  assert_int_equal(ts_shell(cmd, text, sizeof text), 0);
  snprintf(cmd, sizeof cmd, "cat %s/out/arm.json", dir);
  assert_int_equal(ts_shell(cmd, text, sizeof text), 0);
  if (!strstr(text, "\"file\":\t\"../robot/meshes/tet.stl\"")) {
    fail_msg("the mesh is not named relative to the JSON's folder:\n%s", text);
  }
  /* the folders moved together: the JSON still loads and runs */
  snprintf(moved, sizeof moved, "%s_moved", dir);
  snprintf(cmd, sizeof cmd, "mv %s %s && %s sim %s/out/arm.json --duration 0.01 2>&1", dir, moved,
           ACHILLES_BIN, moved);
  if (ts_shell(cmd, text, sizeof text) != 0) {
    fail_msg("the moved JSON does not load:\n%s", text);
  }
  /* on standard output the path stays absolute */
  snprintf(cmd, sizeof cmd, "%s convert %s/robot/arm.urdf --quiet 2>&1", ACHILLES_BIN, moved);
  assert_int_equal(ts_shell(cmd, text, sizeof text), 0);
  snprintf(path, sizeof path, "\"file\":\t\"%s/robot/meshes/tet.stl\"", moved);
  assert_non_null(strstr(text, path));
  assert_int_equal(ts_rmtree(moved), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_convert_then_sim),
      cmocka_unit_test(test_convert_names_meshes_relative),
  };
  return ts_run(tests);
}
