/* tests/sim/test_no_alloc.c: stepping, and differentiating the steps (sim/deriv), allocate nothing.
 * The test is linked with -Wl,--wrap=malloc,calloc,realloc, so every allocation made by the
 * statically linked sim library passes through the counters below. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/deriv/rollout.h"
#include "sim/pool.h"
#include "sim/sim.h"
#include "support/model.h"
#include "support/skip.h"
#include "support/tmp.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);

static long allocations;

void *__wrap_malloc(size_t size) {
  allocations++;
  return __real_malloc(size);
}
void *__wrap_calloc(size_t n, size_t size) {
  allocations++;
  return __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t size) {
  allocations++;
  return __real_realloc(p, size);
}

/* a batch of the world pool: its workers step from data made in sim_pool_new */
static void test_pool_step_allocates_nothing(void **state) {
  (void)state;
  char path[512], err[512];
  snprintf(path, sizeof path, "%s/configs/club_arm.json", ACHILLES_SOURCE_DIR);
  sim_model *m = sim_model_load_file(path, err, sizeof err);
  assert_non_null(m);
  long before_new = allocations;
  sim_pool *p = sim_pool_new(m, 8, 2, err, sizeof err);
  assert_non_null(p);
  assert_true(allocations > before_new);
  sim_pool_step(p, 1); /* the worker thread's first wake-up is not a step */
  long before = allocations;
  double ctrl[8 * 16] = {0.1};
  double obs[8 * 64];
  for (int b = 0; b < 50; b++) {
    sim_pool_set_ctrl(p, ctrl);
    sim_pool_step(p, 10);
    sim_pool_observe(p, 0, obs);
  }
  assert_int_equal(allocations - before, 0);
  sim_pool_free(&p);
  sim_model_free(m);
}

static void test_step_allocates_nothing(void **state) {
  (void)state;
  char path[512], err[512];
  snprintf(path, sizeof path, "%s/configs/club_arm.json", ACHILLES_SOURCE_DIR);
  long before_load = allocations;
  sim_model *m = sim_model_load_file(path, err, sizeof err);
  assert_non_null(m);
  sim_data *d = sim_data_new(m);
  sim_snapshot *snap = sim_snapshot_new(m);
  /* proof the counter sees the library's allocations */
  assert_true(allocations > before_load);
  for (int integrator = 0; integrator <= SIM_INTEGRATOR_RK4; integrator++) {
    m->opt.integrator = (sim_integrator)integrator;
    long before = allocations;
    d->qfrc_applied[1] = 0.5;
    for (int s = 0; s < 100; s++) {
      sim_step(m, d);
      sim_forward(m, d);
      sim_crba(m, d);
      sim_rnea_bias(m, d);
      sim_inverse(m, d);
      (void)sim_energy_kinetic(m, d);
      (void)sim_energy_potential(m, d);
    }
    sim_snapshot_save(m, d, snap);
    sim_snapshot_restore(m, d, snap);
    sim_data_reset(m, d);
    assert_int_equal(allocations - before, 0);
  }
  sim_snapshot_free(snap);
  ts_sim_free(m, d);
}

/* with joint limits and friction active the constraint stage and its solver run every step */
static const char limited_json[] =
    "{ \"name\": \"limited\", \"solver_iterations\": 20,\n"
    "  \"bodies\": [\n"
    "  { \"name\": \"a\", \"parent\": \"world\",\n"
    "    \"joint\": { \"name\": \"ja\", \"type\": \"hinge\", \"axis\": [0, 1, 0], \"damping\": 0.1,\n"
    "               \"frictionloss\": 0.2, \"limited\": true, \"range\": [-0.3, 0.3] },\n"
    "    \"inertial\": { \"mass\": 1, \"com\": [0.2, 0, 0], \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } },\n"
    "  { \"name\": \"b\", \"parent\": \"a\", \"pos\": [0.4, 0, 0],\n"
    "    \"joint\": { \"name\": \"jb\", \"type\": \"slide\", \"axis\": [1, 0, 0],\n"
    "               \"frictionloss\": 1, \"limited\": true, \"range\": [0, 0.05] },\n"
    "    \"inertial\": { \"mass\": 0.5, \"inertia\": [0.001, 0.001, 0.001, 0, 0, 0] } },\n"
    "  { \"name\": \"c\", \"parent\": \"world\", \"pos\": [2, 0, 0.2],\n"
    "    \"joint\": { \"name\": \"jc\", \"type\": \"slide\", \"axis\": [0, 0, 1] },\n"
    "    \"inertial\": { \"mass\": 0.5, \"inertia\": [0.001, 0.001, 0.001, 0, 0, 0] } } ],\n"
    "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },\n"
    "    { \"name\": \"cube\", \"body\": \"c\", \"type\": \"box\", \"size\": [0.1, 0.1, 0.1] } ] }\n";

