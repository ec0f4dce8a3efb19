/* tools/bench/bench_deriv.c: the derivatives of sim/deriv beside their references, in one process.
 *
 * 1. Step Jacobians A and B of a 7- and a 32-link arm (hinges about alternating axes, damping,
 *    armature, a motor on every joint, gravity) beside one sim_step and beside central finite
 *    differences of sim_step (2·(2nv + nu) steps, tests/sim/deriv_fd.c's two-point stencil):
 *    ns per call and the ratios. Each figure is the median of 15 batches of about 3 ms
 *    (--quick: 5 of 1 ms), the three taking turns. Times are the thread's CPU time
 *    (CLOCK_THREAD_CPUTIME_ID), so that other processes' turns on the CPU are not counted.
 * 2. The gradient of a tracking loss over a rollout of the 7-link arm, 50, 500 and 5000 steps,
 *    with respect to the initial state, every command and 21 parameters (each link's mass, each
 *    joint's damping and armature): sim_rollout_gradient (checkpoints every step) beside ADOL-C
 *    (libadolc-dev: the same stage code compiled with its adouble, taped, then gradient()) and
 *    beside central differences of the rollout's loss (2 rollouts per input; their time is one
 *    rollout's, measured, times their number). Time (median of 3), the memory each adds to the
 *    process at its peak (measured in a child process: VmHWM after minus VmRSS before), the
 *    tape's size, and the largest difference between the two gradients.
 * 3. The rollout gradient of 5000 steps against the checkpoint interval k = 1, 10, 100, √T: the
 *    states kept, the peak memory added, and the time.
 * Usage: bench_deriv [--quick] [--jacobians] [--steps N,N,...] (--jacobians: part 1 only).
 * bench_deriv --calls LINKS euler|rk4 N [--plain]: N calls of sim_deriv_step (sim_step with
 * --plain) on part 1's arm and nothing else, for an instruction counter (callgrind: the count
 * of N = 101 less that of N = 1, over 100). */
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_deriv_adolc.h"
#include "deriv_fd.h"
#include "sim/deriv/rollout.h"

static int quick, jacobians_only;

/* --- the arm ---------------------------------------------------------------------------------- */

/* n links along z, hinges about z, y, z, y, ... (a 7-link one is a 7-dof arm's layout), masses
 * falling from 3 kg, a motor on each joint */
static sim_model *arm(int n) {
  size_t cap = 4096 + (size_t)n * 1024, len = 0;
  char *json = malloc(cap), err[512];
  if (!json) {
    return NULL;
  }
  len += (size_t)snprintf(json + len, cap - len,
                          "{ \"name\": \"arm%d\", \"timestep\": 0.002, \"bodies\": [\n", n);
  double step = 1.4 / n;
  for (int i = 0; i < n; i++) {
    double mass = 3.0 * pow(0.85, i * 7.0 / n) + 0.1, r = 0.05;
    double I = mass * (3 * r * r + step * step) / 12, Iz = mass * r * r / 2;
    char parent[32];
    snprintf(parent, sizeof parent, i ? "l%d" : "world", i - 1);
    len += (size_t)snprintf(
        json + len, cap - len,
        "%s  { \"name\": \"l%d\", \"parent\": \"%s\", \"pos\": [0, 0, %.17g],\n"
        "    \"joint\": { \"name\": \"j%d\", \"type\": \"hinge\", \"axis\": [0, %d, %d],\n"
        "               \"damping\": 0.2, \"armature\": 0.01 },\n"
        "    \"inertial\": { \"mass\": %.17g, \"com\": [0.01, 0, %.17g],\n"
        "                  \"inertia\": [%.17g, %.17g, %.17g, 0, 0, 0] } }",
        i ? ",\n" : "", i, parent, i ? step : 0.1, i, i % 2, 1 - i % 2, mass, step / 2, I, I, Iz);
  }
  len += (size_t)snprintf(json + len, cap - len, " ],\n  \"actuators\": [");
  for (int i = 0; i < n; i++) {
    len += (size_t)snprintf(json + len, cap - len,
                            "%s { \"name\": \"m%d\", \"joint\": \"j%d\", \"type\": \"motor\" }",
                            i ? "," : "", i, i);
  }
  snprintf(json + len, cap - len, " ] }\n");
  sim_model *m = sim_model_load_string(json, "arm", err, sizeof err);
  if (!m) {
    fprintf(stderr, "bench_deriv: %s\n", err);
  }
  free(json);
  return m;
}

