/* tools/bench/bench_pool.c: world steps per second of the world pool (sim/pool.h) against world
 * count and thread count, beside a plain sim_step loop over the same worlds in this process. Not a
 * test: it prints figures and ratios, and asserts nothing about time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/pool.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: bench_pool [CONFIG] [--steps N] [--max-worlds N] [--threads N]\n"
          "World steps per second of sim_pool_step for 1, 4, 16, ... worlds and 1 .. N threads\n"
          "(default: the number of CPUs), beside a plain loop of sim_step over the same worlds.\n"
          "CONFIG defaults to configs/club_arm.json (run from the repository root). --steps is\n"
          "the number of world steps per measurement (default 200000).\n");
}

/* world steps per second: a plain loop over nworld sim_data */
static double plain_rate(const sim_model *m, int nworld, long total) {
  sim_data **d = calloc((size_t)nworld, sizeof *d);
  for (int w = 0; w < nworld; w++) {
    d[w] = sim_data_new(m);
  }
  long per = total / nworld > 0 ? total / nworld : 1;
  double t0 = now();
  for (long s = 0; s < per; s++) {
    for (int w = 0; w < nworld; w++) {
      sim_step(m, d[w]);
    }
  }
  double rate = (double)per * nworld / (now() - t0);
  for (int w = 0; w < nworld; w++) {
    sim_data_free(d[w]);
  }
  free(d);
  return rate;
}

/* world steps per second of the pool; batches of 10 steps, as a learning loop would */
static double pool_rate(const sim_model *m, int nworld, int nthread, long total) {
  char err[256];
  sim_pool *p = sim_pool_new(m, nworld, nthread, err, sizeof err);
  if (!p) {
    fprintf(stderr, "bench_pool: %s\n", err);
    exit(1);
  }
  long batches = total / ((long)nworld * 10) > 0 ? total / ((long)nworld * 10) : 1;
  sim_pool_step(p, 1);
  double t0 = now();
  for (long b = 0; b < batches; b++) {
    sim_pool_step(p, 10);
  }
  double rate = (double)batches * 10 * nworld / (now() - t0);
  sim_pool_free(&p);
  return rate;
}

int main(int argc, char **argv) {
  const char *config = "configs/club_arm.json";
  long total = 200000;
  int max_worlds = 1024, max_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      total = atol(argv[++i]);
    } else if (strcmp(argv[i], "--max-worlds") == 0 && i + 1 < argc) {
      max_worlds = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      max_threads = atoi(argv[++i]);
    } else if (argv[i][0] != '-') {
      config = argv[i];
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (total < 1 || max_worlds < 1 || max_threads < 1 || max_threads > SIM_POOL_MAX_THREADS) {
    usage(stderr);
    return 2;
  }
  char err[512];
  sim_model *m = sim_model_load_file(config, err, sizeof err);
  if (!m) {
    fprintf(stderr, "bench_pool: %s\n", err);
    return 1;
  }
  printf("%s, %ld world steps per figure; world steps per second (millions)\n", config, total);
  printf("%7s %10s", "worlds", "plain");
  for (int t = 1; t <= max_threads; t++) {
    printf(" %7s%-2d %6s", "threads", t, "/plain");
  }
  printf("\n");
  for (int n = 1; n <= max_worlds; n *= 4) {
    double plain = plain_rate(m, n, total);
    printf("%7d %10.3f", n, plain / 1e6);
    for (int t = 1; t <= max_threads; t++) {
      double r = pool_rate(m, n, t, total);
      printf(" %9.3f %6.2f", r / 1e6, r / plain);
    }
    printf("\n");
    fflush(stdout);
  }
  sim_model_free(m);
  return 0;
}
