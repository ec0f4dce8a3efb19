/* tests/sim/test_composite_motion.c: the MuJoCo sample files our simulator builds from their
 * <composite> (composite/particle.xml: 1000 particles on slide joints; composite/rope.xml: a
 * chain of 21 capsules on hinge pairs under a free root) move as MuJoCo 2.2.2 moves them, and a
 * small scene of geoms with different contact priorities (the particles' priority 1 against
 * the walls' 0 decides the contact's condim, friction and softness).
 *
 * Both engines load the same file (ours through the importer, MuJoCo's own compiler); MuJoCo
 * steps it with the file's settings, and every few steps our data takes MuJoCo's state and
 * both evaluate the forward dynamics with the same solver settings (Newton, tight tolerance):
 * every contact of ours is one of MuJoCo's (same place, same normal) with the same force in its
 * frame, and q̈ agrees (relative to the larger of |q̈|, its constraint share and 1); and both
 * step the two samples from their start with the file's own settings (a trajectory of 1 s and
 * 0.6 s, contacts in most steps), against MuJoCo's other solver as the scale. The joints
 * of both are in the same order (the importer keeps MuJoCo's), which the test checks. The
 * samples whose composites make tendons or equalities are refused, naming the composite, until
 * those are built; then the same comparison runs on them (flag.xml never: its wind, fluid
 * density and disabled constraints are not modelled). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/import/import.h"
#include "sim/sim.h"
#include "support/mujoco.h"
#include "support/skip.h"
#include "support/tmp.h"

#define SAMPLES "/usr/share/mujoco/model/"

#if ACHILLES_HAVE_MUJOCO
typedef struct errors {
  int states, contacts, frictionless;
  double force, qacc;
} errors;

static double max_abs(const double *v, int n) {
  double r = 0;
  for (int i = 0; i < n; i++) {
    r = fmax(r, fabs(v[i]));
  }
  return r;
}

/* MuJoCo's contact at our contact c's place with its normal, or -1 */
static int their_contact(const sim_data *d, const mjData *md, int c) {
  for (int k = 0; k < md->ncon; k++) {
    const mjContact *mc = &md->contact[k];
    double dp = 0, dn = 0;
    for (int i = 0; i < 3; i++) {
      dp = fmax(dp, fabs(mc->pos[i] - d->con_pos[3 * c + i]));
      dn = fmax(dn, fabs(mc->frame[i] - d->con_frame[9 * c + i]));
    }
    if (dp < 1e-9 && dn < 1e-9) {
      return k;
    }
  }
  return -1;
}

static void compare_state(const sim_model *m, sim_data *d, const mjModel *mm, mjData *md,
                          errors *e) {
  memcpy(d->qpos, md->qpos, (size_t)m->nq * sizeof(double));
  memcpy(d->qvel, md->qvel, (size_t)m->nv * sizeof(double));
  memcpy(d->qacc_warmstart, md->qacc_warmstart, (size_t)m->nv * sizeof(double));
  memcpy(d->ctrl, md->ctrl, (size_t)m->nu * sizeof(double));
  memcpy(d->act, md->act, (size_t)m->na * sizeof(double));
  d->time = md->time;
  mj_forward(mm, md);
  sim_forward(m, d);
  if (d->ncon != md->ncon) {
    fail_msg("t = %g: %d contacts, MuJoCo %d", md->time, d->ncon, md->ncon);
  }
  const double scale = fmax(max_abs(md->efc_force, md->nefc), 1e-9);
  for (int c = 0; c < d->ncon; c++) {
    const int k = their_contact(d, md, c);
    if (k < 0) {
      fail_msg("t = %g: our contact %d (geoms %s, %s) is not MuJoCo's", md->time, c,
               m->geoms[d->con_geom[2 * c]].name, m->geoms[d->con_geom[2 * c + 1]].name);
    }
    if (d->con_dim[c] != md->contact[k].dim) {
      fail_msg("t = %g: contact %d has condim %d, MuJoCo's %d", md->time, c, d->con_dim[c],
               md->contact[k].dim);
    }
    double ours[3], theirs[6];
    sim_contact_force(m, d, c, ours);
    mj_contactForce(mm, md, k, theirs);
    for (int i = 0; i < 3; i++) {
      e->force = fmax(e->force, fabs(ours[i] - theirs[i]) / scale);
    }
    e->frictionless += d->con_dim[c] == 1;
  }
  double share = 0, dq = 0;
  for (int i = 0; i < m->nv; i++) {
    share = fmax(share, fabs(md->qacc[i] - md->qacc_smooth[i]));
    dq = fmax(dq, fabs(d->qacc[i] - md->qacc[i]));
  }
  e->qacc = fmax(e->qacc, dq / fmax(fmax(max_abs(md->qacc, m->nv), share), 1.0));
  e->states++;
  e->contacts += d->ncon;
}

/* The file in both engines: MuJoCo steps it `steps` times with the file's settings; every
 * `every` steps both evaluate its state with Newton at tolerance 1e-12. */
