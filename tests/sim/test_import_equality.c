/* tests/sim/test_import_equality.c: MJCF <equality> through the importer (mjcf_equality.c),
 * and <adhesion> actuators (mjcf_actuator.c) at the end,
 * against MuJoCo 2.2.2 compiling the same text: connect, weld (anchor, torquescale, a relpose,
 * one inactive) and joint couplings on joints away from their bodies' origins (the native
 * frames sit at the joints, so anchors move), with an <equality> default class and a nested
 * one. Per state along MuJoCo's trajectory: each equality row's position, Jacobian,
 * regularisation and reference, the forces and q̈; and 2 s side by side. Refusals name the line.
 * Without libmujoco-dev the comparisons skip. */
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
#include "support/mujoco.h"
#include "support/skip.h"
#include "support/tmp.h"

static const char equality_mjcf[] =
    "<mujoco model=\"equality\">\n"
    "  <compiler angle=\"degree\"/>\n"
    "  <option><flag contact=\"disable\"/></option>\n"
    "  <default>\n"
    "    <equality solref=\"0.05 1\"/>\n"
    "    <default class=\"soft\"><equality solimp=\"0.8 0.9 0.01\"/></default>\n"
    "  </default>\n"
    "  <worldbody>\n"
    "    <body name=\"a\" pos=\"0 0 1\">\n"
    "      <joint name=\"j1\" axis=\"0 1 0\" pos=\"0.1 0 0.05\" damping=\"0.02\"/>\n"
    "      <geom type=\"capsule\" fromto=\"0 0 0 0.3 0 0\" size=\"0.02\"/>\n"
    "      <body name=\"a2\" pos=\"0.3 0 0\">\n"
    "        <joint name=\"j3\" axis=\"0 1 0\" pos=\"0.02 0 0\"/>\n"
    "        <geom type=\"capsule\" fromto=\"0 0 0 0.3 0 0\" size=\"0.02\"/>\n"
    "      </body>\n"
    "    </body>\n"
    "    <body name=\"b\" pos=\"1 0 1\" euler=\"0 30 0\">\n"
    "      <freejoint name=\"b\"/>\n"
    "      <geom type=\"box\" size=\"0.1 0.05 0.02\"/>\n"
    "    </body>\n"
    "    <body name=\"c\" pos=\"0.6 0 1\">\n"
    "      <joint name=\"j2\" axis=\"0 1 0\" pos=\"0 0 0.1\"/>\n"
    "      <geom type=\"capsule\" fromto=\"0 0 0 0 0 -0.3\" size=\"0.02\"/>\n"
    "    </body>\n"
    "    <body name=\"d\" pos=\"-0.5 0 1\">\n"
    "      <joint name=\"s\" type=\"slide\" axis=\"0 0 1\"/>\n"
    "      <geom type=\"sphere\" size=\"0.05\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <equality>\n"
    "    <connect name=\"loop\" body1=\"a2\" body2=\"c\" anchor=\"0.3 0 0\" class=\"soft\"/>\n"
    "    <weld body1=\"b\" body2=\"a\" anchor=\"0.2 0 0.1\" torquescale=\"2\"/>\n"
    "    <weld body1=\"b\" relpose=\"1 0 1.1 1 0 0.2 0\" active=\"false\"/>\n"
    "    <joint joint1=\"j1\" joint2=\"j2\" polycoef=\"0 0.5 0.1 0 0\"/>\n"
    "    <joint joint1=\"s\" polycoef=\"0.03 0 0 0 0\" solref=\"0.02\"/>\n"
    "  </equality>\n"
    "</mujoco>\n";

