/* sensors/fit.c: noise parameters from a recorded series (method: sensors/fit.h and
 * docs/noise-fit.md). */
#include "sensors/fit.h"

#include "sensors/filter.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIT_PI 3.14159265358979323846


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

/* the Allan fit in IRLS passes: weights edf/(2·model²) (the variance of an Allan variance
 * estimate with edf degrees of freedom is 2·AVAR²/edf) */
static allan_fit allan_fit_points(sens_fit_result *r, double dt, double q, double tmax,
                                  double fc_fixed) {
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
  return f;
}

/* --- maximum likelihood of the noise models (Kalman filter) ------------------------------------ */

/* The residual e[k] is modelled as the chain's noise: a Gauss–Markov drift g (AR(1), a =
 * e^{-dt/T}) plus white noise w, both through the chain's filter (none, first order or
 * Butterworth, with the coefficients of sensors/filter.c), plus the quantization (white,
 * variance R = q²/12, after the filter). As a state space, with state z = (g, y, s1, s2) (the
 * drift, the filter's output and its two transposed-direct-form states) and u = g + w:
 *   g_k  = a·g_{k-1} + η_k
 *   y_k  = b0·u_k + s1_{k-1}
 *   s1_k = (b1 - a1·b0)·u_k - a1·s1_{k-1} + s2_{k-1}
 *   s2_k = (b2 - a2·b0)·u_k - a2·s1_{k-1},          e_k = y_k + v_k.
 * The Kalman filter's innovations give the exact Gaussian likelihood (the state starts from
 * its stationary covariance); once its gain has converged the steady-state gain is used. */

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

static void mat4_mul(double out[4][4], double A[4][4], double B[4][4]) {
  double t[4][4];
  for (int i = 0; i < 4; i++) {
    for (int j = 0; j < 4; j++) {
      double s = 0.0;
      for (int k = 0; k < 4; k++) {
        s += A[i][k] * B[k][j];
      }
      t[i][j] = s;
    }
  }
  memcpy(out, t, sizeof t);
}

/* A·P·Aᵀ */
static void mat4_sandwich(double out[4][4], double A[4][4], double P[4][4]) {
  double t[4][4], At[4][4];
  for (int i = 0; i < 4; i++) {
    for (int j = 0; j < 4; j++) {
      At[i][j] = A[j][i];
    }
  }
  mat4_mul(t, A, P);
  mat4_mul(out, t, At);
}

/* F, Q and the stationary covariance P0 = Σ F^k Q F^kᵀ (by doubling) of a model at θ */
static void ml_state(ml_ss *s, const ml_data *d, int gm, sens_filter_type ft, const double *th) {
  const double sw2 = exp(th[ML_W]);
  const double sg2 = gm ? exp(th[ML_G]) : 0.0;
  const double a = gm ? exp(-d->dt / exp(th[ML_T])) : 0.0;
  sens_filter f;
  sens_filter_init(&f, ft, ft != SENS_FILTER_NONE ? exp(th[ML_F]) : 1.0, 1.0 / d->dt);
  const double c1 = f.b1 - f.a1 * f.b0, c2 = f.b2 - f.a2 * f.b0;
  const double G[4] = {0.0, f.b0, c1, c2}; /* how u enters (g enters u through a·g_{k-1}) */
  memset(s, 0, sizeof *s);
  s->F[0][0] = a;
  s->F[1][0] = f.b0 * a;
  s->F[1][2] = 1.0;
  s->F[2][0] = c1 * a;
  s->F[2][2] = -f.a1;
  s->F[2][3] = 1.0;
  s->F[3][0] = c2 * a;
  s->F[3][2] = -f.a2;
  /* noise: η (variance σ_GM²(1-a²)) enters g and u; w (σ_w²) enters u */
  const double qe = sg2 * -expm1(-2.0 * d->dt / exp(th[ML_T]));
  const double Ge[4] = {1.0, G[1], G[2], G[3]};
  for (int i = 0; i < 4; i++) {
    for (int j = 0; j < 4; j++) {
      s->Q[i][j] = (gm ? Ge[i] * Ge[j] * qe : 0.0) + G[i] * G[j] * sw2;
    }
  }
  double P[4][4], A[4][4], t[4][4];
  memcpy(P, s->Q, sizeof P);
  memcpy(A, s->F, sizeof A);
  for (int it = 0; it < 64; it++) {
    mat4_sandwich(t, A, P);
    double amax = 0.0;
    for (int i = 0; i < 4; i++) {
      for (int j = 0; j < 4; j++) {
        P[i][j] += t[i][j];
      }
    }
    mat4_mul(A, A, A);
    for (int i = 0; i < 4; i++) {
      for (int j = 0; j < 4; j++) {
        amax = fmax(amax, fabs(A[i][j]));
      }
    }
    if (amax < 1e-17) {
      break;
    }
  }
  memcpy(s->P0, P, sizeof P);
}

