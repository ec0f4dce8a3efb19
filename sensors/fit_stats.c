/* sensors/fit_stats.c: statistics of a recorded series for the noise fit: Allan variance, FFT,
 * autocovariance, Welch PSD and the quantization step; the closed-form Allan variances of white
 * noise and Gauss–Markov drift and the filters' power gains (sensors/fit.h). */
#include "sensors/fit_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- closed forms ---------------------------------------------------------------------------- */

double sens_avar_white(double sigma, double dt, double tau_s) { return sigma * sigma * dt / tau_s; }

double sens_avar_gm(double sigma, double corr_s, double tau_s) {
  const double x = tau_s / corr_s;
  double f;
  if (x < 1e-2) { /* series of 4e^-x - e^-2x + 2x - 3: the closed form cancels for small x */
    f = x * x * x * (2.0 / 3.0 - x * (0.5 - x * 7.0 / 30.0));
  } else {
    f = 4.0 * exp(-x) - exp(-2.0 * x) + 2.0 * x - 3.0;
  }
  return sigma * sigma * f / (x * x);
}

/* e^-x - 1 + x, accurate for small x */
static double phi(double x) {
  if (x < 1e-3) {
    return x * x * (0.5 - x * (1.0 / 6.0 - x / 24.0));
  }
  return expm1(-x) + x;
}

double sens_avar_gm_discrete(double sigma, double corr_s, double dt, long m) {
  const double d = dt / corr_s, a = exp(-d), g = -expm1(-d);
  const double md = (double)m * d, gm = -expm1(-md);
  const double mm = (double)m;
  /* m·g - (1 - a^m) = φ(m·d) - m·φ(d), without cancellation */
  const double s = mm + 2.0 * a * (phi(md) - mm * phi(d)) / (g * g) - a * gm * gm / (g * g);
  return sigma * sigma * fmax(s, 0.0) / (mm * mm);
}

/* --- Allan variance -------------------------------------------------------------------------- */

double sens_allan_edf(size_t n, long m) {
  const double M = (double)n, mm = (double)m;
  const double e = (3.0 * (M - 1.0) / (2.0 * mm) - 2.0 * (M - 2.0) / M) * 4.0 * mm * mm /
                   (4.0 * mm * mm + 5.0);
  return fmax(e, 1.0);
}

int sens_allan(sens_allan_point *out, int max, const double *x, size_t n, double dt,
               double ratio) {
  if (n < 5 || max <= 0 || !(ratio >= 1.1)) {
    return 0;
  }
  double *S = malloc((n + 1) * sizeof *S);
  if (!S) {
    return 0;
  }
  /* cumulative sums of x - mean keep the cluster means accurate */
  double mean = 0.0;
  for (size_t i = 0; i < n; i++) {
    mean += x[i];
  }
  mean /= (double)n;
  S[0] = 0.0;
  for (size_t i = 0; i < n; i++) {
    S[i + 1] = S[i] + (x[i] - mean);
  }
  int k = 0;
  double mr = 1.0;
  for (long m = 1; k < max && (size_t)m * 5 <= n;) {
    const size_t last = n - 2 * (size_t)m; /* clusters j = 0..last */
    double sum = 0.0;
    for (size_t j = 0; j <= last; j++) {
      const double d = (S[j + 2 * m] - 2.0 * S[j + m] + S[j]) / (double)m;
      sum += d * d;
    }
    out[k].m = m;
    out[k].tau_s = (double)m * dt;
    out[k].avar = sum / (2.0 * (double)(last + 1));
    out[k].edf = sens_allan_edf(n, m);
    k++;
    while ((long)llround(mr) <= m) {
      mr *= ratio;
    }
    m = (long)llround(mr);
  }
  free(S);
  return k;
}

/* --- FFT, autocovariance, Welch PSD ---------------------------------------------------------- */

/* in-place radix-2 complex FFT of size n (a power of two); sign -1 forward, +1 inverse
 * (unnormalized) */
static void fft(double *re, double *im, size_t n, int sign) {
  for (size_t i = 1, j = 0; i < n; i++) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) {
      j ^= bit;
    }
    j ^= bit;
    if (i < j) {
      double t = re[i];
      re[i] = re[j];
      re[j] = t;
      t = im[i];
      im[i] = im[j];
      im[j] = t;
    }
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    const double ang = sign * 2.0 * FIT_PI / (double)len;
    for (size_t k = 0; k < len / 2; k++) {
      const double wr = cos(ang * (double)k), wi = sin(ang * (double)k);
      for (size_t i = k; i < n; i += len) {
        const size_t j = i + len / 2;
        const double xr = re[j] * wr - im[j] * wi, xi = re[j] * wi + im[j] * wr;
        re[j] = re[i] - xr;
        im[j] = im[i] - xi;
        re[i] += xr;
        im[i] += xi;
      }
    }
  }
}

int sens_autocov(double *r, long maxlag, const double *x, size_t n) {
  size_t p = 1;
  while (p < 2 * n) {
    p <<= 1;
  }
  double *re = calloc(2 * p, sizeof *re);
  if (!re) {
    return -1;
  }
  double *im = re + p;
  double mean = 0.0;
  for (size_t i = 0; i < n; i++) {
    mean += x[i];
  }
  mean /= (double)n;
  for (size_t i = 0; i < n; i++) {
    re[i] = x[i] - mean;
  }
  fft(re, im, p, -1);
  for (size_t i = 0; i < p; i++) {
    re[i] = re[i] * re[i] + im[i] * im[i];
    im[i] = 0.0;
  }
  fft(re, im, p, 1);
  for (long k = 0; k <= maxlag; k++) {
    r[k] = (size_t)k < n ? re[k] / ((double)p * (double)n) : 0.0;
  }
  free(re);
  return 0;
}

