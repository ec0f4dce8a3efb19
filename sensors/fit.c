/* sensors/fit.c: noise parameters from a recorded series (method: sensors/fit.h and
 * docs/noise-fit.md). */
#include "sensors/fit.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIT_PI 3.14159265358979323846

/* The covariance of the Allan fit treats the points as independent; overlapping estimates at
 * √2-spaced cluster sizes are strongly correlated, so it underestimates. Factors measured by
 * Monte Carlo (30-40 seeds each, at L/T = 100, 500 and 5000, 10^5 samples; white 1e-4,
 * Gauss–Markov 2e-4): the spread of the estimates over the mean reported uncertainty was
 * 1.3-1.6 (white σ), 2.2-2.8 (Gauss–Markov σ) and 2.0-2.4 (τ). */
#define FIT_UNC_WHITE 1.5
#define FIT_UNC_GM 2.5
#define FIT_UNC_TAU 2.3

static void note(sens_fit_value *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(sens_fit_value *v, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v->note, sizeof v->note, fmt, ap);
  va_end(ap);
}

static void set_value(sens_fit_value *v, double value, double sigma) {
  v->value = value;
  v->sigma = sigma;
  v->ok = 1;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

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
  qsort(v, n, sizeof *v, cmp_double);
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

/* --- Allan fit -------------------------------------------------------------------------------- */

typedef struct allan_fit {
  double A, B, T; /* white variance (per sample, before the filter), GM variance, GM time */
  double fc;      /* low-pass cutoff of the model, Hz (0: none) */
  double ssr;     /* weighted residual sum */
} allan_fit;

/* Allan variance of unit white noise through the first-order low-pass of chain.h: the filtered
 * noise is an AR(1) process (coefficient b = e^{-2π·fc·dt}, stationary variance (1-b)/(1+b)),
 * whose Allan variance is the discrete Gauss–Markov closed form with T = 1/(2π·fc). */
static double avar_filtered_white(double fc, double dt, long m) {
  if (!(fc > 0)) {
    return 1.0 / (double)m;
  }
  const double d = 2.0 * FIT_PI * fc * dt, b = exp(-d);
  return sens_avar_gm_discrete(sqrt(-expm1(-d) / (1.0 + b)), 1.0 / (2.0 * FIT_PI * fc), dt, m);
}

/* Allan variance of unit-variance Gauss–Markov drift (correlation time T) through the same
 * low-pass: an AR(2) process with poles a = e^{-dt/T} and b = e^{-2π·fc·dt}, whose
 * autocovariance is C_a·a^k + C_b·b^k (partial fractions) with
 *   C_a = (1-b)²·a / ((a-b)(1-ab)),  C_b = -(1-b)(1-a²)·b / ((a-b)(1+b)(1-ab)),
 * so its Allan variance is the same combination of discrete Gauss–Markov forms. */
static double avar_filtered_gm(double T, double fc, double dt, long m) {
  if (!(fc > 0)) {
    return sens_avar_gm_discrete(1.0, T, dt, m);
  }
  const double tf = 1.0 / (2.0 * FIT_PI * fc);
  double a = exp(-dt / T);
  const double b = exp(-dt / tf);
  if (fabs(a - b) < 1e-9) {
    a = b + 1e-9; /* the double pole: the limit, to 1e-9 */
  }
  const double ca = (1 - b) * (1 - b) * a / ((a - b) * (1 - a * b));
  const double cb = -(1 - b) * (1 - a * a) * b / ((a - b) * (1 + b) * (1 - a * b));
  return ca * sens_avar_gm_discrete(1.0, T, dt, m) + cb * sens_avar_gm_discrete(1.0, tf, dt, m);
}

/* least squares of y ≈ A·u + B·v with weights w, A, B ≥ 0; returns the weighted SSR */
static double wls2(const double *y, const double *u, const double *v, const double *w, int n,
                   double *A, double *B) {
  double suu = 0, svv = 0, suv = 0, suy = 0, svy = 0;
  for (int i = 0; i < n; i++) {
    suu += w[i] * u[i] * u[i];
    svv += w[i] * v[i] * v[i];
    suv += w[i] * u[i] * v[i];
    suy += w[i] * u[i] * y[i];
    svy += w[i] * v[i] * y[i];
  }
  const double det = suu * svv - suv * suv;
  double a = det > 0 ? (suy * svv - svy * suv) / det : -1.0;
  double b = det > 0 ? (svy * suu - suy * suv) / det : -1.0;
  if (a < 0 || b < 0) {
    /* one component only: the better of the two */
    const double a1 = suu > 0 ? fmax(suy / suu, 0.0) : 0.0;
    const double b1 = svv > 0 ? fmax(svy / svv, 0.0) : 0.0;
    double s1 = 0, s2 = 0;
    for (int i = 0; i < n; i++) {
      s1 += w[i] * (y[i] - a1 * u[i]) * (y[i] - a1 * u[i]);
      s2 += w[i] * (y[i] - b1 * v[i]) * (y[i] - b1 * v[i]);
    }
    a = s1 <= s2 ? a1 : 0.0;
    b = s1 <= s2 ? 0.0 : b1;
  }
  double ssr = 0;
  for (int i = 0; i < n; i++) {
    const double e = y[i] - a * u[i] - b * v[i];
    ssr += w[i] * e * e;
  }
  *A = a;
  *B = b;
  return ssr;
}

typedef struct allan_work {
  const sens_allan_point *p;
  int n;
  double dt, qvar; /* sample period; quantization variance q²/12 (known, unfiltered) */
  double y[SENS_FIT_MAX_ALLAN], u[SENS_FIT_MAX_ALLAN], v[SENS_FIT_MAX_ALLAN];
  double w[SENS_FIT_MAX_ALLAN];
} allan_work;

static allan_fit allan_at(allan_work *k, double T, double fc) {
  allan_fit f = {0, 0, T, fc, 0};
  for (int i = 0; i < k->n; i++) {
    k->u[i] = avar_filtered_white(fc, k->dt, k->p[i].m);
    k->v[i] = avar_filtered_gm(T, fc, k->dt, k->p[i].m);
  }
  f.ssr = wls2(k->y, k->u, k->v, k->w, k->n, &f.A, &f.B);
  return f;
}

/* golden-section search of ln T (which = 0) or ln fc (which = 1) in [lo, hi], from best */
static allan_fit allan_golden(allan_work *k, allan_fit best, int which, double lo, double hi) {
  const double gr = 0.5 * (sqrt(5.0) - 1.0);
  double a = lo, b = hi;
  for (int it = 0; it < 40; it++) {
    const double c = b - gr * (b - a), d = a + gr * (b - a);
    const allan_fit fc = which ? allan_at(k, best.T, exp(c)) : allan_at(k, exp(c), best.fc);
    const allan_fit fd = which ? allan_at(k, best.T, exp(d)) : allan_at(k, exp(d), best.fc);
    if (fc.ssr < best.ssr) {
      best = fc;
    }
    if (fd.ssr < best.ssr) {
      best = fd;
    }
    if (fc.ssr < fd.ssr) {
      b = d;
    } else {
      a = c;
    }
  }
  return best;
}

/* best T on a log grid from 2·dt to tmax (and best fc on a grid from rate/1000 to Nyquist, plus
 * "no filter", unless fc_fixed ≥ 0), refined by golden-section searches */
static allan_fit allan_search(allan_work *k, double tmax, double fc_fixed) {
  const int gt = 81, gf = 41;
  const double tlo = log(2.0 * k->dt), thi = log(tmax);
  const double rate = 1.0 / k->dt, flo = log(rate / 1000.0), fhi = log(0.4999 * rate);
  allan_fit best = allan_at(k, exp(tlo), fc_fixed > 0 ? fc_fixed : 0.0);
  int ib = 0;
  for (int jf = fc_fixed >= 0 ? gf - 1 : -1; jf < gf; jf++) {
    const double fc = fc_fixed >= 0 ? fc_fixed : jf < 0 ? 0.0 : exp(flo + (fhi - flo) * jf / (gf - 1));
    for (int g = 0; g < gt; g++) {
      const allan_fit f = allan_at(k, exp(tlo + (thi - tlo) * g / (gt - 1)), fc);
      if (f.ssr < best.ssr) {
        best = f;
        ib = g;
      }
    }
  }
  const double st = (thi - tlo) / (gt - 1), sf = (fhi - flo) / (gf - 1);
  const double lt = tlo + st * (ib > 0 ? ib - 1 : 0), ht = tlo + st * (ib < gt - 1 ? ib + 1 : gt - 1);
  best = allan_golden(k, best, 0, lt, ht);
  if (fc_fixed < 0 && best.fc > 0) {
    const double lf = fmax(flo, log(best.fc) - sf), hf = fmin(fhi, log(best.fc) + sf);
    best = allan_golden(k, best, 1, lf, hf);
    best = allan_golden(k, best, 0, log(best.T) - st, fmin(thi, log(best.T) + st));
  }
  return allan_at(k, best.T, best.fc);
}

/* inverse of a symmetric positive 3×3 matrix; 0 on success */
static int inv3(double out[3][3], double M[3][3]) {
  const double c00 = M[1][1] * M[2][2] - M[1][2] * M[2][1];
  const double c01 = M[1][2] * M[2][0] - M[1][0] * M[2][2];
  const double c02 = M[1][0] * M[2][1] - M[1][1] * M[2][0];
  const double det = M[0][0] * c00 + M[0][1] * c01 + M[0][2] * c02;
  if (!(fabs(det) > 0)) {
    return -1;
  }
  out[0][0] = c00 / det;
  out[0][1] = (M[0][2] * M[2][1] - M[0][1] * M[2][2]) / det;
  out[0][2] = (M[0][1] * M[1][2] - M[0][2] * M[1][1]) / det;
  out[1][0] = c01 / det;
  out[1][1] = (M[0][0] * M[2][2] - M[0][2] * M[2][0]) / det;
  out[1][2] = (M[0][2] * M[1][0] - M[0][0] * M[1][2]) / det;
  out[2][0] = c02 / det;
  out[2][1] = (M[0][1] * M[2][0] - M[0][0] * M[2][1]) / det;
  out[2][2] = (M[0][0] * M[1][1] - M[0][1] * M[1][0]) / det;
  return 0;
}

/* covariance of (A, B, ln T) from the weighted Jacobian, scaled by max(1, χ²_red) */
static void allan_cov(allan_work *k, const allan_fit *f, double chi2_red, double cov[3][3]) {
  double M[3][3] = {{0}};
  const double h = 1e-4;
  for (int i = 0; i < k->n; i++) {
    const long m = k->p[i].m;
    const double u = avar_filtered_white(f->fc, k->dt, m);
    const double v = avar_filtered_gm(f->T, f->fc, k->dt, m);
    const double v1 = avar_filtered_gm(f->T * exp(h), f->fc, k->dt, m);
    const double v2 = avar_filtered_gm(f->T * exp(-h), f->fc, k->dt, m);
    const double J[3] = {u, v, f->B * (v1 - v2) / (2 * h)};
    for (int a = 0; a < 3; a++) {
      for (int b = 0; b < 3; b++) {
        M[a][b] += k->w[i] * J[a] * J[b];
      }
    }
  }
  memset(cov, 0, 9 * sizeof(double));
  const double s = fmax(1.0, chi2_red);
  if (f->B > 0 && inv3(cov, M) == 0) {
    for (int a = 0; a < 3; a++) {
      for (int b = 0; b < 3; b++) {
        cov[a][b] *= s;
      }
    }
  } else if (M[0][0] > 0) {
    cov[0][0] = s / M[0][0]; /* white only */
  }
}

/* the Allan fit in IRLS passes: weights edf/(2·model²) (the variance of an Allan variance
 * estimate with edf degrees of freedom is 2·AVAR²/edf) */
static allan_fit allan_fit_points(sens_fit_result *r, double dt, double q, double tmax,
                                  double fc_fixed, double cov[3][3]) {
  allan_work k;
  memset(&k, 0, sizeof k);
  k.p = r->allan;
  k.n = r->nallan;
  k.dt = dt;
  k.qvar = q * q / 12.0;
  for (int i = 0; i < k.n; i++) {
    k.y[i] = k.p[i].avar - k.qvar / (double)k.p[i].m; /* quantization: known white part */
    k.w[i] = k.p[i].edf / (2.0 * fmax(k.p[i].avar * k.p[i].avar, DBL_MIN));
  }
  allan_fit f = allan_search(&k, tmax, fc_fixed);
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < k.n; i++) {
      const long m = k.p[i].m;
      const double model = fmax(f.A * avar_filtered_white(f.fc, dt, m) +
                                    f.B * avar_filtered_gm(f.T, f.fc, dt, m) + k.qvar / (double)m,
                                DBL_MIN);
      k.w[i] = k.p[i].edf / (2.0 * model * model);
    }
    f = allan_search(&k, tmax, fc_fixed);
  }
  r->chi2_red = k.n > 3 ? f.ssr / (k.n - 3) : 0.0;
  allan_cov(&k, &f, r->chi2_red, cov);
  return f;
}

