/* tools/campaign/spec.c: a campaign's spec, its matrix expanded into runs with stable ids, and
 * each run's scenario (the base scenario with the run's axis values set by JSON pointer). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "campaign.h"
#include "hil/error.h"
#include "hil/scenario/scenario.h"
#include "sim/json_read.h"

volatile sig_atomic_t campaign_interrupted;

static void dir_of(char *out, size_t out_sz, const char *path) {
  const char *slash = strrchr(path, '/');
  snprintf(out, out_sz, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
}

/* an absolute path of p, for files the runs read from other folders */
static void absolute(char *out, size_t out_sz, const char *p) {
  char cwd[CAMPAIGN_PATH_MAX];
  if (p[0] == '/' || !getcwd(cwd, sizeof cwd)) {
    snprintf(out, out_sz, "%s", p);
  } else {
    snprintf(out, out_sz, "%s/%s", cwd, p);
  }
}

/* --- JSON pointers (RFC 6901), creating objects on the way; "-" appends to an array -------- */

static void unescape(char *token) {
  char *w = token;
  for (const char *r = token; *r; r++) {
    if (r[0] == '~' && (r[1] == '0' || r[1] == '1')) {
      *w++ = r[1] == '0' ? '~' : '/';
      r++;
    } else {
      *w++ = *r;
    }
  }
  *w = '\0';
}

/* sets root[pointer] to a copy of value; -1 with what went wrong in why */
static int set_pointer(cJSON *root, const char *pointer, const cJSON *value, char *why,
                       size_t why_sz) {
  if (pointer[0] != '/') {
    snprintf(why, why_sz, "\"%s\": a JSON pointer starts with /", pointer);
    return -1;
  }
  cJSON *at = root;
  const char *p = pointer + 1;
  for (;;) {
    char token[128];
    const size_t n = strcspn(p, "/");
    const int last = p[n] == '\0';
    if (n >= sizeof token) {
      snprintf(why, why_sz, "\"%s\": a step too long", pointer);
      return -1;
    }
    snprintf(token, sizeof token, "%.*s", (int)n, p);
    unescape(token);
    cJSON *next = NULL;
    if (cJSON_IsArray(at)) {
      char *end;
      const long k = strcmp(token, "-") == 0 ? cJSON_GetArraySize(at) : strtol(token, &end, 10);
      if ((strcmp(token, "-") != 0 && (*end || end == token)) || k < 0 ||
          k > cJSON_GetArraySize(at) || (k == cJSON_GetArraySize(at) && !last)) {
        snprintf(why, why_sz, "\"%s\": \"%s\" is not an index of an array of %d", pointer,
                 token, cJSON_GetArraySize(at));
        return -1;
      }
      if (last) {
        cJSON *copy = cJSON_Duplicate(value, 1);
        if (k == cJSON_GetArraySize(at)) {
          cJSON_AddItemToArray(at, copy);
        } else {
          cJSON_ReplaceItemInArray(at, (int)k, copy);
        }
        return 0;
      }
      next = cJSON_GetArrayItem(at, (int)k);
    } else if (cJSON_IsObject(at)) {
      next = cJSON_GetObjectItemCaseSensitive(at, token);
      if (last) {
        cJSON *copy = cJSON_Duplicate(value, 1);
        if (next) {
          cJSON_ReplaceItemInObjectCaseSensitive(at, token, copy);
        } else {
          cJSON_AddItemToObject(at, token, copy);
        }
        return 0;
      }
      if (!next) {
        next = cJSON_AddObjectToObject(at, token);
      }
    } else {
      snprintf(why, why_sz, "\"%s\": \"%s\" is inside a value that is not an object or array",
               pointer, token);
      return -1;
    }
    at = next;
    p += n + 1;
  }
}

/* --- the spec --------------------------------------------------------------------------------- */

static int fail(const sim_json_ctx *L, const char *path, const char *what) {
  return sim_json_fail(L, path, "%s", what);
}

/* a label that can be part of a file name */
static void clean_label(char *label) {
  for (char *p = label; *p; p++) {
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '.' || *p == '-' || *p == '+' || *p == '_')) {
      *p = '_';
    }
  }
}

