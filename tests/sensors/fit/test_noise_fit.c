/* tests/sensors/fit/test_noise_fit.c: the end-to-end check. An encoder with known
 * parameters is simulated through sensors/ (fixed seed), recorded with the log writer
 * (hil/record/log_write.c), read back, and fitted: white σ and Gauss–Markov σ within 10%, τ within 20%, the
 * scale error within 1e-4 with the truth as reference. Then `achilles noise-fit` on the same log
 * writes a sensors block that loads against configs/club_arm.json, prints the estimates with
 * uncertainties, draws the figure (when gnuplot is installed), and says "not enough data" on a
 * record too short for τ. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hil/record/log.h"
#include "sensors/fit.h"
#include "sensors/sensors.h"
#include "encoder_log.h"
#include "support/model.h"
#include "support/skip.h"
#include "support/spawn.h"
#include "support/tmp.h"

int achilles_cmd_noise_fit(int argc, char **argv);

#define PI 3.14159265358979323846

/* the encoder: 16384 lines ×4 (step 9.6e-5 rad, below the noise so quantization is white) */
#define WHITE 1e-4
#define GM_SIGMA 2e-4
#define GM_TAU 0.2
#define SCALE 0.002
#define OFFSET 0.01

static char long_log[300], short_log[300], rest_log[300];

/* joint j through rest + amp·sin(2π·0.25·t) for `seconds`, an encoder of the parameters
 * above (τ of its drift given) recording every sample */
static void record_at(const char *path, double seconds, double rest, double amp, double tau,
                      uint64_t seed) {
  char sensors[512];
  snprintf(sensors, sizeof sensors,
           "{\"seed\": %llu, \"list\": [{\"name\": \"enc\", \"type\": \"encoder\", \"joint\": "
           "\"j\", \"counts_per_rev\": 16384, \"quadrature\": true, \"noise\": {\"scale_error\": "
           "%g, \"offset\": %g, \"white\": {\"sigma\": %g}, \"gauss_markov\": {\"sigma\": %g, "
           "\"tau_s\": %g}}}]}",
           (unsigned long long)seed, SCALE, OFFSET, WHITE, GM_SIGMA, tau);
  encoder_log_record(path, sensors, seconds, rest, amp, 100);
}

static void record(const char *path, double seconds, double amp, double tau, uint64_t seed) {
  record_at(path, seconds, 0.0, amp, tau, seed);
}

static int setup(void **state) {
  if (ts_tmp_setup(state) != 0) {
    return -1;
  }
  ts_tmp_path(long_log, sizeof long_log, "long.ndjson");
  ts_tmp_path(short_log, sizeof short_log, "short.ndjson");
  ts_tmp_path(rest_log, sizeof rest_log, "rest.ndjson");
  /* 100 s at 1 kHz: 500 correlation times (see test_fit.c for what that buys) */
  record(long_log, 100.0, 0.8, GM_TAU, 7);
  /* 5 s with τ = 2 s: too short for τ */
  record(short_log, 5.0, 0.0, 2.0, 8);
  /* 20 s held at 0.3 rad: a constant reference that is not zero */
  record_at(rest_log, 20.0, 0.3, 0.0, GM_TAU, 9);
  return 0;
}

static void check(const sens_fit_value *v, double truth, double rel, const char *what) {
  if (!v->ok || fabs(v->value / truth - 1) > rel) {
    fprintf(stderr, "%s: %g ± %g (ok %d, %s), true %g\n", what, v->value, v->sigma, v->ok,
            v->note, truth);
  }
  assert_true(v->ok && fabs(v->value / truth - 1) <= rel);
}

