/* tests/sim/test_elliptic.c: elliptic friction cones with impratio, and frictionless (condim 1)
 * contacts under both cones (sim/constraint.c, sim/solver_cost.c), against MuJoCo 2.2.2 on the
 * scenes of contact_scenes.h.
 *
 *  - without a reference: every contact force of an elliptic cone lies in its cone,
 *    |tangential| <= μ·normal (on the cone's surface when the contact slides), and a box that
 *    slides decelerates at μ·g·cos − g·sin within the soft contact's share;
 *  - per state, both solvers run to convergence (Newton; CG to 1e-10 where it converges):
 *    forces within 1e-7 of the largest, q̈ within 1e-6 relative, with impratio 1 and 10;
 *  - trajectories: 2 s side by side at tolerance 1e-10 within 1e-6, and with the file's
 *    iteration limit within what MuJoCo's CG and Newton differ by (both printed);
 *  - condim 1 on the sphere, the tumbling box and the stack, under both cones.
 * Expected values are MuJoCo's, computed here. Without libmujoco-dev the comparisons skip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "support/model.h"
#include "support/mujoco.h"
#include "support/skip.h"

#if ACHILLES_HAVE_MUJOCO
#include "contact_scenes.h"
#include "mujoco_pair.h"
#endif

/* A box on a carriage (slides along x and z) on a level plane, μ = 0.5 (both geoms), elliptic
 * cone: released sliding at 2 m/s it decelerates at μ·g short only by the soft contact's share
 * of the friction force (0.56 %, where the pyramid loses 2.26 %); at every step the contact
 * force lies in the cone,
 * on its surface while it slides. */
static void test_force_in_cone(void **state) {
  (void)state;
  static const char json[] =
      "{ \"timestep\": 0.001, \"bodies\": [\n"
      "  { \"name\": \"cx\", \"parent\": \"world\", \"joint\": { \"name\": \"x\", \"type\": \"slide\",\n"
      "    \"axis\": [1, 0, 0] }, \"inertial\": { \"mass\": 0.5, \"inertia\": [1e-3, 1e-3, 1e-3, 0, 0, 0] } },\n"
      "  { \"name\": \"box\", \"parent\": \"cx\", \"joint\": { \"name\": \"z\", \"type\": \"slide\",\n"
      "    \"axis\": [0, 0, 1] }, \"inertial\": { \"mass\": 1.5, \"inertia\": [1e-3, 1e-3, 1e-3, 0, 0, 0] } } ],\n"
      "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\", \"friction\": [0.5, 0, 0] },\n"
      "    { \"name\": \"b\", \"body\": \"box\", \"type\": \"box\", \"size\": [0.1, 0.1, 0.1],\n"
      "      \"friction\": [0.5, 0, 0] } ] }\n";
  sim_model *m = ts_model(json);
  m->opt.cone = SIM_CONE_ELLIPTIC;
  m->opt.solver = SIM_SOLVER_NEWTON;
  sim_data *d = sim_data_new(m);
  d->qpos[1] = 0.0997;
  d->qvel[0] = 2.0;
  double v1 = 0, worst = 0, surface = 0;
  int sliding = 0;
  for (int s = 0; s < 300; s++) {
    sim_step(m, d);
    for (int c = 0; c < d->ncon; c++) {
      double f[3];
      sim_contact_force(m, d, c, f);
      assert_true(f[0] >= 0);
      const double ft = sqrt(f[1] * f[1] + f[2] * f[2]), mu = d->con_friction[c];
      worst = fmax(worst, (ft - mu * f[0]) / fmax(f[0], 1e-12));
      if (d->efc_state[d->con_efc[c]] == SIM_CSTATE_CONE) {
        sliding++;
        surface = fmax(surface, fabs(ft - mu * f[0]) / f[0]);
      }
    }
    if (s == 99) {
      v1 = d->qvel[0];
    }
  }
  const double decel = (v1 - d->qvel[0]) / 0.2, coulomb = 0.5 * 9.81 * 1.5 / 2.0;
  print_message("elliptic cone, sliding box: deceleration %.6g m/s², μ·N/m %.6g (%.3f %% short); "
                "|f_t| − μ·f_n at most %.2g of f_n, %d sliding contacts on the surface within %.2g\n",
                decel, coulomb, 100 * (coulomb - decel) / coulomb, worst, sliding, surface);
  assert_true(worst <= 1e-12);
  assert_true(sliding > 100 && surface <= 1e-12);
  assert_true(decel < coulomb && decel > 0.99 * coulomb);
  ts_sim_free(m, d);
}

#if ACHILLES_HAVE_MUJOCO

