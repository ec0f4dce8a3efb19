/* tests/flops/test_flops.c: the counting build computes what the simulator computes.
 *
 * The flop figures of bench_dynamics come from copies of the kinematics and ABA stages compiled
 * with a counting scalar (tests/flops/flop_real.hh). They describe the simulator only if those
 * copies do the same arithmetic: here they must give the same bits as the ordinary build on
 * random trees (hinges, slides, fixed joints, full inertias, gravity in any direction), and a
 * chain's count must grow by the same amount for every link added (the algorithms are O(n)). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "random_tree.h"
#include "sim/sim.h"
#include "tests/flops/flops.h"
#include "support/skip.h"

/* json loaded by the counting build; fails the test with the loader's message */
static sim_model *load(const char *json) {
  char err[512];
  sim_model *m = sim_model_load_string(json, "flops", err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  return m;
}

static sim_model *load_tree(uint64_t seed, int nbody) {
  static char json[1 << 16];
  const rt_spec spec = {.nbody = nbody, .passive = 1, .armature = 1, .gravity = 1, .fixed = 1};
  assert_true(rt_tree_json(json, sizeof json, seed, &spec) < sizeof json);
  return load(json);
}

static void random_state(const sim_model *m, sim_data *d, rt_rng *rng) {
  for (int i = 0; i < m->nq; i++) {
    d->qpos[i] = rt_uniform(rng, -2, 2);
  }
  for (int i = 0; i < m->nv; i++) {
    d->qvel[i] = rt_uniform(rng, -3, 3);
    d->qfrc_applied[i] = rt_uniform(rng, -1, 1);
  }
}

static void test_same_bits_as_the_simulator(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 40; seed++) {
    sim_model *m = load_tree(seed, 1 + (int)(seed % RT_MAX_BODIES));
    sim_data *ours = sim_data_new(m), *counted = sim_data_new(m);
    assert_true(ours && counted);
    rt_rng rng;
    rt_rng_init(&rng, seed * 7919);
    random_state(m, ours, &rng);
    rt_rng_init(&rng, seed * 7919);
    random_state(m, counted, &rng);
    sim_kinematics(m, ours); /* the stages counted, as sim_forward runs them without rows */
    sim_aba(m, ours, 0.0);
    sim_flops counts;
    sim_flops_forward(m, counted, &counts);
    assert_memory_equal(ours->qacc, counted->qacc, (size_t)m->nv * sizeof(double));
    assert_memory_equal(ours->cvel, counted->cvel, (size_t)m->nbody * 6 * sizeof(double));
    assert_memory_equal(ours->xpos, counted->xpos, (size_t)m->nbody * 3 * sizeof(double));
    assert_true(counts.kinematics > 0 && counts.aba > 0);
    sim_data_free(ours);
    sim_data_free(counted);
    sim_model_free(m);
  }
}

/* n hinged links in a chain, each with a full inertia and an offset COM */
static sim_model *load_chain(int n) {
  char json[1 << 15];
  size_t len = (size_t)snprintf(json, sizeof json,
                                "{\"name\":\"chain\",\"gravity\":[0,0,-9.81],\"bodies\":[");
  for (int i = 0; i < n; i++) {
    char parent[32];
    snprintf(parent, sizeof parent, i ? "l%d" : "world", i - 1);
    len += (size_t)snprintf(json + len, sizeof json - len,
                            "%s{\"name\":\"l%d\",\"parent\":\"%s\",\"pos\":[0.2,0.01,0],"
                            "\"joint\":{\"name\":\"j%d\",\"type\":\"hinge\",\"axis\":[0.6,0,0.8]},"
                            "\"inertial\":{\"mass\":1,\"com\":[0.1,0.01,0.02],"
                            "\"inertia\":[0.01,0.012,0.009,1e-4,-1e-4,2e-4]}}",
                            i ? "," : "", i, parent, i);
  }
  snprintf(json + len, sizeof json - len, "]}");
  return load(json);
}

static sim_flops chain_flops(int n) {
  sim_model *m = load_chain(n);
  sim_data *d = sim_data_new(m);
  assert_non_null(d);
  for (int i = 0; i < m->nv; i++) {
    d->qpos[i] = 0.1 * i;
    d->qvel[i] = 0.2;
  }
  sim_flops f;
  sim_flops_forward(m, d, &f);
  sim_data_free(d);
  sim_model_free(m);
  return f;
}

static void test_every_link_costs_the_same(void **state) {
  (void)state;
  const sim_flops f4 = chain_flops(4), f8 = chain_flops(8), f16 = chain_flops(16);
  assert_int_equal(f16.kinematics - f8.kinematics, 2 * (f8.kinematics - f4.kinematics));
  assert_int_equal(f16.aba - f8.aba, 2 * (f8.aba - f4.aba));
  assert_int_equal(f16.kinematics_transcendental, 16 * 2); /* one sin and one cos per hinge */
  printf("per link: kinematics %lld, ABA %lld flops (+ sin and cos)\n",
         (f16.kinematics - f8.kinematics) / 8, (f16.aba - f8.aba) / 8);
}

/* The benchmark's goal (issue 16): at most 600 flops per link for kinematics and ABA of a
 * 7-link chain, and no more than 610 for each link added (738 before the work). */
static void test_cost_per_link(void **state) {
  (void)state;
  const sim_flops f7 = chain_flops(7), f8 = chain_flops(8), f16 = chain_flops(16);
  long long total7 = f7.kinematics + f7.aba;
  long long marginal = (f16.kinematics + f16.aba - f8.kinematics - f8.aba) / 8;
  printf("7 links: %.1f flops per link; %lld per added link\n", (double)total7 / 7, marginal);
  assert_true(total7 <= 7 * 600);
  assert_true(marginal <= 610);
}

TS_MAIN(test_same_bits_as_the_simulator, test_every_link_costs_the_same, test_cost_per_link)
