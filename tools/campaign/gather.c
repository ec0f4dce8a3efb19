/* tools/campaign/gather.c: what a campaign found — every run's result read back into a table of
 * runs × checks (CSV), a summary with the pass rates per axis value and the worst runs with the
 * command that reproduces each (Markdown), and plots of the pass rate and of each check's
 * measured values against every numeric axis (gnuplot). */
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "campaign.h"
#include "hil/scenario/scenario.h"

extern char **environ;

#define MAX_CHECKS 64
#define WORST 10

typedef struct table {
  int nchecks;
  char check[MAX_CHECKS][128]; /* every check name met, in the order met */
  int shown[MAX_CHECKS];       /* in the summary's tables and the plots: not an implicit check
                                  (time limit, firmware alive) that every run passed */
  cJSON **result;              /* [nruns], NULL when a run has none */
  int failed;
} table;

static const char *str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

static int passed(const cJSON *r) {
  return r && strcmp(str(r, "verdict"), "pass") == 0;
}

/* the check of that name in a result, or NULL */
static const cJSON *check_of(const cJSON *r, const char *name) {
  const cJSON *checks = cJSON_GetObjectItemCaseSensitive(r, "checks");
  for (int k = 0; k < cJSON_GetArraySize(checks); k++) {
    const cJSON *ck = cJSON_GetArrayItem(checks, k);
    if (strcmp(str(ck, "name"), name) == 0) {
      return ck;
    }
  }
  return NULL;
}

/* the implicit checks speak up only when a run failed them */
static void choose_shown(const campaign *c, table *t) {
  for (int k = 0; k < t->nchecks; k++) {
    int implicit = 0, all_pass = 1;
    for (int i = 0; i < c->nruns; i++) {
      const cJSON *ck = check_of(t->result[i], t->check[k]);
      if (ck) {
        const char *type = str(ck, "type");
        implicit |= strcmp(type, "time_limit") == 0 || strcmp(type, "firmware_alive") == 0;
        all_pass &= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ck, "pass"));
      }
    }
    t->shown[k] = !(implicit && all_pass);
  }
}

static int load_table(const campaign *c, table *t) {
  memset(t, 0, sizeof *t);
  t->result = calloc((size_t)c->nruns + 1, sizeof *t->result);
  if (!t->result) {
    return -1;
  }
  for (int i = 0; i < c->nruns; i++) {
    t->result[i] = campaign_read_result(c, i);
    t->failed += !passed(t->result[i]);
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(t->result[i], "checks");
    for (int k = 0; k < cJSON_GetArraySize(checks); k++) {
      const char *name = str(cJSON_GetArrayItem(checks, k), "name");
      int known = 0;
      for (int j = 0; j < t->nchecks && !known; j++) {
        known = strcmp(t->check[j], name) == 0;
      }
      if (!known && t->nchecks < MAX_CHECKS) {
        snprintf(t->check[t->nchecks++], sizeof t->check[0], "%s", name);
      }
    }
  }
  choose_shown(c, t);
  return 0;
}

static void free_table(const campaign *c, table *t) {
  for (int i = 0; t->result && i < c->nruns; i++) {
    cJSON_Delete(t->result[i]);
  }
  free(t->result);
}

/* --- CSV -------------------------------------------------------------------------------------- */

static void csv_field(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') {
      fputc('"', f);
    }
    fputc(*s, f);
  }
  fputc('"', f);
}

static void csv_number(FILE *f, const cJSON *v) {
  if (cJSON_IsNumber(v)) {
    fprintf(f, ",%.17g", v->valuedouble);
  } else {
    fputc(',', f);
  }
}

static int write_csv(const campaign *c, const table *t, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    return -1;
  }
  fputs("id,scenario", f);
  for (int a = 0; a < c->naxes; a++) {
    fputc(',', f);
    csv_field(f, c->axes[a].name);
  }
  fputs(",verdict,failed,error", f);
  for (int k = 0; k < t->nchecks; k++) {
    char head[160];
    snprintf(head, sizeof head, "%s [measured]", t->check[k]);
    fputc(',', f);
    csv_field(f, head);
    snprintf(head, sizeof head, "%s [pass]", t->check[k]);
    fputc(',', f);
    csv_field(f, head);
  }
  fputc('\n', f);
  for (int i = 0; i < c->nruns; i++) {
    const cJSON *r = t->result[i];
    csv_field(f, c->runs[i].id);
    fputc(',', f);
    csv_field(f, c->scenario_name[c->runs[i].scenario]);
    for (int a = 0; a < c->naxes; a++) {
      fputc(',', f);
      csv_field(f, c->axes[a].values[c->runs[i].value[a]].label);
    }
    fputc(',', f);
    csv_field(f, r ? str(r, "verdict") : "missing");
    csv_number(f, cJSON_GetObjectItemCaseSensitive(r, "failed"));
    fputc(',', f);
    csv_field(f, str(r, "error"));
    for (int k = 0; k < t->nchecks; k++) {
      const cJSON *ck = check_of(r, t->check[k]);
      csv_number(f, cJSON_GetObjectItemCaseSensitive(ck, "measured"));
      const int pass = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ck, "pass"));
      fprintf(f, ",%s", !ck ? "" : pass ? "1" : "0");
    }
    fputc('\n', f);
  }
  return fclose(f);
}

