/* sensors/fit_reference.c: the sensor against a reference: scale and offset by least squares,
 * the lag behind a moving reference, and the low-pass cutoff that lag shows. */
#include "sensors/fit_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


static int ols(const double *x, const double *ref, size_t i0, size_t i1, double *slope,
               double *icpt) {
  double mr = 0, mx = 0;
  const double n = (double)(i1 - i0);
  for (size_t i = i0; i < i1; i++) {
    mr += ref[i];
    mx += x[i];
  }
  mr /= n;
  mx /= n;
  double srr = 0, srx = 0;
  for (size_t i = i0; i < i1; i++) {
    srr += (ref[i] - mr) * (ref[i] - mr);
    srx += (ref[i] - mr) * (x[i] - mx);
  }
  if (!(srr > 0)) {
    *slope = 1.0;
    *icpt = mx - mr;
    return -1;
  }
  *slope = srx / srr;
  *icpt = mx - *slope * mr;
  return 0;
}

/* the reference delayed by `lag` samples (fractional: linear interpolation; before the record's
 * start it holds its first value), through the chain's filter `ft` (primed at rest) */
static void align_ref(double *out, const double *ref, size_t n, double lag, int ft, double fc,
                      double rate) {
  for (size_t k = 0; k < n; k++) {
    const double p = (double)k - lag;
    const size_t i = p > 0 ? (size_t)p : 0;
    const double f = p > 0 ? p - (double)i : 0.0;
    out[k] = i + 1 < n ? ref[i] + f * (ref[i + 1] - ref[i]) : ref[n - 1];
  }
  if (ft != SENS_FILTER_NONE) {
    sens_filter h;
    sens_filter_init(&h, (sens_filter_type)ft, fc, rate);
    for (size_t k = 0; k < n; k++) {
      out[k] = sens_filter_step(&h, out[k]);
    }
  }
}

/* mean squared residual of x regressed on rr over [i0, n) */
static double residual_var(const double *x, const double *rr, size_t i0, size_t n) {
  double slope, icpt, ss = 0.0;
  ols(x, rr, i0, n, &slope, &icpt);
  for (size_t i = i0; i < n; i++) {
    const double e = x[i] - icpt - slope * rr[i];
    ss += e * e;
  }
  return ss / (double)(n - i0);
}

/* The lag of x behind a moving reference, in samples (fractional): the whole shift d in
 * [0, dmax] with the least residual variance, refined by a parabola through d-1, d, d+1. */
static double ref_lag(const double *x, const double *ref, double *tmp, size_t n, double rate) {
  const size_t dmax = (size_t)fmin((double)n / 10.0, ceil(SENS_FIT_MAX_LATENCY_S * rate));
  double v[3] = {INFINITY, INFINITY, INFINITY}, prev = INFINITY, best = INFINITY;
  size_t bd = 0;
  for (size_t d = 0; d <= dmax; d++) {
    align_ref(tmp, ref, n, (double)d, SENS_FILTER_NONE, 0.0, rate);
    const double r = residual_var(x, tmp, dmax, n);
    if (r < best) {
      best = r;
      bd = d;
      v[0] = prev;
      v[1] = r;
      v[2] = INFINITY;
    } else if (d == bd + 1) {
      v[2] = r;
    }
    prev = r;
  }
  const double den = v[0] - 2.0 * v[1] + v[2];
  if (bd == 0 || !isfinite(v[0]) || !isfinite(v[2]) || !(den > 0)) {
    return (double)bd;
  }
  return (double)bd + fmax(-0.5, fmin(0.5, 0.5 * (v[0] - v[2]) / den));
}

/* 1 when every value of the reference equals the first to rounding (a resting truth) */
int sens__ref_resting(const double *ref, size_t n) {
  double lo = ref[0], hi = ref[0];
  for (size_t i = 1; i < n; i++) {
    lo = fmin(lo, ref[i]);
    hi = fmax(hi, ref[i]);
  }
  return hi - lo <= 1e-9 * fmax(1.0, fmax(fabs(lo), fabs(hi)));
}

