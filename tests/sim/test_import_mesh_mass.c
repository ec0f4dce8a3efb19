/* tests/sim/test_import_mesh_mass.c: a mesh geom gives its body the mass, centre of mass and
 * principal moments MuJoCo 2.2.2 gives it (sim/mesh_inertia.c), for an OBJ file (quads split as
 * MuJoCo splits them) and a binary STL file of the same skewed prism, scaled unevenly, placed
 * and turned in its body, beside a box; and the OBJ files MuJoCo refuses, refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_fixture.h"
#include "sim/mesh.h"
#include "sim/sim.h"
#include "support/mujoco.h"
#include "support/skip.h"
#include "support/tmp.h"

/* a prism on a skewed triangle, leaning, away from the origin; faces wound outwards */
static const float prism[6][3] = {{0.3f, 0.1f, 0.2f},   {1.3f, 0.1f, 0.2f},  {0.5f, 0.8f, 0.2f},
                                  {0.4f, 0.15f, 0.8f}, {1.4f, 0.15f, 0.8f}, {0.6f, 0.85f, 0.8f}};
static const char prism_obj[] =
    "# a prism\nmtllib none.mtl\n"
    "v 0.3 0.1 0.2\nv 1.3 0.1 0.2\nv 0.5 0.8 0.2\nv 0.4 0.15 0.8\nv 1.4 0.15 0.8\nv 0.6 0.85 0.8\n"
    "vt 0 0\nvn 0 0 1\nusemtl m\n"
    "f 1/1/1 3/1/1 2/1/1\nf 4/1/1 5/1/1 6/1/1\nf 1/1/1 2/1/1 5/1/1 4/1/1\n"
    "f 2/1/1 3/1/1 6/1/1 5/1/1\nf -4/1/1 -6/1/1 -3/1/1 -1/1/1\n";
/* every corner names a texture coordinate and a normal: MuJoCo 2.2.2 reads before its arrays
 * for a corner without them in a file that has some (AddressSanitizer stops it); the corner
 * forms "1", "1//1" are read in test_obj_reading */
static const int prism_tri[8][3] = {{0, 2, 1}, {3, 4, 5}, {0, 1, 4}, {0, 4, 3},
                                    {1, 2, 5}, {1, 5, 4}, {2, 0, 3}, {2, 3, 5}};

static void write_prism_stl(const char *name) {
  unsigned char data[84 + 8 * 50];
  memset(data, 0, sizeof data);
  data[80] = 8;
  for (int t = 0; t < 8; t++) {
    for (int v = 0; v < 3; v++) {
      memcpy(data + 84 + 50 * t + 12 + 12 * v, prism[prism_tri[t][v]], 12); /* little-endian */
    }
  }
  char path[256];
  ts_tmp_path(path, sizeof path, name);
  ts_write_bytes(path, data, sizeof data);
}

static const char robot_xml[] =
    "<mujoco>\n"
    "  <asset>\n"
    "    <mesh name=\"a\" file=\"prism.obj\" scale=\"0.1 0.2 0.15\"/>\n"
    "    <mesh name=\"b\" file=\"prism.stl\" scale=\"0.2 0.1 0.1\"/>\n"
    "  </asset>\n"
    "  <worldbody>\n"
    "    <body name=\"obj\" pos=\"0 0 1\">\n"
    "      <joint axis=\"0 1 0\"/>\n"
    "      <geom type=\"mesh\" mesh=\"a\" pos=\"0.1 -0.05 0.02\" euler=\"20 -35 50\" "
    "density=\"700\"/>\n"
    "      <geom type=\"box\" size=\"0.05 0.02 0.01\" pos=\"-0.1 0 0\"/>\n"
    "    </body>\n"
    "    <body name=\"stl\" pos=\"0 1 1\">\n"
    "      <joint axis=\"1 0 0\"/>\n"
    "      <geom type=\"mesh\" mesh=\"b\" euler=\"-10 80 5\" mass=\"0.3\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static void write_robot(char *path, size_t path_sz) {
  char p[256];
  write_file(p, sizeof p, "prism.obj", prism_obj);
  write_prism_stl("prism.stl");
  write_file(path, path_sz, "prism_robot.xml", robot_xml);
}

