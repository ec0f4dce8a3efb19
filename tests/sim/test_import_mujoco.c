/* tests/sim/test_import_mujoco.c: MJCF and URDF import against MuJoCo 2.2.2 loading the same
 * files: 4 s side by side from a bent start (degrees, radians, several joints per body, the URDF
 * twin), contacts beside MuJoCo's, cylinders and meshes, and two top-level default classes.
 * Without libmujoco-dev (or with ACHILLES_TEST_HIDE=libmujoco-dev) each comparison reports itself
 * skipped (a failure under CI=true). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "import_fixture.h"
#include "sim/sim.h"
#include "support/mujoco.h"
#include "support/skip.h"
#include "support/tmp.h"


#if ACHILLES_HAVE_MUJOCO

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


/* 4 s side by side from a bent start with constant controls; joints matched by name */
static double compare_with_mujoco(const char *path, double seconds) {
  char err[1024];
  reports r = {"", 0};
  sim_model *m = import(path, &r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  mjModel *mm = ts_mj_load(path);
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

/* text as name, 4 s beside MuJoCo: only rounding separates the engines (bound 1e-8 rad) */
static void expect_mujoco_trajectory(const char *name, const char *text, const char *what) {
  char path[256];
  write_file(path, sizeof path, name, text);
  const double worst = compare_with_mujoco(path, 4.0);
  print_message("%s, 4 s: max |dq| against MuJoCo %.3g\n", what, worst);
  assert_true(worst <= 1e-8);
}

/* both engines integrate the same ODE: only rounding separates them (the MJCF's inertias are
 * aligned with the geoms' axes, so MuJoCo's eigen-decomposition of them is exact) */
static void test_mjcf_degrees_matches_mujoco(void **state) {
  (void)state;
  expect_mujoco_trajectory("arm_deg.xml", arm_deg, "subset arm (degrees, RK4)");
}

static void test_mjcf_radians_matches_mujoco(void **state) {
  (void)state;
  expect_mujoco_trajectory("arm_rad.xml", arm_rad, "radian arm (zyx euler, Euler)");
}

/* Euler: the same method in both engines (their RK4s differ on quaternions, see
 * test_mujoco_reference.c) */
static void test_mjcf_multi_dof_matches_mujoco(void **state) {
  (void)state;
  expect_mujoco_trajectory("multi.xml", multi_mjcf, "planar root, free body, ball joint (Euler)");
}

static void test_urdf_twin_matches_mujoco(void **state) {
  (void)state;
  /* limits off in both engines: the unconstrained dynamics agree to rounding */
  char text[4096];
  const char *world = strstr(twin_mjcf, "  <worldbody>");
  const int n = snprintf(text, sizeof text, "%.*s  <option><flag limit=\"disable\"/></option>\n%s",
                         (int)(world - twin_mjcf), twin_mjcf, world);
  assert_true(n > 0 && (size_t)n < sizeof text);
  expect_mujoco_trajectory("twin_free.xml", text, "URDF twin in MJCF");
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
  char path[256];
  reports r = {"", 0};
  sim_model *m = import_text("drop.xml", xml, &r);
  ts_tmp_path(path, sizeof path, "drop.xml");
  assert_int_equal(m->ngeom, 4); /* floor, post, rod, b: the visual sphere is not a shape */
  mjModel *mm = ts_mj_load(path);
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
  char path[256];
  ts_tmp_path(path, sizeof path, "parts");
  assert_int_equal(mkdir(path, 0700), 0);
  write_cube_stl_binary("parts/cube.stl");
  reports r = {"", 0};
  sim_model *m = import_text("shapes.xml", xml, &r);
  ts_tmp_path(path, sizeof path, "shapes.xml");
  print_message("%s", r.text);
  assert_non_null(strstr(r.text, "<asset><texture> ignored: visual only"));
  assert_int_equal(m->ngeom, 3);
  assert_int_equal(m->geoms[1].type, SIM_GEOM_CYLINDER);
  assert_true(fabs(m->geoms[1].size[1] - 0.5 * sqrt(0.04 + 0.0004 + 0.0025)) < 1e-15);
  assert_int_equal(m->geoms[2].type, SIM_GEOM_MESH);
  assert_int_equal(m->geoms[2].hull_nvert, 8);
  mjModel *mm = ts_mj_load(path);
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
  mjModel *mm = ts_mj_load(path);
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

#endif

TS_MUJOCO_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_mjcf_degrees_matches_mujoco,
                    test_mjcf_radians_matches_mujoco, test_mjcf_multi_dof_matches_mujoco,
                    test_urdf_twin_matches_mujoco, test_contacts_match_mujoco,
                    test_mjcf_cylinder_mesh_match_mujoco, test_two_top_level_defaults_match_mujoco)
