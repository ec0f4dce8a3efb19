/* sysid/series.c: a series' storage (growing, releasing) and the choice between the readers
 * (series_csv.c, series_log.c) by the file's first bytes. */
#include "sysid/series.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hil/record/log.h"

static void free_names(char **names, int n) {
  for (int i = 0; names != NULL && i < n; i++) {
    free(names[i]);
  }
  free(names);
}

void sysid_series_free(sysid_series *s) {
  if (s == NULL) {
    return;
  }
  free(s->t);
  free(s->q);
  free(s->u);
  free_names(s->joint_name, s->njoint);
  free_names(s->act_name, s->nact);
  memset(s, 0, sizeof *s);
}

static int grow(double **a, size_t n) {
  double *b = realloc(*a, n ? n * sizeof *b : 1);
  if (!b) {
    return -1;
  }
  *a = b;
  return 0;
}

int sysid_series_push(sysid_series *s, int *cap, double t, const double *q, const double *u) {
  if (s->n == *cap) {
    const int ncap = *cap ? 2 * *cap : 4096;
    if (grow(&s->t, (size_t)ncap) || grow(&s->q, (size_t)ncap * (size_t)s->njoint) ||
        grow(&s->u, (size_t)ncap * (size_t)s->nact)) {
      return -1;
    }
    *cap = ncap;
  }
  s->t[s->n] = t;
  if (s->njoint) {
    memcpy(s->q + (size_t)s->n * (size_t)s->njoint, q, (size_t)s->njoint * sizeof *q);
  }
  if (s->nact) {
    memcpy(s->u + (size_t)s->n * (size_t)s->nact, u, (size_t)s->nact * sizeof *u);
  }
  s->n++;
  return 0;
}

/* 1 when the file starts as a log record does: 8 hex digits of CRC, a space, a JSON object */
static int looks_like_log(const char *path, int *is_log, char *err, size_t err_sz) {
  FILE *f = hil_log_open_input(path, err, err_sz);
  if (!f) {
    return -1;
  }
  char head[10] = {0};
  const size_t got = fread(head, 1, sizeof head, f);
  fclose(f);
  *is_log = got == sizeof head && head[8] == ' ' && head[9] == '{';
  for (int i = 0; *is_log && i < 8; i++) {
    *is_log = isxdigit((unsigned char)head[i]) && !isupper((unsigned char)head[i]);
  }
  return 0;
}

int sysid_series_load(sysid_series *s, const char *path, const sim_model *m, const sens_set *set,
                      const char *map, char *err, size_t err_sz) {
  int is_log;
  memset(s, 0, sizeof *s);
  if (looks_like_log(path, &is_log, err, err_sz) != 0) {
    return -1;
  }
  if (!is_log) {
    return sysid_series_load_csv(s, path, m, map, err, err_sz);
  }
  if (map && map[0]) {
    snprintf(err, err_sz, "%s: an Achilles log names its own joints and actuators: --map is for "
             "CSV files", path);
    return -1;
  }
  return sysid_series_load_log(s, path, m, set, err, err_sz);
}
