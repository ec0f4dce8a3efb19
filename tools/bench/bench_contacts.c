/* tools/bench/bench_contacts.c: the step with active constraints beside MuJoCo's mj_step on the
 * same scenes, in one process (not a test: it prints figures and ratios).
 *
 * Scenes: N spheres on vertical slides resting on a plane (N contacts of four pyramid rows each,
 * N = 0, 4, 16, 64), and an arm of 8 hinges all held against their stops with friction in every
 * joint (8 limit and 8 friction rows); then the narrow phase against boxes (16 spheres resting
 * on 16 blocks fixed to the world: sphere–box pairs), and the shipped club arm
 * (configs/club_arm.json, written as MJCF by tests/sim/mjcf_writer.c) lying on its table: four
 * friction rows and the table's contact. Both engines: pyramidal cone, CG, the same
 * iterations (20) and tolerance (1e-8), Euler at 1 ms; each scene is settled first, then timed. */
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

static char json[1 << 17], xml[1 << 17];

/* n spheres of radius 0.05 on slides along z, 0.2 m apart in a row, on the plane z = 0, or
 * (on_boxes) each on a block 0.1 m high standing on the plane (fixed to the world, as the plane:
 * blocks and plane never touch) */
static void spheres(int n, int on_boxes) {
  size_t j = 0, x = 0;
  const double top = on_boxes ? 0.1 : 0.0;
  j += (size_t)snprintf(json + j, sizeof json - j,
                        "{\"name\": \"spheres\", \"timestep\": 0.001, \"max_contacts\": %d,"
                        " \"solver_iterations\": 20, \"bodies\": [", n > 0 ? n : 1);
  x += (size_t)snprintf(xml + x, sizeof xml - x,
                        "<mujoco><option timestep=\"0.001\" iterations=\"20\" tolerance=\"1e-8\""
                        " solver=\"CG\" cone=\"pyramidal\"/><worldbody>"
                        "<geom name=\"floor\" type=\"plane\" size=\"0 0 1\"/>");
  for (int i = 0; i < n; i++) {
    j += (size_t)snprintf(json + j, sizeof json - j,
                          "%s{\"name\": \"b%d\", \"parent\": \"world\", \"pos\": [%g, 0, %g],"
                          " \"joint\": {\"name\": \"z%d\", \"type\": \"slide\", \"axis\": [0, 0, 1]},"
                          " \"inertial\": {\"mass\": 0.1, \"inertia\": [1e-4, 1e-4, 1e-4, 0, 0, 0]}}",
                          i ? "," : "", i, 0.2 * i, top + 0.049, i);
    x += (size_t)snprintf(xml + x, sizeof xml - x,
                          "<body name=\"b%d\" pos=\"%g 0 %g\"><joint name=\"z%d\" type=\"slide\""
                          " axis=\"0 0 1\"/><inertial pos=\"0 0 0\" mass=\"0.1\""
                          " diaginertia=\"1e-4 1e-4 1e-4\"/><geom type=\"sphere\" size=\"0.05\"/>"
                          "</body>",
                          i, 0.2 * i, top + 0.049, i);
  }
  if (n == 0) { /* one free-standing body so that both engines have something to step */
    j += (size_t)snprintf(json + j, sizeof json - j,
                          "{\"name\": \"b\", \"parent\": \"world\", \"joint\": {\"name\": \"z\","
                          " \"type\": \"slide\", \"axis\": [0, 0, 1]}, \"inertial\": {\"mass\": 0.1,"
                          " \"inertia\": [1e-4, 1e-4, 1e-4, 0, 0, 0]}}");
    x += (size_t)snprintf(xml + x, sizeof xml - x,
                          "<body name=\"b\"><joint name=\"z\" type=\"slide\" axis=\"0 0 1\"/>"
                          "<inertial pos=\"0 0 0\" mass=\"0.1\" diaginertia=\"1e-4 1e-4 1e-4\"/>"
                          "</body>");
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
    x += (size_t)snprintf(xml + x, sizeof xml - x,
                          "<geom type=\"box\" size=\"0.08 0.08 0.05\" pos=\"%g 0.01 0.05\"/>",
                          0.2 * i);
  }
  snprintf(json + j, sizeof json - j, "]}");
  snprintf(xml + x, sizeof xml - x, "</worldbody></mujoco>");
}

/* a chain of 8 hinges about y under gravity, each limited to [-0.1, 0.1] and with friction:
 * gravity holds every joint against a stop */
static void limited_chain(void) {
  size_t j = 0, x = 0;
  j += (size_t)snprintf(json + j, sizeof json - j,
                        "{\"name\": \"chain\", \"timestep\": 0.001, \"solver_iterations\": 20,"
                        " \"bodies\": [");
  x += (size_t)snprintf(xml + x, sizeof xml - x,
                        "<mujoco><compiler angle=\"radian\"/><option timestep=\"0.001\""
                        " iterations=\"20\" tolerance=\"1e-8\" solver=\"CG\""
                        " cone=\"pyramidal\"/><worldbody>");
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
    x += (size_t)snprintf(xml + x, sizeof xml - x,
                          "<body name=\"l%d\" pos=\"%g 0 0\"><joint name=\"h%d\" type=\"hinge\""
                          " axis=\"0 1 0\" limited=\"true\" range=\"-0.1 0.1\""
                          " frictionloss=\"0.01\"/><inertial pos=\"0.05 0 0\" mass=\"0.2\""
                          " diaginertia=\"1e-4 2e-4 2e-4\"/>",
                          i, i ? 0.1 : 0.0, i);
  }
  snprintf(json + j, sizeof json - j, "]}");
  for (int i = 0; i < 8; i++) {
    x += (size_t)snprintf(xml + x, sizeof xml - x, "</body>");
  }
  snprintf(xml + x, sizeof xml - x, "</worldbody></mujoco>");
}

