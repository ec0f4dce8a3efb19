/* tests/sim/test_constraint_reference.c: joint limits, joint friction and contacts against
 * MuJoCo 2.2.2 (the shipped club arm on its table included).
 *
 * An arm with limited joints and frictionloss is loaded by Achilles and written as MJCF
 * (mjcf_writer); both engines get the same state and forces. Per state, both solvers run to
 * convergence and the constraint rows (violation, regularisation, reference acceleration), the
 * constraint forces and q̈ are compared; then both are stepped side by side for 1 s with the
 * same solver settings (CG, 20 iterations, MuJoCo's tolerance). Expected values are MuJoCo's,
 * computed here. Without libmujoco-dev the suite is one skipped test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/json_read.h"
#include "sim/sim.h"
#include "support/model.h"
#include "support/mujoco.h"
#include "support/numbers.h"
#include "support/skip.h"
#include "support/tmp.h"

#if ACHILLES_HAVE_MUJOCO

#include "mjcf_writer.h"

/* A chain (so both engines number joints and rows alike): a yaw joint with the default soft
 * parameters, a pitch joint with friction and damping, a slide with stiff custom limits and
 * large friction, and a wrist with a direct-form solref and a linear impedance. */
static const char arm_json[] =
    "{ \"name\": \"limited_arm\", \"timestep\": 0.002,\n"
    "  \"bodies\": [\n"
    "  { \"name\": \"base\", \"parent\": \"world\", \"pos\": [0, 0, 0.1],\n"
    "    \"joint\": { \"name\": \"yaw\", \"type\": \"hinge\", \"axis\": [0, 0, 1],\n"
    "               \"armature\": 0.01, \"limited\": true, \"range\": [-1.0, 1.2] },\n"
    "    \"inertial\": { \"mass\": 1.5, \"com\": [0.01, 0, 0.05],\n"
    "                  \"inertia\": [0.004, 0.004, 0.003, 0, 0, 0] } },\n"
    "  { \"name\": \"upper\", \"parent\": \"base\", \"pos\": [0, 0, 0.12],\n"
    "    \"joint\": { \"name\": \"pitch\", \"type\": \"hinge\", \"axis\": [0, 1, 0],\n"
    "               \"damping\": 0.05, \"armature\": 0.005, \"frictionloss\": 0.3,\n"
    "               \"limited\": true, \"range\": [-0.5, 1.5],\n"
    "               \"solref_limit\": [0.01, 0.7], \"solimp_limit\": [0.8, 0.99, 0.01, 0.3, 3],\n"
    "               \"solimp_friction\": [0.95, 0.95, 0.001, 0.5, 2] },\n"
    "    \"inertial\": { \"mass\": 0.8, \"com\": [0.12, 0, 0],\n"
    "                  \"inertia\": [0.0005, 0.004, 0.004, 0, 0, 0.0001] } },\n"
    "  { \"name\": \"slider\", \"parent\": \"upper\", \"pos\": [0.25, 0, 0],\n"
    "    \"joint\": { \"name\": \"reach\", \"type\": \"slide\", \"axis\": [1, 0, 0],\n"
    "               \"frictionloss\": 2.0, \"limited\": true, \"range\": [0, 0.1],\n"
    "               \"solref_limit\": [0.004, 1.0], \"solref_friction\": [0.03, 2] },\n"
    "    \"inertial\": { \"mass\": 0.4, \"com\": [0.05, 0, 0],\n"
    "                  \"inertia\": [0.0002, 0.0008, 0.0008, 0, 0, 0] } },\n"
    "  { \"name\": \"hand\", \"parent\": \"slider\", \"pos\": [0.1, 0, 0],\n"
    "    \"joint\": { \"name\": \"wrist\", \"type\": \"hinge\", \"axis\": [1, 0, 0],\n"
    "               \"frictionloss\": 0.05, \"limited\": true, \"range\": [-2, 2],\n"
    "               \"solref_limit\": [-4000, -30], \"solimp_limit\": [0.5, 0.9, 0.05, 0.5, 1] },\n"
    "    \"inertial\": { \"mass\": 0.2, \"com\": [0.03, 0.01, 0],\n"
    "                  \"inertia\": [0.0001, 0.0002, 0.0002, 0, 0, 0] } }\n"
    "  ]\n"
    "}\n";

typedef struct pair {
  sim_model *m;
  sim_data *d;
  mjModel *mm;
  mjData *md;
} pair;

static void pair_open_json(pair *p, const char *json) {
  memset(p, 0, sizeof *p);
  p->m = ts_model(json);
  p->mm = ts_mj_compile(p->m);
  p->md = ts_mj_data(p->mm);
  p->d = sim_data_new(p->m);
  assert_non_null(p->d);
  /* a chain: MuJoCo's numbering is ours */
  assert_int_equal(p->mm->nv, p->m->nv);
  for (int j = 0; j < p->m->njnt; j++) {
    assert_int_equal(mj_name2id(p->mm, mjOBJ_JOINT, p->m->joints[j].name), j);
  }
}

