/* tests/sim/test_model_load.c: the robot description loader accepts the shipped configs and
 * rejects bad descriptions with a message naming the JSON path and what was expected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim.h"
#include "support/model.h"
#include "support/skip.h"

/* A valid two-body description; each bad case below patches one piece of it. */
#define BODY_A                                                                                 \
  "{\"name\":\"a\",\"parent\":\"world\",\"joint\":{\"name\":\"ja\",\"type\":\"hinge\","     \
  "\"axis\":[0,0,1]},\"inertial\":{\"mass\":1,\"com\":[0.5,0,0],\"inertia\":[0.01,0.02,0.02,0,0,0]}}"
#define BODY_B                                                                                 \
  "{\"name\":\"b\",\"parent\":\"a\",\"pos\":[1,0,0],\"joint\":{\"name\":\"jb\",\"type\":"    \
  "\"slide\",\"axis\":[1,0,0]},\"inertial\":{\"mass\":2,\"inertia\":[0.01,0.01,0.01,0,0,0]}}"

static void expect_error(const char *json, const char *fragment1, const char *fragment2) {
  char err[512] = "";
  sim_model *m = sim_model_load_string(json, "test.json", err, sizeof err);
  if (m) {
    sim_model_free(m);
    fail_msg("accepted a bad description: %s", json);
  }
  if (!strstr(err, fragment1) || (fragment2 && !strstr(err, fragment2))) {
    fail_msg("message '%s' lacks '%s' / '%s'", err, fragment1, fragment2 ? fragment2 : "");
  }
  assert_non_null(strstr(err, "test.json"));
}

static void test_shipped_configs_load(void **state) {
  (void)state;
  const char *names[] = {"one_link_arm", "two_link_arm", "double_pendulum", "club_arm"};
  const int nv[] = {1, 2, 2, 4};
  for (int i = 0; i < 4; i++) {
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/configs/%s.json", ACHILLES_SOURCE_DIR, names[i]);
    sim_model *m = sim_model_load_file(path, err, sizeof err);
    if (!m) {
      fail_msg("%s", err);
    }
    assert_int_equal(m->nv, nv[i]);
    assert_int_equal(m->nbody, nv[i] + 1);
    sim_model_free(m);
  }
}

static void test_valid_minimal(void **state) {
  (void)state;
  sim_model *m = ts_model("{\"bodies\":[" BODY_A "," BODY_B "]}");
  assert_int_equal(m->nv, 2);
  assert_int_equal(m->joints[1].type, SIM_JOINT_SLIDE);
  assert_int_equal(m->bodies[2].parent, 1);
  /* defaults */
  assert_true(m->opt.timestep == 0.002);
  assert_true(m->opt.gravity[2] == -9.81);
  assert_int_equal(m->opt.integrator, SIM_INTEGRATOR_EULER);
  assert_int_equal(m->opt.midpoint_iterations, 4);
  sim_model_free(m);
}

/* Children listed before parents are reordered so every parent precedes its children. */
static void test_out_of_order_bodies_are_sorted(void **state) {
  (void)state;
  sim_model *m = ts_model("{\"bodies\":[" BODY_B "," BODY_A "]}");
  assert_string_equal(m->bodies[1].name, "a");
  assert_string_equal(m->bodies[2].name, "b");
  assert_int_equal(m->bodies[2].parent, 1);
  sim_model_free(m);
}

static void test_rpy_matches_quat(void **state) {
  (void)state;
  /* yaw of 90° about z equals the quaternion [cos 45°, 0, 0, sin 45°] */
  const char *rpy = "{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"rpy\":[0,0,1."
                    "5707963267948966],\"inertial\":{\"mass\":1,\"inertia\":[1,1,1,0,0,0]}}]}";
  char err[256];
  sim_model *m = sim_model_load_string(rpy, "t", err, sizeof err);
  assert_non_null(m);
  assert_true(fabs(m->bodies[1].quat[0] - sqrt(0.5)) < 1e-15);
  assert_true(fabs(m->bodies[1].quat[3] - sqrt(0.5)) < 1e-15);
  assert_int_equal(m->nv, 0); /* no joint means fixed */
  sim_model_free(m);
}

TS_TEST(test_invalid_json_names_line,
        expect_error("{\n\"bodies\": [\n  {\"name\": }\n]}", "line 3", "invalid JSON"))

