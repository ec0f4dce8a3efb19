/* tools/bench/bench_sysid.c: the sysid fit beside a derivative-free optimizer on the same cost,
 * in one process (docs/benchmarks.md, "System identification").
 *
 * The problem: the club arm (configs/club_arm.json: four joints, DC gearmotors on duty, Coulomb
 * friction, the table) driven for 60 s at 1 kHz by the example firmware's control law in process
 * (pd_firmware.c: PD on the measured angles, duty clamped to ±1, chirped set points 0.2–2 Hz, the
 * shoulder held up at −0.4 rad, as docs/sysid.md section 9), its readings made by the shipped
 * sensors file (configs/club_arm.sensors.json: latency, scale error, offset, noise, counts), then
 * 12 parameters (each joint's damping, armature, frictionloss) fitted from 35–40 % off.
 *
 * Both minimize the same function of the 12 parameters: ½Σ(residual/σ)² with each window's initial
 * state taken from the log (--initial-state log; fitted states would add 8 unknowns a window, out of
 * a derivative-free method's reach), in the fit's coordinates (log θ), from the same start:
 *   - sysid_fit: GSL's trust region on the Jacobian from the step derivatives;
 *   - NLopt's BOBYQA (libnlopt-dev) on sysid_residual's cost alone, bounds x0 ± 3 (a factor e³),
 *     initial step 0.3, until it reaches the fit's final cost (within 0.1 %) or --max-evals.
 * Printed: simulated seconds (steps × h over every evaluation, sysid_simulated_seconds: a
 * sensitivity step counts as one step, so this ratio flatters the derivative-free side) and wall
 * time to reach the fit's final cost within 10 %, 1 % and 0.1 %, and the ratios.
 * --nelder-mead: NLopt's Nelder–Mead instead of BOBYQA (same bounds and step).
 * Usage: bench_sysid [--duration S] [--max-evals N] [--window S] [--nelder-mead]. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <nlopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "sensors/sensors.h"
#include "sim/import/import.h"
#include "sim/sim.h"
#include "sysid/sensor_meas.h"
#include "sysid/series.h"
#include "sysid/sysid.h"

#define ARM ACHILLES_SOURCE_DIR "/configs/club_arm.json"
#define SENSORS ACHILLES_SOURCE_DIR "/configs/club_arm.sensors.json"
#define PARAMS "joint.*.damping,joint.*.armature,joint.*.frictionloss"
#define NJ 4
#define PI 3.14159265358979323846

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* wall time, and this thread's CPU time: on a machine other work shares, the CPU time is what
 * the method cost, the wall time what the user waited */
static double now(void) {
  return clock_s(CLOCK_MONOTONIC);
}