/* fc_fixed: < 0 to fit the cutoff too, 0 for no filter, > 0 a known cutoff */
static void fit_noise(sens_fit_result *r, const double *e, double dt, double fc_fixed) {
  const double L = r->duration_s;
  r->white_sigma = r->gm_sigma = r->gm_tau_s = (sens_fit_value){0};
  if (r->n < SENS_FIT_MIN_SAMPLES) {
    const char *fmt = "not enough data for the Allan deviation (need >= %d samples, have %zu)";
    note(&r->white_sigma, fmt, SENS_FIT_MIN_SAMPLES, r->n);
    note(&r->gm_sigma, fmt, SENS_FIT_MIN_SAMPLES, r->n);
    note(&r->gm_tau_s, fmt, SENS_FIT_MIN_SAMPLES, r->n);
    return;
  }
  r->nallan = sens_allan(r->allan, SENS_FIT_MAX_ALLAN, e, r->n, dt, sqrt(2.0));
  double cov[3][3];
  const double q = r->quant_step.ok ? r->quant_step.value : 0.0;
  const allan_fit f = allan_fit_points(r, dt, q, L, fc_fixed, cov);
  r->allan_fc = f.fc;
  r->allan_white_var = f.A;
  r->allan_gm_var = f.B;
  r->allan_gm_tau_s = f.T;
  r->white_total_sigma = sqrt(f.A + q * q / 12.0);
  if (f.A <= 0) {
    note(&r->white_sigma, q > 0 ? "no white noise detected beyond the quantization (q^2/12)"
                                : "no white noise detected");
  } else {
    set_value(&r->white_sigma, sqrt(f.A), FIT_UNC_WHITE * sqrt(cov[0][0]) / (2.0 * sqrt(f.A)));
    const double b = f.fc > 0 ? exp(-2.0 * FIT_PI * f.fc * dt) : 0.0;
    if (sqrt(f.A * (1.0 - b) / (1.0 + b)) < 0.5 * q) { /* the noise the quantizer sees */
      note(&r->white_sigma, "noise below half a quantization step: quantization is not white "
                            "here and this estimate is unreliable");
    }
  }
  /* Gauss–Markov: τ resolved by the record, and significant */
  const double sB = FIT_UNC_GM * sqrt(fmax(cov[1][1], 0.0));
  if (f.B <= 0) {
    note(&r->gm_sigma, "no Gauss-Markov drift detected");
    note(&r->gm_tau_s, "no Gauss-Markov drift detected");
    return;
  }
  if (f.T * SENS_FIT_TAU_RECORDS > L) {
    note(&r->gm_tau_s,
         "not enough data to estimate tau (need >= %.3g s, i.e. %g tau with tau >~ %.3g s; "
         "have %.3g s)",
         SENS_FIT_TAU_RECORDS * f.T, SENS_FIT_TAU_RECORDS, f.T, L);
    note(&r->gm_sigma, "not enough data: its tau is not resolved (record %.3g s)", L);
    return;
  }
  if (f.B < 3.0 * sB) {
    note(&r->gm_sigma, "no significant Gauss-Markov drift (sigma_GM < %.3g)", sqrt(f.B + 3.0 * sB));
    note(&r->gm_tau_s, "no significant Gauss-Markov drift");
    return;
  }
  if (f.T < 3.0 * dt) {
    note(&r->gm_tau_s, "tau below 3 sample periods: indistinguishable from white noise");
    note(&r->gm_sigma, "tau below 3 sample periods: indistinguishable from white noise");
    return;
  }
  set_value(&r->gm_sigma, sqrt(f.B), sB / (2.0 * sqrt(f.B)));
  set_value(&r->gm_tau_s, f.T, FIT_UNC_TAU * f.T * sqrt(fmax(cov[2][2], 0.0)));
}

