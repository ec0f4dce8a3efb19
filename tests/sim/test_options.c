/* tests/sim/test_options.c: MuJoCo's <option> through the importer and the JSON format
 * (sim/import/mjcf_option.c, sim/option_load.c, sim/geom_load.c), and solimp/solref as MuJoCo
 * takes them (sim/import/mjcf_defaults.c).
 *
 *  - every option a file sets reaches the model with MuJoCo's value (MuJoCo loads the same file:
 *    timestep, gravity, integrator, iterations, tolerance, solver, cone, impratio, each geom's
 *    condim); a file without <option>, and a URDF, get MuJoCo's defaults (Newton, 100, 1e-8);
 *  - what is not taken is reported with its line; noslip_iterations is refused by name;
 *  - the JSON keys solver, cone, impratio and condim, and their errors;
 *  - solimp="2 1 0.01" (MuJoCo Menagerie's SO-ARM100) loads with a note saying what is used, and
 *    the contact it makes is MuJoCo's own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sim/import/import.h"
#include "sim/sim.h"
#include "support/model.h"
#include "support/mujoco.h"
#include "support/skip.h"
#include "support/tmp.h"

#include "import_fixture.h"

static const char full_options[] =
    "<mujoco>\n"
    "  <option timestep=\"0.001\" gravity=\"0.5 0 -3\" integrator=\"RK4\" iterations=\"250\"\n"
    "          tolerance=\"1e-12\" solver=\"CG\" cone=\"elliptic\" impratio=\"10\"\n"
    "          jacobian=\"sparse\" noslip_iterations=\"0\" density=\"1.2\"/>\n"
    "  <worldbody>\n"
    "    <geom name=\"floor\" type=\"plane\" size=\"1 1 0.1\" condim=\"1\"/>\n"
    "    <body name=\"ball\" pos=\"0 0 0.2\"><freejoint/>\n"
    "      <geom name=\"ball\" type=\"sphere\" size=\"0.05\" condim=\"4\"/></body>\n"
    "    <body name=\"cube\" pos=\"0.3 0 0.2\"><freejoint/>\n"
    "      <geom name=\"cube\" type=\"box\" size=\"0.05 0.05 0.05\"/></body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static const char no_options[] =
    "<mujoco>\n"
    "  <worldbody>\n"
    "    <geom name=\"floor\" type=\"plane\" size=\"1 1 0.1\"/>\n"
    "    <body name=\"ball\" pos=\"0 0 0.2\"><freejoint/>\n"
    "      <geom name=\"ball\" type=\"sphere\" size=\"0.05\"/></body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static const char urdf[] =
    "<robot name=\"arm\">\n"
    "  <link name=\"base\"/>\n"
    "  <link name=\"link\"><inertial><mass value=\"1\"/><inertia ixx=\"0.01\" iyy=\"0.01\"\n"
    "    izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
    "  <joint name=\"j\" type=\"revolute\"><parent link=\"base\"/><child link=\"link\"/>\n"
    "    <axis xyz=\"0 0 1\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>\n"
    "</robot>\n";

/* our options against MuJoCo's compiled ones for the same file (condim 4 is read as 3) */
static void same_options(const sim_model *m, const char *path) {
#if ACHILLES_HAVE_MUJOCO
  if (!ts_reference("libmujoco-dev", ACHILLES_HAVE_MUJOCO)) {
    return;
  }
  mjModel *mm = ts_mj_load(path);
  const mjOption *o = &mm->opt;
  assert_true(m->opt.timestep == o->timestep);
  for (int k = 0; k < 3; k++) {
    assert_true(m->opt.gravity[k] == o->gravity[k]);
  }
  assert_int_equal(m->opt.integrator == SIM_INTEGRATOR_RK4, o->integrator == mjINT_RK4);
  assert_int_equal(m->opt.solver_iterations, o->iterations);
  assert_true(m->opt.solver_tolerance == o->tolerance);
  assert_int_equal(m->opt.solver == SIM_SOLVER_NEWTON, o->solver == mjSOL_NEWTON);
  assert_int_equal(m->opt.cone == SIM_CONE_ELLIPTIC, o->cone == mjCONE_ELLIPTIC);
  assert_true(m->opt.impratio == o->impratio);
  for (int g = 0; g < m->ngeom; g++) {
    const int id = mj_name2id(mm, mjOBJ_GEOM, m->geoms[g].name);
    assert_true(id >= 0);
    const int theirs = mm->geom_condim[id];
    assert_int_equal(m->geoms[g].condim, theirs > 3 ? 3 : theirs);
  }
  mj_deleteModel(mm);
#else
  (void)m;
  (void)path;
  ts_reference("libmujoco-dev", 0);
#endif
}

