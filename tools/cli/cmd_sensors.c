/* tools/cli/cmd_sensors.c: `achilles sensors`, a batch simulation with sensor models that writes
 * true and measured values side by side (CSV), for plotting and tuning. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_inputs.h"
#include "cli.h"
#include "commands.h"
#include "sensors/sensors.h"
#include "sim/import/import.h"
#include "sim/json_read.h"
#include "sim/sim.h"

typedef struct sensors_args {
  const char *config, *sensors, *csv;
  double duration;
  int has_duration, has_seed;
  unsigned long long seed;
  batch_inputs inputs; /* --torque, --qpos, --qvel, --ctrl */
} sensors_args;

static void sensors_usage(FILE *out) {
  fprintf(out,
          "usage: achilles sensors CONFIG --duration SECONDS [options]\n\n"
          "Runs the robot described by CONFIG (robot JSON, MJCF or URDF) without real-time\n"
          "pacing, samples its sensors (the \"sensors\" key of CONFIG, or --sensors FILE,\n"
          "required for MJCF and URDF; format: docs/sensors.md)\n"
          "and writes CSV with one row per physics step in which a sensor sampled:\n"
          "  time,<sensor>.seq,<sensor>.<channel>.true,<sensor>.<channel>.meas,...\n"
          "time is the simulation time in s; seq the sample's sequence number (gaps are\n"
          "dropped samples); .true is the noise-free value, .meas the measurement (empty when\n"
          "dropped, dead or still inside the latency); a sensor that did not sample in a row\n"
          "has empty cells. Units per channel: docs/sensors.md.\n\n"
          "options:\n"
          "  --duration S          simulated seconds to run (required)\n"
          "  --sensors FILE        sensors file, instead of the \"sensors\" key of CONFIG\n"
          "  --seed N              noise seed, overriding the file's \"seed\"\n"
          "  --torque JOINT=VALUE  constant generalized force on JOINT (N·m or N); repeatable\n"
          "  --ctrl ACTUATOR=VALUE constant command of ACTUATOR (its unit: docs/robot-format.md,\n"
          "                        within its ctrlrange); repeatable\n"
          "  --qpos JOINT=VALUE    initial position of JOINT (rad or m); repeatable\n"
          "  --qvel JOINT=VALUE    initial velocity of JOINT (rad/s or m/s); repeatable\n"
          "  --csv FILE|-          output file (default -, standard output)\n"
          "  -h, --help            this text\n");
}

static int sensors_option(sensors_args *a, int opt, const char *arg) {
  char err[256] = "";
  char *end = NULL;
  switch (opt) {
  case 'd':
    a->has_duration = 1;
    if (cli_parse_double("--duration", arg, &a->duration, err, sizeof err) == 0 &&
        !(a->duration >= 0 && a->duration <= 1e7)) {
      snprintf(err, sizeof err, "--duration: must be in [0, 1e7] s (got %s)", arg);
    }
    break;
  case 's':
    a->has_seed = 1;
    a->seed = strtoull(arg, &end, 10);
    if (!arg[0] || *end != '\0' || arg[0] == '-') {
      snprintf(err, sizeof err, "--seed: expected a non-negative integer, got '%s'", arg);
    }
    break;
  case 'S':
    a->sensors = arg;
    break;
  case 'c':
    a->csv = arg;
    break;
  default:
    if (!batch_inputs_option(&a->inputs, opt, arg, err, sizeof err)) {
      return -1;
    }
  }
  if (err[0]) {
    fprintf(stderr, "achilles sensors: %s\n", err);
    return -1;
  }
  return 0;
}

/* 0 to run, 1 when --help was answered, -1 on a usage error */
static int sensors_parse(sensors_args *a, int argc, char **argv) {
  static const struct option options[] = {
      {"duration", required_argument, NULL, 'd'}, {"seed", required_argument, NULL, 's'},
      {"sensors", required_argument, NULL, 'S'},  {"csv", required_argument, NULL, 'c'},
      {"help", no_argument, NULL, 'h'},           BATCH_INPUTS_OPTIONS,
      {NULL, 0, NULL, 0}};
  memset(a, 0, sizeof *a);
  a->csv = "-";
  optind = 1;
  int opt;
  while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
    if (opt == 'h') {
      sensors_usage(stdout);
      return 1;
    }
    if (opt == '?' || sensors_option(a, opt, optarg)) {
      fprintf(stderr, "Run 'achilles sensors --help' for usage.\n");
      return -1;
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "achilles sensors: expected exactly one CONFIG file\n");
    sensors_usage(stderr);
    return -1;
  }
  a->config = argv[optind];
  if (!a->has_duration) {
    fprintf(stderr, "achilles sensors: --duration is required\n");
    return -1;
  }
  return 0;
}

static int sensors_apply_inputs(const sensors_args *a, const sim_model *m, sim_data *d) {
  char err[768];
  if (batch_inputs_apply(&a->inputs, m, d, err, sizeof err)) {
    fprintf(stderr, "achilles sensors: %s\n", err);
    return -1;
  }
  return 0;
}

static void sensors_header(FILE *out, const sens_set *set) {
  fputs("time", out);
  for (int i = 0; i < sens_set_count(set); i++) {
    const sens_sensor *s = sens_set_sensor(set, i);
    fprintf(out, ",%s.seq", s->name);
    for (int c = 0; c < s->nch; c++) {
      fprintf(out, ",%s.%s.true,%s.%s.meas", s->name, s->channel[c], s->name, s->channel[c]);
    }
  }
  fputc('\n', out);
}

