/* tests/sim/test_no_alloc.c: stepping allocates nothing.
 * The test is linked with -Wl,--wrap=malloc,calloc,realloc, so every allocation made by the
 * statically linked sim library passes through the counters below. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "sim/pool.h"
#include "sim/sim.h"

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
  sim_data_free(d);
  sim_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_step_allocates_nothing),
                                     cmocka_unit_test(test_pool_step_allocates_nothing)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