static void test_every_option(void **state) {
  (void)state;
  reports r = {"", 0};
  char path[512];
  sim_model *m = import_text_at("full.xml", full_options, &r, path, sizeof path);
  assert_true(m->opt.timestep == 0.001);
  assert_true(m->opt.gravity[0] == 0.5 && m->opt.gravity[2] == -3);
  assert_int_equal(m->opt.integrator, SIM_INTEGRATOR_RK4);
  assert_int_equal(m->opt.solver_iterations, 250);
  assert_true(m->opt.solver_tolerance == 1e-12);
  assert_int_equal(m->opt.solver, SIM_SOLVER_CG);
  assert_int_equal(m->opt.cone, SIM_CONE_ELLIPTIC);
  assert_true(m->opt.impratio == 10);
  assert_int_equal(m->geoms[0].condim, 1); /* the floor */
  /* what is not taken, with its line (libxml2's: where a start tag ends): density (line 4) and
   * condim 4 (line 8); jacobian is not
   * a report (it changes MuJoCo's storage, not the motion) */
  print_message("reports:\n%s", r.text);
  assert_non_null(strstr(r.text, ":4: <option density> ignored"));
  assert_non_null(strstr(r.text, ":8: <geom condim=\"4\"> read as 3"));
  assert_null(strstr(r.text, "jacobian"));
  assert_int_equal(r.n, 2);
  same_options(m, path);
  sim_model_free(m);
}

/* no <option>: MuJoCo's defaults, written into the converted JSON (what `achilles convert`
 * prints); a URDF has no options and gets the same */
static void test_defaults_are_mujoco(void **state) {
  (void)state;
  const char *files[2][2] = {{"plain.xml", no_options}, {"arm.urdf", urdf}};
  for (int k = 0; k < 2; k++) {
    reports r = {"", 0};
    char path[512], err[512];
    sim_model *m = import_text_at(files[k][0], files[k][1], &r, path, sizeof path);
    assert_int_equal(m->opt.solver, SIM_SOLVER_NEWTON);
    assert_int_equal(m->opt.solver_iterations, 100);
    assert_true(m->opt.solver_tolerance == 1e-8);
    assert_int_equal(m->opt.cone, SIM_CONE_PYRAMIDAL);
    assert_true(m->opt.impratio == 1);
    assert_true(m->opt.timestep == 0.002);
    same_options(m, path);
    sim_model_free(m);
    /* the JSON itself says so */
    cJSON *json = sim_import_file(path, NULL, err, sizeof err);
    assert_non_null(json);
    char *text = cJSON_PrintUnformatted(json);
    assert_non_null(strstr(text, "\"solver\":\"newton\""));
    assert_non_null(strstr(text, "\"solver_iterations\":100"));
    assert_non_null(strstr(text, "\"cone\":\"pyramidal\""));
    free(text);
    cJSON_Delete(json);
  }
}

static void expect_import_error(const char *name, const char *text, const char *what) {
  char path[512], err[1024];
  ts_tmp_path(path, sizeof path, name);
  ts_write_file(path, text);
  sim_model *m = sim_import_load_file(path, NULL, err, sizeof err);
  assert_null(m);
  print_message("%s\n", err);
  assert_non_null(strstr(err, what));
}