static void test_constrained_step_allocates_nothing(void **state) {
  (void)state;
  sim_model *m = ts_model(limited_json);
  sim_data *d = sim_data_new(m);
  assert_non_null(d);
  int rows = 0;
  for (int integrator = 0; integrator <= SIM_INTEGRATOR_RK4; integrator++) {
    m->opt.integrator = (sim_integrator)integrator;
    long before = allocations;
    for (int s = 0; s < 200; s++) {
      d->qfrc_applied[0] = s < 100 ? 5.0 : -5.0; /* into one stop, then the other */
      sim_step(m, d);
      rows += d->solver.nefc > d->nf;
    }
    assert_int_equal(allocations - before, 0);
  }
  assert_true(rows > 400); /* the limits were active most of the time */
  assert_int_equal(d->ncon, 4); /* the cube rests on its four bottom corners */
  ts_sim_free(m, d);
}

/* a free cube with a ball-jointed pendulum dropped on the floor: the multi-dof paths of every
 * stage (kinematics, ABA, CRBA, contacts along dof_parent, the manifold integrators) */
static const char floating_json[] =
    "{ \"name\": \"floating\", \"solver_iterations\": 20,\n"
    "  \"bodies\": [\n"
    "  { \"name\": \"cube\", \"parent\": \"world\", \"pos\": [0, 0, 0.3],\n"
    "    \"quat\": [0.9950041652780258, 0.0998334166468282, 0, 0],\n"
    "    \"joint\": { \"name\": \"root\", \"type\": \"free\" },\n"
    "    \"inertial\": { \"mass\": 1, \"inertia\": [0.0067, 0.0067, 0.0067, 0, 0, 0] } },\n"
    "  { \"name\": \"bob\", \"parent\": \"cube\", \"pos\": [0, 0, 0.1],\n"
    "    \"joint\": { \"name\": \"sh\", \"type\": \"ball\", \"damping\": 0.01 },\n"
    "    \"inertial\": { \"mass\": 0.05, \"com\": [0, 0, 0.05],\n"
    "                  \"inertia\": [0.0001, 0.0001, 0.0001, 0, 0, 0] } } ],\n"
    "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },\n"
    "    { \"name\": \"box\", \"body\": \"cube\", \"type\": \"box\", \"size\": [0.1, 0.1, 0.1] } ] }\n";

static void test_floating_step_allocates_nothing(void **state) {
  (void)state;
  sim_model *m = ts_model(floating_json);
  for (int integrator = 0; integrator <= SIM_INTEGRATOR_RK4; integrator++) {
    sim_data *d = sim_data_new(m);
    assert_non_null(d);
    m->opt.integrator = (sim_integrator)integrator;
    long before = allocations;
    ts_steps(m, d, 1000);
    assert_int_equal(allocations - before, 0);
    /* it fell, tipped onto a face and rests on its four bottom corners */
    assert_int_equal(d->ncon, 4);
    assert_true(fabs(d->qpos[2] - 0.1) < 2e-3);
    sim_data_free(d);
  }
  sim_model_free(m);
}

/* a free cylinder dropped onto a ball fixed to the world and the floor: plane–cylinder and the
 * general (MPR) routine run in the step */
