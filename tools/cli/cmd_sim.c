/* tools/cli/cmd_sim.c: `achilles sim`, a batch simulation without real-time pacing, CSV out. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_inputs.h"
#include "cli.h"
#include "commands.h"
#include "sim_jacobians.h"
#include "sim/import/import.h"
#include "sim/sim.h"

typedef struct sim_args {
  const char *config;
  const char *csv;
  double duration, dt;
  int has_duration, has_dt, integrator, every, solver;
  batch_inputs inputs; /* --torque, --qpos, --qvel, --ctrl */
  const char *jacobians, *jacobians_at, *params; /* --jacobians FILE (sim_jacobians.h) */
} sim_args;

static void usage(FILE *out) {
  fprintf(out,
          "usage: achilles sim CONFIG --duration SECONDS [options]\n\n"
          "Runs the robot described by CONFIG (robot JSON, MJCF or URDF) without real-time pacing and writes CSV:\n"
          "  time,<joint>.q,...,<joint>.qd,...,energy\n"
          "(joints in the order the file lists their bodies, even where a child comes before its\n"
          "parent; time in s of simulation time; q in rad or m; qd in\n"
          "rad/s or m/s; energy = kinetic + potential in J; 17 significant digits).\n\n"
          "options:\n"
          "  --duration S          simulated seconds to run (required)\n"
          "  --dt S                timestep, overriding the config\n"
          "  --integrator NAME     euler | verlet | midpoint | rk4, overriding the config\n"
          "  --torque JOINT=VALUE  constant generalized force on JOINT (N·m or N); repeatable\n"
          "  --ctrl ACTUATOR=VALUE constant command of ACTUATOR (its unit: docs/robot-format.md,\n"
          "                        within its ctrlrange); repeatable\n"
          "  --qpos JOINT=VALUE    initial position of JOINT (rad or m); repeatable\n"
          "  --qvel JOINT=VALUE    initial velocity of JOINT (rad/s or m/s); repeatable\n"
          "  --every K             write every K-th step (default 1)\n"
          "  --solver              add the constraint solver's columns after energy:\n"
          "                        contacts,rows,active,iterations,cost (the last step's:\n"
          "                        contacts found, constraint rows, rows carrying force,\n"
          "                        solver iterations, final cost; docs/architecture.md)\n"
          "  --csv FILE|-          output file (default -, standard output)\n"
          "  --jacobians FILE|-    write the step Jacobians A = dx+/dx and B = dx+/dctrl (and\n"
          "                        P = dx+/dparam for --params) at --jacobians-at's times: JSON\n"
          "                        when FILE ends in .json, else CSV time,matrix,row,column,value\n"
          "                        (docs/derivatives.md; euler and rk4 only)\n"
          "  --jacobians-at T,...  times in s (each at the start of its nearest step; default 0)\n"
          "  --params LIST         parameters for P, e.g. body/link1/mass,joint/*/damping\n"
          "  -h, --help            this text\n");
}

static int parse_option(sim_args *a, int opt, const char *arg) {
  char err[256] = "";
  double value = 0;
  switch (opt) {
  case 'd':
    a->has_duration = 1;
    if (cli_parse_double("--duration", arg, &a->duration, err, sizeof err) == 0 &&
        a->duration < 0) {
      snprintf(err, sizeof err, "--duration: must be >= 0 (got %s)", arg);
    }
    break;
  case 't':
    a->has_dt = 1;
    if (cli_parse_double("--dt", arg, &a->dt, err, sizeof err) == 0 && !(a->dt > 0)) {
      snprintf(err, sizeof err, "--dt: must be > 0 (got %s)", arg);
    }
    break;
  case 'i':
    a->integrator = sim_integrator_parse(arg);
    if (a->integrator < 0) {
      snprintf(err, sizeof err, "--integrator: expected euler, verlet, midpoint or rk4, got '%s'",
               arg);
    }
    break;
  case 'e':
    if (cli_parse_double("--every", arg, &value, err, sizeof err) == 0 &&
        (value < 1 || value != floor(value) || value > 1e9)) {
      snprintf(err, sizeof err, "--every: expected a positive integer, got '%s'", arg);
    }
    a->every = (int)value;
    break;
  case 'c':
    a->csv = arg;
    break;
  case 'S':
    a->solver = 1;
    break;
  case 'J':
    a->jacobians = arg;
    break;
  case 'W':
    a->jacobians_at = arg;
    break;
  case 'P':
    a->params = arg;
    break;
  default:
    if (!batch_inputs_option(&a->inputs, opt, arg, err, sizeof err)) {
      return -1;
    }
  }
  if (err[0]) {
    fprintf(stderr, "achilles sim: %s\n", err);
    return -1;
  }
  return 0;
}

