/* tests/sim/test_import_include.c: MJCF <include> as MuJoCo 2.2.2 reads it (the included file's
 * root children replace the element, anywhere in the tree; names relative to the main file's
 * directory, nested includes too; a second include of a file, a cycle, a missing file refused
 * at the <include>'s line), several <worldbody> and <actuator> sections read in turn, and the
 * elements whose bodies or forces are not built (composites' tendons, tendons, equalities, plugins,
 * actuators on a slider-crank) refused by name and line. */
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

/* a robot split as MuJoCo's samples split theirs: the scene (floor, options, a default class)
 * in one file, the arm's bodies in another included inside <worldbody>, and the actuators in
 * parts/motors.xml, included by parts/outer.xml as "parts/motors.xml": relative to the main
 * file's folder, as MuJoCo 2.2.2 names a nested include (relative to outer.xml's own folder it
 * would be parts/parts/motors.xml, which does not exist) */
static const char main_xml[] =
    "<mujoco model=\"split\">\n"
    "  <include file=\"scene.xml\"/>\n"
    "  <worldbody>\n"
    "    <include file=\"arm.xml\"/>\n"
    "  </worldbody>\n"
    "  <include file=\"parts/outer.xml\"/>\n"
    "</mujoco>\n";
static const char scene_xml[] =
    "<mujoco>\n"
    "  <option timestep=\"0.001\"/>\n"
    "  <default><joint damping=\"0.5\"/></default>\n"
    "  <worldbody><geom type=\"plane\" size=\"1 1 0.1\"/><light pos=\"0 0 1\"/></worldbody>\n"
    "</mujoco>\n";
static const char arm_xml[] =
    "<mujoco>\n"
    "  <body name=\"upper\" pos=\"0 0 1\">\n"
    "    <joint name=\"shoulder\" axis=\"0 1 0\"/>\n"
    "    <geom type=\"capsule\" fromto=\"0 0 0 0.3 0 0\" size=\"0.04\"/>\n"
    "    <body name=\"fore\" pos=\"0.3 0 0\">\n"
    "      <joint name=\"elbow\" axis=\"0 1 0\"/>\n"
    "      <geom type=\"box\" size=\"0.1 0.03 0.02\" pos=\"0.1 0 0\" rgba=\"1 0 0 1\"/>\n"
    "    </body>\n"
    "  </body>\n"
    "</mujoco>\n";
static const char outer_xml[] = "<mujoco>\n  <include file=\"parts/motors.xml\"/>\n</mujoco>\n";
static const char motors_xml[] =
    "<mujoco>\n"
    "  <actuator><motor name=\"m\" joint=\"elbow\" gear=\"2\"/></actuator>\n"
    "</mujoco>\n";

static void write_split(void) {
  char path[256], dir[256];
  write_file(path, sizeof path, "split.xml", main_xml);
  write_file(path, sizeof path, "scene.xml", scene_xml);
  write_file(path, sizeof path, "arm.xml", arm_xml);
  ts_tmp_path(dir, sizeof dir, "parts");
  mkdir(dir, 0755);
  write_file(path, sizeof path, "parts/outer.xml", outer_xml);
  write_file(path, sizeof path, "parts/motors.xml", motors_xml);
}

