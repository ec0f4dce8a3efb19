/* tests/sim/test_fluid.c: a body in a viscous medium (sim/fluid.c, MuJoCo 2.2.2's inertia-box
 * model with opt.viscosity).
 *  - Closed form: a free solid sphere (mass m, radius r: its inertia box's side r·√2.4) moving
 *    at v and spinning at ω in still air of viscosity μ, no gravity: m·v̇ = −3π·d·μ·(v − w) and
 *    I·ω̇ = −π·d³·μ·ω, d = r·√2.4; with wind w the drag is on the velocity relative to it.
 *  - MuJoCo 2.2.2 loading the same MJCF: a hinge–slide–ball chain with boxes and capsules and
 *    a free box under viscosity and wind, qfrc_passive per state at random states and 2 s of
 *    motion (Euler, RK4) side by side.
 *  - The JSON keys: "viscosity" ≥ 0, "wind" three numbers, refused with their path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "import_fixture.h"
#include "sim/deriv/deriv.h"
#include "sim/sim.h"
#include "support/model.h"
#include "support/mujoco.h"
#include "support/numbers.h"
#include "support/skip.h"
#include "support/tmp.h"

#define PI 3.141592653589793

static const char sphere_json[] =
    "{\"name\": \"ball\", \"timestep\": 0.001, \"gravity\": [0, 0, 0], \"viscosity\": 0.5,"
    " \"wind\": [1, -2, 0.5],"
    " \"bodies\": [{\"name\": \"b\", \"parent\": \"world\", \"joint\": {\"name\": \"f\","
    " \"type\": \"free\"}, \"inertial\": {\"mass\": 2, \"com\": [0, 0, 0],"
    " \"inertia\": [0.008, 0.008, 0.008, 0, 0, 0]}}]}"; /* 2/5·m·r², r = 0.1 */

static void test_sphere_closed_form(void **state) {
  (void)state;
  char err[512];
  sim_model *m = sim_model_load_string(sphere_json, "ball.json", err, sizeof err);
  assert_non_null(m);
  sim_data *d = sim_data_new(m);
  const double v[3] = {0.3, 0.2, -0.4}, w[3] = {2, -1, 0.5}, wind[3] = {1, -2, 0.5};
  for (int k = 0; k < 3; k++) {
    d->qvel[k] = v[k], d->qvel[3 + k] = w[k]; /* linear (world), angular (body = world here) */
  }
  sim_forward(m, d);
  const double diam = 0.1 * sqrt(2.4), mu = 0.5, mass = 2, inertia = 0.008;
  double worst = 0;
  for (int k = 0; k < 3; k++) {
    const double a = -3 * PI * diam * mu * (v[k] - wind[k]) / mass;
    const double alpha = -PI * diam * diam * diam * mu * w[k] / inertia;
    worst = fmax(worst, fabs(d->qacc[k] - a) / fabs(a));
    worst = fmax(worst, fabs(d->qacc[3 + k] - alpha) / fabs(alpha));
  }
  char derr[256];
  assert_null(sim_deriv_new(m, NULL, 0, derr, sizeof derr)); /* the drag is not differentiated */
  assert_non_null(strstr(derr, "viscosity"));
  print_message("sphere in a viscous medium: q̈ from the closed form within %.2g relative "
                "(d = %.6g m)\n", worst, m->bodies[1].fluid_diam);
  assert_true(fabs(m->bodies[1].fluid_diam - diam) < 1e-15);
  assert_true(worst < 1e-12);
  sim_data_free(d);
  sim_model_free(m);
}