/* --- Markdown --------------------------------------------------------------------------------- */

/* runs with value v of axis a: how many, how many passed the check k (k = -1: every check) */
static void rate(const campaign *c, const table *t, int a, int v, int k, int *runs, int *ok) {
  *runs = *ok = 0;
  for (int i = 0; i < c->nruns; i++) {
    if (a >= 0 && c->runs[i].value[a] != v) {
      continue;
    }
    const cJSON *r = t->result[i];
    (*runs)++;
    if (k < 0) {
      *ok += passed(r);
    } else {
      const cJSON *ck = check_of(r, t->check[k]);
      *ok += ck && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ck, "pass"));
    }
  }
}

static void md_text(FILE *f, const char *s) { /* a table cell: | and newlines would break it */
  for (; *s; s++) {
    fputs(*s == '|' ? "\\|" : *s == '\n' ? " " : (char[2]){*s, 0}, f);
  }
}

static void md_axis(FILE *f, const campaign *c, const table *t, int a) {
  fprintf(f, "\n### %s\n\n| %s | runs | pass rate |", c->axes[a].name, c->axes[a].name);
  for (int k = 0; k < t->nchecks; k++) {
    if (!t->shown[k]) {
      continue;
    }
    fputc(' ', f);
    md_text(f, t->check[k]);
    fputs(" |", f);
  }
  fputs("\n|---|---:|---:|", f);
  for (int k = 0; k < t->nchecks; k++) {
    fputs(t->shown[k] ? "---:|" : "", f);
  }
  fputc('\n', f);
  for (int v = 0; v < c->axes[a].nvalues; v++) {
    int runs, ok;
    rate(c, t, a, v, -1, &runs, &ok);
    fprintf(f, "| %s | %d | %.1f %% |", c->axes[a].values[v].label, runs,
            runs ? 100.0 * ok / runs : 0);
    for (int k = 0; k < t->nchecks; k++) {
      if (t->shown[k]) {
        rate(c, t, a, v, k, &runs, &ok);
        fprintf(f, " %.1f %% |", runs ? 100.0 * ok / runs : 0);
      }
    }
    fputc('\n', f);
  }
}

/* how badly a run failed: its failed checks, then the largest measured/bound among them */
static double badness(const cJSON *r) {
  if (!r) {
    return 1e12;
  }
  const cJSON *checks = cJSON_GetObjectItemCaseSensitive(r, "checks");
  double failed = cJSON_GetObjectItemCaseSensitive(r, "error") ? 1 : 0, worst = 0;
  for (int k = 0; k < cJSON_GetArraySize(checks); k++) {
    const cJSON *ck = cJSON_GetArrayItem(checks, k);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ck, "pass"))) {
      continue;
    }
    failed++;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(ck, "measured");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(ck, "bound");
    if (cJSON_IsNumber(m) && cJSON_IsNumber(b) && b->valuedouble > 0) {
      worst = fmax(worst, fabs(m->valuedouble) / b->valuedouble);
    }
  }
  return failed * 1e6 + fmin(worst, 999999);
}

static void md_worst(FILE *f, const campaign *c, const table *t) {
  int order[WORST], n = 0;
  for (int i = 0; i < c->nruns; i++) { /* the WORST worst, by insertion */
    if (passed(t->result[i])) {
      continue;
    }
    const double b = badness(t->result[i]);
    int at = n < WORST ? n++ : WORST;
    while (at > 0 && badness(t->result[order[at - 1]]) < b) {
      if (at < WORST) {
        order[at] = order[at - 1];
      }
      at--;
    }
    if (at < WORST) {
      order[at] = i;
    }
  }
  if (n == 0) {
    fputs("\nEvery run passed.\n", f);
    return;
  }
  fprintf(f, "\n## The %d worst runs\n\nEach command reruns one alone (`achilles test` with the "
             "run's own scenario: its seed and values).\n\n", n);
  for (int w = 0; w < n; w++) {
    const int i = order[w];
    const cJSON *r = t->result[i];
    char cmd[4096];
    campaign_run_command(c, i, cmd, sizeof cmd);
    fprintf(f, "%d. **%s**", w + 1, c->runs[i].id);
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(r, "seed");
    if (cJSON_IsNumber(seed)) {
      fprintf(f, " (seed %.0f)", seed->valuedouble);
    }
    fputs("\n", f);
    if (cJSON_GetObjectItemCaseSensitive(r, "error")) {
      fprintf(f, "   - error: %s\n", str(r, "error"));
    }
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(r, "checks");
    for (int k = 0; k < cJSON_GetArraySize(checks); k++) {
      const cJSON *ck = cJSON_GetArrayItem(checks, k);
      if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ck, "pass"))) {
        fprintf(f, "   - %s: %s\n", str(ck, "name"), str(ck, "message"));
      }
    }
    fprintf(f, "   - `%s`\n", cmd);
  }
}

