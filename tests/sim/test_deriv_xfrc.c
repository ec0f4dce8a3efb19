/* tests/sim/test_deriv_xfrc.c: the step Jacobians with forces applied to bodies
 * (sim_data.xfrc_applied, as a test scenario's pushes and payloads put them), against central
 * differences of sim_step itself (tests/sim/deriv_fd.h): a force at a body's centre of mass
 * moves with the body, so its generalized force depends on the position (and on the centre of
 * mass, a parameter), never on the velocity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "deriv_fd.h"
#include "random_tree.h"
#include "sim/sim.h"
#include "support/skip.h"

/* hinges in ±π, slides ±0.3 m, quaternions uniform, velocities ±1, forces ±5 N and torques
 * ±0.5 N·m on every body */
static void random_state(const sim_model *m, sim_data *d, rt_rng *rng) {
  for (int j = 0; j < m->njnt; j++) {
    const sim_joint *jt = &m->joints[j];
    double *q = d->qpos + jt->qposadr;
    if (jt->type == SIM_JOINT_HINGE) {
      q[0] = rt_uniform(rng, -3.1, 3.1);
    } else if (jt->type == SIM_JOINT_SLIDE) {
      q[0] = rt_uniform(rng, -0.3, 0.3);
    } else if (jt->type == SIM_JOINT_BALL || jt->type == SIM_JOINT_FREE) {
      q += jt->type == SIM_JOINT_FREE ? 3 : 0;
      double n = 0;
      for (int k = 0; k < 4; k++) {
        q[k] = rt_uniform(rng, -1, 1);
        n += q[k] * q[k];
      }
      for (int k = 0; k < 4; k++) {
        q[k] /= sqrt(n);
      }
    }
  }
  for (int k = 0; k < m->nv; k++) {
    d->qvel[k] = rt_uniform(rng, -1, 1);
  }
  for (int b = 1; b < m->nbody; b++) {
    for (int k = 0; k < 6; k++) {
      d->xfrc_applied[6 * b + k] = k < 3 ? rt_uniform(rng, -5, 5) : rt_uniform(rng, -0.5, 0.5);
    }
  }
}

static double run_trees(const rt_spec *spec, int ntree, uint64_t seed0, sim_integrator integrator) {
  static char json[1 << 18];
  double worst = 0;
  for (int t = 0; t < ntree; t++) {
    char err[512];
    assert_true(rt_tree_json(json, sizeof json, seed0 + (uint64_t)t, spec) < sizeof json);
    sim_model *m = sim_model_load_string(json, "random tree", err, sizeof err);
    if (!m) {
      fail_msg("%s", err);
    }
    m->opt.integrator = integrator;
    m->opt.timestep = 0.002;
    sim_data *d = sim_data_new(m);
    rt_rng rng;
    rt_rng_init(&rng, 7000 + seed0 + (uint64_t)t);
    random_state(m, d, &rng);
    /* the parameters the forces touch: the centres of mass (and the masses, which they do not) */
    worst = fmax(worst, fd_check_step(m, d,
                                      "body/*/com_x,body/*/com_y,body/*/com_z,body/*/mass", 0));
    sim_data_free(d);
    sim_model_free(m);
  }
  printf("%s, %d trees of %d bodies, every body pushed: worst entry %.3g of the tolerance\n",
         sim_integrator_name(integrator), ntree, spec->nbody, worst);
  return worst;
}

static void test_hinge_slide_trees(void **state) {
  (void)state;
  const rt_spec s = {.nbody = 7, .passive = 1, .gravity = 1, .fixed = 1};
  assert_true(run_trees(&s, 5, 900, SIM_INTEGRATOR_EULER) <= 1);
  assert_true(run_trees(&s, 5, 910, SIM_INTEGRATOR_RK4) <= 1);
}

static void test_ball_free_trees(void **state) {
  (void)state;
  const rt_spec s = {.nbody = 8, .passive = 1, .gravity = 1, .fixed = 1, .ball = 1,
                     .free_root = 1};
  assert_true(run_trees(&s, 5, 920, SIM_INTEGRATOR_EULER) <= 1);
  assert_true(run_trees(&s, 5, 930, SIM_INTEGRATOR_RK4) <= 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hinge_slide_trees),
      cmocka_unit_test(test_ball_free_trees),
  };
  return ts_run(tests);
}