static void pair_open(pair *p) {
  pair_open_json(p, arm_json);
}

static void pair_close(pair *p) {
  mj_deleteData(p->md);
  mj_deleteModel(p->mm);
  sim_data_free(p->d);
  sim_model_free(p->m);
}

/* the same solver settings on both sides */
static void pair_solver(pair *p, int iterations, double tolerance) {
  p->m->opt.solver_iterations = iterations;
  p->m->opt.solver_tolerance = tolerance;
  p->mm->opt.iterations = iterations;
  p->mm->opt.tolerance = tolerance;
}

/* both on MuJoCo's solver (mjSOL_CG or mjSOL_NEWTON) and ours of the same kind, converged: 1000
 * iterations to 1e-15 */
static void pair_converged(pair *p, int solver) {
  pair_solver(p, 1000, 1e-15);
  p->mm->opt.solver = solver;
  p->m->opt.solver = solver == mjSOL_NEWTON ? SIM_SOLVER_NEWTON : SIM_SOLVER_CG;
}

static void pair_set(pair *p, const double *q, const double *qd, const double *tau) {
  for (int i = 0; i < p->m->nv; i++) {
    if (q) {
      p->d->qpos[i] = p->md->qpos[i] = q[i];
    }
    if (qd) {
      p->d->qvel[i] = p->md->qvel[i] = qd[i];
    }
    if (tau) {
      p->d->qfrc_applied[i] = p->md->qfrc_applied[i] = tau[i];
    }
  }
}

/* q with joint velocities (three in ten nearly at rest) and torques in ±tau_max drawn from s,
 * set in both and forwarded in ours; 1 when ours touches */
static int pair_draw(pair *p, uint64_t *s, const double q[4], double tau_max) {
  double qd[4], tau[4];
  for (int i = 0; i < 4; i++) {
    qd[i] = ts_uniform(s, 0, 1) < 0.3 ? ts_uniform(s, -0.01, 0.01) : ts_uniform(s, -1, 1);
    tau[i] = ts_uniform(s, -tau_max, tau_max);
  }
  pair_set(p, q, qd, tau);
  sim_forward(p->m, p->d);
  return p->d->ncon > 0;
}


/* --- model constants -------------------------------------------------------------------------- */

/* the constants behind R and the tolerance, as MuJoCo's compiler made them */
static void test_constants(void **state) {
  (void)state;
  pair p;
  pair_open(&p);
  double e = 0;
  for (int k = 0; k < p.m->nv; k++) {
    const sim_joint *jt = &p.m->joints[p.m->dof_joint[k]];
    e = fmax(e, fabs(jt->invweight0 - p.mm->dof_invweight0[k]) / p.mm->dof_invweight0[k]);
    assert_true(p.mm->dof_frictionloss[k] == jt->frictionloss);
  }
  double em = fabs(p.m->meaninertia - p.mm->stat.meaninertia) / p.mm->stat.meaninertia;
  double eb = 0;
  for (int b = 1; b < p.m->nbody; b++) {
    for (int k = 0; k < 2; k++) {
      double ref = p.mm->body_invweight0[2 * b + k];
      eb = fmax(eb, fabs(p.m->bodies[b].invweight0[k] - ref) / ref);
    }
  }
  print_message("invweight0 max relative error: dofs %.2g, bodies %.2g; meaninertia %.2g\n", e,
                eb, em);
  assert_true(e <= 1e-12);
  assert_true(eb <= 1e-12);
  assert_true(em <= 1e-12);
  assert_int_equal(p.m->nefc_max, 4 + 3);
  pair_close(&p);
}

/* point Jacobians of every body at random states and points, against mj_jac */
static void test_point_jacobians(void **state) {
  (void)state;
  pair p;
  pair_open(&p);
  int nv = p.m->nv;
  double jp[3 * 8], jr[3 * 8], mjp[3 * 8], mjr[3 * 8], q[8], e = 0;
  uint64_t s = 0xda3e39cb94b95bdbull;
  for (int k = 0; k < 50; k++) {
    for (int i = 0; i < nv; i++) {
      q[i] = ts_uniform(&s, -2, 2);
    }
    pair_set(&p, q, NULL, NULL);
    sim_kinematics(p.m, p.d);
    mj_kinematics(p.mm, p.md);
    mj_comPos(p.mm, p.md);
    for (int b = 1; b < p.m->nbody; b++) {
      double pt[3] = {ts_uniform(&s, -1, 1), ts_uniform(&s, -1, 1), ts_uniform(&s, -1, 1)};
      sim_jac_point(p.m, p.d, jp, jr, b, pt);
      mj_jac(p.mm, p.md, mjp, mjr, pt, b);
      for (int i = 0; i < 3 * nv; i++) {
        e = fmax(e, fmax(fabs(jp[i] - mjp[i]), fabs(jr[i] - mjr[i])));
      }
    }
  }
  print_message("point Jacobians: max difference from mj_jac %.2g\n", e);
  assert_true(e <= 1e-14);
  pair_close(&p);
}