/* offset from the mean difference at unit scale, its uncertainty from 10 blocks */
void sens__offset_at_rest(sens_fit_result *r, const double *x, const double *ref, double *e) {
  const int K = 10;
  double mean = 0, bm = 0, bm2 = 0;
  for (size_t i = 0; i < r->n; i++) {
    mean += x[i] - ref[i];
  }
  mean /= (double)r->n;
  for (size_t i = 0; i < r->n; i++) {
    e[i] = x[i] - ref[i] - mean;
  }
  if (r->n < 20) {
    sens__fit_note(&r->offset, "not enough data (need >= 20 samples)");
    return;
  }
  for (int b = 0; b < K; b++) {
    double m = 0;
    const size_t lo = r->n * (size_t)b / K, hi = r->n * (size_t)(b + 1) / K;
    for (size_t i = lo; i < hi; i++) {
      m += x[i] - ref[i];
    }
    m /= (double)(hi - lo);
    bm += m, bm2 += m * m;
  }
  bm /= K;
  sens__fit_set(&r->offset, mean, sqrt(fmax(bm2 / K - bm * bm, 0.0) / (K - 1.0)));
  sens__fit_note(&r->offset, "mean difference at unit scale; includes any constant and turn-on bias");
}

/* e = x - offset - (1 + scale)·ref, ref already aligned (delayed, filtered); scale and offset
 * with the spread over 10 consecutive blocks / √10 */
void sens__fit_reference(sens_fit_result *r, const double *x, const double *ref, double *e) {
  double slope, icpt;
  const int moving = ols(x, ref, 0, r->n, &slope, &icpt) == 0;
  for (size_t i = 0; i < r->n; i++) {
    e[i] = x[i] - icpt - slope * ref[i];
  }
  const int K = 10;
  double ss = 0, si = 0, ss2 = 0, si2 = 0;
  int used = 0;
  for (int b = 0; b < K && r->n >= 20; b++) {
    double s1, c1;
    if (ols(x, ref, r->n * (size_t)b / K, r->n * (size_t)(b + 1) / K, &s1, &c1) == 0) {
      ss += s1;
      ss2 += s1 * s1;
      si += c1;
      si2 += c1 * c1;
      used++;
    }
  }
  const double sd_s = used >= 3 ? sqrt(fmax(ss2 / used - (ss / used) * (ss / used), 0.0) / (used - 1.0)) : NAN;
  const double sd_i = used >= 3 ? sqrt(fmax(si2 / used - (si / used) * (si / used), 0.0) / (used - 1.0)) : NAN;
  /* a reference that barely moves cannot separate scale from drift: then the scale is not
   * reported and the offset is the mean difference, at unit scale */
  if (moving && used >= 3 && sd_s <= SENS_FIT_MAX_SCALE_SIGMA) {
    sens__fit_set(&r->scale_error, slope - 1.0, sd_s);
    sens__fit_set(&r->offset, icpt, sd_i);
    sens__fit_note(&r->offset, "includes any constant bias and turn-on bias");
    return;
  }
  if (moving && used >= 3) {
    sens__fit_note(&r->scale_error,
         "the reference moves too little to tell scale from drift (block-to-block spread %.2g); "
         "record a motion over a wider range",
         sd_s);
  } else {
    sens__fit_note(&r->scale_error, "not enough data (need >= 20 samples with a moving reference)");
  }
  sens__offset_at_rest(r, x, ref, e);
}

/* the reference through the chain's first-order low-pass (primed at rest on its first value) */
static void lowpass(double *out, const double *in, size_t n, double fc, double rate) {
  const double a = exp(-2.0 * FIT_PI * fc / rate);
  double y = in[0];
  for (size_t i = 0; i < n; i++) {
    y = a * y + (1.0 - a) * in[i];
    out[i] = y;
  }
}

/* residual variance of x regressed on the reference filtered at fc (0: unfiltered) */
static double ref_residual(const double *x, const double *ref, double *tmp, size_t n, double fc,
                           double rate) {
  const double *rr = ref;
  if (fc > 0) {
    lowpass(tmp, ref, n, fc, rate);
    rr = tmp;
  }
  double slope, icpt, ss = 0;
  ols(x, rr, 0, n, &slope, &icpt);
  for (size_t i = 0; i < n; i++) {
    const double e = x[i] - icpt - slope * rr[i];
    ss += e * e;
  }
  return ss / (double)n;
}