/* a moving state: angles and speeds of a few tenths, commands near gravity's torques */
static void arm_state(const sim_model *m, sim_data *d) {
  for (int k = 0; k < m->nv; k++) {
    d->qpos[k] = 0.3 * sin(1.3 * k + 0.4);
    d->qvel[k] = 0.5 * cos(0.7 * k);
  }
  for (int i = 0; i < m->nu; i++) {
    d->ctrl[i] = 2.0 * sin(0.9 * i);
  }
}

/* --- timing ---------------------------------------------------------------------------------- */

/* the thread's CPU time: what it ran, not what other processes on a shared machine took from it
 * (a loaded machine still slows it through the caches it shares) */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* --- 1. step Jacobians ----------------------------------------------------------------------- */

typedef enum job { JOB_STEP, JOB_DERIV, JOB_FD, NJOB } job;

typedef struct step_bench {
  sim_model *m;
  sim_data *start, *d, *scratch;
  sim_deriv *w;
  double *A, *B;
} step_bench;

static void run_job(step_bench *b, job j, long reps) {
  char err[256];
  for (long r = 0; r < reps; r++) {
    fd_copy_state(b->m, b->d, b->start);
    if (j == JOB_STEP) {
      sim_step(b->m, b->d);
    } else if (j == JOB_DERIV) {
      sim_deriv_step(b->m, b->d, b->w, b->A, b->B, NULL);
    } else {
      fd_step_jacobians(b->m, b->d, b->scratch, NULL, 0, fd_plain_steps(), b->A, b->B, NULL, err,
                        sizeof err);
    }
  }
}

/* ns per call of each job: batches of ~3 ms, the jobs taking turns */
static void time_jobs(step_bench *b, double ns[NJOB]) {
  enum { MAXB = 15 };
  int nbatch = quick ? 5 : MAXB;
  double target = quick ? 1e-3 : 3e-3, samples[NJOB][MAXB];
  long reps[NJOB];
  for (int j = 0; j < NJOB; j++) {
    double t0 = now();
    run_job(b, (job)j, 3);
    double per = (now() - t0) / 3;
    reps[j] = per > 0 ? (long)(target / per) + 1 : 1000;
  }
  for (int k = 0; k < nbatch; k++) {
    for (int j = 0; j < NJOB; j++) {
      double t0 = now();
      run_job(b, (job)j, reps[j]);
      samples[j][k] = (now() - t0) / (double)reps[j] * 1e9;
    }
  }
  for (int j = 0; j < NJOB; j++) {
    ns[j] = median(samples[j], nbatch);
  }
}

static void step_jacobians(void) {
  printf("## Step Jacobians A and B (Euler; RK4 below), ns per call, median of %d batches\n\n",
         quick ? 5 : 15);
  printf("| links | integrator | sim_step | A, B (sim_deriv_step) | central FD (2(2nv+nu) steps) "
         "| deriv / step | FD / deriv |\n|---|---|---|---|---|---|---|\n");
  const int sizes[2] = {7, 32};
  for (int s = 0; s < 2; s++) {
    for (int integ = 0; integ < 2; integ++) {
      char err[256];
      step_bench b = {0};
      b.m = arm(sizes[s]);
      if (!b.m) {
        return;
      }
      b.m->opt.integrator = integ ? SIM_INTEGRATOR_RK4 : SIM_INTEGRATOR_EULER;
      b.start = sim_data_new(b.m), b.d = sim_data_new(b.m), b.scratch = sim_data_new(b.m);
      b.w = sim_deriv_new(b.m, NULL, 0, err, sizeof err);
      int nx = sim_deriv_nx(b.m);
      b.A = calloc((size_t)nx * (size_t)(nx + b.m->nu), sizeof(double));
      b.B = b.A + nx * nx;
      arm_state(b.m, b.start);
      double ns[NJOB];
      time_jobs(&b, ns);
      printf("| %d | %s | %.0f | %.0f | %.0f | %.2f | %.1f |\n", sizes[s],
             sim_integrator_name(b.m->opt.integrator), ns[JOB_STEP], ns[JOB_DERIV], ns[JOB_FD],
             ns[JOB_DERIV] / ns[JOB_STEP], ns[JOB_FD] / ns[JOB_DERIV]);
      free(b.A);
      sim_deriv_free(&b.w);
      sim_data_free(b.start), sim_data_free(b.d), sim_data_free(b.scratch);
      sim_model_free(b.m);
    }
  }
  printf("\nFor scale: Pinocchio's analytical ABA derivatives take about 3 µs for a 7-dof arm "
         "(Carpentier and Mansard, RSS 2018, on the hardware of 2018).\n\n");
}