static const char convex_json[] =
    "{ \"name\": \"convex\", \"solver_iterations\": 20,\n"
    "  \"bodies\": [\n"
    "  { \"name\": \"can\", \"parent\": \"world\", \"pos\": [0.12, 0, 0.35],\n"
    "    \"quat\": [0.9950041652780258, 0.0998334166468282, 0, 0],\n"
    "    \"joint\": { \"name\": \"root\", \"type\": \"free\" },\n"
    "    \"inertial\": { \"mass\": 1, \"inertia\": [0.0067, 0.0067, 0.005, 0, 0, 0] } } ],\n"
    "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },\n"
    "    { \"name\": \"knob\", \"body\": \"world\", \"type\": \"sphere\", \"size\": [0.1],\n"
    "      \"pos\": [0.25, 0, 0.1] },\n"
    "    { \"name\": \"can\", \"body\": \"can\", \"type\": \"cylinder\", \"size\": [0.1, 0.1] } ] }\n";

/* 1500 steps of m (convex_json's scene) without an allocation, the shape touching the ball and
 * the floor (geoms 1 and 0) in more than 10 steps each */
static void expect_contact_steps_allocate_nothing(sim_model *m, const char *shape) {
  sim_data *d = sim_data_new(m);
  assert_non_null(d);
  int on_knob = 0, on_floor = 0;
  long before = allocations;
  for (int s = 0; s < 1500; s++) {
    sim_step(m, d);
    for (int c = 0; c < d->ncon; c++) {
      on_knob += d->con_geom[2 * c] == 1;
      on_floor += d->con_geom[2 * c] == 0;
    }
  }
  assert_int_equal(allocations - before, 0);
  print_message("%s: %d contact-steps with the ball, %d with the floor\n", shape, on_knob,
                on_floor);
  assert_true(on_knob > 10 && on_floor > 10);
  ts_sim_free(m, d);
}

static void test_convex_step_allocates_nothing(void **state) {
  (void)state;
  expect_contact_steps_allocate_nothing(ts_model(convex_json), "cylinder");
}