/* ns per step of each engine on models m and mm (settled first from the state they hold);
 * rows and contacts after settling. Frees both. */
static void time_pair(const char *what, sim_model *m, mjModel *mm, const double *q, int steps,
                      int rounds) {
  sim_data *d = sim_data_new(m);
  mjData *md = mj_makeData(mm);
  for (int i = 0; q && i < m->nq; i++) {
    d->qpos[i] = md->qpos[i] = q[i];
  }
  for (int s = 0; s < 1000; s++) { /* settle */
    sim_step(m, d);
    mj_step(mm, md);
  }
  double best_ours = 1e30, best_mj = 1e30;
  for (int r = 0; r < rounds; r++) {
    double t0 = now();
    for (int s = 0; s < steps; s++) {
      sim_step(m, d);
    }
    double t1 = now();
    for (int s = 0; s < steps; s++) {
      mj_step(mm, md);
    }
    double t2 = now();
    best_ours = fmin(best_ours, (t1 - t0) / steps);
    best_mj = fmin(best_mj, (t2 - t1) / steps);
  }
  printf("%-26s %5d %5d %5d %5d %10.0f %10.0f %7.2f\n", what, d->ncon, md->ncon, d->nefc,
         md->nefc, 1e9 * best_ours, 1e9 * best_mj, best_mj / best_ours);
  mj_deleteData(md);
  mj_deleteModel(mm);
  sim_data_free(d);
  sim_model_free(m);
}

/* the shipped club arm lying on its table: shoulder swung down, elbow bent (settles there) */
static int club_arm(int steps, int rounds) {
  char err[1000] = "";
  sim_model *m = sim_model_load_file(ACHILLES_SOURCE_DIR "/configs/club_arm.json", err,
                                     sizeof err);
  mjModel *mm = m ? (mjModel *)mjcf_load(m, err, sizeof err) : NULL;
  if (!mm) {
    fprintf(stderr, "bench_contacts: %s\n", err);
    sim_model_free(m);
    return -1;
  }
  m->opt.solver_tolerance = mm->opt.tolerance = 1e-8;
  m->opt.solver_iterations = mm->opt.iterations = 20;
  const double q[4] = {0.3, 1.2, -0.6, 0};
  time_pair("club arm on its table", m, mm, q, steps, rounds);
  return 0;
}

/* ns per step of each engine on the scene in json/xml */
static int measure(const char *what, int steps, int rounds) {
  char err[1000] = "";
  sim_model *m = sim_model_load_string(json, what, err, sizeof err);
  if (!m) {
    fprintf(stderr, "bench_contacts: %s\n", err);
    return -1;
  }
  mjVFS *vfs = malloc(sizeof *vfs);
  mj_defaultVFS(vfs);
  mj_makeEmptyFileVFS(vfs, "s.xml", (int)strlen(xml));
  memcpy(vfs->filedata[mj_findFileVFS(vfs, "s.xml")], xml, strlen(xml));
  mjModel *mm = mj_loadXML("s.xml", vfs, err, sizeof err);
  mj_deleteVFS(vfs);
  free(vfs);
  if (!mm) {
    fprintf(stderr, "bench_contacts: MuJoCo: %s\n", err);
    sim_model_free(m);
    return -1;
  }
  time_pair(what, m, mm, NULL, steps, rounds);
  return 0;
}

int main(int argc, char **argv) {
  int steps = 2000, rounds = 5;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf("usage: bench_contacts [--steps N] [--rounds R]\n"
             "ns per step with active contacts (0, 4, 16, 64 spheres resting on a plane) and with\n"
             "every limit of an 8-hinge chain active, 16 spheres resting on blocks (sphere-box),\n"
             "and the shipped club arm lying on its table, beside MuJoCo's mj_step on the same scenes\n"
             "(CG, pyramidal cone, 20 iterations); the best of R rounds of N steps each.\n");
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
  printf("%-26s %5s %5s %5s %5s %10s %10s %7s\n", "scene", "ncon", "mj", "rows", "mj",
         "ours ns", "mj_step ns", "ratio");
  const int sizes[] = {0, 4, 16, 64};
  for (int k = 0; k < 4; k++) {
    char what[64];
    snprintf(what, sizeof what, "%d spheres on a plane", sizes[k]);
    spheres(sizes[k], 0);
    if (measure(what, steps, rounds) != 0) {
      return 1;
    }
  }
  limited_chain();
  if (measure("8 hinges at their stops", steps, rounds) != 0) {
    return 1;
  }
  spheres(16, 1);
  if (measure("16 spheres on blocks", steps, rounds) != 0) {
    return 1;
  }
  return club_arm(steps, rounds) != 0;
}