/* --- memory of a run, in a child process -------------------------------------------------------- */

static long status_kb(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  size_t n = strlen(key);
  while (f && fgets(line, sizeof line, f)) {
    if (strncmp(line, key, n) == 0) {
      kb = atol(line + n);
    }
  }
  if (f) {
    fclose(f);
  }
  return kb;
}

/* runs fn(ctx) in a child and returns the memory it added at its peak, bytes (-1 on failure) */
static double child_peak(void (*fn)(void *), void *ctx) {
  int fds[2];
  if (pipe(fds) != 0) {
    return -1;
  }
  fflush(NULL); /* the child must not write the parent's buffered output again */
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    malloc_trim(0); /* what the parent freed is not counted as the run's */
    double before = (double)status_kb("VmRSS:");
    fn(ctx);
    double added = 1024.0 * ((double)status_kb("VmHWM:") - before);
    ssize_t w = write(fds[1], &added, sizeof added);
    _exit(w == (ssize_t)sizeof added ? 0 : 1);
  }
  close(fds[1]);
  double added = -1;
  if (pid < 0 || read(fds[0], &added, sizeof added) != (ssize_t)sizeof added) {
    added = -1;
  }
  close(fds[0]);
  if (pid > 0) {
    waitpid(pid, NULL, 0);
  }
  return added;
}

/* --- 2. rollout gradients --------------------------------------------------------------------- */

typedef struct rollout_bench {
  sim_model *m;
  sim_data *d0, *d;
  int T, k, n;
  double *ctrl, *ref, *grad, *grad_adolc;
  sim_param params[64];
  int np;
  sim_tracking_loss loss;
  adolc_result adolc;
  double seconds;
} rollout_bench;

static int rollout_open(rollout_bench *r, int T) {
  char err[256];
  memset(r, 0, sizeof *r);
  r->m = arm(7);
  if (!r->m) {
    return -1;
  }
  r->T = T, r->k = 1;
  r->np = sim_param_parse(r->m, "body/*/mass,joint/*/damping,joint/*/armature", r->params, 64, err,
                          sizeof err);
  int nv = r->m->nv, nu = r->m->nu;
  r->n = 2 * nv + T * nu + r->np;
  r->d0 = sim_data_new(r->m), r->d = sim_data_new(r->m);
  r->ctrl = calloc((size_t)T * (size_t)nu, sizeof(double));
  r->ref = calloc((size_t)(T + 1) * (size_t)r->m->nq, sizeof(double));
  r->grad = calloc(2 * (size_t)r->n, sizeof(double));
  r->grad_adolc = r->grad + r->n;
  if (!r->d0 || !r->d || !r->ctrl || !r->ref || !r->grad || r->np < 0) {
    return -1;
  }
  arm_state(r->m, r->d0);
  for (int t = 0; t < T; t++) {
    for (int i = 0; i < nu; i++) {
      r->ctrl[t * nu + i] = 2.0 * sin(0.9 * i + 0.01 * t);
    }
  }
  for (int t = 0; t <= T; t++) {
    for (int k = 0; k < nv; k++) {
      r->ref[t * nv + k] = 0.3 * sin(1.3 * k + 0.4 + 0.004 * t);
    }
  }
  r->loss = (sim_tracking_loss){r->ref, 1.0, 0.0, 1e-3, 10.0};
  return 0;
}

static void rollout_close(rollout_bench *r) {
  sim_data_free(r->d0);
  sim_data_free(r->d);
  free(r->ctrl);
  free(r->ref);
  free(r->grad);
  sim_model_free(r->m);
}

static void ours(void *ctx) {
  rollout_bench *r = ctx;
  char err[256];
  double t0 = now(), loss;
  sim_rollout *ro = sim_rollout_new(r->m, r->params, r->np, r->T, r->k, err, sizeof err);
  fd_copy_state(r->m, r->d, r->d0);
  int nx = sim_deriv_nx(r->m);
  int rc = ro ? sim_rollout_gradient(ro, r->d, r->ctrl, sim_loss_tracking, &r->loss, &loss,
                                     r->grad, r->grad + nx, r->grad + nx + r->T * r->m->nu)
              : -1;
  sim_rollout_free(&ro);
  r->seconds = rc == 0 ? now() - t0 : -1;
}

static void adolc(void *ctx) {
  rollout_bench *r = ctx;
  r->seconds = -1;
#ifdef BENCH_HAVE_ADOLC
  double t0 = now();
  int rc = adolc_rollout_gradient(r->m, r->d0, r->T, r->ctrl, r->ref, 1.0, 1e-3, 10.0, r->params,
                                  r->np, r->grad_adolc, &r->adolc);
  r->seconds = rc == 0 ? now() - t0 : -1;
#endif
}