/* --- per state -------------------------------------------------------------------------------- */

typedef struct state_errors {
  double jac;    /* efc_J, absolute (entries of order 1) */
  int ncontact;  /* contact rows */
  double rows;   /* pos, R, aref: relative */
  double force;  /* efc_force relative to the largest force */
  double qacc;   /* relative to the largest |q̈| (at least 1) */
  int nlimit;    /* states with an active limit row */
  int nstick;    /* friction rows inside their box (sticking) */
  int nslide;    /* friction rows at their bound (sliding) */
  int nsatisfied; /* limit rows instantiated but pulling away */
} state_errors;

static void compare_rows(const pair *p, state_errors *e) {
  const sim_data *d = p->d;
  const mjData *md = p->md;
  assert_int_equal(d->nefc, md->nefc);
  assert_int_equal(d->nf, md->nf);
  for (int i = 0; i < d->nefc; i++) {
    int limit = d->efc_type[i] == SIM_CNSTR_LIMIT_JOINT;
    int contact = d->efc_type[i] == SIM_CNSTR_CONTACT_PYRAMIDAL;
    assert_int_equal(md->efc_type[i], contact ? mjCNSTR_CONTACT_PYRAMIDAL
                                      : limit ? mjCNSTR_LIMIT_JOINT : mjCNSTR_FRICTION_DOF);
    assert_int_equal(md->efc_id[i], d->efc_id[i]);
    for (int k = 0; k < p->m->nv; k++) {
      e->jac = fmax(e->jac, fabs(md->efc_J[i * p->m->nv + k] - d->efc_J[i * p->m->nv + k]));
    }
    e->ncontact += contact;
    limit |= contact; /* one-sided rows from here on */
    double r = fabs(d->efc_pos[i] - md->efc_pos[i]) / fmax(fabs(md->efc_pos[i]), 1e-4); /* m: rounding of poses ~1e-17 */
    r = fmax(r, fabs(d->efc_R[i] - md->efc_R[i]) / md->efc_R[i]);
    /* aref = −b·vel − k·imp·pos may cancel: relative to the size of its two terms */
    const double *kbip = md->efc_KBIP + 4 * i;
    double sref = fabs(kbip[1] * md->efc_vel[i]) + fabs(kbip[0] * kbip[2] * md->efc_pos[i]);
    r = fmax(r, fabs(d->efc_aref[i] - md->efc_aref[i]) / fmax(sref, 1e-9));
    e->rows = fmax(e->rows, r);
    e->nlimit += limit;
    e->nsatisfied += limit && md->efc_state[i] == mjCNSTRSTATE_SATISFIED;
    e->nstick += !limit && md->efc_state[i] == mjCNSTRSTATE_QUADRATIC;
    e->nslide += !limit && md->efc_state[i] != mjCNSTRSTATE_QUADRATIC;
    /* the same state on both sides (at a solution away from a kink) */
    assert_int_equal(md->efc_state[i], d->efc_state[i]);
  }
}

static void compare_state(pair *p, state_errors *e) {
  sim_forward(p->m, p->d);
  mj_forward(p->mm, p->md);
  compare_rows(p, e);
  int n = p->d->nefc, nv = p->m->nv;
  double sf = fmax(ts_max_abs(p->md->efc_force, n), 1e-9);
  e->force = fmax(e->force, ts_max_diff(p->d->efc_force, p->md->efc_force, n) / sf);
  /* q̈ relative to the larger of q̈ and the constraint's share of it (q̈ − a0): the solver's
   * error is an error of the constraint force, so it scales with that share */
  double share = 0;
  for (int i = 0; i < nv; i++) {
    share = fmax(share, fabs(p->md->qacc[i] - p->md->qacc_smooth[i]));
  }
  double sa = fmax(fmax(ts_max_abs(p->md->qacc, nv), share), 1.0);
  e->qacc = fmax(e->qacc, ts_max_diff(p->d->qacc, p->md->qacc, nv) / sa);
}

/* a position for joint j: inside, or past either limit by up to 5× the solimp width (the
 * impedance's whole curve), or far past */
static double random_position(uint64_t *s, const sim_joint *jt) {
  double u = ts_uniform(s, 0, 1), lo = jt->range[0], hi = jt->range[1];
  double w = jt->solimp_limit[2];
  if (u < 0.3) {
    return ts_uniform(s, lo, hi);
  }
  double depth = u < 0.9 ? ts_uniform(s, 0, 5 * w) : ts_uniform(s, 0, 0.1);
  return ts_uniform(s, 0, 1) < 0.5 ? lo - depth : hi + depth;
}

/* each solver against MuJoCo's of the same kind (CG at 1000 iterations stops short of the
 * optimum on these stiff stops the same way on both sides; Newton reaches it to rounding) */