int sens_psd_welch(double *freq, double *psd, size_t seg, const double *x, size_t n,
                   double rate_hz) {
  if (seg < 16 || (seg & (seg - 1)) != 0 || n < seg) {
    return -1;
  }
  double *re = malloc(3 * seg * sizeof *re);
  if (!re) {
    return -1;
  }
  double *im = re + seg, *w = re + 2 * seg;
  double wss = 0.0;
  for (size_t i = 0; i < seg; i++) {
    w[i] = 0.5 - 0.5 * cos(2.0 * FIT_PI * (double)i / (double)seg); /* periodic Hann */
    wss += w[i] * w[i];
  }
  const size_t nb = seg / 2 + 1;
  for (size_t k = 0; k < nb; k++) {
    psd[k] = 0.0;
    freq[k] = (double)k * rate_hz / (double)seg;
  }
  int nseg = 0;
  for (size_t start = 0; start + seg <= n; start += seg / 2, nseg++) {
    double mean = 0.0;
    for (size_t i = 0; i < seg; i++) {
      mean += x[start + i];
    }
    mean /= (double)seg;
    for (size_t i = 0; i < seg; i++) {
      re[i] = (x[start + i] - mean) * w[i];
      im[i] = 0.0;
    }
    fft(re, im, seg, -1);
    for (size_t k = 0; k < nb; k++) {
      psd[k] += re[k] * re[k] + im[k] * im[k];
    }
  }
  for (size_t k = 0; k < nb; k++) {
    const double one_sided = (k == 0 || k == nb - 1) ? 1.0 : 2.0;
    psd[k] *= one_sided / (rate_hz * wss * (double)nseg);
  }
  free(re);
  return nseg;
}

double sens_lowpass1_gain2(double cutoff_hz, double rate_hz, double f) {
  const double a = exp(-2.0 * FIT_PI * cutoff_hz / rate_hz);
  const double w = 2.0 * FIT_PI * f / rate_hz;
  return (1.0 - a) * (1.0 - a) / (1.0 - 2.0 * a * cos(w) + a * a);
}

/* --- quantization ---------------------------------------------------------------------------- */

/* 1 when every difference d[i] is within 1% of a step of a whole multiple of q */
static int on_grid(const double *d, size_t n, double q) {
  for (size_t i = 0; i < n; i++) {
    const double k = d[i] / q;
    if (fabs(k - round(k)) > 0.01) {
      return 0;
    }
  }
  return 1;
}

double sens_quant_step(const double *x, size_t n, char *nt, size_t nt_sz) {
  if (n < 2) {
    snprintf(nt, nt_sz, "not enough data to estimate the quantization step (need >= 2 samples)");
    return 0.0;
  }
  double *v = malloc(n * sizeof *v);
  if (!v) {
    snprintf(nt, nt_sz, "out of memory");
    return 0.0;
  }
  memcpy(v, x, n * sizeof *v);
  qsort(v, n, sizeof *v, sens__cmp_double);
  const double maxabs = fmax(fabs(v[0]), fabs(v[n - 1]));
  const double tol = 64.0 * DBL_EPSILON * fmax(maxabs, DBL_MIN); /* rounding of k·q products */
  /* the differences between consecutive distinct values, in place */
  size_t nd = 0;
  double dmin = INFINITY;
  for (size_t i = 1; i < n; i++) {
    const double d = v[i] - v[i - 1];
    if (d > tol) {
      v[nd++] = d;
      dmin = fmin(dmin, d);
    }
  }
  if (nd == 0) {
    free(v);
    snprintf(nt, nt_sz,
             "all %zu values are equal: the noise is below the resolution, so the step cannot be "
             "estimated (it is larger than any variation seen)",
             n);
    return 0.0;
  }
  /* the largest step dmin/k (k = 1..64) on which every difference falls; then the least-squares
   * step over all differences, q = Σ k_i·d_i / Σ k_i² */
  double q = 0.0;
  for (int k = 1; k <= 64 && q == 0.0; k++) {
    if (dmin / k > 1e3 * tol && on_grid(v, nd, dmin / k)) {
      q = dmin / k;
    }
  }
  if (q > 0.0) {
    double skd = 0.0, skk = 0.0;
    for (size_t i = 0; i < nd; i++) {
      const double k = round(v[i] / q);
      skd += k * v[i];
      skk += k * k;
    }
    q = skd / skk;
  }
  free(v);
  if (q == 0.0) {
    snprintf(nt, nt_sz, "values are not on a grid (continuous or already filtered data)");
    return 0.0;
  }
  nt[0] = '\0';
  return q;
}

double sens_filter_gain2(int type, double cutoff_hz, double rate_hz, double f) {
  if (type == SENS_FILTER_NONE || !(cutoff_hz > 0)) {
    return 1.0;
  }
  sens_filter h;
  sens_filter_init(&h, (sens_filter_type)type, cutoff_hz, rate_hz);
  const double w = 2.0 * FIT_PI * f / rate_hz, c1 = cos(w), s1 = sin(w);
  const double c2 = cos(2.0 * w), s2 = sin(2.0 * w);
  const double nr = h.b0 + h.b1 * c1 + h.b2 * c2, ni = -h.b1 * s1 - h.b2 * s2;
  const double dr = 1.0 + h.a1 * c1 + h.a2 * c2, di = -h.a1 * s1 - h.a2 * s2;
  return (nr * nr + ni * ni) / (dr * dr + di * di);
}