/* Returns 0 to run, 1 when --help was answered, -1 on a usage error. */
static int parse_args(sim_args *a, int argc, char **argv) {
  static const struct option options[] = {
      {"duration", required_argument, NULL, 'd'}, {"dt", required_argument, NULL, 't'},
      {"integrator", required_argument, NULL, 'i'}, {"every", required_argument, NULL, 'e'},
      {"csv", required_argument, NULL, 'c'},        {"help", no_argument, NULL, 'h'},
      {"solver", no_argument, NULL, 'S'},          {"jacobians", required_argument, NULL, 'J'},
      {"jacobians-at", required_argument, NULL, 'W'}, {"params", required_argument, NULL, 'P'},
      BATCH_INPUTS_OPTIONS,                         {NULL, 0, NULL, 0}};
  memset(a, 0, sizeof *a);
  a->csv = "-";
  a->every = 1;
  a->integrator = -1;
  optind = 1;
  int opt;
  while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
    if (opt == 'h') {
      usage(stdout);
      return 1;
    }
    if (opt == '?' || parse_option(a, opt, optarg)) {
      fprintf(stderr, "Run 'achilles sim --help' for usage.\n");
      return -1;
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "achilles sim: expected exactly one CONFIG file\n");
    usage(stderr);
    return -1;
  }
  a->config = argv[optind];
  if (!a->has_duration) {
    fprintf(stderr, "achilles sim: --duration is required\n");
    return -1;
  }
  if (!a->jacobians && (a->jacobians_at || a->params)) {
    fprintf(stderr, "achilles sim: --jacobians-at and --params need --jacobians FILE\n");
    return -1;
  }
  if (a->jacobians && strcmp(a->jacobians, "-") == 0 && strcmp(a->csv, "-") == 0) {
    fprintf(stderr, "achilles sim: --jacobians - and the CSV (--csv) cannot both go to standard "
                    "output\n");
    return -1;
  }
  return 0;
}

/* Applies --dt, --integrator, --torque, --ctrl, --qpos and --qvel to the model and the initial
 * state. */
static int apply_args(const sim_args *a, sim_model *m, sim_data *d) {
  char err[768];
  if (a->has_dt) {
    m->opt.timestep = a->dt;
  }
  if (a->integrator >= 0) {
    m->opt.integrator = (sim_integrator)a->integrator;
  }
  if (batch_inputs_apply(&a->inputs, m, d, err, sizeof err)) {
    fprintf(stderr, "achilles sim: %s\n", err);
    return -1;
  }
  return 0;
}

/* Joints in the order the description lists their bodies (the model orders parents first). */
static void order_as_described(const sim_model *m, int *joints) {
  for (int j = 0; j < m->njnt; j++) {
    joints[j] = j;
  }
  for (int i = 1; i < m->njnt; i++) { /* insertion sort: a robot has few joints */
    int j = joints[i], k = i;
    int key = m->bodies[m->joints[j].body].described;
    while (k > 0 && m->bodies[m->joints[joints[k - 1]].body].described > key) {
      joints[k] = joints[k - 1];
      k--;
    }
    joints[k] = j;
  }
}

/* Column suffixes of each joint's coordinates: a hinge or slide has one position (.q) and one
 * velocity (.qd); a ball its quaternion (.qw .qx .qy .qz) and angular velocity in body axes
 * (.wx .wy .wz); a free joint its position and quaternion, then linear velocity in world axes
 * and angular velocity in body axes. */
static const char *const q_suffix[5][7] = {
    {0}, {"q"}, {"q"}, {"qw", "qx", "qy", "qz"}, {"x", "y", "z", "qw", "qx", "qy", "qz"}};
static const char *const v_suffix[5][6] = {
    {0}, {"qd"}, {"qd"}, {"wx", "wy", "wz"}, {"vx", "vy", "vz", "wx", "wy", "wz"}};

static void write_header(FILE *out, const sim_model *m, const int *joints, int solver) {
  fputs("time", out);
  for (int k = 0; k < m->njnt; k++) {
    const sim_joint *j = &m->joints[joints[k]];
    for (int c = 0; c < sim_joint_nq(j->type); c++) {
      fprintf(out, ",%s.%s", j->name, q_suffix[j->type][c]);
    }
  }
  for (int k = 0; k < m->njnt; k++) {
    const sim_joint *j = &m->joints[joints[k]];
    for (int c = 0; c < sim_joint_nv(j->type); c++) {
      fprintf(out, ",%s.%s", j->name, v_suffix[j->type][c]);
    }
  }
  fputs(solver ? ",energy,contacts,rows,active,iterations,cost\n" : ",energy\n", out);
}