static void check_states(mjtSolver solver, const char *name) {
  pair p;
  pair_open(&p);
  /* both solvers to convergence */
  pair_converged(&p, solver);
  int nv = p.m->nv;
  double q[8], qd[8], tau[8];
  state_errors e = {0};
  uint64_t s = 0x5851f42d4c957f2dull;
  const int nstate = 200;
  for (int k = 0; k < nstate; k++) {
    for (int i = 0; i < nv; i++) {
      const sim_joint *jt = &p.m->joints[p.m->dof_joint[i]];
      q[i] = random_position(&s, jt);
      /* slow joints too, so that friction sticks in some states */
      int slow = ts_uniform(&s, 0, 1) < 0.4;
      qd[i] = slow ? ts_uniform(&s, -0.002, 0.002) : ts_uniform(&s, -2, 2);
      tau[i] = slow ? ts_uniform(&s, -0.3, 0.3) : ts_uniform(&s, -3, 3);
    }
    pair_set(&p, q, qd, tau);
    compare_state(&p, &e);
  }
  print_message("against MuJoCo's %s, %d states: %d limit rows (%d pulling away), friction %d sticking / %d sliding; "
                "max relative error: rows %.2g, efc_force %.2g, qacc %.2g\n",
                name, nstate, e.nlimit, e.nsatisfied, e.nstick, e.nslide, e.rows, e.force, e.qacc);
  /* the rows are closed-form expressions of the same inputs: rounding only */
  assert_true(e.rows <= 1e-12);
  assert_true(e.jac <= 1e-14);
  /* both minimize the same strictly convex cost to convergence; the minimum is unique */
  assert_true(e.force <= 1e-6);
  assert_true(e.qacc <= 1e-6);
  /* every regime was exercised */
  assert_true(e.nlimit > 100 && e.nsatisfied > 5 && e.nstick > 10 && e.nslide > 100);
  pair_close(&p);
}

static void test_states(void **state) {
  (void)state;
  check_states(mjSOL_CG, "CG");
  check_states(mjSOL_NEWTON, "Newton");
}

/* Why 1e-6 rad: both engines run the same CG (MuJoCo's line search, updates and stop rules)
 * from the same warm start, so the steps differ by rounding only (measured 2e-14 with Euler,
 * 4e-15 with RK4), and the stops are critically damped, so differences add up rather than grow;
 * the bound leaves room for another machine's rounding. A modelling error
 * (test_detects_softer_limit) is far above it. */
#define TRAJ_TOL 1e-6
/* The club arm striking its table with CG at 20 iterations: the same CG on both sides, rounding
 * only (measured 8e-14 rad), and the one contact is damped, not chaotic: 1e-9 rad bounds it
 * with room, and a 10 % softer table on one side moves the arm by far more
 * (test_club_strike). */
#define CLUB_STRIKE_TOL 1e-9
#define TRAJ_WHY "the same CG on both sides, 20 iterations, tolerance 1e-8"

/* --- contacts -------------------------------------------------------------------------------- */

/* A shape on a carriage: slides along x, y and z and a hinge about y (so friction can roll
 * it), above a plane tilted by ~0.2 rad with friction 0.8 (the shape's own 0.5: the larger
 * counts) and the shape's soft parameters mixed with the plane's. With `block` the floor is a
 * box fixed to the world instead, 0.1 m thick, whose top face is that plane (sphere–box and
 * capsule–box contacts). */
static void shape_json_on(char *out, size_t n, const char *geom, int block) {
  static const char *const floors[2] = {
      "\"type\": \"plane\", \"pos\": [0, 0, -0.05]",
      /* centre = (0, 0, −0.05) − 0.05·n, n = (0, −sin 0.2, cos 0.2) the top face's normal */
      "\"type\": \"box\", \"size\": [0.6, 0.6, 0.05],"
      " \"pos\": [0, 0.009933466539753062, -0.09900332889206209]"};
  snprintf(out, n,
      "{ \"name\": \"carriage\", \"timestep\": 0.002,\n"
      "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", %s,\n"
      "     \"quat\": [0.9950041652780258, 0.09983341664682815, 0, 0],\n"
      "     \"friction\": [0.8, 0.005, 0.0001], \"solref\": [0.03, 0.8] },\n"
      "    { \"name\": \"shape\", \"body\": \"holder\", %s,\n"
      "      \"friction\": [0.5, 0.005, 0.0001], \"solimp\": [0.85, 0.97, 0.002, 0.4, 2] } ],\n"
      "  \"bodies\": [\n"
      "  { \"name\": \"cx\", \"parent\": \"world\", \"joint\": { \"name\": \"x\", \"type\": \"slide\",\n"
      "    \"axis\": [1, 0, 0] }, \"inertial\": { \"mass\": 0.3, \"inertia\": [1e-4, 1e-4, 1e-4, 0, 0, 0] } },\n"
      "  { \"name\": \"cy\", \"parent\": \"cx\", \"joint\": { \"name\": \"y\", \"type\": \"slide\",\n"
      "    \"axis\": [0, 1, 0] }, \"inertial\": { \"mass\": 0.3, \"inertia\": [1e-4, 1e-4, 1e-4, 0, 0, 0] } },\n"
      "  { \"name\": \"cz\", \"parent\": \"cy\", \"joint\": { \"name\": \"z\", \"type\": \"slide\",\n"
      "    \"axis\": [0, 0, 1] }, \"inertial\": { \"mass\": 0.3, \"inertia\": [1e-4, 1e-4, 1e-4, 0, 0, 0] } },\n"
      "  { \"name\": \"holder\", \"parent\": \"cz\", \"joint\": { \"name\": \"roll\",\n"
      "    \"type\": \"hinge\", \"axis\": [0, 1, 0] }, \"inertial\": { \"mass\": 1.0,\n"
      "    \"inertia\": [0.004, 0.004, 0.004, 0, 0, 0] } } ] }\n", floors[block != 0], geom);
}

