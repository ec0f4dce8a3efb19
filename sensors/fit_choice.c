/* sensors/fit_choice.c: the six noise models (white; with a drift; through a first-order or a
 * Butterworth low-pass; both) fitted by maximum likelihood, the lowest BIC chosen, and the report
 * of its values, or of why a value is missing (docs/noise-fit.md). */
#include "sensors/fit_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


/* The six models (white; + drift; + first-order or Butterworth low-pass; both), each fitted by
 * maximum likelihood, and the one with the lowest BIC. `allan` holds the Allan fit's (A, B, T)
 * without a filter, used as a starting point. */
static int ml_select(ml_data *d, ml_model *models, const double allan[3], int ft_fixed,
                     double fc_fixed) {
  const double v = d->var, L = (double)d->n * d->dt, rate = 1.0 / d->dt;
  const double w0 = log(fmax(v - d->R, 1e-3 * v));
  const double lo[ML_NP] = {log(1e-12 * v), log(1e-12 * v), log(0.5 * d->dt), log(rate / 2000.0)};
  const double hi[ML_NP] = {log(1e6 * v), log(1e3 * v), log(100.0 * L), log(0.49 * rate)};
  memcpy(d->lo, lo, sizeof lo);
  memcpy(d->hi, hi, sizeof hi);
  double st[24][ML_NP] = {{0}};
  /* white */
  sens__ml_model_init(&models[0], 0, SENS_FILTER_NONE);
  st[0][ML_W] = w0;
  sens__ml_fit(d, &models[0], st, 1);
  /* white + drift */
  sens__ml_model_init(&models[1], 1, SENS_FILTER_NONE);
  int ns = 0;
  if (allan[1] > 0) {
    st[ns][ML_W] = allan[0] > 0 ? log(allan[0]) : w0;
    st[ns][ML_G] = log(allan[1]);
    st[ns++][ML_T] = log(allan[2]);
  }
  const double tg[3] = {30.0 * d->dt, sqrt(d->dt * L), 0.1 * L};
  for (int i = 0; i < 3; i++, ns++) {
    st[ns][ML_W] = log(0.5 * v);
    st[ns][ML_G] = log(0.5 * v);
    st[ns][ML_T] = log(tg[i]);
  }
  sens__ml_fit(d, &models[1], st, ns);
  /* white through a filter, and with a drift: cutoffs on a log grid */
  for (int t = 0; t < 2; t++) {
    const sens_filter_type ft = t ? SENS_FILTER_BUTTERWORTH2 : SENS_FILTER_FIRST_ORDER;
    ml_model *mf = &models[2 + 2 * t], *mg = &models[3 + 2 * t];
    sens__ml_model_init(mf, 0, ft);
    sens__ml_model_init(mg, 1, ft);
    if (ft_fixed != SENS_FILTER_NONE && (int)ft != ft_fixed) { /* not compared */
      mf->nll = mg->nll = mf->bic = mg->bic = INFINITY;
      continue;
    }
    if (fc_fixed > 0) {
      mf->free[ML_F] = mg->free[ML_F] = 0;
      mf->k--;
      mg->k--;
    }
    for (ns = 0; ns < (fc_fixed > 0 ? 1 : 16); ns++) {
      st[ns][ML_F] = fc_fixed > 0 ? log(fc_fixed) : lo[ML_F] + (hi[ML_F] - lo[ML_F]) * (ns + 0.5) / 16.0;
      st[ns][ML_W] = log(fmax(v - d->R, 1e-3 * v) / sens__ml_filter_gain(d, ft, exp(st[ns][ML_F])));
    }
    sens__ml_fit(d, mf, st, ns);
    for (int i = 0; i < 2; i++) {
      st[i][ML_W] = i ? models[1].th[ML_W] : mf->th[ML_W];
      st[i][ML_G] = models[1].th[ML_G];
      st[i][ML_T] = models[1].th[ML_T];
      st[i][ML_F] = mf->th[ML_F];
    }
    st[2][ML_W] = mf->th[ML_W];
    st[2][ML_G] = log(0.1 * v);
    st[2][ML_T] = log(sqrt(d->dt * L));
    st[2][ML_F] = mf->th[ML_F];
    /* the roles swapped (the drift as the filter's pole and back: a local optimum), and the
     * drift model with cutoffs on the grid */
    st[3][ML_W] = mf->th[ML_W];
    st[3][ML_G] = models[1].th[ML_G];
    st[3][ML_T] = -log(2.0 * FIT_PI * exp(mf->th[ML_F]));
    st[3][ML_F] = -log(2.0 * FIT_PI * exp(models[1].th[ML_T]));
    for (ns = 4; ns < 12; ns++) {
      memcpy(st[ns], models[1].th, sizeof st[ns]);
      st[ns][ML_F] = lo[ML_F] + (hi[ML_F] - lo[ML_F]) * (ns - 3.5) / 8.0;
    }
    sens__ml_fit(d, mg, st, ns);
  }
  int best = 0;
  for (int i = 1; i < ML_NMODELS; i++) {
    best = models[i].bic < models[best].bic ? i : best;
  }
  return best;
}

