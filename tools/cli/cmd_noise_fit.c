/* tools/cli/cmd_noise_fit.c: `achilles noise-fit`, the noise parameters of a sensor channel from a
 * log (docs/logs.md) or a CSV file, written as a sensors block that `achilles run` loads, with
 * an optional figure (docs/noise-fit.md). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "commands.h"
#include "hil/error.h" /* hil_printable */
#include "hil/record/log.h"
#include "noise_plot.h"
#include "sensors/chain.h"
#include "sensors/fit.h"
#include "sensors/sensors.h"
#include "sim/sim.h"

#define NF_PI 3.14159265358979323846

typedef struct nf_args {
  const char *log, *sensor_arg, *reference, *out, *plot, *config, *sensors, *joint;
  char sensor[HIL_LOG_NAME_MAX], channel[SENS_CHANNEL_NAME_MAX];
  long counts_per_rev;
  int quadrature;
  unsigned long long seed;
} nf_args;

/* what the robot's configuration says about the sensor (all optional) */
typedef struct nf_sensor_def {
  int found;
  char type[16];
  char joint[SIM_NAME_MAX];
  long counts_per_rev;
  int quadrature;
} nf_sensor_def;

/* Writes s made printable (hil_printable: control characters and bytes that are not UTF-8 as
 * \xNN), so that names, paths and file contents echoed in a message cannot drive the terminal;
 * a final newline is kept. */
static void nf_puts_clean(FILE *out, const char *s) {
  static char clean[4 * 4096 + 1];
  const size_t n = strlen(s);
  const int newline = n > 0 && s[n - 1] == '\n';
  char line[4096];
  snprintf(line, sizeof line, "%.*s", (int)(n - (size_t)newline), s);
  fputs(hil_printable(clean, sizeof clean, line), out);
  if (newline) {
    fputc('\n', out);
  }
}

