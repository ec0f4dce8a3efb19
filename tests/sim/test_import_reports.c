/* tests/sim/test_import_reports.c: what an MJCF or URDF import tells its user — what the file
 * holds that the model does not take, reported once per kind with its line (an error with
 * --strict), and errors that name the file, the line and what was expected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "import_fixture.h"
#include "sim/sim.h"
#include "support/skip.h"
#include "support/tmp.h"

/* what the file holds that the model does not take is reported with its line, once per kind */
static void test_reports_name_lines(void **state) {
  (void)state;
  char path[256], err[1024];
  reports r = {"", 0};
  sim_model *m = import_text("arm_deg.xml", arm_deg, &r);
  ts_tmp_path(path, sizeof path, "arm_deg.xml");
  print_message("%s", r.text);
  assert_non_null(strstr(r.text, "arm_deg.xml:15: <light> ignored: visual only"));
  assert_non_null(strstr(r.text, "<geom rgba> ignored: not modelled")); /* a default's, too */
  assert_int_equal(m->ngeom, 0); /* <flag contact="disable">: geoms give mass only */
  /* five bodies move (the massless mount is merged into fore), five joints, two sites */
  assert_int_equal(m->nbody, 5 + 1);
  assert_int_equal(m->nv, 5);
  assert_int_equal(m->nsite, 2);
  assert_int_equal(m->nu, 3);
  /* the wrist's class set its damping; the default's armature reached every joint */
  const sim_joint *wrist = &m->joints[sim_model_joint(m, "wrist")];
  assert_true(wrist->damping == 0.01 && wrist->armature == 0.001);
  assert_true(fabs(wrist->range[1] - 3.14159265358979323846 / 2) < 1e-15);
  sim_model_free(m);
  /* strict: the first report is the error */
  m = import(path, &r, 1, err, sizeof err);
  assert_null(m);
  assert_non_null(strstr(err, "(an error with --strict)"));
  assert_non_null(strstr(err, "arm_deg.xml:"));
}

static void test_errors_name_file_and_line(void **state) {
  (void)state;
  import_refused("ball.xml",
               "<mujoco>\n<worldbody>\n<body>\n<geom size=\"1\"/>\n<joint type=\"ball\" "
               "stiffness=\"2\"/>\n</body>\n</worldbody>\n</mujoco>\n",
               "ball.xml:5: <joint stiffness>: not modelled on ball joints");
  import_refused("ballrange.xml",
               "<mujoco>\n<worldbody>\n<body>\n<geom size=\"1\"/>\n<joint type=\"ball\" "
               "range=\"0 30\" limited=\"true\"/>\n</body>\n</worldbody>\n</mujoco>\n",
               "ballrange.xml:5: <joint range>: limits of ball joints are not modelled");
  import_refused("twopos.xml",
               "<mujoco>\n<worldbody>\n<body>\n<geom size=\"1\"/>\n<joint type=\"slide\" "
               "axis=\"1 0 0\"/>\n<joint type=\"ball\" pos=\"0 0 1\"/>\n</body>\n</worldbody>\n"
               "</mujoco>\n",
               "twopos.xml:6: <joint pos>: only hinge and slide joints of a body may sit away from "
               "its first joint");
  import_refused("freechild.xml",
               "<mujoco>\n<worldbody>\n<body>\n<geom size=\"1\"/>\n<joint/>\n<body>\n"
               "<freejoint/>\n<geom size=\"1\"/>\n</body>\n</body>\n</worldbody>\n</mujoco>\n",
               "child of \"world\"");
  import_refused("floating.urdf",
               "<robot name=\"r\">\n<link name=\"a\"><inertial><mass value=\"1\"/><inertia "
               "ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
               "<link name=\"b\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" "
               "izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
               "<joint name=\"f\" type=\"floating\"><parent link=\"a\"/><child link=\"b\"/>"
               "</joint>\n</robot>\n",
               "floating.urdf:4: <joint type=\"floating\">: its parent link must be the world");
  import_refused("number.xml",
               "<mujoco>\n<worldbody>\n<body pos=\"0 0 x\">\n<joint/>\n<geom size=\"1\"/>\n"
               "</body>\n</worldbody>\n</mujoco>\n",
               "number.xml:3: <body pos=\"0 0 x\">: expected 3 finite numbers");
  import_refused("broken.xml", "<mujoco>\n<worldbody>\n</mujoco>\n", "broken.xml:3: invalid XML");
  import_refused("nomass.xml",
               "<mujoco>\n<worldbody>\n<body>\n<joint/>\n</body>\n</worldbody>\n</mujoco>\n",
               "nomass.xml:3: <body>: a moving body needs mass");
  import_refused("mesh.xml",
               "<mujoco>\n<worldbody>\n<body>\n<joint/>\n<geom type=\"mesh\" mesh=\"m\"/>\n"
               "</body>\n</worldbody>\n</mujoco>\n",
               "mesh.xml:5: <geom type=\"mesh\" mesh=\"m\">: no such mesh among the assets read, "
               "so its mass is not known");
  import_refused("twice.urdf",
               "<robot name=\"r\">\n<link name=\"a\"/>\n<link name=\"b\"/>\n</robot>\n",
               "a second root link");
  import_refused("float.urdf",
               "<robot name=\"r\">\n<link name=\"a\"/>\n<link name=\"b\"><inertial><mass "
               "value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" "
               "iyz=\"0\"/></inertial></link>\n<joint name=\"j\" type=\"spherical\">\n<parent "
               "link=\"a\"/><child link=\"b\"/></joint>\n</robot>\n",
               "float.urdf:4: <joint type=\"spherical\">: unknown joint type");
  /* a converted file that the native loader refuses names the original file */
  import_refused("inertia.xml",
               "<mujoco>\n<worldbody>\n<body>\n<joint/>\n<inertial mass=\"1\" "
               "diaginertia=\"1 1 5\"/>\n</body>\n</worldbody>\n</mujoco>\n",
               "inertia.xml (converted): bodies[0].inertial.inertia: violates the triangle");
}

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_reports_name_lines, test_errors_name_file_and_line)