/* per state at convergence; CG runs to 1e-10 with 1000 iterations */
static void states(const mj_run *r, const char *what, const int *scenes, int n) {
  char err[512];
  for (int i = 0; i < n; i++) {
    const int k = scenes[i];
    mj_state_errors e = {0};
    if (mj_scene_states(k, r, 1000, 2, &e, err, sizeof err) != 0) {
      fail_msg("%s: %s", scene_names[k], err);
    }
    print_message("%-9s %s: %3d states, %4d contacts, %3d joint rows; max relative error: force "
                  "%.2g, qacc %.2g; %d unconverged\n",
                  scene_names[k], what, e.states, e.contacts, e.rows, e.force, e.qacc,
                  e.unconverged);
    assert_true(e.contacts + e.rows > 20);
    assert_true(e.force <= 1e-7);
    assert_true(e.qacc <= 1e-6);
    assert_int_equal(e.unconverged, 0);
  }
}

static const int every_scene[SCENE_COUNT] = {0, 1, 2, 3, 4, 5, 6, 7, 8};

static void test_states_cg(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  const mj_run r = {SIM_SOLVER_CG, SIM_CONE_ELLIPTIC, 1000, 1e-10, 0, 0};
  states(&r, "CG, elliptic", every_scene, SCENE_COUNT);
}

static void trajectories(const mj_run *r, const char *what, const int *scenes, int n) {
  char err[512];
  for (int i = 0; i < n; i++) {
    const int k = scenes[i];
    mj_trajectory t;
    if (mj_scene_trajectory(k, r, 2.0, &t, err, sizeof err) != 0) {
      fail_msg("%s: %s", scene_names[k], err);
    }
    print_message("%-9s 2 s, %s: %4d of %d steps touching, up to %d contacts; max |dq| %.3g "
                  "(MuJoCo's CG from its Newton %.3g)\n",
                  scene_names[k], what, t.touching, t.steps, t.maxcon, t.ours, t.cg_newton);
    if (r->iterations) {
      assert_true(t.ours <= 1e-6);
    } else { /* the file's limit: within MuJoCo's own spread, or rounding */
      assert_true(t.ours <= fmax(t.cg_newton, 1e-9));
    }
  }
}

/* check on every scene under Newton and the elliptic cone (iterations, tolerance), at impratio
 * 1 and 10 */
typedef void (*scene_check)(const mj_run *r, const char *what, const int *scenes, int n);
static void newton_elliptic(scene_check check, int iterations, double tol, const char *at) {
  for (int impratio = 0; impratio <= 10; impratio += 10) {
    const mj_run r = {SIM_SOLVER_NEWTON, SIM_CONE_ELLIPTIC, iterations, tol, impratio, 0};
    char what[128];
    snprintf(what, sizeof what, "Newton, elliptic%s%s", impratio ? ", impratio 10" : "", at);
    check(&r, what, every_scene, SCENE_COUNT);
  }
}

TS_TEST(test_states_newton, TS_REQUIRE_MUJOCO(); newton_elliptic(states, 1000, 1e-15, ""))
TS_TEST(test_trajectories,
        TS_REQUIRE_MUJOCO(); newton_elliptic(trajectories, 100, 1e-10, " at 1e-10"))

static void test_file_iterations(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  const mj_run r = {SIM_SOLVER_NEWTON, SIM_CONE_ELLIPTIC, 0, 0, 0, 0};
  trajectories(&r, "Newton, elliptic, the file's limit", every_scene, SCENE_COUNT);
  const mj_run cg = {SIM_SOLVER_CG, SIM_CONE_ELLIPTIC, 0, 0, 0, 0};
  trajectories(&cg, "CG, elliptic, the file's limit", every_scene, SCENE_COUNT);
}

/* the sphere, the tumbling box and the stack with every geom frictionless */
static void test_condim1(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  static const int scenes[] = {0, 5, 7};
  for (int cone = 0; cone < 2; cone++) {
    const mj_run r = {SIM_SOLVER_NEWTON, (sim_cone)cone, 1000, 1e-15, 0, 1};
    states(&r, cone ? "condim 1, elliptic" : "condim 1, pyramidal", scenes, 3);
    const mj_run t = {SIM_SOLVER_NEWTON, (sim_cone)cone, 100, 1e-10, 0, 1};
    trajectories(&t, cone ? "condim 1, elliptic at 1e-10" : "condim 1, pyramidal at 1e-10",
                 scenes, 3);
  }
}

#endif

#if ACHILLES_HAVE_MUJOCO
TS_MAIN(test_force_in_cone, test_states_newton, test_states_cg, test_trajectories,
        test_file_iterations, test_condim1)
#else
TS_MAIN(test_force_in_cone, ts_mujoco_missing)
#endif