/* --- τ from the autocovariance ---------------------------------------------------------------- */

static void fit_acf(sens_fit_result *r, const double *e, double dt, long k0) {
  if (!r->gm_tau_s.ok) {
    note(&r->tau_acf_s, "no Gauss-Markov drift to cross-check");
    return;
  }
  const long maxlag = (long)(r->n / 2);
  double *ac = malloc((size_t)(maxlag + 1) * sizeof *ac);
  if (!ac || sens_autocov(ac, maxlag, e, r->n) != 0 || k0 >= maxlag) {
    free(ac);
    note(&r->tau_acf_s, "autocovariance not available");
    return;
  }
  const double target = ac[k0] / exp(1.0);
  long k = k0;
  while (k < maxlag && ac[k] > target) {
    k++;
  }
  if (k >= maxlag || k == k0) {
    note(&r->tau_acf_s, "the autocovariance does not fall to 1/e within the record");
  } else {
    /* linear interpolation between lags k-1 and k */
    const double frac = (ac[k - 1] - target) / (ac[k - 1] - ac[k]);
    const double tau = ((double)(k - 1 - k0) + frac) * dt;
    /* the estimate's spread: ≈ τ·√(2τ/L) (one decorrelation per 2τ) */
    set_value(&r->tau_acf_s, tau, tau * sqrt(2.0 * tau / r->duration_s));
  }
  free(ac);
}