static const char *filter_label(int ft) {
  return ft == SENS_FILTER_BUTTERWORTH2 ? "Butterworth (second order)"
         : ft == SENS_FILTER_FIRST_ORDER ? "first order"
                                         : "none";
}

/* the best BIC among the models with (want = 1) or without (0) a drift, or a filter */
static double best_bic_where(const sens_fit_result *r, int drift, int want) {
  double b = INFINITY;
  for (int i = 0; i < r->nmodels; i++) {
    const int has = drift ? r->models[i].gm : r->models[i].filter != SENS_FILTER_NONE;
    b = has == want ? fmin(b, r->models[i].bic) : b;
  }
  return b;
}

/* the chosen model's drift, or why there is none */
static void report_drift(sens_fit_result *r, const ml_model *m, double dt) {
  const double L = r->duration_s;
  if (!m->gm) {
    const double d = best_bic_where(r, 1, 1) - best_bic_where(r, 1, 0);
    sens__fit_note(&r->gm_sigma, "no Gauss-Markov drift: the models with one have a higher BIC (by %.3g)", d);
    sens__fit_note(&r->gm_tau_s, "no Gauss-Markov drift");
    return;
  }
  const double T = exp(m->th[ML_T]);
  if (T * SENS_FIT_TAU_RECORDS > L) {
    sens__fit_note(&r->gm_tau_s,
         "not enough data to estimate tau (need >= %.3g s, i.e. %g tau with tau >~ %.3g s; "
         "have %.3g s)",
         SENS_FIT_TAU_RECORDS * T, SENS_FIT_TAU_RECORDS, T, L);
    sens__fit_note(&r->gm_sigma, "not enough data: its tau is not resolved (record %.3g s)", L);
    return;
  }
  if (T < 3.0 * dt) {
    sens__fit_note(&r->gm_tau_s, "tau below 3 sample periods: indistinguishable from white noise");
    sens__fit_note(&r->gm_sigma, "tau below 3 sample periods: indistinguishable from white noise");
    return;
  }
  const double sg = exp(0.5 * m->th[ML_G]);
  sens__fit_set(&r->gm_sigma, sg, m->cov_ok ? 0.5 * sg * sqrt(m->cov[ML_G][ML_G]) : NAN);
  sens__fit_set(&r->gm_tau_s, T, m->cov_ok ? T * sqrt(m->cov[ML_T][ML_T]) : NAN);
}

/* the chosen model's white noise and filter */
static void report_white_filter(sens_fit_result *r, const ml_model *m, const ml_data *d) {
  const double q = r->quant_step.ok ? r->quant_step.value : 0.0;
  const double sw = exp(0.5 * m->th[ML_W]);
  if (m->th[ML_W] < d->lo[ML_W] + 1.0) {
    sens__fit_note(&r->white_sigma, q > 0 ? "no white noise detected beyond the quantization (q^2/12)"
                                : "no white noise detected");
  } else {
    sens__fit_set(&r->white_sigma, sw, m->cov_ok ? 0.5 * sw * sqrt(m->cov[ML_W][ML_W]) : NAN);
    const double gain = m->filter ? sens__ml_filter_gain(d, m->filter, exp(m->th[ML_F])) : 1.0;
    if (sw * sqrt(gain) < 0.5 * q) { /* the noise the quantizer sees */
      sens__fit_note(&r->white_sigma, "noise below half a quantization step: quantization is not white "
                            "here and this estimate is unreliable");
    }
  }
  if (m->filter == SENS_FILTER_NONE) {
    const double dbic = best_bic_where(r, 0, 1) - best_bic_where(r, 0, 0);
    sens__fit_note(&r->cutoff_hz, "no low-pass seen: the models with one have a higher BIC (by %.3g)", dbic);
    return;
  }
  const double fc = exp(m->th[ML_F]);
  sens__fit_set(&r->cutoff_hz, fc, m->cov_ok ? fc * sqrt(m->cov[ML_F][ML_F]) : NAN);
  sens__fit_note(&r->cutoff_hz, "%s", filter_label(m->filter));
}