/* One row at the current state; refreshes the derived values the energy needs. */
static void write_row(FILE *out, const sim_model *m, sim_data *d, const int *joints, int solver) {
  sim_kinematics(m, d);
  fprintf(out, "%.17g", d->time);
  for (int k = 0; k < m->njnt; k++) {
    const sim_joint *j = &m->joints[joints[k]];
    for (int c = 0; c < sim_joint_nq(j->type); c++) {
      fprintf(out, ",%.17g", d->qpos[j->qposadr + c]);
    }
  }
  for (int k = 0; k < m->njnt; k++) {
    const sim_joint *j = &m->joints[joints[k]];
    for (int c = 0; c < sim_joint_nv(j->type); c++) {
      fprintf(out, ",%.17g", d->qvel[j->dofadr + c]);
    }
  }
  fprintf(out, ",%.17g", sim_energy_kinetic(m, d) + sim_energy_potential(m, d));
  if (solver) {
    const sim_solver_stats *st = &d->solver;
    fprintf(out, ",%d,%d,%d,%d,%.17g", d->ncon, d->nefc, st->nactive, st->iterations, st->cost);
  }
  fputc('\n', out);
}

/* a state that turned NaN or infinite is not written: the run stops, naming the time and the
 * first joint (-2) */
static int stop_if_nonfinite(const sim_model *m, const sim_data *d) {
  const int j = sim_state_nonfinite(m, d);
  if (j < 0) {
    return 0;
  }
  fprintf(stderr, "achilles sim: t=%.17g s: joint \"%s\": the state is not finite: stopped (a "
                  "model singular at this pose, or a step too large for it)\n",
          d->time, m->joints[j].name);
  return -2;
}

/* round so that 4 s at 2 ms is exactly 2000 steps despite binary fractions */
static long long run_steps(const sim_args *a, const sim_model *m) {
  return llround(a->duration / m->opt.timestep);
}

/* Returns 0, -1 on a write error of the CSV, -2 when the Jacobians failed or the state turned
 * non-finite (message printed). */
static int simulate(const sim_args *a, sim_model *m, sim_data *d, FILE *out, sim_jacobians *jac) {
  long long steps = run_steps(a, m);
  int *joints = malloc((size_t)m->njnt * sizeof *joints + 1);
  char err[768];
  if (!joints) {
    return -1;
  }
  order_as_described(m, joints);
  write_header(out, m, joints, a->solver);
  write_row(out, m, d, joints, a->solver);
  int rc = 0;
  for (long long s = 1; s <= steps && rc == 0; s++) {
    if (!jac) {
      sim_step(m, d);
    } else if (sim_jacobians_step(jac, m, d, s - 1, err, sizeof err) != 0) {
      fprintf(stderr, "achilles sim: %s\n", err);
      free(joints);
      return -2;
    }
    rc = stop_if_nonfinite(m, d);
    if (rc == 0 && s % a->every == 0) {
      write_row(out, m, d, joints, a->solver);
    }
  }
  free(joints);
  return rc ? rc : ferror(out) ? -1 : 0;
}

static void print_note(void *ctx, const char *message) {
  (void)ctx;
  fprintf(stderr, "achilles sim: note: %s\n", message);
}

int achilles_cmd_sim(int argc, char **argv) {
  sim_args a;
  int parsed = parse_args(&a, argc, argv);
  if (parsed != 0) {
    return parsed > 0 ? 0 : 2;
  }
  char err[1024];
  /* MJCF and URDF too: what they hold that the model does not take, and bodies that overlap at
   * the initial pose, are notes on stderr */
  const sim_import_options import = {0, print_note, NULL};
  sim_model *m = sim_import_load_file(a.config, &import, err, sizeof err);
  if (!m) {
    fprintf(stderr, "achilles sim: %s\n", err);
    return 1;
  }
  sim_data *d = sim_data_new(m);
  FILE *out = NULL;
  sim_jacobians *jac = NULL;
  int status = 1;
  if (!d) {
    fprintf(stderr, "achilles sim: out of memory\n");
  } else if (apply_args(&a, m, d) == 0 &&
             (!a.jacobians || (jac = sim_jacobians_open(m, run_steps(&a, m), a.jacobians,
                                                        a.jacobians_at, a.params, err,
                                                        sizeof err)))) {
    int rc;
    out = cli_open_output(a.csv, err, sizeof err);
    if (!out) {
      fprintf(stderr, "achilles sim: %s\n", err);
    } else if ((rc = simulate(&a, m, d, out, jac)) == -1) {
      fprintf(stderr, "achilles sim: write error on %s\n", a.csv);
    } else {
      status = rc == 0 ? 0 : 1;
    }
  } else {
    if (a.jacobians && !jac && d) {
      fprintf(stderr, "achilles sim: %s\n", err);
    }
    status = 2;
  }
  if (sim_jacobians_close(&jac, err, sizeof err) != 0 && status == 0) {
    fprintf(stderr, "achilles sim: %s\n", err);
    status = 1;
  }
  if (out && out != stdout && fclose(out) != 0 && status == 0) {
    fprintf(stderr, "achilles sim: write error on %s\n", a.csv);
    status = 1;
  }
  sim_data_free(d);
  sim_model_free(m);
  return status;
}
