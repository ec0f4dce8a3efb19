/* tests/sim/test_deriv_fd.c: step Jacobians A, B and P (sim/deriv) against central finite
 * differences of sim_step itself (deriv_fd.h), on random trees of up to 30 bodies with hinge,
 * slide, ball and free joints, springs, dampers, armature and every actuator type, at random
 * states, for Euler and RK4 (fd_check_step: an entry passes when |analytic − FD| <= 1e-6·|FD| or
 * <= 1e-9, the derivative near 0). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deriv_fd.h"
#include "random_tree.h"
#include "sim/deriv/deriv.h"

/* a random state: hinges in ±π, slides ±0.3 m, quaternions uniform, free positions ±0.5 m,
 * velocities ±1, winding currents ±1 A, commands inside their ranges */
static void random_state(const sim_model *m, sim_data *d, rt_rng *rng) {
  for (int j = 0; j < m->njnt; j++) {
    const sim_joint *jt = &m->joints[j];
    double *q = d->qpos + jt->qposadr;
    switch (jt->type) {
    case SIM_JOINT_HINGE: q[0] = rt_uniform(rng, -3.1, 3.1); break;
    case SIM_JOINT_SLIDE: q[0] = rt_uniform(rng, -0.3, 0.3); break;
    case SIM_JOINT_FREE:
      for (int k = 0; k < 3; k++) q[k] = rt_uniform(rng, -0.5, 0.5);
      q += 3;
      /* fall through */
    case SIM_JOINT_BALL: {
      double n = 0;
      for (int k = 0; k < 4; k++) {
        q[k] = rt_uniform(rng, -1, 1);
        n += q[k] * q[k];
      }
      for (int k = 0; k < 4; k++) q[k] /= sqrt(n);
      break;
    }
    default: break;
    }
  }
  for (int k = 0; k < m->nv; k++) d->qvel[k] = rt_uniform(rng, -1, 1);
  for (int k = 0; k < m->na; k++) d->act[k] = rt_uniform(rng, -1, 1);
  for (int i = 0; i < m->nu; i++) {
    const double *r = m->actuators[i].ctrlrange;
    double lo = isfinite(r[0]) ? r[0] : -2, hi = isfinite(r[1]) ? r[1] : 2;
    d->ctrl[i] = rt_uniform(rng, lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo));
  }
}

static sim_model *load_tree(uint64_t seed, const rt_spec *spec, char *json, size_t size) {
  char err[512];
  size_t n = rt_tree_json(json, size, seed, spec);
  assert_true(n < size);
  sim_model *m = sim_model_load_string(json, "random tree", err, sizeof err);
  if (!m) fprintf(stderr, "%s\n", err);
  assert_non_null(m);
  return m;
}

static const char all_params[] = "body/*/*,joint/*/*,actuator/*/*";

static void run_trees(const rt_spec *spec, int ntree, uint64_t seed0, sim_integrator integrator) {
  static char json[1 << 18];
  double worst = 0;
  for (int t = 0; t < ntree; t++) {
    sim_model *m = load_tree(seed0 + (uint64_t)t, spec, json, sizeof json);
    m->opt.integrator = integrator;
    m->opt.timestep = 0.002;
    sim_data *d = sim_data_new(m);
    rt_rng rng;
    rt_rng_init(&rng, 1000 + seed0 + (uint64_t)t);
    random_state(m, d, &rng);
    double e = fd_check_step(m, d, all_params, 0);
    if (e > 1) printf("tree %llu (%d bodies, nv %d): worst %.3g\n",
                      (unsigned long long)(seed0 + (uint64_t)t), m->nbody - 1, m->nv, e);
    worst = fmax(worst, e);
    sim_data_free(d);
    sim_model_free(m);
  }
  printf("%s, %d trees of %d bodies: worst entry %.3g of the tolerance\n",
         sim_integrator_name(integrator), ntree, spec->nbody, worst);
  assert_true(worst <= 1);
}

static void test_hinge_slide_trees_euler(void **state) {
  (void)state;
  rt_spec s = {.nbody = 7, .passive = 1, .armature = 1, .gravity = 1, .fixed = 1};
  run_trees(&s, 6, 100, SIM_INTEGRATOR_EULER);
}

static void test_hinge_slide_trees_rk4(void **state) {
  (void)state;
  rt_spec s = {.nbody = 7, .passive = 1, .armature = 1, .gravity = 1, .fixed = 1};
  run_trees(&s, 6, 200, SIM_INTEGRATOR_RK4);
}

static void test_ball_free_actuated_trees_euler(void **state) {
  (void)state;
  rt_spec s = {.nbody = 9, .passive = 1, .armature = 1, .gravity = 1, .fixed = 1,
               .ball = 1, .free_root = 1, .actuators = 1};
  run_trees(&s, 6, 300, SIM_INTEGRATOR_EULER);
}

static void test_ball_free_actuated_trees_rk4(void **state) {
  (void)state;
  rt_spec s = {.nbody = 9, .passive = 1, .armature = 1, .gravity = 1, .fixed = 1,
               .ball = 1, .free_root = 1, .actuators = 1};
  run_trees(&s, 6, 400, SIM_INTEGRATOR_RK4);
}

static void test_thirty_bodies(void **state) {
  (void)state;
  rt_spec s = {.nbody = 30, .passive = 1, .armature = 1, .gravity = 1, .fixed = 1,
               .ball = 1, .free_root = 1, .actuators = 1};
  run_trees(&s, 1, 500, SIM_INTEGRATOR_EULER);
  run_trees(&s, 1, 501, SIM_INTEGRATOR_RK4);
}

/* RK4's rotation stages at speed: a free body and a ball child spinning at several rad/s with
 * a 10 ms step, so that the dexp⁻¹ correction of the stage rates (Θ×k/2, Θ×(Θ×k)/12) and its
 * derivative weigh well above the tolerance */
static void test_spinning_rk4(void **state) {
  (void)state;
  static char json[1 << 16];
  rt_spec s = {.nbody = 3, .passive = 1, .armature = 1, .gravity = 1, .ball = 1, .free_root = 1};
  double worst = 0;
  for (uint64_t seed = 600; seed < 606; seed++) {
    sim_model *m = load_tree(seed, &s, json, sizeof json);
    m->opt.integrator = SIM_INTEGRATOR_RK4;
    m->opt.timestep = 0.01;
    sim_data *d = sim_data_new(m);
    rt_rng rng;
    rt_rng_init(&rng, seed);
    random_state(m, d, &rng);
    for (int k = 0; k < m->nv; k++) d->qvel[k] *= 8;
    worst = fmax(worst, fd_check_step(m, d, all_params, 0));
    sim_data_free(d);
    sim_model_free(m);
  }
  printf("rk4, 10 ms, spinning at up to 8 rad/s: worst entry %.3g of the tolerance\n", worst);
  assert_true(worst <= 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hinge_slide_trees_euler),
      cmocka_unit_test(test_hinge_slide_trees_rk4),
      cmocka_unit_test(test_ball_free_actuated_trees_euler),
      cmocka_unit_test(test_ball_free_actuated_trees_rk4),
      cmocka_unit_test(test_thirty_bodies),
      cmocka_unit_test(test_spinning_rk4),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
