/* tools/bench/bench_contacts.c: the step with active constraints beside MuJoCo's mj_step on the
 * same scenes, in one process (not a test: it prints figures and ratios).
 *
 * Scenes: N spheres on vertical slides resting on a plane (N contacts, N = 0, 4, 16, 64), an
 * arm of 8 hinges all held against their stops with friction in every joint (8 limit and 8
 * friction rows), 16 spheres resting on 16 blocks fixed to the world (sphere–box pairs), the
 * shipped club arm (configs/club_arm.json) lying on its table, and 8 free boxes stacked on the
 * plane (box–box, face on face). MuJoCo gets our model written as MJCF (tests/sim/mjcf_writer.c)
 * and the same options at run time, under three settings: Newton with the pyramidal cone
 * (MuJoCo's defaults: 100 iterations, tolerance 1e-8, both converge), Newton with the elliptic
 * cone, and CG with the pyramidal cone at 20 iterations; Euler at 1 ms. Each scene is settled
 * for 1000 steps, then timed; the solver iterations per step are the timed steps' mean. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mujoco/mujoco.h>

#include "mjcf_writer.h"
#include "sim/sim.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static char json[1 << 17];

/* n spheres of radius 0.05 on slides along z, 0.2 m apart in a row, on the plane z = 0, or
 * (on_boxes) each on a block 0.1 m high standing on the plane (fixed to the world, as the plane:
 * blocks and plane never touch) */
static void spheres(int n, int on_boxes) {
  size_t j = 0;
  const double top = on_boxes ? 0.1 : 0.0;
  j += (size_t)snprintf(json + j, sizeof json - j,
                        "{\"name\": \"spheres\", \"timestep\": 0.001, \"max_contacts\": %d,"
                        " \"solver_iterations\": 20, \"bodies\": [", n > 0 ? n : 1);
  for (int i = 0; i < n; i++) {
    j += (size_t)snprintf(json + j, sizeof json - j,
                          "%s{\"name\": \"b%d\", \"parent\": \"world\", \"pos\": [%g, 0, %g],"
                          " \"joint\": {\"name\": \"z%d\", \"type\": \"slide\", \"axis\": [0, 0, 1]},"
                          " \"inertial\": {\"mass\": 0.1, \"inertia\": [1e-4, 1e-4, 1e-4, 0, 0, 0]}}",
                          i ? "," : "", i, 0.2 * i, top + 0.049, i);
  }
  if (n == 0) { /* one free-standing body so that both engines have something to step */
    j += (size_t)snprintf(json + j, sizeof json - j,
                          "{\"name\": \"b\", \"parent\": \"world\", \"joint\": {\"name\": \"z\","
                          " \"type\": \"slide\", \"axis\": [0, 0, 1]}, \"inertial\": {\"mass\": 0.1,"
                          " \"inertia\": [1e-4, 1e-4, 1e-4, 0, 0, 0]}}");
  }
  j += (size_t)snprintf(json + j, sizeof json - j, "], \"geoms\": [{\"name\": \"floor\","
                                                   " \"body\": \"world\", \"type\": \"plane\"}");
  for (int i = 0; i < n; i++) {
    j += (size_t)snprintf(json + j, sizeof json - j,
                          ", {\"name\": \"s%d\", \"body\": \"b%d\", \"type\": \"sphere\","
                          " \"size\": [0.05]}", i, i);
  }
  for (int i = 0; on_boxes && i < n; i++) {
    j += (size_t)snprintf(json + j, sizeof json - j,
                          ", {\"name\": \"k%d\", \"body\": \"world\", \"type\": \"box\","
                          " \"size\": [0.08, 0.08, 0.05], \"pos\": [%g, 0.01, 0.05]}", i, 0.2 * i);
  }
  snprintf(json + j, sizeof json - j, "]}");
}

/* a chain of 8 hinges about y under gravity, each limited to [-0.1, 0.1] and with friction:
 * gravity holds every joint against a stop */