static errors compare_file(const char *path, int steps, int every) {
  char err[1024];
  sim_import_options o = {0, NULL, NULL};
  sim_model *m = sim_import_load_file(path, &o, err, sizeof err);
  if (!m) {
    fail_msg("%s: %s", path, err);
  }
  mjModel *mm = ts_mj_load(path);
  assert_int_equal(m->nq, mm->nq);
  assert_int_equal(m->nv, mm->nv);
  /* the same joints in the same order: a state copies across as it is */
  int j = 0;
  for (int k = 0; k < mm->njnt; k++, j++) {
    while (j < m->njnt && m->joints[j].dofadr < 0) { /* our fixed joints have no dof */
      j++;
    }
    assert_true(j < m->njnt);
    assert_int_equal(m->joints[j].qposadr, mm->jnt_qposadr[k]);
    assert_int_equal(m->joints[j].dofadr, mm->jnt_dofadr[k]);
  }
  assert_int_equal(m->nu, mm->nu);
  assert_int_equal(m->na, mm->na);
  sim_data *d = sim_data_new(m);
  mjData *md = mj_makeData(mm);
  assert_true(d && md);
  for (int i = 0; i < mm->nu; i++) { /* each actuator at 70 % of its range (the adhesions on) */
    const double *r = mm->actuator_ctrlrange + 2 * i;
    md->ctrl[i] = mm->actuator_ctrllimited[i] ? r[0] + 0.7 * (r[1] - r[0]) : 0.1;
  }
  const int solver = mm->opt.solver, iterations = mm->opt.iterations;
  const double tolerance = mm->opt.tolerance;
  m->opt.solver = SIM_SOLVER_NEWTON;
  m->opt.solver_iterations = 100;
  m->opt.solver_tolerance = 1e-12;
  errors e = {0, 0, 0, 0, 0};
  for (int s = 0; s <= steps; s++) {
    if (s % every == 0) {
      mm->opt.solver = mjSOL_NEWTON, mm->opt.iterations = 100, mm->opt.tolerance = 1e-12;
      compare_state(m, d, mm, md, &e);
      mm->opt.solver = solver, mm->opt.iterations = iterations, mm->opt.tolerance = tolerance;
    }
    mj_step(mm, md);
  }
  print_message("%s: %d states, %d contacts (%d frictionless), max relative error: contact "
                "force %.1e, qacc %.1e\n", strrchr(path, '/') + 1, e.states, e.contacts,
                e.frictionless, e.force, e.qacc);
  mj_deleteData(md);
  mj_deleteModel(mm);
  sim_data_free(d);
  sim_model_free(m);
  return e;
}

/* Both engines step the file from its initial state with its own settings for `steps`
 * steps; the largest |Δqpos| of ours from MuJoCo's, and (the scale of what a solver changes) of
 * MuJoCo's other solver from its own, into out[0], out[1]. */
static void compare_trajectory(const char *path, int steps, double out[2]) {
  char err[1024];
  sim_import_options o = {0, NULL, NULL};
  sim_model *m = sim_import_load_file(path, &o, err, sizeof err);
  if (!m) {
    fail_msg("%s: %s", path, err);
  }
  mjModel *mm = ts_mj_load(path);
  assert_int_equal(m->nq, mm->nq);
  sim_data *d = sim_data_new(m);
  mjData *md = mj_makeData(mm), *other = mj_makeData(mm);
  assert_true(d && md && other);
  memcpy(d->qpos, md->qpos, (size_t)m->nq * sizeof(double));
  const int mine = mm->opt.solver, theirs = mine == mjSOL_NEWTON ? mjSOL_CG : mjSOL_NEWTON;
  out[0] = out[1] = 0;
  int touching = 0;
  for (int s = 0; s < steps; s++) {
    sim_step(m, d);
    mj_step(mm, md);
    mm->opt.solver = theirs;
    mj_step(mm, other);
    mm->opt.solver = mine;
    touching += d->ncon > 0;
    for (int i = 0; i < m->nq; i++) {
      out[0] = fmax(out[0], fabs(d->qpos[i] - md->qpos[i]));
      out[1] = fmax(out[1], fabs(other->qpos[i] - md->qpos[i]));
    }
  }
  print_message("%s: %d steps (%d touching): max |dqpos| ours %.1e, MuJoCo's other solver %.1e\n",
                strrchr(path, '/') + 1, steps, touching, out[0], out[1]);
  mj_deleteData(other);
  mj_deleteData(md);
  mj_deleteModel(mm);
  sim_data_free(d);
  sim_model_free(m);
}

/* the particles fall on the floor and spread against the walls (priority 1 against 0: their
 * condim 1 in every contact) */
static void test_particle_sample(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  TS_REQUIRE_FILE("libmujoco-samples", SAMPLES "composite/particle.xml");
  double t[2];
  compare_trajectory(SAMPLES "composite/particle.xml", 60, t);
  assert_true(t[0] < 1e-8); /* its CG, 1e-6: MuJoCo's own Newton is 6e-2 away */
  const errors e = compare_file(SAMPLES "composite/particle.xml", 160, 40);
  assert_true(e.contacts > 100);
  assert_int_equal(e.frictionless, e.contacts);
  assert_true(e.force < 1e-7);
  assert_true(e.qacc < 1e-6);
}