static void test_unknown_parent(void **state) {
  (void)state;
  expect_error("{\"bodies\":[" BODY_A ",{\"name\":\"b\",\"parent\":\"nope\",\"inertial\":{\"mass\""
               ":1,\"inertia\":[1,1,1,0,0,0]}}]}",
               "bodies[1].parent", "unknown body \"nope\"");
}

static void test_cycle(void **state) {
  (void)state;
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"b\",\"inertial\":{\"mass\":1,\"inertia\":[1,"
               "1,1,0,0,0]}},{\"name\":\"b\",\"parent\":\"a\",\"inertial\":{\"mass\":1,\"inertia\""
               ":[1,1,1,0,0,0]}}]}",
               "bodies[0].parent", "cycle");
}

TS_TEST(test_duplicate_names,
        expect_error("{\"bodies\":[" BODY_A "," BODY_A "]}", "bodies[1].name",
                     "duplicate body name"))

static void test_bad_axis(void **state) {
  (void)state;
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"joint\":{\"name\":\"j\",\"type\":"
               "\"hinge\",\"axis\":[0,0,0]},\"inertial\":{\"mass\":1,\"inertia\":[1,1,1,0,0,0]}}]}",
               "bodies[0].joint.axis", "must not be zero");
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"joint\":{\"name\":\"j\",\"type\":"
               "\"hinge\",\"axis\":[0,0,2]},\"inertial\":{\"mass\":1,\"inertia\":[1,1,1,0,0,0]}}]}",
               "bodies[0].joint.axis", "unit length");
}

static void test_bad_mass(void **state) {
  (void)state;
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"inertial\":{\"mass\":0,"
               "\"inertia\":[1,1,1,0,0,0]}}]}",
               "bodies[0].inertial.mass", "must be >= 1e-06");
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"inertial\":{\"mass\":-2,"
               "\"inertia\":[1,1,1,0,0,0]}}]}",
               "bodies[0].inertial.mass", "must be >= 1e-06");
}

static void test_bad_inertia(void **state) {
  (void)state;
  /* not symmetric */
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"inertial\":{\"mass\":1,"
               "\"inertia\":[[1,0.1,0],[0,1,0],[0,0,1]]}}]}",
               "bodies[0].inertial.inertia", "not symmetric");
  /* indefinite: a negative principal moment */
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"inertial\":{\"mass\":1,"
               "\"inertia\":[1,1,-1,0,0,0]}}]}",
               "bodies[0].inertial.inertia", "not positive definite");
  /* positive definite off-diagonal case that is still indefinite: [1 2;2 1] has eigenvalue −1 */
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"inertial\":{\"mass\":1,"
               "\"inertia\":[1,1,1,2,0,0]}}]}",
               "bodies[0].inertial.inertia", "not positive definite");
  /* triangle inequality: 1 + 1 < 3 */
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"inertial\":{\"mass\":1,"
               "\"inertia\":[1,1,3,0,0,0]}}]}",
               "bodies[0].inertial.inertia", "triangle inequality");
}

static void test_non_finite_numbers(void **state) {
  (void)state;
  /* JSON has no NaN literal; an overflowing number is the way an infinity gets in */
  expect_error("{\"timestep\":1e999,\"bodies\":[" BODY_A "]}", "timestep", "finite");
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"pos\":[0,-1e400,0],"
               "\"inertial\":{\"mass\":1,\"inertia\":[1,1,1,0,0,0]}}]}",
               "bodies[0].pos[1]", "finite");
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"inertial\":{\"mass\":1,"
               "\"inertia\":[1,1,1e999,0,0,0]}}]}",
               "bodies[0].inertial.inertia[2]", "finite");
}

static void test_unknown_keys(void **state) {
  (void)state;
  expect_error("{\"timestpe\":0.001,\"bodies\":[" BODY_A "]}", "timestpe", "unknown key");
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"joint\":{\"name\":\"j\",\"type\":"
               "\"hinge\",\"axis\":[0,0,1],\"dampnig\":1},\"inertial\":{\"mass\":1,\"inertia\":[1,"
               "1,1,0,0,0]}}]}",
               "bodies[0].joint.dampnig", "unknown key");
}

#define INERTIAL_1 "\"inertial\":{\"mass\":1,\"inertia\":[1,1,1,0,0,0]}"