/* one value of an axis: a plain value set at the axis's path, or {"label", "set"} */
static int parse_value(const sim_json_ctx *L, const cJSON *v, const char *path,
                       const char *axis_path, campaign_value *out) {
  memset(out, 0, sizeof *out);
  if (cJSON_IsObject(v)) {
    static const char *const keys[] = {"label", "set", "comment", NULL};
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(v, "set");
    if (sim_json_check_keys(L, v, path, keys) ||
        sim_json_read_string(L, v, path, "label", out->label, sizeof out->label)) {
      return -1;
    }
    if (!out->label[0] || !cJSON_IsObject(set)) {
      return fail(L, path, "expected {\"label\": NAME, \"set\": {\"/json/pointer\": value, ...}}");
    }
    out->set = cJSON_Duplicate(set, 1);
  } else if (cJSON_IsNumber(v) || cJSON_IsString(v) || cJSON_IsBool(v)) {
    if (!axis_path[0]) {
      return fail(L, path, "a plain value needs the axis's \"path\" (a JSON pointer)");
    }
    if (cJSON_IsNumber(v)) {
      out->numeric = 1, out->number = v->valuedouble;
      snprintf(out->label, sizeof out->label, "%.10g", v->valuedouble);
    } else {
      snprintf(out->label, sizeof out->label, "%s",
               cJSON_IsString(v) ? v->valuestring : cJSON_IsTrue(v) ? "true" : "false");
    }
    out->set = cJSON_CreateObject();
    cJSON_AddItemToObject(out->set, axis_path, cJSON_Duplicate(v, 1));
  } else {
    return fail(L, path, "expected a number, a string, true/false or {\"label\", \"set\"}");
  }
  clean_label(out->label);
  return 0;
}

/* "values": [...] or {"from": A, "to": B, "step": S} (numbers, both ends included) */
static int parse_values(const sim_json_ctx *L, const cJSON *values, const char *path,
                        const char *axis_path, campaign_axis *a) {
  if (cJSON_IsObject(values)) {
    double from = 0, to = 0, step = 1;
    static const char *const keys[] = {"from", "to", "step", NULL};
    if (sim_json_check_keys(L, values, path, keys) ||
        sim_json_read_number(L, values, path, "from", &from, 1) ||
        sim_json_read_number(L, values, path, "to", &to, 1) ||
        sim_json_read_number(L, values, path, "step", &step, 0) ||
        sim_json_check_min(L, path, "step", step, 0, 1)) {
      return -1;
    }
    const double count = floor((to - from) / step + 1e-9) + 1;
    if (!(count >= 1 && count <= 100000)) {
      return fail(L, path, "expected from <= to and at most 100 000 values");
    }
    a->nvalues = (int)count;
    a->values = calloc((size_t)a->nvalues, sizeof *a->values);
    for (int i = 0; a->values && i < a->nvalues; i++) {
      cJSON *num = cJSON_CreateNumber(from + step * i);
      parse_value(L, num, path, axis_path, &a->values[i]);
      cJSON_Delete(num);
    }
    return a->values ? 0 : fail(L, path, "out of memory");
  }
  if (!cJSON_IsArray(values) || cJSON_GetArraySize(values) < 1) {
    return fail(L, path, "expected a non-empty array, or {\"from\", \"to\", \"step\"}");
  }
  a->nvalues = cJSON_GetArraySize(values);
  a->values = calloc((size_t)a->nvalues, sizeof *a->values);
  for (int i = 0; a->values && i < a->nvalues; i++) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_index(p, path, i);
    if (parse_value(L, cJSON_GetArrayItem(values, i), p, axis_path, &a->values[i])) {
      return -1;
    }
    for (int k = 0; k < i; k++) {
      if (strcmp(a->values[k].label, a->values[i].label) == 0) {
        return sim_json_fail(L, p, "label \"%s\" twice: run ids would collide", a->values[i].label);
      }
    }
  }
  return a->values ? 0 : fail(L, path, "out of memory");
}