static int write_markdown(const campaign *c, const table *t, const char *path, int plots) {
  FILE *f = fopen(path, "w");
  if (!f) {
    return -1;
  }
  int runs, ok;
  rate(c, t, -1, 0, -1, &runs, &ok);
  fprintf(f, "# Campaign %s\n\n%d runs (%s), %d passed (%.1f %%), %d failed.\n", c->name, runs,
          c->spec, ok, runs ? 100.0 * ok / runs : 0, runs - ok);
  fprintf(f, "\nResults per run: `runs/ID/result.json`; all of them in `results.csv`.\n");
  if (c->naxes > 0) {
    fputs("\n## Pass rate by axis value\n", f);
  }
  for (int a = 0; a < c->naxes; a++) { /* seeds are not overrides: the worst runs name them */
    if (!c->axes[a].seed) {
      md_axis(f, c, t, a);
    }
  }
  md_worst(f, c, t);
  if (plots) {
    fputs("\n## Plots\n\n", f);
    for (int a = 0; a < c->naxes; a++) {
      if (c->axes[a].values[0].numeric && !c->axes[a].seed && c->axes[a].nvalues > 1) {
        fprintf(f, "![pass rate against %s](plots/pass_rate_%s.png)\n", c->axes[a].name,
                c->axes[a].name);
      }
    }
  }
  return fclose(f);
}

/* --- plots ------------------------------------------------------------------------------------ */

