/* tools/cli/sim_jacobians.c: step Jacobians at chosen times of `achilles sim`, as CSV or JSON
 * (sim_jacobians.h; the formats in docs/derivatives.md). */
#include "sim_jacobians.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sim/deriv/deriv.h"

#define MAX_TIMES 1024

struct sim_jacobians {
  FILE *out;
  const char *path;
  int json, written, np, nx, nu;
  sim_param *params;
  sim_deriv *w;
  long long at[MAX_TIMES]; /* the chosen steps, ascending, distinct */
  int nat;
  double *A, *B, *P;
};

/* --- options -------------------------------------------------------------------------------- */

static int cmp_steps(const void *a, const void *b) {
  long long x = *(const long long *)a, y = *(const long long *)b;
  return (x > y) - (x < y);
}

static int parse_times(sim_jacobians *j, const sim_model *m, long long steps, const char *times,
                       char *err, size_t err_sz) {
  const char *p = times ? times : "0";
  while (*p) {
    char *end;
    double t = strtod(p, &end);
    if (end == p || !isfinite(t) || (*end && *end != ',')) {
      snprintf(err, err_sz, "--jacobians-at: expected seconds separated by commas, got '%s'", times);
      return -1;
    }
    long long s = llround(t / m->opt.timestep);
    if (t < 0 || s >= steps) {
      snprintf(err, err_sz, "--jacobians-at %g: outside the run (its steps start at 0 to %g s)", t,
               (double)(steps - 1) * m->opt.timestep);
      return -1;
    }
    if (j->nat >= MAX_TIMES) {
      snprintf(err, err_sz, "--jacobians-at: at most %d times", MAX_TIMES);
      return -1;
    }
    j->at[j->nat++] = s;
    p = *end ? end + 1 : end;
  }
  qsort(j->at, (size_t)j->nat, sizeof j->at[0], cmp_steps);
  int n = 0;
  for (int k = 0; k < j->nat; k++) {
    if (n == 0 || j->at[n - 1] != j->at[k]) {
      j->at[n++] = j->at[k];
    }
  }
  j->nat = n;
  return 0;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* --- writing ---------------------------------------------------------------------------------- */

/* a number as JSON takes it: shortest round trip, null when not finite */
static void json_number(FILE *out, double x) {
  if (isfinite(x)) {
    fprintf(out, "%.17g", x);
  } else {
    fputs("null", out);
  }
}

static void json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') {
      fputc('\\', out);
    }
    fputc(*s, out);
  }
  fputc('"', out);
}

static void column_name(const sim_model *m, const sim_jacobians *j, char which, int c, char *buf,
                        size_t n) {
  if (which == 'A') {
    sim_deriv_state_name(m, c, buf, n);
  } else if (which == 'B') {
    snprintf(buf, n, "%s", m->actuators[c].name);
  } else {
    sim_param_name(m, j->params[c], buf, n);
  }
}

static void json_names(FILE *out, const sim_model *m, const sim_jacobians *j, char which, int n) {
  fputc('[', out);
  for (int c = 0; c < n; c++) {
    char name[3 * SIM_NAME_MAX + 16];
    column_name(m, j, which, c, name, sizeof name);
    fputs(c ? ", " : "", out);
    json_string(out, name);
  }
  fputc(']', out);
}

static void json_header(sim_jacobians *j, const sim_model *m) {
  FILE *out = j->out;
  fputs("{\n  \"model\": ", out);
  json_string(out, m->name);
  fprintf(out, ",\n  \"integrator\": \"%s\",\n  \"timestep\": ", sim_integrator_name(m->opt.integrator));
  json_number(out, m->opt.timestep);
  fputs(",\n  \"state\": ", out);
  json_names(out, m, j, 'A', j->nx);
  fputs(",\n  \"controls\": ", out);
  json_names(out, m, j, 'B', j->nu);
  fputs(",\n  \"parameters\": ", out);
  json_names(out, m, j, 'P', j->np);
  fputs(",\n  \"parameter_units\": [", out);
  for (int c = 0; c < j->np; c++) {
    fputs(c ? ", " : "", out);
    json_string(out, sim_param_unit(j->params[c].field));
  }
  fputs("],\n  \"jacobians\": [", out);
}

static void json_matrix(FILE *out, const char *key, const double *M, int rows, int cols) {
  fprintf(out, ",\n     \"%s\": [", key);
  for (int r = 0; r < rows; r++) {
    fputs(r ? ",\n       [" : "[", out);
    for (int c = 0; c < cols; c++) {
      fputs(c ? ", " : "", out);
      json_number(out, M[(size_t)r * cols + c]);
    }
    fputc(']', out);
  }
  fputc(']', out);
}

static void csv_matrix(sim_jacobians *j, const sim_model *m, double time, char which,
                       const double *M, int cols) {
  for (int r = 0; r < j->nx; r++) {
    char row[3 * SIM_NAME_MAX + 16], col[3 * SIM_NAME_MAX + 16];
    sim_deriv_state_name(m, r, row, sizeof row);
    for (int c = 0; c < cols; c++) {
      column_name(m, j, which, c, col, sizeof col);
      fprintf(j->out, "%.17g,%c,%s,%s,%.17g\n", time, which, row, col, M[(size_t)r * cols + c]);
    }
  }
}