static int parse_axes(const sim_json_ctx *L, const cJSON *axes, campaign *c) {
  static const char *const keys[] = {"name", "path", "values", "comment", NULL};
  if (!axes) {
    return 0;
  }
  if (!cJSON_IsArray(axes) || cJSON_GetArraySize(axes) > CAMPAIGN_MAX_AXES) {
    return sim_json_fail(L, "axes", "expected an array of at most %d axes", CAMPAIGN_MAX_AXES);
  }
  for (int i = 0; i < cJSON_GetArraySize(axes); i++) {
    const cJSON *a = cJSON_GetArrayItem(axes, i);
    char p[SIM_JSON_PATH_MAX], vp[SIM_JSON_PATH_MAX], path[256] = "";
    campaign_axis *axis = &c->axes[c->naxes];
    sim_json_path_index(p, "axes", i);
    if (sim_json_expect_object(L, a, p) || sim_json_check_keys(L, a, p, keys) ||
        sim_json_read_string(L, a, p, "name", axis->name, sizeof axis->name) ||
        sim_json_read_string(L, a, p, "path", path, sizeof path)) {
      return -1;
    }
    if (!axis->name[0]) {
      return fail(L, p, "missing \"name\"");
    }
    clean_label(axis->name);
    axis->seed = strcmp(path, "/seed") == 0;
    sim_json_path_join(vp, p, "values");
    c->naxes++;
    if (parse_values(L, cJSON_GetObjectItemCaseSensitive(a, "values"), vp, path, axis)) {
      return -1;
    }
  }
  return 0;
}

static int parse_slurm(const sim_json_ctx *L, const cJSON *s, campaign *c) {
  static const char *const keys[] = {"chunk", "partition", "time", "options", "comment", NULL};
  if (!s) {
    return 0;
  }
  if (sim_json_expect_object(L, s, "slurm") || sim_json_check_keys(L, s, "slurm", keys) ||
      sim_json_read_int(L, s, "slurm", "chunk", 1, 100000, &c->slurm.chunk) ||
      sim_json_read_string(L, s, "slurm", "partition", c->slurm.partition,
                           sizeof c->slurm.partition) ||
      sim_json_read_string(L, s, "slurm", "time", c->slurm.time, sizeof c->slurm.time)) {
    return -1;
  }
  const cJSON *opts = cJSON_GetObjectItemCaseSensitive(s, "options");
  for (int i = 0; opts && i < cJSON_GetArraySize(opts); i++) {
    const cJSON *o = cJSON_GetArrayItem(opts, i);
    if (!cJSON_IsString(o) || c->slurm.nextra >= 16) {
      return fail(L, "slurm.options", "expected at most 16 strings (sbatch options)");
    }
    c->slurm.extra[c->slurm.nextra++] = strdup(o->valuestring);
  }
  return 0;
}

static int parse_command(const sim_json_ctx *L, const cJSON *cmd, campaign *c) {
  if (!cmd) {
    return 0;
  }
  if (!cJSON_IsArray(cmd) || cJSON_GetArraySize(cmd) < 1 ||
      cJSON_GetArraySize(cmd) > CAMPAIGN_MAX_ARGS) {
    return fail(L, "firmware", "expected the command as an array of strings");
  }
  for (int i = 0; i < cJSON_GetArraySize(cmd); i++) {
    const cJSON *w = cJSON_GetArrayItem(cmd, i);
    if (!cJSON_IsString(w)) {
      return fail(L, "firmware", "expected the command as an array of strings");
    }
    c->fw_argv[c->fw_argc++] = strdup(w->valuestring);
  }
  return 0;
}