static void shape_json(char *out, size_t n, const char *geom) {
  shape_json_on(out, n, geom, 0);
}

static const char *const shapes[] = {
    "\"type\": \"sphere\", \"size\": [0.1]",
    "\"type\": \"capsule\", \"size\": [0.05, 0.15], \"quat\": [0.7071067811865476, 0, 0.7071067811865476, 0]",
    "\"type\": \"box\", \"size\": [0.1, 0.08, 0.06]"};
/* how far below the plane the shape's centre may sit: its lowest point then touches it */
static const double reach[] = {0.1, 0.15, 0.14};

static void check_contact_states_on(int shape, mjtSolver solver, int block) {
  char json[4096];
  shape_json_on(json, sizeof json, shapes[shape], block);
  pair p;
  pair_open_json(&p, json);
  pair_converged(&p, solver);
  double q[4];
  state_errors e = {0};
  uint64_t s = 0x7a5bd2e1f3c9ull + (uint64_t)shape;
  int n = 0;
  for (int k = 0; k < 400 && n < 200; k++) {
    q[0] = ts_uniform(&s, -0.3, 0.3);
    q[1] = ts_uniform(&s, -0.3, 0.3);
    /* the plane's height below (x, y): z = −0.05 + tan(0.2)·y */
    double ground = -0.05 + tan(0.2) * q[1];
    q[2] = ground + reach[shape] * ts_uniform(&s, 0.3, 1.02) - 0.005;
    q[3] = ts_uniform(&s, -0.6, 0.6);
    if (!pair_draw(&p, &s, q, 2)) {
      continue;
    }
    n++;
    compare_state(&p, &e);
  }
  print_message("%s%s (%s): %d states with contact, %d pyramid rows; max error: efc_J %.2g, "
                "rows %.2g, efc_force %.2g, qacc %.2g (relative)\n", block ? "on a block: " : "",
                shapes[shape],
                solver == mjSOL_CG ? "CG" : "Newton", n, e.ncontact, e.jac, e.rows, e.force,
                e.qacc);
  assert_true(n >= 150);
  assert_true(e.jac <= 1e-14);
  assert_true(e.rows <= 1e-12);
  assert_true(e.force <= 1e-6);
  assert_true(e.qacc <= 1e-6);
  pair_close(&p);
}

/* Each shape dropped from 3 cm above the tilted plane with a sideways push (it bounces, slides
 * and rolls), 1 s side by side, twice:
 *  - both solvers run to convergence: the same model integrated the same way, so rounding only,
 *    amplified by impacts: within 1e-8 m (measured 4e-11 to 5e-9 with MuJoCo's Newton or CG);
 *  - both with CG, 20 iterations, tolerance 1e-8 (the default): 20 iterations do not converge
 *    on stiff contacts, but both engines run the same CG (MuJoCo's line search and stop rules),
 *    so they stop at the same point to rounding: within 1e-9 m (measured 6e-15 to 2e-14; with
 *    an exact line search of our own, before Newton came, it was 7e-7 to 1.4e-3). The 1e-8 run
 *    is the proof that the model is MuJoCo's. */