static double cpu(void) {
  return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

/* --- the log: the arm under the example firmware's law, read through the sensors -------------- */

typedef struct capture {
  int joint_of[64]; /* sensor index → series joint, -1 */
  double *q;        /* the row being filled */
} capture;

static void on_sample(void *user, const sens_sensor *s, const sens_sample *smp) {
  capture *c = user;
  const sens_encoder *e = &s->u.enc;
  if (s->type != SENS_ENCODER || c->joint_of[e->joint] < 0) {
    return;
  }
  const double v = !smp->valid ? NAN
                   : e->ch_angle >= 0 ? smp->meas[e->ch_angle]
                                      : smp->meas[e->ch_counts] * e->step;
  c->q[c->joint_of[e->joint]] = v;
}

/* pd_firmware's chirp (pd_firmware.c, chirp_offset) */
static double chirp(double t, double amp) {
  const double f0 = 0.2, f1 = 2, T = 10, tau = fmod(t, T);
  return amp * sin(2 * PI * (f0 * tau + (f1 - f0) * tau * tau / (2 * T)));
}

static int make_log(const sim_model *m, sens_set *set, double duration, sysid_series *s) {
  static const double kp[NJ] = {20, 20, 20, 2}, kd[NJ] = {0.3, 0.3, 0.3, 0.01};
  static const double sp[NJ] = {0, -0.4, 0, 0}, amp[NJ] = {0.6, 0.3, 0.5, 1.0};
  static const char *const joints[NJ] = {"base_yaw", "shoulder", "elbow", "wrist_roll"};
  static const char *const acts[NJ] = {"base_motor", "shoulder_motor", "elbow_motor", "wrist_motor"};
  memset(s, 0, sizeof *s);
  s->njoint = s->nact = NJ;
  s->joint_name = calloc(NJ, sizeof *s->joint_name);
  s->act_name = calloc(NJ, sizeof *s->act_name);
  capture c;
  double q[NJ], u[NJ] = {0}, qf[NJ] = {0}, vf[NJ] = {0}, tf[NJ] = {0};
  int have[NJ] = {0}, ja[NJ];
  for (int i = 0; i < 64; i++) {
    c.joint_of[i] = -1;
  }
  for (int j = 0; j < NJ; j++) {
    s->joint_name[j] = strdup(joints[j]);
    s->act_name[j] = strdup(acts[j]);
    c.joint_of[sim_model_joint(m, joints[j])] = j;
    ja[j] = sim_model_actuator(m, acts[j]);
  }
  c.q = q;
  sens_set_callback(set, on_sample, &c);
  sim_data *d = sim_data_new(m);
  const double h = m->opt.timestep;
  const long steps = lround(duration / h);
  int cap = 0, rc = 0;
  for (long k = 0; k <= steps && rc == 0; k++) {
    for (int j = 0; j < NJ; j++) {
      q[j] = NAN;
    }
    sens_set_update(set, m, d); /* the samples at d->time (t = 0 before the first step) */
    /* the firmware: the newest readings, a filtered velocity, a clamped PD duty */
    for (int j = 0; j < NJ; j++) {
      if (isfinite(q[j])) {
        if (have[j] && d->time > tf[j]) {
          const double a = 1 - exp(-2 * PI * 50 * (d->time - tf[j]));
          vf[j] += a * ((q[j] - qf[j]) / (d->time - tf[j]) - vf[j]);
        }
        qf[j] = q[j], tf[j] = d->time, have[j] = 1;
      }
      const double e = sp[j] + chirp(d->time, amp[j]) - qf[j];
      u[j] = have[j] ? fmax(-1, fmin(1, kp[j] * e - kd[j] * vf[j])) : 0;
      d->ctrl[ja[j]] = u[j];
    }
    rc = sysid_series_push(s, &cap, d->time, q, u);
    sim_step(m, d);
  }
  sim_data_free(d);
  return rc;
}

/* --- the guess: the robot file with each joint's figures off --------------------------------- */

static sim_model *guess_model(void) {
  char err[512];
  const sim_import_options o = {0, NULL, NULL};
  cJSON *doc = sim_import_file(ARM, &o, err, sizeof err);
  cJSON *b;
  cJSON_ArrayForEach(b, cJSON_GetObjectItem(doc, "bodies")) {
    cJSON *j = cJSON_GetObjectItem(b, "joint");
    static const char *const key[3] = {"damping", "armature", "frictionloss"};
    static const double f[3] = {1.4, 0.6, 1.35};
    for (int k = 0; k < 3; k++) {
      cJSON *v = cJSON_GetObjectItem(j, key[k]);
      cJSON_SetNumberValue(v, v->valuedouble * f[k]);
    }
  }
  char *text = cJSON_PrintUnformatted(doc);
  cJSON_Delete(doc);
  sim_model *m = sim_model_load_string(text, "guess", err, sizeof err);
  free(text);
  return m;
}

/* --- BOBYQA on the same cost ------------------------------------------------------------------ */

#define NMARK 3
static const double mark_rel[NMARK] = {0.1, 0.01, 0.001};

typedef struct race {
  sysid_problem *p;
  double *r;
  double target;            /* the fit's final cost */
  double t0, c0, sim0, best;
  long evals;
  nlopt_opt opt;
  double at_time[NMARK], at_cpu[NMARK], at_sim[NMARK];
  long at_evals[NMARK];
} race;

static double cost(unsigned n, const double *x, double *grad, void *data) {
  (void)n, (void)grad;
  race *c = data;
  char err[256];
  double f = HUGE_VAL;
  if (sysid_residual(c->p, x, c->r, NULL, err, sizeof err) == 0) {
    f = 0;
    for (int i = 0; i < sysid_nresidual(c->p); i++) {
      f += 0.5 * c->r[i] * c->r[i];
    }
  }
  c->evals++;
  c->best = fmin(c->best, f);
  for (int k = 0; k < NMARK; k++) {
    if (c->at_evals[k] == 0 && c->best <= c->target * (1 + mark_rel[k])) {
      c->at_time[k] = now() - c->t0;
      c->at_cpu[k] = cpu() - c->c0;
      c->at_sim[k] = sysid_simulated_seconds(c->p) - c->sim0;
      c->at_evals[k] = c->evals;
    }
  }
  if (c->at_evals[NMARK - 1]) {
    nlopt_force_stop(c->opt); /* reached: the race is over */
  }
  return f;
}

/* --- the fit's own progress, for the same marks ------------------------------------------------ */

typedef struct fit_clock {
  sysid_problem *p;
  double t0, c0, sim0;
  int n;
  double cost[1000], t[1000], c[1000], sim[1000];
} fit_clock;

static void on_progress(void *ctx, int iter, double c, double step) {
  (void)iter, (void)step;
  fit_clock *f = ctx;
  if (f->n < 1000) {
    f->cost[f->n] = c;
    f->t[f->n] = now() - f->t0;
    f->c[f->n] = cpu() - f->c0;
    f->sim[f->n] = sysid_simulated_seconds(f->p) - f->sim0;
    f->n++;
  }
}

/* The fit as `achilles sysid` runs it by default (window states fitted too): not comparable
 * with BOBYQA (8 more unknowns a window), printed for what 60 s of this arm costs in use. */
static void fitted_states(const sim_model *guess, const sysid_series *s, const sysid_meas *meas) {
  static const double truth[12] = {0.05, 0.08, 0.05, 0.01, 0.002, 0.003, 0.002, 0.0005,
                                   0.02, 0.03, 0.02, 0.005};
  char err[512];
  sysid_options opt;
  sysid_options_default(&opt);
  sysid_problem *p = sysid_problem_new(guess, s, PARAMS, NULL, meas, &opt, err, sizeof err);
  sysid_report rep;
  const double t0 = now();
  if (!p || sysid_fit(p, &rep, err, sizeof err) != 0) {
    printf("the fit with fitted states failed: %s\n", err);
    sysid_problem_free(&p);
    return;
  }
  double worst = 0;
  for (int i = 0; i < rep.np && i < 12; i++) {
    worst = fmax(worst, fabs(rep.param[i].value - truth[i]) / truth[i]);
  }
  printf("\nthe default fit (window states fitted too: %d unknowns): %d iterations, cost %.9g -> "
         "%.9g (%d residuals), %.4g simulated s, %.3f s wall; worst parameter off by %.3f %%\n",
         sysid_nunknown(p), rep.iterations, rep.cost_before, rep.cost_after, rep.nresidual,
         sysid_simulated_seconds(p), now() - t0, 100 * worst);
  sysid_report_free(&rep);
  sysid_problem_free(&p);
}

int main(int argc, char **argv) {
  double duration = 60, window = 0;
  int method = NLOPT_LN_BOBYQA;
  long max_evals = 2000;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--duration") == 0 && i + 1 < argc) {
      duration = atof(argv[++i]);
    } else if (strcmp(argv[i], "--nelder-mead") == 0) {
      method = NLOPT_LN_NELDERMEAD;
    } else if (strcmp(argv[i], "--window") == 0 && i + 1 < argc) {
      window = atof(argv[++i]);
    } else if (strcmp(argv[i], "--max-evals") == 0 && i + 1 < argc) {
      max_evals = atol(argv[++i]);
    } else {
      printf("usage: bench_sysid [--duration S (60)] [--max-evals N (2000)] [--window S] [--nelder-mead]\n"
             "The sysid fit (GSL trust region, Jacobian from the step derivatives) beside NLopt's\n"
             "BOBYQA on the same cost: the club arm, 12 parameters, S seconds at 1 kHz.\n");
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  char err[1024];
  const sim_import_options o = {0, NULL, NULL};
  sim_model *truth = sim_import_load_file(ARM, &o, err, sizeof err);
  sens_set *set = NULL;
  if (!truth || sens_set_load_file(&set, truth, SENSORS, err, sizeof err) != 0) {
    fprintf(stderr, "bench_sysid: %s\n", err);
    return 1;
  }
  sysid_series s;
  const double tl = now();
  if (make_log(truth, set, duration, &s) != 0) {
    fprintf(stderr, "bench_sysid: out of memory\n");
    return 1;
  }
  printf("log: the club arm under the example firmware's law, %g s at 1 kHz (%d samples), made in "
         "%.2f s\n", duration, s.n, now() - tl);
  sysid_meas meas[NJ];
  sysid_meas_from_sensors(meas, NULL, &s, truth, set);
  sim_model *guess = guess_model();
  sysid_options opt;
  sysid_options_default(&opt);
  opt.fit_initial_state = 0;
  if (window > 0) {
    opt.window = window;
  }
  fit_clock fc = {0};
  opt.progress = on_progress;
  opt.ctx = &fc;
  sysid_problem *p = sysid_problem_new(guess, &s, PARAMS, NULL, meas, &opt, err, sizeof err);
  if (!p) {
    fprintf(stderr, "bench_sysid: %s\n", err);
    return 1;
  }
  const int nx = sysid_nunknown(p);
  printf("problem: %d parameters, %d windows of %g s, %d residuals, %d unknowns (window states "
         "from the log)\n\n", sysid_nparam(p), sysid_nwindow(p), opt.window, sysid_nresidual(p), nx);
  double *x0 = malloc((size_t)nx * sizeof *x0);
  sysid_start(p, x0);

  /* 1. the fit */
  sysid_report rep;
  fc.p = p;
  fc.sim0 = sysid_simulated_seconds(p);
  fc.t0 = now();
  fc.c0 = cpu();
  if (sysid_fit(p, &rep, err, sizeof err) != 0) {
    fprintf(stderr, "bench_sysid: the fit failed: %s\n", err);
    return 1;
  }
  const double fit_wall = now() - fc.t0, fit_cpu = cpu() - fc.c0;
  const double fit_sim = sysid_simulated_seconds(p) - fc.sim0;
  const double target = rep.cost_after;
  printf("sysid_fit: %d iterations, cost %.9g -> %.9g, %.4g simulated s, %.3f s wall, %.3f s "
         "CPU (the report's identifiability included)\n", rep.iterations, rep.cost_before, target,
         fit_sim, fit_wall, fit_cpu);
  double fit_at_t[NMARK], fit_at_c[NMARK], fit_at_sim[NMARK];
  for (int k = 0; k < NMARK; k++) {
    fit_at_t[k] = fit_wall, fit_at_c[k] = fit_cpu, fit_at_sim[k] = fit_sim;
    for (int i = 0; i < fc.n; i++) {
      if (fc.cost[i] <= target * (1 + mark_rel[k])) {
        fit_at_t[k] = fc.t[i], fit_at_c[k] = fc.c[i], fit_at_sim[k] = fc.sim[i];
        break;
      }
    }
  }

  /* 2. BOBYQA (or Nelder–Mead) from the same start, on the same cost */
  const char *method_name = method == NLOPT_LN_BOBYQA ? "BOBYQA" : "Nelder-Mead";
  nlopt_opt no = nlopt_create((nlopt_algorithm)method, (unsigned)nx);
  race c = {p, malloc((size_t)sysid_nresidual(p) * sizeof(double)), target, 0, 0, 0, HUGE_VAL,
            0, no, {0}, {0}, {0}, {0}};
  double *lo = malloc((size_t)nx * sizeof *lo), *hi = malloc((size_t)nx * sizeof *hi);
  double *x = malloc((size_t)nx * sizeof *x), fmin_found;
  for (int i = 0; i < nx; i++) {
    lo[i] = x0[i] - 3, hi[i] = x0[i] + 3, x[i] = x0[i];
  }
  nlopt_set_lower_bounds(no, lo);
  nlopt_set_upper_bounds(no, hi);
  nlopt_set_initial_step1(no, 0.3);
  nlopt_set_min_objective(no, cost, &c);
  nlopt_set_maxeval(no, (int)max_evals);
  nlopt_set_ftol_rel(no, 1e-12);
  c.sim0 = sysid_simulated_seconds(p);
  c.t0 = now();
  c.c0 = cpu();
  const nlopt_result nr = nlopt_optimize(no, x, &fmin_found);
  const double nl_wall = now() - c.t0, nl_cpu = cpu() - c.c0;
  const double nl_sim = sysid_simulated_seconds(p) - c.sim0;
  printf("%s: %ld evaluations, best cost %.9g (NLopt result %d), %.4g simulated s, %.3f s "
         "wall, %.3f s CPU\n\n", method_name, c.evals, c.best, (int)nr, nl_sim, nl_wall, nl_cpu);

  printf("to the fit's final cost: simulated s, CPU s and wall s of the fit, then of %s, and "
         "the ratios %s/fit\n", method_name, method_name);
  printf("%-14s %9s %8s %8s %11s %9s %9s %8s %8s %8s\n", "", "fit sim", "fit CPU", "fit wall",
         "other sim", "other CPU", "oth. wall", "sim x", "CPU x", "wall x");
  for (int k = 0; k < NMARK; k++) {
    char label[32];
    snprintf(label, sizeof label, "within %g %%", 100 * mark_rel[k]);
    if (c.at_evals[k]) {
      printf("%-14s %9.4g %8.3f %8.3f %11.4g %9.3f %9.3f %8.1f %8.1f %8.1f\n", label,
             fit_at_sim[k], fit_at_c[k], fit_at_t[k], c.at_sim[k], c.at_cpu[k], c.at_time[k],
             c.at_sim[k] / fit_at_sim[k], c.at_cpu[k] / fit_at_c[k], c.at_time[k] / fit_at_t[k]);
    } else {
      printf("%-14s %9.4g %8.3f %8.3f %11s %9s %9s  not reached in %ld evaluations: > %.1f, "
             "> %.1f, > %.1f\n", label, fit_at_sim[k], fit_at_c[k], fit_at_t[k], "-", "-", "-",
             c.evals, nl_sim / fit_at_sim[k], nl_cpu / fit_at_c[k], nl_wall / fit_at_t[k]);
    }
  }
  printf("(the fit's whole run, its report's identifiability analysis included: %.3f s CPU; "
         "%s's CPU time to its best over that: %.1f)\n", fit_cpu, method_name, nl_cpu / fit_cpu);
  printf("\nfitted by sysid_fit (truth: damping 0.05 0.08 0.05 0.01, armature 0.002 0.003 0.002 "
         "0.0005, frictionloss 0.02 0.03 0.02 0.005):\n");
  for (int i = 0; i < rep.np; i++) {
    printf("  %-30s %.6g\n", rep.param[i].name, rep.param[i].value);
  }
  fitted_states(guess, &s, meas);
  nlopt_destroy(no);
  free(lo), free(hi), free(x), free(x0), free(c.r);
  sysid_report_free(&rep);
  sysid_problem_free(&p);
  sysid_series_free(&s);
  sens_set_free(&set);
  sim_model_free(guess);
  sim_model_free(truth);
  return 0;
}