/* one rollout's loss (the unit of the finite differences) */
static void one_rollout(void *ctx) {
  rollout_bench *r = ctx;
  double t0 = now(), gx[64], gu[64];
  fd_copy_state(r->m, r->d, r->d0);
  double total = 0;
  for (int t = 0; t <= r->T; t++) {
    memset(gx, 0, sizeof gx), memset(gu, 0, sizeof gu);
    if (t < r->T) {
      memcpy(r->d->ctrl, r->ctrl + t * r->m->nu, (size_t)r->m->nu * sizeof(double));
    }
    sim_kinematics(r->m, r->d);
    total += sim_loss_tracking(&r->loss, r->m, r->d, t, r->T, gx, t < r->T ? gu : NULL);
    if (t < r->T) {
      sim_step(r->m, r->d);
    }
  }
  r->seconds = total == total ? now() - t0 : -1;
}

static double timed(void (*fn)(void *), rollout_bench *r, int runs) {
  double t[5];
  for (int k = 0; k < runs; k++) {
    fn(r);
    t[k] = r->seconds;
  }
  return median(t, runs);
}

static double mb(double bytes) {
  return bytes / 1048576.0;
}

/* the memory figures, all taken before any timed run (a parent that has run nothing keeps no
 * resident free memory for a child to reuse) */
typedef struct memory {
  double ours[8], adolc[8], interval[4];
} memory;

static int interval_k(int i, int T) {
  const int ks[3] = {1, 10, 100};
  return i < 3 ? ks[i] : (int)ceil(sqrt((double)T));
}

static void measure_memory(memory *mem, const int *steps, int nsteps) {
  for (int s = 0; s < nsteps; s++) {
    rollout_bench r;
    if (rollout_open(&r, steps[s]) != 0) {
      return;
    }
    mem->ours[s] = child_peak(ours, &r);
    mem->adolc[s] = child_peak(adolc, &r);
    rollout_close(&r);
  }
  for (int i = 0; i < 4; i++) {
    rollout_bench r;
    if (rollout_open(&r, steps[nsteps - 1]) != 0) {
      return;
    }
    r.k = interval_k(i, r.T);
    mem->interval[i] = child_peak(ours, &r);
    rollout_close(&r);
  }
}

static void rollout_gradients(const int *steps, int nsteps, const memory *mem) {
  printf("## Rollout gradient, 7-link arm, %d inputs per step + 14 + 21 parameters\n\n", 7);
  printf("| steps | ours (s) | ADOL-C tape + gradient (s) | FD (s, 2 rollouts per input) | "
         "ADOL-C / ours | FD / ours | ours: peak MB added | ADOL-C: peak MB added | ADOL-C tape "
         "MB | ADOL-C / ours (memory) | largest gradient difference |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int s = 0; s < nsteps; s++) {
    rollout_bench r;
    if (rollout_open(&r, steps[s]) != 0) {
      fprintf(stderr, "bench_deriv: setup failed\n");
      return;
    }
    int runs = quick || steps[s] >= 5000 ? 1 : 3;
    double t_ours = timed(ours, &r, runs);
    double t_adolc = timed(adolc, &r, runs);
    double t_one = timed(one_rollout, &r, runs), t_fd = 2.0 * r.n * t_one;
    double diff = 0, scale = 0;
    for (int k = 0; k < r.n; k++) {
      diff = fmax(diff, fabs(r.grad[k] - r.grad_adolc[k]));
      scale = fmax(scale, fabs(r.grad[k]));
    }
    printf("| %d | %.4f | %.4f (%.4f + %.4f) | %.3g | %.1f | %.0f | %.2f | %.1f | %.1f | %.0f | "
           "%.1e of the largest |",
           r.T, t_ours, t_adolc, r.adolc.tape_seconds, r.adolc.gradient_seconds, t_fd,
           t_adolc / t_ours, t_fd / t_ours, mb(mem->ours[s]), mb(mem->adolc[s]),
           mb((double)r.adolc.tape_bytes), mem->adolc[s] / fmax(mem->ours[s], 1),
           diff / fmax(scale, 1e-300));
    printf("\n");
    rollout_close(&r);
  }
  printf("\nFD's time is one rollout's (measured) times 2·(inputs); its memory is one rollout's "
         "data. \"Peak MB added\": the growth of the process's peak resident memory while the "
         "gradient runs (a fresh child process each). The tape: %s.\n\n",
         "ADOL-C's operations (1 byte), locations (4 bytes) and values (8 bytes)");
}