static void test_refused_options(void **state) {
  (void)state;
  expect_import_error("noslip.xml",
                      "<mujoco><option noslip_iterations=\"5\"/><worldbody><body><freejoint/>"
                      "<geom size=\"0.1\"/></body></worldbody></mujoco>",
                      ":1: <option noslip_iterations=\"5\">: the noslip solver is not built");
  expect_import_error("cone.xml",
                      "<mujoco><option cone=\"round\"/><worldbody><body><freejoint/>"
                      "<geom size=\"0.1\"/></body></worldbody></mujoco>",
                      "cone=\"round\"");
  expect_import_error("impratio.xml",
                      "<mujoco><option impratio=\"0\"/><worldbody><body><freejoint/>"
                      "<geom size=\"0.1\"/></body></worldbody></mujoco>",
                      "impratio=\"0\">: expected > 0");
  /* PGS is read as Newton, iterations beyond 1000 as 1000, each with a note */
  reports r = {"", 0};
  char path[512];
  sim_model *m = import_text_at("pgs.xml",
                             "<mujoco><option solver=\"PGS\" iterations=\"5000\"/><worldbody>"
                             "<body><freejoint/><geom size=\"0.1\"/></body></worldbody></mujoco>",
                             &r, path, sizeof path);
  assert_int_equal(m->opt.solver, SIM_SOLVER_NEWTON);
  assert_int_equal(m->opt.solver_iterations, 1000);
  assert_non_null(strstr(r.text, "solver=\"PGS\"> read as Newton"));
  assert_non_null(strstr(r.text, "iterations=\"5000\"> read as 1000"));
  sim_model_free(m);
}

/* the native format's keys and their errors */
static void expect_json_error(const char *json, const char *path, const char *what) {
  char err[512];
  sim_model *m = sim_model_load_string(json, "t", err, sizeof err);
  assert_null(m);
  print_message("%s\n", err);
  assert_non_null(strstr(err, path));
  assert_non_null(strstr(err, what));
}

#define BODY "{\"name\":\"b\",\"parent\":\"world\",\"joint\":{\"name\":\"f\",\"type\":\"free\"}," \
             "\"inertial\":{\"mass\":1,\"inertia\":[0.01,0.01,0.01,0,0,0]}}"
#define GEOM(extra) "{\"name\":\"g\",\"body\":\"b\",\"type\":\"sphere\",\"size\":[0.1]" extra "}"

static void test_json_keys(void **state) {
  (void)state;
  char err[512];
  sim_model *m = ts_model("{\"solver\":\"newton\",\"cone\":\"elliptic\",\"impratio\":"
                          "2.5,\"bodies\":[" BODY "],\"geoms\":[" GEOM(",\"condim\":1")
                          "]}");
  assert_int_equal(m->opt.solver, SIM_SOLVER_NEWTON);
  assert_int_equal(m->opt.cone, SIM_CONE_ELLIPTIC);
  assert_true(m->opt.impratio == 2.5);
  assert_int_equal(m->geoms[0].condim, 1);
  sim_model_free(m);
  /* defaults: CG, pyramidal, impratio 1, condim 3 (the native format's, as before) */
  m = sim_model_load_string("{\"bodies\":[" BODY "],\"geoms\":[" GEOM("") "]}", "t", err, sizeof err);
  assert_non_null(m);
  assert_int_equal(m->opt.solver, SIM_SOLVER_CG);
  assert_int_equal(m->opt.cone, SIM_CONE_PYRAMIDAL);
  assert_true(m->opt.impratio == 1);
  assert_int_equal(m->geoms[0].condim, 3);
  sim_model_free(m);
  expect_json_error("{\"solver\":\"pgs\",\"bodies\":[" BODY "]}", "solver", "\"cg\" or \"newton\"");
  expect_json_error("{\"cone\":\"round\",\"bodies\":[" BODY "]}", "cone", "\"pyramidal\" or \"elliptic\"");
  expect_json_error("{\"impratio\":0,\"bodies\":[" BODY "]}", "impratio", "> 0");
  expect_json_error("{\"bodies\":[" BODY "],\"geoms\":[" GEOM(",\"condim\":4") "]}",
                    "geoms[0].condim", "not modelled");
  expect_json_error("{\"bodies\":[" BODY "],\"geoms\":[" GEOM(",\"condim\":2.5") "]}",
                    "geoms[0].condim", "integer");
}

