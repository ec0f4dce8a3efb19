/* tests/sim/test_import_shapes.c: geoms become collision shapes: URDF collisions (primitives and
 * meshes), MJCF contact groups and excludes, MJCF meshes and what is reported about them. */
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

/* contype/conaffinity reach the geoms (the default 1/1 written as nothing); an <exclude> of two
 * converted bodies becomes the native list, one naming a merged body is reported */
static void test_contact_groups_and_excludes(void **state) {
  (void)state;
  static const char xml[] =
      "<mujoco>\n<worldbody>\n"
      "<body name=\"a\"><joint name=\"ja\" type=\"slide\"/>\n"
      "  <geom name=\"ga\" type=\"sphere\" size=\"0.1\" contype=\"2\" conaffinity=\"5\"/>\n"
      "  <body name=\"frame\" pos=\"0.2 0 0\">\n"
      "    <body name=\"b\"><joint name=\"jb\" type=\"slide\"/>\n"
      "      <geom name=\"gb\" type=\"sphere\" size=\"0.1\"/></body></body></body>\n"
      "<body name=\"c\"><joint name=\"jc\" type=\"slide\"/>\n"
      "  <geom name=\"gc\" type=\"capsule\" size=\"0.1 0.2\"/></body>\n"
      "</worldbody>\n"
      "<contact>\n<exclude body1=\"c\" body2=\"a\"/>\n"
      "<exclude body1=\"frame\" body2=\"c\"/>\n<pair geom1=\"ga\" geom2=\"gc\"/>\n</contact>\n"
      "</mujoco>\n";
  reports r = {"", 0};
  sim_model *m = import_text("groups.xml", xml, &r);
  print_message("reports:\n%s", r.text);
  assert_int_equal(m->ngeom, 3);
  assert_true(m->geoms[0].contype == 2 && m->geoms[0].conaffinity == 5);
  assert_true(m->geoms[1].contype == 1 && m->geoms[1].conaffinity == 1);
  assert_int_equal(m->nexclude, 1);
  const int a = sim_model_body(m, "a"), c = sim_model_body(m, "c");
  assert_true(m->exclude[0] == (a < c ? a : c) && m->exclude[1] == (a < c ? c : a));
  assert_non_null(strstr(r.text, "groups.xml:13: <exclude body1=\"frame\""));
  assert_non_null(strstr(r.text, "groups.xml:14: <contact><pair> ignored"));
  sim_model_free(m);
}

/* URDF collisions: sphere, box, cylinder (radius, full length) and an STL mesh (package://,
 * scale) convert; a mesh file not found and a non-STL mesh are reported with their lines and
 * skipped (an error under --strict) */
