/* tests/sim/test_import.c: MJCF and URDF import (sim/import) against MuJoCo loading the same
 * file, a URDF against its MJCF twin, and the reports and errors a user sees.
 *
 * The MJCF files here are written by hand to cover the subset docs/import.md lists (default
 * classes and childclass, euler and axisangle in degrees and radians, joints away from the body
 * origin, inertia from sphere, capsule (fromto), cylinder and box geoms, a massless frame body
 * holding a site, motor and position actuators); MuJoCo 2.2.2 compiles each independently, so
 * the expected trajectories are its own. Without libmujoco-dev only the MuJoCo-free tests run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/import/import.h"
#include "sim/sim.h"

#if !defined(ACHILLES_HAVE_MUJOCO)
#define ACHILLES_HAVE_MUJOCO 0
#endif

/* An arm with everything of the subset, angles in degrees (MJCF's default). */
static const char arm_deg[] =
    "<mujoco model=\"subset_arm\">\n"
    "  <compiler autolimits=\"true\"/>\n"
    "  <option timestep=\"0.001\" gravity=\"0 0 -9.81\" integrator=\"RK4\">\n"
    "    <flag contact=\"disable\" limit=\"disable\"/>\n"
    "  </option>\n"
    "  <default>\n"
    "    <joint damping=\"0.05\" armature=\"0.001\"/>\n"
    "    <geom density=\"800\" rgba=\"0.5 0.5 0.5 1\"/>\n"
    "    <default class=\"wrist\">\n"
    "      <joint damping=\"0.01\" axis=\"1 0 0\" range=\"-90 90\"/>\n"
    "      <geom type=\"box\" size=\"0.02 0.015 0.01\"/>\n"
    "    </default>\n"
    "  </default>\n"
    "  <worldbody>\n"
    "    <light pos=\"0 0 2\"/>\n"
    "    <geom type=\"plane\" size=\"1 1 0.1\"/>\n"
    "    <body name=\"base\" pos=\"0 0 0.05\" euler=\"0 0 30\">\n"
    "      <joint name=\"yaw\" axis=\"0 0 1\" range=\"-170 170\"/>\n"
    "      <geom type=\"cylinder\" size=\"0.04 0.03\"/>\n"
    "      <body name=\"upper\" pos=\"0 0 0.06\" axisangle=\"1 0 0 10\">\n"
    "        <joint name=\"shoulder\" axis=\"0 1 0\" pos=\"0 0 0.01\" stiffness=\"0.5\" springref=\"20\"/>\n"
    "        <geom type=\"capsule\" fromto=\"0 0 0 0.25 0 0\" size=\"0.02\"/>\n"
    "        <geom type=\"sphere\" pos=\"0.25 0 0\" size=\"0.03\" mass=\"0.2\"/>\n"
    "        <body name=\"fore\" pos=\"0.25 0 0\" quat=\"0.9961947 0 0.0871557 0\">\n"
    "          <joint name=\"elbow\" type=\"hinge\" axis=\"0 1 0\" pos=\"0.005 0 0\"/>\n"
    "          <inertial pos=\"0.1 0 0.002\" quat=\"0.9238795 0 0 0.3826834\" mass=\"0.4\"\n"
    "                    diaginertia=\"0.0002 0.0014 0.0013\"/>\n"
    "          <geom type=\"capsule\" fromto=\"0 0 0 0.2 0 0\" size=\"0.015\"/>\n"
    "          <body name=\"mount\" pos=\"0.2 0 0\">\n"
    "            <site name=\"camera\" pos=\"0.01 0.02 0\"/>\n"
    "            <body name=\"hand\" pos=\"0.02 0 0\" childclass=\"wrist\">\n"
    "              <joint name=\"wrist\"/>\n"
    "              <geom pos=\"0.02 0 0\"/>\n"
    "              <site name=\"tool\" pos=\"0.04 0 0\"/>\n"
    "              <body name=\"slider\" pos=\"0.04 0 0\">\n"
    "                <joint name=\"grip\" type=\"slide\" axis=\"0 1 0\" range=\"0 0.03\"\n"
    "                       damping=\"2\"/>\n"
    "                <geom class=\"wrist\" size=\"0.005 0.01 0.02\"/>\n"
    "              </body>\n"
    "            </body>\n"
    "          </body>\n"
    "        </body>\n"
    "      </body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <actuator>\n"
    "    <motor name=\"m_yaw\" joint=\"yaw\" gear=\"10\" ctrlrange=\"-1 1\"/>\n"
    "    <motor name=\"m_shoulder\" joint=\"shoulder\" gear=\"5\"/>\n"
    "    <position name=\"p_wrist\" joint=\"wrist\" kp=\"0.5\"/>\n"
    "  </actuator>\n"
    "</mujoco>\n";

/* The same kind of arm with radians and a different euler sequence. */
static const char arm_rad[] =
    "<mujoco model=\"radian_arm\">\n"
    "  <compiler angle=\"radian\" eulerseq=\"zyx\" autolimits=\"true\"/>\n"
    "  <option><flag contact=\"disable\" limit=\"disable\"/></option>\n"
    "  <worldbody>\n"
    "    <body name=\"a\" euler=\"0.3 -0.2 0.1\">\n"
    "      <joint name=\"ja\" axis=\"0 1 0\" range=\"-1 1\"/>\n"
    "      <geom type=\"box\" size=\"0.1 0.02 0.02\" pos=\"0.1 0 0\"/>\n"
    "      <body name=\"b\" pos=\"0.2 0 0\" axisangle=\"0 0 1 0.5\">\n"
    "        <joint name=\"jb\" axis=\"0 1 0\" pos=\"0.01 0 0\" springref=\"0.3\" stiffness=\"1\"/>\n"
    "        <geom type=\"cylinder\" fromto=\"0 0 0 0.2 0 0\" size=\"0.02\"/>\n"
    "      </body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static char tmp_dir[64];

