/* tests/sim/test_equality_reference.c: equality constraints (sim/constraint_equality.c) against
 * MuJoCo 2.2.2, on three scenes of our own:
 *  - fourbar: a crank, a coupler and a rocker, the loop closed by a connect (and a second
 *    connect, inactive, that must make no rows);
 *  - weld: a free ball welded to the world at a relative pose that presses it into the floor
 *    (contacts fight the weld), and a free tool welded to a swinging arm with an anchor and
 *    torquescale 0.5;
 *  - coupled: two pendulums coupled by a quartic joint equality, and a slide held at an offset
 *    by a one-joint equality.
 * Per state (along MuJoCo's trajectory, every 5th step, solvers to convergence): each equality
 * row's position, Jacobian, regularisation and reference acceleration; the constraint forces
 * within 1e-7 of the largest; q̈ within 1e-6 relative. Over 2 s side by side from the same start:
 * max |Δqpos| printed and bounded. Newton and CG, pyramidal and elliptic cones. The loader's
 * completion of the data (a connect's second point) against MuJoCo's mj_setConst. Expected
 * values are MuJoCo's, computed here; without libmujoco-dev the reference tests skip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/deriv/deriv.h"
#include "sim/sim.h"
#include "support/model.h"
#include "support/mujoco.h"
#include "support/skip.h"

#define INERTIAL(m, cx, cz, i)                                                                 \
  "\"inertial\": { \"mass\": " #m ", \"com\": [" #cx ", 0, " #cz "], \"inertia\": [" #i ", " #i \
  ", " #i ", 0, 0, 0] }"

static const char fourbar_json[] =
    "{ \"name\": \"fourbar\", \"timestep\": 0.002, \"bodies\": [\n"
    "  { \"name\": \"crank\", \"parent\": \"world\",\n"
    "    \"joint\": { \"name\": \"crank\", \"type\": \"hinge\", \"axis\": [0, 1, 0], \"damping\": 0.01 },\n"
    "    " INERTIAL(0.3, 0.05, 0, 2e-4) " },\n"
    "  { \"name\": \"coupler\", \"parent\": \"crank\", \"pos\": [0.1, 0, 0],\n"
    "    \"joint\": { \"name\": \"coupler\", \"type\": \"hinge\", \"axis\": [0, 1, 0] },\n"
    "    " INERTIAL(0.2, 0.15, 0, 5e-4) " },\n"
    "  { \"name\": \"rocker\", \"parent\": \"world\", \"pos\": [0.3, 0, 0.05],\n"
    "    \"joint\": { \"name\": \"rocker\", \"type\": \"hinge\", \"axis\": [0, 1, 0],\n"
    "      \"initial\": 0.1 },\n"
    "    " INERTIAL(0.1, 0, 0.08, 1e-4) " } ],\n"
    "  \"equality\": [\n"
    "    { \"type\": \"connect\", \"name\": \"loop\", \"body1\": \"coupler\", \"body2\": \"rocker\",\n"
    "      \"anchor\": [0.3, 0, 0] },\n"
    "    { \"type\": \"connect\", \"name\": \"off\", \"body1\": \"crank\", \"anchor\": [0.1, 0, 0],\n"
    "      \"active\": false } ] }\n";

static const char weld_json[] =
    "{ \"name\": \"weld\", \"timestep\": 0.002,\n"
    "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },\n"
    "    { \"name\": \"ball\", \"body\": \"ball\", \"type\": \"sphere\", \"size\": [0.05] } ],\n"
    "  \"bodies\": [\n"
    "  { \"name\": \"ball\", \"parent\": \"world\", \"pos\": [0, 0, 0.3],\n"
    "    \"joint\": { \"name\": \"ball\", \"type\": \"free\" },\n"
    "    " INERTIAL(0.2, 0, 0, 2e-4) " },\n"
    "  { \"name\": \"arm\", \"parent\": \"world\", \"pos\": [0.5, 0, 0.5],\n"
    "    \"joint\": { \"name\": \"arm\", \"type\": \"hinge\", \"axis\": [0, 1, 0], \"initial\": 0.4 },\n"
    "    " INERTIAL(0.5, 0.1, 0, 1e-3) " },\n"
    "  { \"name\": \"tool\", \"parent\": \"world\", \"pos\": [0.72, 0.01, 0.5],\n"
    "    \"quat\": [0.9553364891256060, 0, 0.2955202066613396, 0],\n"
    "    \"joint\": { \"name\": \"tool\", \"type\": \"free\" },\n"
    "    " INERTIAL(0.1, 0.02, 0, 1e-4) " } ],\n"
    "  \"equality\": [\n"
    "    { \"type\": \"weld\", \"name\": \"hold\", \"body1\": \"ball\",\n"
    "      \"relpose\": [0.05, 0.02, 0.04, 0.9800665778412416, 0.1986693307950612, 0, 0],\n"
    "      \"solref\": [0.01, 1] },\n"
    "    { \"type\": \"weld\", \"name\": \"grip\", \"body1\": \"tool\", \"body2\": \"arm\",\n"
    "      \"anchor\": [0.2, 0, 0.01], \"torquescale\": 0.5,\n"
    "      \"solimp\": [0.8, 0.95, 0.01, 0.4, 3] } ] }\n";

static const char coupled_json[] =
    "{ \"name\": \"coupled\", \"timestep\": 0.002, \"bodies\": [\n"
    "  { \"name\": \"p1\", \"parent\": \"world\",\n"
    "    \"joint\": { \"name\": \"j1\", \"type\": \"hinge\", \"axis\": [0, 1, 0], \"initial\": 0.5 },\n"
    "    " INERTIAL(0.3, 0, -0.2, 2e-4) " },\n"
    "  { \"name\": \"p2\", \"parent\": \"world\", \"pos\": [0.5, 0, 0],\n"
    "    \"joint\": { \"name\": \"j2\", \"type\": \"hinge\", \"axis\": [0, 1, 0], \"initial\": -0.7 },\n"
    "    " INERTIAL(0.4, 0.1, -0.25, 3e-4) " },\n"
    "  { \"name\": \"slider\", \"parent\": \"world\", \"pos\": [1, 0, 0],\n"
    "    \"joint\": { \"name\": \"s\", \"type\": \"slide\", \"axis\": [0, 0, 1] },\n"
    "    " INERTIAL(0.2, 0, 0, 1e-4) " } ],\n"
    "  \"equality\": [\n"
    "    { \"type\": \"joint\", \"name\": \"gear\", \"joint1\": \"j1\", \"joint2\": \"j2\",\n"
    "      \"polycoef\": [0.1, 0.8, 0.3, -0.2, 0.05] },\n"
    "    { \"type\": \"joint\", \"name\": \"hold\", \"joint1\": \"s\", \"polycoef\": [0.05, 0, 0, 0, 0],\n"
    "      \"solref\": [-2000, -30] } ] }\n";

static const char *const scene_json[] = {fourbar_json, weld_json, coupled_json};
static const char *const scene_name[] = {"fourbar", "weld", "coupled"};
#define NSCENE 3

/* --- without MuJoCo: the rows' shape ----------------------------------------------------------- */

