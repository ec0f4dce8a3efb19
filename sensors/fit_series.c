/* sensors/fit_series.c: noise parameters from a recorded series, the whole fit (method:
 * sensors/fit.h and docs/noise-fit.md): the sample rate, the cases of the reference, τ from the
 * autocovariance and the spectrum, around the stages of fit_internal.h. */
#include "sensors/fit_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- τ from the autocovariance ---------------------------------------------------------------- */

static void fit_acf(sens_fit_result *r, const double *e, double dt, long k0) {
  if (!r->gm_tau_s.ok) {
    sens__fit_note(&r->tau_acf_s, "no Gauss-Markov drift to cross-check");
    return;
  }
  const long maxlag = (long)(r->n / 2);
  double *ac = malloc((size_t)(maxlag + 1) * sizeof *ac);
  if (!ac || sens_autocov(ac, maxlag, e, r->n) != 0 || k0 >= maxlag) {
    free(ac);
    sens__fit_note(&r->tau_acf_s, "autocovariance not available");
    return;
  }
  const double target = ac[k0] / exp(1.0);
  long k = k0;
  while (k < maxlag && ac[k] > target) {
    k++;
  }
  if (k >= maxlag || k == k0) {
    sens__fit_note(&r->tau_acf_s, "the autocovariance does not fall to 1/e within the record");
  } else {
    /* linear interpolation between lags k-1 and k */
    const double frac = (ac[k - 1] - target) / (ac[k - 1] - ac[k]);
    const double tau = ((double)(k - 1 - k0) + frac) * dt;
    /* the estimate's spread: ≈ τ·√(2τ/L) (one decorrelation per 2τ) */
    sens__fit_set(&r->tau_acf_s, tau, tau * sqrt(2.0 * tau / r->duration_s));
  }
  free(ac);
}

/* --- spectrum (the figure) ------------------------------------------------------------------------ */

/* the Welch PSD of the noise, for the figure */
static void fit_psd(sens_fit_result *r, const double *e) {
  size_t seg = 16;
  while (seg * 2 <= 4096 && seg * 2 * 4 <= r->n) {
    seg *= 2;
  }
  if (r->n < 4 * 64) {
    return;
  }
  r->npsd = seg / 2 + 1;
  r->psd_f = malloc(r->npsd * sizeof *r->psd_f);
  r->psd = malloc(r->npsd * sizeof *r->psd);
  if (!r->psd_f || !r->psd || sens_psd_welch(r->psd_f, r->psd, seg, e, r->n, r->rate_hz) < 0) {
    sens_fit_free(r);
  }
}

/* --- the whole fit ------------------------------------------------------------------------------- */

static int fit_rate(sens_fit_result *r, const double *t, char *err, size_t err_sz) {
  double *dt = malloc((r->n - 1) * sizeof *dt);
  if (!dt) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  for (size_t i = 1; i < r->n; i++) {
    dt[i - 1] = t[i] - t[i - 1];
    if (!(dt[i - 1] > 0)) {
      snprintf(err, err_sz, "times must increase (sample %zu: t = %.17g after %.17g)", i, t[i],
               t[i - 1]);
      free(dt);
      return -1;
    }
  }
  qsort(dt, r->n - 1, sizeof *dt, sens__cmp_double);
  const double med = dt[(r->n - 1) / 2];
  for (size_t i = 0; i < r->n - 1; i++) {
    r->gaps += dt[i] > 1.5 * med;
  }
  free(dt);
  r->rate_hz = 1.0 / med;
  r->duration_s = (double)r->n * med;
  return 0;
}

int sens_fit(sens_fit_result *r, const double *t, const double *x, const double *ref, size_t n,
             char *err, size_t err_sz) {
  memset(r, 0, sizeof *r);
  r->n = n;
  r->have_reference = ref != NULL;
  if (n < 2) {
    snprintf(err, err_sz, "need at least 2 samples (have %zu)", n);
    return -1;
  }
  if (fit_rate(r, t, err, err_sz) != 0) {
    return -1;
  }
  const double dt = 1.0 / r->rate_hz;
  double *e = malloc(n * sizeof *e);
  if (!e) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  const double q = sens_quant_step(x, n, r->quant_step.note, sizeof r->quant_step.note);
  if (q > 0) {
    sens__fit_set(&r->quant_step, q, 0.0);
  }
  double *tmp = ref ? malloc(n * sizeof *tmp) : NULL;
  int rc = ref && !tmp ? -1 : 0;
  r->reference_resting = ref && sens__ref_resting(ref, n);
  if (rc == 0 && ref && !r->reference_resting && n >= SENS_FIT_MIN_SAMPLES) {
    rc = sens__fit_moving(r, x, ref, e, tmp, dt);
  } else if (rc == 0) {
    if (!ref) {
      double mean = 0.0;
      for (size_t i = 0; i < n; i++) {
        mean += x[i];
      }
      mean /= (double)n;
      for (size_t i = 0; i < n; i++) {
        e[i] = x[i] - mean;
      }
      sens__fit_note(&r->scale_error, "needs a reference (--reference)");
      sens__fit_note(&r->offset, "needs a reference (--reference)");
    } else if (r->reference_resting) {
      sens__fit_note(&r->scale_error, "the reference rests (constant %.9g): the scale needs motion", ref[0]);
      sens__offset_at_rest(r, x, ref, e);
    } else {
      sens__fit_reference(r, x, ref, e);
    }
    rc = sens__fit_noise(r, e, dt, SENS_FILTER_NONE, 0.0);
  }
  if (!r->latency_samples.ok) {
    sens__fit_note(&r->latency_samples, "%s", !ref ? "needs a reference (--reference)"
                                    : r->reference_resting ? "needs a moving reference"
                                                           : "not enough data");
  }
  free(tmp);
  if (rc != 0) {
    free(e);
    sens_fit_free(r);
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  fit_psd(r, e);
  long k0 = 1;
  if (r->cutoff_hz.ok) {
    /* the filter correlates the white noise over a few time constants */
    k0 = 1 + (long)ceil(5.0 * r->rate_hz / (2.0 * FIT_PI * r->cutoff_hz.value));
  }
  fit_acf(r, e, dt, k0);
  free(e);
  return 0;
}

void sens_fit_free(sens_fit_result *r) {
  free(r->psd_f);
  free(r->psd);
  r->psd_f = r->psd = NULL;
  r->npsd = 0;
}
