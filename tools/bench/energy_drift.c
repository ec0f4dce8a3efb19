/* tools/bench/energy_drift.c: energy drift of each integrator on the double pendulum.
 *
 * Releases the model at rest from its initial positions (horizontal for
 * configs/double_pendulum.json), runs it for --duration s at --dt s with each integrator (the
 * implicit midpoint with the model's midpoint_iterations), and prints a markdown table of
 * max |E(t) − E(0)| and the midpoint's final fixed-point residual.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

#define DEFAULT_CONFIG "configs/double_pendulum.json"

static void usage(FILE *out) {
  fprintf(out,
          "usage: energy_drift [--config PATH] [--duration S] [--dt S]\n"
          "\n"
          "Energy drift of each integrator: max |E(t) - E(0)| over the run, from rest at the\n"
          "model's initial positions, printed as a markdown table.\n"
          "\n"
          "  --config PATH   robot description (default " DEFAULT_CONFIG ")\n"
          "  --duration S    simulated time in seconds (default 10)\n"
          "  --dt S          time step in seconds (default 0.002)\n"
          "  --help          this text\n");
}

/* strictly positive finite number, or -1 */
static double parse_positive(const char *s) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v > 0) || !isfinite(v)) return -1;
  return v;
}

static double total_energy(const sim_model *m, sim_data *d) {
  sim_kinematics(m, d);
  return sim_energy_kinetic(m, d) + sim_energy_potential(m, d);
}

typedef struct drift_result {
  double max_error; /* J */
  double residual;  /* midpoint only */
  double e0;        /* J */
} drift_result;

static int run(sim_model *m, sim_integrator integ, double dt, long nstep, drift_result *r) {
  m->opt.integrator = integ;
  m->opt.timestep = dt;
  sim_data *d = sim_data_new(m);
  if (!d) return -1;
  sim_data_reset(m, d);
  r->e0 = total_energy(m, d);
  r->max_error = 0;
  for (long k = 0; k < nstep; k++) {
    sim_step(m, d);
    r->max_error = fmax(r->max_error, fabs(total_energy(m, d) - r->e0));
  }
  r->residual = d->midpoint_residual;
  sim_data_free(d);
  return 0;
}

int main(int argc, char **argv) {
  const char *config = DEFAULT_CONFIG;
  double duration = 10.0, dt = 0.002;

  /* arguments */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    }
    if (i + 1 >= argc ||
        (strcmp(a, "--config") && strcmp(a, "--duration") && strcmp(a, "--dt"))) {
      fprintf(stderr, "energy_drift: unknown or incomplete argument '%s'\n", a);
      usage(stderr);
      return 2;
    }
    const char *v = argv[++i];
    if (!strcmp(a, "--config")) {
      config = v;
    } else {
      double x = parse_positive(v);
      if (x < 0) {
        fprintf(stderr, "energy_drift: %s expects a positive number of seconds, got '%s'\n", a, v);
        return 2;
      }
      if (!strcmp(a, "--duration")) duration = x;
      else dt = x;
    }
  }

  /* model */
  char err[512];
  sim_model *m = sim_model_load_file(config, err, sizeof err);
  if (!m) {
    fprintf(stderr, "energy_drift: %s\n", err);
    return 1;
  }
  long nstep = lround(duration / dt);
  if (nstep < 1) nstep = 1;

  /* table */
  static const sim_integrator all[] = {SIM_INTEGRATOR_EULER, SIM_INTEGRATOR_VERLET,
                                       SIM_INTEGRATOR_MIDPOINT, SIM_INTEGRATOR_RK4};
  printf("Energy drift of %s: %ld steps of %g s (%g s), midpoint with %d iterations.\n\n",
         m->name, nstep, dt, (double)nstep * dt, m->opt.midpoint_iterations);
  printf("| integrator | max energy error (J) | final residual (midpoint) |\n");
  printf("|---|---|---|\n");
  int status = 0;
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    drift_result r;
    if (run(m, all[i], dt, nstep, &r)) {
      fprintf(stderr, "energy_drift: out of memory\n");
      status = 1;
      break;
    }
    if (all[i] == SIM_INTEGRATOR_MIDPOINT)
      printf("| %s | %.3e | %.3e |\n", sim_integrator_name(all[i]), r.max_error, r.residual);
    else
      printf("| %s | %.3e | — |\n", sim_integrator_name(all[i]), r.max_error);
  }
  sim_model_free(m);
  return status;
}
