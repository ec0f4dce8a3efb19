/* sensors/fit.h: estimating a sensor channel's noise parameters from a recorded series.
 *
 * Input: a series x[k] at times t[k], sampled at a constant rate (the rate is the median of the
 * time steps), optionally with a reference r[k] (the true value: the log's truth channel, a CSV
 * column, another log). Output: the parameters of the processing chain (chain.h) that explain
 * the series, each with an uncertainty or a note saying why it could not be estimated. Method
 * (docs/noise-fit.md):
 *  - quantization step: the largest q such that every difference between recorded values is a
 *    whole multiple of q (values on a grid);
 *  - scale error and offset: least squares of x against r, x = offset + (1 + scale)·r; the
 *    uncertainty is the spread of the same regression over 10 consecutive blocks / √10
 *    (blocks keep the drift's correlation, which the textbook formula would ignore);
 *  - latency: against a moving reference, the shift with the least residual variance, in
 *    whole samples when the noise shows no filter;
 *  - white σ, Gauss–Markov σ and τ, and a first-order or Butterworth low-pass: six models of
 *    the chain's noise (white; + drift; + either filter; both), each fitted by exact Gaussian
 *    maximum likelihood (a Kalman filter's innovations), the lowest BIC chosen; uncertainties
 *    from the inverse Hessian of the likelihood;
 *  - the overlapping Allan variance (the figure, a starting point, a goodness-of-fit check);
 *  - τ cross-check: the lag at which the residual's autocovariance falls to 1/e of its value
 *    after the white noise (lag ≥ 1);
 *  - the Welch PSD of the residual (the figure).
 *
 * The fit allocates scratch memory (it is an offline tool); sens_fit_free() releases the result's
 * spectrum.
 */
#ifndef ACHILLES_SENSORS_FIT_H
#define ACHILLES_SENSORS_FIT_H

#include <stddef.h>

#define SENS_FIT_MAX_ALLAN 80
#define SENS_FIT_NOTE_MAX 200
#define SENS_FIT_MIN_SAMPLES 64    /* Allan fit */
/* A scale error is reported only when its block-to-block uncertainty is below this: scale
 * errors of real encoders are 1e-4..1e-2, so a larger spread says the reference did not move
 * enough to separate scale from drift. */
#define SENS_FIT_MAX_SCALE_SIGMA 0.01
#define SENS_FIT_TAU_RECORDS 10.0  /* τ needs a record at least this many τ long */
#define SENS_FIT_MAX_LATENCY_S 0.25 /* the longest latency searched (and at most a tenth of the record) */

/* --- estimators ------------------------------------------------------------------------------ */

typedef struct sens_allan_point {
  long m;       /* cluster size, samples */
  double tau_s; /* m·dt */
  double avar;  /* overlapping Allan variance, unit² */
  double edf;   /* equivalent degrees of freedom of the estimate (white noise formula) */
} sens_allan_point;

/* Overlapping Allan variance of x (n samples, period dt) at cluster sizes 1, then growing by
 * `ratio` (≥ 1.1; √2 gives two points per octave), while m ≤ n/5. Returns the number of points
 * written (at most max). */
int sens_allan(sens_allan_point *out, int max, const double *x, size_t n, double dt,
               double ratio);
/* Equivalent degrees of freedom of the overlapping estimator at cluster size m over n samples,
 * for white noise (Howe, Allan & Barnes 1981): [3(M-1)/(2m) - 2(M-2)/M]·4m²/(4m² + 5), M = n. */
double sens_allan_edf(size_t n, long m);

/* Closed forms of the Allan variance at τ = m·dt.
 *  white noise of per-sample σ:     σ²·dt/τ  (exact for discrete samples: the mean of m
 *                                   independent samples has variance σ²/m).
 *  first-order Gauss–Markov σ, T, continuous averaging:
 *                                   (σ²T²/τ²)·(4e^{-τ/T} - e^{-2τ/T} + 2τ/T - 3).
 *  the same process sampled every dt (AR(1), a = e^{-dt/T}), exact:
 *    σ²/m²·[m + 2a(m(1-a) - (1-a^m))/(1-a)² - a(1-a^m)²/(1-a)²]
 *  which tends to the continuous form when dt ≪ T. */
double sens_avar_white(double sigma, double dt, double tau_s);
double sens_avar_gm(double sigma, double corr_s, double tau_s);
double sens_avar_gm_discrete(double sigma, double corr_s, double dt, long m);