/* the scenarios, each resolved (extends merged) once */
static int parse_scenarios(const sim_json_ctx *L, const cJSON *root, const char *spec_dir,
                           campaign *c) {
  const cJSON *one = cJSON_GetObjectItemCaseSensitive(root, "scenario");
  const cJSON *many = cJSON_GetObjectItemCaseSensitive(root, "scenarios");
  if (!one == !many) {
    return fail(L, "scenario", "expected \"scenario\" (a file) or \"scenarios\" (a list of files)");
  }
  const int n = many ? cJSON_GetArraySize(many) : 1;
  if (n < 1 || n > 8) {
    return fail(L, "scenarios", "expected 1 to 8 scenario files");
  }
  for (int i = 0; i < n; i++) {
    const cJSON *f = many ? cJSON_GetArrayItem(many, i) : one;
    char path[CAMPAIGN_PATH_MAX], msg[1024];
    if (!cJSON_IsString(f)) {
      return fail(L, many ? "scenarios" : "scenario", "expected a file name");
    }
    if (f->valuestring[0] == '/') {
      snprintf(path, sizeof path, "%s", f->valuestring);
    } else {
      snprintf(path, sizeof path, "%s/%s", spec_dir, f->valuestring);
    }
    hil_scenario *s = NULL; /* checked whole once: a wrong scenario stops the campaign here */
    if (hil_scenario_load(&s, path, msg, sizeof msg) != HIL_OK) {
      snprintf(L->err, L->err_sz, "%s: %s", c->spec, msg);
      return -1;
    }
    snprintf(c->scenario_name[i], sizeof c->scenario_name[i], "%s", hil_scenario_name(s));
    hil_scenario_free(&s);
    c->base[i] = hil_scenario_read(path, msg, sizeof msg);
    if (!c->base[i]) {
      snprintf(L->err, L->err_sz, "%s: %s", c->spec, msg);
      return -1;
    }
    dir_of(c->scenario_dir[i], sizeof c->scenario_dir[i], path);
    absolute(path, sizeof path, c->scenario_dir[i]);
    snprintf(c->scenario_dir[i], sizeof c->scenario_dir[i], "%s", path);
    c->nscenarios++;
  }
  return 0;
}

/* every combination, the first axis outermost; ids from the labels */
static int expand(const sim_json_ctx *L, campaign *c) {
  long total = c->nscenarios;
  for (int a = 0; a < c->naxes; a++) {
    total *= c->axes[a].nvalues;
  }
  if (total > 1000000) {
    return fail(L, "axes", "more than a million runs");
  }
  c->nruns = (int)total;
  c->runs = calloc((size_t)total, sizeof *c->runs);
  if (!c->runs) {
    return fail(L, "axes", "out of memory");
  }
  for (int i = 0; i < c->nruns; i++) {
    campaign_run *r = &c->runs[i];
    long rest = i;
    for (int a = c->naxes - 1; a >= 0; a--) {
      r->value[a] = (int)(rest % c->axes[a].nvalues);
      rest /= c->axes[a].nvalues;
    }
    r->scenario = (int)rest;
    snprintf(r->id, sizeof r->id, "%s", c->scenario_name[r->scenario]);
    clean_label(r->id);
    for (int a = 0; a < c->naxes; a++) {
      snprintf(r->id + strlen(r->id), sizeof r->id - strlen(r->id), ".%s=%s", c->axes[a].name,
               c->axes[a].values[r->value[a]].label);
    }
  }
  return 0;
}