/* --- low-pass cutoff from the PSD -------------------------------------------------------------- */

typedef struct psd_fit {
  double fc, P0, Pf, ssr;
} psd_fit;

/* P ≈ |H(f; fc)|²·(P0 + G(f)) + Pf: white level P0 (fitted), the drift's spectrum G fixed from
 * the Allan fit, the floor Pf fixed (the quantization's white noise, added after the filter);
 * fc = 0: no filter. Weights 1/model² (Welch bins have a constant relative variance),
 * iterated. */
static psd_fit psd_at(double fc, double Pf, const double *f, const double *P, const double *G,
                      int n, double rate, double *u, double *w) {
  psd_fit out = {fc, 0, Pf, 0};
  for (int i = 0; i < n; i++) {
    u[i] = fc > 0 ? sens_lowpass1_gain2(fc, rate, f[i]) : 1.0;
    w[i] = 1.0 / (P[i] * P[i]);
  }
  for (int pass = 0; pass < 3; pass++) {
    double suu = 0, suy = 0;
    for (int i = 0; i < n; i++) {
      suu += w[i] * u[i] * u[i];
      suy += w[i] * u[i] * (P[i] - Pf - u[i] * G[i]);
    }
    out.P0 = fmax(suy / suu, 0.0);
    out.ssr = 0;
    for (int i = 0; i < n; i++) {
      const double model = fmax(u[i] * (out.P0 + G[i]) + Pf, DBL_MIN);
      out.ssr += w[i] * (P[i] - model) * (P[i] - model);
      w[i] = 1.0 / (model * model);
    }
  }
  return out;
}