/* negative log-likelihood of e under the model at θ (INFINITY outside the bounds) */
static double ml_nll(ml_data *d, int gm, sens_filter_type ft, const double *th) {
  for (int i = 0; i < ML_NP; i++) {
    const int used = i == ML_W || (gm && (i == ML_G || i == ML_T)) ||
                     (ft != SENS_FILTER_NONE && i == ML_F);
    if (used && !(th[i] >= d->lo[i] && th[i] <= d->hi[i])) {
      return INFINITY;
    }
  }
  d->evals++;
  ml_ss s;
  ml_state(&s, d, gm, ft, th);
  double P[4][4], Pp[4][4], z[4] = {0, 0, 0, 0}, K[4] = {0, 0, 0, 0};
  memcpy(Pp, s.P0, sizeof Pp);
  double nll = 0.0, S = 0.0, S_prev = -1.0;
  size_t k = 0;
  /* time-varying filter until the gain converges */
  for (; k < d->n; k++) {
    if (k > 0) {
      mat4_sandwich(Pp, s.F, P);
      for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) {
          Pp[i][j] += s.Q[i][j];
        }
      }
      double zp[4];
      for (int i = 0; i < 4; i++) {
        zp[i] = s.F[i][0] * z[0] + s.F[i][1] * z[1] + s.F[i][2] * z[2] + s.F[i][3] * z[3];
      }
      memcpy(z, zp, sizeof z);
    }
    S = Pp[1][1] + d->R;
    if (!(S > 0)) {
      return INFINITY;
    }
    const double nu = d->e[k] - z[1];
    nll += 0.5 * (log(S) + nu * nu / S);
    for (int i = 0; i < 4; i++) {
      K[i] = Pp[i][1] / S;
      z[i] += K[i] * nu;
    }
    for (int i = 0; i < 4; i++) {
      for (int j = 0; j < 4; j++) {
        P[i][j] = Pp[i][j] - K[i] * Pp[1][j];
      }
    }
    /* converged (to rounding); a model whose spectrum has a zero on the unit circle (the
     * Butterworth's at Nyquist, without quantization) converges only as 1/k: its gain after
     * 2048 samples is used */
    if (fabs(S - S_prev) <= 1e-12 * S || k >= 2048) {
      k++;
      break;
    }
    S_prev = S;
  }
  /* steady state: fixed gain K and innovation variance S */
  const size_t k_ss = k;
  const double f00 = s.F[0][0], f10 = s.F[1][0], f20 = s.F[2][0], f22 = s.F[2][2];
  const double f30 = s.F[3][0], f32 = s.F[3][2];
  double z0 = z[0], z2 = z[2], z3 = z[3], ss = 0.0;
  for (; k < d->n; k++) {
    const double y = f10 * z0 + z2, s1 = f20 * z0 + f22 * z2 + z3, s2 = f30 * z0 + f32 * z2;
    const double nu = d->e[k] - y;
    ss += nu * nu;
    z0 = f00 * z0 + K[0] * nu;
    z2 = s1 + K[2] * nu;
    z3 = s2 + K[3] * nu;
  }
  return nll + 0.5 * (ss / S + log(S) * (double)(d->n - k_ss)) +
         0.5 * (double)d->n * log(2.0 * FIT_PI);
}

/* the model's nll with only its free parameters varied */
static double ml_eval(ml_data *d, const ml_model *m, const double *x) {
  double th[ML_NP];
  memcpy(th, m->th, sizeof th);
  for (int i = 0, j = 0; i < ML_NP; i++) {
    if (m->free[i]) {
      th[i] = x[j++];
    }
  }
  return ml_nll(d, m->gm, m->filter, th);
}

