/* tests/sim/test_pool.c: many worlds stepped in parallel (sim/pool.c) are each bit for bit the
 * world stepped alone, whatever the thread count; reset from a snapshot; the observation layout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/pool.h"
#include "support/model.h"
#include "support/skip.h"

#define ARM ACHILLES_SOURCE_DIR "/configs/club_arm.json"
#define NWORLD 37 /* not a multiple of any thread count tried */


/* a different start and command per world, so a mix-up between worlds shows */
static void world_input(const sim_model *m, int w, double *qpos, double *ctrl) {
  for (int i = 0; i < m->nq; i++) {
    qpos[i] = 0.01 * w - 0.2 * i;
  }
  for (int i = 0; i < m->nu; i++) {
    ctrl[i] = sin(0.3 * w + i);
  }
}

static void test_each_world_as_alone(void **state) {
  sim_model *m = *state; /* the club arm */
  const int size = sim_observation_size(m, 0);
  double *expect = calloc((size_t)NWORLD * (size_t)size, sizeof *expect);
  double *got = calloc((size_t)NWORLD * (size_t)size, sizeof *got);
  double *ctrl = calloc((size_t)NWORLD * (size_t)m->nu, sizeof *ctrl);
  assert_non_null(expect);
  assert_non_null(got);
  assert_non_null(ctrl);
  /* the reference: each world alone, 300 steps */
  for (int w = 0; w < NWORLD; w++) {
    sim_data *d = sim_data_new(m);
    world_input(m, w, d->qpos, ctrl + w * m->nu);
    memcpy(d->ctrl, ctrl + w * m->nu, (size_t)m->nu * sizeof *ctrl);
    ts_steps(m, d, 300);
    sim_observe(m, d, 0, expect + w * size);
    sim_data_free(d);
  }
  const int threads[] = {1, 2, 3, 8};
  for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
    char err[256];
    sim_pool *p = sim_pool_new(m, NWORLD, threads[t], err, sizeof err);
    if (!p) {
      fail_msg("%s", err);
    }
    for (int w = 0; w < NWORLD; w++) {
      double unused[16];
      world_input(m, w, sim_pool_data(p, w)->qpos, unused);
    }
    sim_pool_set_ctrl(p, ctrl);
    sim_pool_step(p, 100); /* three batches make 300 steps */
    sim_pool_step(p, 150);
    sim_pool_step(p, 50);
    sim_pool_observe(p, 0, got);
    assert_memory_equal(got, expect, (size_t)NWORLD * (size_t)size * sizeof *got);
    sim_pool_free(&p);
    assert_null(p);
  }
  free(expect);
  free(got);
  free(ctrl);
}

/* a world reset from a snapshot of another replays that world's future exactly */
static void test_reset_from_snapshot(void **state) {
  sim_model *m = *state; /* the club arm */
  char err[256];
  sim_pool *p = sim_pool_new(m, 4, 2, err, sizeof err);
  assert_non_null(p);
  double ctrl[4 * 16] = {0};
  for (int w = 0; w < 4; w++) {
    world_input(m, w, sim_pool_data(p, w)->qpos, ctrl + w * m->nu);
  }
  sim_pool_set_ctrl(p, ctrl);
  sim_pool_step(p, 200);
  sim_snapshot *s = sim_snapshot_new(m);
  sim_snapshot_save(m, sim_pool_data(p, 1), s);
  sim_pool_step(p, 200);
  const int size = sim_observation_size(m, 0);
  double after[64], replay[64];
  sim_observe(m, sim_pool_data(p, 1), 0, after);
  sim_pool_reset(p, 3, s); /* world 3 becomes world 1 at step 200, its command included */
  sim_pool_step(p, 200);
  sim_observe(m, sim_pool_data(p, 3), 0, replay);
  assert_memory_equal(after, replay, (size_t)size * sizeof *after);
  sim_snapshot_free(s);
  sim_pool_free(&p);
}

static void test_observation_layout(void **state) {
  sim_model *m = *state; /* the club arm */
  sim_data *d = sim_data_new(m);
  for (int i = 0; i < m->nq; i++) {
    d->qpos[i] = 10 + i;
  }
  for (int i = 0; i < m->nv; i++) {
    d->qvel[i] = 20 + i;
  }
  double out[64];
  assert_int_equal(sim_observation_size(m, 1), m->nq - 1 + m->nv);
  sim_observe(m, d, 1, out);
  for (int i = 1; i < m->nq; i++) {
    assert_true(out[i - 1] == 10 + i);
  }
  for (int i = 0; i < m->nv; i++) {
    assert_true(out[m->nq - 1 + i] == 20 + i);
  }
  assert_int_equal(sim_observation_size(m, 99), m->nv); /* a skip past qpos skips all of it */
  sim_data_free(d);
}

