/* tools/cli/noise_plot.c: the figure of `achilles noise-fit --plot`, drawn by gnuplot. */
#include "noise_plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gnuplot.h"

#define PLOT_PI 3.14159265358979323846
#define PLOT_FILES 6

static const char *plot_files[PLOT_FILES] = {"allan.dat", "model.dat", "psd.dat",
                                             "series.dat", "zoom.dat",  "plot.gp"};

/* Allan points with ±1σ of the estimate (relative 1/√(2·edf) on the deviation) */
static int write_allan(const char *dir, const sens_fit_result *r, char *err, size_t err_sz) {
  FILE *f = gp_open(dir, "allan.dat", err, err_sz);
  if (!f) {
    return -1;
  }
  fprintf(f, "# tau_s adev adev_low adev_high\n");
  for (int i = 0; i < r->nallan; i++) {
    const double ad = sqrt(r->allan[i].avar), rel = 1.0 / sqrt(2.0 * r->allan[i].edf);
    fprintf(f, "%.9g %.9g %.9g %.9g\n", r->allan[i].tau_s, ad, ad * (1 - rel), ad * (1 + rel));
  }
  return gp_close(f, err, err_sz);
}

/* the fitted model's Allan deviation and its parts; flags which parts are non-zero */
static int write_model(const char *dir, const sens_fit_result *r, int have[3], char *err,
                       size_t err_sz) {
  FILE *f = gp_open(dir, "model.dat", err, err_sz);
  if (!f) {
    return -1;
  }
  const double t0 = 1.0 / r->rate_hz;
  const double t1 = r->nallan > 0 ? r->allan[r->nallan - 1].tau_s : 10 * t0;
  fprintf(f, "# tau_s total white quantization gauss_markov (Allan deviation)\n");
  have[0] = have[1] = have[2] = 0;
  /* whole cluster sizes m (the model is defined at τ = m·dt), about 40 per decade */
  long last = 0;
  for (int i = 0; i <= 200; i++) {
    const long m = lround(pow(t1 / t0, i / 200.0));
    if (m == last) {
      continue;
    }
    last = m;
    const double tau = (double)m * t0;
    double w, q, g;
    const double tot = sens_fit_model_avar(r, tau, &w, &q, &g);
    have[0] |= w > 0;
    have[1] |= q > 0;
    have[2] |= g > 0;
    fprintf(f, "%.9g %.9g %.9g %.9g %.9g\n", tau, sqrt(tot), sqrt(w), sqrt(q), sqrt(g));
  }
  return gp_close(f, err, err_sz);
}

/* Welch PSD and the fitted parameters' spectrum: H²(f)·(2·dt·σ_w² + S_GM(f)) + 2·dt·q²/12 */
static int write_psd(const char *dir, const sens_fit_result *r, char *err, size_t err_sz) {
  FILE *f = gp_open(dir, "psd.dat", err, err_sz);
  if (!f) {
    return -1;
  }
  const double dt = 1.0 / r->rate_hz;
  const double sw = r->white_sigma.ok ? r->white_sigma.value : 0.0;
  const double q = r->quant_step.ok ? r->quant_step.value : 0.0;
  const double fc = r->cutoff_hz.ok ? r->cutoff_hz.value : 0.0;
  fprintf(f, "# f_hz psd model (unit^2/Hz, one-sided)\n");
  for (size_t i = 1; i < r->npsd; i++) {
    const double fr = r->psd_f[i], om = 2.0 * PLOT_PI * fr * dt;
    double g = 0.0;
    if (r->gm_sigma.ok) {
      const double a = exp(-dt / r->gm_tau_s.value), s2 = r->gm_sigma.value * r->gm_sigma.value;
      g = 2.0 * dt * s2 * (1 - a * a) / (1 - 2 * a * cos(om) + a * a);
    }
    const double h2 = fc > 0 ? sens_filter_gain2(r->filter_type, fc, r->rate_hz, fr) : 1.0;
    const double model = h2 * (2.0 * dt * sw * sw + g) + 2.0 * dt * q * q / 12.0;
    fprintf(f, "%.9g %.9g %.9g\n", fr, r->psd[i], model);
  }
  return gp_close(f, err, err_sz);
}

/* the series, every stride-th sample from i0 to i1 */
static int write_series(const char *dir, const char *name, const noise_plot_data *d, size_t i0,
                        size_t i1, size_t stride, char *err, size_t err_sz) {
  FILE *f = gp_open(dir, name, err, err_sz);
  if (!f) {
    return -1;
  }
  fprintf(f, "# t_s recorded_error simulated_error\n");
  for (size_t i = i0; i < i1; i += stride) {
    fprintf(f, "%.9g %.9g %.9g\n", d->t[i], d->err[i], d->sim[i]);
  }
  return gp_close(f, err, err_sz);
}

