/* sysid/series.c: releasing a series (readers live in their own files). */
#include "sysid/series.h"

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