/* Nelder–Mead on the free parameters from m->th (steps of 0.7 in the logarithms), until the
 * simplex's nll spread is below 1e-4 and its size below 1e-5, or 300·k evaluations */
static void ml_minimize(ml_data *d, ml_model *m) {
  const int k = m->k;
  double X[ML_NP + 1][ML_NP] = {{0}}, f[ML_NP + 1] = {0};
  for (int v = 0; v <= k; v++) {
    for (int i = 0, j = 0; i < ML_NP; i++) {
      if (m->free[i]) {
        X[v][j] = m->th[i] + (v == j + 1 ? 0.7 : 0.0);
        j++;
      }
    }
    f[v] = ml_eval(d, m, X[v]);
  }
  for (int it = 0; it < 100 * k; it++) {
    int lo = 0, hi = 0, nh = 0;
    for (int v = 0; v <= k; v++) {
      lo = f[v] < f[lo] ? v : lo;
      hi = f[v] > f[hi] ? v : hi;
    }
    nh = hi == 0 ? 1 : 0;
    for (int v = 0; v <= k; v++) {
      nh = (v != hi && f[v] > f[nh]) ? v : nh;
    }
    double size = 0.0;
    for (int v = 0; v <= k; v++) {
      for (int j = 0; j < k; j++) {
        size = fmax(size, fabs(X[v][j] - X[lo][j]));
      }
    }
    if (f[hi] - f[lo] < 1e-3 && size < 3e-3) {
      break;
    }
    double c[ML_NP] = {0}, xr[ML_NP], xe[ML_NP];
    for (int v = 0; v <= k; v++) {
      for (int j = 0; j < k && v != hi; j++) {
        c[j] += X[v][j] / k;
      }
    }
    for (int j = 0; j < k; j++) {
      xr[j] = c[j] + (c[j] - X[hi][j]);
    }
    const double fr = ml_eval(d, m, xr);
    if (fr < f[lo]) {
      for (int j = 0; j < k; j++) {
        xe[j] = c[j] + 2.0 * (c[j] - X[hi][j]);
      }
      const double fe = ml_eval(d, m, xe);
      memcpy(X[hi], fe < fr ? xe : xr, sizeof xr);
      f[hi] = fmin(fe, fr);
    } else if (fr < f[nh]) {
      memcpy(X[hi], xr, sizeof xr);
      f[hi] = fr;
    } else {
      const int outside = fr < f[hi];
      for (int j = 0; j < k; j++) {
        xe[j] = outside ? c[j] + 0.5 * (xr[j] - c[j]) : c[j] + 0.5 * (X[hi][j] - c[j]);
      }
      const double fc = ml_eval(d, m, xe);
      if (fc < (outside ? fr : f[hi])) {
        memcpy(X[hi], xe, sizeof xe);
        f[hi] = fc;
      } else { /* shrink towards the best */
        for (int v = 0; v <= k; v++) {
          if (v != lo) {
            for (int j = 0; j < k; j++) {
              X[v][j] = X[lo][j] + 0.5 * (X[v][j] - X[lo][j]);
            }
            f[v] = ml_eval(d, m, X[v]);
          }
        }
      }
    }
  }
  int lo = 0;
  for (int v = 0; v <= k; v++) {
    lo = f[v] < f[lo] ? v : lo;
  }
  for (int i = 0, j = 0; i < ML_NP; i++) {
    if (m->free[i]) {
      m->th[i] = X[lo][j++];
    }
  }
  m->nll = f[lo];
}

/* inverse of a symmetric k×k matrix by Gauss–Jordan with pivoting; 0 on success */
static int ml_invert(double out[ML_NP][ML_NP], double A[ML_NP][ML_NP], int k) {
  double M[ML_NP][2 * ML_NP];
  for (int i = 0; i < k; i++) {
    for (int j = 0; j < k; j++) {
      M[i][j] = A[i][j];
      M[i][k + j] = i == j;
    }
  }
  for (int c = 0; c < k; c++) {
    int p = c;
    for (int i = c + 1; i < k; i++) {
      p = fabs(M[i][c]) > fabs(M[p][c]) ? i : p;
    }
    if (!(fabs(M[p][c]) > 0)) {
      return -1;
    }
    for (int j = 0; j < 2 * k; j++) {
      const double t = M[c][j];
      M[c][j] = M[p][j];
      M[p][j] = t;
    }
    const double piv = M[c][c];
    for (int j = 0; j < 2 * k; j++) {
      M[c][j] /= piv;
    }
    for (int i = 0; i < k; i++) {
      if (i != c) {
        const double fct = M[i][c];
        for (int j = 0; j < 2 * k; j++) {
          M[i][j] -= fct * M[c][j];
        }
      }
    }
  }
  for (int i = 0; i < k; i++) {
    for (int j = 0; j < k; j++) {
      out[i][j] = M[i][k + j];
    }
  }
  return 0;
}