static void test_urdf_collisions(void **state) {
  (void)state;
  static const char urdf[] =
      "<robot name=\"c\">\n<link name=\"world\"/>\n"
      "<link name=\"a\"><inertial><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\""
      " ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/></inertial>\n"
      "<collision><origin xyz=\"0.1 0 0\"/><geometry><sphere radius=\"0.05\"/></geometry>"
      "</collision>\n"
      "<collision name=\"plate\"><geometry><box size=\"0.2 0.1 0.04\"/></geometry></collision>\n"
      "<collision><geometry><cylinder radius=\"0.02\" length=\"0.3\"/></geometry></collision>\n"
      "<collision><geometry><mesh filename=\"package://pkg/cube.stl\" scale=\"2 2 2\"/>"
      "</geometry></collision>\n"
      "<collision><geometry><mesh filename=\"meshes/missing.stl\"/></geometry></collision>\n"
      "<collision><geometry><mesh filename=\"cube.dae\"/></geometry></collision>\n"
      "</link>\n<link name=\"tip\"><collision><geometry><sphere radius=\"0.01\"/></geometry>"
      "</collision></link>\n"
      "<joint name=\"j\" type=\"continuous\"><parent link=\"world\"/><child link=\"a\"/>"
      "<axis xyz=\"0 0 1\"/></joint>\n"
      "<joint name=\"t\" type=\"fixed\"><parent link=\"a\"/><child link=\"tip\"/>"
      "<origin xyz=\"0.3 0 0\"/></joint>\n</robot>\n";
  char path[256], err[1024];
  write_cube_stl("cube.stl");
  reports r = {"", 0};
  sim_model *m = import_text("collide.urdf", urdf, &r);
  ts_tmp_path(path, sizeof path, "collide.urdf");
  print_message("%s", r.text);
  assert_non_null(strstr(r.text, "collide.urdf:8: <collision> not converted: mesh file "
                                 "\"meshes/missing.stl\" not found"));
  assert_non_null(strstr(r.text, "collide.urdf:9: <collision> not converted: only STL"));
  assert_int_equal(m->ngeom, 5);
  assert_int_equal(m->geoms[0].type, SIM_GEOM_SPHERE);
  assert_true(m->geoms[0].size[0] == 0.05 && m->geoms[0].pos[0] == 0.1);
  assert_int_equal(m->geoms[1].type, SIM_GEOM_BOX);
  assert_true(m->geoms[1].size[0] == 0.1 && m->geoms[1].size[1] == 0.05 &&
              m->geoms[1].size[2] == 0.02);
  assert_int_equal(m->geoms[2].type, SIM_GEOM_CYLINDER);
  assert_true(m->geoms[2].size[0] == 0.02 && m->geoms[2].size[1] == 0.15);
  assert_int_equal(m->geoms[3].type, SIM_GEOM_MESH);
  assert_int_equal(m->geoms[3].hull_nvert, 8);
  assert_true(fabs(m->geoms[3].rbound - 0.1 * sqrt(3.0)) < 1e-7); /* scaled by 2 */
  /* the tip link has no mass: merged into a, its sphere 0.3 m out along a's x */
  assert_int_equal(m->geoms[4].body, m->geoms[0].body);
  assert_true(m->geoms[4].pos[0] == 0.3 && m->geoms[4].size[0] == 0.01);
  sim_model_free(m);
  /* strict: the missing file is an error naming file and line */
  m = import(path, &r, 1, err, sizeof err);
  assert_null(m);
  print_message("strict: %s\n", err);
  assert_non_null(strstr(err, "collide.urdf:8:"));
  assert_non_null(strstr(err, "missing.stl"));
}

/* MJCF meshes that do not convert are reported with their lines: a file not found, a format
 * other than STL or OBJ, a geom naming no such mesh; an unnamed mesh is named by its file's stem */
static void test_mjcf_mesh_reports(void **state) {
  (void)state;
  static const char xml[] =
      "<mujoco>\n"
      "  <asset><mesh name=\"gone\" file=\"gone.stl\"/>\n"
      "    <mesh file=\"part.dae\"/>\n"
      "    <mesh file=\"cube.stl\"/></asset>\n"
      "  <worldbody><body name=\"b\"><joint name=\"j\" type=\"slide\"/>\n"
      "    <inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"0.01 0.01 0.01\"/>\n"
      "    <geom name=\"g1\" type=\"mesh\" mesh=\"gone\"/>\n"
      "    <geom name=\"g2\" type=\"mesh\" mesh=\"nothing\"/>\n"
      "    <geom name=\"g3\" type=\"mesh\" mesh=\"cube\"/>\n"
      "  </body></worldbody>\n"
      "</mujoco>\n";
  write_cube_stl("cube.stl");
  reports r = {"", 0};
  sim_model *m = import_text("meshes.xml", xml, &r);
  print_message("%s", r.text);
  assert_non_null(strstr(r.text, "meshes.xml:2: <mesh file=\"gone.stl\"> not converted: file "
                                 "not found"));
  assert_non_null(strstr(r.text, "meshes.xml:3: <mesh file=\"part.dae\"> not converted: only STL "
                                 "and OBJ"));
  assert_non_null(strstr(r.text, "meshes.xml:7: <geom type=\"mesh\" mesh=\"gone\"> not converted"));
  assert_non_null(strstr(r.text, "meshes.xml:8: <geom type=\"mesh\" mesh=\"nothing\"> not converted"));
  assert_int_equal(m->ngeom, 1);
  assert_string_equal(m->geoms[0].name, "g3");
  assert_int_equal(m->geoms[0].hull_nvert, 8);
  sim_model_free(m);
}

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_contact_groups_and_excludes, test_urdf_collisions,
                                            test_mjcf_mesh_reports)