static void test_mesh_mass_is_mujocos(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
#if ACHILLES_HAVE_MUJOCO
  char path[256], err[1024];
  write_robot(path, sizeof path);
  reports r = {"", 0};
  sim_model *m = import(path, &r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  print_message("%s", r.text);
  mjModel *mm = ts_mj_load(path);
  mjData *md = mj_makeData(mm);
  mj_kinematics(mm, md);
  sim_data *d = sim_data_new(m);
  sim_kinematics(m, d);
  for (int b = 1; b < m->nbody; b++) {
    const int id = mj_name2id(mm, mjOBJ_BODY, m->bodies[b].name);
    assert_true(id > 0);
    double world[9] = {0}, ev[3], vec[9], quat[4];
    const double *R = d->xmat + 9 * b, *I = m->bodies[b].inertia;
    for (int i = 0; i < 9; i++) {
      for (int k = 0; k < 3; k++) {
        for (int l = 0; l < 3; l++) {
          world[i] += R[3 * (i / 3) + k] * I[3 * k + l] * R[3 * (i % 3) + l];
        }
      }
    }
    mju_eig3(ev, vec, quat, world); /* decreasing, as MuJoCo's body_inertia */
    double dm = fabs(m->bodies[b].mass - mm->body_mass[id]) / mm->body_mass[id], dc = 0, di = 0;
    for (int i = 0; i < 3; i++) {
      dc = fmax(dc, fabs(d->xipos[3 * b + i] - md->xipos[3 * id + i]));
      di = fmax(di, fabs(ev[i] - mm->body_inertia[3 * id + i]) / mm->body_inertia[3 * id]);
    }
    print_message("%s: mass %.6g (MuJoCo %.6g), relative %.1e; centre of mass %.1e m; principal "
                  "moments %.1e relative\n", m->bodies[b].name, m->bodies[b].mass,
                  mm->body_mass[id], dm, dc, di);
    assert_true(dm < 1e-12 && dc < 1e-12 && di < 1e-9);
  }
  assert_non_null(strstr(r.text, "only STL meshes collide")); /* the OBJ one: mass only */
  sim_data_free(d);
  sim_model_free(m);
  mj_deleteData(md);
  mj_deleteModel(mm);
#endif
}

static void expect_obj_error(const char *text, const char *message) {
  char path[256], err[512];
  write_file(path, sizeof path, "bad.obj", text);
  float *tri = NULL;
  int ntri = 0;
  const int rc = sim_mesh_read(&tri, &ntri, path, err, sizeof err);
  if (rc == 0 || !strstr(err, message)) {
    fail_msg("got '%s', expected '%s'", rc == 0 ? "triangles" : err, message);
  }
}

/* what MuJoCo refuses in an OBJ file, refused with the line; a second object is not read */
static void test_obj_reading(void **state) {
  (void)state;
  expect_obj_error("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nv 1 1 1\nf 1 2 3 4 5\n",
                   "bad.obj:6: only triangles and quads are read");
  expect_obj_error("v 0 0 0\nv 1 0 0\nf 1 2 3\n", "bad.obj:3: a face corner names no vertex");
  expect_obj_error("v 0 0 x\n", "bad.obj:1: a vertex needs three finite numbers");
  expect_obj_error("v 0 0 0\n", "bad.obj: no faces");
  char path[256], err[512];
  write_file(path, sizeof path, "two.obj",
             "o first\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\no second\nv 0 0 1\nf 1 2 4\n");
  float *tri = NULL;
  int ntri = 0;
  assert_int_equal(sim_mesh_read(&tri, &ntri, path, err, sizeof err), 0);
  assert_int_equal(ntri, 1);
  free(tri);
  /* the corner forms: "1", "1/2", "1//3", "1/2/3" name the same vertex */
  write_file(path, sizeof path, "forms.obj",
             "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvn 0 0 1\nf 1 2/1 3//1\nf 1/1/1 3 2//1\n");
  assert_int_equal(sim_mesh_read(&tri, &ntri, path, err, sizeof err), 0);
  assert_int_equal(ntri, 2);
  assert_true(tri[3] == 1 && tri[7] == 1 && tri[9 + 3] == 0 && tri[9 + 4] == 1);
  free(tri);
  /* a tetrahedron wound inwards: unsigned pyramids take it, MuJoCo's exact mode refuses it */
  write_file(path, sizeof path, "inward.obj",
             "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 4 2\nf 2 4 3\nf 1 3 4\n");
  assert_int_equal(sim_mesh_read(&tri, &ntri, path, err, sizeof err), 0);
  const double one[3] = {1, 1, 1};
  sim_mesh_mass mm;
  assert_int_equal(sim_mesh_inertia(&mm, tri, ntri, one, 0, "inward", err, sizeof err), 0);
  assert_true(fabs(mm.volume - 1.0 / 6) < 1e-7);
  assert_int_equal(sim_mesh_inertia(&mm, tri, ntri, one, 1, "inward", err, sizeof err), -1);
  assert_non_null(strstr(err, "inward: the mesh has no volume (MuJoCo refuses it too)"));
  free(tri);
  /* a flat mesh has no volume: MuJoCo's error too, and the geom's line names it */
  write_file(path, sizeof path, "flat.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 3 2\n");
  reports r = {"", 0};
  write_file(path, sizeof path, "flat.xml",
             "<mujoco>\n<asset><mesh file=\"flat.obj\"/></asset>\n<worldbody>\n<body>\n"
             "<joint/>\n<geom type=\"mesh\" mesh=\"flat\"/>\n</body>\n</worldbody>\n</mujoco>\n");
  assert_null(import(path, &r, 0, err, sizeof err));
  assert_non_null(strstr(err, "flat.xml:6: <geom type=\"mesh\" mesh=\"flat\">: its mass:"));
  print_message("%s\n", err);
  /* what would change the mass that is not imported: refused, not ignored */
  write_prism_stl("p.stl");
  import_refused("shell.xml",
                 "<mujoco>\n<asset><mesh file=\"p.stl\"/></asset>\n<worldbody>\n<body>\n"
                 "<joint/>\n<geom type=\"mesh\" mesh=\"p\" shellinertia=\"true\"/>\n</body>\n"
                 "</worldbody>\n</mujoco>\n",
                 "shell.xml:6: <geom shellinertia=\"true\">");
  import_refused("ref.xml",
                 "<mujoco>\n<asset><mesh file=\"p.stl\" refpos=\"0 0 1\"/></asset>\n<worldbody>\n"
                 "<body>\n<joint/>\n<geom type=\"mesh\" mesh=\"p\"/>\n</body>\n</worldbody>\n"
                 "</mujoco>\n",
                 "ref.xml:6: <geom type=\"mesh\" mesh=\"p\">: its <mesh> has refpos");
}

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_mesh_mass_is_mujocos, test_obj_reading)
