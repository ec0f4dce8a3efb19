/* tests/sim/test_import_joints.c: joints and actuators as MJCF and URDF describe them: ranges,
 * limited, friction loss and the soft parameters; several joints on one body, ball and free
 * joints; a position actuator's kv and a motor's force range; a URDF tool frame with a token
 * mass. */
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
  reports r = {"", 0};
  sim_model *m = import_text("limits.xml", xml, &r);
  ts_tmp_path(path, sizeof path, "limits.xml");
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

static void test_mjcf_multi_dof_loads(void **state) {
  (void)state;
  reports r = {"", 0};
  sim_model *m = import_text("multi.xml", multi_mjcf, &r);
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
  reports r = {"", 0};
  sim_model *m = import_text("kv.xml", xml, &r);
  print_message("%s", r.text);
  assert_true(m->actuators[0].kp == 10 && m->actuators[0].kd == 0.5);
  assert_true(m->actuators[0].force_limit == 0); /* asymmetric: reported, not converted */
  assert_non_null(strstr(r.text, "kv.xml:9: <position forcerange=\"-2 3\"> not converted"));
  assert_non_null(strstr(r.text, "kv.xml:10: <motor forcerange> ignored"));
  sim_model_free(m);
}

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
  reports r = {"", 0};
  sim_model *m = import_text("frame.urdf", text, &r);
  ts_tmp_path(path, sizeof path, "frame.urdf");
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

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_limits_and_friction, test_mjcf_multi_dof_loads,
                                            test_position_kv_and_motor_forcerange,
                                            test_urdf_token_mass_frame)