/* printf through nf_puts_clean: every message that echoes input goes through here */
static void nf_say(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void nf_say(FILE *out, const char *fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  nf_puts_clean(out, buf);
}

static void nf_usage(FILE *out) {
  fprintf(out,
          "usage: achilles noise-fit LOG --sensor NAME[.CHANNEL] [options]\n\n"
          "Estimates the noise parameters of one sensor channel from LOG, a log recorded by\n"
          "`achilles run --record` or a CSV file (time,<sensor>.<channel>,...; docs/logs.md),\n"
          "recorded at rest or while moving with a known reference:\n"
          "  - quantization step (the grid the values sit on; for an encoder, counts_per_rev)\n"
          "  - scale error and offset (regression against the reference; needs --reference)\n"
          "  - white-noise sigma, Gauss-Markov sigma and tau, first-order or Butterworth\n"
          "    low-pass cutoff: six noise models fitted by maximum likelihood, the one with\n"
          "    the lowest BIC chosen (tau cross-checked with the autocorrelation)\n"
          "  - latency in whole samples (the lag behind a moving reference)\n"
          "Each estimate is printed with its 1-sigma uncertainty, or with the reason it could\n"
          "not be estimated (e.g. a record too short for tau). Method: docs/noise-fit.md.\n\n"
          "options:\n"
          "  --sensor NAME[.CHANNEL]  sensor and channel to fit (required); the channel\n"
          "                           defaults to the first of angle, counts, torque, current\n"
          "  --reference REF          the true value: 'truth' (the log's truth, or the CSV\n"
          "                           column NAME.CHANNEL.true), or [FILE:]SENSOR.CHANNEL, a\n"
          "                           column/channel of LOG or of another log or CSV FILE,\n"
          "                           matched by time. Without it the sensor must be at rest.\n"
          "  --out FILE|-             write the fitted sensor as a sensors block\n"
          "                           {\"seed\":..,\"list\":[sensor]} that `achilles run` and\n"
          "                           `achilles sensors --sensors FILE` load as is\n"
          "  --plot FILE.png          figure: Allan deviation with the fitted model, power\n"
          "                           spectral density, and the recorded error beside a stream\n"
          "                           simulated with the fitted parameters (needs gnuplot)\n"
          "  --config ROBOT.json      robot model: the sensor's joint, counts_per_rev and\n"
          "                           quadrature come from its sensors, and --out is checked by\n"
          "                           loading it against this model\n"
          "  --sensors FILE           sensors file to take them from, instead of the robot's\n"
          "                           \"sensors\" key\n"
          "  --joint NAME             joint of the sensor in --out (else from --config)\n"
          "  --counts-per-rev N       encoder lines per revolution: converts a counts channel\n"
          "                           to rad, and goes into --out (else from --config, else\n"
          "                           from the quantization step)\n"
          "  --quadrature             with --counts-per-rev: x4 decoding\n"
          "  --seed N                 seed of the simulated stream (plot, default 1) and of --out\n"
          "  -h, --help               this text\n\n"
          "Progress goes to standard error, the estimates to standard output.\n"
          "Exit status: 0 done, 1 failure (file, fit, plot), 2 usage error.\n");
}

static int nf_option(nf_args *a, int opt, const char *arg) {
  char *end = NULL;
  switch (opt) {
  case 's':
    a->sensor_arg = arg;
    return 0;
  case 'r':
    a->reference = arg;
    return 0;
  case 'o':
    a->out = arg;
    return 0;
  case 'p':
    a->plot = arg;
    return 0;
  case 'c':
    a->config = arg;
    return 0;
  case 'S':
    a->sensors = arg;
    return 0;
  case 'j':
    a->joint = arg;
    return 0;
  case 'q':
    a->quadrature = 1;
    return 0;
  case 'n':
    errno = 0;
    a->counts_per_rev = strtol(arg, &end, 10);
    if (!arg[0] || *end || errno || a->counts_per_rev < 1 || a->counts_per_rev > 1L << 30) {
      nf_say(stderr, "achilles noise-fit: --counts-per-rev: expected an integer >= 1, got '%s'\n",
              arg);
      return -1;
    }
    return 0;
  case 'e':
    errno = 0;
    a->seed = strtoull(arg, &end, 10);
    if (!arg[0] || *end || errno || arg[0] == '-') {
      nf_say(stderr, "achilles noise-fit: --seed: expected a non-negative integer, got '%s'\n",
              arg);
      return -1;
    }
    return 0;
  default:
    return -1;
  }
}

/* NAME[.CHANNEL]: the channel is everything after the first dot ("imu_wrist.gyro.x") */
static int nf_split_sensor(nf_args *a) {
  const char *arg = a->sensor_arg;
  const char *dot = strchr(arg, '.');
  const size_t len = dot ? (size_t)(dot - arg) : strlen(arg);
  if (len == 0 || len >= sizeof a->sensor || (dot && (!dot[1] || strlen(dot + 1) >= sizeof a->channel))) {
    nf_say(stderr, "achilles noise-fit: expected NAME[.CHANNEL], got '%s'\n", arg);
    return -1;
  }
  memcpy(a->sensor, arg, len);
  a->sensor[len] = '\0';
  snprintf(a->channel, sizeof a->channel, "%s", dot ? dot + 1 : "");
  return 0;
}

/* 0 to run, 1 when --help was answered, -1 on a usage error */
static int nf_parse(nf_args *a, int argc, char **argv) {
  static const struct option options[] = {
      {"sensor", required_argument, NULL, 's'},  {"reference", required_argument, NULL, 'r'},
      {"out", required_argument, NULL, 'o'},     {"plot", required_argument, NULL, 'p'},
      {"config", required_argument, NULL, 'c'},  {"sensors", required_argument, NULL, 'S'},
      {"joint", required_argument, NULL, 'j'},   {"counts-per-rev", required_argument, NULL, 'n'},
      {"quadrature", no_argument, NULL, 'q'},    {"seed", required_argument, NULL, 'e'},
      {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
  memset(a, 0, sizeof *a);
  a->seed = 1;
  optind = 1;
  int opt;
  while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
    if (opt == 'h') {
      nf_usage(stdout);
      return 1;
    }
    if (opt == '?' || nf_option(a, opt, optarg)) {
      fputs("Run 'achilles noise-fit --help' for usage.\n", stderr);
      return -1;
    }
  }
  if (optind != argc - 1) {
    nf_say(stderr, "achilles noise-fit: expected exactly one LOG file\n");
    return -1;
  }
  a->log = argv[optind];
  if (!a->sensor_arg) {
    nf_say(stderr, "achilles noise-fit: --sensor is required\n");
    return -1;
  }
  if (a->quadrature && !a->counts_per_rev) {
    nf_say(stderr, "achilles noise-fit: --quadrature needs --counts-per-rev\n");
    return -1;
  }
  return nf_split_sensor(a);
}

/* --- input ----------------------------------------------------------------------------------- */

static int nf_load(nf_args *a, hil_series *s) {
  char err[1024];
  static const char *defaults[] = {"angle", "counts", "torque", "current"};
  int rc = HIL_LOG_ENOTFOUND;
  if (a->channel[0]) {
    rc = hil_series_load(s, a->log, a->sensor, a->channel, err, sizeof err);
  }
  for (size_t i = 0; !a->channel[0] && i < 4 && rc == HIL_LOG_ENOTFOUND; i++) {
    rc = hil_series_load(s, a->log, a->sensor, defaults[i], err, sizeof err);
    if (rc == 0) {
      snprintf(a->channel, sizeof a->channel, "%s", defaults[i]);
    }
  }
  if (rc != 0) {
    nf_say(stderr, "achilles noise-fit: %s%s\n", err,
            rc == HIL_LOG_ENOTFOUND && !a->channel[0] && strstr(err, "has no channel")
                ? " (tried angle, counts, torque, current: name one with --sensor NAME.CHANNEL)"
                : "");
    return -1;
  }
  if (s->skipped) {
    nf_say(stderr, "achilles noise-fit: warning: %lld damaged record(s) skipped; the first: %s\n",
            s->skipped, s->warning);
  }
  if (s->end_missing) {
    nf_say(stderr, "achilles noise-fit: warning: %s has no end record: the recording did not "
                   "close cleanly (a crash, a kill, a full disk); the samples before are used\n",
           a->log);
  }
  return 0;
}

/* keeps the samples of s that have a reference sample at the same time (within a quarter
 * period), writing the reference into ref[] */
static size_t nf_align(hil_series *s, double *ref, const hil_series *r) {
  const double period = s->n > 1 ? (s->t[s->n - 1] - s->t[0]) / (double)(s->n - 1) : 1.0;
  const double tol = 0.25 * period;
  size_t k = 0, j = 0;
  for (size_t i = 0; i < s->n; i++) {
    while (j < r->n && r->t[j] < s->t[i] - tol) {
      j++;
    }
    if (j < r->n && fabs(r->t[j] - s->t[i]) <= tol) {
      s->t[k] = s->t[i];
      s->v[k] = s->v[i];
      ref[k] = r->v[j];
      k++;
    }
  }
  s->n = k;
  return k;
}

/* the reference series, aligned with s; NULL without --reference or on error (*fail set).
 * *counts: the reference is in counts (the truth of a counts channel, or a counts channel),
 * not in rad */
static double *nf_reference(const nf_args *a, hil_series *s, int *fail, int *counts) {
  *fail = 0;
  *counts = 0;
  if (!a->reference) {
    return NULL;
  }
  double *ref = malloc((s->n ? s->n : 1) * sizeof *ref);
  if (!ref) {
    *fail = 1;
    return NULL;
  }
  if (strcmp(a->reference, "truth") == 0) {
    if (!s->truth) {
      nf_say(stderr, "achilles noise-fit: %s has no truth for %s.%s (a CSV needs a column "
                      "%s.%s.true)\n",
              a->log, a->sensor, a->channel, a->sensor, a->channel);
      free(ref);
      *fail = 1;
      return NULL;
    }
    memcpy(ref, s->truth, s->n * sizeof *ref);
    *counts = strcmp(a->channel, "counts") == 0; /* a truth has its channel's unit */
    return ref;
  }
  /* [FILE:]SENSOR.CHANNEL */
  char spec[512], file[512];
  snprintf(spec, sizeof spec, "%s", a->reference);
  const char *col = spec;
  snprintf(file, sizeof file, "%s", a->log);
  char *colon = strrchr(spec, ':');
  if (colon) {
    *colon = '\0';
    snprintf(file, sizeof file, "%s", spec);
    col = colon + 1;
  }
  nf_args ra = *a;
  ra.sensor_arg = col;
  ra.log = file;
  hil_series r;
  if (nf_split_sensor(&ra) != 0 || !ra.channel[0]) {
    nf_say(stderr, "achilles noise-fit: --reference: expected truth or [FILE:]SENSOR.CHANNEL, "
                    "got '%s'\n",
            a->reference);
    free(ref);
    *fail = 1;
    return NULL;
  }
  if (nf_load(&ra, &r) != 0) {
    free(ref);
    *fail = 1;
    return NULL;
  }
  *counts = strcmp(ra.channel, "counts") == 0 || strcmp(r.unit, "count") == 0;
  const size_t before = s->n;
  const size_t kept = nf_align(s, ref, &r);
  hil_series_free(&r);
  if (kept < before / 2) {
    nf_say(stderr, "achilles noise-fit: --reference %s: only %zu of %zu samples have a reference "
                    "at the same time\n",
            a->reference, kept, before);
    free(ref);
    *fail = 1;
    return NULL;
  }
  return ref;
}

/* the sensor's definition in --config / --sensors, when given */
static int nf_definition(const nf_args *a, sim_model **pm, nf_sensor_def *def) {
  memset(def, 0, sizeof *def);
  if (!a->config) {
    if (a->sensors) {
      nf_say(stderr, "achilles noise-fit: --sensors needs --config (the robot model)\n");
      return -1;
    }
    return 0;
  }
  char err[1024];
  *pm = sim_model_load_file(a->config, err, sizeof err);
  if (!*pm) {
    nf_say(stderr, "achilles noise-fit: %s\n", err);
    return -1;
  }
  sens_set *set = NULL;
  const int rc = a->sensors ? sens_set_load_file(&set, *pm, a->sensors, err, sizeof err)
                            : sens_set_load_robot(&set, *pm, a->config, err, sizeof err);
  if (rc != 0 && rc != SENS_ENOTFOUND) {
    nf_say(stderr, "achilles noise-fit: %s\n", err);
    return -1;
  }
  const int i = set ? sens_set_find(set, a->sensor) : -1;
  if (i >= 0) {
    const sens_sensor *s = sens_set_sensor(set, i);
    def->found = 1;
    snprintf(def->type, sizeof def->type, "%s", sens_type_name(s->type));
    if (s->type == SENS_ENCODER) {
      snprintf(def->joint, sizeof def->joint, "%s", (*pm)->joints[s->u.enc.joint].name);
      def->counts_per_rev = s->u.enc.counts_per_rev;
      def->quadrature = s->u.enc.quadrature;
    } else if (s->type == SENS_TORQUE) {
      snprintf(def->joint, sizeof def->joint, "%s", (*pm)->joints[s->u.trq.joint].name);
    }
  }
  sens_set_free(&set);
  return 0;
}

/* rad per count from the options or the configuration, 0 when unknown */
static double nf_counts_step(const nf_args *a, const nf_sensor_def *def) {
  if (a->counts_per_rev) {
    return 2.0 * NF_PI / ((double)a->counts_per_rev * (a->quadrature ? 4 : 1));
  }
  if (def->counts_per_rev) {
    return 2.0 * NF_PI / ((double)def->counts_per_rev * (def->quadrature ? 4 : 1));
  }
  return 0.0;
}

/* --- output ---------------------------------------------------------------------------------- */

/* "1.02e-05 ± 0.05e-05": value and uncertainty with a shared exponent, two significant digits
 * of the uncertainty */
static void nf_pm(char *out, size_t out_sz, double v, double s) {
  if (!isfinite(s) || s <= 0) {
    snprintf(out, out_sz, "%.4g%s", v, isfinite(s) ? "" : " (uncertainty not estimated)");
    return;
  }
  if (s > 100 * fabs(v)) { /* a shared exponent would print a long mantissa */
    snprintf(out, out_sz, "%.3g ± %.2g", v, s);
    return;
  }
  const int e = v != 0 ? (int)floor(log10(fabs(v))) : (int)floor(log10(s));
  const double scale = pow(10.0, e);
  int dec = 1 - (int)floor(log10(s / scale));
  dec = dec < 0 ? 0 : dec > 8 ? 8 : dec;
  snprintf(out, out_sz, "%.*fe%+03d ± %.*fe%+03d", dec, v / scale, e, dec, s / scale, e);
}

/* "  label  symbol" padded to a fixed width in characters (UTF-8 symbols are one column) */
static void nf_label(const char *label, const char *symbol) {
  int cols = printf("  %-20s %s", label, symbol);
  for (const char *p = symbol; *p; p++) {
    cols -= ((unsigned char)*p & 0xC0) == 0x80; /* continuation bytes take no column */
  }
  printf("%*s", cols < 30 ? 30 - cols : 1, "");
}

static void nf_print(const char *label, const char *symbol, const sens_fit_value *v,
                     const char *unit) {
  char buf[128];
  nf_label(label, symbol);
  if (v->ok) {
    nf_pm(buf, sizeof buf, v->value, v->sigma);
    printf("= %s%s%s", buf, unit[0] ? " " : "", unit);
    printf(v->note[0] ? "  (%s)\n" : "%s\n", v->note);
  } else {
    printf(": not estimated: %s\n", v->note);
  }
}

static void nf_report(const nf_args *a, const hil_series *s, const sens_fit_result *r,
                      const char *unit) {
  nf_say(stdout, "%s.%s in %s: %zu samples at %.6g Hz over %.6g s; reference: %s%s\n", a->sensor,
         a->channel, a->log, r->n, r->rate_hz, r->duration_s,
         a->reference ? a->reference : "none (at rest)",
         r->reference_resting ? " (resting: constant)" : "");
  if (r->gaps) {
    printf("  warning: %ld gaps (missing samples) in the time stamps\n", r->gaps);
  }
  if (s->skipped) {
    printf("  warning: %lld damaged records skipped\n", s->skipped);
  }
  if (s->end_missing) {
    printf("  warning: the log has no end record (the recording did not close cleanly)\n");
  }
  nf_label("quantization step", "q");
  if (r->quant_step.ok) {
    printf("= %.9g %s  (the values' grid)\n", r->quant_step.value, unit);
  } else {
    printf(": not estimated: %s\n", r->quant_step.note);
  }
  nf_print("scale error", "", &r->scale_error, "");
  nf_print("offset", "", &r->offset, unit);
  nf_print("white noise", "σ_wn", &r->white_sigma, unit);
  nf_print("Gauss-Markov", "σ_GM", &r->gm_sigma, unit);
  nf_print("", "τ", &r->gm_tau_s, "s");
  nf_print("  autocorrelation", "τ_ac", &r->tau_acf_s, "s");
  nf_print("low-pass cutoff", "f_c", &r->cutoff_hz, "Hz");
  nf_print("latency", "", &r->latency_samples, "samples");
  if (r->nmodels > 0) {
    static const char *filters[] = {"", " + first-order low-pass", " + Butterworth low-pass"};
    printf("  models (maximum likelihood; the lowest BIC is chosen):\n");
    for (int i = 0; i < r->nmodels; i++) {
      const sens_fit_model *m = &r->models[i];
      char name[80];
      snprintf(name, sizeof name, "%s%s", m->gm ? "white + Gauss-Markov" : "white",
               filters[m->filter]);
      if (isfinite(m->bic)) {
        printf("    %s %-44s k = %d  BIC %+.1f\n", i == r->model ? "*" : " ", name, m->k,
               m->bic - r->models[r->model].bic);
      }
    }
  }
  printf("  Allan deviation: %d points, reduced chi^2 %.3g against the chosen model\n", r->nallan,
         r->chi2_red);
}

/* 4 significant digits: what the uncertainties justify */
static double nf_round(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.4g", v);
  return strtod(buf, NULL);
}

/* the sensors block with the fitted sensor; NULL with a message */
static cJSON *nf_block(const nf_args *a, const hil_series *s, const sens_fit_result *r,
                       const nf_sensor_def *def) {
  const char *type = s->type[0] ? s->type : def->found ? def->type : NULL;
  if (!type) {
    type = (strcmp(a->channel, "angle") == 0 || strcmp(a->channel, "counts") == 0) ? "encoder"
           : (strcmp(a->channel, "torque") == 0 || strcmp(a->channel, "current") == 0) ? "torque"
                                                                                          : "";
  }
  if (strcmp(type, "encoder") != 0 && strcmp(type, "torque") != 0) {
    nf_say(stderr, "achilles noise-fit: --out writes encoders and torque sensors (this is "
                    "\"%s\"); copy the printed values into the sensor's group\n",
            type);
    return NULL;
  }
  const char *joint = a->joint ? a->joint : def->joint[0] ? def->joint : NULL;
  if (!joint) {
    nf_say(stderr, "achilles noise-fit: --out needs the sensor's joint: --joint NAME or "
                    "--config ROBOT.json\n");
    return NULL;
  }
  cJSON *block = cJSON_CreateObject();
  char comment[600];
  snprintf(comment, sizeof comment,
           "Fitted by achilles noise-fit from %s (%s.%s: %zu samples at %.6g Hz, reference %s). "
           "Format: docs/sensors.md; method: docs/noise-fit.md.",
           a->log, a->sensor, a->channel, r->n, r->rate_hz, a->reference ? a->reference : "none");
  cJSON_AddStringToObject(block, "comment", comment);
  cJSON_AddNumberToObject(block, "seed", (double)a->seed);
  cJSON *list = cJSON_AddArrayToObject(block, "list");
  cJSON *o = cJSON_CreateObject();
  cJSON_AddItemToArray(list, o);
  cJSON_AddStringToObject(o, "name", a->sensor);
  cJSON_AddStringToObject(o, "type", type);
  cJSON_AddStringToObject(o, "joint", joint);
  if (strcmp(type, "encoder") == 0) {
    long cpr = a->counts_per_rev ? a->counts_per_rev : def->counts_per_rev;
    int quad = a->counts_per_rev ? a->quadrature : def->quadrature;
    if (!cpr && r->quant_step.ok && strcmp(a->channel, "angle") == 0) {
      const double c = 2.0 * NF_PI / r->quant_step.value;
      if (fabs(c - round(c)) < 1e-6 * c && c >= 1 && c < 2e9) {
        cpr = (long)round(c);
        quad = 0;
      }
    }
    if (!cpr) {
      nf_say(stderr, "achilles noise-fit: --out: cannot tell the encoder's counts_per_rev "
                      "(no quantization grid found): give --counts-per-rev N\n");
      cJSON_Delete(block);
      return NULL;
    }
    cJSON_AddNumberToObject(o, "counts_per_rev", (double)cpr);
    cJSON_AddBoolToObject(o, "quadrature", quad);
  } else if (r->quant_step.ok) {
    cJSON_AddNumberToObject(o, "resolution", nf_round(r->quant_step.value));
  }
  cJSON_AddNumberToObject(o, "rate_hz", nf_round(r->rate_hz));
  if (r->latency_samples.ok && r->latency_samples.value > 0) {
    cJSON_AddNumberToObject(o, "latency_s", nf_round(r->latency_samples.value / r->rate_hz));
  }
  cJSON *noise = cJSON_AddObjectToObject(o, "noise");
  if (r->scale_error.ok) {
    cJSON_AddNumberToObject(noise, "scale_error", nf_round(r->scale_error.value));
  }
  if (r->offset.ok) {
    cJSON_AddNumberToObject(noise, "offset", nf_round(r->offset.value));
  }
  if (r->white_sigma.ok) {
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(noise, "white"), "sigma",
                            nf_round(r->white_sigma.value));
  }
  if (r->gm_sigma.ok && r->gm_tau_s.ok) {
    cJSON *gm = cJSON_AddObjectToObject(noise, "gauss_markov");
    cJSON_AddNumberToObject(gm, "sigma", nf_round(r->gm_sigma.value));
    cJSON_AddNumberToObject(gm, "tau_s", nf_round(r->gm_tau_s.value));
  }
  if (r->cutoff_hz.ok && r->cutoff_hz.value < 0.5 * r->rate_hz) {
    cJSON *f = cJSON_AddObjectToObject(o, "filter");
    cJSON_AddStringToObject(f, "type", sens_filter_name(r->filter_type ? (sens_filter_type)r->filter_type
                                                                        : SENS_FILTER_FIRST_ORDER));
    cJSON_AddNumberToObject(f, "cutoff_hz", nf_round(r->cutoff_hz.value));
  }
  return block;
}

/* a robot of one hinge joint named `joint`: what the block needs to load without --config */
static sim_model *nf_one_joint_model(const char *joint, char *err, size_t err_sz) {
  cJSON *robot = cJSON_Parse(
      "{\"name\": \"noise-fit check\", \"timestep\": 0.001, \"gravity\": [0, 0, 0],"
      " \"bodies\": [{\"name\": \"link\", \"parent\": \"world\", \"pos\": [0, 0, 0],"
      "   \"joint\": {\"type\": \"hinge\", \"axis\": [0, 1, 0]},"
      "   \"inertial\": {\"mass\": 1, \"com\": [0, 0, 0], \"inertia\": [1, 1, 1, 0, 0, 0]}}]}");
  cJSON *j = robot ? cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(robot, "bodies"), 0),
                                         "joint")
                   : NULL;
  char *text = j && cJSON_AddStringToObject(j, "name", joint) ? cJSON_PrintUnformatted(robot) : NULL;
  cJSON_Delete(robot);
  sim_model *m = text ? sim_model_load_string(text, "noise-fit check", err, err_sz) : NULL;
  if (!text) {
    snprintf(err, err_sz, "out of memory");
  }
  free(text);
  return m;
}