/* covariance of the free θ: the inverse of the nll's Hessian (central differences); fills
 * m->cov for the free indices, cov_ok = 0 when it is not positive definite */
static void ml_covariance(ml_data *d, ml_model *m) {
  const int k = m->k;
  const double h = 0.01;
  double x0[ML_NP], H[ML_NP][ML_NP], C[ML_NP][ML_NP];
  int idx[ML_NP];
  for (int i = 0, j = 0; i < ML_NP; i++) {
    if (m->free[i]) {
      idx[j] = i;
      x0[j++] = m->th[i];
    }
  }
  const double f0 = ml_eval(d, m, x0);
  for (int a = 0; a < k; a++) {
    for (int b = a; b < k; b++) {
      double x[ML_NP];
      if (a == b) {
        memcpy(x, x0, sizeof x);
        x[a] = x0[a] + h;
        const double fp = ml_eval(d, m, x);
        x[a] = x0[a] - h;
        const double fm = ml_eval(d, m, x);
        H[a][a] = (fp - 2.0 * f0 + fm) / (h * h);
        continue;
      }
      double s = 0.0;
      for (int sa = -1; sa <= 1; sa += 2) {
        for (int sb = -1; sb <= 1; sb += 2) {
          memcpy(x, x0, sizeof x);
          x[a] += sa * h;
          x[b] += sb * h;
          s += sa * sb * ml_eval(d, m, x);
        }
      }
      H[a][b] = H[b][a] = s / (4.0 * h * h);
    }
  }
  memset(m->cov, 0, sizeof m->cov);
  m->cov_ok = ml_invert(C, H, k) == 0;
  for (int a = 0; a < k && m->cov_ok; a++) {
    m->cov_ok = isfinite(C[a][a]) && C[a][a] > 0;
  }
  for (int a = 0; a < k && m->cov_ok; a++) {
    for (int b = 0; b < k; b++) {
      m->cov[idx[a]][idx[b]] = C[a][b];
    }
  }
}

static void ml_model_init(ml_model *m, int gm, sens_filter_type ft) {
  memset(m, 0, sizeof *m);
  m->gm = gm;
  m->filter = ft;
  m->free[ML_W] = 1;
  m->free[ML_G] = m->free[ML_T] = gm;
  m->free[ML_F] = ft != SENS_FILTER_NONE;
  m->k = 1 + 2 * gm + (ft != SENS_FILTER_NONE);
}

/* from the best of ns starting points (clamped into the bounds), then Nelder–Mead and the
 * covariance; the BIC = 2·nll + k·ln n */
static void ml_fit(ml_data *d, ml_model *m, double (*starts)[ML_NP], int ns) {
  double best = INFINITY;
  for (int s = 0; s < ns; s++) {
    for (int i = 0; i < ML_NP; i++) {
      starts[s][i] = fmin(fmax(starts[s][i], d->lo[i] + 1e-3), d->hi[i] - 1e-3);
    }
    const double f = ml_nll(d, m->gm, m->filter, starts[s]);
    if (f < best || s == 0) {
      best = f;
      memcpy(m->th, starts[s], sizeof m->th);
    }
  }
  ml_minimize(d, m);
  m->bic = 2.0 * m->nll + m->k * log((double)d->n);
  ml_covariance(d, m);
}

/* variance of the filter's output for unit white input */
static double ml_filter_gain(const ml_data *d, sens_filter_type ft, double fc) {
  ml_ss s;
  const double th[ML_NP] = {0.0, 0.0, 0.0, log(fc)};
  ml_state(&s, d, 0, ft, th);
  return s.P0[1][1];
}