/* the log, read back and fitted through the library */
static void test_recover_parameters(void **state) {
  (void)state;
  char err[512];
  hil_series s;
  assert_int_equal(hil_series_load(&s, long_log, "enc", "angle", err, sizeof err), 0);
  assert_int_equal(s.n, 100000);
  assert_int_equal(s.skipped, 0);
  assert_non_null(s.truth);
  sens_fit_result r;
  assert_int_equal(sens_fit(&r, s.t, s.v, s.truth, s.n, err, sizeof err), 0);
  check(&r.white_sigma, WHITE, 0.10, "white sigma");
  check(&r.gm_sigma, GM_SIGMA, 0.10, "GM sigma");
  check(&r.gm_tau_s, GM_TAU, 0.20, "GM tau");
  assert_true(r.scale_error.ok && fabs(r.scale_error.value - SCALE) < 1e-4);
  assert_true(r.offset.ok && fabs(r.offset.value - OFFSET) < 1e-4);
  /* the counter's step: 2π/65536, exactly the grid of the recorded angles */
  check(&r.quant_step, 2 * PI / 65536, 1e-9, "quantization step");
  sens_fit_free(&r);
  hil_series_free(&s);
}

/* runs the command with stdout redirected to a file; returns its exit status */
/* `achilles noise-fit ARGS` in this process, its output into files */
static int run_cmd(const char *out_path, int argc, char **argv) {
  return ts_call(achilles_cmd_noise_fit, argc, argv, out_path, NULL);
}

static int run_cmd2(const char *out_path, const char *err_path, int argc, char **argv) {
  return ts_call(achilles_cmd_noise_fit, argc, argv, out_path, err_path);
}

static char *slurp(const char *path) {
  char *text = ts_read_file(path, NULL);
  assert_non_null(text);
  return text;
}

static int have_gnuplot(void) {
  return !ts_hidden("gnuplot-nox") && system("command -v gnuplot > /dev/null 2>&1") == 0;
}

static double get(const cJSON *o, const char *a, const char *b) {
  const cJSON *x = cJSON_GetObjectItem(o, a);
  x = b ? cJSON_GetObjectItem(x, b) : x;
  assert_true(cJSON_IsNumber(x));
  return x->valuedouble;
}

static void test_command(void **state) {
  (void)state;
  char json[300], png[300], out[300], err[512];
  ts_tmp_path(json, sizeof json, "fit.json");
  ts_tmp_path(png, sizeof png, "fit.png");
  ts_tmp_path(out, sizeof out, "stdout.txt");
  const int plot = have_gnuplot();
  char *argv[] = {"noise-fit",    long_log, "--sensor", "enc.angle", "--reference", "truth",
                  "--out",        json,     "--config", ACHILLES_SOURCE_DIR "/configs/club_arm.json",
                  "--joint",      "shoulder", "--plot", png,      NULL};
  const int argc = plot ? 14 : 12;
  assert_int_equal(run_cmd(out, argc, argv), 0);
  /* the estimates, each with an uncertainty */
  char *text = slurp(out);
  assert_non_null(strstr(text, "enc.angle in "));
  assert_non_null(strstr(text, "σ_wn   = "));
  assert_non_null(strstr(strstr(text, "σ_wn"), " ± "));
  assert_non_null(strstr(strstr(text, "σ_GM"), " ± "));
  assert_non_null(strstr(text, "f_c    : not estimated: no low-pass seen"));
  free(text);
  /* the block loads against the club arm, as `achilles run` would load it */
  text = slurp(json);
  cJSON *block = cJSON_Parse(text);
  free(text);
  assert_non_null(block);
  sim_model *m = sim_model_load_file(ACHILLES_SOURCE_DIR "/configs/club_arm.json", err, sizeof err);
  assert_non_null(m);
  sens_set *set = NULL;
  if (sens_set_load_json(&set, m, block, "fit.json", err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
  }
  assert_non_null(set);
  const sens_sensor *s = sens_set_sensor(set, 0);
  assert_string_equal(s->name, "enc");
  assert_int_equal(s->type, SENS_ENCODER);
  assert_int_equal(s->u.enc.counts_per_rev * (s->u.enc.quadrature ? 4 : 1), 65536);
  sens_set_free(&set);
  sim_model_free(m);
  /* and carries the fitted values (rounded to 4 digits) */
  const cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItem(block, "list"), 0);
  const cJSON *noise = cJSON_GetObjectItem(o, "noise");
  assert_true(fabs(get(noise, "white", "sigma") / WHITE - 1) < 0.10);
  assert_true(fabs(get(noise, "gauss_markov", "sigma") / GM_SIGMA - 1) < 0.10);
  assert_true(fabs(get(noise, "gauss_markov", "tau_s") / GM_TAU - 1) < 0.20);
  assert_true(fabs(get(noise, "scale_error", NULL) - SCALE) < 1e-4);
  assert_string_equal(cJSON_GetObjectItem(o, "joint")->valuestring, "shoulder");
  cJSON_Delete(block);
  TS_REQUIRE("gnuplot-nox", plot); /* the figure, last: everything else was checked */
  /* a PNG of a plausible size */
  FILE *f = fopen(png, "rb");
  assert_non_null(f);
  unsigned char sig[8];
  assert_int_equal(fread(sig, 1, 8, f), 8);
  fseek(f, 0, SEEK_END);
  assert_true(ftell(f) > 20000);
  fclose(f);
  assert_memory_equal(sig, "\x89PNG\r\n\x1a\n", 8);
}