/* the native JSON: anchors moved to the frames at the joints, classes applied, relpose kept */
static void test_json(void **state) {
  (void)state;
  cJSON *json = json_of("equality.xml", equality_mjcf);
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(json, "equality");
  assert_int_equal(cJSON_GetArraySize(list), 5);
  const cJSON *loop = cJSON_GetArrayItem(list, 0);
  const cJSON *anchor = cJSON_GetObjectItemCaseSensitive(loop, "anchor");
  assert_true(fabs(cJSON_GetArrayItem(anchor, 0)->valuedouble - 0.28) < 1e-15);
  const cJSON *imp = cJSON_GetObjectItemCaseSensitive(loop, "solimp");
  assert_true(cJSON_GetArrayItem(imp, 0)->valuedouble == 0.8);
  assert_true(cJSON_GetArrayItem(imp, 4)->valuedouble == 2);
  const cJSON *weld = cJSON_GetArrayItem(list, 1);
  anchor = cJSON_GetObjectItemCaseSensitive(weld, "anchor");
  assert_true(fabs(cJSON_GetArrayItem(anchor, 0)->valuedouble - 0.1) < 1e-15);
  assert_true(fabs(cJSON_GetArrayItem(anchor, 2)->valuedouble - 0.05) < 1e-15);
  assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(list, 2), "active")));
  cJSON_Delete(json);
}