enum { ML_NMODELS = 6 };

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
  ml_model_init(&models[0], 0, SENS_FILTER_NONE);
  st[0][ML_W] = w0;
  ml_fit(d, &models[0], st, 1);
  /* white + drift */
  ml_model_init(&models[1], 1, SENS_FILTER_NONE);
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
  ml_fit(d, &models[1], st, ns);
  /* white through a filter, and with a drift: cutoffs on a log grid */
  for (int t = 0; t < 2; t++) {
    const sens_filter_type ft = t ? SENS_FILTER_BUTTERWORTH2 : SENS_FILTER_FIRST_ORDER;
    ml_model *mf = &models[2 + 2 * t], *mg = &models[3 + 2 * t];
    ml_model_init(mf, 0, ft);
    ml_model_init(mg, 1, ft);
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
      st[ns][ML_W] = log(fmax(v - d->R, 1e-3 * v) / ml_filter_gain(d, ft, exp(st[ns][ML_F])));
    }
    ml_fit(d, mf, st, ns);
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
    ml_fit(d, mg, st, ns);
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
    note(&r->gm_sigma, "no Gauss-Markov drift: the models with one have a higher BIC (by %.3g)", d);
    note(&r->gm_tau_s, "no Gauss-Markov drift");
    return;
  }
  const double T = exp(m->th[ML_T]);
  if (T * SENS_FIT_TAU_RECORDS > L) {
    note(&r->gm_tau_s,
         "not enough data to estimate tau (need >= %.3g s, i.e. %g tau with tau >~ %.3g s; "
         "have %.3g s)",
         SENS_FIT_TAU_RECORDS * T, SENS_FIT_TAU_RECORDS, T, L);
    note(&r->gm_sigma, "not enough data: its tau is not resolved (record %.3g s)", L);
    return;
  }
  if (T < 3.0 * dt) {
    note(&r->gm_tau_s, "tau below 3 sample periods: indistinguishable from white noise");
    note(&r->gm_sigma, "tau below 3 sample periods: indistinguishable from white noise");
    return;
  }
  const double sg = exp(0.5 * m->th[ML_G]);
  set_value(&r->gm_sigma, sg, m->cov_ok ? 0.5 * sg * sqrt(m->cov[ML_G][ML_G]) : NAN);
  set_value(&r->gm_tau_s, T, m->cov_ok ? T * sqrt(m->cov[ML_T][ML_T]) : NAN);
}

/* the chosen model's white noise and filter */
static void report_white_filter(sens_fit_result *r, const ml_model *m, const ml_data *d) {
  const double q = r->quant_step.ok ? r->quant_step.value : 0.0;
  const double sw = exp(0.5 * m->th[ML_W]);
  if (m->th[ML_W] < d->lo[ML_W] + 1.0) {
    note(&r->white_sigma, q > 0 ? "no white noise detected beyond the quantization (q^2/12)"
                                : "no white noise detected");
  } else {
    set_value(&r->white_sigma, sw, m->cov_ok ? 0.5 * sw * sqrt(m->cov[ML_W][ML_W]) : NAN);
    const double gain = m->filter ? ml_filter_gain(d, m->filter, exp(m->th[ML_F])) : 1.0;
    if (sw * sqrt(gain) < 0.5 * q) { /* the noise the quantizer sees */
      note(&r->white_sigma, "noise below half a quantization step: quantization is not white "
                            "here and this estimate is unreliable");
    }
  }
  if (m->filter == SENS_FILTER_NONE) {
    const double dbic = best_bic_where(r, 0, 1) - best_bic_where(r, 0, 0);
    note(&r->cutoff_hz, "no low-pass seen: the models with one have a higher BIC (by %.3g)", dbic);
    return;
  }
  const double fc = exp(m->th[ML_F]);
  set_value(&r->cutoff_hz, fc, m->cov_ok ? fc * sqrt(m->cov[ML_F][ML_F]) : NAN);
  note(&r->cutoff_hz, "%s", filter_label(m->filter));
}

/* White σ, Gauss–Markov σ and τ, and the filter: the Allan variance (the figure, and a starting
 * point), then the six models by maximum likelihood, the lowest BIC chosen. */
