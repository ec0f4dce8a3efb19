/* sensors/fit_allan.c: the Allan variance of the noise models: closed forms of filtered white noise
 * and drift, the weighted fit to the measured points (the figure, and the likelihood's starting
 * point), and the curve of a fitted model (sens_fit_model_avar). */
#include "sensors/fit_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --- Allan fit -------------------------------------------------------------------------------- */

/* Allan variance of unit white noise through the first-order low-pass of chain.h: the filtered
 * noise is an AR(1) process (coefficient b = e^{-2π·fc·dt}, stationary variance (1-b)/(1+b)),
 * whose Allan variance is the discrete Gauss–Markov closed form with T = 1/(2π·fc). */
double sens__avar_filtered_white(double fc, double dt, long m) {
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
double sens__avar_filtered_gm(double T, double fc, double dt, long m) {
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
    k->u[i] = sens__avar_filtered_white(fc, k->dt, k->p[i].m);
    k->v[i] = sens__avar_filtered_gm(T, fc, k->dt, k->p[i].m);
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
allan_fit sens__allan_fit_points(sens_fit_result *r, double dt, double q, double tmax,
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
      const double model = fmax(f.A * sens__avar_filtered_white(f.fc, dt, m) +
                                    f.B * sens__avar_filtered_gm(f.T, f.fc, dt, m) + k.qvar / (double)m,
                                DBL_MIN);
      k.w[i] = k.p[i].edf / (2.0 * model * model);
    }
    f = allan_search(&k, tmax, fc_fixed);
  }
  return f;
}

/* Allan variance at cluster size m of the model's filtered noise from its autocovariance
 * R_j = [F^j·P0]_yy: AVAR = Var(mean of m) - Cov(adjacent means), each a weighted sum of R_j */
static double avar_state_space(const sens_fit_result *r, int gm, long m) {
  ml_data d = {NULL, 0, 1.0 / r->rate_hz, 0, 1, {0}, {0}, 0};
  const double th[ML_NP] = {log(r->model_white_var), gm ? log(r->model_gm_var) : 0.0,
                            gm ? log(r->model_gm_tau_s) : 0.0, log(r->model_fc)};
  ml_ss s;
  sens__ml_state(&s, &d, gm, (sens_filter_type)r->filter_type, th);
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
    w = r->model_white_var * sens__avar_filtered_white(fc, dt, m);
    g = r->model_gm_var > 0 ? r->model_gm_var * sens__avar_filtered_gm(r->model_gm_tau_s, fc, dt, m)
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