static void test_refusals(void **state) {
  (void)state;
  static const char head[] =
      "<mujoco><worldbody>\n"
      "  <body name=\"a\"><joint name=\"h\" axis=\"0 1 0\"/><geom size=\"0.1\"/></body>\n"
      "  <body name=\"f\"><body name=\"g\"><geom size=\"0.1\"/><freejoint name=\"fj\"/></body></body>\n"
      "</worldbody>\n<equality>\n%s\n</equality></mujoco>\n";
  static const struct {
    const char *el, *message;
  } cases[] = {
      {"<tendon tendon1=\"t\"/>", ":6: <tendon tendon1=\"t\">: unknown tendon"},
      {"<distance geom1=\"x\" geom2=\"y\"/>", "distance equality constraints was removed"},
      {"<connect body1=\"a\"/>", ":6: <connect>: anchor is required"},
      {"<connect body1=\"a\" anchor=\"0 0\"/>", "anchor"},
      {"<connect body1=\"zz\" anchor=\"0 0 0\"/>", "<connect body1=\"zz\">: unknown body"},
      {"<weld body1=\"f\"/>", "merged into its parent"},
      {"<joint joint1=\"fj\"/>", "not a free joint"},
      {"<joint joint1=\"q\"/>", "<joint joint1=\"q\">: unknown joint"},
      {"<weld body1=\"a\" body2=\"a\"/>", "equality[0].body2: the same body as body1"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[1024];
    snprintf(text, sizeof text, head, cases[i].el);
    import_refused("refused.xml", text, cases[i].message);
  }
}

/* two tendons coupled by a quadratic, a third held at an offset: a fixed tendon on two hinges,
 * a spatial one over a site on a slide's body, and a fixed one on the slide */
static const char tendon_mjcf[] =
    "<mujoco model=\"tendon_equality\">\n"
    "  <option><flag contact=\"disable\"/></option>\n"
    "  <worldbody>\n"
    "    <site name=\"top\" pos=\"0.5 0 0.6\"/>\n"
    "    <body name=\"a\"><joint name=\"j1\" axis=\"0 1 0\"/>\n"
    "      <geom type=\"capsule\" fromto=\"0 0 0 0.3 0 0\" size=\"0.02\"/>\n"
    "      <body name=\"b\" pos=\"0.3 0 0\"><joint name=\"j2\" axis=\"0 1 0\"/>\n"
    "        <geom type=\"capsule\" fromto=\"0 0 0 0.3 0 0\" size=\"0.02\"/></body></body>\n"
    "    <body name=\"s\" pos=\"0.5 0 0\"><joint name=\"slide\" type=\"slide\" axis=\"0 0 1\"/>\n"
    "      <geom type=\"sphere\" size=\"0.05\"/><site name=\"hook\" pos=\"0 0 0.05\"/></body>\n"
    "    <body name=\"c\" pos=\"1 0 0\"><joint name=\"j3\" axis=\"0 1 0\"/>\n"
    "      <geom type=\"capsule\" fromto=\"0 0 0 0 0 -0.3\" size=\"0.02\"/></body>\n"
    "  </worldbody>\n"
    "  <tendon>\n"
    "    <fixed name=\"arm\"><joint joint=\"j1\" coef=\"1\"/><joint joint=\"j2\" coef=\"0.5\"/></fixed>\n"
    "    <spatial name=\"rope\"><site site=\"top\"/><site site=\"hook\"/></spatial>\n"
    "    <fixed name=\"swing\"><joint joint=\"j3\" coef=\"2\"/></fixed>\n"
    "  </tendon>\n"
    "  <equality>\n"
    "    <tendon tendon1=\"arm\" tendon2=\"rope\" polycoef=\"0.05 3 -4 0 0\"/>\n"
    "    <tendon tendon1=\"swing\" polycoef=\"0.2 0 0 0 0\" solref=\"0.05 1\"/>\n"
    "  </equality>\n"
    "</mujoco>\n";

#if ACHILLES_HAVE_MUJOCO
/* the tendon couplings beside MuJoCo compiling the same file: rows per state, 2 s side by side */
static void test_tendon_against_mujoco(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  reports r;
  sim_model *m = import_text("tendon_equality.xml", tendon_mjcf, &r);
  mjModel *mm = ts_mj_load_xml(tendon_mjcf);
  mjData *md = ts_mj_data(mm);
  sim_data *d = sim_data_new(m);
  assert_int_equal(m->neq, 2);
  assert_int_equal(m->nq, mm->nq);
  double pos = 0, jac = 0, R = 0, aref = 0, qacc = 0;
  int rows = 0;
  m->opt.solver_iterations = mm->opt.iterations = 1000;
  m->opt.solver_tolerance = mm->opt.tolerance = 1e-15;
  for (int s = 0; s < 500; s++) {
    if (s % 5 == 0) {
      mj_forward(mm, md);
      memcpy(d->qpos, md->qpos, (size_t)m->nq * sizeof(double));
      memcpy(d->qvel, md->qvel, (size_t)m->nv * sizeof(double));
      memcpy(d->qacc_warmstart, md->qacc_warmstart, (size_t)m->nv * sizeof(double));
      sim_forward(m, d);
      assert_int_equal(d->ne, md->ne);
      for (int i = 0; i < d->ne; i++) {
        pos = fmax(pos, fabs(d->efc_pos[i] - md->efc_pos[i]));
        for (int k = 0; k < m->nv; k++) {
          jac = fmax(jac, fabs(d->efc_J[i * m->nv + k] - md->efc_J[i * m->nv + k]));
        }
        R = fmax(R, fabs(d->efc_R[i] - md->efc_R[i]) / fmax(fabs(md->efc_R[i]), 1));
        aref = fmax(aref, fabs(d->efc_aref[i] - md->efc_aref[i]) / fmax(fabs(md->efc_aref[i]), 1));
        rows++;
      }
      for (int k = 0; k < m->nv; k++) {
        qacc = fmax(qacc, fabs(d->qacc[k] - md->qacc[k]) / fmax(fabs(md->qacc[k]), 1));
      }
    }
    mj_step(mm, md);
  }
  mj_resetData(mm, md);
  sim_data_reset(m, d);
  m->opt.solver_iterations = mm->opt.iterations = 100;
  m->opt.solver_tolerance = mm->opt.tolerance = 1e-10;
  double worst = 0, moved = 0;
  for (int s = 0; s < 1000; s++) {
    sim_step(m, d);
    mj_step(mm, md);
    for (int k = 0; k < m->nq; k++) {
      worst = fmax(worst, fabs(d->qpos[k] - md->qpos[k]));
      moved = fmax(moved, fabs(d->qpos[k]));
    }
  }
  print_message("imported tendon equality: %d rows in 100 states: pos %.2g, J %.2g, R %.2g, aref "
                "%.2g, qacc %.2g; 2 s beside MuJoCo max |dq| %.3g (moved %.3g)\n", rows, pos, jac, R,
                aref, qacc, worst, moved);
  assert_int_equal(rows, 200);
  assert_true(pos <= 1e-12 && jac <= 1e-12 && R <= 1e-9 && aref <= 1e-9 && qacc <= 1e-6);
  assert_true(worst <= 1e-6 && moved > 0.05);
  sim_data_free(d);
  sim_model_free(m);
  ts_mj_free(mm, md);
}
#endif

static const char adhesion_mjcf[] =
    "<mujoco model=\"adhesion\">\n"
    "  <default><adhesion gain=\"20\"/></default>\n" /* lost, as in MuJoCo (mjcf_actuator.c) */
    "  <worldbody>\n"
    "    <geom name=\"floor\" type=\"plane\" size=\"1 1 0.1\"/>\n"
    "    <body name=\"box\" pos=\"0 0 0.0299\" euler=\"0 0 20\">\n"
    "      <freejoint/>\n"
    "      <geom name=\"box\" type=\"box\" size=\"0.05 0.04 0.03\" mass=\"0.3\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <actuator><adhesion name=\"stick\" body=\"box\" ctrlrange=\"0 1\"/></actuator>\n"
    "</mujoco>\n";

static void test_adhesion_refusals(void **state) {
  (void)state;
  static const struct {
    const char *from, *to, *message;
  } cases[] = {
      {"ctrlrange=\"0 1\"", "ctrlrange=\"-1 1\"", "adhesion control range cannot be negative"},
      {"ctrlrange=\"0 1\"", "", "<adhesion>: ctrlrange is required"},
      {"body=\"box\" ", "body=\"nope\" ", "<adhesion body=\"nope\">: not a moving body"},
      {"ctrlrange=\"0 1\"", "gain=\"-2\" ctrlrange=\"0 1\"", "adhesion gain cannot be negative"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[2048];
    const char *at = strstr(adhesion_mjcf, cases[i].from);
    assert_non_null(at);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - adhesion_mjcf), adhesion_mjcf,
             cases[i].to, at + strlen(cases[i].from));
    import_refused("adhesion.xml", text, cases[i].message);
  }
}

