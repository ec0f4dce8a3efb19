/* tools/cli/gnuplot.h: what the figures of `achilles noise-fit --plot` (noise_plot.c) and
 * `achilles sysid --plot` (sysid_plot.c) share: a temporary directory for the data and the
 * script, gnuplot's quoting, and running `gnuplot DIR/plot.gp` from the PATH (Debian package
 * gnuplot-nox). */
#ifndef ACHILLES_TOOLS_GNUPLOT_H
#define ACHILLES_TOOLS_GNUPLOT_H

#include <stddef.h>
#include <stdio.h>

/* Makes $TMPDIR/achilles-NAME-XXXXXX (or /tmp/...) into dir. 0, or -1 with a message. */
int gp_tempdir(char *dir, size_t dir_sz, const char *name, char *err, size_t err_sz);
/* path made absolute against the working directory (the scripts change into their data
 * directory). 0, or -1 with a message. */
int gp_absolute(char *out, size_t out_sz, const char *path, char *err, size_t err_sz);
/* Opens DIR/NAME for writing; NULL with "PATH: why". */
FILE *gp_open(const char *dir, const char *name, char *err, size_t err_sz);
/* Closes f; -1 with a message when writing or closing failed. */
int gp_close(FILE *f, char *err, size_t err_sz);
/* Writes s as a gnuplot single-quoted string (' doubled). */
void gp_quote(FILE *f, const char *s);
/* Runs `gnuplot DIR/plot.gp`: its exit status, or -1 with a message when it cannot start. */
int gp_run(const char *dir, char *err, size_t err_sz);

#endif
