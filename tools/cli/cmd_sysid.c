/* tools/cli/cmd_sysid.c: `achilles sysid ROBOT LOG`, the robot's parameters fitted to a log of
 * what the arm did (an Achilles log or a CSV of a real arm), written as a robot file, a report
 * and a figure (docs/sysid.md). The fit is sysid/sysid.h; the readers and writers are sysid/. */
#define _DEFAULT_SOURCE /* realpath */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "commands.h"
#include "hil/error.h" /* hil_printable */
#include "sensors/sensors.h"
#include "sim/import/import.h"
#include "sim/sim.h"
#include "sysid/report_write.h"
#include "sysid/robot_patch.h"
#include "sysid/sensor_meas.h"
#include "sysid/series.h"
#include "sysid/sysid.h"
#include "sysid_servo.h"
#include "sysid_plot.h"

#define SY_DEFAULT_PARAMS "joint.*.damping,joint.*.armature,joint.*.frictionloss"

typedef struct sy_args {
  const char *robot, *log, *params, *bounds, *map, *sensors, *out, *report, *plot;
  int no_sensors, quiet, servo_goals;
  sysid_options opt;
} sy_args;

/* printf with the text made printable (hil_printable): names and file contents echoed in a
 * message cannot drive the terminal */
static void say(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(FILE *out, const char *fmt, ...) {
  char buf[4096], clean[4 * 4096 + 1];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(out, "%s\n", hil_printable(clean, sizeof clean, buf));
}

static void usage(FILE *out) {
  sysid_options d;
  sysid_options_default(&d); /* the defaults printed are the library's */
  fprintf(out,
          "usage: achilles sysid ROBOT LOG [options]\n\n"
          "Fits the parameters of ROBOT (a robot JSON, MJCF or URDF file) to LOG, what an arm\n"
          "did: an Achilles log (`achilles run --record`) or a CSV of a real arm (time, joint\n"
          "readings, applied inputs; --map). The simulator is driven by the logged inputs and\n"
          "compared with the logged readings through the sensors' deterministic part; the log\n"
          "is cut into windows (multiple shooting) and the fit is a trust-region least squares\n"
          "(GSL) on the residuals' Jacobian from the step Jacobians. docs/sysid.md.\n\n"
          "options:\n"
          "  --params LIST    what to fit, comma-separated, wildcards allowed (default\n"
          "                   " SY_DEFAULT_PARAMS "):\n"
          "                   joint.J.damping|armature|frictionloss|stiffness|springref,\n"
          "                   body.B.mass|com|com_x|...|inertia|ixx|..., actuator.A.kt|resistance|\n"
          "                   ke|gear|kp|kd|kv|inductance|gear_friction|rotor_inertia\n"
          "  --bounds LIST    ENTRY=LO:HI,... (either end may be empty); positive quantities\n"
          "                   stay positive without bounds\n"
          "  --window S       multiple-shooting window, s (default %g)\n"
          "  --initial-state fit|log\n"
          "                   fit each window's initial state too (default), or take it from\n"
          "                   the log\n"
          "  --max-iter N     iterations at most (default %d)\n"
          "  --map MAP        CSV columns: time=COL[*K], JOINT=COL[*K], JOINT=COL/COUNTS_PER_TURN,\n"
          "                   ACTUATOR=COL[*K], comma-separated (default: columns named as the\n"
          "                   robot's joints and actuators, and time)\n"
          "  --sensors FILE   the sensors file (docs/sensors.md): which encoder reads which joint\n"
          "                   and its latency, scale, offset, noise and resolution (default: the\n"
          "                   robot's own \"sensors\" file, as `achilles run` finds it)\n"
          "  --no-sensors     readings are exact joint positions (a CSV only)\n"
          "  --servo-goals    the inputs of the robot's servos (X-series) are their Goal\n"
          "                   Positions, rad: the servos' firmware loops run inside the fit. An\n"
          "                   Achilles log: the goals of its servo records, at their steps; a\n"
          "                   CSV: the goal columns, the readings the Present Positions\n"
          "                   (docs/sysid.md section 10.1)\n"
          "  --out FILE       the robot file as JSON with the fitted values written in\n"
          "  --report FILE    the report as JSON (schema: docs/sysid.md section 6)\n"
          "  --plot FILE.png  logged against simulated readings per joint, before and after\n"
          "                   (gnuplot)\n"
          "  --quiet          no progress on stderr\n"
          "  -h, --help       this text\n\n"
          "The report goes to standard output; progress (iteration, cost, step) to stderr.\n"
          "Exit status: 0 fitted, 1 bad input or a failed fit, 2 usage error.\n",
          d.window, d.max_iter);
}

static int parse_number(const char *opt, const char *text, double min, double *out) {
  char err[256];
  if (cli_parse_double(opt, text, out, err, sizeof err) != 0 || !(*out >= min)) {
    say(stderr, "achilles sysid: %s: expected a number >= %g, got '%s'", opt, min, text);
    return -1;
  }
  return 0;
}

static int parse_option(sy_args *a, int opt, const char *arg) {
  double v;
  switch (opt) {
  case 'p': a->params = arg; return 0;
  case 'b': a->bounds = arg; return 0;
  case 'm': a->map = arg; return 0;
  case 's': a->sensors = arg; return 0;
  case 'N': a->no_sensors = 1; return 0;
  case 'o': a->out = arg; return 0;
  case 'r': a->report = arg; return 0;
  case 'P': a->plot = arg; return 0;
  case 'q': a->quiet = 1; return 0;
  case 'G': a->servo_goals = 1; return 0;
  case 'w':
    if (parse_number("--window", arg, 0, &v) != 0 || !(v > 0)) {
      say(stderr, "achilles sysid: --window: expected a positive number of seconds, got '%s'", arg);
      return -1;
    }
    a->opt.window = v;
    return 0;
  case 'i':
    if (parse_number("--max-iter", arg, 1, &v) != 0 || v != floor(v) || v > 1e6) {
      say(stderr, "achilles sysid: --max-iter: expected a whole number from 1 to 1000000, got '%s'",
          arg);
      return -1;
    }
    a->opt.max_iter = (int)v;
    return 0;
  case 'I':
    if (strcmp(arg, "fit") != 0 && strcmp(arg, "log") != 0) {
      say(stderr, "achilles sysid: --initial-state: expected fit or log, got '%s'", arg);
      return -1;
    }
    a->opt.fit_initial_state = strcmp(arg, "fit") == 0;
    return 0;
  default:
    return -1;
  }
}

/* 0: run; 1: --help printed; 2: usage error printed */
static int parse_args(sy_args *a, int argc, char **argv) {
  static const struct option options[] = {
      {"params", required_argument, NULL, 'p'},   {"bounds", required_argument, NULL, 'b'},
      {"window", required_argument, NULL, 'w'},   {"max-iter", required_argument, NULL, 'i'},
      {"initial-state", required_argument, NULL, 'I'}, {"map", required_argument, NULL, 'm'},
      {"sensors", required_argument, NULL, 's'},  {"no-sensors", no_argument, NULL, 'N'},
      {"out", required_argument, NULL, 'o'},      {"report", required_argument, NULL, 'r'},
      {"plot", required_argument, NULL, 'P'},     {"quiet", no_argument, NULL, 'q'},
      {"servo-goals", no_argument, NULL, 'G'},
      {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
  memset(a, 0, sizeof *a);
  a->params = SY_DEFAULT_PARAMS;
  sysid_options_default(&a->opt);
  int opt;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
    if (opt == 'h') {
      usage(stdout);
      return 1;
    }
    if (opt == '?' || parse_option(a, opt, optarg) != 0) {
      fprintf(stderr, "Run 'achilles sysid --help' for the options.\n");
      return 2;
    }
  }
  if (argc - optind != 2) {
    fprintf(stderr, "achilles sysid: expected ROBOT and LOG (got %d file names)\n\n",
            argc - optind);
    usage(stderr);
    return 2;
  }
  if (a->sensors && a->no_sensors) {
    fprintf(stderr, "achilles sysid: --sensors and --no-sensors exclude each other\n");
    return 2;
  }
  a->robot = argv[optind];
  a->log = argv[optind + 1];
  return 0;
}

/* everything loaded from the files, owned here */
typedef struct sy_inputs {
  sim_model *m;
  sens_set *set;
  sysid_series s;
  sysid_meas *meas;
} sy_inputs;

static void inputs_free(sy_inputs *in) {
  sim_model_free(in->m);
  sens_set_free(&in->set);
  sysid_series_free(&in->s);
  free(in->meas);
}

static int load_sensors(sy_inputs *in, const sy_args *a, char *err, size_t err_sz) {
  if (a->no_sensors) {
    return 0;
  }
  int rc;
  if (a->sensors) {
    rc = sens_set_load_file(&in->set, in->m, a->sensors, err, err_sz);
  } else if (sim_import_detect(a->robot) != SIM_IMPORT_JSON) {
    rc = SENS_ENOTFOUND; /* MJCF and URDF carry no sensors of ours */
  } else {
    rc = sens_set_load_robot(&in->set, in->m, a->robot, err, err_sz);
  }
  if (rc == SENS_ENOTFOUND && !a->sensors) {
    in->set = NULL; /* readings taken as exact */
    return 0;
  }
  return rc == 0 ? 0 : -1;
}

static int load_inputs(sy_inputs *in, const sy_args *a, char *err, size_t err_sz) {
  const sim_import_options import = {0, NULL, NULL}; /* `achilles convert` lists the notes */
  in->m = sim_import_load_file(a->robot, &import, err, err_sz);
  if (!in->m || load_sensors(in, a, err, err_sz) != 0 ||
      sysid_series_load(&in->s, a->log, in->m, in->set, a->map, err, err_sz) != 0) {
    return -1;
  }
  in->meas = calloc((size_t)in->s.njoint, sizeof *in->meas);
  if (!in->meas) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  char (*sensor)[SENS_NAME_MAX] = calloc((size_t)in->s.njoint, sizeof *sensor);
  if (!sensor) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  sysid_meas_from_sensors(in->meas, sensor, &in->s, in->m, in->set);
  if (!a->quiet) {
    say(stderr, "achilles sysid: %s: %d samples over %.6g s, %d joints, %d actuators", a->log,
        in->s.n, in->s.t[in->s.n - 1] - in->s.t[0], in->s.njoint, in->s.nact);
    for (int j = 0; j < in->s.njoint; j++) {
      const sysid_meas *q = &in->meas[j];
      if (sensor[j][0]) {
        say(stderr, "  %s: encoder %s, latency %.6g s, scale %.9g, offset %.6g, sigma %.3g",
            in->s.joint_name[j], sensor[j], q->latency, q->scale, q->offset, q->sigma);
      } else {
        say(stderr, "  %s: exact readings (no encoder in the sensors), sigma %.3g",
            in->s.joint_name[j], q->sigma);
      }
    }
  }
  free(sensor);
  if (in->s.warning[0]) {
    say(stderr, "achilles sysid: warning: %s", in->s.warning);
  }
  return 0;
}

static void on_progress(void *ctx, int iter, double cost, double step) {
  (void)ctx;
  fprintf(stderr, "achilles sysid: iteration %d: cost %.9g, step %.3g\n", iter, cost, step);
}

static int write_text(const char *path, const char *text, char *err, size_t err_sz) {
  FILE *f = cli_open_output(path, err, err_sz);
  if (!f) {
    return -1;
  }
  fputs(text, f);
  fputc('\n', f);
  if (ferror(f) || (f != stdout && fclose(f) != 0)) {
    snprintf(err, err_sz, "%s: write error", path);
    return -1;
  }
  return 0;
}

/* A relative "sensors" path names a file beside the robot: kept working from --out's folder by
 * making it absolute when the folders differ. */
static void keep_sensors_path(cJSON *doc, const char *robot, const char *out) {
  cJSON *sensors = cJSON_GetObjectItemCaseSensitive(doc, "sensors");
  const char *rs = strrchr(robot, '/'), *os = strrchr(out, '/');
  const int rlen = rs ? (int)(rs - robot) : 0, olen = os ? (int)(os - out) : 0;
  if (!cJSON_IsString(sensors) || sensors->valuestring[0] == '/' ||
      (rlen == olen && strncmp(robot, out, (size_t)rlen) == 0)) {
    return;
  }
  char joined[PATH_MAX], abs[PATH_MAX];
  snprintf(joined, sizeof joined, "%.*s%s%s", rlen, robot, rs ? "/" : "", sensors->valuestring);
  if (realpath(joined, abs)) {
    cJSON_SetValuestring(sensors, abs);
  }
}

/* --out: the robot's document with the fitted values, checked to load */
static int write_robot(const sy_args *a, const sy_inputs *in, const sysid_report *r, char *err,
                       size_t err_sz) {
  const sim_import_options import = {0, NULL, NULL};
  cJSON *doc = sim_import_file(a->robot, &import, err, err_sz);
  if (!doc || sysid_robot_patch(doc, r, in->m, err, err_sz) != 0) {
    cJSON_Delete(doc);
    return -1;
  }
  keep_sensors_path(doc, a->robot, a->out);
  char *text = cJSON_Print(doc);
  cJSON_Delete(doc);
  sim_model *check = text ? sim_model_load_string(text, a->out, err, err_sz) : NULL;
  const int rc = check ? write_text(a->out, text, err, err_sz) : -1;
  if (!text) {
    snprintf(err, err_sz, "out of memory");
  }
  sim_model_free(check);
  free(text);
  return rc;
}

static int write_report(const char *path, const sysid_report *r, const sysid_report_source *src,
                        char *err, size_t err_sz) {
  cJSON *o = sysid_report_json(r, src);
  char *text = o ? cJSON_Print(o) : NULL;
  cJSON_Delete(o);
  if (!text) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  const int rc = write_text(path, text, err, err_sz);
  free(text);
  return rc;
}

static int write_plot(const sy_args *a, sysid_problem *p, const sy_inputs *in, char *err,
                      size_t err_sz) {
  const size_t n = (size_t)in->s.n * (size_t)in->s.njoint;
  double *before = malloc(n * sizeof *before), *after = malloc(n * sizeof *after);
  const char **unit = calloc((size_t)in->s.njoint, sizeof *unit);
  int rc = -1;
  if (!before || !after || !unit) {
    snprintf(err, err_sz, "out of memory");
  } else if (sysid_simulate(p, 0, before) != 0 || sysid_simulate(p, 1, after) != 0) {
    snprintf(err, err_sz, "%s: the simulation for the plot failed", a->plot);
  } else {
    for (int j = 0; j < in->s.njoint; j++) {
      const int jid = sim_model_joint(in->m, in->s.joint_name[j]);
      unit[j] = jid >= 0 && in->m->joints[jid].type == SIM_JOINT_SLIDE ? "m" : "rad";
    }
    char title[1024];
    snprintf(title, sizeof title, "%s fitted to %s", a->robot, a->log);
    const sysid_plot_data d = {title, &in->s, before, after, unit};
    rc = sysid_plot_png(a->plot, &d, err, err_sz);
  }
  free(before);
  free(after);
  free(unit);
  return rc;
}

static int outputs(const sy_args *a, sysid_problem *p, const sy_inputs *in,
                   const sysid_report *r) {
  char err[2048];
  const sysid_report_source src = {a->robot, a->log, in->s.n, sysid_nwindow(p)};
  sysid_report_print(stdout, r, &src);
  fflush(stdout);
  int status = 0;
  if (a->report && write_report(a->report, r, &src, err, sizeof err) != 0) {
    say(stderr, "achilles sysid: --report: %s", err);
    status = 1;
  }
  if (a->out && write_robot(a, in, r, err, sizeof err) != 0) {
    say(stderr, "achilles sysid: --out: %s", err);
    status = 1;
  }
  if (a->plot && write_plot(a, p, in, err, sizeof err) != 0) {
    say(stderr, "achilles sysid: --plot: %s", err);
    status = 1;
  }
  return status;
}

/* --servo-goals: the robot's servos; the joint encoders the bus feeds them are the robot's own
   sensors' (also with --no-sensors, which is about the log's readings) */
static int servo_goals(sy_args *a, sy_inputs *in, sysid_servo **servo, char *err,
                       size_t err_sz) {
  sens_set *own = NULL;
  const sens_set *set = in->set;
  if (!set && sim_import_detect(a->robot) == SIM_IMPORT_JSON &&
      sens_set_load_robot(&own, in->m, a->robot, err, err_sz) == 0) {
    set = own;
  }
  int rc = sysid_servo_goals(a->robot, in->m, set, &in->s, servo, &a->opt.nservo, err, err_sz);
  sens_set_free(&own);
  a->opt.servo = *servo;
  if (rc == 0 && in->s.from_log) { /* the goals the servos took, at their steps */
    for (int i = 0; i < a->opt.nservo; i++) {
      (*servo)[i].feedback_logged = 1; /* a log's readings: the encoder samples the servos read */
    }
    rc = sysid_series_servo_goals(&in->s, a->log, *servo, a->opt.nservo, err, err_sz);
    if (rc == 0 && !a->quiet) {
      say(stderr, "achilles sysid: --servo-goals: the Goal Positions of the log's servo records; "
          "%d samples from t = %.6g s, where every servo runs with torque on", in->s.n, in->s.t[0]);
    }
  }
  return rc;
}

int achilles_cmd_sysid(int argc, char **argv) {
  sy_args a;
  const int parsed = parse_args(&a, argc, argv);
  if (parsed != 0) {
    return parsed == 1 ? 0 : 2;
  }
  if (!a.quiet) {
    a.opt.progress = on_progress;
  }
  char err[2048];
  sy_inputs in = {0};
  sysid_problem *p = NULL;
  sysid_report r;
  memset(&r, 0, sizeof r);
  int status = 1;
  sysid_servo *servo = NULL;
  if (load_inputs(&in, &a, err, sizeof err) != 0 ||
      (a.servo_goals && servo_goals(&a, &in, &servo, err, sizeof err) != 0) ||
      !(p = sysid_problem_new(in.m, &in.s, a.params, a.bounds, in.meas, &a.opt, err, sizeof err))) {
    say(stderr, "achilles sysid: %s", err);
  } else if (sysid_fit(p, &r, err, sizeof err) != 0) {
    say(stderr, "achilles sysid: the fit failed: %s", err);
  } else {
    status = outputs(&a, p, &in, &r);
  }
  sysid_report_free(&r);
  sysid_problem_free(&p);
  inputs_free(&in);
  free(servo);
  return status;
}