static void test_command_too_short(void **state) {
  (void)state;
  char out[300];
  ts_tmp_path(out, sizeof out, "short.txt");
  char *argv[] = {"noise-fit", short_log, "--sensor", "enc", NULL};
  assert_int_equal(run_cmd(out, 4, argv), 0);
  char *text = slurp(out);
  if (!strstr(text, "not enough data to estimate tau")) {
    fprintf(stderr, "%s", text);
  }
  assert_non_null(strstr(text, "τ      : not estimated: not enough data to estimate tau"));
  assert_non_null(strstr(text, "have 5 s"));
  assert_non_null(strstr(text, "scale error                 : not estimated: needs a reference"));
  free(text);
}

static void test_command_usage(void **state) {
  (void)state;
  char out[300];
  ts_tmp_path(out, sizeof out, "usage.txt");
  char *help[] = {"noise-fit", "--help", NULL};
  assert_int_equal(run_cmd(out, 2, help), 0);
  char *text = slurp(out);
  assert_non_null(strstr(text, "usage: achilles noise-fit LOG --sensor NAME[.CHANNEL]"));
  assert_non_null(strstr(text, "--reference"));
  assert_non_null(strstr(text, "--plot FILE.png"));
  free(text);
  char *nosensor[] = {"noise-fit", long_log, NULL};
  assert_int_equal(run_cmd(out, 2, nosensor), 2);
  char *badref[] = {"noise-fit", long_log, "--sensor", "enc", "--reference", "nope", NULL};
  assert_int_equal(run_cmd(out, 6, badref), 1);
  char *missing[] = {"noise-fit", "/nonexistent.ndjson", "--sensor", "enc", NULL};
  assert_int_equal(run_cmd(out, 4, missing), 1);
  /* --out without a joint: says what it needs */
  char json[300];
  ts_tmp_path(json, sizeof json, "nojoint.json");
  char *nojoint[] = {"noise-fit", short_log, "--sensor", "enc", "--out", json, NULL};
  assert_int_equal(run_cmd(out, 6, nojoint), 1);
}


/* Issue 10, noise fit 1: --counts-per-rev converts the counts channel, not a reference given in
 * rad (a motion-capture angle in a CSV): the scale error is estimated. */
/* where a run of the command puts its standard output and error: STEM.txt and STEM.err in the
 * suite folder */
typedef struct outputs {
  char out[300], err[300];
} outputs;

static outputs outputs_of(const char *stem) {
  outputs o;
  char name[64];
  snprintf(name, sizeof name, "%s.txt", stem);
  ts_tmp_path(o.out, sizeof o.out, name);
  snprintf(name, sizeof name, "%s.err", stem);
  ts_tmp_path(o.err, sizeof o.err, name);
  return o;
}

