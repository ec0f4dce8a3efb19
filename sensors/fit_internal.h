/* sensors/fit_internal.h: what the files of the noise fit share (internal to sensors/).
 *
 *   fit_series.c     the whole fit: sample rate, the reference's cases, τ from the
 *                    autocovariance, the spectrum figure
 *   fit_reference.c  scale, offset, lag and a filter's cutoff against a reference
 *   fit_choice.c     the six noise models fitted, the lowest BIC chosen, and the report
 *   fit_allan.c      Allan variances of the models, their fit to the points, a model's curve
 *   fit_ml.c         the models' exact likelihood (Kalman filter), its minimum and covariance
 *   fit_stats.c      statistics of a series: Allan variance, autocovariance, Welch PSD,
 *                    quantization step; closed forms and filter gains
 *   fit_value.c      a result's values: set, or noted why they are missing
 * Each file uses only those below it.
 */
#ifndef ACHILLES_SENSORS_FIT_INTERNAL_H
#define ACHILLES_SENSORS_FIT_INTERNAL_H

#include "sensors/filter.h"
#include "sensors/fit.h"

#define FIT_PI 3.14159265358979323846

/* --- a result's values (fit_value.c) --- */

/* a value's note: why it is missing, or what it means */
void sens__fit_note(sens_fit_value *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* a value found, with its standard deviation */
void sens__fit_set(sens_fit_value *v, double value, double sigma);
/* qsort's comparison of doubles, ascending */
int sens__cmp_double(const void *a, const void *b);

/* --- the models' likelihood (fit_ml.c) --- */

enum { ML_W, ML_G, ML_T, ML_F, ML_NP }; /* θ: ln σ_w², ln σ_GM², ln T, ln fc */

typedef struct ml_data {
  const double *e;
  size_t n;
  double dt, R, var; /* sample period, quantization variance, variance of e */
  double lo[ML_NP], hi[ML_NP]; /* bounds of θ */
  long evals;
} ml_data;

typedef struct ml_model {
  int gm;                  /* 1: with a Gauss–Markov drift */
  sens_filter_type filter; /* the chain's filter */
  int free[ML_NP];         /* which θ are fitted */
  int k;                   /* number of them */
  double th[ML_NP];        /* the estimate */
  double nll, bic;
  double cov[ML_NP][ML_NP]; /* covariance of θ (inverse Hessian of the nll) */
  int cov_ok;
} ml_model;

typedef struct ml_ss {
  double F[4][4], Q[4][4], P0[4][4];
} ml_ss;

/* the state space of a model (gm: with a drift; ft its filter) at θ */
void sens__ml_state(ml_ss *s, const ml_data *d, int gm, sens_filter_type ft, const double *th);
/* a model with its free parameters, before the fit */
void sens__ml_model_init(ml_model *m, int gm, sens_filter_type ft);
/* fits m from each of ns starting points, keeps the best; its BIC and covariance */
void sens__ml_fit(ml_data *d, ml_model *m, double (*starts)[ML_NP], int ns);
/* variance of the filter's output for unit white input */
double sens__ml_filter_gain(const ml_data *d, sens_filter_type ft, double fc);

/* --- Allan variances of the models (fit_allan.c) --- */

typedef struct allan_fit {
  double A, B, T; /* white variance (per sample, before the filter), GM variance, GM time */
  double fc;      /* low-pass cutoff of the model, Hz (0: none) */
  double ssr;     /* weighted residual sum */
} allan_fit;

/* Allan variance at cluster size m of unit white noise, and of unit-variance Gauss–Markov drift
 * of time T, through the first-order low-pass of cutoff fc (0: none) */
double sens__avar_filtered_white(double fc, double dt, long m);
double sens__avar_filtered_gm(double T, double fc, double dt, long m);
/* the Allan fit of r's points (quantization step q known; fc_fixed < 0: no filter searched) */
allan_fit sens__allan_fit_points(sens_fit_result *r, double dt, double q, double tmax,
                                 double fc_fixed);

/* --- model choice and the report (fit_choice.c) --- */

enum { ML_NMODELS = 6 };

/* The six models by maximum likelihood, the lowest BIC chosen (ft_fixed, fc_fixed: a filter the
 * reference showed), into r's white, drift and cutoff values with their notes. 0, or -1 when out
 * of memory. */
int sens__fit_noise(sens_fit_result *r, const double *e, double dt, int ft_fixed, double fc_fixed);

/* --- against a reference (fit_reference.c) --- */

/* 1 when the reference stays constant */
int sens__ref_resting(const double *ref, size_t n);
/* scale and offset by least squares; e gets the residual */
void sens__fit_reference(sens_fit_result *r, const double *x, const double *ref, double *e);
/* the offset against a resting reference; e gets the residual */
void sens__offset_at_rest(sens_fit_result *r, const double *x, const double *ref, double *e);
/* against a moving reference: lag, filter, then the noise fit of the aligned residual */
int sens__fit_moving(sens_fit_result *r, const double *x, const double *ref, double *e,
                     double *tmp, double dt);

#endif