/* Free-floating robots (free base, ball shoulder, RK4 on the manifold): each world as alone for
 * 1, 2 and 3 threads, a snapshot replays bit for bit, and the observation skips the root's x, y
 * (the first two coordinates of the free joint) as a policy that must not see them would. */
static void test_floating_worlds(void **state) {
  (void)state;
  char err[512];
  sim_model *m = ts_model(
      "{ \"timestep\": 0.002, \"integrator\": \"rk4\", \"bodies\": [\n"
      "  { \"name\": \"base\", \"parent\": \"world\", \"pos\": [0, 0, 1],\n"
      "    \"joint\": { \"name\": \"root\", \"type\": \"free\", \"damping\": 0.01 },\n"
      "    \"inertial\": { \"mass\": 2, \"inertia\": [0.02, 0.03, 0.04, 0, 0, 0] } },\n"
      "  { \"name\": \"arm\", \"parent\": \"base\", \"pos\": [0.1, 0, 0],\n"
      "    \"joint\": { \"name\": \"sh\", \"type\": \"ball\", \"damping\": 0.05 },\n"
      "    \"inertial\": { \"mass\": 0.5, \"com\": [0.2, 0, 0],\n"
      "                  \"inertia\": [0.001, 0.005, 0.005, 0, 0, 0] } } ] }");
  enum { N = 7 };
  const int size = sim_observation_size(m, 2);
  assert_int_equal(size, 7 + 4 - 2 + 6 + 3);
  double expect[N * 32], got[N * 32];
  sim_snapshot *snap = sim_snapshot_new(m);
  for (int w = 0; w < N; w++) {
    sim_data *d = sim_data_new(m);
    for (int i = 0; i < m->nv; i++) {
      d->qvel[i] = 0.3 * sin(w + 2.0 * i);
    }
    ts_steps(m, d, 200);
    sim_observe(m, d, 2, expect + w * size);
    const double *q = d->qpos + 3;
    assert_true(fabs(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] - 1) < 1e-14);
    if (w == 3) {
      sim_snapshot_save(m, d, snap);
    }
    sim_data_free(d);
  }
  for (int t = 1; t <= 3; t++) {
    sim_pool *p = sim_pool_new(m, N, t, err, sizeof err);
    assert_non_null(p);
    for (int w = 0; w < N; w++) {
      for (int i = 0; i < m->nv; i++) {
        sim_pool_data(p, w)->qvel[i] = 0.3 * sin(w + 2.0 * i);
      }
    }
    sim_pool_step(p, 120);
    sim_pool_step(p, 80);
    sim_pool_observe(p, 2, got);
    assert_memory_equal(got, expect, (size_t)N * (size_t)size * sizeof *got);
    sim_pool_reset(p, 0, snap); /* world 0 becomes world 3 at step 200 */
    sim_pool_step(p, 50);
    double a[32], b[32];
    sim_observe(m, sim_pool_data(p, 0), 2, a);
    sim_observe(m, sim_pool_data(p, 3), 2, b);
    assert_memory_equal(a, b, (size_t)size * sizeof *a);
    sim_pool_free(&p);
  }
  sim_snapshot_free(snap);
  sim_model_free(m);
}

static void test_bad_arguments(void **state) {
  sim_model *m = *state; /* the club arm */
  char err[256];
  assert_null(sim_pool_new(m, 0, 1, err, sizeof err));
  assert_non_null(strstr(err, "at least one world"));
  assert_null(sim_pool_new(m, 4, 0, err, sizeof err));
  assert_null(sim_pool_new(m, 4, SIM_POOL_MAX_THREADS + 1, err, sizeof err));
  sim_pool_free(NULL);
  sim_pool *p = sim_pool_new(m, 2, 4, err, sizeof err); /* more threads than worlds */
  assert_non_null(p);
  assert_null(sim_pool_data(p, 2));
  sim_pool_step(p, 3);
  assert_true(sim_pool_data(p, 0)->nstep == 3 && sim_pool_data(p, 1)->nstep == 3);
  sim_pool_free(&p);
}

/* the club arm, shared by the tests that only read it */
static int setup(void **state) {
  *state = ts_model_file(ARM);
  return 0;
}

TS_MAIN_WITH(setup, ts_model_teardown, test_each_world_as_alone, test_reset_from_snapshot,
             test_observation_layout, test_bad_arguments, test_floating_worlds)
