/* tests/hil/runtime/test_hooks.c: the loop's hook (hil_runtime_set_hook), which hil/scenario
 * uses to act at simulated times and to read the state, and the swap of a changed model
 * (hil_runtime_swap_model). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hil/error.h"
#include "hil/runtime/runtime.h"
#include "sim/import/import.h"
#include "support/runtime.h"
#include "support/skip.h"

#define CLUB ACHILLES_SOURCE_DIR "/configs/club_arm.json"

static hil_runtime *make(hil_mode mode, double duration_s) {
  return ts_runtime(CLUB, mode, duration_s);
}

static sim_model *load_club(void) {
  char err[512];
  sim_model *m = sim_import_load_file(CLUB, NULL, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  return m;
}

typedef struct counter {
  int before, after;
  double last_before_t, first_after_t;
  int times_ok;        /* before_step saw t = steps·h every time */
  double push_at;      /* a push on the forearm from this time on (0: none) */
  sim_model *swap_to;  /* swapped in at swap_at */
  double swap_at;
  int released;        /* lockstep_release answers this */
  int releases_asked;
} counter;

static void before_step(void *user, hil_runtime *rt, sim_data *d) {
  counter *c = user;
  const double h = hil_runtime_model(rt)->opt.timestep;
  c->times_ok &= fabs(d->time - (double)hil_runtime_steps(rt) * h) < 1e-9;
  c->last_before_t = d->time;
  c->before++;
  if (c->push_at > 0 && d->time >= c->push_at - 0.5 * h) {
    d->xfrc_applied[6 * sim_model_body(hil_runtime_model(rt), "forearm") + 2] = -20.0;
  }
  if (c->swap_to && d->time >= c->swap_at - 0.5 * h) {
    char err[256];
    assert_int_equal(hil_runtime_swap_model(rt, c->swap_to, err, sizeof err), HIL_OK);
    c->swap_to = NULL;
  }
}

static void after_sense(void *user, hil_runtime *rt) {
  counter *c = user;
  if (c->after++ == 0) {
    c->first_after_t = hil_runtime_data(rt)->time;
  }
}

static int release(void *user, hil_runtime *rt) {
  (void)rt;
  counter *c = user;
  c->releases_asked++;
  return c->released;
}

static void install(hil_runtime *rt, counter *c) {
  const hil_hook hook = {before_step, after_sense, release, c};
  hil_runtime_set_hook(rt, &hook);
}

/* fast mode, 0.1 s: 100 steps, before_step before each at t = k·h, after_sense at t = 0 and
 * after each step */
static void test_called_per_step(void **state) {
  (void)state;
  hil_runtime *rt = make(HIL_MODE_FAST, 0.1);
  counter c = {.times_ok = 1};
  install(rt, &c);
  assert_int_equal(hil_runtime_run(rt), HIL_OK);
  assert_int_equal(c.before, 100);
  assert_int_equal(c.after, 101);
  assert_true(c.times_ok);
  assert_true(c.first_after_t == 0.0);
  assert_true(fabs(c.last_before_t - 0.099) < 1e-9);
  assert_int_equal(c.releases_asked, 0); /* lockstep only */
  hil_runtime_destroy(&rt);
}

/* lockstep with nobody commanding: released by the hook, the run goes to its end (without it,
 * the loop would wait for commands forever) */
static void test_lockstep_release(void **state) {
  (void)state;
  hil_runtime *rt = make(HIL_MODE_LOCKSTEP, 0.05);
  counter c = {.times_ok = 1, .released = 1};
  install(rt, &c);
  assert_int_equal(hil_runtime_run(rt), HIL_OK);
  assert_int_equal(c.before, 50);
  assert_true(c.releases_asked >= 50);
  hil_runtime_destroy(&rt);
}

/* final joint positions of a 0.3 s fast run with the given counter */
static void run_final(counter *c, double *q, int nq) {
  hil_runtime *rt = make(HIL_MODE_FAST, 0.3);
  install(rt, c);
  assert_int_equal(hil_runtime_run(rt), HIL_OK);
  memcpy(q, hil_runtime_data(rt)->qpos, (size_t)nq * sizeof *q);
  hil_runtime_destroy(&rt);
}

/* a push written into xfrc_applied by the hook moves the arm; without it the run is the plain
 * one, bit for bit, however often it is repeated */