/* ball, free and several joints per body: addressing, qpos0 and what is refused */
static void test_multi_dof_joints(void **state) {
  (void)state;
  sim_model *m = ts_model(
      "{\"bodies\":[{\"name\":\"base\",\"parent\":\"world\",\"pos\":[1,2,3],"
      "\"quat\":[0,0,0,1],\"joint\":{\"name\":\"root\",\"type\":\"free\"}," INERTIAL_1 "},"
      "{\"name\":\"arm\",\"parent\":\"base\",\"joint\":{\"name\":\"sh\",\"type\":\"ball\","
      "\"initial\":[0,1,0,0],\"damping\":0.5}," INERTIAL_1 "},"
      "{\"name\":\"leg\",\"parent\":\"base\",\"joints\":[{\"name\":\"x\",\"type\":\"slide\","
      "\"axis\":[1,0,0],\"initial\":0.25},{\"name\":\"z\",\"type\":\"slide\",\"axis\":[0,0,1]},"
      "{\"name\":\"ry\",\"type\":\"hinge\",\"axis\":[0,1,0]}]," INERTIAL_1 "}]}");
  assert_int_equal(m->njnt, 5);
  assert_int_equal(m->nq, 7 + 4 + 3);
  assert_int_equal(m->nv, 6 + 3 + 3);
  const double qpos0[] = {1, 2, 3, 0, 0, 0, 1, 0, 1, 0, 0, 0.25, 0, 0};
  for (int k = 0; k < m->nq; k++) {
    assert_true(m->qpos0[k] == qpos0[k]);
  }
  const sim_body *leg = &m->bodies[sim_model_body(m, "leg")];
  assert_int_equal(leg->jntnum, 3);
  assert_int_equal(leg->dofnum, 3);
  assert_int_equal(leg->dofadr, 9);
  assert_true(leg->multi_dof);
  assert_int_equal(m->joints[sim_model_joint(m, "sh")].dofadr, 6);
  assert_int_equal(m->joints[sim_model_joint(m, "sh")].qposadr, 7);
  assert_int_equal(m->dof_parent[0], -1);
  assert_int_equal(m->dof_parent[5], 4);
  assert_int_equal(m->dof_parent[6], 5); /* the ball's first dof hangs below the free joint */
  assert_int_equal(m->dof_parent[9], 5);
  assert_int_equal(m->dof_parent[11], 10);
  sim_model_free(m);
  expect_error("{\"bodies\":[" BODY_A ",{\"name\":\"b\",\"parent\":\"a\",\"joint\":{\"name\":"
               "\"f\",\"type\":\"free\"}," INERTIAL_1 "}]}",
               "bodies[1].parent", "child of \"world\"");
  expect_error("{\"bodies\":[{\"name\":\"b\",\"parent\":\"world\",\"joint\":{\"name\":\"f\","
               "\"type\":\"ball\",\"stiffness\":1}," INERTIAL_1 "}]}",
               "bodies[0].joint.stiffness", "not supported on a ball joint");
  expect_error("{\"bodies\":[{\"name\":\"b\",\"parent\":\"world\",\"joint\":{\"name\":\"f\","
               "\"type\":\"ball\",\"initial\":[0,0,0,0]}," INERTIAL_1 "}]}",
               "bodies[0].joint.initial", "nonzero length");
  expect_error("{\"bodies\":[{\"name\":\"b\",\"parent\":\"world\",\"joints\":[{\"name\":\"f\","
               "\"type\":\"ball\"},{\"name\":\"h\",\"type\":\"hinge\",\"axis\":[1,0,0]}],"
               INERTIAL_1 "}]}",
               "bodies[0].joints[1]", "a ball and a hinge cannot share a body");
  expect_error("{\"bodies\":[{\"name\":\"b\",\"parent\":\"world\",\"joints\":[{\"name\":\"f\","
               "\"type\":\"free\"},{\"name\":\"h\",\"type\":\"hinge\",\"axis\":[1,0,0]}],"
               INERTIAL_1 "}]}",
               "bodies[0].joints[0]", "alone on its body");
  expect_error("{\"bodies\":[{\"name\":\"b\",\"parent\":\"world\",\"joints\":[{\"name\":\"f\","
               "\"type\":\"ball\"},{\"name\":\"f\",\"type\":\"slide\",\"axis\":[1,0,0]}],"
               INERTIAL_1 "}]}",
               "bodies[0].joints[1].name", "duplicate joint name");
  expect_error("{\"bodies\":[{\"name\":\"b\",\"parent\":\"world\",\"joints\":[{\"name\":\"a\","
               "\"type\":\"ball\"},{\"name\":\"b\",\"type\":\"slide\",\"axis\":[1,0,0]},"
               "{\"name\":\"c\",\"type\":\"slide\",\"axis\":[1,0,0]},{\"name\":\"d\",\"type\":"
               "\"slide\",\"axis\":[0,1,0]},{\"name\":\"e\",\"type\":\"slide\",\"axis\":[0,0,1]}],"
               INERTIAL_1 "}]}",
               "bodies[0].joints[4]", "at most 6 degrees");
  expect_error("{\"bodies\":[{\"name\":\"b\",\"parent\":\"world\",\"joint\":{\"name\":\"f\","
               "\"type\":\"ball\"}," INERTIAL_1 "}],\"actuators\":[{\"name\":\"m\",\"joint\":\"f\","
               "\"type\":\"motor\"}]}",
               "actuators[0].joint", "several degrees of freedom");
}