/* --- 3. memory against the checkpoint interval -------------------------------------------------- */

static void checkpoint_interval(int T, const memory *mem) {
  printf("## Rollout gradient of %d steps against the checkpoint interval k\n\n", T);
  printf("| k | states kept | their bytes | peak MB added | time (s) |\n|---|---|---|---|---|\n");
  for (int i = 0; i < 4; i++) {
    rollout_bench r;
    char err[256];
    if (rollout_open(&r, T) != 0) {
      return;
    }
    r.k = interval_k(i, T);
    sim_rollout *ro = sim_rollout_new(r.m, r.params, r.np, T, r.k, err, sizeof err);
    size_t bytes = sim_rollout_state_bytes(ro), one = sim_rollout_checkpoint_bytes(ro);
    sim_rollout_free(&ro);
    double t = timed(ours, &r, quick ? 1 : 3);
    printf("| %d%s | %zu | %zu | %.2f | %.4f |\n", r.k, i == 3 ? " (√T)" : "", bytes / one, bytes,
           mb(mem->interval[i]), t);
    rollout_close(&r);
  }
  printf("\n");
}

/* N calls from the arm's moving state (the step's start restored before each), nothing timed */
static int calls(int links, const char *integrator, long n, int plain) {
  char err[256];
  sim_model *m = arm(links);
  if (!m) {
    return 1;
  }
  m->opt.integrator = strcmp(integrator, "rk4") == 0 ? SIM_INTEGRATOR_RK4 : SIM_INTEGRATOR_EULER;
  sim_data *start = sim_data_new(m), *d = sim_data_new(m);
  sim_deriv *w = sim_deriv_new(m, NULL, 0, err, sizeof err);
  int nx = sim_deriv_nx(m);
  double *A = calloc((size_t)nx * (size_t)(nx + m->nu), sizeof(double)), *B = A + nx * nx;
  arm_state(m, start);
  int rc = 0;
  for (long r = 0; r < n && rc == 0; r++) {
    fd_copy_state(m, d, start);
    if (plain) {
      sim_step(m, d);
    } else {
      rc = sim_deriv_step(m, d, w, A, B, NULL);
    }
  }
  free(A);
  sim_deriv_free(&w);
  sim_data_free(start), sim_data_free(d);
  sim_model_free(m);
  return rc != 0;
}

int main(int argc, char **argv) {
  int steps[8] = {50, 500, 5000}, nsteps = 3;
  if (argc >= 5 && strcmp(argv[1], "--calls") == 0) {
    return calls(atoi(argv[2]), argv[3], atol(argv[4]), argc > 5 && strcmp(argv[5], "--plain") == 0);
  }
  for (int a = 1; a < argc; a++) {
    if (strcmp(argv[a], "--quick") == 0) {
      quick = 1;
    } else if (strcmp(argv[a], "--jacobians") == 0) {
      jacobians_only = 1;
    } else if (strcmp(argv[a], "--steps") == 0 && a + 1 < argc) {
      nsteps = 0;
      for (char *p = argv[++a]; *p && nsteps < 8;) {
        steps[nsteps++] = (int)strtol(p, &p, 10);
        p += *p == ',';
      }
    } else {
      printf("usage: bench_deriv [--quick] [--jacobians] [--steps N,N,...]\n"
             "       bench_deriv --calls LINKS euler|rk4 N [--plain]\n\n"
             "Step Jacobians beside sim_step and finite differences; rollout gradients beside\n"
             "ADOL-C and finite differences (time, peak memory, tape size); memory against the\n"
             "checkpoint interval. Prints markdown tables (docs/benchmarks.md).\n"
             "--jacobians: the step Jacobians only (seconds).\n"
             "--calls: N calls of sim_deriv_step (sim_step with --plain) on the LINKS-link arm,\n"
             "nothing printed, for an instruction counter such as valgrind --tool=callgrind.\n");
      return strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0 ? 0 : 2;
    }
  }
  /* large blocks always fresh mappings (glibc would otherwise raise its mmap threshold after
   * the first large free and serve them from resident heap): their pages count when touched */
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  if (jacobians_only) {
    step_jacobians();
    return 0;
  }
  memory mem = {{0}, {0}, {0}};
  measure_memory(&mem, steps, nsteps);
  step_jacobians();
  rollout_gradients(steps, nsteps, &mem);
  checkpoint_interval(steps[nsteps - 1], &mem);
  return 0;
}
