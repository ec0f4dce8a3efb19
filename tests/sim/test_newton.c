/* tests/sim/test_newton.c: the Newton solver (sim/solver_newton.c) against MuJoCo 2.2.2's, on
 * the scenes of contact_scenes.h with the pyramidal cone.
 *
 *  - per state: along MuJoCo's own trajectory of each scene (2 s), every other state evaluated by
 *    both with the solvers run to convergence: contact and joint-row forces within 1e-7 of the
 *    largest, q̈ within 1e-6 relative, and neither solver out of iterations;
 *  - trajectories: 2 s side by side at tolerance 1e-10, within 1e-6 (rad, m, quaternion);
 *  - with the file's iteration limit and tolerance (20, 1e-8 for our JSON): ours differs from
 *    MuJoCo's Newton by no more than MuJoCo's own CG differs from its Newton (both printed);
 *  - the solver statistics: nactive counts a joint's friction row at its bound, as MuJoCo does.
 * Expected values are MuJoCo's, computed here. Without libmujoco-dev the suite skips. */
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

/* A hinge with friction loss 0.3 N·m pushed by 1 N·m slides with its friction row at the bound
 * (LINEARPOS: force −F against the motion): the row carries force, so nactive counts it (data.h,
 * MuJoCo's nactive); at rest under no torque the row sticks and counts too, quadratic. */
static void test_nactive_friction_at_bound(void **state) {
  (void)state;
  static const char json[] =
      "{ \"bodies\": [ { \"name\": \"arm\", \"parent\": \"world\",\n"
      "    \"joint\": { \"name\": \"j\", \"type\": \"hinge\", \"axis\": [0, 0, 1],\n"
      "      \"frictionloss\": 0.3 },\n"
      "    \"inertial\": { \"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } } ] }\n";
  sim_model *m = ts_model(json);
  for (int solver = 0; solver < 2; solver++) {
    m->opt.solver = (sim_solver_type)solver;
    sim_data *d = sim_data_new(m);
    d->qfrc_applied[0] = 1.0;
    d->qvel[0] = 0.5;
    sim_forward(m, d);
    assert_int_equal(d->nefc, 1);
    assert_int_equal(d->efc_state[0], SIM_CSTATE_LINEARPOS);
    assert_true(d->efc_force[0] == -0.3);
    assert_int_equal(d->solver.nactive, 1);
    d->qfrc_applied[0] = 0;
    d->qvel[0] = 0;
    sim_forward(m, d);
    assert_int_equal(d->efc_state[0], SIM_CSTATE_QUADRATIC);
    assert_int_equal(d->solver.nactive, 1);
    sim_data_free(d);
  }
  sim_model_free(m);
}

#if ACHILLES_HAVE_MUJOCO
#include "contact_scenes.h"
#include "mujoco_pair.h"

static const mj_run converged = {SIM_SOLVER_NEWTON, SIM_CONE_PYRAMIDAL, 1000, 1e-15, 0, 0};

static void test_states(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  char err[512];
  for (int k = 0; k < SCENE_COUNT; k++) {
    mj_state_errors e = {0};
    if (mj_scene_states(k, &converged, 1000, 2, &e, err, sizeof err) != 0) {
      fail_msg("%s: %s", scene_names[k], err);
    }
    print_message("%-9s Newton, pyramidal: %3d states, %4d contacts, %3d joint rows; max relative "
                  "error: force %.2g, qacc %.2g; %d unconverged\n",
                  scene_names[k], e.states, e.contacts, e.rows, e.force, e.qacc, e.unconverged);
    assert_true(e.contacts + e.rows > 20);
    assert_true(e.force <= 1e-7);
    assert_true(e.qacc <= 1e-6);
    assert_int_equal(e.unconverged, 0);
  }
}