/* an inactive equality makes no rows; activated between steps it makes its 3 */
static void test_active_flag(void **state) {
  (void)state;
  sim_model *m = ts_model(fourbar_json);
  sim_data *d = sim_data_new(m);
  sim_forward(m, d);
  assert_int_equal(d->ne, 3);
  for (int i = 0; i < d->ne; i++) {
    assert_int_equal(d->efc_type[i], SIM_CNSTR_EQUALITY);
    assert_int_equal(d->efc_id[i], 0);
  }
  m->equalities[1].active = 1;
  sim_forward(m, d);
  assert_int_equal(d->ne, 6);
  assert_int_equal(d->efc_id[3], 1);
  m->equalities[0].active = m->equalities[1].active = 0;
  sim_forward(m, d);
  assert_int_equal(d->ne, 0);
  assert_int_equal(d->nefc, 0);
  sim_data_free(d);
  sim_model_free(m);
}

/* the loop holds: it starts 1 cm open (the rocker's initial angle) and closes; from 0.5 s to 2 s
 * of swinging the connect's two points stay within 1 mm */
static void test_loop_holds(void **state) {
  (void)state;
  sim_model *m = ts_model(fourbar_json);
  sim_data *d = sim_data_new(m);
  double worst = 0;
  for (int s = 0; s < 1000; s++) {
    sim_step(m, d);
    sim_forward(m, d);
    worst = s < 250 ? 0 : fmax(worst, sqrt(d->efc_pos[0] * d->efc_pos[0] + d->efc_pos[1] * d->efc_pos[1] +
                             d->efc_pos[2] * d->efc_pos[2]));
  }
  print_message("fourbar: the connect's points at most %.3g m apart from 0.5 s to 2 s\n", worst);
  assert_true(worst < 1e-3);
  assert_true(fabs(d->qpos[0]) > 0.05); /* it moved */
  sim_data_free(d);
  sim_model_free(m);
}

