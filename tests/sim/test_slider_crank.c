/* tests/sim/test_slider_crank.c: the slider-crank transmission (sim/actuator_crank.c) against
 * MuJoCo 2.2.2 on its own sample slider_crank/slider_crank.xml (imported by us, compiled by
 * MuJoCo from the same file): a forward crank (slider site on the world), a backward one (the
 * slider site on the child link) and the "broken" one whose rod is too short at the start.
 * Per state along MuJoCo's trajectory under sinusoidal commands: each actuator's length and
 * moment (MuJoCo's actuator_length and actuator_moment), its force, qfrc_actuator and q̈; and
 * 2 s side by side. Closed form: a crank on a fixed slider axis at known angles. Refusals of the
 * JSON block. Without libmujoco-dev or the samples the comparisons skip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/actuator_crank.h"
#include "sim/deriv/deriv.h"
#include "sim/import/import.h"
#include "sim/sim.h"
#include "support/model.h"
#include "support/mujoco.h"
#include "support/skip.h"

#define SAMPLE "/usr/share/mujoco/model/slider_crank/slider_crank.xml"

/* a crank of radius 0.1 about z at the origin, the slider along +x through the origin, rod 0.3:
 * at angle θ the pin is (0.1 cos θ, 0.1 sin θ) and the slider sits at x = 0.1 cos θ −
 * √(0.09 − 0.01 sin² θ) (the root toward −x, MuJoCo's a·v − √det) */
static const char crank_json[] =
    "{ \"bodies\": [ { \"name\": \"crank\", \"parent\": \"world\",\n"
    "    \"joint\": { \"name\": \"c\", \"type\": \"hinge\", \"axis\": [0, 0, 1] },\n"
    "    \"inertial\": { \"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } } ],\n"
    "  \"gravity\": [0, 0, 0],\n"
    "  \"sites\": [ { \"name\": \"pin\", \"body\": \"crank\", \"pos\": [0.1, 0, 0] },\n"
    "    { \"name\": \"slide\", \"body\": \"world\" } ],\n"
    "  \"actuators\": [ { \"name\": \"push\", \"type\": \"motor\", \"gear\": 2,\n"
    "    \"slider_crank\": { \"crank_site\": \"pin\", \"slider_site\": \"slide\",\n"
    "      \"slider_axis\": [1, 0, 0], \"length\": 0.3 } } ] }\n";

static void test_closed_form(void **state) {
  (void)state;
  sim_model *m = ts_model(crank_json);
  sim_data *d = sim_data_new(m);
  double worst = 0;
  for (int k = 0; k < 12; k++) {
    const double th = 0.5 * k, s = sin(th), c = cos(th);
    d->qpos[0] = th;
    d->qvel[0] = 0.7;
    d->ctrl[0] = 1.5;
    sim_forward(m, d);
    const double root = sqrt(0.09 - 0.01 * s * s);
    const double dx = -0.1 * s + 0.01 * s * c / root; /* d(slider x)/dθ */
    /* the motor's force 2·1.5 along the slider: τ = 3·dx/dθ */
    worst = fmax(worst, fabs(d->trn_moment[0] - dx));
    worst = fmax(worst, fabs(d->qfrc_actuator[0] - 3 * dx));
    assert_true(fabs(d->actuator_force[0] - 3) < 1e-15);
  }
  print_message("crank: moment and torque from the closed form within %.2g\n", worst);
  assert_true(worst < 1e-14);
  char err[256];
  assert_null(sim_deriv_new(m, NULL, 0, err, sizeof err));
  assert_non_null(strstr(err, "slider-crank"));
  sim_data_free(d);
  sim_model_free(m);
}