/* loads the block against the robot model (what `achilles run` will do with it), or without
 * --config against a one-joint robot, so that what --out writes always loads */
static int nf_check_block(const nf_args *a, const sim_model *m, const cJSON *block) {
  char err[1024];
  sim_model *own = NULL;
  if (!m) {
    const cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItem(block, "list"), 0);
    own = nf_one_joint_model(cJSON_GetStringValue(cJSON_GetObjectItem(o, "joint")), err,
                             sizeof err);
    if (!own) {
      nf_say(stderr, "achilles noise-fit: cannot check the output: %s\n", err);
      return -1;
    }
  }
  sens_set *set = NULL;
  const int rc = sens_set_load_json(&set, m ? m : own, block, "noise-fit output", err, sizeof err);
  sim_model_free(own);
  if (rc != 0) {
    nf_say(stderr, "achilles noise-fit: the fitted sensor does not load%s%s: %s\n",
           m ? " against " : "", m ? a->config : "", err);
    return -1;
  }
  sens_set_free(&set);
  nf_say(stderr, "noise-fit: checked: the output loads%s%s\n", m ? " against " : "",
         m ? a->config : " (against a one-joint robot)");
  return 0;
}

static int nf_write(const nf_args *a, const cJSON *block) {
  char *text = cJSON_Print(block);
  char err[512];
  FILE *out = text ? cli_open_output(a->out, err, sizeof err) : NULL;
  if (!out) {
    nf_say(stderr, "achilles noise-fit: %s\n", text ? err : "out of memory");
    free(text);
    return -1;
  }
  fprintf(out, "%s\n", text);
  free(text);
  const int bad = ferror(out);
  if ((out != stdout && fclose(out) != 0) || bad) {
    nf_say(stderr, "achilles noise-fit: write error on %s\n", a->out);
    return -1;
  }
  if (out == stdout) {
    fflush(stdout);
  }
  return 0;
}

