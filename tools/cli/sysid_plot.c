/* tools/cli/sysid_plot.c: the figure of `achilles sysid --plot` (sysid_plot.h). */
#include "sysid_plot.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "gnuplot.h"

/* at most this many rows in the data file: a minute at 1 kHz draws as well at 1 in 15 */
#define PLOT_ROWS 4000

static void cell(FILE *f, double v) {
  if (isfinite(v)) {
    fprintf(f, " %.9g", v);
  } else {
    fputs(" NaN", f); /* gnuplot leaves a gap */
  }
}

static int write_data(const char *dir, const sysid_plot_data *d, char *err, size_t err_sz) {
  FILE *f = gp_open(dir, "series.dat", err, err_sz);
  if (!f) {
    return -1;
  }
  const sysid_series *s = d->s;
  const int nj = s->njoint, stride = s->n > PLOT_ROWS ? s->n / PLOT_ROWS : 1;
  fprintf(f, "# t, then per joint: logged, simulated before, simulated after\n");
  for (int i = 0; i < s->n; i += stride) {
    fprintf(f, "%.9g", s->t[i]);
    for (int j = 0; j < nj; j++) {
      const size_t k = (size_t)i * (size_t)nj + (size_t)j;
      cell(f, s->q[k]);
      cell(f, d->before[k]);
      cell(f, d->after[k]);
    }
    fputc('\n', f);
  }
  return gp_close(f, err, err_sz);
}

static int write_script(const char *dir, const char *png, const char *terminal,
                        const sysid_plot_data *d, char *err, size_t err_sz) {
  FILE *f = gp_open(dir, "plot.gp", err, err_sz);
  if (!f) {
    return -1;
  }
  const int nj = d->s->njoint;
  fprintf(f, "set terminal %s size 1400,%d enhanced font 'DejaVu Sans,11'\nset output ", terminal,
          260 * nj + 120);
  gp_quote(f, png);
  fprintf(f, "\ncd ");
  gp_quote(f, dir);
  fprintf(f, "\nset datafile missing 'NaN'\nset multiplot layout %d,1 title ", nj);
  gp_quote(f, d->title);
  fprintf(f, " noenhanced font ',13'\nset grid\nset key top right box opaque\n");
  for (int j = 0; j < nj; j++) {
    const int c = 2 + 3 * j;
    fprintf(f, "set title ");
    gp_quote(f, d->s->joint_name[j]);
    fprintf(f, " noenhanced\nset xlabel '%s'\nset ylabel 'reading (%s)'\n",
            j == nj - 1 ? "time (s)" : "", d->unit[j]);
    fprintf(f, "plot 'series.dat' u 1:%d w l lw 2.5 lc rgb 'gray60' t 'logged', "
               "'' u 1:%d w l dt 2 lw 1.5 lc rgb '#d62728' t 'simulated, initial parameters', "
               "'' u 1:%d w l lw 1.2 lc rgb '#1f77b4' t 'simulated, fitted parameters'\n",
            c, c + 1, c + 2);
  }
  fprintf(f, "unset multiplot\n");
  return gp_close(f, err, err_sz);
}

static void remove_dir(const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/series.dat", dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/plot.gp", dir);
  unlink(path);
  rmdir(dir);
}

int sysid_plot_png(const char *png, const sysid_plot_data *d, char *err, size_t err_sz) {
  char dir[256], out[1024];
  if (gp_tempdir(dir, sizeof dir, "sysid", err, err_sz) != 0) {
    return -1;
  }
  int rc = gp_absolute(out, sizeof out, png, err, err_sz);
  rc = rc ? rc : write_data(dir, d, err, err_sz);
  /* pngcairo draws better; gnuplot builds without cairo have the libgd png terminal */
  rc = rc ? rc : write_script(dir, out, "pngcairo", d, err, err_sz);
  int status = rc ? -1 : gp_run(dir, err, err_sz);
  if (status > 0) {
    rc = write_script(dir, out, "png", d, err, err_sz);
    status = rc ? -1 : gp_run(dir, err, err_sz);
  }
  if (status > 0) {
    snprintf(err, err_sz, "gnuplot failed (exit status %d) on the script %s/plot.gp", status, dir);
    return -1; /* the directory is kept for inspection */
  }
  remove_dir(dir);
  return status == 0 ? 0 : -1;
}