static void write_jacobians(sim_jacobians *j, const sim_model *m, double time) {
  if (j->json) {
    fprintf(j->out, "%s\n    {\"time\": ", j->written ? "," : "");
    json_number(j->out, time);
    json_matrix(j->out, "A", j->A, j->nx, j->nx);
    json_matrix(j->out, "B", j->B, j->nx, j->nu);
    json_matrix(j->out, "P", j->P, j->nx, j->np);
    fputc('}', j->out);
  } else {
    csv_matrix(j, m, time, 'A', j->A, j->nx);
    csv_matrix(j, m, time, 'B', j->B, j->nu);
    csv_matrix(j, m, time, 'P', j->P, j->np);
  }
  j->written++;
}

/* --- the interface ------------------------------------------------------------------------------ */

sim_jacobians *sim_jacobians_open(const sim_model *m, long long steps, const char *path,
                                  const char *times, const char *params, char *err,
                                  size_t err_sz) {
  if (m->opt.integrator != SIM_INTEGRATOR_EULER && m->opt.integrator != SIM_INTEGRATOR_RK4) {
    snprintf(err, err_sz, "--jacobians: %s (integrator %s)", sim_deriv_strerror(SIM_DERIV_EINTEGRATOR),
             sim_integrator_name(m->opt.integrator));
    return NULL;
  }
  sim_jacobians *j = calloc(1, sizeof *j);
  if (!j) {
    snprintf(err, err_sz, "out of memory");
    return NULL;
  }
  j->path = path;
  j->nx = sim_deriv_nx(m), j->nu = m->nu;
  if (parse_times(j, m, steps, times, err, err_sz) != 0) {
    free(j);
    return NULL;
  }
  char perr[512];
  j->np = params ? sim_param_parse(m, params, NULL, 0, perr, sizeof perr) : 0;
  if (j->np < 0) {
    snprintf(err, err_sz, "--params: %s", perr);
    free(j);
    return NULL;
  }
  j->params = calloc((size_t)j->np + 1, sizeof *j->params);
  j->A = calloc((size_t)j->nx * (size_t)(j->nx + j->nu + j->np) + 1, sizeof(double));
  if (j->params && params) {
    sim_param_parse(m, params, j->params, j->np, perr, sizeof perr);
  }
  j->w = j->params ? sim_deriv_new(m, j->params, j->np, err, err_sz) : NULL;
  if (!j->params || !j->A || !j->w) {
    snprintf(err, err_sz, "out of memory");
    sim_jacobians_close(&j, perr, sizeof perr);
    return NULL;
  }
  j->B = j->A + (size_t)j->nx * j->nx;
  j->P = j->B + (size_t)j->nx * j->nu;
  char oerr[512];
  j->out = cli_open_output(path, oerr, sizeof oerr);
  if (!j->out) {
    snprintf(err, err_sz, "--jacobians: %s", oerr);
    sim_jacobians_close(&j, perr, sizeof perr);
    return NULL;
  }
  j->json = strcmp(path, "-") != 0 && ends_with(path, ".json");
  if (j->json) {
    json_header(j, m);
  } else {
    fputs("time,matrix,row,column,value\n", j->out);
  }
  return j;
}

int sim_jacobians_step(sim_jacobians *j, const sim_model *m, sim_data *d, long long s, char *err,
                       size_t err_sz) {
  int chosen = 0;
  for (int k = 0; k < j->nat && !chosen; k++) {
    chosen = j->at[k] == s;
  }
  if (!chosen) {
    sim_step(m, d);
    return 0;
  }
  double time = d->time;
  int rc = sim_deriv_step(m, d, j->w, j->A, j->B, j->P);
  if (rc != SIM_DERIV_OK) {
    const char *detail = sim_deriv_detail(j->w);
    snprintf(err, err_sz, "--jacobians at t = %.17g s: %s%s%s", time, sim_deriv_strerror(rc),
             *detail ? ": " : "", detail);
    return -1;
  }
  write_jacobians(j, m, time);
  if (ferror(j->out)) {
    snprintf(err, err_sz, "--jacobians: write error on %s", j->path);
    return -1;
  }
  return 0;
}

int sim_jacobians_close(sim_jacobians **pj, char *err, size_t err_sz) {
  sim_jacobians *j = pj ? *pj : NULL;
  int rc = 0;
  if (!j) {
    return 0;
  }
  if (j->out) {
    if (j->json) {
      fputs("\n  ]\n}\n", j->out);
    }
    if (ferror(j->out) || (j->out != stdout && fclose(j->out) != 0) ||
        (j->out == stdout && fflush(stdout) != 0)) {
      snprintf(err, err_sz, "--jacobians: write error on %s", j->path);
      rc = -1;
    }
  }
  sim_deriv_free(&j->w);
  free(j->params);
  free(j->A);
  free(j);
  *pj = NULL;
  return rc;
}