/* White σ, Gauss–Markov σ and τ, and the filter: the Allan variance (the figure, and a starting
 * point), then the six models by maximum likelihood, the lowest BIC chosen. */
int sens__fit_noise(sens_fit_result *r, const double *e, double dt, int ft_fixed,
                    double fc_fixed) {
  const double L = r->duration_s;
  r->white_sigma = r->gm_sigma = r->gm_tau_s = r->cutoff_hz = (sens_fit_value){0};
  r->nmodels = 0;
  if (r->n < SENS_FIT_MIN_SAMPLES) {
    const char *fmt = "not enough data for the Allan deviation (need >= %d samples, have %zu)";
    sens__fit_note(&r->white_sigma, fmt, SENS_FIT_MIN_SAMPLES, r->n);
    sens__fit_note(&r->gm_sigma, fmt, SENS_FIT_MIN_SAMPLES, r->n);
    sens__fit_note(&r->gm_tau_s, fmt, SENS_FIT_MIN_SAMPLES, r->n);
    sens__fit_note(&r->cutoff_hz, "not enough data for the noise models (need >= %d samples, have %zu)",
         SENS_FIT_MIN_SAMPLES, r->n);
    return 0;
  }
  r->nallan = sens_allan(r->allan, SENS_FIT_MAX_ALLAN, e, r->n, dt, sqrt(2.0));
  const double q = r->quant_step.ok ? r->quant_step.value : 0.0;
  const allan_fit af = sens__allan_fit_points(r, dt, q, L, 0.0);
  double mean = 0.0, var = 0.0;
  for (size_t i = 0; i < r->n; i++) {
    mean += e[i];
  }
  mean /= (double)r->n;
  for (size_t i = 0; i < r->n; i++) {
    var += (e[i] - mean) * (e[i] - mean);
  }
  var /= (double)r->n;
  if (!(var > 0)) {
    const char *why = "the series is constant: no noise to fit";
    sens__fit_note(&r->white_sigma, "%s", why);
    sens__fit_note(&r->gm_sigma, "%s", why);
    sens__fit_note(&r->gm_tau_s, "%s", why);
    sens__fit_note(&r->cutoff_hz, "%s", why);
    return 0;
  }
  double *ec = malloc(r->n * sizeof *ec);
  if (!ec) {
    return -1;
  }
  for (size_t i = 0; i < r->n; i++) {
    ec[i] = e[i] - mean;
  }
  /* the quantization's variance is known; a floor of 1e-12 of the variance keeps continuous
   * data (printed with finite digits) well posed */
  ml_data d = {ec, r->n, dt, fmax(q * q / 12.0, 1e-12 * var), var, {0}, {0}, 0};
  ml_model models[ML_NMODELS];
  const double allan[3] = {af.A, af.B, af.T};
  const int best = ml_select(&d, models, allan, ft_fixed, fc_fixed);
  free(ec);
  r->nmodels = ML_NMODELS;
  r->model = best;
  for (int i = 0; i < ML_NMODELS; i++) {
    r->models[i] = (sens_fit_model){models[i].gm, (int)models[i].filter, models[i].k,
                                    -models[i].nll, models[i].bic};
  }
  const ml_model *m = &models[best];
  r->filter_type = (int)m->filter;
  r->model_white_var = exp(m->th[ML_W]);
  r->model_gm_var = m->gm ? exp(m->th[ML_G]) : 0.0;
  r->model_gm_tau_s = m->gm ? exp(m->th[ML_T]) : 0.0;
  r->model_fc = m->filter ? exp(m->th[ML_F]) : 0.0;
  r->likelihood_evals = d.evals;
  report_white_filter(r, m, &d);
  report_drift(r, m, dt);
  /* how well the chosen model reproduces the Allan points (reduced χ², edf weights) */
  double chi = 0.0;
  for (int i = 0; i < r->nallan; i++) {
    const double mod = sens_fit_model_avar(r, r->allan[i].tau_s, NULL, NULL, NULL);
    chi += r->allan[i].edf / 2.0 * (r->allan[i].avar / mod - 1) * (r->allan[i].avar / mod - 1);
  }
  r->chi2_red = r->nallan > m->k ? chi / (r->nallan - m->k) : 0.0;
  return 0;
}
