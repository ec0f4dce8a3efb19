/* tests/sim/test_xfrc.c: forces and torques applied to bodies (sim_data.xfrc_applied), which
 * sim_passive maps onto the dofs.
 *
 * References: closed forms (a force on a slide, a torque and an offset force on a hinge, gravity
 * cancelled body by body), the snapshot carrying the forces, and MuJoCo 2.2.2's xfrc_applied on
 * random trees (same layout: force at the centre of mass, then torque, world axes), qacc to
 * rounding. Without libmujoco-dev the MuJoCo part is skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "random_tree.h"
#include "sim/sim.h"
#include "support/model.h"
#include "support/mujoco.h"
#include "support/skip.h"

#if ACHILLES_HAVE_MUJOCO
#include <mujoco/mujoco.h>

#include "mjcf_writer.h"
#endif

#define PI 3.14159265358979323846

static void near(double got, double want, double tol) {
  if (!(fabs(got - want) <= tol)) {
    fail_msg("got %.17g, expected %.17g (tolerance %g)", got, want, tol);
  }
}

/* one body on a slide along x, 2 kg, no gravity: a force along x accelerates it by f/m; a
 * force across the axis and a torque do nothing */
static void test_slide_force(void **state) {
  (void)state;
  sim_model *m = ts_model("{\"name\":\"slide\",\"gravity\":[0,0,0],\"bodies\":[{\"name\":\"cart\","
                      "\"parent\":\"world\",\"joint\":{\"name\":\"x\",\"type\":\"slide\","
                      "\"axis\":[1,0,0]},\"inertial\":{\"mass\":2,\"inertia\":[1,1,1,0,0,0]}}]}");
  sim_data *d = sim_data_new(m);
  double *x = d->xfrc_applied + 6 * 1;
  x[0] = 3.0, x[1] = 5.0, x[5] = 7.0;
  sim_forward(m, d);
  near(d->qacc[0], 1.5, 1e-15);
  x[0] = 0;
  sim_forward(m, d);
  near(d->qacc[0], 0.0, 1e-15);
  ts_sim_free(m, d);
}

/* a hinge about z at the origin, the COM 0.5 m out along x, I_zz about the COM 0.1: a torque
 * τ_z gives τ_z / (I_zz + m r²); a force f_y at the COM gives r·f_y / (I_zz + m r²); f_x (along
 * the arm) nothing */
static void test_hinge_torque_and_force(void **state) {
  (void)state;
  sim_model *m = ts_model("{\"name\":\"arm\",\"gravity\":[0,0,0],\"bodies\":[{\"name\":\"link\","
                      "\"parent\":\"world\",\"joint\":{\"name\":\"z\",\"type\":\"hinge\","
                      "\"axis\":[0,0,1]},\"inertial\":{\"mass\":2,\"com\":[0.5,0,0],"
                      "\"inertia\":[0.1,0.1,0.1,0,0,0]}}]}");
  sim_data *d = sim_data_new(m);
  const double inertia = 0.1 + 2 * 0.25;
  double *x = d->xfrc_applied + 6;
  x[5] = 0.6;
  sim_forward(m, d);
  near(d->qacc[0], 0.6 / inertia, 1e-14);
  x[5] = 0, x[1] = 1.2, x[0] = 4.0;
  sim_forward(m, d);
  near(d->qacc[0], 0.5 * 1.2 / inertia, 1e-14);
  /* turned by 90°: the COM is on +y, a force along -x now turns it positively */
  d->qpos[0] = PI / 2;
  x[0] = -1.2, x[1] = 0;
  sim_forward(m, d);
  near(d->qacc[0], 0.5 * 1.2 / inertia, 1e-14);
  ts_sim_free(m, d);
}

/* every body held up by a force equal to its weight at its centre of mass: at rest, no dof
 * accelerates, whatever the tree (fixed joints included: their force reaches the ancestors) */
static void test_weight_cancelled(void **state) {
  (void)state;
  static char json[1 << 16];
  for (uint64_t seed = 1; seed <= 20; seed++) {
    rt_spec spec = {.nbody = 8, .gravity = 1, .fixed = 1, .armature = 1};
    assert_true(rt_tree_json(json, sizeof json, seed, &spec) < sizeof json);
    sim_model *m = ts_model(json);
    sim_data *d = sim_data_new(m);
    for (int i = 0; i < m->nq; i++) {
      d->qpos[i] = 0.4 * sin(1.7 * i + (double)seed);
    }
    sim_forward(m, d);
    double moving = 0;
    for (int k = 0; k < m->nv; k++) {
      moving = fmax(moving, fabs(d->qacc[k]));
    }
    assert_true(moving > 1e-3); /* without the forces the tree falls */
    for (int b = 1; b < m->nbody; b++) {
      for (int r = 0; r < 3; r++) {
        d->xfrc_applied[6 * b + r] = -m->bodies[b].mass * m->opt.gravity[r];
      }
    }
    sim_forward(m, d);
    double worst = 0;
    for (int k = 0; k < m->nv; k++) {
      worst = fmax(worst, fabs(d->qacc[k]));
    }
    if (worst > 1e-10) {
      fail_msg("seed %llu: |qacc| %.3g with every weight cancelled", (unsigned long long)seed,
               worst);
    }
    ts_sim_free(m, d);
  }
}

