/* tests/support/mujoco.h: MuJoCo (libmujoco-dev, a test-only reference) loaded beside our model.
 *
 *   TS_REQUIRE_MUJOCO();                  first line of a comparison: skipped without MuJoCo
 *   mjModel *mm = ts_mj_load(path);       the same file through MuJoCo's own compiler
 *   int vmap[NV];
 *   ts_mj_dof_map(m, mm, vmap);           our dof k is MuJoCo's dof vmap[k]
 *
 * A test links achilles_test_mujoco, which exists only where libmujoco-dev was found and defines
 * ACHILLES_HAVE_MUJOCO=1 for it; elsewhere ACHILLES_HAVE_MUJOCO is 0, only TS_REQUIRE_MUJOCO is
 * declared, and a comparison reports itself skipped (a failure under CI=true, skip.h).
 * Writing our model as MJCF is tests/sim/mjcf_writer.h's job. */
#ifndef ACHILLES_TESTS_SUPPORT_MUJOCO_H
#define ACHILLES_TESTS_SUPPORT_MUJOCO_H

#include "support/skip.h"

#if !defined(ACHILLES_HAVE_MUJOCO)
#define ACHILLES_HAVE_MUJOCO 0
#endif

/* In a test: skipped (exit 77) where MuJoCo is missing or ACHILLES_TEST_HIDE names
 * libmujoco-dev; a failure under CI=true. */
#define TS_REQUIRE_MUJOCO() TS_REQUIRE("libmujoco-dev", ACHILLES_HAVE_MUJOCO)

/* Where MuJoCo is missing, a suite's main lists this one test in place of its comparisons: it
 * says so and skips (a failure under CI=true).
 *   #if ACHILLES_HAVE_MUJOCO
 *   TS_MAIN(test_closed_form, test_against_mujoco, test_trajectory_against_mujoco)
 *   #else
 *   TS_MAIN(test_closed_form, ts_mujoco_missing)
 *   #endif */
#if !ACHILLES_HAVE_MUJOCO
static inline void ts_mujoco_missing(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
}
#endif

/* The main of a suite that is all comparisons with MuJoCo, from its list of tests (with group
 * fixtures: TS_MUJOCO_MAIN_WITH); where MuJoCo is missing (the tests are not compiled) or
 * hidden, one test that says so and skips (a failure under CI=true). */
#define TS_MUJOCO_MAIN(...) TS_MUJOCO_MAIN_WITH(NULL, NULL, __VA_ARGS__)
#if ACHILLES_HAVE_MUJOCO
#define TS_MUJOCO_MAIN_WITH(setup, teardown, ...)                                                  \
  int main(void) {                                                                                 \
    if (ts_hidden("libmujoco-dev")) {                                                              \
      return ts_run_missing("libmujoco-dev");                                                      \
    }                                                                                              \
    const struct CMUnitTest ts_tests_[] = {TS_EACH(cmocka_unit_test, __VA_ARGS__)};                \
    return ts_run_with(ts_tests_, setup, teardown);                                                \
  }
#else
#define TS_MUJOCO_MAIN_WITH(setup, teardown, ...)                                                  \
  int main(void) {                                                                                 \
    return ts_run_missing("libmujoco-dev");                                                        \
  }
#endif

#if ACHILLES_HAVE_MUJOCO
#include <mujoco/mujoco.h>

#include "sim/model.h"

/* mj_loadXML(path); fails the test with MuJoCo's message when it cannot. */
mjModel *ts_mj_load(const char *path);
/* The same for MJCF text, through a virtual file system (no file written). */
mjModel *ts_mj_load_xml(const char *xml);
/* Our model written as MJCF (tests/sim/mjcf_writer.h: the test compiles mjcf_writer.c in) and
 * compiled by MuJoCo; fails the test with the message when it cannot. */
mjModel *ts_mj_compile(const sim_model *m);
/* mj_makeData(mm), which must not fail */
mjData *ts_mj_data(const mjModel *mm);
/* mj_deleteData(md), then mj_deleteModel(mm): MuJoCo's side of a comparison, at its end. */
void ts_mj_free(mjModel *mm, mjData *md);
/* MuJoCo's joint of our joint j, by name; fails the test when MuJoCo has none. */
int ts_mj_joint(const sim_model *m, const mjModel *mm, int j);
/* Our qpos (qmap) and dof (vmap) indices to MuJoCo's, joints matched by name (either may be
 * NULL; sized m->nq and m->nv). Inside a ball or free joint the order is the same. */
void ts_mj_maps(const sim_model *m, const mjModel *mm, int *qmap, int *vmap);
#endif

#endif
