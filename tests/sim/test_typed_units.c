/* tests/sim/test_typed_units.c: axes and quaternions typed with a few digits, as users type them.
 *
 * The loader accepts a vector whose norm is within 1e-6 of 1 and must then normalise it, as
 * MuJoCo does: otherwise rotation matrices are not orthonormal and trajectories drift away from
 * MuJoCo's (3.4e-4 rad after 4 s on the one-link arm with axis [0, 1.0000005, 0]). Here both
 * engines load the same typed digits (our JSON, and MJCF written by hand, not by our writer) and
 * are stepped side by side. Without libmujoco-dev only the loader's own check runs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim.h"
#include "support/model.h"
#include "support/mujoco.h"
#include "support/skip.h"

/* Two hinges under gravity, both placements and both axes typed to 7 digits (none unit). */
static const char robot_json[] =
    "{ \"name\": \"typed\", \"timestep\": 0.002, \"integrator\": \"euler\",\n"
    "  \"gravity\": [0, 0, -9.81],\n"
    "  \"bodies\": [\n"
    "    { \"name\": \"upper\", \"parent\": \"world\", \"pos\": [0, 0, 0.1],\n"
    "      \"quat\": [0.9238795, 0, 0, 0.3826834],\n"
    "      \"joint\": { \"name\": \"shoulder\", \"type\": \"hinge\", \"axis\": [0, 1.0000005, 0] },\n"
    "      \"inertial\": { \"mass\": 1.0, \"com\": [0.25, 0, 0],\n"
    "                    \"inertia\": [0.001, 0.02, 0.02, 0, 0, 0] } },\n"
    "    { \"name\": \"lower\", \"parent\": \"upper\", \"pos\": [0.5, 0, 0],\n"
    "      \"quat\": [0.9659258, 0, 0.2588190, 0],\n"
    "      \"joint\": { \"name\": \"elbow\", \"type\": \"hinge\", \"axis\": [0, 0.6000001, 0.7999999] },\n"
    "      \"inertial\": { \"mass\": 0.5, \"com\": [0.2, 0, 0],\n"
    "                    \"inertia\": [0.0005, 0.008, 0.008, 0, 0, 0] } }\n"
    "  ]\n"
    "}\n";


static double norm(const double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    s += v[i] * v[i];
  }
  return sqrt(s);
}

/* the loader hands the dynamics unit vectors, and rotation matrices that are orthonormal */
static void test_loader_normalises(void **state) {
  (void)state;
  sim_model *m = ts_model(robot_json);
  for (int b = 1; b < m->nbody; b++) {
    const sim_body *body = &m->bodies[b];
    assert_true(fabs(norm(body->quat, 4) - 1) <= 4e-16);
    assert_true(fabs(norm(m->joints[body->joint].axis, 3) - 1) <= 4e-16);
    for (int r = 0; r < 3; r++) { /* R·Rᵀ = I */
      for (int c = 0; c < 3; c++) {
        double dot = 0;
        for (int k = 0; k < 3; k++) {
          dot += body->mat[3 * r + k] * body->mat[3 * c + k];
        }
        assert_true(fabs(dot - (r == c)) <= 1e-15);
      }
    }
  }
  /* a typed vector keeps its direction: only its length changes */
  const sim_joint *elbow = &m->joints[m->bodies[2].joint];
  assert_true(fabs(elbow->axis[1] / elbow->axis[2] - 0.6000001 / 0.7999999) <= 1e-15);
  sim_model_free(m);
}

#if ACHILLES_HAVE_MUJOCO
/* The same robot in MJCF, written by hand with the same typed digits: MuJoCo normalises them. */
static const char robot_xml[] =
    "<mujoco model=\"typed\">\n"
    "  <option timestep=\"0.002\" gravity=\"0 0 -9.81\" integrator=\"Euler\"/>\n"
    "  <worldbody>\n"
    "    <body name=\"upper\" pos=\"0 0 0.1\" quat=\"0.9238795 0 0 0.3826834\">\n"
    "      <joint name=\"shoulder\" type=\"hinge\" axis=\"0 1.0000005 0\"/>\n"
    "      <inertial pos=\"0.25 0 0\" mass=\"1.0\" diaginertia=\"0.001 0.02 0.02\"/>\n"
    "      <body name=\"lower\" pos=\"0.5 0 0\" quat=\"0.9659258 0 0.2588190 0\">\n"
    "        <joint name=\"elbow\" type=\"hinge\" axis=\"0 0.6000001 0.7999999\"/>\n"
    "        <inertial pos=\"0.2 0 0\" mass=\"0.5\" diaginertia=\"0.0005 0.008 0.008\"/>\n"
    "      </body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

/* 4 s from a tilted start under gravity: both engines see the same normalised geometry, so
 * only rounding separates them (bound as for the other arms of test_mujoco_reference: 1e-9 rad);
 * unnormalised vectors put them 1e-7 to 1e-4 rad apart. */
static void test_trajectory_matches_mujoco(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  sim_model *m = ts_model(robot_json);
  sim_data *d = sim_data_new(m);
  mjModel *mm = ts_mj_load_xml(robot_xml);
  mjData *md = mj_makeData(mm);
  assert_non_null(d);
  assert_non_null(md);
  assert_int_equal(mm->nq, m->nq);
  const double q0[2] = {0.4, -0.7};
  for (int i = 0; i < 2; i++) { /* bodies in the same order in both files: same coordinates */
    d->qpos[i] = q0[i];
    md->qpos[i] = q0[i];
  }
  double worst = 0;
  for (int step = 0; step < 2000; step++) {
    sim_step(m, d);
    mj_step(mm, md);
    for (int i = 0; i < 2; i++) {
      worst = fmax(worst, fabs(d->qpos[i] - md->qpos[i]));
    }
  }
  print_message("typed digits, 4 s Euler: max |dq| against MuJoCo %.3g rad\n", worst);
  assert_true(worst <= 1e-9);
  ts_mj_free(mm, md);
  ts_sim_free(m, d);
}
#else
TS_TEST(test_trajectory_matches_mujoco, TS_REQUIRE_MUJOCO())
#endif

TS_MAIN(test_loader_normalises, test_trajectory_matches_mujoco)