static void limited_chain(void) {
  size_t j = 0;
  j += (size_t)snprintf(json + j, sizeof json - j,
                        "{\"name\": \"chain\", \"timestep\": 0.001, \"solver_iterations\": 20,"
                        " \"bodies\": [");
  for (int i = 0; i < 8; i++) {
    char parent[16];
    snprintf(parent, sizeof parent, i ? "l%d" : "world", i - 1);
    j += (size_t)snprintf(json + j, sizeof json - j,
                          "%s{\"name\": \"l%d\", \"parent\": \"%s\", \"pos\": [%g, 0, 0],"
                          " \"joint\": {\"name\": \"h%d\", \"type\": \"hinge\", \"axis\": [0, 1, 0],"
                          " \"limited\": true, \"range\": [-0.1, 0.1], \"frictionloss\": 0.01},"
                          " \"inertial\": {\"mass\": 0.2, \"com\": [0.05, 0, 0],"
                          " \"inertia\": [1e-4, 2e-4, 2e-4, 0, 0, 0]}}",
                          i ? "," : "", i, parent, i ? 0.1 : 0.0, i);
  }
  snprintf(json + j, sizeof json - j, "]}");
}

/* 8 free boxes of 0.1 m stacked on the plane, each turned a little about z from the one below
 * and offset a few mm (they settle as a tower: four plane or box–box contacts per face) */
static void stacked_boxes(void) {
  size_t j = 0;
  j += (size_t)snprintf(json + j, sizeof json - j,
                        "{\"name\": \"stack\", \"timestep\": 0.001, \"bodies\": [");
  for (int i = 0; i < 8; i++) {
    const double a = 0.05 * i, z = 0.05 + 0.1 * i - 0.0005 * (i + 1);
    j += (size_t)snprintf(json + j, sizeof json - j,
                          "%s{\"name\": \"b%d\", \"parent\": \"world\", \"pos\": [%g, %g, %.17g],"
                          " \"quat\": [%.17g, 0, 0, %.17g], \"joint\": {\"name\": \"f%d\","
                          " \"type\": \"free\"}, \"inertial\": {\"mass\": 0.5,"
                          " \"inertia\": [8.3e-4, 8.3e-4, 8.3e-4, 0, 0, 0]}}",
                          i ? "," : "", i, 0.003 * (i % 3), -0.002 * (i % 2), z, cos(a / 2),
                          sin(a / 2), i);
  }
  j += (size_t)snprintf(json + j, sizeof json - j, "], \"geoms\": [{\"name\": \"floor\","
                                                   " \"body\": \"world\", \"type\": \"plane\"}");
  for (int i = 0; i < 8; i++) {
    j += (size_t)snprintf(json + j, sizeof json - j,
                          ", {\"name\": \"g%d\", \"body\": \"b%d\", \"type\": \"box\","
                          " \"size\": [0.05, 0.05, 0.05]}", i, i);
  }
  snprintf(json + j, sizeof json - j, "]}");
}

/* a solver setting of both engines */
typedef struct setting {
  const char *name;
  sim_solver_type solver;
  sim_cone cone;
  int iterations;
} setting;

static const setting settings[] = {
    {"Newton, pyramidal, 100 iterations, tolerance 1e-8", SIM_SOLVER_NEWTON, SIM_CONE_PYRAMIDAL, 100},
    {"Newton, elliptic, 100 iterations, tolerance 1e-8", SIM_SOLVER_NEWTON, SIM_CONE_ELLIPTIC, 100},
    {"CG, pyramidal, 20 iterations, tolerance 1e-8", SIM_SOLVER_CG, SIM_CONE_PYRAMIDAL, 20},
};

static void apply(sim_model *m, mjModel *mm, const setting *st) {
  m->opt.solver = st->solver;
  m->opt.cone = st->cone;
  m->opt.solver_iterations = mm->opt.iterations = st->iterations;
  m->opt.solver_tolerance = mm->opt.tolerance = 1e-8;
  mm->opt.solver = st->solver == SIM_SOLVER_NEWTON ? mjSOL_NEWTON : mjSOL_CG;
  mm->opt.cone = st->cone == SIM_CONE_ELLIPTIC ? mjCONE_ELLIPTIC : mjCONE_PYRAMIDAL;
}

/* ns per step and solver iterations per step of each engine on models m and mm under st
 * (settled first from the state q, when given); contacts and rows after settling */