static void test_json_errors(void **state) {
  (void)state;
  static const struct {
    const char *from, *to, *message;
  } cases[] = {
      {"\"type\": \"motor\"", "\"type\": \"dc_motor\"", "a dc_motor drives a joint"},
      {"\"length\": 0.3", "\"length\": 0", "slider_crank.length"},
      {"\"slider_site\": \"slide\"", "\"slider_site\": \"nope\"", "slider_site: unknown site \"nope\""},
      {"\"slider_axis\": [1, 0, 0]", "\"slider_axis\": [2, 0, 0]", "slider_axis"},
      {"\"gear\": 2,", "\"gear\": 2, \"joint\": \"c\",", "one of them"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ts_model_refused_edit(crank_json, cases[i].from, cases[i].to, cases[i].message);
  }
}

#if ACHILLES_HAVE_MUJOCO
static double rel(double a, double b) {
  return fabs(a - b) / fmax(fmax(fabs(a), fabs(b)), 1.0);
}

static void commands(double t, double *ctrl) {
  ctrl[0] = 0.1 * sin(3 * t);
  ctrl[1] = 0.08 * cos(2 * t);
  ctrl[2] = 0.1 * sin(5 * t + 1);
}

static void test_sample_against_mujoco(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  TS_REQUIRE_FILE("libmujoco-samples", SAMPLE);
  char err[1024];
  sim_import_options o = {0, NULL, NULL};
  sim_model *m = sim_import_load_file(SAMPLE, &o, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  mjModel *mm = ts_mj_load(SAMPLE);
  mjData *md = ts_mj_data(mm);
  sim_data *d = sim_data_new(m);
  assert_int_equal(m->nq, mm->nq);
  assert_int_equal(m->nu, 3);
  const int nv = m->nv;
  double length = 0, moment = 0, force = 0, qfrc = 0, qacc = 0;
  int broken = 0;
  for (int s = 0; s < 1000; s++) {
    commands(md->time, md->ctrl);
    if (s % 4 == 0) {
      mj_forward(mm, md);
      memcpy(d->qpos, md->qpos, (size_t)m->nq * sizeof(double));
      memcpy(d->qvel, md->qvel, (size_t)nv * sizeof(double));
      memcpy(d->ctrl, md->ctrl, (size_t)m->nu * sizeof(double));
      memcpy(d->qacc_warmstart, md->qacc_warmstart, (size_t)nv * sizeof(double));
      sim_forward(m, d);
      for (int i = 0; i < m->nu; i++) {
        double L, Ld;
        sim__crank_transmission(m, d, i, &L, &Ld);
        length = fmax(length, fabs(L - md->actuator_length[i]));
        for (int k = 0; k < nv; k++) {
          moment = fmax(moment, fabs(d->trn_moment[i * nv + k] - md->actuator_moment[i * nv + k]));
        }
        force = fmax(force, rel(d->actuator_force[i], md->actuator_force[i]));
      }
      /* the broken crank: states where its rod cannot reach the slider's axis */
      const sim_actuator *b = &m->actuators[2];
      double axis[3], vec[3], av = 0, vv = 0;
      for (int k = 0; k < 3; k++) { /* its slider site is on the world */
        axis[k] = b->slider_axis[k];
        vec[k] = d->site_xpos[3 * b->crank_site + k] - d->site_xpos[3 * b->slider_site + k];
        av += axis[k] * vec[k], vv += vec[k] * vec[k];
      }
      broken += av * av + b->crank_length * b->crank_length - vv <= 0;
      for (int k = 0; k < nv; k++) {
        qfrc = fmax(qfrc, rel(d->qfrc_actuator[k], md->qfrc_actuator[k]));
        qacc = fmax(qacc, rel(d->qacc[k], md->qacc[k]));
      }
    }
    mj_step(mm, md);
  }
  print_message("slider_crank.xml: 250 states beside MuJoCo (the broken crank out of reach in "
                "%d): length %.2g, moment %.2g, force %.2g, qfrc_actuator %.2g, qacc %.2g "
                "(relative, floor 1)\n", broken, length, moment, force, qfrc, qacc);
  assert_true(broken > 0);
  assert_true(length <= 1e-14 && moment <= 1e-12 && force <= 1e-12 && qfrc <= 1e-12);
  assert_true(qacc <= 1e-9);
  /* 2 s side by side from the start, the same commands */
  mj_resetData(mm, md);
  sim_data_reset(m, d);
  double worst = 0, moved = 0;
  for (int s = 0; s < 1000; s++) {
    commands(md->time, md->ctrl);
    memcpy(d->ctrl, md->ctrl, (size_t)m->nu * sizeof(double));
    sim_step(m, d);
    mj_step(mm, md);
    for (int k = 0; k < m->nq; k++) {
      worst = fmax(worst, fabs(d->qpos[k] - md->qpos[k]));
      moved = fmax(moved, fabs(d->qpos[k] - m->qpos0[k]));
    }
  }
  print_message("slider_crank.xml: 2 s beside MuJoCo under sinusoidal commands: max |dq| %.3g "
                "(moved up to %.3g rad)\n", worst, moved);
  assert_true(moved > 0.1);
  assert_true(worst <= 1e-9);
  sim_data_free(d);
  sim_model_free(m);
  ts_mj_free(mm, md);
}
#endif

#if ACHILLES_HAVE_MUJOCO
TS_MAIN(test_closed_form, test_json_errors, test_sample_against_mujoco)
#else
TS_MAIN(test_closed_form, test_json_errors, ts_mujoco_missing)
#endif
