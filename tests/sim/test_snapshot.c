/* tests/sim/test_snapshot.c: restoring a snapshot and stepping on reproduces a run bit for bit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "support/model.h"
#include "support/skip.h"


static int limit_rows; /* steps at a limit, counted by run() */

static void run(const sim_model *m, sim_data *d, int steps, double *trace) {
  for (int s = 0; s < steps; s++) {
    sim_step(m, d);
    memcpy(trace + (size_t)s * (size_t)(m->nq + m->nv), d->qpos, (size_t)m->nq * sizeof(double));
    memcpy(trace + (size_t)s * (size_t)(m->nq + m->nv) + m->nq, d->qvel,
           (size_t)m->nv * sizeof(double));
    limit_rows += d->nefc > d->nf;
  }
}

/* the club arm with narrow stops and friction in every joint (constraint stage on) */
static void constrain(sim_model *m) {
  for (int j = 0; j < m->njnt; j++) {
    if (m->joints[j].dofadr >= 0) {
      m->joints[j].limited = 1;
      m->joints[j].range[0] = -0.25;
      m->joints[j].range[1] = 0.25;
      m->joints[j].frictionloss = 0.02;
    }
  }
  assert_int_equal(sim_constraint_setconst(m), 0);
}


static void check_replay_model(sim_integrator integrator, int constrained) {
  sim_model *m = ts_config("club_arm");
  if (constrained) {
    constrain(m);
  }
  m->opt.integrator = integrator;
  sim_data *d = sim_data_new(m), *other = sim_data_new(m);
  sim_snapshot *snap = sim_snapshot_new(m);
  const int steps = 300;
  size_t n = (size_t)steps * (size_t)(m->nq + m->nv);
  double *first = malloc(n * sizeof(double)), *second = malloc(n * sizeof(double));
  assert_non_null(d);
  assert_non_null(other);
  assert_non_null(snap);
  d->qpos[1] = 0.4;
  d->qvel[0] = 1.5;
  d->qfrc_applied[2] = 0.3;
  run(m, d, 200, first); /* get somewhere interesting first */
  sim_snapshot_save(m, d, snap);
  double t = d->time;
  run(m, d, steps, first);
  /* restore into the same data after it moved on, and into a fresh one */
  sim_snapshot_restore(m, d, snap);
  assert_true(d->time == t);
  run(m, d, steps, second);
  assert_memory_equal(first, second, n * sizeof(double));
  sim_snapshot_restore(m, other, snap);
  run(m, other, steps, second);
  assert_memory_equal(first, second, n * sizeof(double));
  /* proof the comparison can fail: a different applied force gives different bits */
  sim_snapshot_restore(m, other, snap);
  other->qfrc_applied[2] += 1e-12;
  run(m, other, steps, second);
  assert_true(memcmp(first, second, n * sizeof(double)) != 0);
  free(first);
  free(second);
  sim_snapshot_free(snap);
  sim_data_free(d);
  ts_sim_free(m, other);
}

/* with the constraint stage active the warm start is part of the state: restoring it
 * reproduces the run bit for bit too */
static void check_replay(sim_integrator integrator) {
  check_replay_model(integrator, 0);
  limit_rows = 0;
  check_replay_model(integrator, 1);
  assert_true(limit_rows > 100);
}

TS_TEST(test_euler, check_replay(SIM_INTEGRATOR_EULER))
TS_TEST(test_verlet, check_replay(SIM_INTEGRATOR_VERLET))
TS_TEST(test_midpoint, check_replay(SIM_INTEGRATOR_MIDPOINT))
TS_TEST(test_rk4, check_replay(SIM_INTEGRATOR_RK4))

/* a free cube with a ball pendulum, tumbling onto the floor: quaternions in the state, contacts
 * through the free joint; restoring replays bit for bit under every integrator, and a reset
 * returns the free body to its placement */
static void test_floating_replay(void **state) {
  (void)state;
  sim_model *m = ts_model(
      "{ \"bodies\": [ { \"name\": \"cube\", \"parent\": \"world\", \"pos\": [0, 0, 0.3],\n"
      "    \"joint\": { \"name\": \"root\", \"type\": \"free\" },\n"
      "    \"inertial\": { \"mass\": 1, \"inertia\": [0.0067, 0.0067, 0.0067, 0, 0, 0] } },\n"
      "  { \"name\": \"bob\", \"parent\": \"cube\", \"pos\": [0, 0, -0.1],\n"
      "    \"joint\": { \"name\": \"sh\", \"type\": \"ball\", \"initial\": [0.9, 0.3, 0, 0] },\n"
      "    \"inertial\": { \"mass\": 0.1, \"com\": [0, 0, -0.1],\n"
      "                  \"inertia\": [0.0001, 0.0001, 0.0001, 0, 0, 0] } } ],\n"
      "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },\n"
      "    { \"name\": \"box\", \"body\": \"cube\", \"type\": \"box\", \"size\": [0.1, 0.1, 0.1] }"
      " ] }");
  for (int integrator = 0; integrator <= SIM_INTEGRATOR_RK4; integrator++) {
    m->opt.integrator = (sim_integrator)integrator;
    sim_data *d = sim_data_new(m);
    sim_snapshot *snap = sim_snapshot_new(m);
    const int steps = 150;
    size_t n = (size_t)steps * (size_t)(m->nq + m->nv);
    double *first = malloc(n * sizeof(double)), *second = malloc(n * sizeof(double));
    assert_true(d && snap && first && second);
    d->qvel[3] = 2.0, d->qvel[5] = -1.0, d->qvel[7] = 3.0;
    run(m, d, 100, first);
    sim_snapshot_save(m, d, snap);
    run(m, d, steps, first);
    sim_snapshot_restore(m, d, snap);
    run(m, d, steps, second);
    assert_memory_equal(first, second, n * sizeof(double));
    sim_data_reset(m, d);
    assert_true(d->qpos[2] == 0.3 && d->qpos[3] == 1 && d->qvel[3] == 0);
    free(first);
    free(second);
    sim_snapshot_free(snap);
    sim_data_free(d);
  }
  sim_model_free(m);
}

static void test_reset_restores_initial_state(void **state) {
  (void)state;
  sim_model *m = ts_config("two_link_arm");
  sim_data *d = sim_data_new(m);
  d->qfrc_applied[0] = 1;
  ts_steps(m, d, 50);
  sim_data_reset(m, d);
  assert_true(d->time == 0 && d->qpos[0] == 0 && d->qvel[0] == 0 && d->qfrc_applied[0] == 0);
  sim_data_free(d);
  sim_snapshot_free(NULL); /* accepts NULL, like every destructor */
  ts_sim_free(m, NULL);
}

TS_MAIN(test_euler, test_verlet, test_midpoint, test_rk4, test_reset_restores_initial_state,
        test_floating_replay)