static void test_json_refusals(void **state) {
  (void)state;
  static const struct {
    const char *from, *to, *message;
  } cases[] = {
      {"\"viscosity\": 0.5", "\"viscosity\": -0.5", "viscosity"},
      {"\"wind\": [1, -2, 0.5]", "\"wind\": [1, -2]", "wind"},
      {"\"wind\": [1, -2, 0.5]", "\"wind\": \"east\"", "wind"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ts_model_refused_edit(sphere_json, cases[i].from, cases[i].to, cases[i].message);
  }
}

#if ACHILLES_HAVE_MUJOCO
static const char chain_mjcf[] =
    "<mujoco><option viscosity=\"%g\" wind=\"0.5 -1 0.3\" integrator=\"%s\"/><worldbody>"
    "<body name=\"a\" pos=\"0 0 1\"><joint name=\"h\" type=\"hinge\" axis=\"0 1 0\"/>"
    "<geom type=\"box\" size=\"0.1 0.05 0.2\" pos=\"0 0 -0.2\"/>"
    "<body name=\"b\" pos=\"0 0 -0.4\"><joint name=\"s\" type=\"slide\" axis=\"1 0 0\"/>"
    "<geom type=\"capsule\" size=\"0.04 0.1\" pos=\"0.05 0 -0.1\" euler=\"30 0 10\"/>"
    "<body name=\"c\" pos=\"0 0 -0.3\"><joint name=\"ball\" type=\"ball\"/>"
    "<geom type=\"box\" size=\"0.05 0.08 0.12\" pos=\"0 0.02 -0.1\" euler=\"10 20 30\"/>"
    "<geom type=\"sphere\" size=\"0.05\" pos=\"0.1 0 0\"/></body></body></body>"
    "<body name=\"free\" pos=\"1 0 1\"><freejoint/>"
    "<geom type=\"box\" size=\"0.2 0.1 0.05\" euler=\"5 10 15\"/></body>"
    "</worldbody></mujoco>";

/* The chain in both engines: the largest qpos difference (relative to max(1, |q|)) over 2 s
 * from rest, and, at random states, the largest qfrc_passive difference and magnitude. */
static void run_chain(double viscosity, const char *integrator, double out[3]) {
  char xml[4096];
  snprintf(xml, sizeof xml, chain_mjcf, viscosity, integrator);
  reports r;
  sim_model *m = import_text("fluid.xml", xml, &r);
  mjModel *mm = ts_mj_load_xml(xml);
  mjData *md = ts_mj_data(mm);
  sim_data *d = sim_data_new(m);
  assert_int_equal(m->nv, mm->nv);
  assert_true(m->opt.viscosity == viscosity); /* the MJCF's option, through the JSON */
  assert_true(m->opt.wind[0] == 0.5 && m->opt.wind[1] == -1 && m->opt.wind[2] == 0.3);
  uint64_t s = 0x9e3779b97f4a7c15ull;
  out[0] = out[1] = out[2] = 0;
  for (int k = 0; k < 200; k++) {
    for (int i = 0; i < mm->nv; i++) {
      md->qvel[i] = ts_uniform(&s, -3, 3);
    }
    md->qpos[0] = ts_uniform(&s, -1, 1), md->qpos[1] = ts_uniform(&s, -0.2, 0.2);
    mj_forward(mm, md);
    memcpy(d->qpos, md->qpos, sizeof(double) * (size_t)m->nq);
    memcpy(d->qvel, md->qvel, sizeof(double) * (size_t)m->nv);
    sim_forward(m, d);
    for (int i = 0; i < m->nv; i++) {
      out[1] = fmax(out[1], fabs(d->qfrc_passive[i] - md->qfrc_passive[i]));
      out[2] = fmax(out[2], fabs(md->qfrc_passive[i]));
    }
  }
  mj_resetData(mm, md);
  sim_data_reset(m, d);
  memcpy(d->qpos, md->qpos, sizeof(double) * (size_t)m->nq);
  for (int step = 0; step < 1000; step++) {
    mj_step(mm, md);
    sim_step(m, d);
    for (int i = 0; i < m->nq; i++) {
      out[0] = fmax(out[0], fabs(d->qpos[i] - md->qpos[i]) / fmax(1, fabs(md->qpos[i])));
    }
  }
  sim_data_free(d);
  sim_model_free(m);
  ts_mj_free(mm, md);
}

/* per state the same drag to rounding; over 2 s as close as the same chain without a medium
 * (a three-link chain with a ball joint carries rounding forward: ~1e-9 over 2 s) */
static void test_against_mujoco(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  const char *const integrators[] = {"Euler", "RK4"};
  for (int g = 0; g < 2; g++) {
    double with[3], without[3];
    run_chain(0.8, integrators[g], with);
    run_chain(0, integrators[g], without);
    print_message("%s: qfrc_passive within %.2g N of MuJoCo's (largest %.3g) at 200 states; "
                  "2 s under the wind within %.2g of MuJoCo's qpos (relative to max(1, |q|); "
                  "without the medium %.2g)\n", integrators[g], with[1], with[2], with[0],
                  without[0]);
    assert_true(with[2] > 1); /* the medium acts */
    assert_true(with[1] <= 1e-13 * with[2]);
    assert_true(with[0] <= fmax(1e-10, 10 * without[0]));
  }
}
#else
TS_TEST(test_against_mujoco, TS_REQUIRE_MUJOCO())
#endif

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_sphere_closed_form, test_json_refusals,
             test_against_mujoco)