static void sensors_row(FILE *out, const sens_set *set, double time) {
  fprintf(out, "%.17g", time);
  for (int i = 0; i < sens_set_count(set); i++) {
    const sens_sensor *s = sens_set_sensor(set, i);
    if (!s->fresh) {
      for (int c = 0; c < 2 * s->nch + 1; c++) {
        fputc(',', out);
      }
      continue;
    }
    fprintf(out, ",%llu", (unsigned long long)s->sample.seq);
    for (int c = 0; c < s->nch; c++) {
      fprintf(out, ",%.17g,", s->sample.truth[c]);
      if (s->sample.valid) {
        fprintf(out, "%.17g", s->sample.meas[c]);
      }
    }
  }
  fputc('\n', out);
}

/* what a torque sensor reads here: the generalized force that drives each dof, --torque and the
 * actuators' (--ctrl) together (`achilles run` has only the actuators') */
static void driving_force(double *out, const sim_model *m, const sim_data *d) {
  for (int k = 0; k < m->nv; k++) {
    out[k] = d->qfrc_applied[k] + d->qfrc_actuator[k];
  }
}

/* sim_step, then sim_forward so that velocities and accelerations match the new state */
static int sensors_run(const sensors_args *a, const sim_model *m, sim_data *d, sens_set *set,
                       FILE *out) {
  const long long steps = llround(a->duration / m->opt.timestep);
  double *torque = calloc((size_t)m->nv + 1, sizeof *torque);
  if (!torque) {
    return -1;
  }
  sens_set_torque_source(set, torque);
  sensors_header(out, set);
  sim_forward(m, d);
  for (long long n = 0;; n++) {
    driving_force(torque, m, d);
    if (sens_set_update(set, m, d) > 0) {
      sensors_row(out, set, d->time);
    }
    if (n == steps) {
      break;
    }
    sim_step(m, d);
    sim_forward(m, d);
    const int j = sim_state_nonfinite(m, d);
    if (j >= 0) { /* what the sensors would read of it is garbage: stop, as the runtime does */
      fprintf(stderr, "achilles sensors: t=%.17g s: joint \"%s\": the state is not finite: "
                      "stopped (a model singular at this pose, or a step too large for it)\n",
              d->time, m->joints[j].name);
      free(torque);
      return -2;
    }
  }
  free(torque);
  return ferror(out) ? -1 : 0;
}

static sens_set *sensors_load(const sensors_args *a, const sim_model *m) {
  char err[1024];
  sens_set *set = NULL;
  if (!a->sensors && sim_import_detect(a->config) != SIM_IMPORT_JSON) {
    fprintf(stderr, "achilles sensors: %s: an MJCF or URDF file has no sensors: pass --sensors "
                    "FILE (docs/sensors.md)\n", a->config);
    return NULL;
  }
  const int rc = a->sensors ? sens_set_load_file(&set, m, a->sensors, err, sizeof err)
                            : sens_set_load_robot(&set, m, a->config, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "achilles sensors: %s%s\n", err,
            rc == SENS_ENOTFOUND ? " (add one, or pass --sensors FILE)" : "");
    return NULL;
  }
  if (a->has_seed) {
    sens_set_reset(set, (uint64_t)a->seed);
  }
  return set;
}

static void print_note(void *ctx, const char *message) {
  (void)ctx;
  fprintf(stderr, "achilles sensors: note: %s\n", message);
}

int achilles_cmd_sensors(int argc, char **argv) {
  sensors_args a;
  const int parsed = sensors_parse(&a, argc, argv);
  if (parsed != 0) {
    return parsed > 0 ? 0 : 2;
  }
  char err[1024];
  /* read once: the model and the sensors both come from CONFIG, which may be a pipe; an MJCF or
   * URDF file's notes (what it holds that the model does not take) on stderr, as convert and
   * sim print them */
  const sim_import_options import = {0, print_note, NULL};
  sim_model *m = sim_json_pin_file(a.config, err, sizeof err) == 0
                     ? sim_import_load_file(a.config, &import, err, sizeof err)
                     : NULL;
  if (!m) {
    fprintf(stderr, "achilles sensors: %s\n", err);
    sim_json_unpin();
    return 1;
  }
  sim_data *d = sim_data_new(m);
  sens_set *set = d ? sensors_load(&a, m) : NULL;
  sim_json_unpin();
  FILE *out = NULL;
  int status = 1, run = 0;
  if (!d) {
    fprintf(stderr, "achilles sensors: out of memory\n");
  } else if (set && sensors_apply_inputs(&a, m, d) != 0) {
    status = 2;
  } else if (set && !(out = cli_open_output(a.csv, err, sizeof err))) {
    fprintf(stderr, "achilles sensors: %s\n", err);
  } else if (set && (run = sensors_run(&a, m, d, set, out)) != 0) {
    if (run == -1) {
      fprintf(stderr, "achilles sensors: write error on %s\n", a.csv);
    }
  } else if (set) {
    status = 0;
  }
  if (out && out != stdout && fclose(out) != 0 && status == 0) {
    fprintf(stderr, "achilles sensors: write error on %s\n", a.csv);
    status = 1;
  }
  sens_set_free(&set);
  sim_data_free(d);
  sim_model_free(m);
  return status;
}