int campaign_load(campaign *c, const char *spec_path, const char *out, char *err, size_t err_sz) {
  static const char *const keys[] = {"name", "scenario", "scenarios", "firmware", "axes",
                                     "workers", "slurm", "comment", NULL};
  memset(c, 0, sizeof *c);
  snprintf(c->spec, sizeof c->spec, "%s", spec_path);
  const sim_json_ctx L = {spec_path, err, err_sz};
  cJSON *root = sim_json_parse_file(spec_path, err, err_sz);
  char spec_dir[CAMPAIGN_PATH_MAX];
  dir_of(spec_dir, sizeof spec_dir, spec_path);
  int rc = !root || sim_json_expect_object(&L, root, "") ||
           sim_json_check_keys(&L, root, "", keys) ||
           sim_json_read_string(&L, root, "", "name", c->name, sizeof c->name) ||
           sim_json_read_int(&L, root, "", "workers", 0, 1024, &c->workers) ||
           parse_scenarios(&L, root, spec_dir, c) ||
           parse_command(&L, cJSON_GetObjectItemCaseSensitive(root, "firmware"), c) ||
           parse_axes(&L, cJSON_GetObjectItemCaseSensitive(root, "axes"), c) ||
           parse_slurm(&L, cJSON_GetObjectItemCaseSensitive(root, "slurm"), c) || expand(&L, c);
  cJSON_Delete(root);
  if (rc) {
    campaign_free(c);
    return -1;
  }
  if (!c->name[0]) { /* the spec's file name without its extension */
    const char *base = strrchr(spec_path, '/') ? strrchr(spec_path, '/') + 1 : spec_path;
    snprintf(c->name, sizeof c->name, "%.*s", (int)strcspn(base, "."), base);
  }
  char folder[CAMPAIGN_PATH_MAX];
  if (out) {
    snprintf(folder, sizeof folder, "%s", out);
  } else {
    snprintf(folder, sizeof folder, "%s.campaign", c->name);
  }
  absolute(c->out, sizeof c->out, folder);
  const ssize_t n = readlink("/proc/self/exe", c->achilles, sizeof c->achilles - 1);
  c->achilles[n > 0 ? n : 0] = '\0';
  if (n <= 0) {
    snprintf(err, err_sz, "cannot find this program's path (/proc/self/exe)");
    campaign_free(c);
    return -1;
  }
  return 0;
}

void campaign_free(campaign *c) {
  for (int a = 0; a < c->naxes; a++) {
    for (int v = 0; c->axes[a].values && v < c->axes[a].nvalues; v++) {
      cJSON_Delete(c->axes[a].values[v].set);
    }
    free(c->axes[a].values);
  }
  for (int i = 0; i < c->nscenarios; i++) {
    cJSON_Delete(c->base[i]);
  }
  for (int i = 0; i < c->fw_argc; i++) {
    free(c->fw_argv[i]);
  }
  for (int i = 0; i < c->slurm.nextra; i++) {
    free(c->slurm.extra[i]);
  }
  free(c->runs);
  memset(c, 0, sizeof *c);
}

/* --- runs on disk ---------------------------------------------------------------------------- */

void campaign_run_path(const campaign *c, int i, const char *file, char *out, size_t out_sz) {
  snprintf(out, out_sz, "%s/runs/%s%s%s", c->out, c->runs[i].id, file ? "/" : "", file ? file : "");
}

int campaign_find_run(const campaign *c, const char *id) {
  for (int i = 0; i < c->nruns; i++) {
    if (strcmp(c->runs[i].id, id) == 0) {
      return i;
    }
  }
  return -1;
}

/* the run's scenario: its base with the axes' values set, and the base's folder kept */
static cJSON *run_scenario(const campaign *c, int i, char *err, size_t err_sz) {
  const campaign_run *r = &c->runs[i];
  cJSON *s = cJSON_Duplicate(c->base[r->scenario], 1);
  cJSON_DeleteItemFromObjectCaseSensitive(s, "base_dir");
  cJSON_AddStringToObject(s, "base_dir", c->scenario_dir[r->scenario]);
  if (!cJSON_GetObjectItemCaseSensitive(s, "name")) {
    cJSON_AddStringToObject(s, "name", c->scenario_name[r->scenario]);
  }
  for (int a = 0; a < c->naxes; a++) {
    const cJSON *set = c->axes[a].values[r->value[a]].set;
    for (const cJSON *kv = set->child; kv; kv = kv->next) {
      char why[512];
      if (set_pointer(s, kv->string, kv, why, sizeof why) != 0) {
        snprintf(err, err_sz, "%s: axes[%d] (%s=%s): %s", c->spec, a, c->axes[a].name,
                 c->axes[a].values[r->value[a]].label, why);
        cJSON_Delete(s);
        return NULL;
      }
    }
  }
  return s;
}

