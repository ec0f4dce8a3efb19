/* tools/bench/bench_dynamics.c: forward dynamics and one Euler step of sim/ beside MuJoCo 2.2.2.
 *
 * For serial chains of 1 to 64 hinged links (generated as Achilles JSON, turned into MJCF by
 * tests/sim/mjcf_writer.c), times sim_forward beside mj_forward and sim_step beside mj_step at
 * the same nonzero state, and prints a markdown table of ns per call, the ratio MuJoCo / ours,
 * and how the cost grows from 8 to 64 links. Each figure is the median of 50 timed batches of
 * about 4 ms (0.2 s per figure; --quick: 0.5 ms batches), taken in 10 rounds in which every size
 * and both engines take turns; batches during which the process lost the CPU to another one
 * (process CPU time < 97 % of the wall-clock time) are left out.
 *
 * MuJoCo runs its whole pipeline, whose collision, constraint, actuator and sensor stages are
 * empty here (no geoms, contacts and limits disabled, no actuators or sensors); its energy
 * computation is switched off, as Achilles computes energy only on request.
 *
 * The last column is the floating-point operations per link of sim_kinematics and sim_aba (the
 * forward dynamics of a chain, less its few passive-force flops), counted by running the
 * counting build of those stages (tests/flops) once at the benchmark's state.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mujoco/mujoco.h>

#include "mjcf_writer.h"
#include "sim/sim.h"
#include "tests/flops/flops.h"

#define NROUND 10 /* rounds: every size and function takes its turn in each */
#define NBATCH 5  /* timed batches per function and round */
#define NSAMPLE (NROUND * NBATCH)

static const int sizes[] = {1, 2, 7, 8, 16, 32, 64};
#define NSIZE ((int)(sizeof sizes / sizeof sizes[0]))

/* --- a growing text buffer ------------------------------------------------------------------ */

typedef struct text {
  char *s;
  size_t len, cap;
} text;

static void text_printf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void text_printf(text *t, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
      return;
    }
    if (t->len + (size_t)n < t->cap) {
      t->len += (size_t)n;
      return;
    }
    size_t cap = 2 * (t->cap + (size_t)n);
    char *s = realloc(t->s, cap);
    if (!s) {
      fprintf(stderr, "bench_dynamics: out of memory\n");
      exit(1);
    }
    t->s = s;
    t->cap = cap;
  }
}

/* --- the chains ------------------------------------------------------------------------------- */

/* a fixed-seed generator (xorshift64*): the same chains on every run */
static double rnd(uint64_t *s, double lo, double hi) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  uint64_t r = *s * 2685821657736338717ull;
  return lo + (hi - lo) * (double)(r >> 11) * (1.0 / 9007199254740992.0);
}

/* a serial chain of n hinges: links 0.1-0.3 m along tilted directions, axes drawn on the
 * sphere, inertias with principal moments 5-9e-3 (so MuJoCo's triangle check holds) and small
 * products, light damping and armature, gravity on */
static char *chain_json(int n) {
  text t = {malloc(4096), 0, 4096};
  if (!t.s) {
    return NULL;
  }
  t.s[0] = '\0';
  uint64_t s = 0x243f6a8885a308d3ull + (uint64_t)n;
  text_printf(&t, "{ \"name\": \"chain%d\", \"timestep\": 0.001, \"integrator\": \"euler\",\n"
                  "  \"gravity\": [0, 0, -9.81], \"bodies\": [\n", n);
  for (int i = 0; i < n; i++) {
    double a[3], norm = 0;
    for (int k = 0; k < 3; k++) {
      a[k] = rnd(&s, -1, 1);
      norm += a[k] * a[k];
    }
    norm = sqrt(norm);
    if (i > 0) {
      text_printf(&t, ",\n");
    }
    char parent[32];
    snprintf(parent, sizeof parent, i ? "link%d" : "world", i - 1);
    text_printf(&t,
                "  { \"name\": \"link%d\", \"parent\": \"%s\", \"pos\": [%.17g, %.17g, %.17g],\n"
                "    \"joint\": { \"name\": \"j%d\", \"type\": \"hinge\",\n"
                "               \"axis\": [%.17g, %.17g, %.17g], \"damping\": %.17g,\n"
                "               \"armature\": %.17g },\n",
                i, parent, i ? rnd(&s, 0.1, 0.3) : 0.0, rnd(&s, -0.05, 0.05),
                i ? rnd(&s, -0.05, 0.05) : 0.0, i, a[0] / norm, a[1] / norm, a[2] / norm,
                rnd(&s, 0.0, 0.02), rnd(&s, 0.0, 0.002));
    text_printf(&t,
                "    \"inertial\": { \"mass\": %.17g, \"com\": [%.17g, %.17g, %.17g],\n"
                "                  \"inertia\": [%.17g, %.17g, %.17g, %.17g, %.17g, %.17g] } }",
                rnd(&s, 0.2, 1.5), rnd(&s, 0.05, 0.15), rnd(&s, -0.02, 0.02),
                rnd(&s, -0.02, 0.02), rnd(&s, 5e-3, 9e-3), rnd(&s, 5e-3, 9e-3),
                rnd(&s, 5e-3, 9e-3), rnd(&s, -1e-4, 1e-4), rnd(&s, -1e-4, 1e-4),
                rnd(&s, -1e-4, 1e-4));
  }
  text_printf(&t, "\n] }\n");
  return t.s;
}