static void test_push_through_the_hook(void **state) {
  (void)state;
  double plain[8], again[8], pushed[8];
  counter a = {.times_ok = 1}, b = {.times_ok = 1}, p = {.times_ok = 1, .push_at = 0.1};
  run_final(&a, plain, 4);
  run_final(&b, again, 4);
  run_final(&p, pushed, 4);
  assert_memory_equal(plain, again, sizeof plain[0] * 4);
  assert_true(fabs(pushed[2] - plain[2]) > 1e-3 || fabs(pushed[1] - plain[1]) > 1e-3);
}

/* the loop with a swap at 0.15 s to a model whose joints have 1.5 times the friction and
 * damping, against the same physics stepped by hand on the two models: bit for bit; a pointer
 * to the first model stays readable after the swap */
static void test_swap_matches_by_hand(void **state) {
  (void)state;
  sim_model *changed = load_club();
  for (int j = 0; j < changed->njnt; j++) {
    changed->joints[j].frictionloss *= 1.5;
    changed->joints[j].damping *= 1.5;
  }
  hil_runtime *rt = make(HIL_MODE_FAST, 0.3);
  const sim_model *first = hil_runtime_model(rt);
  counter c = {.times_ok = 1, .swap_to = changed, .swap_at = 0.15};
  install(rt, &c);
  assert_int_equal(hil_runtime_run(rt), HIL_OK);
  assert_true(hil_runtime_model(rt) != first);
  assert_string_equal(first->name, "club_arm"); /* still alive: freed with the runtime */
  assert_true(hil_runtime_model(rt)->joints[1].frictionloss == 1.5 * first->joints[1].frictionloss);

  sim_model *m1 = load_club(), *m2 = load_club();
  for (int j = 0; j < m2->njnt; j++) {
    m2->joints[j].frictionloss *= 1.5;
    m2->joints[j].damping *= 1.5;
  }
  m1->opt.timestep = m2->opt.timestep = hil_runtime_model(rt)->opt.timestep;
  sim_data *d = sim_data_new(m1);
  for (int k = 0; k < 300; k++) { /* no commands: the watchdog's zero every step */
    const sim_model *m = k < 150 ? m1 : m2;
    sim_step(m, d);
    sim_forward(m, d);
  }
  assert_memory_equal(d->qpos, hil_runtime_data(rt)->qpos, (size_t)m1->nq * sizeof(double));
  assert_memory_equal(d->qvel, hil_runtime_data(rt)->qvel, (size_t)m1->nv * sizeof(double));
  sim_data_free(d);
  sim_model_free(m1);
  sim_model_free(m2);
  hil_runtime_destroy(&rt);
}

/* before the run a swapped model's initial positions count */
static void test_swap_before_run_resets(void **state) {
  (void)state;
  sim_model *m = load_club();
  m->qpos0[1] = 0.7;
  hil_runtime *rt = make(HIL_MODE_FAST, 0.01);
  char err[256];
  assert_int_equal(hil_runtime_swap_model(rt, m, err, sizeof err), HIL_OK);
  assert_true(hil_runtime_data(rt)->qpos[1] == 0.7);
  hil_runtime_destroy(&rt);
}

/* another robot is refused (and freed: the sanitizer build sees a leak otherwise), and so is a
 * sixteenth model */
static void test_swap_refused(void **state) {
  (void)state;
  char err[256], path[] = ACHILLES_SOURCE_DIR "/configs/one_link_arm.json";
  const sim_import_options import = {0, NULL, NULL};
  hil_runtime *rt = make(HIL_MODE_FAST, 0.01);
  sim_model *other = sim_import_load_file(path, &import, err, sizeof err);
  assert_non_null(other);
  assert_int_equal(hil_runtime_swap_model(rt, other, err, sizeof err), HIL_EINVAL);
  assert_non_null(strstr(err, "layout"));
  for (int i = 1; i < HIL_MAX_MODELS; i++) {
    assert_int_equal(hil_runtime_swap_model(rt, load_club(), err, sizeof err), HIL_OK);
  }
  assert_int_equal(hil_runtime_swap_model(rt, load_club(), err, sizeof err), HIL_EINVAL);
  assert_non_null(strstr(err, "too many"));
  hil_runtime_destroy(&rt);
}

TS_MAIN(test_called_per_step, test_lockstep_release, test_push_through_the_hook,
        test_swap_matches_by_hand, test_swap_before_run_resets, test_swap_refused)