static int write_run(const campaign *c, int i, char *err, size_t err_sz) {
  char dir[CAMPAIGN_PATH_MAX], path[CAMPAIGN_PATH_MAX];
  campaign_run_path(c, i, NULL, dir, sizeof dir);
  campaign_run_path(c, i, "scenario.json", path, sizeof path);
  cJSON *s = run_scenario(c, i, err, err_sz);
  char *text = s ? cJSON_Print(s) : NULL;
  cJSON_Delete(s);
  if (!text) {
    return -1;
  }
  FILE *f = hil_scenario_make_dirs(dir) == 0 ? fopen(path, "w") : NULL;
  const int ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
  free(text);
  if (!f || fclose(f) != 0 || !ok) {
    snprintf(err, err_sz, "%s: cannot write: %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

int campaign_prepare_runs(campaign *c, int write, char *err, size_t err_sz) {
  for (int i = 0; i < c->nruns; i++) {
    char path[CAMPAIGN_PATH_MAX], msg[1024];
    campaign_run_path(c, i, "scenario.json", path, sizeof path);
    if (write && write_run(c, i, err, err_sz) != 0) {
      return -1;
    }
    hil_scenario *scn = NULL; /* the run's own scenario must load: its values may be wrong */
    if (hil_scenario_load(&scn, path, msg, sizeof msg) != HIL_OK ||
        (c->fw_argc > 0 &&
         hil_scenario_set_command(scn, c->fw_argc, c->fw_argv, msg, sizeof msg))) {
      snprintf(err, err_sz, "run %s: %s", c->runs[i].id, msg);
      hil_scenario_free(&scn);
      return -1;
    }
    c->runs[i].digest = hil_scenario_inputs_digest(scn);
    c->runs[i].time_limit_s = hil_scenario_time_limit(scn);
    hil_scenario_free(&scn);
  }
  return 0;
}

cJSON *campaign_read_result(const campaign *c, int i) {
  char path[CAMPAIGN_PATH_MAX], err[64];
  campaign_run_path(c, i, "result.json", path, sizeof path);
  char *text = sim_json_read_file(path, err, sizeof err);
  cJSON *r = text ? cJSON_Parse(text) : NULL;
  free(text);
  return r;
}

int campaign_run_passed(const campaign *c, int i) {
  cJSON *r = campaign_read_result(c, i);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, "verdict");
  const int pass = cJSON_IsString(v) && strcmp(v->valuestring, "pass") == 0;
  cJSON_Delete(r);
  return pass;
}

int campaign_run_done(const campaign *c, int i) {
  char digest[24];
  cJSON *r = campaign_read_result(c, i);
  snprintf(digest, sizeof digest, "%016llx", (unsigned long long)c->runs[i].digest);
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(r, "inputs_digest");
  const int done = r && cJSON_IsString(d) && strcmp(d->valuestring, digest) == 0 &&
                   cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, "verdict")) &&
                   !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "interrupted"));
  cJSON_Delete(r);
  return done;
}

/* a word for a POSIX shell: as it is when it is safe, else in single quotes */
static void shell_word(char *out, size_t out_sz, const char *w) {
  if (w[0] && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                        "._-+/=:,@%") == strlen(w)) {
    snprintf(out, out_sz, "%s", w);
    return;
  }
  size_t k = 0;
  out[k++] = '\'';
  for (const char *p = w; *p && k + 5 < out_sz; p++) {
    if (*p == '\'') {
      memcpy(out + k, "'\\''", 4);
      k += 4;
    } else {
      out[k++] = *p;
    }
  }
  out[k++] = '\'';
  out[k] = '\0';
}

void campaign_run_command(const campaign *c, int i, char *out, size_t out_sz) {
  char path[CAMPAIGN_PATH_MAX], word[2048];
  campaign_run_path(c, i, "scenario.json", path, sizeof path);
  snprintf(out, out_sz, "achilles test ");
  shell_word(word, sizeof word, path);
  snprintf(out + strlen(out), out_sz - strlen(out), "%s --out /tmp/%s", word, c->runs[i].id);
  if (c->fw_argc > 0) {
    snprintf(out + strlen(out), out_sz - strlen(out), " --");
    for (int k = 0; k < c->fw_argc; k++) {
      shell_word(word, sizeof word, c->fw_argv[k]);
      snprintf(out + strlen(out), out_sz - strlen(out), " %s", word);
    }
  }
}
