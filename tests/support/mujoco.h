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

#if ACHILLES_HAVE_MUJOCO
#include <mujoco/mujoco.h>

#include "sim/model.h"

/* mj_loadXML(path); fails the test with MuJoCo's message when it cannot. */
mjModel *ts_mj_load(const char *path);
/* The same for MJCF text, through a virtual file system (no file written). */
mjModel *ts_mj_load_xml(const char *xml);
/* MuJoCo's joint of our joint j, by name; fails the test when MuJoCo has none. */
int ts_mj_joint(const sim_model *m, const mjModel *mm, int j);
/* Our qpos (qmap) and dof (vmap) indices to MuJoCo's, joints matched by name (either may be
 * NULL; sized m->nq and m->nv). Inside a ball or free joint the order is the same. */
void ts_mj_maps(const sim_model *m, const mjModel *mm, int *qmap, int *vmap);
#endif

#endif
