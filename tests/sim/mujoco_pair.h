/* tests/sim/mujoco_pair.h: an Achilles model and MuJoCo 2.2.2's model of the same robot, side
 * by side, for the solver comparisons (test_newton.c, test_elliptic.c) and the contact
 * benchmark.
 *
 * MuJoCo's model is compiled from our own (mjcf_writer.h), so both have the same bodies,
 * joints, geoms and options; MuJoCo's qpos0 is zero, so the pair copies our initial state
 * across. Per state both evaluate the forward dynamics from the same state and the constraint
 * forces are compared contact by contact (matched by their geoms and positions: the two broad
 * phases may list contacts in different orders), joint rows row by row, q̈ as a whole.
 * Test and benchmark support only: needs libmujoco-dev. */
#ifndef ACHILLES_TESTS_SIM_MUJOCO_PAIR_H
#define ACHILLES_TESTS_SIM_MUJOCO_PAIR_H

#include <mujoco/mujoco.h>

#include "sim/sim.h"

typedef struct mj_pair {
  sim_model *m;
  sim_data *d;
  mjModel *mm;
  mjData *md;
} mj_pair;

/* Loads the JSON text on our side and MuJoCo's model of it; copies our initial state to
 * MuJoCo. Returns 0, or -1 with a message in err. */
int mj_pair_open(mj_pair *p, const char *json, char *err, size_t err_sz);
void mj_pair_close(mj_pair *p);

/* The same solver settings on both sides (runtime options: no reload). */
void mj_pair_options(mj_pair *p, sim_solver_type solver, sim_cone cone, int iterations,
                     double tolerance);

/* Geom g's condim on both sides (MuJoCo's geom numbered by name). */
void mj_pair_condim(mj_pair *p, int g, int condim);

/* MuJoCo's state (qpos, qvel, act, ctrl, warm start, time) into ours. */
void mj_pair_copy_state(mj_pair *p);

/* What a per-state comparison found, accumulated over states. */
typedef struct mj_state_errors {
  int states, contacts, rows; /* compared states, contacts and joint rows */
  int unconverged;            /* states where either solver used every iteration */
  double force;               /* constraint forces, relative to the state's largest */
  double qacc;                /* q̈, relative to the larger of |q̈|, its constraint share, 1 */
} mj_state_errors;

/* Forward dynamics on both sides from the current (equal) state, compared into e. Returns 0,
 * or -1 with a message in err when the two find different contacts or rows. */
int mj_pair_compare_forward(mj_pair *p, mj_state_errors *e, char *err, size_t err_sz);

/* --- the scenes of contact_scenes.h beside MuJoCo ------------------------------------------ */

/* Solver settings of a run: iterations 0 keeps the file's iterations and tolerance; impratio 0
 * keeps the file's; condim1: every geom frictionless (condim 1). */
typedef struct mj_run {
  sim_solver_type solver;
  sim_cone cone;
  int iterations;
  double tolerance;
  double impratio;
  int condim1;
} mj_run;

/* Scene k stepped by MuJoCo for `steps` steps; every `every` steps our data takes MuJoCo's state
 * and both evaluate it (mj_pair_compare_forward). Returns 0 or -1 with a message. */
int mj_scene_states(int k, const mj_run *r, int steps, int every, mj_state_errors *e, char *err,
                    size_t err_sz);

/* What a trajectory comparison found. */
typedef struct mj_trajectory {
  int steps, touching, maxcon; /* steps, steps with contacts, most contacts at once */
  double ours;                 /* max |Δqpos| between ours and MuJoCo's with the same solver */
  double cg_newton;            /* max |Δqpos| between MuJoCo's CG and its Newton, same settings */
} mj_trajectory;

/* Scene k over `seconds` side by side from its start (commands from scene_control), both with
 * r's settings; MuJoCo also with the other solver, for cg_newton. Returns 0 or -1. */
int mj_scene_trajectory(int k, const mj_run *r, double seconds, mj_trajectory *t, char *err,
                        size_t err_sz);

/* max |a − b| over n entries */
double mj_max_diff(const double *a, const double *b, int n);

#endif