static void test_other_bad_values(void **state) {
  (void)state;
  expect_error("{\"bodies\":[]}", "bodies", "empty");
  expect_error("{\"integrator\":\"leapfrog\",\"bodies\":[" BODY_A "]}", "integrator", "rk4");
  expect_error("{\"timestep\":0,\"bodies\":[" BODY_A "]}", "timestep", "must be >= 1e-06");
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"joint\":{\"name\":\"j\",\"type\":"
               "\"spherical\"},\"inertial\":{\"mass\":1,\"inertia\":[1,1,1,0,0,0]}}]}",
               "bodies[0].joint.type", "unknown joint type");
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"joint\":{\"name\":\"j\",\"type\":"
               "\"hinge\",\"axis\":[1,0,0],\"range\":[1,-1]},\"inertial\":{\"mass\":1,\"inertia\":"
               "[1,1,1,0,0,0]}}]}",
               "bodies[0].joint.range", "below");
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"joint\":{\"name\":\"j\",\"type\":"
               "\"hinge\",\"axis\":[1,0,0],\"damping\":-1},\"inertial\":{\"mass\":1,\"inertia\":"
               "[1,1,1,0,0,0]}}]}",
               "bodies[0].joint.damping", ">= 0");
  expect_error("{\"bodies\":[" BODY_A "],\"sites\":[{\"name\":\"s\",\"body\":\"zz\"}]}",
               "sites[0].body", "unknown body");
  expect_error("{\"bodies\":[{\"name\":\"world\",\"parent\":\"world\",\"inertial\":{\"mass\":1,"
               "\"inertia\":[1,1,1,0,0,0]}}]}",
               "bodies[0].name", "reserved");
}

/* A joint of body a with extra keys. */
#define JOINT_A(extra)                                                                          \
  "{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"joint\":{\"name\":\"ja\",\"type\":"       \
  "\"hinge\",\"axis\":[0,0,1]" extra "},\"inertial\":{\"mass\":1,\"com\":[0.5,0,0],"           \
  "\"inertia\":[0.01,0.02,0.02,0,0,0]}}]}"

