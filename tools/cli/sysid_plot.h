/* tools/cli/sysid_plot.h: the figure of `achilles sysid --plot`, drawn by gnuplot: per joint,
 * the logged readings beside the readings simulated with the initial and with the fitted
 * parameters (docs/sysid.md section 6). */
#ifndef ACHILLES_TOOLS_SYSID_PLOT_H
#define ACHILLES_TOOLS_SYSID_PLOT_H

#include <stddef.h>

#include "sysid/series.h"

typedef struct sysid_plot_data {
  const char *title;        /* e.g. "club_arm.json fitted to run.ndjson" */
  const sysid_series *s;    /* the logged readings */
  const double *before;     /* n × njoint simulated, initial parameters (NAN: outside) */
  const double *after;      /* n × njoint simulated, fitted parameters */
  const char *const *unit;  /* njoint units ("rad", "m") */
} sysid_plot_data;

/* Writes the PNG. Returns 0, or -1 with a message (gnuplot missing or failing, I/O). */
int sysid_plot_png(const char *png, const sysid_plot_data *d, char *err, size_t err_sz);

#endif