static int fit_noise(sens_fit_result *r, const double *e, double dt, int ft_fixed,
                     double fc_fixed) {
  const double L = r->duration_s;
  r->white_sigma = r->gm_sigma = r->gm_tau_s = r->cutoff_hz = (sens_fit_value){0};
  r->nmodels = 0;
  if (r->n < SENS_FIT_MIN_SAMPLES) {
    const char *fmt = "not enough data for the Allan deviation (need >= %d samples, have %zu)";
    note(&r->white_sigma, fmt, SENS_FIT_MIN_SAMPLES, r->n);
    note(&r->gm_sigma, fmt, SENS_FIT_MIN_SAMPLES, r->n);
    note(&r->gm_tau_s, fmt, SENS_FIT_MIN_SAMPLES, r->n);
    note(&r->cutoff_hz, "not enough data for the noise models (need >= %d samples, have %zu)",
         SENS_FIT_MIN_SAMPLES, r->n);
    return 0;
  }
  r->nallan = sens_allan(r->allan, SENS_FIT_MAX_ALLAN, e, r->n, dt, sqrt(2.0));
  const double q = r->quant_step.ok ? r->quant_step.value : 0.0;
  const allan_fit af = allan_fit_points(r, dt, q, L, 0.0);
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
    note(&r->white_sigma, "%s", why);
    note(&r->gm_sigma, "%s", why);
    note(&r->gm_tau_s, "%s", why);
    note(&r->cutoff_hz, "%s", why);
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
static int ref_resting(const double *ref, size_t n) {
  double lo = ref[0], hi = ref[0];
  for (size_t i = 1; i < n; i++) {
    lo = fmin(lo, ref[i]);
    hi = fmax(hi, ref[i]);
  }
  return hi - lo <= 1e-9 * fmax(1.0, fmax(fabs(lo), fabs(hi)));
}

/* offset from the mean difference at unit scale, its uncertainty from 10 blocks */
static void offset_at_rest(sens_fit_result *r, const double *x, const double *ref, double *e) {
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
    note(&r->offset, "not enough data (need >= 20 samples)");
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
  set_value(&r->offset, mean, sqrt(fmax(bm2 / K - bm * bm, 0.0) / (K - 1.0)));
  note(&r->offset, "mean difference at unit scale; includes any constant and turn-on bias");
}

/* e = x - offset - (1 + scale)·ref, ref already aligned (delayed, filtered); scale and offset
 * with the spread over 10 consecutive blocks / √10 */
static void fit_reference(sens_fit_result *r, const double *x, const double *ref, double *e) {
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
    set_value(&r->scale_error, slope - 1.0, sd_s);
    set_value(&r->offset, icpt, sd_i);
    note(&r->offset, "includes any constant bias and turn-on bias");
    return;
  }
  if (moving && used >= 3) {
    note(&r->scale_error,
         "the reference moves too little to tell scale from drift (block-to-block spread %.2g); "
         "record a motion over a wider range",
         sd_s);
  } else {
    note(&r->scale_error, "not enough data (need >= 20 samples with a moving reference)");
  }
  offset_at_rest(r, x, ref, e);
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
static int fit_moving(sens_fit_result *r, const double *x, const double *ref, double *e,
                      double *tmp, double dt) {
  const double rate = r->rate_hz;
  const size_t n = r->n;
  const double lag = ref_lag(x, ref, tmp, n, rate);
  double *al = calloc(n, sizeof *al);
  if (!al) {
    return -1;
  }
  align_ref(al, ref, n, lag, SENS_FILTER_NONE, 0.0, rate);
  fit_reference(r, x, al, e);
  int rc = fit_noise(r, e, dt, SENS_FILTER_NONE, 0.0);
  const int filtered = r->filter_type != SENS_FILTER_NONE;
  const double d = filtered ? 0.0 : round(lag);
  align_ref(al, ref, n, d, SENS_FILTER_NONE, 0.0, rate);
  r->ref_cutoff_hz = filtered ? ref_cutoff(x, al, tmp, n, rate) : 0.0;
  if (r->ref_cutoff_hz > 0) {
    lowpass(tmp, al, n, r->ref_cutoff_hz, rate);
    memcpy(al, tmp, n * sizeof *al);
  }
  fit_reference(r, x, al, e);
  free(al);
  set_value(&r->latency_samples, d, 0.0);
  note(&r->latency_samples, "whole samples; the lag behind the reference is %.3g samples%s", lag,
       filtered ? ", taken as the filter's" : "");
  if (rc != 0 || (!filtered && fabs(lag - d) < 0.05)) {
    return rc; /* aligned as it was fitted */
  }
  if (r->ref_cutoff_hz > 0) {
    rc = fit_noise(r, e, dt, SENS_FILTER_FIRST_ORDER, r->ref_cutoff_hz);
    if (r->cutoff_hz.ok) {
      note(&r->cutoff_hz, "first order, from the lag behind the reference (the noise alone cannot "
                          "tell a drift from a filter)");
      r->cutoff_hz.sigma = NAN;
    }
    return rc;
  }
  return fit_noise(r, e, dt, SENS_FILTER_NONE, 0.0);
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
  double *tmp = ref ? malloc(n * sizeof *tmp) : NULL;
  int rc = ref && !tmp ? -1 : 0;
  r->reference_resting = ref && ref_resting(ref, n);
  if (rc == 0 && ref && !r->reference_resting && n >= SENS_FIT_MIN_SAMPLES) {
    rc = fit_moving(r, x, ref, e, tmp, dt);
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
      note(&r->scale_error, "needs a reference (--reference)");
      note(&r->offset, "needs a reference (--reference)");
    } else if (r->reference_resting) {
      note(&r->scale_error, "the reference rests (constant %.9g): the scale needs motion", ref[0]);
      offset_at_rest(r, x, ref, e);
    } else {
      fit_reference(r, x, ref, e);
    }
    rc = fit_noise(r, e, dt, SENS_FILTER_NONE, 0.0);
  }
  if (!r->latency_samples.ok) {
    note(&r->latency_samples, "%s", !ref ? "needs a reference (--reference)"
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

/* Allan variance at cluster size m of the model's filtered noise from its autocovariance
 * R_j = [F^j·P0]_yy: AVAR = Var(mean of m) - Cov(adjacent means), each a weighted sum of R_j */
static double avar_state_space(const sens_fit_result *r, int gm, long m) {
  ml_data d = {NULL, 0, 1.0 / r->rate_hz, 0, 1, {0}, {0}, 0};
  const double th[ML_NP] = {log(r->model_white_var), gm ? log(r->model_gm_var) : 0.0,
                            gm ? log(r->model_gm_tau_s) : 0.0, log(r->model_fc)};
  ml_ss s;
  ml_state(&s, &d, gm, (sens_filter_type)r->filter_type, th);
  double v[4];
  for (int i = 0; i < 4; i++) {
    v[i] = s.P0[i][1];
  }
  double var = 0.0, cov = 0.0;
  for (long j = 0; j < 2 * m; j++) { /* v = F^j·P0[:, y], R_j = v[y] */
    const double R = v[1];
    if (j < m) {
      var += (j == 0 ? 1.0 : 2.0) * (double)(m - j) * R;
    }
    if (j >= 1) { /* lag m + k for k = j - m in -(m-1)..m-1: weight m - |k| */
      const long k = j - m;
      cov += (double)(m - labs(k)) * R;
    }
    double t[4];
    for (int i = 0; i < 4; i++) {
      t[i] = s.F[i][0] * v[0] + s.F[i][1] * v[1] + s.F[i][2] * v[2] + s.F[i][3] * v[3];
    }
    memcpy(v, t, sizeof v);
  }
  return (var - cov) / ((double)m * (double)m);
}

double sens_fit_model_avar(const sens_fit_result *r, double tau_s, double *white, double *quant,
                           double *gm) {
  const double dt = 1.0 / r->rate_hz;
  const double q = r->quant_step.ok ? r->quant_step.value : 0.0;
  const long m = (long)llround(tau_s / dt) < 1 ? 1 : (long)llround(tau_s / dt);
  double w, g;
  if (r->filter_type == SENS_FILTER_BUTTERWORTH2) {
    w = r->model_white_var > 0 ? avar_state_space(r, 0, m) : 0.0;
    g = r->model_gm_var > 0 ? avar_state_space(r, 1, m) - w : 0.0;
  } else {
    const double fc = r->filter_type == SENS_FILTER_FIRST_ORDER ? r->model_fc : 0.0;
    w = r->model_white_var * avar_filtered_white(fc, dt, m);
    g = r->model_gm_var > 0 ? r->model_gm_var * avar_filtered_gm(r->model_gm_tau_s, fc, dt, m)
                            : 0.0;
  }
  const double qv = q > 0 ? sens_avar_white(q / sqrt(12.0), dt, tau_s) : 0.0;
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