/* the forces are state: a snapshot taken with them restores them, and stepping on repeats the
 * run bit for bit */
static void test_snapshot_keeps_forces(void **state) {
  (void)state;
  static char json[1 << 16];
  rt_spec spec = {.nbody = 5, .gravity = 1};
  assert_true(rt_tree_json(json, sizeof json, 7, &spec) < sizeof json);
  sim_model *m = ts_model(json);
  sim_data *d = sim_data_new(m);
  sim_snapshot *s = sim_snapshot_new(m);
  d->xfrc_applied[6 * 3 + 2] = 4.0, d->xfrc_applied[6 * 2 + 4] = -0.5;
  sim_snapshot_save(m, d, s);
  ts_steps(m, d, 100);
  double *q = malloc((size_t)m->nq * sizeof *q);
  memcpy(q, d->qpos, (size_t)m->nq * sizeof *q);
  memset(d->xfrc_applied, 0, 6 * (size_t)m->nbody * sizeof(double));
  sim_snapshot_restore(m, d, s);
  ts_steps(m, d, 100);
  assert_memory_equal(q, d->qpos, (size_t)m->nq * sizeof *q);
  free(q);
  sim_snapshot_free(s);
  ts_sim_free(m, d);
}

#if ACHILLES_HAVE_MUJOCO
/* random trees, states and body forces in both engines: qacc to rounding */
static void test_against_mujoco(void **state) {
  (void)state;
  static char json[1 << 16];
  double worst = 0;
  for (uint64_t seed = 1; seed <= 30; seed++) {
    rt_spec spec = {.nbody = 1 + (int)(seed % 9), .gravity = 1, .fixed = 1, .passive = 1};
    assert_true(rt_tree_json(json, sizeof json, seed, &spec) < sizeof json);
    sim_model *m = ts_model(json);
    char err[512] = "";
    mjModel *mm = mjcf_load(m, err, sizeof err);
    if (!mm) {
      fail_msg("%s", err);
    }
    mjData *md = mj_makeData(mm);
    sim_data *d = sim_data_new(m);
    uint64_t r = seed * 0x9e3779b97f4a7c15ull;
    for (int j = 0; j < m->njnt; j++) {
      const sim_joint *jt = &m->joints[j];
      if (jt->dofadr < 0) {
        continue;
      }
      const int id = mj_name2id(mm, mjOBJ_JOINT, jt->name);
      assert_true(id >= 0);
      d->qpos[jt->qposadr] = md->qpos[mm->jnt_qposadr[id]] = 0.8 * sin(0.7 * j + (double)seed);
      d->qvel[jt->dofadr] = md->qvel[mm->jnt_dofadr[id]] = 0.5 * cos(1.3 * j + (double)seed);
    }
    for (int b = 1; b < m->nbody; b++) {
      const int id = mj_name2id(mm, mjOBJ_BODY, m->bodies[b].name);
      assert_true(id >= 0);
      for (int k = 0; k < 6; k++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        const double v = 4.0 * ((double)(r >> 11) * 0x1.0p-53 - 0.5);
        d->xfrc_applied[6 * b + k] = md->xfrc_applied[6 * id + k] = v;
      }
    }
    sim_forward(m, d);
    mj_forward(mm, md);
    for (int j = 0; j < m->njnt; j++) {
      const sim_joint *jt = &m->joints[j];
      if (jt->dofadr < 0) {
        continue;
      }
      const int id = mj_name2id(mm, mjOBJ_JOINT, jt->name);
      const double ours = d->qacc[jt->dofadr], ref = md->qacc[mm->jnt_dofadr[id]];
      worst = fmax(worst, fabs(ours - ref) / (1 + fabs(ref)));
    }
    sim_data_free(d);
    ts_mj_free(mm, md);
    sim_model_free(m);
  }
  print_message("30 random trees with random body forces: max |qacc - MuJoCo| / (1 + |qacc|) = "
                "%.3g\n", worst);
  assert_true(worst < 1e-9);
}
#else
TS_TEST(test_against_mujoco, TS_REQUIRE_MUJOCO())
#endif

TS_MAIN(test_slide_force, test_hinge_torque_and_force, test_weight_cancelled,
        test_snapshot_keeps_forces, test_against_mujoco)