/* A moving reference seen through a low-pass lags: the cutoff that best explains the lag
 * (log grid from rate/1000 to Nyquist, refined), or 0 when filtering the reference does not
 * reduce the residual variance by 10% (no visible lag). */
static double ref_cutoff(const double *x, const double *ref, double *tmp, size_t n, double rate) {
  const double v0 = ref_residual(x, ref, tmp, n, 0.0, rate);
  const int grid = 40;
  const double lo = log(rate / 1000.0), hi = log(0.4999 * rate);
  double vb = v0;
  int ib = -1;
  for (int g = 0; g < grid; g++) {
    const double fc = exp(lo + (hi - lo) * g / (grid - 1));
    const double v = ref_residual(x, ref, tmp, n, fc, rate);
    if (v < vb) {
      vb = v;
      ib = g;
    }
  }
  if (ib < 0 || vb > 0.9 * v0) {
    return 0.0;
  }
  double a = lo + (hi - lo) * (ib > 0 ? ib - 1 : 0) / (grid - 1);
  double b = lo + (hi - lo) * (ib < grid - 1 ? ib + 1 : grid - 1) / (grid - 1);
  const double gr = 0.5 * (sqrt(5.0) - 1.0);
  for (int it = 0; it < 30; it++) {
    const double c = b - gr * (b - a), d = a + gr * (b - a);
    if (ref_residual(x, ref, tmp, n, exp(c), rate) < ref_residual(x, ref, tmp, n, exp(d), rate)) {
      b = d;
    } else {
      a = c;
    }
  }
  return exp(0.5 * (a + b));
}

/* Against a moving reference. Its lag (latency plus a filter's delay: a moving reference alone
 * cannot tell them apart) is measured first, and the noise models are fitted to the residual
 * after that lag. When they find no filter, the lag is latency: whole samples, and the fit is
 * redone aligned on it. When they find one, the first-order low-pass that explains the lag
 * (used when it lowers the residual variance by more than 10%) filters the reference, and its
 * cutoff is the filter's in the final noise fit: the noise alone cannot tell a drift from a
 * filter of similar time constant. */
int sens__fit_moving(sens_fit_result *r, const double *x, const double *ref, double *e,
                     double *tmp, double dt) {
  const double rate = r->rate_hz;
  const size_t n = r->n;
  const double lag = ref_lag(x, ref, tmp, n, rate);
  double *al = calloc(n, sizeof *al);
  if (!al) {
    return -1;
  }
  align_ref(al, ref, n, lag, SENS_FILTER_NONE, 0.0, rate);
  sens__fit_reference(r, x, al, e);
  int rc = sens__fit_noise(r, e, dt, SENS_FILTER_NONE, 0.0);
  const int filtered = r->filter_type != SENS_FILTER_NONE;
  const double d = filtered ? 0.0 : round(lag);
  align_ref(al, ref, n, d, SENS_FILTER_NONE, 0.0, rate);
  r->ref_cutoff_hz = filtered ? ref_cutoff(x, al, tmp, n, rate) : 0.0;
  if (r->ref_cutoff_hz > 0) {
    lowpass(tmp, al, n, r->ref_cutoff_hz, rate);
    memcpy(al, tmp, n * sizeof *al);
  }
  sens__fit_reference(r, x, al, e);
  free(al);
  sens__fit_set(&r->latency_samples, d, 0.0);
  sens__fit_note(&r->latency_samples, "whole samples; the lag behind the reference is %.3g samples%s", lag,
       filtered ? ", taken as the filter's" : "");
  if (rc != 0 || (!filtered && fabs(lag - d) < 0.05)) {
    return rc; /* aligned as it was fitted */
  }
  if (r->ref_cutoff_hz > 0) {
    rc = sens__fit_noise(r, e, dt, SENS_FILTER_FIRST_ORDER, r->ref_cutoff_hz);
    if (r->cutoff_hz.ok) {
      sens__fit_note(&r->cutoff_hz, "first order, from the lag behind the reference (the noise alone cannot "
                          "tell a drift from a filter)");
      r->cutoff_hz.sigma = NAN;
    }
    return rc;
  }
  return sens__fit_noise(r, e, dt, SENS_FILTER_NONE, 0.0);
}