static double drop(int shape, int iterations, double tolerance, mjtSolver solver) {
  char json[4096];
  shape_json(json, sizeof json, shapes[shape]);
  pair p;
  pair_open_json(&p, json);
  pair_solver(&p, iterations, tolerance);
  p.mm->opt.solver = solver;
  p.m->opt.solver = solver == mjSOL_NEWTON ? SIM_SOLVER_NEWTON : SIM_SOLVER_CG;
  double q[4] = {0, 0.1, -0.05 + tan(0.2) * 0.1 + reach[shape] + 0.03, 0.2};
  double qd[4] = {0.8, -0.3, 0, 0};
  pair_set(&p, q, qd, NULL);
  memset(p.d->qacc_warmstart, 0, sizeof(double) * 4);
  memset(p.md->qacc_warmstart, 0, sizeof(double) * 4);
  double eq = 0;
  int touching = 0, maxcon = 0;
  for (int k = 0; k < 500; k++) {
    sim_step(p.m, p.d);
    mj_step(p.mm, p.md);
    touching += p.d->ncon > 0;
    maxcon = p.d->ncon > maxcon ? p.d->ncon : maxcon;
    eq = fmax(eq, ts_max_diff(p.d->qpos, p.md->qpos, 4));
  }
  print_message("%s dropped, 1 s, %d iterations (MuJoCo %s): %d of 500 steps touching, up to %d "
                "contacts; max |dq| %.3g\n", shapes[shape], iterations,
                solver == mjSOL_CG ? "CG" : "Newton", touching, maxcon, eq);
  assert_true(touching > 300);
  pair_close(&p);
  return eq;
}

static void test_contact_trajectories(void **state) {
  (void)state;
  for (int shape = 0; shape < 3; shape++) {
    assert_true(drop(shape, 1000, 1e-15, mjSOL_NEWTON) <= 1e-8);
    assert_true(drop(shape, 1000, 1e-15, mjSOL_CG) <= 1e-8);
    assert_true(drop(shape, 20, 1e-8, mjSOL_CG) <= 1e-9);
  }
}

/* Each shape on a free joint (no carriage) dropped spinning onto the tilted plane, 1 s beside
 * MuJoCo with both solvers converged (Euler, so that both integrate the quaternion the same
 * way): contact Jacobians through a free joint's body-axis rotation dofs. Rounding only, but a
 * spinning shape's bounces and its changes between one and two contacts amplify it more than
 * the carriage's: within 1e-7 (measured sphere 3e-10, capsule 4e-8, box 5e-9); a frame or sign
 * error in the free joint moves the shapes by centimetres. */
static double drop_free(int shape) {
  char json[4096];
  snprintf(json, sizeof json,
      "{ \"name\": \"free_drop\", \"timestep\": 0.002,\n"
      "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\",\n"
      "     \"pos\": [0, 0, -0.05], \"quat\": [0.9950041652780258, 0.09983341664682815, 0, 0],\n"
      "     \"friction\": [0.8, 0.005, 0.0001], \"solref\": [0.03, 0.8] },\n"
      "    { \"name\": \"shape\", \"body\": \"body\", %s,\n"
      "      \"friction\": [0.5, 0.005, 0.0001], \"solimp\": [0.85, 0.97, 0.002, 0.4, 2] } ],\n"
      "  \"bodies\": [ { \"name\": \"body\", \"parent\": \"world\", \"pos\": [0, 0.1, %.17g],\n"
      "    \"quat\": [0.9800665778412416, 0.19866933079506122, 0, 0],\n"
      "    \"joint\": { \"name\": \"root\", \"type\": \"free\" }, \"inertial\": { \"mass\": 1.0,\n"
      "    \"inertia\": [0.004, 0.005, 0.006, 0, 0, 0] } } ] }\n",
      shapes[shape], -0.05 + tan(0.2) * 0.1 + reach[shape] + 0.03);
  pair p;
  pair_open_json(&p, json);
  pair_converged(&p, mjSOL_NEWTON);
  const double qd[6] = {0.8, -0.3, 0, 2.0, -1.0, 3.0};
  pair_set(&p, NULL, qd, NULL);
  double eq = 0;
  int touching = 0;
  for (int k = 0; k < 500; k++) {
    sim_step(p.m, p.d);
    mj_step(p.mm, p.md);
    touching += p.d->ncon > 0;
    eq = fmax(eq, ts_max_diff(p.d->qpos, p.md->qpos, 7));
  }
  print_message("%s on a free joint dropped, 1 s (MuJoCo Newton, converged): %d of 500 steps "
                "touching; max |dq| %.3g\n", shapes[shape], touching, eq);
  assert_true(touching > 300);
  pair_close(&p);
  return eq;
}

static void test_free_contact_trajectories(void **state) {
  (void)state;
  for (int shape = 0; shape < 3; shape++) {
    assert_true(drop_free(shape) <= 1e-7);
  }
}

static void check_contact_states(int shape, mjtSolver solver) {
  check_contact_states_on(shape, solver, 0);
}

static void test_contact_states(void **state) {
  (void)state;
  for (int shape = 0; shape < 3; shape++) {
    check_contact_states(shape, mjSOL_CG);
    check_contact_states(shape, mjSOL_NEWTON);
  }
}

/* the sphere and the capsule against a box fixed to the world instead of the plane */
static void test_box_contact_states(void **state) {
  (void)state;
  for (int shape = 0; shape < 2; shape++) {
    check_contact_states_on(shape, mjSOL_CG, 1);
    check_contact_states_on(shape, mjSOL_NEWTON, 1);
  }
}

/* --- the club arm and its table ------------------------------------------------------------ */

