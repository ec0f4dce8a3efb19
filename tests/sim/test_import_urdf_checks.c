/* tests/sim/test_import_urdf_checks.c: what a URDF gets wrong is an error naming its line, and
 * what it says about driving a joint is kept (docs/import.md, "URDF").
 *
 * Before: a joint whose parent link did not exist was dropped with its child link, without a
 * word; a reversed <limit lower="1" upper="-1"> silently left the joint without stops (the MJCF
 * and JSON paths refuse it); a second link of one name was taken (the first won); <limit effort>
 * was only reported as ignored. Now a <transmission> (ros_control's SimpleTransmission through an
 * effort interface) makes a motor whose force_limit is the joint's effort. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/import/import.h"
#include "sim/sim.h"
#include "support/skip.h"
#include "support/tmp.h"


typedef struct notes {
  char text[4096];
} notes;

static void collect(void *ctx, const char *message) {
  notes *n = ctx;
  const size_t used = strlen(n->text);
  snprintf(n->text + used, sizeof n->text - used, "%s\n", message);
}

/* path imported with its notes collected into n; fails the test with the importer's message */
static sim_model *import_noting(const char *path, notes *n) {
  const sim_import_options o = {0, collect, n};
  char err[1024] = "";
  sim_model *m = sim_import_load_file(path, &o, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  return m;
}

static const char *write_urdf(const char *name, const char *text) {
  static char path[128];
  ts_tmp_path(path, sizeof path, name);
  ts_write_file(path, text);
  return path;
}

/* the import fails with exactly "FILE:LINE: message" */
static void expect_error(const char *name, const char *text, int line, const char *message) {
  const char *path = write_urdf(name, text);
  char err[1024] = "", want[1024];
  sim_model *m = sim_import_load_file(path, NULL, err, sizeof err);
  snprintf(want, sizeof want, "%s:%d: %s", path, line, message);
  if (m || strcmp(err, want) != 0) {
    fail_msg("%s: %s\n  got:      %s\n  expected: %s", name, m ? "loaded" : "failed", err, want);
  }
}

#define LINK(name)                                                                              \
  "  <link name=\"" name "\"><inertial><mass value=\"1\"/>"                                     \
  "<inertia ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"

static void test_errors_name_the_line(void **state) {
  (void)state;
  expect_error("ghost_parent.urdf",
               "<robot name=\"r\">\n  <link name=\"base\"/>\n" LINK("arm") LINK("hand")
               "  <joint name=\"shoulder\" type=\"continuous\"><parent link=\"base\"/>"
               "<child link=\"arm\"/></joint>\n"
               "  <joint name=\"wrist\" type=\"continuous\"><parent link=\"forearm\"/>"
               "<child link=\"hand\"/></joint>\n</robot>\n",
               6, "<joint name=\"wrist\">: parent link \"forearm\" not found");
  expect_error("reversed.urdf",
               "<robot name=\"r\">\n  <link name=\"base\"/>\n" LINK("arm")
               "  <joint name=\"shoulder\" type=\"revolute\"><parent link=\"base\"/>"
               "<child link=\"arm\"/>\n    <limit lower=\"1\" upper=\"-1\"/></joint>\n</robot>\n",
               5, "<limit lower=\"1\" upper=\"-1\">: lower is above upper");
  expect_error("twice.urdf",
               "<robot name=\"r\">\n  <link name=\"base\"/>\n" LINK("arm") LINK("arm")
               "</robot>\n",
               4, "<link name=\"arm\">: a second link of this name (the first is at line 3)");
  expect_error("joint_twice.urdf",
               "<robot name=\"r\">\n  <link name=\"base\"/>\n" LINK("a") LINK("b")
               "  <joint name=\"j\" type=\"continuous\"><parent link=\"base\"/>"
               "<child link=\"a\"/></joint>\n"
               "  <joint name=\"j\" type=\"continuous\"><parent link=\"a\"/>"
               "<child link=\"b\"/></joint>\n</robot>\n",
               6, "<joint name=\"j\">: a second joint of this name (the first is at line 5)");
  expect_error("two_parents.urdf",
               "<robot name=\"r\">\n  <link name=\"base\"/>\n" LINK("a") LINK("b")
               "  <joint name=\"j1\" type=\"continuous\"><parent link=\"base\"/>"
               "<child link=\"b\"/></joint>\n"
               "  <joint name=\"j2\" type=\"continuous\"><parent link=\"a\"/>"
               "<child link=\"b\"/></joint>\n</robot>\n",
               6, "<joint name=\"j2\">: link \"b\" is already the child of joint \"j1\" (line 5): "
                  "a URDF robot is one tree");
  expect_error("cycle.urdf",
               "<robot name=\"r\">\n  <link name=\"base\"/>\n" LINK("a") LINK("b")
               "  <joint name=\"j1\" type=\"continuous\"><parent link=\"a\"/>"
               "<child link=\"b\"/></joint>\n"
               "  <joint name=\"j2\" type=\"continuous\"><parent link=\"b\"/>"
               "<child link=\"a\"/></joint>\n</robot>\n",
               3, "<link name=\"a\">: not reached from the root link \"base\": the joints form a "
                  "cycle");
}

/* a transmission makes a motor: gear from mechanicalReduction, force_limit from effort, and the
 * force at the joint never exceeds it */
static void test_transmission_makes_a_motor(void **state) {
  (void)state;
  notes n = {""};
  const char *path = write_urdf(
      "driven.urdf",
      "<robot name=\"r\">\n  <link name=\"base\"/>\n" LINK("arm") LINK("finger")
      "  <joint name=\"shoulder\" type=\"revolute\"><parent link=\"base\"/>"
      "<child link=\"arm\"/><axis xyz=\"0 1 0\"/>\n"
      "    <limit lower=\"-2\" upper=\"2\" effort=\"12.5\" velocity=\"3\"/></joint>\n"
      "  <joint name=\"grip\" type=\"prismatic\"><parent link=\"arm\"/>"
      "<child link=\"finger\"/>\n"
      "    <limit lower=\"0\" upper=\"0.04\" effort=\"20\" velocity=\"0.1\"/></joint>\n"
      "  <transmission name=\"shoulder_tr\">\n"
      "    <type>transmission_interface/SimpleTransmission</type>\n"
      "    <joint name=\"shoulder\"><hardwareInterface>hardware_interface/EffortJointInterface"
      "</hardwareInterface></joint>\n"
      "    <actuator name=\"shoulder_motor\"><mechanicalReduction>50</mechanicalReduction>"
      "</actuator>\n  </transmission>\n"
      "  <transmission name=\"grip_tr\">\n"
      "    <type>transmission_interface/SimpleTransmission</type>\n"
      "    <joint name=\"grip\"><hardwareInterface>hardware_interface/PositionJointInterface"
      "</hardwareInterface></joint>\n"
      "    <actuator name=\"grip_motor\"/>\n  </transmission>\n</robot>\n");
  sim_model *m = import_noting(path, &n);
  print_message("%s", n.text);
  assert_int_equal(m->nu, 1);
  const sim_actuator *a = &m->actuators[0];
  assert_string_equal(a->name, "shoulder_motor");
  assert_int_equal(a->joint, sim_model_joint(m, "shoulder"));
  assert_int_equal(a->type, SIM_ACT_MOTOR);
  assert_true(a->gear == 50 && a->force_limit == 12.5);
  /* what becomes of each limit and transmission is said, with its line */
  assert_non_null(strstr(n.text, "driven.urdf:6: <limit velocity> ignored: joint speed limits "
                                 "are not modelled (effort is the force_limit of its actuator)"));
  assert_non_null(strstr(n.text, "driven.urdf:8: <limit effort/velocity> ignored: no "
                                 "<transmission> makes an actuator for this joint"));
  assert_non_null(strstr(n.text, "driven.urdf:14: <transmission> not converted: "
                                 "hardware_interface/PositionJointInterface needs gains"));
  /* a command of 1 N·m before the gear asks 50 N·m at the joint: 12.5 is what it gets */
  sim_data *d = sim_data_new(m);
  d->ctrl[0] = 1;
  sim_forward(m, d);
  const int dof = m->joints[a->joint].dofadr;
  print_message("ctrl 1 through gear 50, effort 12.5: %g N m at the joint\n", d->qfrc_actuator[dof]);
  assert_true(d->qfrc_actuator[dof] == 12.5);
  d->ctrl[0] = -0.1;
  sim_forward(m, d);
  assert_true(fabs(d->qfrc_actuator[dof] + 5) < 1e-12);
  sim_data_free(d);
  sim_model_free(m);
}

/* equal limits are no stops, said so; the older layout (type attribute, reduction under the
 * transmission) is read too */
static void test_equal_limits_and_old_layout(void **state) {
  (void)state;
  notes n = {""};
  const char *path = write_urdf(
      "old.urdf",
      "<robot name=\"r\">\n  <link name=\"base\"/>\n" LINK("arm")
      "  <joint name=\"j\" type=\"revolute\"><parent link=\"base\"/><child link=\"arm\"/>\n"
      "    <limit lower=\"0\" upper=\"0\" effort=\"3\" velocity=\"1\"/></joint>\n"
      "  <transmission name=\"t\" type=\"pr2_mechanism_model/SimpleTransmission\">\n"
      "    <joint name=\"j\"/><actuator name=\"m\"/>"
      "<mechanicalReduction>2</mechanicalReduction>\n  </transmission>\n</robot>\n");
  sim_model *m = import_noting(path, &n);
  assert_non_null(strstr(n.text, "old.urdf:5: <limit lower=upper> ignored: no range"));
  assert_int_equal(m->nu, 1);
  assert_true(m->actuators[0].gear == 2 && m->actuators[0].force_limit == 3);
  assert_false(m->joints[sim_model_joint(m, "j")].limited);
  sim_model_free(m);
}

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_errors_name_the_line,
             test_transmission_makes_a_motor, test_equal_limits_and_old_layout)