#if ACHILLES_HAVE_MUJOCO
/* the imported box pressed onto the floor by its adhesion, beside MuJoCo loading the file */
static void test_adhesion_against_mujoco(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  reports r;
  sim_model *m = import_text("adhesion.xml", adhesion_mjcf, &r);
  mjModel *mm = ts_mj_load_xml(adhesion_mjcf);
  mjData *md = ts_mj_data(mm);
  sim_data *d = sim_data_new(m);
  assert_int_equal(m->nu, 1);
  assert_true(m->actuators[0].gear == 1 && m->actuators[0].adhesion_body == 1);
  double worst = 0, moment = 0, sunk = 0;
  for (int s = 0; s < 500; s++) {
    d->ctrl[0] = md->ctrl[0] = s < 100 ? 0 : 1;
    sim_step(m, d);
    mj_step(mm, md);
    for (int k = 0; k < m->nq; k++) {
      worst = fmax(worst, fabs(d->qpos[k] - md->qpos[k]));
    }
    for (int k = 0; k < m->nv; k++) {
      moment = fmax(moment, fabs(d->trn_moment[k] - md->actuator_moment[k]));
    }
    sunk = fmax(sunk, 0.0299 - d->qpos[2]);
  }
  print_message("imported adhesion: 1 s beside MuJoCo, max |dq| %.3g, moment %.2g (the box sank "
                "%.3g mm under its adhesion)\n", worst, moment, 1e3 * sunk);
  assert_true(worst <= 1e-9 && moment <= 1e-14);
  assert_true(sunk > 2e-5); /* 7.8 µm without its adhesion */
  sim_data_free(d);
  sim_model_free(m);
  ts_mj_free(mm, md);
}

static double rel(double a, double b) {
  return fabs(a - b) / fmax(fmax(fabs(a), fabs(b)), 1.0);
}