/* the five files make one robot; a note about an included element names that file's line */
static void test_include_makes_one_robot(void **state) {
  (void)state;
  write_split();
  char path[256], err[1024];
  ts_tmp_path(path, sizeof path, "split.xml");
  reports r = {"", 0};
  sim_model *m = import(path, &r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  print_message("%s", r.text);
  assert_int_equal(m->nbody, 3);
  assert_int_equal(m->nv, 2);
  assert_int_equal(m->nu, 1);
  assert_int_equal(m->ngeom, 3); /* the scene's floor, the capsule, the box */
  assert_true(m->opt.timestep == 0.001);
  assert_true(m->joints[sim_model_joint(m, "elbow")].damping == 0.5); /* scene's default */
  assert_non_null(strstr(r.text, "arm.xml:7: <geom rgba> ignored"));
  assert_non_null(strstr(r.text, "scene.xml:4: <light> ignored"));
  sim_model_free(m);
#if ACHILLES_HAVE_MUJOCO
  /* MuJoCo reads the same three files to the same bodies */
  if (!ts_hidden("libmujoco-dev")) {
    mjModel *mm = ts_mj_load(path);
    m = import(path, &r, 0, err, sizeof err);
    assert_int_equal(mm->nbody, m->nbody);
    for (int b = 1; b < m->nbody; b++) {
      const int id = mj_name2id(mm, mjOBJ_BODY, m->bodies[b].name);
      assert_true(id > 0);
      assert_true(fabs(mm->body_mass[id] - m->bodies[b].mass) <= 1e-12 * mm->body_mass[id]);
    }
    assert_int_equal(mm->ngeom, m->ngeom);
    sim_model_free(m);
    mj_deleteModel(mm);
  }
#endif
}

/* what MuJoCo refuses, refused at the <include>'s own file and line */
static void test_include_errors(void **state) {
  (void)state;
  char path[256];
  write_split();
  import_refused("missing.xml", "<mujoco>\n<worldbody/>\n<include file=\"nowhere.xml\"/>\n</mujoco>\n",
               "missing.xml:3: <include file=\"nowhere.xml\">: no such file");
  import_refused("noname.xml", "<mujoco>\n<include/>\n</mujoco>\n",
               "noname.xml:2: <include>: the attribute file is required");
  import_refused("children.xml",
               "<mujoco>\n<include file=\"scene.xml\"><body/></include>\n</mujoco>\n",
               "children.xml:2: <include> cannot have children");
  /* a file included twice, and a cycle: a.xml includes b.xml which includes a.xml */
  import_refused("twice.xml",
               "<mujoco>\n<include file=\"scene.xml\"/>\n<include file=\"scene.xml\"/>\n</mujoco>\n",
               "twice.xml:3: <include file=\"scene.xml\">:");
  write_file(path, sizeof path, "b.xml", "<mujoco>\n\n<include file=\"a.xml\"/>\n</mujoco>\n");
  import_refused("a.xml", "<mujoco>\n<include file=\"b.xml\"/>\n</mujoco>\n",
               "b.xml:3: <include file=\"a.xml\">: ");
  import_refused("a.xml", "<mujoco>\n<include file=\"b.xml\"/>\n</mujoco>\n",
               "a.xml is included a second time");
  write_file(path, sizeof path, "self.xml", "<mujoco>\n<include file=\"self.xml\"/>\n</mujoco>\n");
  import_refused("top.xml", "<mujoco>\n<include file=\"self.xml\"/>\n</mujoco>\n",
               "self.xml:2: <include file=\"self.xml\">: ");
  /* an included file that is not XML names its own line */
  write_file(path, sizeof path, "bad.xml", "<mujoco>\n<worldbody>\n</mujoco>\n");
  import_refused("inc_bad.xml", "<mujoco>\n<include file=\"bad.xml\"/>\n</mujoco>\n",
               "bad.xml:3: invalid XML");
  /* a chain of 32 includes: one too many (31 besides the main file) */
  for (int i = 1; i <= 32; i++) {
    char name[32], text[128];
    snprintf(name, sizeof name, "chain%d.xml", i);
    snprintf(text, sizeof text, "<mujoco>\n<include file=\"chain%d.xml\"/>\n</mujoco>\n", i + 1);
    write_file(path, sizeof path, name, text);
  }
  import_refused("chain0.xml", "<mujoco>\n<include file=\"chain1.xml\"/>\n</mujoco>\n",
               "chain31.xml:2: <include file=\"chain32.xml\">: more than 31 included files");
  write_file(path, sizeof path, "empty.xml", "<mujoco/>\n");
  import_refused("inc_empty.xml", "<mujoco>\n<include file=\"empty.xml\"/>\n</mujoco>\n",
               "inc_empty.xml:2: <include file=\"empty.xml\">: the file has no elements");
}

/* several <worldbody> sections are all read (a scene's floor beside the robot's bodies) */
static void test_sections_read_in_turn(void **state) {
  (void)state;
  reports r = {"", 0};
  sim_model *m = import_text(
      "sections.xml",
      "<mujoco>\n<worldbody><geom type=\"plane\" size=\"1 1 1\"/></worldbody>\n"
      "<worldbody><body name=\"a\"><joint name=\"ja\"/><geom size=\"0.1\"/></body></worldbody>\n"
      "<actuator><motor joint=\"ja\"/></actuator>\n"
      "<worldbody><body name=\"b\"><joint name=\"jb\"/><geom size=\"0.1\"/></body></worldbody>\n"
      "<actuator><motor joint=\"jb\"/></actuator>\n</mujoco>\n",
      &r);
  assert_int_equal(m->nbody, 3);
  assert_int_equal(m->nu, 2);
  assert_int_equal(m->ngeom, 3);
  sim_model_free(m);
}

/* what would move the robot otherwise than MuJoCo if ignored is refused, by name and line */
static void test_unbuilt_refused(void **state) {
  (void)state;
  const char *body = "<body name=\"a\"><joint name=\"j\"/><geom size=\"0.1\"/>";
  char xml[1024];
  snprintf(xml, sizeof xml,
           "<mujoco>\n<worldbody>\n%s\n<composite type=\"rope\" count=\"3 1 1\" "
           "spacing=\"0.1\"/>\n</body>\n</worldbody>\n</mujoco>\n", body);
  import_refused("composite.xml", xml,
                 "composite.xml:4: <composite>: B must be the beginning of root body name");
  /* a composite is expanded first (sim/import/mjcf_composite.c): one MuJoCo refuses is
   * refused in a body without mass of its own (the samples' cloth), before that mass is judged
   * (its refusals of what is not built: test_public_samples, test_composite_motion) */
  import_refused("cloth.xml",
                 "<mujoco>\n<worldbody>\n<body>\n<freejoint/>\n"
                 "<composite type=\"cloth\" count=\"3 3 1\" spacing=\"0.1\">\n"
                 "<geom size=\"0.01\"/></composite>\n</body>\n</worldbody>\n</mujoco>\n",
                 "cloth.xml:5: <composite>: B must be the beginning of root body name");
  snprintf(xml, sizeof xml,
           "<mujoco>\n<worldbody>\n%s<site name=\"s\"/></body>\n</worldbody>\n<tendon>\n"
           "<fixed name=\"t\" stiffness=\"1\"><joint joint=\"j\" coef=\"1\"/><site site=\"s\"/>"
           "</fixed>\n</tendon>\n</mujoco>\n", body);
  /* tendons are imported (test_tendon.c); what a fixed tendon cannot hold is refused */
  import_refused("tendon.xml", xml, "tendon.xml:6: <fixed><site>: a fixed tendon lists <joint");
  snprintf(xml, sizeof xml,
           "<mujoco>\n<worldbody>\n%s</body>\n</worldbody>\n<actuator>\n"
           "<general joint=\"j\" gaintype=\"affine\"/>\n</actuator>\n</mujoco>\n", body);
  import_refused("general.xml", xml, "general.xml:6: <general dyntype=\"(default)\">: a general "
                                   "actuator is imported only as a muscle");
  snprintf(xml, sizeof xml,
           "<mujoco>\n<worldbody>\n%s</body>\n</worldbody>\n<actuator>\n"
           "<muscle joint=\"j\" actlimited=\"true\" actrange=\"0 1\"/>\n</actuator>\n</mujoco>\n",
           body);
  import_refused("actlimited.xml", xml, "actlimited.xml:6: <muscle actlimited=\"true\">");
  snprintf(xml, sizeof xml,
           "<mujoco>\n<compiler><lengthrange mode=\"all\"/></compiler>\n<worldbody>\n%s</body>\n"
           "</worldbody>\n</mujoco>\n", body);
  import_refused("lengthrange.xml", xml, "lengthrange.xml:2: <lengthrange mode=\"all\">");
  snprintf(xml, sizeof xml,
           "<mujoco>\n<worldbody>\n%s</body>\n</worldbody>\n<equality>\n"
           "<tendon tendon1=\"t\"/>\n</equality>\n</mujoco>\n", body);
  import_refused("equality.xml", xml, "equality.xml:6: <tendon tendon1=\"t\">: unknown tendon");
  snprintf(xml, sizeof xml,
           "<mujoco>\n<extension><plugin plugin=\"x\"/></extension>\n<worldbody>\n%s</body>\n"
           "</worldbody>\n</mujoco>\n", body);
  import_refused("plugin.xml", xml, "plugin.xml:2: <extension> is not imported");
  snprintf(xml, sizeof xml,
           "<mujoco>\n<worldbody>\n%s<site name=\"s\"/></body>\n</worldbody>\n<actuator>\n"
           "<position cranksite=\"s\" slidersite=\"s\"/>\n</actuator>\n</mujoco>\n", body);
  import_refused("crank.xml", xml, "crank.xml:6: <position cranksite=\"s\">: cranklength must "
                                 "be positive");
  /* empty sections change nothing: taken without a word */
  reports r = {"", 0};
  snprintf(xml, sizeof xml,
           "<mujoco>\n<worldbody>\n%s</body>\n</worldbody>\n<tendon/>\n<equality>\n</equality>\n"
           "</mujoco>\n", body);
  sim_model *m = import_text("empty_sections.xml", xml, &r);
  assert_null(strstr(r.text, "tendon"));
  assert_null(strstr(r.text, "equality"));
  sim_model_free(m);
}

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_include_makes_one_robot, test_include_errors,
             test_sections_read_in_turn, test_unbuilt_refused)