/* configs/club_arm.json as shipped: hard stops, friction in every joint, capsule links and an
 * end-effector sphere over the table plane, DC motors (duty 0 here: their back-EMF brakes) */
static void club_open(pair *p) {
  char err[512];
  char *json = sim_json_read_file(ACHILLES_SOURCE_DIR "/configs/club_arm.json", err, sizeof err);
  if (!json) {
    fail_msg("%s", err);
  }
  pair_open_json(p, json);
  free(json);
}

/* Per state, both solvers to convergence: the arm pressed into its table (shoulder swung down
 * onto it, elbow anywhere, often against a stop too), moving and pushed by random torques. */
static void check_club_states(mjtSolver solver) {
  pair p;
  club_open(&p);
  pair_converged(&p, solver);
  double q[4];
  state_errors e = {0};
  uint64_t s = 0x243f6a8885a308d3ull;
  int n = 0, ncon = 0, nstop = 0;
  for (int k = 0; k < 2000 && n < 200; k++) {
    q[0] = ts_uniform(&s, -3.3, 3.3);
    q[1] = ts_uniform(&s, 0.6, 1.9);
    q[2] = ts_uniform(&s, -2.6, 2.6);
    q[3] = ts_uniform(&s, -3.3, 3.3);
    if (!pair_draw(&p, &s, q, 1)) {
      continue;
    }
    n++;
    ncon += p.d->ncon;
    nstop += p.d->nefc - p.d->nf - 4 * p.d->ncon > 0;
    compare_state(&p, &e);
  }
  print_message("club arm on its table (%s): %d states, %d contacts, %d at a stop too; max "
                "relative error: rows %.2g, efc_force %.2g, qacc %.2g\n",
                solver == mjSOL_CG ? "CG" : "Newton", n, ncon, nstop, e.rows, e.force, e.qacc);
  assert_int_equal(n, 200);
  assert_true(nstop > 20);
  assert_true(e.jac <= 1e-14);
  assert_true(e.rows <= 1e-12);
  assert_true(e.force <= 1e-6);
  assert_true(e.qacc <= 1e-6);
  pair_close(&p);
}

static void test_club_states(void **state) {
  (void)state;
  check_club_states(mjSOL_CG);
  check_club_states(mjSOL_NEWTON);
}

/* The club arm released from horizontal with the elbow bent and the base turning, motors at
 * duty 0: it swings down, strikes the table with its forearm and tool, bounces and comes to
 * rest on it, 1 s side by side (Euler, as shipped). Bounds as for the dropped shapes: solvers
 * to convergence, rounding only, amplified by the impacts; CG with 20 iterations, each stops at
 * the same point short of the optimum on both sides (the same CG), to rounding. */
static double strike(int iterations, double tolerance, int perturb) {
  pair p;
  club_open(&p);
  if (perturb) { /* a modelling error on our side only: the table's time constant 10 % longer */
    p.m->geoms[0].solref[0] *= 1.1;
  }
  pair_solver(&p, iterations, tolerance);
  p.mm->opt.solver = mjSOL_CG;
  p.m->opt.solver = SIM_SOLVER_CG;
  double q[4] = {0.3, 0, 0.6, 0.2}, qd[4] = {0.5, 0, 0, 0};
  pair_set(&p, q, qd, NULL);
  memset(p.d->qacc_warmstart, 0, sizeof(double) * 4);
  memset(p.md->qacc_warmstart, 0, sizeof(double) * 4);
  double eq = 0;
  int touching = 0, maxcon = 0, first = -1;
  const int steps = (int)lround(1.0 / p.m->opt.timestep);
  for (int k = 0; k < steps; k++) {
    sim_step(p.m, p.d);
    mj_step(p.mm, p.md);
    touching += p.d->ncon > 0;
    first = first < 0 && p.d->ncon > 0 ? k : first;
    maxcon = p.d->ncon > maxcon ? p.d->ncon : maxcon;
    eq = fmax(eq, ts_max_diff(p.d->qpos, p.md->qpos, 4));
  }
  print_message("club arm striking its table, 1 s, %d iterations: first contact at step %d, %d "
                "of %d steps touching, up to %d contacts; max |dq| %.3g rad\n", iterations,
                first + 1, touching, steps, maxcon, eq);
  assert_true(touching > steps / 2);
  pair_close(&p);
  return eq;
}

static void test_club_strike(void **state) {
  (void)state;
  assert_true(strike(1000, 1e-15, 0) <= 1e-8);
  assert_true(strike(20, 1e-8, 0) <= CLUB_STRIKE_TOL);
  assert_true(strike(20, 1e-8, 1) > 100 * CLUB_STRIKE_TOL);
}

/* The sliding box of test_constraint (a 1.5 kg box on a 0.5 kg carriage, μ = 0.5, sliding at
 * 2 m/s) decelerates 2.3 % short of μ·N/m there: the pyramid's edges across the motion carry
 * part of the normal load. MuJoCo's pyramid does the same: its deceleration is ours. */