/* --- one size, both engines ------------------------------------------------------------------- */

typedef struct bench {
  sim_model *m;
  sim_data *d;
  mjModel *mm;
  mjData *md;
  double *q, *qd, *tau; /* the state every batch starts from */
  sim_flops flops;      /* of sim_forward at that state, from the counting build */
} bench;

/* the same state in both; joints of a chain are in the same order in both engines */
static void bench_set(bench *b) {
  int nv = b->m->nv;
  memcpy(b->d->qpos, b->q, (size_t)nv * sizeof(double));
  memcpy(b->d->qvel, b->qd, (size_t)nv * sizeof(double));
  memcpy(b->d->qfrc_applied, b->tau, (size_t)nv * sizeof(double));
  memcpy(b->md->qpos, b->q, (size_t)nv * sizeof(double));
  memcpy(b->md->qvel, b->qd, (size_t)nv * sizeof(double));
  memcpy(b->md->qfrc_applied, b->tau, (size_t)nv * sizeof(double));
  b->d->time = 0;
  b->md->time = 0;
}

static int bench_open(bench *b, int n) {
  char err[1000] = "";
  memset(b, 0, sizeof *b);
  char *json = chain_json(n);
  if (!json) {
    return -1;
  }
  b->m = sim_model_load_string(json, "chain", err, sizeof err);
  free(json);
  if (!b->m) {
    fprintf(stderr, "bench_dynamics: %s\n", err);
    return -1;
  }
  b->mm = mjcf_load(b->m, err, sizeof err);
  if (!b->mm) {
    fprintf(stderr, "bench_dynamics: %s\n", err);
    return -1;
  }
  b->mm->opt.enableflags &= ~mjENBL_ENERGY;
  b->m->opt.integrator = SIM_INTEGRATOR_EULER;
  b->mm->opt.integrator = mjINT_EULER;
  b->d = sim_data_new(b->m);
  b->md = mj_makeData(b->mm);
  int nv = b->m->nv;
  b->q = malloc((size_t)nv * sizeof(double));
  b->qd = malloc((size_t)nv * sizeof(double));
  b->tau = malloc((size_t)nv * sizeof(double));
  if (!b->d || !b->md || !b->q || !b->qd || !b->tau || b->mm->nv != nv) {
    fprintf(stderr, "bench_dynamics: setup of the %d-link chain failed\n", n);
    return -1;
  }
  uint64_t s = 0x13198a2e03707344ull + (uint64_t)n;
  for (int i = 0; i < nv; i++) {
    b->q[i] = rnd(&s, -1, 1);
    b->qd[i] = rnd(&s, -1, 1);
    b->tau[i] = rnd(&s, -0.5, 0.5);
  }
  bench_set(b);
  sim_flops_forward(b->m, b->d, &b->flops); /* a chain has no constraint rows: these stages */
  bench_set(b);
  return 0;
}

static void bench_close(bench *b) {
  free(b->q);
  free(b->qd);
  free(b->tau);
  if (b->md) {
    mj_deleteData(b->md);
  }
  if (b->mm) {
    mj_deleteModel(b->mm);
  }
  sim_data_free(b->d);
  sim_model_free(b->m);
}

/* --- timing ---------------------------------------------------------------------------------- */

typedef enum which { SIM_FORWARD, MJ_FORWARD, SIM_STEP, MJ_STEP, NWHICH } which;