/* the same with a mesh (a cube's STL, written here): plane–mesh and MPR on a hull */
static void test_mesh_step_allocates_nothing(void **state) {
  (void)state;
  static const int faces[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                                  {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  char dir[128], path[192];
  ts_tmpdir(dir, sizeof dir, "noalloc");
  ts_path(path, sizeof path, dir, "cube.stl");
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "solid cube\n");
  for (int k = 0; k < 6; k++) {
    for (int t = 0; t < 2; t++) {
      const int tri[3] = {faces[k][0], faces[k][t + 1], faces[k][t + 2]};
      fprintf(f, "facet normal 0 0 0\nouter loop\n");
      for (int v = 0; v < 3; v++) {
        fprintf(f, "vertex %g %g %g\n", tri[v] & 1 ? 0.1 : -0.1, tri[v] & 2 ? 0.1 : -0.1,
                tri[v] & 4 ? 0.1 : -0.1);
      }
      fprintf(f, "endloop\nendfacet\n");
    }
  }
  fprintf(f, "endsolid cube\n");
  fclose(f);
  static char json[2048];
  snprintf(json, sizeof json, "%s", convex_json);
  char *can = strstr(json, "\"type\": \"cylinder\", \"size\": [0.1, 0.1]");
  assert_non_null(can);
  char rest[64];
  snprintf(rest, sizeof rest, "%s", can + strlen("\"type\": \"cylinder\", \"size\": [0.1, 0.1]"));
  snprintf(can, sizeof json - (size_t)(can - json), "\"type\": \"mesh\", \"file\": \"%s\"%s",
           path, rest);
  sim_model *m = ts_model(json);
  ts_rmtree(dir);
  expect_contact_steps_allocate_nothing(m, "mesh cube");
}

/* a box dropped onto a box on the floor, under both solvers and both cones, with a
 * frictionless contact among them: box–box contacts, Newton's Hessian and its updates, the
 * elliptic cones' Hessians */
static const char stack_json[] =
    "{ \"name\": \"stack\", \"solver_iterations\": 20,\n"
    "  \"bodies\": [\n"
    "  { \"name\": \"lower\", \"parent\": \"world\", \"pos\": [0, 0, 0.0398],\n"
    "    \"joint\": { \"name\": \"lower\", \"type\": \"free\" },\n"
    "    \"inertial\": { \"mass\": 1, \"inertia\": [0.0027, 0.0027, 0.0043, 0, 0, 0] } },\n"
    "  { \"name\": \"upper\", \"parent\": \"world\", \"pos\": [0.01, 0, 0.12],\n"
    "    \"quat\": [0.9950041652780258, 0, 0, 0.0998334166468282],\n"
    "    \"joint\": { \"name\": \"upper\", \"type\": \"free\" },\n"
    "    \"inertial\": { \"mass\": 0.4, \"inertia\": [0.0003, 0.0005, 0.0005, 0, 0, 0] } } ],\n"
    "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },\n"
    "    { \"name\": \"lower\", \"body\": \"lower\", \"type\": \"box\", \"size\": [0.08, 0.08, 0.04] },\n"
    "    { \"name\": \"upper\", \"body\": \"upper\", \"type\": \"box\", \"size\": [0.05, 0.04, 0.03] } ] }\n";

static void test_stack_step_allocates_nothing(void **state) {
  (void)state;
  sim_model *m = ts_model(stack_json);
  m->geoms[2].condim = 1; /* the upper box: frictionless on the lower one */
  for (int run = 0; run < 4; run++) {
    m->opt.solver = run % 2 ? SIM_SOLVER_NEWTON : SIM_SOLVER_CG;
    m->opt.cone = run / 2 ? SIM_CONE_ELLIPTIC : SIM_CONE_PYRAMIDAL;
    sim_data *d = sim_data_new(m);
    assert_non_null(d);
    long before = allocations;
    int stacked = 0;
    for (int s = 0; s < 500; s++) {
      sim_step(m, d);
      for (int c = 0; c < d->ncon; c++) {
        stacked += d->con_geom[2 * c] == 1 && d->con_geom[2 * c + 1] == 2;
      }
    }
    assert_int_equal(allocations - before, 0);
    assert_true(stacked > 500);
    sim_data_free(d);
  }
  sim_model_free(m);
}

/* differentiating: step Jacobians (Euler, RK4), sensitivities, rollout gradients with every
 * checkpoint interval, the pool's worlds each with their Jacobians; a floating base with a ball
 * and a slide at its stop with friction, a DC motor with a winding */
static const char deriv_json[] =
    "{ \"name\": \"deriv\", \"gravity\": [0, 0, -9.81],\n"
    "  \"bodies\": [\n"
    "  { \"name\": \"base\", \"parent\": \"world\", \"joint\": { \"name\": \"root\", \"type\": \"free\" },\n"
    "    \"inertial\": { \"mass\": 2, \"inertia\": [0.02, 0.03, 0.04, 0, 0, 0] } },\n"
    "  { \"name\": \"arm\", \"parent\": \"base\", \"pos\": [0.1, 0, 0],\n"
    "    \"joint\": { \"name\": \"shoulder\", \"type\": \"ball\", \"damping\": 0.1 },\n"
    "    \"inertial\": { \"mass\": 0.5, \"com\": [0.1, 0, 0], \"inertia\": [0.001, 0.002, 0.002, 0, 0, 0] } },\n"
    "  { \"name\": \"hand\", \"parent\": \"arm\", \"pos\": [0.2, 0, 0],\n"
    "    \"joint\": { \"name\": \"wrist\", \"type\": \"hinge\", \"axis\": [0, 0, 1], \"damping\": 0.05 },\n"
    "    \"inertial\": { \"mass\": 0.2, \"com\": [0.05, 0, 0], \"inertia\": [0.0002, 0.0002, 0.0002, 0, 0, 0] } },\n"
    "  { \"name\": \"finger\", \"parent\": \"hand\", \"pos\": [0.05, 0, 0],\n"
    "    \"joint\": { \"name\": \"slide\", \"type\": \"slide\", \"axis\": [1, 0, 0], \"limited\": true,\n"
    "               \"range\": [0.01, 0.04], \"frictionloss\": 0.2 },\n"
    "    \"inertial\": { \"mass\": 0.05, \"inertia\": [0.00001, 0.00001, 0.00001, 0, 0, 0] } } ],\n"
    "  \"actuators\": [ { \"name\": \"m\", \"joint\": \"wrist\", \"type\": \"dc_motor\", \"gear\": 10,\n"
    "    \"supply_voltage\": 12, \"resistance\": 2, \"inductance\": 0.001, \"kt\": 0.01 } ] }\n";

static void test_differentiating_allocates_nothing(void **state) {
  (void)state;
  char err[512];
  sim_model *m = ts_model(deriv_json);
  sim_param params[64];
  int np = sim_param_parse(m, "body/*/*,joint/*/*,actuator/*/*", params, 64, err, sizeof err);
  assert_true(np > 10);
  int nx = sim_deriv_nx(m);
  double *A = calloc((size_t)nx * (size_t)(nx + m->nu + np) * 4 + 1000 * (size_t)m->nu, sizeof *A);
  double *B = A + nx * nx, *P = B + nx * m->nu, *S = P + nx * np, *ctrl = S + nx * (nx + np);
  double *gu = ctrl + 500 * m->nu, gx[32], gp[64], loss;
  sim_deriv *w = sim_deriv_new(m, params, np, err, sizeof err);
  sim_rollout *r1 = sim_rollout_new(m, params, np, 500, 1, err, sizeof err);
  sim_rollout *rk = sim_rollout_new(m, params, np, 500, SIM_ROLLOUT_SQRT, err, sizeof err);
  sim_pool *pool = sim_pool_new(m, 4, 2, err, sizeof err);
  sim_deriv *pw[4];
  for (int i = 0; i < 4; i++) {
    pw[i] = sim_deriv_new(m, params, np, err, sizeof err);
  }
  sim_data *d = sim_data_new(m);
  sim_tracking_loss tracking = {NULL, 0, 1, 0.1, 0};
  assert_true(w && r1 && rk && pool && d);
  sim_deriv_pool_step(pool, pw, A, B, NULL, NULL); /* the workers' first wake-up */
  int rows = 0;
  for (int integrator = 0; integrator <= SIM_INTEGRATOR_RK4; integrator += SIM_INTEGRATOR_RK4) {
    m->opt.integrator = (sim_integrator)integrator;
    long before = allocations;
    for (int s = 0; s < 200; s++) {
      d->ctrl[0] = 0.5;
      d->qfrc_applied[m->nv - 1] = s < 100 ? 1.0 : -1.0; /* into one stop, then the other */
      assert_int_equal(sim_deriv_step(m, d, w, A, B, P), SIM_DERIV_OK);
      rows += d->nefc > d->nf;
    }
    sim_deriv_sensitivity_init(w, S);
    for (int s = 0; s < 20; s++) {
      assert_int_equal(sim_deriv_sensitivity_step(m, d, w, S), SIM_DERIV_OK);
    }
    assert_int_equal(sim_rollout_gradient(r1, d, ctrl, sim_loss_tracking, &tracking, &loss, gx,
                                          gu, gp), SIM_DERIV_OK);
    assert_int_equal(sim_rollout_gradient(rk, d, ctrl, sim_loss_tracking, &tracking, &loss, gx,
                                          gu, gp), SIM_DERIV_OK);
    sim_deriv_pool_step(pool, pw, A, B, NULL, NULL);
    assert_int_equal(allocations - before, 0);
  }
  assert_true(rows > 100); /* the slide was at a stop most of the time */
  for (int i = 0; i < 4; i++) {
    sim_deriv_free(&pw[i]);
  }
  sim_pool_free(&pool);
  sim_rollout_free(&r1);
  sim_rollout_free(&rk);
  sim_deriv_free(&w);
  sim_data_free(d);
  free(A);
  sim_model_free(m);
}

/* tendons (fixed; spatial around a sphere and over a pulley) with springs, limits and friction,
 * a motor and a muscle (its length range found at load) on them: every integrator */
static const char tendon_json[] =
    "{ \"name\": \"tendons\", \"solver\": \"newton\",\n"
    "  \"bodies\": [\n"
    "  { \"name\": \"upper\", \"parent\": \"world\", \"joint\": { \"name\": \"j1\", \"type\": \"hinge\",\n"
    "      \"axis\": [0, 1, 0], \"damping\": 0.1, \"limited\": true, \"range\": [-2, 2] },\n"
    "    \"inertial\": { \"mass\": 1, \"com\": [0.2, 0, 0], \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } },\n"
    "  { \"name\": \"lower\", \"parent\": \"upper\", \"pos\": [0.4, 0, 0],\n"
    "    \"joint\": { \"name\": \"j2\", \"type\": \"hinge\", \"axis\": [0, 1, 0], \"damping\": 0.1 },\n"
    "    \"inertial\": { \"mass\": 0.5, \"com\": [0.2, 0, 0], \"inertia\": [0.005, 0.005, 0.005, 0, 0, 0] } } ],\n"
    "  \"sites\": [ { \"name\": \"w\", \"body\": \"world\", \"pos\": [0, 0, 0.2] },\n"
    "    { \"name\": \"u\", \"body\": \"upper\", \"pos\": [0.3, 0, 0.05] },\n"
    "    { \"name\": \"l\", \"body\": \"lower\", \"pos\": [0.2, 0, 0.03] } ],\n"
    "  \"geoms\": [ { \"name\": \"knob\", \"body\": \"upper\", \"type\": \"sphere\", \"size\": [0.04],\n"
    "    \"pos\": [0.4, 0, 0], \"contype\": 0, \"conaffinity\": 0 } ],\n"
    "  \"tendons\": [\n"
    "    { \"name\": \"couple\", \"joints\": [ { \"joint\": \"j1\", \"coef\": 1 }, { \"joint\": \"j2\", \"coef\": -1 } ],\n"
    "      \"stiffness\": 1, \"limited\": true, \"range\": [-0.5, 0.5], \"frictionloss\": 0.02 },\n"
    "    { \"name\": \"cable\", \"path\": [ { \"site\": \"w\" }, { \"site\": \"u\" }, { \"geom\": \"knob\" },\n"
    "      { \"site\": \"l\" }, { \"pulley\": 2 }, { \"site\": \"w\" }, { \"site\": \"l\" } ],\n"
    "      \"damping\": 0.5, \"limited\": true, \"range\": [0.2, 0.5], \"frictionloss\": 0.05 } ],\n"
    "  \"actuators\": [ { \"name\": \"m\", \"tendon\": \"cable\", \"type\": \"motor\" },\n"
    "    { \"name\": \"muscle\", \"tendon\": \"couple\", \"type\": \"muscle\", \"ctrlrange\": [0, 1] } ] }\n";

static void test_tendon_step_allocates_nothing(void **state) {
  (void)state;
  sim_model *m = ts_model(tendon_json);
  sim_data *d = sim_data_new(m);
  assert_non_null(d);
  int rows = 0;
  for (int integrator = 0; integrator <= SIM_INTEGRATOR_RK4; integrator++) {
    m->opt.integrator = (sim_integrator)integrator;
    long before = allocations;
    for (int s = 0; s < 200; s++) {
      d->ctrl[0] = s < 100 ? 20.0 : -20.0;
      d->ctrl[1] = s < 100 ? 1 : 0;
      sim_step(m, d);
      rows += d->nefc;
    }
    assert_int_equal(allocations - before, 0);
  }
  assert_true(rows > 400); /* friction rows always, limits at times */
  ts_sim_free(m, d);
}

TS_MAIN(test_step_allocates_nothing, test_pool_step_allocates_nothing, test_tendon_step_allocates_nothing,
        test_constrained_step_allocates_nothing, test_floating_step_allocates_nothing,
        test_convex_step_allocates_nothing, test_mesh_step_allocates_nothing,
        test_stack_step_allocates_nothing, test_differentiating_allocates_nothing)