/* Autocovariance r[0..maxlag] of x - mean(x) (biased estimator, divided by n), through an FFT.
 * Returns 0, or -1 when out of memory. */
int sens_autocov(double *r, long maxlag, const double *x, size_t n);

/* One-sided Welch PSD (unit²/Hz) of x at rate_hz: Hann window, segments of `seg` samples (a
 * power of two), 50% overlap, mean of each segment removed. Writes seg/2 + 1 bins (0 .. rate/2).
 * Returns the number of segments averaged, or -1 (seg not a power of two ≥ 16, n < seg, or out
 * of memory). */
int sens_psd_welch(double *freq, double *psd, size_t seg, const double *x, size_t n,
                   double rate_hz);

/* Power of the first-order low-pass of chain.h (y = a·y + (1-a)·x, a = e^{-2π·fc/rate}) at f. */
double sens_lowpass1_gain2(double cutoff_hz, double rate_hz, double f);
/* Power gain at f of the chain's filter of type `type` (sens_filter_type; 0: none → 1). */
double sens_filter_gain2(int type, double cutoff_hz, double rate_hz, double f);

/* Quantization step of the values: the largest q such that every difference between distinct
 * values is a multiple of q (to a relative 1e-9), or 0 when the values are not on a grid (then a
 * note says why). */
double sens_quant_step(const double *x, size_t n, char *note, size_t note_sz);

/* --- the whole fit --------------------------------------------------------------------------- */

typedef struct sens_fit_value {
  double value;  /* the estimate (0 when !ok) */
  double sigma;  /* its standard uncertainty (1σ) */
  int ok;        /* 1: estimated; 0: see note */
  char note[SENS_FIT_NOTE_MAX]; /* why it was not estimated, or a caveat */
} sens_fit_value;

/* One noise model fitted by maximum likelihood (docs/noise-fit.md). */
typedef struct sens_fit_model {
  int gm;        /* 1: with a Gauss–Markov drift */
  int filter;    /* sens_filter_type: 0 none, 1 first order, 2 Butterworth (second order) */
  int k;         /* free parameters */
  double loglik; /* maximum log-likelihood */
  double bic;    /* Bayesian information criterion, -2·loglik + k·ln n: lower is better */
} sens_fit_model;

#define SENS_FIT_NMODELS 6

typedef struct sens_fit_result {
  size_t n;           /* samples */
  double rate_hz;     /* from the median time step */
  double duration_s;  /* n / rate */
  long gaps;          /* time steps longer than 1.5 periods (missing samples) */
  int have_reference;
  int reference_resting;       /* the reference is constant: at rest, only the offset */
  sens_fit_value quant_step, scale_error, offset;
  sens_fit_value white_sigma, gm_sigma, gm_tau_s;
  sens_fit_value tau_acf_s;    /* cross-check of gm_tau_s */
  sens_fit_value cutoff_hz;
  sens_fit_value latency_samples; /* delay behind a moving reference, whole samples */
  int nmodels, model;          /* the models compared, and the one chosen (lowest BIC) */
  sens_fit_model models[SENS_FIT_NMODELS];
  int filter_type;             /* the chosen model's filter (sens_filter_type) */
  double model_white_var, model_gm_var, model_gm_tau_s, model_fc; /* its parameters */
  long likelihood_evals;       /* evaluations of the likelihood (cost) */
  double chi2_red;             /* reduced χ² of the chosen model against the Allan points */
  double ref_cutoff_hz;        /* low-pass that explains the lag behind the reference (0: none) */
  int nallan;
  sens_allan_point allan[SENS_FIT_MAX_ALLAN];
  size_t npsd;                 /* Welch bins (0 when the series was too short) */
  double *psd_f, *psd;         /* [npsd], allocated; released by sens_fit_free */
} sens_fit_result;

/* Fits x (n samples at times t, s) with optional reference ref (NULL: the sensor was at rest,
 * the offset and scale cannot be estimated). Returns 0, or -1 with a message (n < 2, times not
 * increasing, out of memory); parameters that the data cannot determine are reported through
 * their ok/note, not as an error. */
int sens_fit(sens_fit_result *r, const double *t, const double *x, const double *ref, size_t n,
             char *err, size_t err_sz);
void sens_fit_free(sens_fit_result *r);

/* The fitted model's Allan variance at τ (white + quantization + Gauss–Markov), and its parts. */
double sens_fit_model_avar(const sens_fit_result *r, double tau_s, double *white,
                           double *quant, double *gm);

#endif