static double now_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* reps calls from the start state: ns per call by CLOCK_MONOTONIC; *busy is set when the
 * process was off the CPU for more than 3 % of the batch (another process ran: the batch is
 * not a clean measurement) */
static double batch(bench *b, which w, long reps, int *busy) {
  bench_set(b);
  double c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
  double t0 = now_ns(CLOCK_MONOTONIC);
  switch (w) {
  case SIM_FORWARD:
    for (long r = 0; r < reps; r++) {
      sim_forward(b->m, b->d);
    }
    break;
  case MJ_FORWARD:
    for (long r = 0; r < reps; r++) {
      mj_forward(b->mm, b->md);
    }
    break;
  case SIM_STEP:
    for (long r = 0; r < reps; r++) {
      sim_step(b->m, b->d);
    }
    break;
  default:
    for (long r = 0; r < reps; r++) {
      mj_step(b->mm, b->md);
    }
    break;
  }
  double wall = now_ns(CLOCK_MONOTONIC) - t0;
  double cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
  *busy = cpu < 0.97 * wall;
  return wall / (double)reps;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* repetitions that make one batch of w last about batch_ns (the calls also warm up) */
static long calibrate(bench *b, which w, double batch_ns) {
  long reps = 1;
  int busy;
  double per = batch(b, w, reps, &busy);
  while (per * (double)reps < 0.1 * batch_ns && reps < (1L << 30)) {
    reps *= 4;
    per = batch(b, w, reps, &busy);
  }
  return (long)fmax(1.0, batch_ns / per);
}

/* the figure of one function and size: the median of the clean batches when there are at
 * least 5, else (a busy machine) the fastest batch, flagged */
static double summarize(double *t, const int *busy, int n, int *flag) {
  double clean[NSAMPLE];
  int nclean = 0;
  for (int k = 0; k < n; k++) {
    if (!busy[k]) {
      clean[nclean++] = t[k];
    }
  }
  *flag = nclean < 5;
  if (*flag) {
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    return t[0];
  }
  qsort(clean, (size_t)nclean, sizeof clean[0], cmp_double);
  return clean[nclean / 2];
}

/* ns per call of every function for every size from NSAMPLE batches each. All sizes and
 * functions take turns within every round, so that both engines and all sizes see the same
 * machine; batches during which another process took the CPU are set aside (noise only ever
 * adds time). Returns the share of batches set aside. */
static double measure(bench *b, int nsize, double batch_ns, long fixed_reps, int only,
                      double ns[][NWHICH], int flagged[][NWHICH]) {
  static double t[NSIZE][NWHICH][NSAMPLE];
  static int busy[NSIZE][NWHICH][NSAMPLE];
  long reps[NSIZE][NWHICH];
  int nbusy = 0, nall = 0;
  for (int s = 0; s < nsize; s++) {
    for (int w = 0; w < NWHICH; w++) {
      ns[s][w] = NAN;
      flagged[s][w] = 0;
      if (only < 0 || only == w) {
        reps[s][w] = fixed_reps > 0 ? fixed_reps : calibrate(&b[s], (which)w, batch_ns);
        ns[s][w] = INFINITY;
      }
    }
  }
  for (int r = 0; r < NROUND; r++) {
    for (int s = 0; s < nsize; s++) {
      for (int w = 0; w < NWHICH; w++) {
        for (int k = 0; k < NBATCH && !isnan(ns[s][w]); k++) {
          int i = r * NBATCH + k;
          t[s][w][i] = batch(&b[s], (which)w, reps[s][w], &busy[s][w][i]);
          nbusy += busy[s][w][i];
          nall++;
        }
      }
    }
  }
  for (int s = 0; s < nsize; s++) {
    for (int w = 0; w < NWHICH; w++) {
      if (!isnan(ns[s][w])) {
        ns[s][w] = summarize(t[s][w], busy[s][w], NSAMPLE, &flagged[s][w]);
      }
    }
  }
  return nall ? (double)nbusy / nall : 0.0;
}

/* both engines must compute the same thing: max |Δqacc| relative to max |qacc| at the state,
 * and after a batch of steps the state must still be finite */
static double agreement(bench *b) {
  bench_set(b);
  sim_forward(b->m, b->d);
  mj_forward(b->mm, b->md);
  double diff = 0, scale = 0;
  for (int i = 0; i < b->m->nv; i++) {
    diff = fmax(diff, fabs(b->d->qacc[i] - b->md->qacc[i]));
    scale = fmax(scale, fabs(b->md->qacc[i]));
  }
  return diff / fmax(scale, 1e-300);
}

static int finite_state(const bench *b) {
  for (int i = 0; i < b->m->nv; i++) {
    if (!isfinite(b->d->qpos[i]) || !isfinite(b->d->qvel[i]) || !isfinite(b->md->qpos[i]) ||
        !isfinite(b->md->qvel[i])) {
      return 0;
    }
  }
  return 1;
}

/* one table cell; "-" for what was not measured (--only), "*" after a flagged figure */
static void print_cell(const char *fmt, double v, int flag) {
  printf("| ");
  if (isnan(v)) {
    printf("-");
  } else {
    printf(fmt, v);
  }
  printf("%s ", flag ? "*" : "");
}

static const char *const which_names[NWHICH] = {"sim_forward", "mj_forward", "sim_step",
                                                  "mj_step"};

static void usage(FILE *f) {
  fprintf(f,
          "usage: bench_dynamics [--quick] [--links N] [--only FUNCTION] [--reps N] [--help]\n"
          "Times sim_forward beside mj_forward and sim_step (Euler) beside mj_step for serial\n"
          "chains of 1, 2, 7, 8, 16, 32 and 64 hinged links, and prints a markdown table of ns\n"
          "per call, the ratio MuJoCo / Achilles, and the growth of the cost from 8 to 64\n"
          "links. Each figure is the median of %d batches of about 4 ms taken in %d rounds,\n"
          "leaving out batches during which another process had the CPU.\n"
          "  --quick          batches of 0.5 ms instead of 4 ms (about 1 s in all, not 6 s)\n"
          "  --links N        only the chain of N links (1 to 64)\n"
          "  --only FUNCTION  only sim_forward, mj_forward, sim_step or mj_step\n"
          "  --reps N         every batch makes exactly N calls, without calibration: for\n"
          "                   profilers such as valgrind --tool=callgrind (each measured\n"
          "                   function then runs %d·N times per size)\n"
          "  --help           this text\n",
          NSAMPLE, NROUND, NSAMPLE);
}

typedef struct options {
  double batch_ns;
  long fixed_reps; /* 0: calibrate */
  int links;       /* 0: every size */
  int only;        /* -1: every function */
} options;

/* 0 to run, 1 to exit successfully (--help), 2 on a bad command line */
static int parse_options(options *o, int argc, char **argv) {
  *o = (options){4e6, 0, 0, -1};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--quick") == 0) {
      o->batch_ns = 0.5e6;
    } else if (strcmp(a, "--reps") == 0 && v) {
      o->fixed_reps = strtol(v, NULL, 10);
      i++;
      if (o->fixed_reps < 1) {
        fprintf(stderr, "bench_dynamics: --reps expects a positive count, not %s\n", v);
        return 2;
      }
    } else if (strcmp(a, "--links") == 0 && v) {
      o->links = (int)strtol(v, NULL, 10);
      i++;
      if (o->links < 1 || o->links > 64) {
        fprintf(stderr, "bench_dynamics: --links expects 1 to 64, not %s\n", v);
        return 2;
      }
    } else if (strcmp(a, "--only") == 0 && v) {
      i++;
      for (int w = 0; w < NWHICH; w++) {
        if (strcmp(v, which_names[w]) == 0) {
          o->only = w;
        }
      }
      if (o->only < 0) {
        fprintf(stderr, "bench_dynamics: --only expects sim_forward, mj_forward, sim_step or "
                        "mj_step, not %s\n", v);
        return 2;
      }
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 1;
    } else {
      fprintf(stderr, "bench_dynamics: unknown option or missing value: %s\n", a);
      usage(stderr);
      return 2;
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  options o;
  int rc = parse_options(&o, argc, argv);
  if (rc) {
    return rc == 1 ? 0 : 2;
  }

  /* the sizes: the standard list, or the one asked for */
  int list[NSIZE], n = 0;
  for (int s = 0; s < NSIZE && !o.links; s++) {
    list[n++] = sizes[s];
  }
  if (o.links) {
    list[n++] = o.links;
  }

  double ns[NSIZE][NWHICH];
  printf("MuJoCo %s; ", mj_versionString());
  if (o.fixed_reps) {
    printf("batches of %ld calls", o.fixed_reps);
  } else {
    printf("batches of %.1f ms", o.batch_ns / 1e6);
  }
  printf(", %d per figure in %d interleaved rounds; median of the clean batches\n\n", NSAMPLE,
         NROUND);
  printf("| links | sim_forward ns | mj_forward ns | forward ratio | sim_step ns | mj_step ns "
         "| step ratio | qacc rel. diff | kinematics + ABA flops/link |\n");
  printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  /* every chain, then the timings, then the table */
  bench b[NSIZE];
  double agree[NSIZE];
  memset(b, 0, sizeof b);
  int ok = 1;
  for (int s = 0; s < n && ok; s++) {
    ok = bench_open(&b[s], list[s]) == 0;
    agree[s] = ok ? agreement(&b[s]) : NAN;
  }
  if (!ok) {
    for (int s = 0; s < n; s++) {
      bench_close(&b[s]);
    }
    return 1;
  }
  int flagged[NSIZE][NWHICH];
  double busy = measure(b, n, o.batch_ns, o.fixed_reps, o.only, ns, flagged);
  int nflagged = 0;
  for (int s = 0; s < n; s++) {
    if (!finite_state(&b[s])) {
      fprintf(stderr, "bench_dynamics: the %d-link chain diverged while stepping\n", list[s]);
      ok = 0;
    }
    const double *t = ns[s];
    const int *f = flagged[s];
    printf("| %d ", list[s]);
    print_cell("%.0f", t[SIM_FORWARD], f[SIM_FORWARD]);
    print_cell("%.0f", t[MJ_FORWARD], f[MJ_FORWARD]);
    print_cell("%.2f", t[MJ_FORWARD] / t[SIM_FORWARD], 0);
    print_cell("%.0f", t[SIM_STEP], f[SIM_STEP]);
    print_cell("%.0f", t[MJ_STEP], f[MJ_STEP]);
    print_cell("%.2f", t[MJ_STEP] / t[SIM_STEP], 0);
    printf("| %.1e | %.0f |\n", agree[s],
           (double)(b[s].flops.kinematics + b[s].flops.aba) / list[s]);
    for (int w = 0; w < NWHICH; w++) {
      nflagged += f[w];
    }
  }
  printf("\n%.0f %% of the batches were set aside (another process had the CPU)", 100 * busy);
  if (nflagged) {
    printf("; * marks %d figures with fewer than 5 clean batches: the fastest batch is shown",
           nflagged);
  }
  printf(".\n");
  for (int s = 0; s < n; s++) {
    bench_close(&b[s]);
  }
  if (!ok) {
    return 1;
  }

  /* the goals of issue 16, each stated as met or not by this run: at 7 links sim_forward at
   * least 2.5 times as fast as mj_forward and at most 600 flops per link; time(64)/time(8) at
   * most 8.5 (8 for a linear-time algorithm); sim_step faster than mj_step at every size */
  if (n == NSIZE && o.only < 0) {
    int i7 = 2, i8 = 3, i64 = NSIZE - 1, step_lead = 0;
    double g = ns[i64][SIM_FORWARD] / ns[i8][SIM_FORWARD];
    double r7 = ns[i7][MJ_FORWARD] / ns[i7][SIM_FORWARD];
    double f7 = (double)(b[i7].flops.kinematics + b[i7].flops.aba) / list[i7];
    for (int s = 0; s < n; s++) {
      step_lead += ns[s][SIM_STEP] < ns[s][MJ_STEP];
    }
    printf("time(64)/time(8): sim_forward %.2f, mj_forward %.2f, sim_step %.2f, "
           "mj_step %.2f\n",
           g, ns[i64][MJ_FORWARD] / ns[i8][MJ_FORWARD], ns[i64][SIM_STEP] / ns[i8][SIM_STEP],
           ns[i64][MJ_STEP] / ns[i8][MJ_STEP]);
    printf("targets: 7 links sim_forward >= 2.5x mj_forward: %.2fx %s; 7 links <= 600 flops "
           "per link: %.0f %s; time(64)/time(8) <= 8.5: %.2f %s; sim_step faster than mj_step: "
           "%d of %d sizes %s\n",
           r7, r7 >= 2.5 ? "met" : "NOT met", f7, f7 <= 600 ? "met" : "NOT met", g,
           g <= 8.5 ? "met" : "NOT met", step_lead, n, step_lead == n ? "met" : "NOT met");
  }
  return 0;
}