#if ACHILLES_HAVE_MUJOCO
static int mixed_warnings;
static void count_warning(const char *message) { /* MuJoCo replaces the mixed solref too */
  mixed_warnings += strstr(message, "mixed solref") != NULL;
}
#endif

/* solimp="2 1 0.01" (dmin past 1, the SO-ARM100's) and a solref mixing its two forms: loaded as
 * written, with a note saying what MuJoCo uses; the constraint stage uses them as MuJoCo does
 * (after mixing a contact's two geoms'): the dropped sphere's motion is MuJoCo's own (MuJoCo
 * loads the original file) over 0.5 s. */
static const char clamped[] =
    "<mujoco>\n"
    "  <worldbody>\n"
    "    <geom name=\"floor\" type=\"plane\" size=\"1 1 0.1\"/>\n"
    "    <body name=\"ball\" pos=\"0 0 0.06\"><freejoint/>\n"
    "      <geom name=\"ball\" type=\"sphere\" size=\"0.05\" solimp=\"2 1 0.01\" solref=\"0.02 -1\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static void test_solimp_as_mujoco(void **state) {
  (void)state;
  reports r = {"", 0};
  char path[512];
  sim_model *m = import_text_at("clamped.xml", clamped, &r, path, sizeof path);
  print_message("reports:\n%s", r.text);
  assert_non_null(strstr(r.text, ":5: <geom solimp=\"2 1 0.01 0.5 2\"> used as MuJoCo uses it: "
                                "\"0.9999 0.9999 0.01 0.5 2\""));
  assert_non_null(strstr(r.text, ":5: <geom solref=\"0.02 -1\"> used as MuJoCo uses it: \"0.02 1\""));
  const sim_geom *g = &m->geoms[1];
  assert_true(g->solimp[0] == 2 && g->solimp[1] == 1 && g->solimp[2] == 0.01);
  assert_true(g->solref[0] == 0.02 && g->solref[1] == -1);
#if ACHILLES_HAVE_MUJOCO
  if (ts_reference("libmujoco-dev", ACHILLES_HAVE_MUJOCO)) {
    mjModel *mm = ts_mj_load(path);
    mjData *md = mj_makeData(mm);
    sim_data *d = sim_data_new(m);
    mju_user_warning = count_warning;
    memcpy(md->qpos, d->qpos, 7 * sizeof(double));
    double e = 0;
    int touching = 0;
    for (int s = 0; s < 250; s++) {
      sim_step(m, d);
      mj_step(mm, md);
      touching += d->ncon > 0;
      for (int k = 0; k < 7; k++) {
        e = fmax(e, fabs(d->qpos[k] - md->qpos[k]));
      }
    }
    print_message("solimp 2 1 0.01 dropped beside MuJoCo: %d of 250 steps touching, max |dq| %.3g\n",
                  touching, e);
    mju_user_warning = NULL;
    assert_true(touching > 100 && mixed_warnings > 100);
    assert_true(e <= 1e-9);
    sim_data_free(d);
    ts_mj_free(mm, md);
  }
#endif
  sim_model_free(m);
}

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_every_option, test_defaults_are_mujoco,
        test_refused_options, test_json_keys, test_solimp_as_mujoco)