static void write_file(char *path, size_t path_sz, const char *name, const char *text) {
  snprintf(path, path_sz, "%s/%s", tmp_dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

typedef struct reports {
  char text[8192];
  int n;
} reports;

static void collect(void *ctx, const char *message) {
  reports *r = ctx;
  size_t used = strlen(r->text);
  snprintf(r->text + used, sizeof r->text - used, "%s\n", message);
  r->n++;
}

static sim_model *import(const char *path, reports *r, int strict, char *err, size_t err_sz) {
  sim_import_options o = {strict, collect, r};
  return sim_import_load_file(path, &o, err, err_sz);
}

/* what the file holds that the model does not take is reported with its line, once per kind */
static void test_reports_name_lines(void **state) {
  (void)state;
  char path[256], err[1024];
  write_file(path, sizeof path, "arm_deg.xml", arm_deg);
  reports r = {"", 0};
  sim_model *m = import(path, &r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
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

static void expect_error(const char *name, const char *xml, const char *message) {
  char path[256], err[1024];
  write_file(path, sizeof path, name, xml);
  reports r = {"", 0};
  sim_model *m = import(path, &r, 0, err, sizeof err);
  if (m || !strstr(err, message)) {
    fail_msg("%s: got '%s', expected '%s'", name, m ? "a model" : err, message);
  }
}

static void test_errors_name_file_and_line(void **state) {
  (void)state;
  expect_error("ball.xml",
               "<mujoco>\n<worldbody>\n<body>\n<geom size=\"1\"/>\n<joint type=\"ball\" "
               "stiffness=\"2\"/>\n</body>\n</worldbody>\n</mujoco>\n",
               "ball.xml:5: <joint stiffness>: not modelled on ball joints");
  expect_error("ballrange.xml",
               "<mujoco>\n<worldbody>\n<body>\n<geom size=\"1\"/>\n<joint type=\"ball\" "
               "range=\"0 30\" limited=\"true\"/>\n</body>\n</worldbody>\n</mujoco>\n",
               "ballrange.xml:5: <joint range>: limits of ball joints are not modelled");
  expect_error("twopos.xml",
               "<mujoco>\n<worldbody>\n<body>\n<geom size=\"1\"/>\n<joint type=\"slide\" "
               "axis=\"1 0 0\"/>\n<joint type=\"ball\" pos=\"0 0 1\"/>\n</body>\n</worldbody>\n"
               "</mujoco>\n",
               "twopos.xml:6: <joint pos>: only hinge and slide joints of a body may sit away from "
               "its first joint");
  expect_error("freechild.xml",
               "<mujoco>\n<worldbody>\n<body>\n<geom size=\"1\"/>\n<joint/>\n<body>\n"
               "<freejoint/>\n<geom size=\"1\"/>\n</body>\n</body>\n</worldbody>\n</mujoco>\n",
               "child of \"world\"");
  expect_error("floating.urdf",
               "<robot name=\"r\">\n<link name=\"a\"><inertial><mass value=\"1\"/><inertia "
               "ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
               "<link name=\"b\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" "
               "izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
               "<joint name=\"f\" type=\"floating\"><parent link=\"a\"/><child link=\"b\"/>"
               "</joint>\n</robot>\n",
               "floating.urdf:4: <joint type=\"floating\">: its parent link must be the world");
  expect_error("number.xml",
               "<mujoco>\n<worldbody>\n<body pos=\"0 0 x\">\n<joint/>\n<geom size=\"1\"/>\n"
               "</body>\n</worldbody>\n</mujoco>\n",
               "number.xml:3: <body pos=\"0 0 x\">: expected 3 finite numbers");
  expect_error("broken.xml", "<mujoco>\n<worldbody>\n</mujoco>\n", "broken.xml:3: invalid XML");
  expect_error("nomass.xml",
               "<mujoco>\n<worldbody>\n<body>\n<joint/>\n</body>\n</worldbody>\n</mujoco>\n",
               "nomass.xml:3: <body>: a moving body needs mass");
  expect_error("mesh.xml",
               "<mujoco>\n<worldbody>\n<body>\n<joint/>\n<geom type=\"mesh\" mesh=\"m\"/>\n"
               "</body>\n</worldbody>\n</mujoco>\n",
               "mesh.xml:5: <geom type=\"mesh\">: its mass is not computed here");
  expect_error("twice.urdf",
               "<robot name=\"r\">\n<link name=\"a\"/>\n<link name=\"b\"/>\n</robot>\n",
               "a second root link");
  expect_error("float.urdf",
               "<robot name=\"r\">\n<link name=\"a\"/>\n<link name=\"b\"><inertial><mass "
               "value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" "
               "iyz=\"0\"/></inertial></link>\n<joint name=\"j\" type=\"spherical\">\n<parent "
               "link=\"a\"/><child link=\"b\"/></joint>\n</robot>\n",
               "float.urdf:4: <joint type=\"spherical\">: unknown joint type");
  /* a converted file that the native loader refuses names the original file */
  expect_error("inertia.xml",
               "<mujoco>\n<worldbody>\n<body>\n<joint/>\n<inertial mass=\"1\" "
               "diaginertia=\"1 1 5\"/>\n</body>\n</worldbody>\n</mujoco>\n",
               "inertia.xml (converted): bodies[0].inertial.inertia: violates the triangle");
}

/* ranges, limited, frictionloss and the soft parameters reach the model; the limit flag of
 * <option> keeps the ranges but does not enforce them, as in MuJoCo */
static void test_limits_and_friction(void **state) {
  (void)state;
  static const char xml[] =
      "<mujoco>\n<compiler angle=\"radian\"/>\n<worldbody>\n<body>\n"
      "<joint name=\"j\" range=\"-1 1\" limited=\"true\" frictionloss=\"0.3\"\n"
      "       solreflimit=\"0.01 0.8\" solimpfriction=\"0.95 0.99 0.001 0.5 2\"/>\n"
      "<geom type=\"sphere\" size=\"0.1\"/>\n</body>\n</worldbody>\n</mujoco>\n";
  char path[256], err[1024];
  write_file(path, sizeof path, "limits.xml", xml);
  reports r = {"", 0};
  sim_model *m = import(path, &r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  const sim_joint *j = &m->joints[sim_model_joint(m, "j")];
  assert_true(j->limited && j->range[0] == -1 && j->range[1] == 1);
  assert_true(j->frictionloss == 0.3);
  assert_true(j->solref_limit[0] == 0.01 && j->solref_limit[1] == 0.8);
  assert_true(j->solimp_friction[0] == 0.95 && j->solimp_friction[1] == 0.99);
  sim_model_free(m);
  char off[sizeof xml + 64];
  const char *world = strstr(xml, "<worldbody>");
  snprintf(off, sizeof off, "%.*s<option><flag limit=\"disable\"/></option>\n%s",
           (int)(world - xml), xml, world);
  write_file(path, sizeof path, "limits_off.xml", off);
  m = import(path, &r, 0, err, sizeof err);
  assert_non_null(m);
  j = &m->joints[sim_model_joint(m, "j")];
  assert_true(!j->limited && j->range[1] == 1);
  sim_model_free(m);
}

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
  char path[256], err[1024];
  write_file(path, sizeof path, "groups.xml", xml);
  reports r = {"", 0};
  sim_model *m = import(path, &r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
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

/* URDF collision spheres and boxes become geoms on their link (a box's size is its full
 * length in URDF, half in ours), merged frame links included; cylinders are reported */
/* a closed cube of half-size 0.05 as ASCII STL: 12 triangles */
static void write_cube_stl(const char *name) {
  static const int faces[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                                  {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  char text[8192], path[256];
  size_t n = (size_t)snprintf(text, sizeof text, "solid cube\n");
  for (int f = 0; f < 6; f++) {
    const int tri[2][3] = {{faces[f][0], faces[f][1], faces[f][2]},
                           {faces[f][0], faces[f][2], faces[f][3]}};
    for (int t = 0; t < 2; t++) {
      n += (size_t)snprintf(text + n, sizeof text - n, "facet normal 0 0 0\nouter loop\n");
      for (int v = 0; v < 3; v++) {
        const int c = tri[t][v];
        n += (size_t)snprintf(text + n, sizeof text - n, "vertex %g %g %g\n",
                              c & 1 ? 0.05 : -0.05, c & 2 ? 0.05 : -0.05, c & 4 ? 0.05 : -0.05);
      }
      n += (size_t)snprintf(text + n, sizeof text - n, "endloop\nendfacet\n");
    }
  }
  snprintf(text + n, sizeof text - n, "endsolid cube\n");
  write_file(path, sizeof path, name, text);
}

/* the same cube as binary STL (MuJoCo 2.2.2 reads binary STL only) */
static void write_cube_stl_binary(const char *name) {
  static const int faces[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                                  {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  unsigned char data[84 + 12 * 50];
  memset(data, 0, sizeof data);
  data[80] = 12; /* triangles, little-endian */
  int t = 0;
  for (int f = 0; f < 6; f++) {
    const int tri[2][3] = {{faces[f][0], faces[f][1], faces[f][2]},
                           {faces[f][0], faces[f][2], faces[f][3]}};
    for (int h = 0; h < 2; h++, t++) {
      for (int v = 0; v < 3; v++) {
        const int c = tri[h][v];
        const float xyz[3] = {c & 1 ? 0.05f : -0.05f, c & 2 ? 0.05f : -0.05f,
                              c & 4 ? 0.05f : -0.05f};
        memcpy(data + 84 + 50 * t + 12 + 12 * v, xyz, sizeof xyz); /* x86: little-endian */
      }
    }
  }
  char path[256];
  snprintf(path, sizeof path, "%s/%s", tmp_dir, name);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, sizeof data, f), sizeof data);
  fclose(f);
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
  write_file(path, sizeof path, "collide.urdf", urdf);
  reports r = {"", 0};
  sim_model *m = import(path, &r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
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
 * other than STL, a geom naming no such mesh; an unnamed mesh is named by its file's stem */
static void test_mjcf_mesh_reports(void **state) {
  (void)state;
  static const char xml[] =
      "<mujoco>\n"
      "  <asset><mesh name=\"gone\" file=\"gone.stl\"/>\n"
      "    <mesh file=\"part.obj\"/>\n"
      "    <mesh file=\"cube.stl\"/></asset>\n"
      "  <worldbody><body name=\"b\"><joint name=\"j\" type=\"slide\"/>\n"
      "    <inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"0.01 0.01 0.01\"/>\n"
      "    <geom name=\"g1\" type=\"mesh\" mesh=\"gone\"/>\n"
      "    <geom name=\"g2\" type=\"mesh\" mesh=\"nothing\"/>\n"
      "    <geom name=\"g3\" type=\"mesh\" mesh=\"cube\"/>\n"
      "  </body></worldbody>\n"
      "</mujoco>\n";
  char path[256], err[1024];
  write_cube_stl("cube.stl");
  write_file(path, sizeof path, "meshes.xml", xml);
  reports r = {"", 0};
  sim_model *m = import(path, &r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  print_message("%s", r.text);
  assert_non_null(strstr(r.text, "meshes.xml:2: <mesh file=\"gone.stl\"> not converted: file "
                                 "not found"));
  assert_non_null(strstr(r.text, "meshes.xml:3: <mesh file=\"part.obj\"> not converted: only STL"));
  assert_non_null(strstr(r.text, "meshes.xml:7: <geom type=\"mesh\" mesh=\"gone\"> not converted"));
  assert_non_null(strstr(r.text, "meshes.xml:8: <geom type=\"mesh\" mesh=\"nothing\"> not converted"));
  assert_int_equal(m->ngeom, 1);
  assert_string_equal(m->geoms[0].name, "g3");
  assert_int_equal(m->geoms[0].hull_nvert, 8);
  sim_model_free(m);
}

/* A URDF and its MJCF twin load to the same model. */
static const char twin_urdf[] =
    "<?xml version=\"1.0\"?>\n"
    "<robot name=\"twin\">\n"
    "  <link name=\"world\"/>\n"
    "  <link name=\"base\">\n"
    "    <inertial><origin xyz=\"0 0 0.02\" rpy=\"0 0 0\"/><mass value=\"1.5\"/>\n"
    "      <inertia ixx=\"0.002\" ixy=\"0\" ixz=\"0\" iyy=\"0.002\" iyz=\"0\" izz=\"0.003\"/></inertial>\n"
    "    <visual><geometry><box size=\"0.1 0.1 0.04\"/></geometry></visual>\n"
    "  </link>\n"
    "  <link name=\"link1\">\n"
    "    <inertial><origin xyz=\"0.1 0 0\" rpy=\"0.2 0 0.3\"/><mass value=\"0.5\"/>\n"
    "      <inertia ixx=\"0.0001\" ixy=\"0\" ixz=\"0\" iyy=\"0.001\" iyz=\"0\" izz=\"0.001\"/></inertial>\n"
    "  </link>\n"
    "  <link name=\"tool_frame\"/>\n"
    "  <link name=\"link2\">\n"
    "    <inertial><origin xyz=\"0.05 0 0\"/><mass value=\"0.2\"/>\n"
    "      <inertia ixx=\"0.00002\" ixy=\"0\" ixz=\"0\" iyy=\"0.0002\" iyz=\"0\" izz=\"0.0002\"/></inertial>\n"
    "  </link>\n"
    "  <joint name=\"fix\" type=\"fixed\"><parent link=\"world\"/><child link=\"base\"/>\n"
    "    <origin xyz=\"0 0 0.1\"/></joint>\n"
    "  <joint name=\"j1\" type=\"revolute\"><parent link=\"base\"/><child link=\"link1\"/>\n"
    "    <origin xyz=\"0 0 0.05\" rpy=\"0.1 0.2 0.3\"/><axis xyz=\"0 1 0\"/>\n"
    "    <limit lower=\"-1.5\" upper=\"1.5\" effort=\"5\" velocity=\"3\"/>\n"
    "    <dynamics damping=\"0.1\"/></joint>\n"
    "  <joint name=\"tool\" type=\"fixed\"><parent link=\"link1\"/><child link=\"tool_frame\"/>\n"
    "    <origin xyz=\"0.2 0 0\" rpy=\"0 0 0.5\"/></joint>\n"
    "  <joint name=\"j2\" type=\"prismatic\"><parent link=\"tool_frame\"/><child link=\"link2\"/>\n"
    "    <origin xyz=\"0.01 0 0\"/><axis xyz=\"1 0 0\"/><limit lower=\"0\" upper=\"0.1\"/></joint>\n"
    "</robot>\n";

/* rpy (r, p, y) as MJCF euler with eulerseq XYZ (fixed axes, in that order), radians; the tool
 * frame is folded into link2's placement by hand: pos 0.2 + R(0.5)·(0.01, 0, 0) */
static const char twin_mjcf[] =
    "<mujoco model=\"twin\">\n"
    "  <compiler angle=\"radian\" eulerseq=\"XYZ\" autolimits=\"true\"/>\n"
    "  <worldbody>\n"
    "    <body name=\"base\" pos=\"0 0 0.1\">\n"
    "      <inertial pos=\"0 0 0.02\" mass=\"1.5\" diaginertia=\"0.002 0.002 0.003\"/>\n"
    "      <body name=\"link1\" pos=\"0 0 0.05\" euler=\"0.1 0.2 0.3\">\n"
    "        <joint name=\"j1\" axis=\"0 1 0\" range=\"-1.5 1.5\" damping=\"0.1\"/>\n"
    "        <inertial pos=\"0.1 0 0\" euler=\"0.2 0 0.3\" mass=\"0.5\"\n"
    "                  diaginertia=\"0.0001 0.001 0.001\"/>\n"
    "        <body name=\"link2\" pos=\"0.20877582561890373 0.004794255386042030 0\"\n"
    "              euler=\"0 0 0.5\">\n"
    "          <joint name=\"j2\" type=\"slide\" axis=\"1 0 0\" range=\"0 0.1\"/>\n"
    "          <inertial pos=\"0.05 0 0\" mass=\"0.2\" diaginertia=\"0.00002 0.0002 0.0002\"/>\n"
    "        </body>\n"
    "      </body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static void test_urdf_equals_mjcf_twin(void **state) {
  (void)state;
  char up[256], mp[256], err[1024];
  write_file(up, sizeof up, "twin.urdf", twin_urdf);
  write_file(mp, sizeof mp, "twin.xml", twin_mjcf);
  reports r = {"", 0};
  sim_model *u = import(up, &r, 0, err, sizeof err);
  if (!u) {
    fail_msg("%s", err);
  }
  assert_non_null(strstr(r.text, "<visual> ignored: visual only"));
  assert_non_null(strstr(r.text, "<limit effort/velocity> ignored"));
  sim_model *m = import(mp, &r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  assert_int_equal(u->nbody, m->nbody);
  assert_int_equal(u->nbody, 4); /* world, base (welded), link1, link2: tool_frame merged */
  for (int b = 1; b < u->nbody; b++) {
    const sim_body *x = &u->bodies[b], *y = &m->bodies[sim_model_body(m, x->name)];
    assert_true(y != NULL && x->mass == y->mass);
    for (int k = 0; k < 3; k++) {
      assert_true(fabs(x->pos[k] - y->pos[k]) < 1e-15);
      assert_true(fabs(x->com[k] - y->com[k]) < 1e-15);
    }
    for (int k = 0; k < 9; k++) {
      assert_true(fabs(x->mat[k] - y->mat[k]) < 1e-15);
      assert_true(fabs(x->inertia[k] - y->inertia[k]) < 1e-18);
    }
  }
  for (int j = 0; j < u->njnt; j++) {
    const sim_joint *x = &u->joints[j];
    if (x->type == SIM_JOINT_FIXED) {
      continue;
    }
    const sim_joint *y = &m->joints[sim_model_joint(m, x->name)];
    assert_int_equal(x->type, y->type);
    assert_true(x->limited && y->limited && x->range[0] == y->range[0] && x->range[1] == y->range[1]);
    assert_true(x->frictionloss == y->frictionloss);
    assert_true(x->damping == y->damping);
    for (int k = 0; k < 3; k++) {
      assert_true(fabs(x->axis[k] - y->axis[k]) < 1e-15);
    }
  }
  sim_model_free(u);
  sim_model_free(m);
}

/* Several joints on one body (a planar root: slides x and z, hinge y, after an euler
 * placement), a free body (<freejoint>) and a ball joint below it, with default classes. */
static const char multi_mjcf[] =
    "<mujoco model=\"multi_joint\">\n"
    "  <compiler angle=\"degree\" autolimits=\"true\"/>\n"
    "  <option timestep=\"0.001\" integrator=\"Euler\">\n"
    "    <flag contact=\"disable\" limit=\"disable\"/>\n"
    "  </option>\n"
    "  <default>\n"
    "    <joint damping=\"0.02\" armature=\"0.001\"/>\n"
    "    <geom density=\"500\"/>\n"
    "  </default>\n"
    "  <worldbody>\n"
    "    <body name=\"torso\" pos=\"0 0 1\" euler=\"0 10 0\">\n"
    "      <joint name=\"rootx\" type=\"slide\" axis=\"1 0 0\"/>\n"
    "      <joint name=\"rootz\" type=\"slide\" axis=\"0 0 1\"/>\n"
    "      <joint name=\"rooty\" type=\"hinge\" axis=\"0 1 0\"/>\n"
    "      <geom type=\"capsule\" fromto=\"0 0 0 0 0 0.4\" size=\"0.05\"/>\n"
    "      <body name=\"leg\" pos=\"0 0 -0.05\">\n"
    "        <joint name=\"hip\" axis=\"0 1 0\" range=\"-60 60\"/>\n"
    "        <geom type=\"capsule\" fromto=\"0 0 0 0.05 0 -0.4\" size=\"0.03\"/>\n"
    "      </body>\n"
    "    </body>\n"
    "    <body name=\"floater\" pos=\"1 0 2\" quat=\"0.9 0.1 0.2 0.3\">\n"
    "      <freejoint name=\"float\"/>\n"
    "      <geom type=\"box\" size=\"0.1 0.05 0.02\"/>\n"
    "      <body name=\"pend\" pos=\"0.1 0 0\">\n"
    "        <joint name=\"ball\" type=\"ball\" damping=\"0.01\"/>\n"
    "        <geom type=\"capsule\" fromto=\"0 0 0 0 0.05 -0.3\" size=\"0.02\"/>\n"
    "      </body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static void test_mjcf_multi_dof_loads(void **state) {
  (void)state;
  char path[256], err[1024];
  write_file(path, sizeof path, "multi.xml", multi_mjcf);
  reports r = {"", 0};
  sim_model *m = import(path, &r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  const sim_body *torso = &m->bodies[sim_model_body(m, "torso")];
  assert_int_equal(torso->jntnum, 3);
  assert_int_equal(torso->dofnum, 3);
  assert_int_equal(m->joints[sim_model_joint(m, "float")].type, SIM_JOINT_FREE);
  assert_int_equal(m->joints[sim_model_joint(m, "ball")].type, SIM_JOINT_BALL);
  assert_true(m->joints[sim_model_joint(m, "float")].damping == 0); /* <freejoint>: none */
  assert_true(m->joints[sim_model_joint(m, "ball")].damping == 0.01);
  assert_int_equal(m->nq, 3 + 1 + 7 + 4);
  assert_int_equal(m->nv, 3 + 1 + 6 + 3);
  sim_model_free(m);
}

/* A URDF with a planar root (normal y) and a floating body, and its MJCF twin. */
static const char planar_urdf[] =
    "<?xml version=\"1.0\"?>\n"
    "<robot name=\"planar\">\n"
    "  <link name=\"world\"/>\n"
    "  <link name=\"torso\">\n"
    "    <inertial><origin xyz=\"0 0 0.1\"/><mass value=\"3\"/>\n"
    "      <inertia ixx=\"0.05\" ixy=\"0\" ixz=\"0\" iyy=\"0.06\" iyz=\"0\" izz=\"0.02\"/></inertial>\n"
    "  </link>\n"
    "  <link name=\"shin\">\n"
    "    <inertial><origin xyz=\"0 0 -0.2\"/><mass value=\"0.8\"/>\n"
    "      <inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.001\"/></inertial>\n"
    "  </link>\n"
    "  <link name=\"ball\">\n"
    "    <inertial><origin xyz=\"0 0 0\"/><mass value=\"0.5\"/>\n"
    "      <inertia ixx=\"0.001\" ixy=\"0\" ixz=\"0\" iyy=\"0.002\" iyz=\"0\" izz=\"0.003\"/></inertial>\n"
    "  </link>\n"
    "  <joint name=\"root\" type=\"planar\"><parent link=\"world\"/><child link=\"torso\"/>\n"
    "    <origin xyz=\"0 0 1.2\"/><axis xyz=\"0 1 0\"/><dynamics damping=\"0.1\"/></joint>\n"
    "  <joint name=\"knee\" type=\"continuous\"><parent link=\"torso\"/><child link=\"shin\"/>\n"
    "    <origin xyz=\"0 0 -0.1\"/><axis xyz=\"0 1 0\"/></joint>\n"
    "  <joint name=\"float\" type=\"floating\"><parent link=\"world\"/><child link=\"ball\"/>\n"
    "    <origin xyz=\"1 0 2\" rpy=\"0.1 0.2 0.3\"/></joint>\n"
    "</robot>\n";

static const char planar_mjcf[] =
    "<mujoco model=\"planar\">\n"
    "  <compiler angle=\"radian\" eulerseq=\"XYZ\"/>\n"
    "  <worldbody>\n"
    "    <body name=\"torso\" pos=\"0 0 1.2\">\n"
    "      <joint name=\"root_t1\" type=\"slide\" axis=\"1 0 0\" damping=\"0.1\"/>\n"
    "      <joint name=\"root_t2\" type=\"slide\" axis=\"0 0 1\" damping=\"0.1\"/>\n"
    "      <joint name=\"root_r\" type=\"hinge\" axis=\"0 1 0\" damping=\"0.1\"/>\n"
    "      <inertial pos=\"0 0 0.1\" mass=\"3\" diaginertia=\"0.05 0.06 0.02\"/>\n"
    "      <body name=\"shin\" pos=\"0 0 -0.1\">\n"
    "        <joint name=\"knee\" axis=\"0 1 0\"/>\n"
    "        <inertial pos=\"0 0 -0.2\" mass=\"0.8\" diaginertia=\"0.01 0.01 0.001\"/>\n"
    "      </body>\n"
    "    </body>\n"
    "    <body name=\"ball\" pos=\"1 0 2\" euler=\"0.1 0.2 0.3\">\n"
    "      <freejoint name=\"float\"/>\n"
    "      <inertial pos=\"0 0 0\" mass=\"0.5\" diaginertia=\"0.001 0.002 0.003\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static void test_urdf_planar_floating_equals_mjcf(void **state) {
  (void)state;
  char up[256], mp[256], err[1024];
  write_file(up, sizeof up, "planar.urdf", planar_urdf);
  write_file(mp, sizeof mp, "planar.xml", planar_mjcf);
  reports r = {"", 0};
  sim_model *u = import(up, &r, 0, err, sizeof err);
  if (!u) {
    fail_msg("%s", err);
  }
  sim_model *m = import(mp, &r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  assert_int_equal(u->nbody, m->nbody);
  assert_int_equal(u->njnt, m->njnt);
  assert_int_equal(u->nq, m->nq);
  for (int b = 1; b < u->nbody; b++) {
    const sim_body *x = &u->bodies[b], *y = &m->bodies[sim_model_body(m, x->name)];
    assert_int_equal(x->jntnum, y->jntnum);
    assert_true(x->mass == y->mass);
    for (int k = 0; k < 3; k++) {
      assert_true(fabs(x->pos[k] - y->pos[k]) < 1e-15);
    }
    for (int k = 0; k < 9; k++) {
      assert_true(fabs(x->mat[k] - y->mat[k]) < 1e-15);
    }
  }
  for (int j = 0; j < u->njnt; j++) {
    const sim_joint *x = &u->joints[j];
    int id = sim_model_joint(m, x->name);
    assert_true(id >= 0);
    const sim_joint *y = &m->joints[id];
    assert_int_equal(x->type, y->type);
    assert_int_equal(x->qposadr, y->qposadr); /* same order of coordinates */
    assert_true(x->damping == y->damping);
    for (int k = 0; k < 3; k++) {
      assert_true(fabs(x->axis[k] - y->axis[k]) < 1e-15);
    }
  }
  for (int k = 0; k < u->nq; k++) { /* the free body's qpos0 is its placement in both */
    assert_true(fabs(u->qpos0[k] - m->qpos0[k]) < 1e-15);
  }
  sim_model_free(u);
  sim_model_free(m);
}

/* What the descriptions of low-cost servo arms use (SO-100/SO-101, generated by
 * onshape-to-robot; not packaged by Debian or npm, so not read here) and the tests above do not:
 * several top-level <default> sections (MuJoCo merges them into class "main", a later one
 * overriding an earlier one), position actuators with a force range and newer MuJoCo's `kv`, and
 * in the URDF a dummy tool-frame link with a token mass of 1e-9 kg on a fixed joint. */
/* a position actuator's kv (MuJoCo 3: force = kp·(ctrl − q) − kv·q̇) is the native kd; a motor's
 * force range, which the native motor has no clamp for, is reported rather than dropped */
static void test_position_kv_and_motor_forcerange(void **state) {
  (void)state;
  static const char xml[] =
      "<mujoco>\n"
      "  <worldbody>\n"
      "    <body name=\"a\">\n"
      "      <joint name=\"j\" axis=\"0 0 1\"/>\n"
      "      <inertial pos=\"0.1 0 0\" mass=\"0.1\" diaginertia=\"1e-4 1e-4 1e-4\"/>\n"
      "    </body>\n"
      "  </worldbody>\n"
      "  <actuator>\n"
      "    <position name=\"p\" joint=\"j\" kp=\"10\" kv=\"0.5\" forcerange=\"-2 3\"/>\n"
      "    <motor name=\"m\" joint=\"j\" forcerange=\"-1 1\"/>\n"
      "  </actuator>\n"
      "</mujoco>\n";
  char path[256], err[1024];
  reports r = {"", 0};
  write_file(path, sizeof path, "kv.xml", xml);
  sim_model *m = import(path, &r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  print_message("%s", r.text);
  assert_true(m->actuators[0].kp == 10 && m->actuators[0].kd == 0.5);
  assert_true(m->actuators[0].force_limit == 0); /* asymmetric: reported, not converted */
  assert_non_null(strstr(r.text, "kv.xml:9: <position forcerange=\"-2 3\"> not converted"));
  assert_non_null(strstr(r.text, "kv.xml:10: <motor forcerange> ignored"));
  sim_model_free(m);
}

static const char urdf_head[] =
    "<robot name=\"tiny\">\n"
    "  <link name=\"base\"/>\n"
    "  <link name=\"arm\">\n"
    "    <inertial><origin xyz=\"0.05 0 0\"/><mass value=\"0.1\"/>\n"
    "      <inertia ixx=\"1e-5\" ixy=\"0\" ixz=\"0\" iyy=\"1e-4\" iyz=\"0\" izz=\"1e-4\"/></inertial>\n"
    "  </link>\n"
    "  <joint name=\"shoulder\" type=\"revolute\">\n"
    "    <parent link=\"base\"/><child link=\"arm\"/><axis xyz=\"0 0 1\"/>\n"
    "    <limit lower=\"-1\" upper=\"1\" effort=\"3\" velocity=\"5\"/>\n"
    "  </joint>\n"
    "  <link name=\"tool_frame\">\n"
    "    <inertial><mass value=\"1e-9\"/>\n"
    "      <inertia ixx=\"0\" ixy=\"0\" ixz=\"0\" iyy=\"0\" iyz=\"0\" izz=\"0\"/></inertial>\n"
    "  </link>\n";

/* a tool-frame link with a token mass on a fixed joint is a massless frame of its parent (as
 * MuJoCo fuses it), said in a report; the same link on a moving joint is an error */
static void test_urdf_token_mass_frame(void **state) {
  (void)state;
  char text[2048], path[256], err[1024];
  snprintf(text, sizeof text, "%s%s", urdf_head,
           "  <joint name=\"tool\" type=\"fixed\">\n"
           "    <parent link=\"arm\"/><child link=\"tool_frame\"/><origin xyz=\"0.1 0 0\"/>\n"
           "  </joint>\n"
           "</robot>\n");
  write_file(path, sizeof path, "frame.urdf", text);
  reports r = {"", 0};
  sim_model *m = import(path, &r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  print_message("%s", r.text);
  assert_int_equal(m->nv, 1);
  assert_int_equal(m->nbody, 2); /* the world and the arm: the frame is merged into the arm */
  assert_non_null(strstr(r.text, "frame.urdf:11: <link name=\"tool_frame\">: mass 1e-09 kg on a "
                                 "fixed joint"));
  sim_model_free(m);

  snprintf(text, sizeof text, "%s%s", urdf_head,
           "  <joint name=\"tool\" type=\"revolute\">\n"
           "    <parent link=\"arm\"/><child link=\"tool_frame\"/><axis xyz=\"1 0 0\"/>\n"
           "    <limit lower=\"-1\" upper=\"1\" effort=\"3\" velocity=\"5\"/>\n"
           "  </joint>\n"
           "</robot>\n");
  write_file(path, sizeof path, "moving.urdf", text);
  m = import(path, &r, 0, err, sizeof err);
  assert_null(m);
  print_message("%s\n", err);
  assert_non_null(strstr(err, "moving.urdf:11: <link name=\"tool_frame\">: mass 1e-09 kg on a "
                              "moving joint"));
}

#if ACHILLES_HAVE_MUJOCO
#include <mujoco/mujoco.h>

/* 4 s side by side from a bent start with constant controls; joints matched by name */
static double compare_with_mujoco(const char *path, double seconds) {
  char err[1024];
  reports r = {"", 0};
  sim_model *m = import(path, &r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
  if (!mm) {
    fail_msg("MuJoCo: %s", err);
  }
  sim_data *d = sim_data_new(m);
  mjData *md = mj_makeData(mm);
  assert_int_equal(mm->nq, m->nq);
  assert_int_equal(mm->nu, m->nu);
  m->opt.integrator = mm->opt.integrator == mjINT_RK4 ? SIM_INTEGRATOR_RK4 : SIM_INTEGRATOR_EULER;
  assert_true(m->opt.timestep == mm->opt.timestep);
  int map[32];
  double total_mass = 0;
  for (int b = 1; b < m->nbody; b++) {
    total_mass += m->bodies[b].mass;
  }
  assert_true(fabs(total_mass - mj_getTotalmass(mm)) < 1e-12 * total_mass);
  for (int j = 0; j < m->njnt; j++) {
    const sim_joint *jt = &m->joints[j];
    if (jt->qposadr < 0) {
      continue;
    }
    int id = mj_name2id(mm, mjOBJ_JOINT, jt->name);
    assert_true(id >= 0);
    for (int k = jt->qposadr; k < jt->qposadr + sim_joint_nq(jt->type); k++) {
      map[k] = mm->jnt_qposadr[id] + k - jt->qposadr; /* ball, free: same order inside */
      double q0 = 0.3 - 0.17 * k;
      d->qpos[k] = q0;
      md->qpos[map[k]] = q0;
    }
  }
  /* sites (moved with their body's frame, or carried over from a merged frame body) sit where
   * MuJoCo puts them */
  sim_forward(m, d);
  mj_forward(mm, md);
  for (int k = 0; k < m->nsite; k++) {
    int id = mj_name2id(mm, mjOBJ_SITE, m->sites[k].name);
    assert_true(id >= 0);
    for (int i = 0; i < 3; i++) {
      assert_true(fabs(d->site_xpos[3 * k + i] - md->site_xpos[3 * id + i]) < 1e-14);
    }
  }
  for (int a = 0; a < m->nu; a++) { /* actuators in file order in both */
    d->ctrl[a] = md->ctrl[a] = 0.05 * (a + 1);
  }
  double worst = 0;
  const long steps = lround(seconds / m->opt.timestep);
  for (long s = 0; s < steps; s++) {
    sim_step(m, d);
    mj_step(mm, md);
    for (int i = 0; i < m->nq; i++) {
      worst = fmax(worst, fabs(d->qpos[i] - md->qpos[map[i]]));
    }
  }
  mj_deleteData(md);
  mj_deleteModel(mm);
  sim_data_free(d);
  sim_model_free(m);
  return worst;
}

/* both engines integrate the same ODE: only rounding separates them (the MJCF's inertias are
 * aligned with the geoms' axes, so MuJoCo's eigen-decomposition of them is exact) */
static void test_mjcf_degrees_matches_mujoco(void **state) {
  (void)state;
  char path[256];
  write_file(path, sizeof path, "arm_deg.xml", arm_deg);
  double worst = compare_with_mujoco(path, 4.0);
  print_message("subset arm (degrees, RK4), 4 s: max |dq| against MuJoCo %.3g\n", worst);
  assert_true(worst <= 1e-8);
}

static void test_mjcf_radians_matches_mujoco(void **state) {
  (void)state;
  char path[256];
  write_file(path, sizeof path, "arm_rad.xml", arm_rad);
  double worst = compare_with_mujoco(path, 4.0);
  print_message("radian arm (zyx euler, Euler), 4 s: max |dq| against MuJoCo %.3g\n", worst);
  assert_true(worst <= 1e-8);
}

/* Euler: the same method in both engines (their RK4s differ on quaternions, see
 * test_mujoco_reference.c) */
static void test_mjcf_multi_dof_matches_mujoco(void **state) {
  (void)state;
  char path[256];
  write_file(path, sizeof path, "multi.xml", multi_mjcf);
  double worst = compare_with_mujoco(path, 4.0);
  print_message("planar root, free body, ball joint (Euler), 4 s: max |dq| against MuJoCo %.3g\n",
                worst);
  assert_true(worst <= 1e-8);
}

static void test_urdf_twin_matches_mujoco(void **state) {
  (void)state;
  /* limits off in both engines: the unconstrained dynamics agree to rounding */
  char path[256], text[sizeof twin_mjcf + 64];
  const char *world = strstr(twin_mjcf, "  <worldbody>");
  snprintf(text, sizeof text, "%.*s  <option><flag limit=\"disable\"/></option>\n%s",
           (int)(world - twin_mjcf), twin_mjcf, world);
  write_file(path, sizeof path, "twin_free.xml", text);
  double worst = compare_with_mujoco(path, 4.0);
  print_message("URDF twin in MJCF, 4 s: max |dq| against MuJoCo %.3g\n", worst);
  assert_true(worst <= 1e-8);
}
/* Geoms become collision shapes: a capsule on a hinge arm (its frame moved to a joint off the
 * body origin) and a sphere on a slide fall onto a plane and a sphere fixed in the world; 1 s
 * beside MuJoCo with the same solver settings (CG, 20 iterations, pyramidal). Both solvers stop
 * after 20 iterations at slightly different points, so the bound is the contact tests' (1e-5),
 * not rounding. */
static void test_contacts_match_mujoco(void **state) {
  (void)state;
  static const char xml[] =
      "<mujoco model=\"drop\">\n"
      "  <compiler angle=\"radian\"/>\n"
      "  <option timestep=\"0.001\" iterations=\"20\" tolerance=\"1e-8\" solver=\"CG\"\n"
      "          cone=\"pyramidal\"/>\n"
      "  <worldbody>\n"
      "    <geom name=\"floor\" type=\"plane\" size=\"1 1 0.1\" friction=\"0.8\"/>\n"
      "    <geom name=\"post\" type=\"sphere\" size=\"0.05\" pos=\"0.4 0 0.05\"/>\n"
      "    <body name=\"arm\" pos=\"0 0 0.3\">\n"
      "      <joint name=\"hinge\" axis=\"0 1 0\" pos=\"0.02 0 0\" damping=\"0.01\"/>\n"
      "      <geom name=\"rod\" type=\"capsule\" fromto=\"0.02 0 0 0.4 0 0\" size=\"0.02\"/>\n"
      "    </body>\n"
      "    <body name=\"ball\" pos=\"-0.3 0 0.2\">\n"
      "      <joint name=\"drop\" type=\"slide\" axis=\"0 0 1\"/>\n"
      "      <geom name=\"b\" type=\"sphere\" size=\"0.05\" solref=\"0.01 1\"/>\n"
      "      <geom name=\"look\" type=\"sphere\" size=\"0.06\" contype=\"0\" conaffinity=\"0\"\n"
      "            mass=\"0\"/>\n"
      "    </body>\n"
      "  </worldbody>\n"
      "</mujoco>\n";
  char path[256], err[1024];
  write_file(path, sizeof path, "drop.xml", xml);
  reports r = {"", 0};
  sim_model *m = import(path, &r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  assert_int_equal(m->ngeom, 4); /* floor, post, rod, b: the visual sphere is not a shape */
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
  assert_non_null(mm);
  sim_data *d = sim_data_new(m);
  mjData *md = mj_makeData(mm);
  int qm[2];
  for (int j = 0; j < m->njnt; j++) {
    if (m->joints[j].qposadr >= 0) {
      qm[m->joints[j].qposadr] = mm->jnt_qposadr[mj_name2id(mm, mjOBJ_JOINT, m->joints[j].name)];
    }
  }
  double worst = 0;
  int most_contacts = 0;
  for (int s = 0; s < 1000; s++) {
    sim_step(m, d);
    mj_step(mm, md);
    most_contacts = d->ncon > most_contacts ? d->ncon : most_contacts;
    for (int i = 0; i < m->nq; i++) {
      worst = fmax(worst, fabs(d->qpos[i] - md->qpos[qm[i]]));
    }
  }
  print_message("drop with contacts, 1 s: max |dq| against MuJoCo %.3g (up to %d contacts)\n",
                worst, most_contacts);
  assert_true(most_contacts >= 2);
  assert_true(worst <= 1e-5);
  mj_deleteData(md);
  mj_deleteModel(mm);
  sim_data_free(d);
  sim_model_free(m);
}

/* MJCF cylinder (fromto) and mesh geoms (<compiler meshdir>, <asset><mesh scale>) dropped on a
 * floor, each on a slide: their contacts and the fall agree with MuJoCo loading the same file */
static void test_mjcf_cylinder_mesh_match_mujoco(void **state) {
  (void)state;
  static const char xml[] =
      "<mujoco model=\"shapes\">\n"
      "  <compiler meshdir=\"parts\"/>\n"
      "  <asset><mesh name=\"cube\" file=\"cube.stl\" scale=\"1 2 1.5\"/>\n"
      "    <texture name=\"t\" type=\"2d\" builtin=\"checker\" width=\"8\" height=\"8\"/></asset>\n"
      "  <worldbody>\n"
      "    <geom name=\"floor\" type=\"plane\" size=\"0 0 1\"/>\n"
      "    <body name=\"can\" pos=\"0 0 0.2\">\n"
      "      <joint name=\"zc\" type=\"slide\" axis=\"0 0 1\"/>\n"
      "      <inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"0.01 0.01 0.01\"/>\n"
      "      <geom name=\"c\" type=\"cylinder\" size=\"0.04\" fromto=\"-0.1 0 0 0.1 0.02 0.05\"/>\n"
      "    </body>\n"
      "    <body name=\"box\" pos=\"1 0 0.25\" quat=\"0.9 0.3 0.2 0.1\">\n"
      "      <joint name=\"zb\" type=\"slide\" axis=\"0 0 1\"/>\n"
      "      <inertial pos=\"0 0 0\" mass=\"2\" diaginertia=\"0.01 0.01 0.01\"/>\n"
      "      <geom name=\"m\" type=\"mesh\" mesh=\"cube\" pos=\"0.01 0 0\"/>\n"
      "    </body>\n"
      "  </worldbody>\n"
      "</mujoco>\n";
  char path[256], err[1024];
  snprintf(path, sizeof path, "%s/parts", tmp_dir);
  assert_int_equal(mkdir(path, 0700), 0);
  write_cube_stl_binary("parts/cube.stl");
  write_file(path, sizeof path, "shapes.xml", xml);
  reports r = {"", 0};
  sim_model *m = import(path, &r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  print_message("%s", r.text);
  assert_non_null(strstr(r.text, "<asset><texture> ignored: visual only"));
  assert_int_equal(m->ngeom, 3);
  assert_int_equal(m->geoms[1].type, SIM_GEOM_CYLINDER);
  assert_true(fabs(m->geoms[1].size[1] - 0.5 * sqrt(0.04 + 0.0004 + 0.0025)) < 1e-15);
  assert_int_equal(m->geoms[2].type, SIM_GEOM_MESH);
  assert_int_equal(m->geoms[2].hull_nvert, 8);
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
  if (!mm) {
    fail_msg("MuJoCo: %s", err);
  }
  sim_data *d = sim_data_new(m);
  mjData *md = mj_makeData(mm);
  double worst = 0;
  int most = 0, touched[3] = {0, 0, 0};
  for (int s = 0; s < 1000; s++) {
    sim_step(m, d);
    mj_step(mm, md);
    assert_int_equal(d->ncon, md->ncon);
    most = d->ncon > most ? d->ncon : most;
    for (int c = 0; c < d->ncon; c++) {
      touched[d->con_geom[2 * c + 1]] = 1;
    }
    for (int i = 0; i < m->nq; i++) {
      worst = fmax(worst, fabs(d->qpos[i] - md->qpos[i]));
    }
  }
  print_message("cylinder and mesh dropped, 1 s: max |dq| against MuJoCo %.3g (up to %d "
                "contacts)\n", worst, most);
  assert_true(most >= 2 && touched[1] && touched[2]); /* both reached the floor */
  assert_true(worst <= 1e-6);
  mj_deleteData(md);
  mj_deleteModel(mm);
  sim_data_free(d);
  sim_model_free(m);
}
static const char servo_arm[] =
    "<mujoco model=\"servo_arm\">\n"
    "  <compiler angle=\"radian\" autolimits=\"true\"/>\n"
    "  <option timestep=\"0.001\" integrator=\"RK4\"><flag contact=\"disable\"/></option>\n"
    "  <default>\n"
    "    <joint armature=\"0.002\" damping=\"0.3\"/>\n"
    "    <default class=\"arm\">\n"
    "      <joint damping=\"1\" armature=\"0.005\"/>\n"
    "      <default class=\"visual\">\n"
    "        <geom type=\"box\" contype=\"0\" conaffinity=\"0\" size=\"0.01 0.01 0.01\"/>\n"
    "      </default>\n"
    "    </default>\n"
    "  </default>\n"
    "  <default>\n"
    "    <joint armature=\"0.003\"/>\n"
    "    <default class=\"servo\">\n"
    "      <joint damping=\"0.6\" armature=\"0.028\"/>\n"
    "      <position kp=\"50\" forcerange=\"-1.5 1.5\"/>\n"
    "    </default>\n"
    "  </default>\n"
    "  <worldbody>\n"
    "    <body name=\"base\" pos=\"0 0 0.05\" childclass=\"arm\">\n"
    "      <inertial pos=\"0 0 0.02\" mass=\"0.15\" diaginertia=\"1e-4 1.2e-4 1.1e-4\"/>\n"
    "      <geom class=\"visual\"/>\n"
    "      <body name=\"shoulder\" pos=\"0 0 0.04\">\n"
    "        <joint name=\"pan\" axis=\"0 0 1\" class=\"servo\"/>\n"
    "        <inertial pos=\"0 0.01 0.03\" mass=\"0.12\" diaginertia=\"8e-5 9e-5 5e-5\"/>\n"
    "        <body name=\"upper\" pos=\"0 0.03 0.05\" euler=\"1.5708 0 0\">\n"
    "          <joint name=\"lift\" axis=\"0 0 1\" class=\"servo\"/>\n"
    "          <inertial pos=\"0.05 0 0\" mass=\"0.1\" diaginertia=\"2e-5 1.5e-4 1.5e-4\"/>\n"
    "          <body name=\"fore\" pos=\"0.11 0 0\">\n"
    "            <joint name=\"elbow\" axis=\"0 0 1\"/>\n"
    "            <inertial pos=\"0.06 0 0\" mass=\"0.08\" diaginertia=\"1e-5 1e-4 1e-4\"/>\n"
    "          </body>\n"
    "        </body>\n"
    "      </body>\n"
    "    </body>\n"
    "    <body name=\"loose\" pos=\"0.3 0 0\">\n"
    "      <joint name=\"free_hinge\" axis=\"0 1 0\"/>\n"
    "      <inertial pos=\"0 0 -0.05\" mass=\"0.05\" diaginertia=\"1e-5 1e-5 1e-5\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <actuator>\n"
    "    <position class=\"servo\" name=\"pan\" joint=\"pan\" ctrlrange=\"-2 2\"/>\n"
    "    <position class=\"servo\" name=\"lift\" joint=\"lift\" ctrlrange=\"-2 2\"/>\n"
    "  </actuator>\n"
    "</mujoco>\n";

/* the values each joint and actuator gets from the two top-level defaults are MuJoCo's, and
 * the arm moves as MuJoCo's does with both servos pressed against their force limit */
static void test_two_top_level_defaults_match_mujoco(void **state) {
  (void)state;
  char path[256], err[1024];
  reports r = {"", 0};
  write_file(path, sizeof path, "servo_arm.xml", servo_arm);
  sim_model *m = import(path, &r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
  if (!mm) {
    fail_msg("MuJoCo: %s", err);
  }
  assert_int_equal(m->nv, mm->nv);
  assert_int_equal(m->nu, mm->nu);
  int map[8];
  for (int j = 0; j < m->njnt; j++) {
    if (m->joints[j].dofadr < 0) { /* the base's weld: no joint in MuJoCo */
      continue;
    }
    const int id = mj_name2id(mm, mjOBJ_JOINT, m->joints[j].name);
    assert_true(id >= 0);
    map[j] = mm->jnt_dofadr[id];
    const int k = map[j];
    print_message("%-10s damping %.3g (MuJoCo %.3g), armature %.3g (MuJoCo %.3g)\n",
                  m->joints[j].name, m->joints[j].damping, mm->dof_damping[k],
                  m->joints[j].armature, mm->dof_armature[k]);
    assert_true(m->joints[j].damping == mm->dof_damping[k]);
    assert_true(m->joints[j].armature == mm->dof_armature[k]);
  }
  /* the values a reader that kept only one top-level default would get wrong */
  const sim_joint *loose = &m->joints[m->njnt - 1];
  assert_string_equal(loose->name, "free_hinge");
  assert_true(loose->armature == 0.003 && loose->damping == 0.3);
  for (int a = 0; a < m->nu; a++) {
    assert_true(mm->actuator_forcelimited[a]);
    assert_true(m->actuators[a].force_limit == mm->actuator_forcerange[2 * a + 1]);
    assert_true(m->actuators[a].kp == mm->actuator_gainprm[mjNGAIN * a]);
  }
  sim_data *d = sim_data_new(m);
  mjData *md = mj_makeData(mm);
  d->ctrl[0] = md->ctrl[0] = 1.2; /* 50 N·m/rad × 1.2 rad: far over the 1.5 N·m limit */
  d->ctrl[1] = md->ctrl[1] = -0.8;
  double worst = 0;
  for (int s = 0; s < 2000; s++) {
    sim_step(m, d);
    mj_step(mm, md);
    for (int j = 0; j < m->njnt; j++) {
      if (m->joints[j].dofadr >= 0) {
        worst = fmax(worst, fabs(d->qpos[m->joints[j].qposadr] - md->qpos[map[j]]));
      }
    }
  }
  print_message("servo arm with two top-level defaults, 2 s RK4: max |dq| against MuJoCo %.3g "
                "(pan at %.3f rad)\n", worst, d->qpos[0]);
  assert_true(fabs(d->qpos[0]) > 0.1); /* it moved */
  assert_true(worst <= 1e-8);
  mj_deleteData(md);
  mj_deleteModel(mm);
  sim_data_free(d);
  sim_model_free(m);
}

#else
static void skip_without_mujoco(void **state) {
  (void)state;
  print_message("MuJoCo (libmujoco-dev) not found: comparison skipped\n");
  skip();
}
#define test_mjcf_degrees_matches_mujoco skip_without_mujoco
#define test_mjcf_radians_matches_mujoco skip_without_mujoco
#define test_urdf_twin_matches_mujoco skip_without_mujoco
#define test_contacts_match_mujoco skip_without_mujoco
#define test_mjcf_cylinder_mesh_match_mujoco skip_without_mujoco
#define test_two_top_level_defaults_match_mujoco skip_without_mujoco
#endif

static int make_dir(void **state) {
  (void)state;
  snprintf(tmp_dir, sizeof tmp_dir, "/tmp/achilles_import_XXXXXX");
  return mkdtemp(tmp_dir) ? 0 : -1;
}

static int remove_dir(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reports_name_lines),
      cmocka_unit_test(test_errors_name_file_and_line),
      cmocka_unit_test(test_limits_and_friction),
      cmocka_unit_test(test_urdf_collisions),
      cmocka_unit_test(test_contact_groups_and_excludes),
      cmocka_unit_test(test_mjcf_mesh_reports),
      cmocka_unit_test(test_urdf_equals_mjcf_twin),
      cmocka_unit_test(test_mjcf_multi_dof_loads),
      cmocka_unit_test(test_urdf_planar_floating_equals_mjcf),
      cmocka_unit_test(test_mjcf_degrees_matches_mujoco),
      cmocka_unit_test(test_mjcf_radians_matches_mujoco),
      cmocka_unit_test(test_urdf_twin_matches_mujoco),
      cmocka_unit_test(test_mjcf_multi_dof_matches_mujoco),
      cmocka_unit_test(test_contacts_match_mujoco),
      cmocka_unit_test(test_mjcf_cylinder_mesh_match_mujoco),
      cmocka_unit_test(test_position_kv_and_motor_forcerange),
      cmocka_unit_test(test_urdf_token_mass_frame),
      cmocka_unit_test(test_two_top_level_defaults_match_mujoco),
  };
  return cmocka_run_group_tests_name("import", tests, make_dir, remove_dir);
}