static void fit_cutoff(sens_fit_result *r, const double *e, double dt) {
  const double rate = r->rate_hz;
  size_t seg = 16;
  while (seg * 2 <= 4096 && seg * 2 * 4 <= r->n) {
    seg *= 2;
  }
  if (r->n < 4 * 64) {
    note(&r->cutoff_hz, "not enough data for a spectrum (need >= 256 samples, have %zu)", r->n);
    return;
  }
  r->npsd = seg / 2 + 1;
  r->psd_f = malloc(r->npsd * sizeof *r->psd_f);
  r->psd = malloc(r->npsd * sizeof *r->psd);
  const int nseg = r->psd_f && r->psd ? sens_psd_welch(r->psd_f, r->psd, seg, e, r->n, rate) : -1;
  if (nseg < 0) {
    r->npsd = 0;
    note(&r->cutoff_hz, "out of memory");
    return;
  }
  double *buf = malloc(5 * r->npsd * sizeof *buf);
  if (!buf) {
    note(&r->cutoff_hz, "out of memory");
    return;
  }
  double *f = buf, *P = buf + r->npsd, *u = buf + 2 * r->npsd, *w = buf + 3 * r->npsd;
  double *G = buf + 4 * r->npsd;
  const double q = r->quant_step.ok ? r->quant_step.value : 0.0;
  const double pq = 2.0 * dt * q * q / 12.0; /* one-sided PSD of the quantization noise */
  int n = 0;
  for (size_t i = 1; i < r->npsd; i++) {
    /* one-sided spectrum of the fitted drift (AR(1)) before the filter */
    const double om = 2.0 * FIT_PI * r->psd_f[i] / rate;
    G[n] = 0.0;
    if (r->allan_gm_var > 0) {
      const double a = exp(-dt / r->allan_gm_tau_s);
      G[n] = 2.0 * dt * r->allan_gm_var * (1 - a * a) / (1 - 2 * a * cos(om) + a * a);
    }
    if (r->psd[i] > 0) {
      f[n] = r->psd_f[i];
      P[n] = r->psd[i];
      n++;
    }
  }
  if (n < 16) {
    note(&r->cutoff_hz, "not enough spectrum to see a low-pass (%d bins)", n);
    free(buf);
    return;
  }
  /* χ² = segments · Σ ((P - model)/model)²: each Welch bin has relative variance 1/segments */
  const double keff = nseg;
  const psd_fit flat = psd_at(0.0, 0.0, f, P, G, n, rate, u, w);
  const int grid = 240;
  const double lo = log(f[0]), hi = log(0.5 * rate);
  psd_fit best = flat;
  double chi[240], fcs[240];
  for (int g = 0; g < grid; g++) {
    fcs[g] = exp(lo + (hi - lo) * g / (grid - 1)) * (g == grid - 1 ? 0.999 : 1.0);
    const psd_fit p = psd_at(fcs[g], pq, f, P, G, n, rate, u, w);
    chi[g] = keff * p.ssr;
    if (p.ssr < best.ssr || best.fc == 0.0) {
      best = p;
    }
  }
  r->psd_level = best.P0;
  r->psd_floor = best.Pf;
  double fc_lo = best.fc, fc_hi = best.fc;
  for (int g = 0; g < grid; g++) {
    if (chi[g] <= keff * best.ssr + 1.0) {
      fc_lo = fc_lo < fcs[g] ? fc_lo : fcs[g];
      fc_hi = fc_hi > fcs[g] ? fc_hi : fcs[g];
    }
  }
  const double gain_top = sens_lowpass1_gain2(best.fc, rate, f[n - 1]);
  const double improvement = keff * (flat.ssr - best.ssr);
  const double ftop = f[n - 1];
  free(buf);
  if (best.fc > 0.4 * rate || gain_top > 0.7 || improvement < 25.0) {
    r->psd_level = flat.P0;
    r->psd_floor = 0.0;
    note(&r->cutoff_hz,
         "no low-pass seen: the spectrum is flat up to %.4g Hz (a cutoff, if any, is above "
         "~%.3g Hz, or the white noise is too small to show it)",
         ftop, fc_lo);
    return;
  }
  if (best.P0 < 2.0 * pq) {
    note(&r->cutoff_hz, "white noise too small against the flat floor (quantization) to see "
                        "the low-pass");
    return;
  }
  set_value(&r->cutoff_hz, best.fc, fmax(0.5 * (fc_hi - fc_lo), best.fc * 0.5 * (hi - lo) / grid));
}