/* the loader's refusals name the place and what was expected */
static void test_load_errors(void **state) {
  (void)state;
  static const char head[] =
      "{ \"bodies\": [ { \"name\": \"a\", \"parent\": \"world\",\n"
      "    \"joint\": { \"name\": \"h\", \"type\": \"hinge\", \"axis\": [0, 1, 0] },\n"
      "    \"inertial\": { \"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } },\n"
      "  { \"name\": \"b\", \"parent\": \"world\", \"joint\": { \"name\": \"f\", \"type\": \"free\" },\n"
      "    \"inertial\": { \"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } } ],\n"
      "  \"equality\": [ %s ] }";
  static const struct {
    const char *eq, *message;
  } cases[] = {
      {"{ \"type\": \"connect\", \"body1\": \"a\" }", "equality[0].anchor: missing"},
      {"{ \"type\": \"connect\", \"body1\": \"x\", \"anchor\": [0, 0, 0] }",
       "equality[0].body1: unknown body \"x\""},
      {"{ \"type\": \"weld\", \"body1\": \"a\", \"body2\": \"a\" }",
       "equality[0].body2: the same body as body1"},
      {"{ \"type\": \"weld\", \"body1\": \"a\", \"polycoef\": [0, 1, 0, 0, 0] }",
       "equality[0].polycoef: not a key of a \"weld\" equality"},
      {"{ \"type\": \"weld\", \"body1\": \"a\", \"relpose\": [0, 0, 0, 0, 0, 0, 0] }",
       "equality[0].relpose: the quaternion (the last 4 numbers) is 0"},
      {"{ \"type\": \"joint\", \"joint1\": \"f\" }", "equality[0].joint1: joint \"f\" is not a hinge"},
      {"{ \"type\": \"joint\", \"joint1\": \"h\", \"joint2\": \"h\" }",
       "equality[0].joint2: the same joint as joint1"},
      {"{ \"type\": \"tendon\", \"tendon1\": \"t\" }", "equality[0].tendon1: unknown tendon \"t\""},
      {"{ \"type\": \"tendon\", \"joint1\": \"h\" }", "equality[0].joint1: not a key of a \"tendon\" equality"},
      {"{ \"type\": \"distance\" }", "equality[0].type: unknown type \"distance\""},
      {"{ \"type\": \"joint\", \"joint1\": \"h\", \"active\": 1 }",
       "equality[0].active: expected true or false"},
      {"{ \"type\": \"joint\", \"name\": \"e\", \"joint1\": \"h\" }, "
       "{ \"type\": \"connect\", \"name\": \"e\", \"body1\": \"b\", \"anchor\": [0, 0, 0] }",
       "equality[1]: duplicate equality name \"e\" (also equality[0])"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char json[2048], err[512];
    snprintf(json, sizeof json, head, cases[i].eq);
    sim_model *m = sim_model_load_string(json, "eq.json", err, sizeof err);
    if (m || !strstr(err, cases[i].message)) {
      fail_msg("case %zu: expected \"%s\", got \"%s\"", i, cases[i].message, m ? "a model" : err);
    }
  }
}

/* derivatives of a model with equality rows are refused by name, never computed without them */
static void test_deriv_refused(void **state) {
  (void)state;
  sim_model *m = ts_model(coupled_json);
  char err[256] = "";
  sim_deriv *w = sim_deriv_new(m, NULL, 0, err, sizeof err);
  assert_null(w);
  assert_non_null(strstr(err, "equality constraint"));
  print_message("%s\n", err);
  sim_model_free(m);
}

#if ACHILLES_HAVE_MUJOCO
#include "mujoco_pair.h"

typedef struct row_errors {
  int rows;
  double pos, jac, R, aref;
} row_errors;

static double rel(double a, double b) {
  return fabs(a - b) / fmax(fmax(fabs(a), fabs(b)), 1.0);
}

/* the equality rows of ours and MuJoCo's (evaluated at the same state) */
static void compare_rows(const mj_pair *p, row_errors *r) {
  const int nv = p->m->nv;
  for (int i = 0; i < p->d->ne; i++) {
    assert_int_equal(p->md->efc_type[i], mjCNSTR_EQUALITY);
    assert_int_equal(p->md->efc_id[i], p->d->efc_id[i]);
    r->pos = fmax(r->pos, fabs(p->d->efc_pos[i] - p->md->efc_pos[i]));
    for (int k = 0; k < nv; k++) {
      r->jac = fmax(r->jac, fabs(p->d->efc_J[i * nv + k] - p->md->efc_J[i * nv + k]));
    }
    r->R = fmax(r->R, rel(p->d->efc_R[i], p->md->efc_R[i]));
    r->aref = fmax(r->aref, rel(p->d->efc_aref[i], p->md->efc_aref[i]));
    r->rows++;
  }
}

static const char *const solver_name[] = {"CG", "Newton"};
static const char *const cone_name[] = {"pyramidal", "elliptic"};

static void test_states(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  char err[512];
  for (int k = 0; k < NSCENE; k++) {
    for (int v = 0; v < 4; v++) {
      const sim_solver_type solver = (sim_solver_type)(v & 1);
      const sim_cone cone = (sim_cone)(v >> 1);
      mj_pair p;
      if (mj_pair_open(&p, scene_json[k], err, sizeof err) != 0) {
        fail_msg("%s: %s", scene_name[k], err);
      }
      mj_pair_options(&p, solver, cone, 1000, 1e-15);
      mj_state_errors e = {0};
      row_errors r = {0};
      for (int s = 0; s < 1000; s++) {
        if (s % 5 == 0) {
          mj_pair_copy_state(&p);
          if (mj_pair_compare_forward(&p, &e, err, sizeof err) != 0) {
            fail_msg("%s: %s", scene_name[k], err);
          }
          compare_rows(&p, &r);
        }
        mj_step(p.mm, p.md);
      }
      print_message("%-7s %-6s %-9s %3d states, %4d equality rows, %4d contacts: pos %.2g, J "
                    "%.2g, R %.2g, aref %.2g; force %.2g, qacc %.2g; %d unconverged\n",
                    scene_name[k], solver_name[solver], cone_name[cone], e.states, r.rows,
                    e.contacts, r.pos, r.jac, r.R, r.aref, e.force, e.qacc, e.unconverged);
      assert_true(r.rows >= 200);
      assert_true(r.pos <= 1e-12 && r.jac <= 1e-12 && r.R <= 1e-9 && r.aref <= 1e-9);
      /* CG stops by its tolerance short of the contacts' optimum (1e-6 in
       * test_constraint_reference.c too); Newton reaches it */
      assert_true(e.force <= (solver == SIM_SOLVER_CG ? 1e-6 : 1e-7));
      assert_true(e.qacc <= 1e-6);
      assert_int_equal(e.unconverged, 0);
      mj_pair_close(&p);
    }
  }
}

static void test_trajectories(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  char err[512];
  for (int k = 0; k < NSCENE; k++) {
    for (int v = 0; v < 4; v++) {
      const sim_solver_type solver = (sim_solver_type)(v & 1);
      const sim_cone cone = (sim_cone)(v >> 1);
      mj_pair p;
      if (mj_pair_open(&p, scene_json[k], err, sizeof err) != 0) {
        fail_msg("%s: %s", scene_name[k], err);
      }
      mj_pair_options(&p, solver, cone, 100, 1e-10);
      double worst = 0, moved = 0;
      int contacts = 0;
      for (int s = 0; s < 1000; s++) {
        sim_step(p.m, p.d);
        mj_step(p.mm, p.md);
        worst = fmax(worst, mj_max_diff(p.d->qpos, p.md->qpos, p.m->nq));
        moved = fmax(moved, mj_max_diff(p.d->qpos, p.m->qpos0, p.m->nq));
        contacts += p.d->ncon;
      }
      print_message("%-7s %-6s %-9s 2 s at 1e-10: max |dq| %.3g (moved up to %.3g; %d contacts "
                    "in all)\n", scene_name[k], solver_name[solver], cone_name[cone], worst, moved,
                    contacts);
      assert_true(moved > 0.01);
      assert_true(worst <= 1e-6);
      mj_pair_close(&p);
    }
  }
}

/* a connect's point on body2 as MuJoCo's mj_setConst completes it from the anchor on body1 (the
 * writer gives MuJoCo only the anchor) */
static void test_setconst(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  char err[512];
  mj_pair p;
  if (mj_pair_open(&p, fourbar_json, err, sizeof err) != 0) {
    fail_msg("%s", err);
  }
  assert_int_equal(p.mm->neq, p.m->neq);
  double worst = 0;
  for (int e = 0; e < p.m->neq; e++) {
    worst = fmax(worst, mj_max_diff(p.m->equalities[e].data, p.mm->eq_data + mjNEQDATA * e, 6));
  }
  print_message("connect data as MuJoCo's mj_setConst: max difference %.3g\n", worst);
  assert_true(worst <= 1e-15);
  mj_pair_close(&p);
}
#endif

#if ACHILLES_HAVE_MUJOCO
TS_MAIN(test_active_flag, test_loop_holds, test_load_errors, test_deriv_refused, test_states, test_trajectories, test_setconst)
#else
TS_MAIN(test_active_flag, test_loop_holds, test_load_errors, test_deriv_refused,
        ts_mujoco_missing)
#endif
