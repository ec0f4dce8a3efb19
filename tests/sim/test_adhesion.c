/* tests/sim/test_adhesion.c: adhesion actuators (sim/actuator_crank.c, MuJoCo 2.2.2's
 * <adhesion>, mjTRN_BODY) against MuJoCo on a scene of our own: a free box on a plane, pressed
 * onto it by its adhesion (its four corner contacts), and an arm whose sphere is pulled onto a
 * block while a motor lifts the arm. Per state along MuJoCo's trajectory (commands switching
 * on and off): each adhesion's moment (MuJoCo's actuator_moment), qfrc_actuator, the contact
 * forces and q̈; and 2 s side by side. Newton and CG, pyramidal and elliptic. Closed form: the
 * box's adhesion is a downward force gear·ctrl at its contacts' mean. Expected values are
 * MuJoCo's, computed here; without libmujoco-dev the reference tests skip. */
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
#include "support/mujoco.h"
#include "support/skip.h"

static const char scene_json[] =
    "{ \"name\": \"adhesion\", \"timestep\": 0.002,\n"
    "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },\n"
    "    { \"name\": \"block\", \"body\": \"world\", \"type\": \"box\", \"pos\": [0.5, 0, 0.05],\n"
    "      \"size\": [0.1, 0.1, 0.05] },\n"
    "    { \"name\": \"box\", \"body\": \"box\", \"type\": \"box\", \"size\": [0.05, 0.04, 0.03] },\n"
    "    { \"name\": \"tip\", \"body\": \"arm\", \"type\": \"sphere\", \"pos\": [0.3, 0, 0],\n"
    "      \"size\": [0.03] } ],\n"
    "  \"bodies\": [\n"
    "  { \"name\": \"box\", \"parent\": \"world\", \"pos\": [0, 0, 0.0299],\n"
    "    \"joint\": { \"name\": \"box\", \"type\": \"free\" },\n"
    "    \"inertial\": { \"mass\": 0.3, \"inertia\": [2e-4, 3e-4, 4e-4, 0, 0, 0] } },\n"
    "  { \"name\": \"arm\", \"parent\": \"world\", \"pos\": [0.2, 0, 0.135],\n"
    "    \"joint\": { \"name\": \"shoulder\", \"type\": \"hinge\", \"axis\": [0, -1, 0],\n"
    "      \"damping\": 0.05 },\n"
    "    \"inertial\": { \"mass\": 0.4, \"com\": [0.15, 0, 0], \"inertia\": [1e-4, 3e-3, 3e-3, 0, 0, 0] } } ],\n"
    "  \"actuators\": [\n"
    "    { \"name\": \"stick\", \"type\": \"motor\", \"gear\": 20, \"ctrlrange\": [0, 1],\n"
    "      \"adhesion\": { \"body\": \"box\" } },\n"
    "    { \"name\": \"grip\", \"type\": \"motor\", \"gear\": 15, \"ctrlrange\": [0, 1],\n"
    "      \"adhesion\": { \"body\": \"arm\" } },\n"
    "    { \"name\": \"lift\", \"type\": \"motor\", \"joint\": \"shoulder\", \"ctrlrange\": [-2, 2] } ] }\n";

/* margins and gaps as MuJoCo's active_adhesion sample uses them: a ball inflated by a 3 cm
 * margin that is all gap (its contacts make no rows, its adhesion counts them) above a tall post
 * (its top within the margin while the two bounding spheres are apart: the broad phase must add
 * the margin), and a box with a 1 cm margin and a 5 mm gap (rows from 5 mm: it rests on a
 * cushion of about that) */
