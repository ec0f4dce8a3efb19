/* sysid/series.c: a series' storage (growing, releasing); the readers (series_csv.c,
 * series_log.c) fill it and series_load.c chooses between them. */
#include "sysid/series.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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