/* the error (value - reference) of the log and of a stream simulated with the fitted
 * parameters through sensors/chain.h, driven by the same reference (or the log's mean) */
static int nf_simulate(const nf_args *a, const hil_series *s, const double *ref,
                       const sens_fit_result *r, double *err_log, double *err_sim) {
  sens_chain_params p;
  sens_chain_params_default(&p);
  p.scale_error = r->scale_error.ok ? r->scale_error.value : 0.0;
  p.offset = r->offset.ok ? r->offset.value : 0.0;
  p.white_sigma = r->white_sigma.ok ? r->white_sigma.value : 0.0;
  if (r->gm_sigma.ok && r->gm_tau_s.ok) {
    p.gm_sigma = r->gm_sigma.value;
    p.gm_tau_s = r->gm_tau_s.value;
  }
  if (r->cutoff_hz.ok && r->cutoff_hz.value < 0.5 * r->rate_hz) {
    p.filter_type = r->filter_type ? (sens_filter_type)r->filter_type : SENS_FILTER_FIRST_ORDER;
    p.cutoff_hz = r->cutoff_hz.value;
  }
  p.resolution = r->quant_step.ok ? r->quant_step.value : 0.0;
  char err[256];
  if (sens_chain_check(&p, r->rate_hz, "fit.", err, sizeof err) != 0) {
    nf_say(stderr, "achilles noise-fit: cannot simulate the fitted parameters: %s\n", err);
    return -1;
  }
  double mean = 0.0;
  for (size_t i = 0; i < s->n; i++) {
    mean += s->v[i];
  }
  mean /= (double)s->n;
  sens_chain c;
  sens_rng events;
  sens_chain_init(&c, &p, r->rate_hz, a->seed, 1);
  sens_rng_seed(&events, a->seed, 15);
  double sim_mean = 0.0;
  for (size_t i = 0; i < s->n; i++) {
    const double x = ref ? ref[i] : mean;
    err_log[i] = s->v[i] - (ref ? ref[i] : mean);
    err_sim[i] = sens_chain_step(&c, x, &events) - (ref ? ref[i] : 0.0);
    sim_mean += err_sim[i];
  }
  if (!ref) { /* at rest the offset is unknown: compare fluctuations */
    sim_mean /= (double)s->n;
    for (size_t i = 0; i < s->n; i++) {
      err_sim[i] -= sim_mean;
    }
  }
  return 0;
}