static void slug(char *out, size_t out_sz, const char *name) {
  size_t k = 0;
  for (const char *p = name; *p && k + 1 < out_sz; p++) {
    const int keep =
        (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9');
    if (keep || (k > 0 && out[k - 1] != '_')) {
      out[k++] = keep ? *p : '_';
    }
  }
  out[k] = '\0';
}

static void gp_quoted(FILE *f, const char *s) { /* a gnuplot single-quoted string */
  fputc('\'', f);
  for (; *s; s++) {
    fputs(*s == '\'' ? "''" : (char[2]){*s, 0}, f);
  }
  fputc('\'', f);
}

/* gnuplot SCRIPT (its output paths are absolute); its exit status, -1 when it cannot start */
static int run_gnuplot(const char *script) {
  char *argv[] = {"gnuplot", (char *)script, NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 0, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", 0, 0); /* its range warnings */
  pid_t pid;
  const int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  return rc == 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* the pass rate (every check, and each) against numeric axis a */
static int plot_rates(const campaign *c, const table *t, int a, const char *dir) {
  char data[CAMPAIGN_PATH_MAX], script[CAMPAIGN_PATH_MAX];
  const char *axis = c->axes[a].name;
  snprintf(data, sizeof data, "%s/pass_rate_%s.dat", dir, axis);
  snprintf(script, sizeof script, "%s/pass_rate_%s.gp", dir, axis);
  FILE *d = fopen(data, "w"), *g = fopen(script, "w");
  if (!d || !g) {
    if (d) fclose(d);
    if (g) fclose(g);
    return -1;
  }
  for (int v = 0; v < c->axes[a].nvalues; v++) {
    int runs, ok;
    rate(c, t, a, v, -1, &runs, &ok);
    fprintf(d, "%.17g %.6g", c->axes[a].values[v].number, runs ? 100.0 * ok / runs : 0);
    for (int k = 0; k < t->nchecks; k++) {
      rate(c, t, a, v, k, &runs, &ok);
      fprintf(d, " %.6g", runs ? 100.0 * ok / runs : 0);
    }
    fputc('\n', d);
  }
  fclose(d);
  fprintf(g, "set terminal png size 900,560 noenhanced\nset output '%s/pass_rate_%s.png'\n",
          dir, axis);
  fprintf(g, "set title 'campaign %s: pass rate against %s'\nset xlabel '%s'\n", c->name, axis,
          axis);
  fprintf(g, "set ylabel 'runs passed (%%)'\nset yrange [0:105]\nset key below\nset grid\n");
  fprintf(g, "plot '%s' using 1:2 with linespoints lw 2 title 'every check'", data);
  for (int k = 0; k < t->nchecks; k++) {
    if (t->shown[k]) {
      fprintf(g, ", '' using 1:%d with linespoints title ", k + 3);
      gp_quoted(g, t->check[k]);
    }
  }
  fputc('\n', g);
  fclose(g);
  return run_gnuplot(script);
}

/* check k's measured value of every run against numeric axis a, with its bound */
static int plot_measured(const campaign *c, const table *t, int a, int k, const char *dir) {
  char data[CAMPAIGN_PATH_MAX], script[CAMPAIGN_PATH_MAX], name[96];
  const char *axis = c->axes[a].name;
  slug(name, sizeof name, t->check[k]);
  snprintf(data, sizeof data, "%s/%s_vs_%s.dat", dir, name, axis);
  snprintf(script, sizeof script, "%s/%s_vs_%s.gp", dir, name, axis);
  FILE *d = fopen(data, "w"), *g = fopen(script, "w");
  if (!d || !g) {
    if (d) fclose(d);
    if (g) fclose(g);
    return -1;
  }
  double bound = NAN;
  const char *unit = "";
  int points = 0;
  for (int i = 0; i < c->nruns; i++) {
    const cJSON *ck = check_of(t->result[i], t->check[k]);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(ck, "measured");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(ck, "bound");
    if (cJSON_IsNumber(m)) {
      fprintf(d, "%.17g %.17g\n", c->axes[a].values[c->runs[i].value[a]].number, m->valuedouble);
      points++;
    }
    if (cJSON_IsNumber(b)) {
      bound = b->valuedouble;
      unit = str(ck, "unit");
    }
  }
  fclose(d);
  fprintf(g, "set terminal png size 900,560 noenhanced\nset output '%s/%s_vs_%s.png'\n", dir,
          name, axis);
  fputs("set title ", g);
  gp_quoted(g, t->check[k]);
  fprintf(g, "\nset xlabel '%s'\nset ylabel 'measured (%s)'\nset grid\nset key top left\n",
          axis, unit);
  fprintf(g, "plot '%s' using 1:2 with points pt 7 title 'each run'", data);
  if (isfinite(bound)) {
    fprintf(g, ", %.17g with lines lw 2 title 'bound'", bound);
  }
  fputc('\n', g);
  fclose(g);
  return points > 0 ? run_gnuplot(script) : 0;
}

/* 1 when every plot was drawn, 0 when gnuplot is missing or failed (the scripts stay) */
static int write_plots(const campaign *c, const table *t) {
  char dir[CAMPAIGN_PATH_MAX];
  snprintf(dir, sizeof dir, "%s/plots", c->out);
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    return 0;
  }
  int ok = 1, any = 0;
  for (int a = 0; a < c->naxes; a++) {
    if (!c->axes[a].values[0].numeric || c->axes[a].nvalues < 2 || c->axes[a].seed) {
      continue;
    }
    any = 1;
    ok &= plot_rates(c, t, a, dir) == 0;
    for (int k = 0; k < t->nchecks; k++) {
      ok &= !t->shown[k] || plot_measured(c, t, a, k, dir) == 0;
    }
  }
  if (any && !ok) {
    fprintf(stderr, "[campaign] gnuplot did not draw every plot (Debian: apt-get install "
                    "gnuplot-nox); the scripts are in %s\n", dir);
  }
  return any && ok;
}

/* --- the whole ------------------------------------------------------------------------------- */

int campaign_gather(const campaign *c, int *failed, char *err, size_t err_sz) {
  table t;
  if (load_table(c, &t) != 0) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  char csv[CAMPAIGN_PATH_MAX], md[CAMPAIGN_PATH_MAX];
  snprintf(csv, sizeof csv, "%s/results.csv", c->out);
  snprintf(md, sizeof md, "%s/summary.md", c->out);
  const int plots = write_plots(c, &t);
  int rc = 0;
  if (write_csv(c, &t, csv) != 0 || write_markdown(c, &t, md, plots) != 0) {
    snprintf(err, err_sz, "%s: cannot write: %s", c->out, strerror(errno));
    rc = -1;
  }
  *failed = t.failed;
  free_table(c, &t);
  if (rc == 0) {
    printf("%d runs, %d passed, %d failed: %s, %s%s%s\n", c->nruns, c->nruns - *failed, *failed,
           md, csv, plots ? ", plots in " : "", plots ? "plots/" : "");
  }
  return rc;
}

int campaign_junit(const campaign *c, const char *path, char *err, size_t err_sz) {
  table t;
  if (load_table(c, &t) != 0) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  const cJSON **results = calloc((size_t)c->nruns + 1, sizeof *results);
  int n = 0;
  for (int i = 0; results && i < c->nruns; i++) {
    if (t.result[i]) {
      results[n++] = t.result[i];
    }
  }
  const int rc = results ? hil_scenario_write_junit(path, (const cJSON *const *)results, n, err,
                                                    err_sz)
                         : -1;
  free(results);
  free_table(c, &t);
  return rc;
}