static void time_pair(const char *what, sim_model *m, mjModel *mm, const setting *st,
                      const double *q, int steps, int rounds) {
  apply(m, mm, st);
  sim_data *d = sim_data_new(m);
  mjData *md = mj_makeData(mm);
  memcpy(md->qpos, d->qpos, (size_t)m->nq * sizeof(double));
  for (int i = 0; q && i < m->nq; i++) {
    d->qpos[i] = md->qpos[i] = q[i];
  }
  for (int s = 0; s < 1000; s++) { /* settle */
    sim_step(m, d);
    mj_step(mm, md);
  }
  double best_ours = 1e30, best_mj = 1e30, it_ours = 0, it_mj = 0;
  for (int r = 0; r < rounds; r++) {
    long n_ours = 0, n_mj = 0;
    double t0 = now();
    for (int s = 0; s < steps; s++) {
      sim_step(m, d);
      n_ours += d->solver.iterations;
    }
    double t1 = now();
    for (int s = 0; s < steps; s++) {
      mj_step(mm, md);
      n_mj += md->solver_iter;
    }
    double t2 = now();
    best_ours = fmin(best_ours, (t1 - t0) / steps);
    best_mj = fmin(best_mj, (t2 - t1) / steps);
    it_ours = (double)n_ours / steps;
    it_mj = (double)n_mj / steps;
  }
  printf("%-26s %5d %5d %5d %5d %10.0f %10.0f %7.2f %6.2f %6.2f\n", what, d->ncon, md->ncon,
         d->nefc, md->nefc, 1e9 * best_ours, 1e9 * best_mj, best_mj / best_ours, it_ours, it_mj);
  mj_deleteData(md);
  sim_data_free(d);
}

/* the scene in json (or the shipped club arm lying on its table: shoulder swung down, elbow
 * bent; it settles there), both engines, under st */
static int measure(const char *what, const setting *st, int club, int steps, int rounds) {
  char err[1000] = "";
  sim_model *m = club ? sim_model_load_file(ACHILLES_SOURCE_DIR "/configs/club_arm.json", err,
                                            sizeof err)
                      : sim_model_load_string(json, what, err, sizeof err);
  mjModel *mm = m ? (mjModel *)mjcf_load(m, err, sizeof err) : NULL;
  if (!mm) {
    fprintf(stderr, "bench_contacts: %s\n", err);
    sim_model_free(m);
    return -1;
  }
  const double q[4] = {0.3, 1.2, -0.6, 0};
  time_pair(what, m, mm, st, club ? q : NULL, steps, rounds);
  mj_deleteModel(mm);
  sim_model_free(m);
  return 0;
}

/* every scene under st */
static int run_setting(const setting *st, int steps, int rounds) {
  printf("\n%s\n%-26s %5s %5s %5s %5s %10s %10s %7s %6s %6s\n", st->name, "scene", "ncon", "mj",
         "rows", "mj", "ours ns", "mj_step ns", "ratio", "it", "mj it");
  const int sizes[] = {0, 4, 16, 64};
  int rc = 0;
  for (int k = 0; k < 4 && rc == 0; k++) {
    char what[64];
    snprintf(what, sizeof what, "%d spheres on a plane", sizes[k]);
    spheres(sizes[k], 0);
    rc = measure(what, st, 0, steps, rounds);
  }
  limited_chain();
  rc = rc ? rc : measure("8 hinges at their stops", st, 0, steps, rounds);
  spheres(16, 1);
  rc = rc ? rc : measure("16 spheres on blocks", st, 0, steps, rounds);
  rc = rc ? rc : measure("club arm on its table", st, 1, steps, rounds);
  stacked_boxes();
  rc = rc ? rc : measure("8 stacked boxes", st, 0, steps, rounds);
  return rc;
}

int main(int argc, char **argv) {
  int steps = 2000, rounds = 5;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf("usage: bench_contacts [--steps N] [--rounds R]\n"
             "ns per step with active contacts (0, 4, 16, 64 spheres resting on a plane) and with\n"
             "every limit of an 8-hinge chain active, 16 spheres resting on blocks (sphere-box),\n"
             "the shipped club arm lying on its table and 8 stacked boxes (box-box), beside\n"
             "MuJoCo's mj_step on the same scenes, under Newton (pyramidal and elliptic cones,\n"
             "100 iterations) and CG (pyramidal, 20 iterations), tolerance 1e-8; the best of R\n"
             "rounds of N steps each, and the solver iterations per step of both.\n");
      return 0;
    } else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      steps = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = atoi(argv[++i]);
    } else {
      fprintf(stderr, "bench_contacts: unknown option %s (see --help)\n", argv[i]);
      return 2;
    }
  }
  if (steps < 1 || rounds < 1) {
    return 2;
  }
  for (size_t k = 0; k < sizeof settings / sizeof settings[0]; k++) {
    if (run_setting(&settings[k], steps, rounds) != 0) {
      return 1;
    }
  }
  return 0;
}