static int nf_plot(const nf_args *a, const hil_series *s, const double *ref,
                   const sens_fit_result *r, const char *unit) {
  double *e1 = malloc(s->n * sizeof *e1), *e2 = malloc(s->n * sizeof *e2);
  int rc = (e1 && e2) ? 0 : -1;
  nf_say(stderr, "noise-fit: simulating a stream with the fitted parameters\n");
  rc = rc ? rc : nf_simulate(a, s, ref, r, e1, e2);
  char title[512], err[1024];
  snprintf(title, sizeof title, "%s.%s from %s: %zu samples at %.6g Hz", a->sensor, a->channel,
           a->log, s->n, r->rate_hz);
  const noise_plot_data d = {title, unit, r, s->t, e1, e2, s->n};
  if (rc == 0) {
    nf_say(stderr, "noise-fit: plotting %s with gnuplot\n", a->plot);
    rc = noise_plot_png(a->plot, &d, err, sizeof err);
    if (rc != 0) {
      nf_say(stderr, "achilles noise-fit: %s\n", err);
    } else {
      nf_say(stderr, "noise-fit: wrote %s\n", a->plot);
    }
  }
  free(e1);
  free(e2);
  return rc;
}

static int nf_run(nf_args *a, hil_series *s, sim_model **pm) {
  nf_sensor_def def;
  if (nf_definition(a, pm, &def) != 0) {
    return 1;
  }
  nf_say(stderr, "noise-fit: reading %s\n", a->log);
  if (nf_load(a, s) != 0) {
    return 1;
  }
  int fail, ref_counts;
  double *ref = nf_reference(a, s, &fail, &ref_counts);
  if (fail) {
    return 1;
  }
  /* counts → rad when the step is known */
  char unit[HIL_LOG_UNIT_MAX];
  snprintf(unit, sizeof unit, "%s", s->unit[0] ? s->unit : "");
  const double step = nf_counts_step(a, &def);
  if (strcmp(a->channel, "counts") == 0) {
    snprintf(unit, sizeof unit, "%s", step > 0 ? "rad" : "count");
    for (size_t i = 0; step > 0 && i < s->n; i++) {
      s->v[i] *= step;
      if (ref && ref_counts) { /* a reference in rad stays as it is */
        ref[i] *= step;
      }
    }
  } else if (!unit[0] && strcmp(a->channel, "angle") == 0) {
    snprintf(unit, sizeof unit, "rad");
  }
  nf_say(stderr, "noise-fit: %zu samples of %s.%s; fitting (quantization, reference and latency, "
                  "noise models, Allan deviation, autocorrelation)\n",
          s->n, a->sensor, a->channel);
  sens_fit_result r;
  char err[512];
  int status = 0;
  if (sens_fit(&r, s->t, s->v, ref, s->n, err, sizeof err) != 0) {
    nf_say(stderr, "achilles noise-fit: %s: %s\n", a->log, err);
    free(ref);
    return 1;
  }
  nf_report(a, s, &r, unit);
  fflush(stdout);
  if (a->out) {
    if (strcmp(a->channel, "counts") == 0 && step == 0) {
      nf_say(stderr, "achilles noise-fit: --out: a counts channel needs --counts-per-rev (or "
                      "--config) to give the noise in rad\n");
      status = 1;
    } else {
      cJSON *block = nf_block(a, s, &r, &def);
      status = (!block || nf_check_block(a, *pm, block) != 0 || nf_write(a, block) != 0) ? 1 : 0;
      if (status == 0 && strcmp(a->out, "-") != 0) {
        nf_say(stderr, "noise-fit: wrote %s\n", a->out);
      }
      cJSON_Delete(block);
    }
  }
  if (a->plot && nf_plot(a, s, ref, &r, unit) != 0) {
    status = 1;
  }
  sens_fit_free(&r);
  free(ref);
  return status;
}

int achilles_cmd_noise_fit(int argc, char **argv) {
  nf_args a;
  const int parsed = nf_parse(&a, argc, argv);
  if (parsed != 0) {
    return parsed > 0 ? 0 : 2;
  }
  hil_series s;
  memset(&s, 0, sizeof s);
  sim_model *m = NULL;
  const int status = nf_run(&a, &s, &m);
  hil_series_free(&s);
  sim_model_free(m);
  return status;
}