static const char margin_json[] =
    "{ \"name\": \"margins\", \"timestep\": 0.002,\n"
    "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },\n"
    "    { \"name\": \"post\", \"body\": \"world\", \"type\": \"box\", \"pos\": [0.3, 0, 0.2],\n"
    "      \"size\": [0.02, 0.02, 0.2] },\n"
    "    { \"name\": \"ball\", \"body\": \"ball\", \"type\": \"sphere\", \"size\": [0.03],\n"
    "      \"margin\": 0.03, \"gap\": 0.03 },\n"
    "    { \"name\": \"box\", \"body\": \"box\", \"type\": \"box\", \"size\": [0.05, 0.04, 0.03],\n"
    "      \"margin\": 0.01, \"gap\": 0.005 } ],\n"
    "  \"bodies\": [\n"
    "  { \"name\": \"ball\", \"parent\": \"world\", \"pos\": [0.3, 0, 0.45],\n"
    "    \"joint\": { \"name\": \"ball\", \"type\": \"free\" },\n"
    "    \"inertial\": { \"mass\": 0.1, \"inertia\": [4e-5, 4e-5, 4e-5, 0, 0, 0] } },\n"
    "  { \"name\": \"box\", \"parent\": \"world\", \"pos\": [0, 0, 0.036],\n"
    "    \"joint\": { \"name\": \"box\", \"type\": \"free\" },\n"
    "    \"inertial\": { \"mass\": 0.3, \"inertia\": [2e-4, 3e-4, 4e-4, 0, 0, 0] } } ],\n"
    "  \"actuators\": [\n"
    "    { \"name\": \"ball\", \"type\": \"motor\", \"gear\": 5, \"ctrlrange\": [0, 1],\n"
    "      \"adhesion\": { \"body\": \"ball\" } },\n"
    "    { \"name\": \"box\", \"type\": \"motor\", \"gear\": 10, \"ctrlrange\": [0, 1],\n"
    "      \"adhesion\": { \"body\": \"box\" } } ] }\n";

static void margin_commands(double t, double *ctrl) {
  ctrl[0] = t < 0.3 ? 0 : 1;
  ctrl[1] = t < 0.6 ? 0 : 1;
}

static void commands(double t, double *ctrl) {
  ctrl[0] = t < 0.5 ? 0 : 1;
  ctrl[1] = fmod(t, 0.8) < 0.4 ? 1 : 0;
  ctrl[2] = 0.8 * sin(4 * t);
}

/* at rest on its four corners, the box's adhesion is gear·ctrl straight down (its moment, minus
 * the mean normal Jacobian, pushes z by −1 and no torque about the centre) */
static void test_closed_form(void **state) {
  (void)state;
  sim_model *m = ts_model(scene_json);
  sim_data *d = sim_data_new(m);
  d->ctrl[0] = 0.5;
  sim_forward(m, d);
  const double *mo = d->trn_moment; /* row 0: the box's adhesion */
  print_message("box adhesion moment: [%.3g %.3g %.3g | %.3g %.3g %.3g] over %d contacts\n", mo[0],
                mo[1], mo[2], mo[3], mo[4], mo[5], d->ncon);
  assert_true(fabs(mo[2] + 1) < 1e-15 && fabs(mo[0]) < 1e-15 && fabs(mo[1]) < 1e-15);
  assert_true(fabs(mo[3]) < 1e-15 && fabs(mo[4]) < 1e-15 && fabs(mo[5]) < 1e-15);
  assert_true(fabs(d->qfrc_actuator[2] + 10) < 1e-13);
  /* no contact, no moment: the arm's tip is off the block at the start */
  for (int k = 0; k < m->nv; k++) {
    assert_true(d->trn_moment[m->nv + k] == 0);
  }
  sim_data_free(d);
  sim_model_free(m);
}

/* a negative margin is refused, naming the geom (margins beside cylinders and meshes are
 * MuJoCo's: test_collision's MPR comparison with a margin) */
