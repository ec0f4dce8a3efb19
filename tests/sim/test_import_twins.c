/* tests/sim/test_import_twins.c: a URDF against its MJCF twin: the same model, joint for joint and
 * body for body, for an arm and for a planar and a floating base. */
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

static void test_urdf_equals_mjcf_twin(void **state) {
  (void)state;
  reports r = {"", 0};
  sim_model *u = import_text("twin.urdf", twin_urdf, &r);
  assert_non_null(strstr(r.text, "<visual> ignored: visual only"));
  assert_non_null(strstr(r.text, "<limit effort/velocity> ignored"));
  sim_model *m = import_text("twin.xml", twin_mjcf, &r);
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

static void test_urdf_planar_floating_equals_mjcf(void **state) {
  (void)state;
  reports r = {"", 0};
  sim_model *u = import_text("planar.urdf", planar_urdf, &r);
  sim_model *m = import_text("planar.xml", planar_mjcf, &r);
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

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_urdf_equals_mjcf_twin,
                                            test_urdf_planar_floating_equals_mjcf)