/* --- regression against the reference ------------------------------------------------------------ */

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

static void fit_reference(sens_fit_result *r, const double *x, const double *ref0, double *e) {
  if (!ref0) {
    double mean = 0.0;
    for (size_t i = 0; i < r->n; i++) {
      mean += x[i];
    }
    mean /= (double)r->n;
    for (size_t i = 0; i < r->n; i++) {
      e[i] = x[i] - mean;
    }
    note(&r->scale_error, "needs a reference (--reference)");
    note(&r->offset, "needs a reference (--reference)");
    return;
  }
  /* a lagging measurement is regressed on the reference through the fitted low-pass */
  double *tmp = malloc(r->n * sizeof *tmp);
  const double *ref = ref0;
  r->ref_cutoff_hz = tmp && r->n >= SENS_FIT_MIN_SAMPLES ? ref_cutoff(x, ref0, tmp, r->n, r->rate_hz) : 0.0;
  if (r->ref_cutoff_hz > 0) {
    lowpass(tmp, ref0, r->n, r->ref_cutoff_hz, r->rate_hz);
    ref = tmp;
  }
  double slope, icpt;
  const int moving = ols(x, ref, 0, r->n, &slope, &icpt) == 0;
  for (size_t i = 0; i < r->n; i++) {
    e[i] = x[i] - icpt - slope * ref[i];
  }
  /* spread over 10 consecutive blocks */
  const int K = 10;
  double ss = 0, si = 0, ss2 = 0, si2 = 0;
  int used = 0, used_i = 0;
  for (int b = 0; b < K && r->n >= 20; b++) {
    double s1, c1;
    const int ok = ols(x, ref, r->n * (size_t)b / K, r->n * (size_t)(b + 1) / K, &s1, &c1) == 0;
    if (ok) {
      ss += s1;
      ss2 += s1 * s1;
      used++;
    }
    si += c1;
    si2 += c1 * c1;
    used_i++;
  }
  const double sd_s = used >= 3 ? sqrt(fmax(ss2 / used - (ss / used) * (ss / used), 0.0) *
                                       used / (used - 1.0) / used)
                                : NAN;
  const double sd_i = used_i >= 3 ? sqrt(fmax(si2 / used_i - (si / used_i) * (si / used_i), 0.0) *
                                         used_i / (used_i - 1.0) / used_i)
                                  : NAN;
  /* a reference that barely moves cannot separate scale from drift: then the scale is not
   * reported and the offset is the mean difference, at unit scale */
  const int scale_ok = moving && used >= 3 && sd_s <= SENS_FIT_MAX_SCALE_SIGMA;
  if (scale_ok) {
    set_value(&r->scale_error, slope - 1.0, sd_s);
  } else if (moving && used >= 3) {
    note(&r->scale_error,
         "the reference moves too little to tell scale from drift (block-to-block spread %.2g); "
         "record a motion over a wider range",
         sd_s);
  } else {
    note(&r->scale_error, moving ? "not enough data (need >= 20 samples with a moving reference)"
                                 : "the reference does not move: the scale needs motion");
  }
  if (used_i >= 3 && scale_ok) {
    set_value(&r->offset, icpt, sd_i);
    note(&r->offset, "includes any constant bias and turn-on bias");
  } else if (used_i >= 3) {
    double mean = 0, bm = 0, bm2 = 0;
    for (size_t i = 0; i < r->n; i++) {
      mean += x[i] - ref[i];
    }
    for (int b = 0; b < K; b++) {
      double m = 0;
      size_t lo = r->n * (size_t)b / K, hi = r->n * (size_t)(b + 1) / K;
      for (size_t i = lo; i < hi; i++) {
        m += x[i] - ref[i];
      }
      m /= (double)(hi - lo);
      bm += m, bm2 += m * m;
    }
    bm /= K;
    set_value(&r->offset, mean / (double)r->n, sqrt(fmax(bm2 / K - bm * bm, 0.0) / (K - 1.0)));
    note(&r->offset, "mean difference at unit scale; includes any constant and turn-on bias");
  } else {
    note(&r->offset, "not enough data (need >= 20 samples)");
  }
  free(tmp);
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
  qsort(dt, r->n - 1, sizeof *dt, cmp_double);
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
    set_value(&r->quant_step, q, 0.0);
  }
  fit_reference(r, x, ref, e);
  /* Allan fit with a cutoff free; then the spectrum's cutoff, and when it finds one, the final
   * Allan fit with that cutoff (otherwise the free fit stands) */
  fit_noise(r, e, dt, -1.0);
  fit_cutoff(r, e, dt);
  if (!r->cutoff_hz.ok && r->ref_cutoff_hz > 0) {
    /* the spectrum could not tell, the reference's lag could */
    char why[SENS_FIT_NOTE_MAX];
    snprintf(why, sizeof why, "%s", r->cutoff_hz.note);
    set_value(&r->cutoff_hz, r->ref_cutoff_hz, NAN); /* no uncertainty from this method */
    note(&r->cutoff_hz, "from the lag behind the reference (the spectrum: %.120s)", why);
  }
  if (r->cutoff_hz.ok) {
    fit_noise(r, e, dt, r->cutoff_hz.value);
  }
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

double sens_fit_model_avar(const sens_fit_result *r, double tau_s, double *white, double *quant,
                           double *gm) {
  const double dt = 1.0 / r->rate_hz;
  const double q = r->quant_step.ok ? r->quant_step.value : 0.0;
  const long m = (long)llround(tau_s / dt) < 1 ? 1 : (long)llround(tau_s / dt);
  const double sw = r->white_sigma.ok ? r->white_sigma.value : 0.0;
  const double w = sw * sw * avar_filtered_white(r->allan_fc, dt, m);
  const double qv = q > 0 ? sens_avar_white(q / sqrt(12.0), dt, tau_s) : 0.0;
  const double g = r->gm_sigma.ok ? r->gm_sigma.value * r->gm_sigma.value *
                                        avar_filtered_gm(r->gm_tau_s.value, r->allan_fc, dt, m)
                                  : 0.0;
  if (white) {
    *white = w;
  }
  if (quant) {
    *quant = qv;
  }
  if (gm) {
    *gm = g;
  }
  return w + qv + g;
}
