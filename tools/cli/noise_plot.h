/* tools/cli/noise_plot.h: the figure of `achilles noise-fit --plot`, drawn by gnuplot (Debian
 * package gnuplot-nox): Allan deviation against the fitted model, power spectral density against
 * the fitted model, and the recorded error beside a stream simulated with the fitted parameters.
 *
 * The data go to files in a temporary directory, with a gnuplot script that is run with
 * `gnuplot` from the PATH (terminal pngcairo, or png when gnuplot was built without cairo); the
 * directory is removed afterwards. */
#ifndef ACHILLES_TOOLS_NOISE_PLOT_H
#define ACHILLES_TOOLS_NOISE_PLOT_H

#include <stddef.h>

#include "sensors/fit.h"

typedef struct noise_plot_data {
  const char *title;            /* e.g. "enc_shoulder.angle from log.ndjson" */
  const char *unit;             /* unit of the values, e.g. "rad" */
  const sens_fit_result *fit;   /* Allan points, PSD and the fitted model */
  const double *t;              /* [n] s */
  const double *err;            /* [n] recorded error: value - reference (or - mean) */
  const double *sim;            /* [n] the same for the simulated stream */
  size_t n;
} noise_plot_data;

/* Writes the PNG. Returns 0, or -1 with a message (gnuplot missing or failing, I/O). */
int noise_plot_png(const char *png, const noise_plot_data *d, char *err, size_t err_sz);

#endif