static int write_script(const char *dir, const char *png, const char *terminal,
                        const noise_plot_data *d, const int have[3], char *err,
                        size_t err_sz) {
  FILE *f = gp_open(dir, "plot.gp", err, err_sz);
  if (!f) {
    return -1;
  }
  const sens_fit_result *r = d->fit;
  const char *u = d->unit[0] ? d->unit : "unit";
  fprintf(f, "set terminal %s size 1500,1050 enhanced font 'DejaVu Sans,11'\nset output ",
          terminal);
  gp_quote(f, png);
  fprintf(f, "\ncd ");
  gp_quote(f, dir);
  fprintf(f, "\nset multiplot layout 2,2 title ");
  gp_quote(f, d->title);
  fprintf(f, " noenhanced font ',13'\n"
             "set grid\nset key box opaque\n"
             "set logscale xy\nset format x '10^{%%L}'\nset format y '10^{%%L}'\n"
             "set title 'Allan deviation: log and fitted model'\n"
             "set xlabel 'cluster time {/Symbol t} (s)'\n"
             "set ylabel 'Allan deviation {/Symbol s}_A({/Symbol t}) (%s)'\n"
             "set key bottom left\n"
             "plot 'allan.dat' u 1:2:3:4 w yerrorbars pt 7 ps 0.7 lc rgb 'black' t 'log (±1{/Symbol s})', "
             "'model.dat' u 1:2 w l lw 2.5 lc rgb '#d62728' t 'fitted model'",
          u);
  if (have[0]) {
    fprintf(f, ", '' u 1:3 w l dt 2 lw 1.5 lc rgb '#1f77b4' t 'white'");
  }
  if (have[1]) {
    fprintf(f, ", '' u 1:4 w l dt 3 lw 1.5 lc rgb '#9467bd' t 'quantization'");
  }
  if (have[2]) {
    fprintf(f, ", '' u 1:5 w l dt 4 lw 1.5 lc rgb '#2ca02c' t 'Gauss-Markov'");
  }
  fprintf(f, "\nset title 'Power spectral density (Welch, Hann, 50%% overlap)'\n"
             "set xlabel 'frequency (Hz)'\nset ylabel 'PSD (%s^2/Hz, one-sided)'\n"
             "set key bottom left\n",
          u);
  if (r->cutoff_hz.ok) {
    fprintf(f, "set arrow 1 from %.9g, graph 0 to %.9g, graph 1 nohead dt 2 lc rgb 'gray40'\n"
               "set label 1 ' cutoff %.4g Hz' at %.9g, graph 0.95 tc rgb 'gray30'\n",
            r->cutoff_hz.value, r->cutoff_hz.value, r->cutoff_hz.value, r->cutoff_hz.value);
  }
  if (r->npsd > 1) {
    fprintf(f, "plot 'psd.dat' u 1:2 w l lc rgb 'black' t 'log', "
               "'' u 1:3 w l lw 2.5 lc rgb '#d62728' t 'fitted parameters'\n");
  } else {
    fprintf(f, "set label 2 'too few samples for a spectrum' at graph 0.3, graph 0.5\n"
               "plot 1/0 notitle\nunset label 2\n");
  }
  fprintf(f, "unset arrow 1\nunset label 1\nunset logscale\nset format x '%%g'\n"
             "set format y '%%.3g'\nset key top right\n"
             "set title 'Recorded error beside a stream simulated with the fitted parameters'\n"
             "set xlabel 'time (s)'\nset ylabel 'error: value - %s (%s)'\n"
             "plot 'series.dat' u 1:2 w l lc rgb '#1f77b4' t 'log', "
             "'' u 1:3 w l lc rgb '#ff7f0e' t 'simulated'\n"
             "set title 'The first samples'\n"
             "plot 'zoom.dat' u 1:2 w lp pt 7 ps 0.4 lc rgb '#1f77b4' t 'log', "
             "'' u 1:3 w lp pt 7 ps 0.4 lc rgb '#ff7f0e' t 'simulated'\n"
             "unset multiplot\n",
          r->have_reference ? "reference" : "mean", u);
  return gp_close(f, err, err_sz);
}

static void remove_dir(const char *dir) {
  char path[512];
  for (int i = 0; i < PLOT_FILES; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, plot_files[i]);
    unlink(path);
  }
  rmdir(dir);
}

int noise_plot_png(const char *png, const noise_plot_data *d, char *err, size_t err_sz) {
  char dir[256];
  if (gp_tempdir(dir, sizeof dir, "noise-fit", err, err_sz) != 0) {
    return -1;
  }
  /* absolute output path: the script changes into the data directory */
  char out[1024];
  if (gp_absolute(out, sizeof out, png, err, err_sz) != 0) {
    remove_dir(dir);
    return -1;
  }
  int have[3];
  const size_t stride = d->n > 4000 ? d->n / 4000 : 1;
  const size_t zoom = d->n < 400 ? d->n : 400;
  int rc = write_allan(dir, d->fit, err, err_sz);
  rc = rc ? rc : write_model(dir, d->fit, have, err, err_sz);
  rc = rc ? rc : write_psd(dir, d->fit, err, err_sz);
  rc = rc ? rc : write_series(dir, "series.dat", d, 0, d->n, stride, err, err_sz);
  rc = rc ? rc : write_series(dir, "zoom.dat", d, 0, zoom, 1, err, err_sz);
  /* pngcairo draws better; gnuplot builds without cairo have the libgd png terminal */
  rc = rc ? rc : write_script(dir, out, "pngcairo", d, have, err, err_sz);
  int status = rc ? -1 : gp_run(dir, err, err_sz);
  if (status > 0) {
    rc = write_script(dir, out, "png", d, have, err, err_sz);
    status = rc ? -1 : gp_run(dir, err, err_sz);
  }
  if (status > 0) {
    snprintf(err, err_sz, "gnuplot failed (exit status %d) on the script %s/plot.gp", status, dir);
    return -1; /* the directory is kept for inspection */
  }
  remove_dir(dir);
  return status == 0 ? 0 : -1;
}