/* limits and friction: MuJoCo's defaults, and every key read */
static void test_constraint_keys(void **state) {
  (void)state;
  char err[256];
  sim_model *m = sim_model_load_string(JOINT_A(""), "t", err, sizeof err);
  assert_non_null(m);
  const sim_joint *j = &m->joints[0];
  assert_int_equal(j->limited, 0);
  assert_true(j->frictionloss == 0);
  const double ref[2] = {0.02, 1}, imp[5] = {0.9, 0.95, 0.001, 0.5, 2};
  for (int k = 0; k < 2; k++) {
    assert_true(j->solref_limit[k] == ref[k] && j->solref_friction[k] == ref[k]);
  }
  for (int k = 0; k < 5; k++) {
    assert_true(j->solimp_limit[k] == imp[k] && j->solimp_friction[k] == imp[k]);
  }
  assert_int_equal(m->opt.solver_iterations, 20);
  assert_true(m->opt.solver_tolerance == 1e-8);
  assert_int_equal(m->nefc_max, 0);
  /* M at q = 0 is the hinge's inertia about z: I_zz + m·r² */
  assert_true(fabs(j->invweight0 - 1 / (0.02 + 0.25)) < 1e-12);
  assert_true(fabs(m->meaninertia - (0.02 + 0.25)) < 1e-12);
  sim_model_free(m);

  m = sim_model_load_string(
      "{\"solver_iterations\":7,\"solver_tolerance\":0,\"bodies\":[{\"name\":\"a\",\"parent\":"
      "\"world\",\"joint\":{\"name\":\"ja\",\"type\":\"hinge\",\"axis\":[0,0,1],\"limited\":true,"
      "\"range\":[-1,2],\"solref_limit\":[0.05,0.5],\"solimp_limit\":[0.8,0.9,0.01,0.4,3],"
      "\"frictionloss\":0.7,\"solref_friction\":[-100,-10],"
      "\"solimp_friction\":[0.5,0.6,0,0.5,1]},\"inertial\":{\"mass\":1,"
      "\"inertia\":[0.01,0.02,0.02,0,0,0]}}]}", "t", err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  j = &m->joints[0];
  assert_int_equal(j->limited, 1);
  assert_true(j->range[0] == -1 && j->range[1] == 2);
  assert_true(j->solref_limit[0] == 0.05 && j->solref_limit[1] == 0.5);
  assert_true(j->solimp_limit[2] == 0.01 && j->solimp_limit[4] == 3);
  assert_true(j->frictionloss == 0.7);
  assert_true(j->solref_friction[0] == -100 && j->solimp_friction[1] == 0.6);
  assert_int_equal(m->opt.solver_iterations, 7);
  assert_true(m->opt.solver_tolerance == 0);
  assert_int_equal(m->nefc_max, 2);
  sim_model_free(m);

  /* a range alone is stored, not enforced (MuJoCo 2.2.2's limited="false") */
  m = sim_model_load_string(JOINT_A(",\"range\":[-1,1]"), "t", err, sizeof err);
  assert_non_null(m);
  assert_int_equal(m->joints[0].limited, 0);
  assert_int_equal(m->nefc_max, 0);
  sim_model_free(m);
}

static void test_bad_constraint_keys(void **state) {
  (void)state;
  expect_error(JOINT_A(",\"limited\":1"), "bodies[0].joint.limited", "true or false");
  expect_error(JOINT_A(",\"limited\":true"), "bodies[0].joint.range", "missing");
  expect_error(JOINT_A(",\"limited\":true,\"range\":[1,1]"), "bodies[0].joint.range", "below");
  expect_error(JOINT_A(",\"frictionloss\":-1"), "bodies[0].joint.frictionloss", NULL);
  expect_error(JOINT_A(",\"pos\":[0,0,0.1]"), "bodies[0].joint.pos", "a single joint sits");
  expect_error(JOINT_A(",\"solref_friction\":[0.02]"), "bodies[0].joint.solref_friction", NULL);
  expect_error(JOINT_A(",\"solimp_limit\":\"soft\""), "bodies[0].joint.solimp_limit", NULL);
  expect_error(JOINT_A(",\"solimp_limit\":[0.9,0.95,0.001,0.5]"), "bodies[0].joint.solimp_limit",
               NULL);
  expect_error("{\"solver_iterations\":0,\"bodies\":[" BODY_A "]}", "solver_iterations",
               "integer");
  expect_error("{\"solver_iterations\":2.5,\"bodies\":[" BODY_A "]}", "solver_iterations",
               "integer");
  expect_error("{\"solver_tolerance\":-1,\"bodies\":[" BODY_A "]}", "solver_tolerance", NULL);
}

#define GEOMS(list) "{\"bodies\":[" BODY_A "],\"geoms\":[" list "]}"

static void test_geoms(void **state) {
  (void)state;
  char err[256];
  sim_model *m = sim_model_load_string(
      GEOMS("{\"name\":\"floor\",\"body\":\"world\",\"type\":\"plane\"},"
            "{\"name\":\"s\",\"body\":\"a\",\"type\":\"sphere\",\"size\":[0.1],"
            "\"pos\":[0.5,0,0],\"friction\":[0.7,0,0]}"), "t", err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  assert_int_equal(m->ngeom, 2);
  assert_int_equal(m->max_contacts, 64);
  assert_int_equal(m->nefc_max, 4 * 64);
  assert_int_equal(m->geoms[1].type, SIM_GEOM_SPHERE);
  assert_int_equal(m->geoms[1].body, 1);
  assert_true(m->geoms[0].friction[0] == 1 && m->geoms[1].friction[0] == 0.7);
  assert_true(m->geoms[0].solref[0] == 0.02 && m->geoms[1].solimp[1] == 0.95);
  sim_model_free(m);
}

static void test_bad_geoms(void **state) {
  (void)state;
  expect_error(GEOMS("{\"name\":\"g\",\"body\":\"a\",\"type\":\"plane\"}"), "geoms[0].body",
               "world");
  expect_error(GEOMS("{\"name\":\"g\",\"body\":\"nobody\",\"type\":\"sphere\",\"size\":[1]}"),
               "geoms[0].body", "unknown");
  expect_error(GEOMS("{\"name\":\"g\",\"body\":\"a\",\"type\":\"cone\"}"), "geoms[0].type",
               "sphere");
  expect_error(GEOMS("{\"name\":\"g\",\"body\":\"a\",\"type\":\"box\",\"size\":[1,0,1]}"),
               "geoms[0].size", "positive");
  expect_error(GEOMS("{\"name\":\"g\",\"body\":\"a\",\"type\":\"capsule\"}"), "geoms[0].size",
               NULL);
  expect_error(GEOMS("{\"name\":\"g\",\"body\":\"a\",\"type\":\"sphere\",\"size\":[1],"
                     "\"friction\":[-1,0,0]}"), "geoms[0].friction", NULL);
  expect_error("{\"max_contacts\":-1,\"bodies\":[" BODY_A "]}", "max_contacts", "integer");
  expect_error(GEOMS("{\"name\":\"g\",\"body\":\"a\",\"type\":\"sphere\",\"size\":[1],"
                     "\"contype\":1.5}"), "geoms[0].contype", "bitmask");
  expect_error(GEOMS("{\"name\":\"g\",\"body\":\"a\",\"type\":\"sphere\",\"size\":[1],"
                     "\"conaffinity\":-1}"), "geoms[0].conaffinity", "bitmask");
}

#define TWO_BOXES(extra, groups)                                                                 \
  "{\"bodies\":[" BODY_A "," BODY_B ",{\"name\":\"c\",\"parent\":\"world\",\"joint\":"      \
  "{\"name\":\"jc\",\"type\":\"slide\",\"axis\":[1,0,0]},\"inertial\":{\"mass\":1,"             \
  "\"inertia\":[0.01,0.01,0.01,0,0,0]}}],\"geoms\":["                                           \
  "{\"name\":\"ba\",\"body\":\"a\",\"type\":\"box\",\"size\":[1,1,1]},"                       \
  "{\"name\":\"bb\",\"body\":\"b\",\"type\":\"box\",\"size\":[1,1,1]},"                       \
  "{\"name\":\"bc\",\"body\":\"c\",\"type\":\"box\",\"size\":[1,1,1]" groups "}]" extra "}"

/* Boxes that may touch each other load (box–box contacts are detected, sim/collision_box.c);
 * the exclude list is read, sorted and checked. */
static void test_box_pairs(void **state) {
  (void)state;
  char err[512];
  const char *ok[] = {TWO_BOXES(",\"exclude\":[{\"body1\":\"c\",\"body2\":\"a\"},"
                                "{\"body1\":\"b\",\"body2\":\"c\"}]", ""),
                      TWO_BOXES("", ",\"contype\":2,\"conaffinity\":2"), TWO_BOXES("", "")};
  for (int k = 0; k < 3; k++) {
    sim_model *m = sim_model_load_string(ok[k], "t", err, sizeof err);
    if (!m) {
      fail_msg("%s", err);
    }
    assert_int_equal(m->nexclude, k == 0 ? 2 : 0);
    if (k == 0) { /* sorted pairs, smaller body first */
      assert_true(m->exclude[0] == 1 && m->exclude[1] == 3 && m->exclude[2] == 2 &&
                  m->exclude[3] == 3);
    }
    sim_model_free(m);
  }
  expect_error(TWO_BOXES(",\"exclude\":[{\"body1\":\"c\",\"body2\":\"x\"}]", ""), "exclude[0]",
               "unknown body \"x\"");
  expect_error(TWO_BOXES(",\"exclude\":[{\"body1\":\"c\",\"body2\":\"c\"}]", ""), "exclude[0]",
               "itself");
  expect_error(TWO_BOXES(",\"exclude\":[{\"body1\":\"c\"}]", ""), "exclude[0].body2", NULL);
  expect_error(TWO_BOXES(",\"exclude\":{}", ""), "exclude", "array");
}

/* Finite is not enough: 1e308 kg overflows the dynamics; each bound is reported at its path. */
static void test_physical_bounds(void **state) {
  (void)state;
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"inertial\":{\"mass\":1e308,"
               "\"inertia\":[1,1,1,0,0,0]}}]}",
               "bodies[0].inertial.mass", "must be <= 1e+06");
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"inertial\":{\"mass\":1,"
               "\"inertia\":[1e308,1e308,1e308,0,0,0]}}]}",
               "bodies[0].inertial.inertia", "must be <= 1e+06");
  expect_error("{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"joint\":{\"name\":\"j\",\"type\":"
               "\"hinge\",\"axis\":[1,0,0],\"damping\":1e300},\"inertial\":{\"mass\":1,\"inertia\":"
               "[1,1,1,0,0,0]}}]}",
               "bodies[0].joint.damping", "must be <= 1e+06");
  expect_error("{\"gravity\":[0,0,-1e200],\"bodies\":[" BODY_A "]}", "gravity[2]", "1000");
  expect_error("{\"timestep\":2,\"bodies\":[" BODY_A "]}", "timestep", "must be <= 1");
  /* the bounds themselves are accepted */
  char err[256];
  sim_model *m = sim_model_load_string(
      "{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"inertial\":{\"mass\":1e6,"
      "\"inertia\":[1e6,1e6,1e6,0,0,0]}}]}",
      "t", err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  sim_model_free(m);
}

/* Names reach logs and JSON messages, which must stay valid UTF-8 without control characters. */
static void test_names_are_utf8_text(void **state) {
  (void)state;
  expect_error("{\"bodies\":[{\"name\":\"a\\u0001\",\"parent\":\"world\",\"inertial\":{"
               "\"mass\":1,\"inertia\":[1,1,1,0,0,0]}}]}",
               "bodies[0].name", "control character 0x01");
  expect_error("{\"name\":\"arm\xff\",\"bodies\":[" BODY_A "]}", "name", "not valid UTF-8");
  /* overlong '/', a lone surrogate, a truncated sequence, anywhere in the file */
  expect_error("{\"comment\":\"\xc0\xaf\",\"bodies\":[" BODY_A "]}", "comment", "not valid UTF-8");
  expect_error("{\"bodies\":[" BODY_A "],\"comment\":[\"ok\",\"\xed\xa0\x80\"]}", "comment[1]",
               "not valid UTF-8 (at byte 0)");
  expect_error("{\"bodies\":[" BODY_A "],\"x\xe2\x82\":1}", "[1]", "the key of member");
  /* valid multi-byte names are fine */
  char err[256];
  sim_model *m = sim_model_load_string("{\"name\":\"bras \xc3\xa0 \xf0\x9f\xa6\xbe\",\"bodies\":["
                                       BODY_A "]}", "t", err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  assert_string_equal(m->name, "bras \xc3\xa0 \xf0\x9f\xa6\xbe");
  sim_model_free(m);
}

TS_TEST(test_text_after_the_value,
        expect_error("{\"bodies\":[" BODY_A "]}\n\n  x", "line 3, column 3",
                     "text after the value"))

static void test_missing_file(void **state) {
  (void)state;
  char err[256];
  assert_null(sim_model_load_file("/nonexistent/robot.json", err, sizeof err));
  assert_non_null(strstr(err, "/nonexistent/robot.json"));
}

TS_MAIN(test_shipped_configs_load, test_valid_minimal, test_out_of_order_bodies_are_sorted,
        test_rpy_matches_quat, test_invalid_json_names_line, test_unknown_parent, test_cycle,
        test_duplicate_names, test_bad_axis, test_bad_mass, test_bad_inertia,
        test_non_finite_numbers, test_unknown_keys, test_other_bad_values, test_multi_dof_joints,
        test_constraint_keys, test_bad_constraint_keys, test_geoms, test_bad_geoms, test_box_pairs,
        test_physical_bounds, test_names_are_utf8_text, test_text_after_the_value,
        test_missing_file)