static void test_sliding_box_shortfall(void **state) {
  (void)state;
  pair p;
  pair_open_json(&p, ts_slurp(ACHILLES_SOURCE_DIR "/tests/support/robots/sliding_box.json"));
  const double q[2] = {0, 0.0997}, qd[2] = {2.0, 0};
  pair_set(&p, q, qd, NULL);
  double v[2][2] = {{0, 0}, {0, 0}};
  for (int s = 0; s < 300; s++) {
    sim_step(p.m, p.d);
    mj_step(p.mm, p.md);
    if (s == 99 || s == 299) {
      v[0][s == 299] = p.d->qvel[0];
      v[1][s == 299] = p.md->qvel[0];
    }
  }
  const double ours = (v[0][0] - v[0][1]) / 0.2, theirs = (v[1][0] - v[1][1]) / 0.2;
  const double coulomb = 0.5 * 9.81 * 1.5 / 2.0;
  print_message("sliding box: deceleration %.6g m/s² (MuJoCo %.6g), μ·N/m %.6g: %.2f %% and "
                "%.2f %% short\n", ours, theirs, coulomb, 100 * (coulomb - ours) / coulomb,
                100 * (coulomb - theirs) / coulomb);
  assert_true(fabs(ours - theirs) <= 1e-6 * coulomb);
  pair_close(&p);
}

/* --- trajectories ------------------------------------------------------------------------------ */

/* 1 s driven into the limits and through friction, both with CG, 20 iterations, tolerance
 * 1e-8, warm start from the previous step. */
static double run_trajectory(mjtIntegrator mj_integrator, sim_integrator integrator, double tol,
                             const char *why, int perturb) {
  pair p;
  pair_open(&p);
  if (perturb) { /* a modelling error on our side only: the pitch limit 10 % softer */
    p.m->joints[1].solref_limit[0] *= 1.1;
  }
  pair_solver(&p, 20, 1e-8);
  p.m->opt.integrator = integrator;
  p.mm->opt.integrator = mj_integrator;
  int nv = p.m->nv;
  double q[8] = {0.9, 1.0, 0.05, 1.5}, qd[8] = {0}, tau[8];
  pair_set(&p, q, qd, NULL);
  memset(p.d->qacc_warmstart, 0, (size_t)nv * sizeof(double));
  memset(p.md->qacc_warmstart, 0, (size_t)nv * sizeof(double));
  double eq = 0, ev = 0;
  int steps = (int)lround(1.0 / p.m->opt.timestep), constrained = 0, nefc_max = 0;
  for (int k = 0; k < steps; k++) {
    double t = k * p.m->opt.timestep;
    for (int i = 0; i < nv; i++) {
      tau[i] = (i == 2 ? 6.0 : 1.5) * sin(4.0 * t + 1.3 * i) / (1 + i);
    }
    pair_set(&p, NULL, NULL, tau);
    sim_step(p.m, p.d);
    mj_step(p.mm, p.md);
    constrained += p.d->solver.nefc > p.d->nf;
    nefc_max = p.d->solver.nefc > nefc_max ? p.d->solver.nefc : nefc_max;
    eq = fmax(eq, ts_max_diff(p.d->qpos, p.md->qpos, nv));
    ev = fmax(ev, ts_max_diff(p.d->qvel, p.md->qvel, nv));
  }
  print_message("%s 1 s: %d of %d steps at a limit, up to %d rows; max |dq| %.3g, "
                "max |dqd| %.3g (bound %.0e: %s)\n", mj_integrator == mjINT_RK4 ? "rk4" : "euler",
                constrained, steps, nefc_max, eq, ev, tol, why);
  assert_true(constrained > steps / 4);
  if (!perturb) {
    assert_true(eq <= tol);
  }
  pair_close(&p);
  return eq;
}



TS_TEST(test_trajectory_euler,
        run_trajectory(mjINT_EULER, SIM_INTEGRATOR_EULER, TRAJ_TOL, TRAJ_WHY, 0))

TS_TEST(test_trajectory_rk4, run_trajectory(mjINT_RK4, SIM_INTEGRATOR_RK4, TRAJ_TOL, TRAJ_WHY, 0))

/* the comparison can fail: a 10 % softer limit on one joint is seen far above the bound */
static void test_detects_softer_limit(void **state) {
  (void)state;
  double eq = run_trajectory(mjINT_EULER, SIM_INTEGRATOR_EULER, TRAJ_TOL, "perturbed", 1);
  assert_true(eq > 100 * TRAJ_TOL);
}

#endif

TS_MUJOCO_MAIN(test_constants, test_point_jacobians, test_states, test_contact_states,
               test_box_contact_states, test_contact_trajectories, test_club_states,
               test_club_strike, test_sliding_box_shortfall, test_free_contact_trajectories,
               test_trajectory_euler, test_trajectory_rk4, test_detects_softer_limit)