/* the rope falls on its free root and lands on the floor and the tilted capsule */
static void test_rope_sample(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  TS_REQUIRE_FILE("libmujoco-samples", SAMPLES "composite/rope.xml");
  double t[2];
  compare_trajectory(SAMPLES "composite/rope.xml", 500, t);
  assert_true(t[0] < 1e-8); /* Newton; MuJoCo's own CG is 1.6e-5 away */
  const errors e = compare_file(SAMPLES "composite/rope.xml", 600, 50);
  assert_true(e.contacts > 10);
  assert_true(e.force < 1e-7);
  assert_true(e.qacc < 1e-6);
}

/* A sample whose composite makes tendons and equalities (or, active_adhesion.xml, a composite
 * beside equalities, a pulley tendon, adhesion actuators and margins around cylinders): it
 * moves as MuJoCo moves it, state by state */
static void check_sample(const char *file, int steps, int every) {
  TS_REQUIRE_MUJOCO();
  char path[256];
  snprintf(path, sizeof path, SAMPLES "%s", file);
  TS_REQUIRE_FILE("libmujoco-samples", path);
  const errors e = compare_file(path, steps, every);
  assert_true(e.force < 1e-7);
  assert_true(e.qacc < 1e-6);
}

/* the loop closes with a connect equality (and an exclude) */
TS_TEST(test_loop_sample, check_sample("composite/loop.xml", 600, 50))
/* tendons held by tendon equalities; a cloth, a pinned grid, a grid under a humanoid, a box */
TS_TEST(test_cloth_sample, check_sample("composite/cloth.xml", 400, 50))
TS_TEST(test_grid2pin_sample, check_sample("composite/grid2pin.xml", 400, 50))
TS_TEST(test_hammock_sample, check_sample("hammock/hammock.xml", 200, 50))
TS_TEST(test_softbox_sample, check_sample("composite/softbox.xml", 200, 50))
/* the arm and the winch adhering, their joints coupled, the pulley tendon at its limit */
TS_TEST(test_active_adhesion_sample, check_sample("adhesion/active_adhesion.xml", 600, 50))

/* Priority decides a pair's condim, friction, solref and solimp: a frictionless sphere of
 * priority 1 on a floor with friction, a sphere with friction of priority 1 on a frictionless
 * one of priority 0, and two of equal priority (the larger condim). Each slides sideways. */
static void test_priority(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  char dir[128], path[256];
  ts_tmpdir(dir, sizeof dir, "priority");
  snprintf(path, sizeof path, "%s/priority.xml", dir);
  ts_write_file(path,
                "<mujoco><option timestep=\"0.002\"/><worldbody>"
                "<geom name=\"floor\" type=\"plane\" size=\"0 0 1\" friction=\"0.8\" "
                "solref=\"0.03 1\"/>"
                "<body name=\"a\" pos=\"0 0 0.099\"><freejoint/><geom name=\"a\" size=\"0.1\" "
                "condim=\"1\" priority=\"1\" solimp=\"0.8 0.9 0.01\"/></body>"
                "<body name=\"b\" pos=\"1 0 0.099\"><freejoint/><geom name=\"b\" size=\"0.1\" "
                "condim=\"1\"/></body>"
                "<body name=\"c\" pos=\"1 0 0.298\"><freejoint/><geom name=\"c\" size=\"0.1\" "
                "priority=\"1\" friction=\"0.3\"/></body>"
                "<body name=\"e\" pos=\"2 0 0.099\"><freejoint/><geom name=\"e\" size=\"0.1\" "
                "condim=\"1\" priority=\"-1\"/></body>"
                "</worldbody></mujoco>");
  mjModel *mm = ts_mj_load(path);
  mjData *md = mj_makeData(mm);
  for (int b = 1; b < mm->nbody; b++) { /* sideways */
    md->qvel[mm->jnt_dofadr[mm->body_jntadr[b]]] = 0.5 * b;
  }
  mj_forward(mm, md);
  int dims[2] = {0, 0};
  for (int c = 0; c < md->ncon; c++) {
    dims[md->contact[c].dim == 1]++;
  }
  /* a–floor 1, b–floor 3, c–b 3, e–floor 3: the priority decides two of them */
  assert_int_equal(dims[1], 1);
  assert_int_equal(dims[0], 3);
  ts_mj_free(mm, md);
  const errors e = compare_file(path, 200, 20);
  assert_int_equal(e.frictionless, e.states);
  assert_true(e.force < 1e-7);
  assert_true(e.qacc < 1e-6);
  ts_rmtree(dir);
}

TS_MUJOCO_MAIN(test_priority, test_rope_sample, test_particle_sample, test_loop_sample,
               test_cloth_sample, test_grid2pin_sample, test_hammock_sample, test_softbox_sample,
        test_active_adhesion_sample)
#else
TS_MUJOCO_MAIN(ts_mujoco_missing)
#endif