static void test_counts_with_reference_in_rad(void **state) {
  (void)state;
  char err[512], csv[300];
  ts_tmp_path(csv, sizeof csv, "counts.csv");
  const outputs o = outputs_of("counts");
  hil_series c, a;
  assert_int_equal(hil_series_load(&c, long_log, "enc", "counts", err, sizeof err), 0);
  assert_int_equal(hil_series_load(&a, long_log, "enc", "angle", err, sizeof err), 0);
  assert_int_equal(c.n, a.n);
  FILE *f = fopen(csv, "w");
  assert_non_null(f);
  fprintf(f, "time,enc.counts,mocap.angle\n");
  for (size_t i = 0; i < c.n; i++) {
    fprintf(f, "%.6f,%.0f,%.17g\n", c.t[i], c.v[i], a.truth[i]);
  }
  fclose(f);
  hil_series_free(&c);
  hil_series_free(&a);
  char *argv[] = {"noise-fit", csv, "--sensor", "enc.counts", "--counts-per-rev", "16384",
                  "--quadrature", "--reference", "mocap.angle", NULL};
  assert_int_equal(run_cmd2(o.out, o.err, 9, argv), 0);
  char *text = slurp(o.out);
  const char *line = strstr(text, "scale error");
  assert_non_null(line);
  if (strncmp(line, "scale error                 = 2.0", 33) != 0) {
    fprintf(stderr, "%s", text);
  }
  assert_memory_equal(line, "scale error                 = 2.0", 33);
  free(text);
}

/* Issue 10, noise fit 2: a constant reference that is not zero is reported as resting, and the
 * --out block loads (here without --config: it is checked against a one-joint robot) */
static void test_resting_reference_out(void **state) {
  (void)state;
  char json[300], err[512];
  ts_tmp_path(json, sizeof json, "rest.json");
  const outputs o = outputs_of("rest");
  char *argv[] = {"noise-fit", rest_log, "--sensor", "enc.angle", "--reference", "truth",
                  "--out", json, "--joint", "j", NULL};
  assert_int_equal(run_cmd2(o.out, o.err, 10, argv), 0);
  char *text = slurp(o.out);
  assert_non_null(strstr(text, "reference: truth (resting: constant)"));
  assert_non_null(strstr(text, "not estimated: the reference rests (constant 0.3)"));
  free(text);
  text = slurp(o.err);
  assert_non_null(strstr(text, "checked: the output loads (against a one-joint robot)"));
  free(text);
  text = slurp(json);
  cJSON *block = cJSON_Parse(text);
  free(text);
  sim_model *m = sim_model_load_string(encoder_log_robot, "fixture", err, sizeof err);
  assert_non_null(m);
  sens_set *set = NULL;
  if (sens_set_load_json(&set, m, block, "rest.json", err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
  }
  assert_non_null(set);
  const cJSON *noise = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(block, "list"), 0),
                                           "noise");
  assert_null(cJSON_GetObjectItem(noise, "scale_error"));
  assert_true(fabs(get(noise, "offset", NULL) - (OFFSET + SCALE * 0.3)) < 1e-4);
  sens_set_free(&set);
  sim_model_free(m);
  cJSON_Delete(block);
}

/* Issue 11, item 11: a CSV header with terminal escape codes is echoed escaped */
static void test_escapes_control_characters(void **state) {
  (void)state;
  char csv[300];
  ts_tmp_path(csv, sizeof csv, "escape.csv");
  const outputs o = outputs_of("escape");
  ts_write_file(csv, "\x1b[2J\x1b]0;owned\x07time,enc.angle\n0,1\n");
  char *argv[] = {"noise-fit", csv, "--sensor", "enc\x1b[31m.angle", NULL};
  assert_int_equal(run_cmd2(o.out, o.err, 4, argv), 1);
  char *text = slurp(o.err);
  assert_null(strchr(text, 0x1b));
  assert_null(strchr(text, 0x07));
  assert_non_null(strstr(text, "\\x1b[2J"));
  free(text);
}