static void test_trajectories(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  char err[512];
  const mj_run r = {SIM_SOLVER_NEWTON, SIM_CONE_PYRAMIDAL, 100, 1e-10, 0, 0};
  for (int k = 0; k < SCENE_COUNT; k++) {
    mj_trajectory t;
    if (mj_scene_trajectory(k, &r, 2.0, &t, err, sizeof err) != 0) {
      fail_msg("%s: %s", scene_names[k], err);
    }
    print_message("%-9s 2 s, Newton at 1e-10: %4d of %d steps touching, up to %d contacts; max "
                  "|dq| %.3g (MuJoCo's CG from its Newton %.3g)\n",
                  scene_names[k], t.touching, t.steps, t.maxcon, t.ours, t.cg_newton);
    assert_true(t.ours <= 1e-6);
  }
}

/* the file's own iterations and tolerance: ours from MuJoCo's Newton within what MuJoCo's CG
 * and Newton differ by (a floor of 1e-9 where both converge to rounding) */
static void test_file_iterations(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  char err[512];
  const mj_run r = {SIM_SOLVER_NEWTON, SIM_CONE_PYRAMIDAL, 0, 0, 0, 0};
  for (int k = 0; k < SCENE_COUNT; k++) {
    mj_trajectory t;
    if (mj_scene_trajectory(k, &r, 2.0, &t, err, sizeof err) != 0) {
      fail_msg("%s: %s", scene_names[k], err);
    }
    print_message("%-9s 2 s, Newton with the file's limit: max |dq| from MuJoCo's Newton %.3g, "
                  "MuJoCo's CG from its Newton %.3g\n", scene_names[k], t.ours, t.cg_newton);
    assert_true(t.ours <= fmax(t.cg_newton, 1e-9));
  }
}

/* along the chain thrown into its stops and the club arm on its table (friction rows sliding
 * and sticking, limits, a contact), nactive is MuJoCo's at every step, for both solvers */
static void test_nactive_as_mujoco(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  char err[512];
  static const int scenes[] = {4, 8};
  for (int i = 0; i < 2; i++) {
    for (int solver = 0; solver < 2; solver++) {
      contact_scene sc;
      mj_pair p;
      if (scene_make(&sc, scenes[i], err, sizeof err) != 0 || mj_pair_open(&p, sc.json, err, sizeof err) != 0) {
        fail_msg("%s: %s", scene_names[scenes[i]], err);
      }
      scene_free(&sc);
      mj_pair_options(&p, (sim_solver_type)solver, SIM_CONE_PYRAMIDAL, 100, 1e-10);
      scene_start(scenes[i], p.m, p.d->qpos, p.d->qvel);
      memcpy(p.md->qpos, p.d->qpos, (size_t)p.m->nq * sizeof(double));
      memcpy(p.md->qvel, p.d->qvel, (size_t)p.m->nv * sizeof(double));
      int compared = 0, bound = 0;
      for (int s = 0; s < 1000; s++) {
        mj_forward(p.mm, p.md);
        mj_pair_copy_state(&p);
        sim_forward(p.m, p.d);
        if (p.md->solver_iter > 0) {
          assert_int_equal(p.d->solver.nactive, p.md->solver[p.md->solver_iter - 1].nactive);
          compared++;
        }
        for (int r = 0; r < p.d->nf; r++) {
          bound += p.d->efc_state[r] == SIM_CSTATE_LINEARNEG || p.d->efc_state[r] == SIM_CSTATE_LINEARPOS;
        }
        mj_step(p.mm, p.md);
      }
      print_message("%-9s %s: nactive equal to MuJoCo's at %d steps (%d friction rows at their bound)\n",
                    scene_names[scenes[i]], solver ? "Newton" : "CG", compared, bound);
      assert_true(compared > 500 && bound > 100);
      mj_pair_close(&p);
    }
  }
}
#endif

#if ACHILLES_HAVE_MUJOCO
TS_MAIN(test_states, test_trajectories, test_file_iterations, test_nactive_friction_at_bound,
        test_nactive_as_mujoco)
#else
TS_MAIN(test_nactive_friction_at_bound, ts_mujoco_missing)
#endif