static void test_against_mujoco(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  reports r;
  sim_model *m = import_text("equality.xml", equality_mjcf, &r);
  mjModel *mm = ts_mj_load_xml(equality_mjcf);
  mjData *md = ts_mj_data(mm);
  sim_data *d = sim_data_new(m);
  assert_int_equal(m->nq, mm->nq);
  assert_int_equal(m->neq, mm->neq);
  int qmap[32], vmap[32];
  ts_mj_maps(m, mm, qmap, vmap);
  for (int k = 0; k < m->nv; k++) {
    assert_int_equal(vmap[k], k); /* the same order: rows compare column by column */
  }
  m->opt.solver_iterations = mm->opt.iterations = 1000;
  m->opt.solver_tolerance = mm->opt.tolerance = 1e-15;
  /* start bent: the loop open, the weld off its pose */
  md->qpos[mm->jnt_qposadr[mj_name2id(mm, mjOBJ_JOINT, "j1")]] = 0.2;
  md->qpos[mm->jnt_qposadr[mj_name2id(mm, mjOBJ_JOINT, "j2")]] = -0.3;
  double pos = 0, jac = 0, R = 0, aref = 0, force = 0, qacc = 0;
  int rows = 0;
  for (int s = 0; s < 500; s++) {
    if (s % 5 == 0) {
      mj_forward(mm, md);
      for (int k = 0; k < m->nq; k++) {
        d->qpos[k] = md->qpos[qmap[k]];
      }
      for (int k = 0; k < m->nv; k++) {
        d->qvel[k] = md->qvel[vmap[k]];
        d->qacc_warmstart[k] = md->qacc_warmstart[vmap[k]];
      }
      sim_forward(m, d);
      assert_int_equal(d->ne, md->ne);
      assert_int_equal(d->nefc, md->nefc);
      for (int i = 0; i < d->nefc; i++) {
        pos = fmax(pos, fabs(d->efc_pos[i] - md->efc_pos[i]));
        for (int k = 0; k < m->nv; k++) {
          jac = fmax(jac, fabs(d->efc_J[i * m->nv + k] - md->efc_J[i * m->nv + k]));
        }
        R = fmax(R, rel(d->efc_R[i], md->efc_R[i]));
        aref = fmax(aref, rel(d->efc_aref[i], md->efc_aref[i]));
        force = fmax(force, rel(d->efc_force[i], md->efc_force[i]));
        rows++;
      }
      for (int k = 0; k < m->nv; k++) {
        qacc = fmax(qacc, rel(d->qacc[k], md->qacc[vmap[k]]));
      }
    }
    mj_step(mm, md);
  }
  print_message("imported equality: %d rows in 100 states beside MuJoCo's: pos %.2g, J %.2g, R "
                "%.2g, aref %.2g, force %.2g (relative, floor 1), qacc %.2g\n", rows, pos, jac, R,
                aref, force, qacc);
  assert_int_equal(rows, 100 * 11); /* 3 + 6 + 1 + 1 (the inactive weld makes none) */
  assert_true(pos <= 1e-12 && jac <= 1e-12 && R <= 1e-9 && aref <= 1e-9);
  assert_true(force <= 1e-7 && qacc <= 1e-6);
  /* 2 s side by side from the same start, MuJoCo's default solver settings on both */
  m->opt.solver_iterations = mm->opt.iterations = 100;
  m->opt.solver_tolerance = mm->opt.tolerance = 1e-10;
  mj_resetData(mm, md);
  sim_data_reset(m, d);
  md->qpos[mm->jnt_qposadr[mj_name2id(mm, mjOBJ_JOINT, "j1")]] = 0.2;
  for (int k = 0; k < m->nq; k++) {
    d->qpos[k] = md->qpos[qmap[k]];
  }
  double worst = 0;
  for (int s = 0; s < 1000; s++) {
    sim_step(m, d);
    mj_step(mm, md);
    for (int k = 0; k < m->nq; k++) {
      worst = fmax(worst, fabs(d->qpos[k] - md->qpos[qmap[k]]));
    }
  }
  print_message("imported equality: 2 s beside MuJoCo, max |dq| %.3g\n", worst);
  assert_true(worst <= 1e-6);
  sim_data_free(d);
  sim_model_free(m);
  ts_mj_free(mm, md);
}
#endif

#if ACHILLES_HAVE_MUJOCO
TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_json, test_refusals, test_against_mujoco,
             test_adhesion_refusals, test_adhesion_against_mujoco, test_tendon_against_mujoco)
#else
TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_json, test_refusals, test_adhesion_refusals,
             ts_mujoco_missing)
#endif