/* Issue 11, item 12: a log without its end record (a crashed recording) is said to be one, and
 * a sample that does not match the header (replay calls it damage) is counted and named */
static void test_end_missing_and_mismatch(void **state) {
  (void)state;
  char cut[300], bad[300], err[512];
  ts_tmp_path(cut, sizeof cut, "cut.ndjson");
  ts_tmp_path(bad, sizeof bad, "bad.ndjson");
  const outputs o = outputs_of("cut");
  /* the short log without its last line, the end record */
  char *text = slurp(short_log);
  char *last = strrchr(text, '\n');
  *last = '\0';
  last = strrchr(text, '\n');
  assert_non_null(strstr(last, "\"end\""));
  last[1] = '\0';
  ts_write_file(cut, text);
  free(text);
  char *argv[] = {"noise-fit", cut, "--sensor", "enc", NULL};
  assert_int_equal(run_cmd2(o.out, o.err, 4, argv), 0);
  text = slurp(o.out);
  assert_non_null(strstr(text, "warning: the log has no end record"));
  free(text);
  text = slurp(o.err);
  assert_non_null(strstr(text, "has no end record: the recording did not close cleanly"));
  free(text);
  /* a log whose header has enc with counts and angle, and one sample of enc with angle only */
  sim_model *m = sim_model_load_string(encoder_log_robot, "fixture", err, sizeof err);
  sim_data *d = sim_data_new(m);
  const char *cfg[2] = {
      "{\"list\": [{\"name\": \"enc\", \"type\": \"encoder\", \"joint\": \"j\", "
      "\"counts_per_rev\": 1024, \"noise\": {\"white\": {\"sigma\": 0.01}}}]}",
      "{\"list\": [{\"name\": \"enc\", \"type\": \"encoder\", \"joint\": \"j\", "
      "\"counts_per_rev\": 1024, \"output\": \"angle\"}]}"};
  sens_set *set[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++) {
    cJSON *json = cJSON_Parse(cfg[i]);
    assert_int_equal(sens_set_load_json(&set[i], m, json, "test", err, sizeof err), 0);
    cJSON_Delete(json);
  }
  hil_log_header h;
  assert_int_equal(hil_log_header_init(&h, m, set[0]), 0);
  hil_log_writer *w = hil_log_open(bad, &h, err, sizeof err);
  assert_non_null(w);
  for (int k = 0; k < 300; k++) {
    d->time = 1e-3 * k;
    d->nstep = k;
    sim_forward(m, d);
    const int which = k == 150;
    assert_true(sens_set_update(set[which], m, d) > 0);
    const sens_sensor *s = sens_set_sensor(set[which], 0);
    assert_int_equal(hil_log_write_sample(w, s, &s->sample, d->time), 0);
  }
  assert_int_equal(hil_log_close(&w), 0);
  sens_set_free(&set[0]);
  sens_set_free(&set[1]);
  ts_sim_free(m, d);
  char *argv2[] = {"noise-fit", bad, "--sensor", "enc.angle", NULL};
  assert_int_equal(run_cmd2(o.out, o.err, 4, argv2), 0);
  text = slurp(o.out);
  assert_non_null(strstr(text, "warning: 1 damaged records skipped"));
  assert_non_null(strstr(text, "enc.angle in "));
  assert_non_null(strstr(text, ": 299 samples"));
  free(text);
  text = slurp(o.err);
  assert_non_null(strstr(text, "record 152 at byte"));
  assert_non_null(strstr(text, "does not match the header's sensors and channels"));
  free(text);
}

TS_MAIN_WITH(setup, ts_tmp_teardown, test_recover_parameters, test_command, test_command_too_short,
                                     test_command_usage, test_counts_with_reference_in_rad,
                                     test_resting_reference_out, test_escapes_control_characters,
                                     test_end_missing_and_mismatch)