static void test_margin_refusals(void **state) {
  (void)state;
  static const struct {
    const char *from, *to, *message;
  } cases[] = {
      {"\"margin\": 0.03,", "\"margin\": -0.03,", "geoms[2].margin"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ts_model_refused_edit(margin_json, cases[i].from, cases[i].to, cases[i].message);
  }
}

#if ACHILLES_HAVE_MUJOCO
#include "mujoco_pair.h"

static const char *const solver_name[] = {"CG", "Newton"};
static const char *const cone_name[] = {"pyramidal", "elliptic"};

static void against_mujoco(const char *json, void (*control)(double, double *), const char *name,
                           int rows_expected) {
  char err[512];
  for (int v = 0; v < 4; v++) {
    const sim_solver_type solver = (sim_solver_type)(v & 1);
    const sim_cone cone = (sim_cone)(v >> 1);
    mj_pair p;
    if (mj_pair_open(&p, json, err, sizeof err) != 0) {
      fail_msg("%s", err);
    }
    mj_pair_options(&p, solver, cone, 1000, 1e-15);
    const int nv = p.m->nv;
    mj_state_errors e = {0};
    double moment = 0, qfrc = 0;
    int adhering = 0, gap = 0;
    for (int s = 0; s < 1000; s++) {
      control(p.md->time, p.md->ctrl);
      if (s % 5 == 0) {
        mj_pair_copy_state(&p);
        if (mj_pair_compare_forward(&p, &e, err, sizeof err) != 0) {
          fail_msg("%s", err);
        }
        for (int a = 0; a < 2; a++) {
          double norm = 0;
          for (int k = 0; k < nv; k++) {
            moment = fmax(moment, fabs(p.d->trn_moment[a * nv + k] - p.md->actuator_moment[a * nv + k]));
            norm += fabs(p.d->trn_moment[a * nv + k]);
          }
          adhering += norm > 0 && p.d->ctrl[a] > 0;
        }
        for (int k = 0; k < nv; k++) {
          qfrc = fmax(qfrc, fabs(p.d->qfrc_actuator[k] - p.md->qfrc_actuator[k]));
        }
        for (int c = 0; c < p.d->ncon; c++) {
          gap += p.d->con_efc[c] < 0;
        }
      }
      mj_step(p.mm, p.md);
    }
    print_message("%s %-6s %-9s %d states (%d adhesions pulling), %d contacts (%d in a gap): "
                  "moment %.2g, qfrc_actuator %.2g; force %.2g, qacc %.2g; %d unconverged\n", name,
                  solver_name[solver], cone_name[cone], e.states, adhering, e.contacts, gap, moment,
                  qfrc, e.force, e.qacc, e.unconverged);
    assert_true(adhering > 150 && e.contacts > 500);
    assert_true(rows_expected ? gap > 10 : gap == 0);
    assert_true(moment <= 1e-14 && qfrc <= 1e-12);
    /* CG stops by its tolerance short of the stiff contacts' optimum (as in
     * test_constraint_reference.c: 1e-6 there too); Newton reaches it */
    assert_true(e.force <= (solver == SIM_SOLVER_CG ? 1e-6 : 1e-7) && e.qacc <= 1e-6);
    assert_int_equal(e.unconverged, 0);
    /* 2 s side by side from the start */
    mj_resetData(p.mm, p.md);
    sim_data_reset(p.m, p.d);
    memcpy(p.md->qpos, p.d->qpos, (size_t)p.m->nq * sizeof(double));
    mj_pair_options(&p, solver, cone, 100, 1e-10);
    double worst = 0, moved = 0;
    for (int s = 0; s < 1000; s++) {
      control(p.d->time, p.d->ctrl);
      memcpy(p.md->ctrl, p.d->ctrl, (size_t)p.m->nu * sizeof(double));
      sim_step(p.m, p.d);
      mj_step(p.mm, p.md);
      worst = fmax(worst, mj_max_diff(p.d->qpos, p.md->qpos, p.m->nq));
      moved = fmax(moved, mj_max_diff(p.d->qpos, p.m->qpos0, p.m->nq));
    }
    print_message("%s %-6s %-9s 2 s at 1e-10: max |dq| %.3g (moved up to %.3g)\n", name,
                  solver_name[solver], cone_name[cone], worst, moved);
    assert_true(moved > (rows_expected ? 0.01 : 0.05)); /* the margins scene settles */
    assert_true(worst <= 1e-6);
    mj_pair_close(&p);
  }
}

static void test_against_mujoco(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  against_mujoco(scene_json, commands, "adhesion", 0);
}

/* contacts within margins, those in the gap without rows, adhesion counting them */
static void test_margins_against_mujoco(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  against_mujoco(margin_json, margin_commands, "margins ", 1);
}
#endif

#if ACHILLES_HAVE_MUJOCO
TS_MAIN(test_closed_form, test_margin_refusals, test_against_mujoco, test_margins_against_mujoco)
#else
TS_MAIN(test_closed_form, test_margin_refusals, ts_mujoco_missing)
#endif
