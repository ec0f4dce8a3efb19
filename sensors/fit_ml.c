/* sensors/fit_ml.c: the exact likelihood of the noise models (a Kalman filter over their state
 * space), its minimum (Nelder–Mead in the log parameters) and covariance (the inverse Hessian). */
#include "sensors/fit_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

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
void sens__ml_state(ml_ss *s, const ml_data *d, int gm, sens_filter_type ft, const double *th) {
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
  sens__ml_state(&s, d, gm, ft, th);
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

void sens__ml_model_init(ml_model *m, int gm, sens_filter_type ft) {
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
void sens__ml_fit(ml_data *d, ml_model *m, double (*starts)[ML_NP], int ns) {
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
double sens__ml_filter_gain(const ml_data *d, sens_filter_type ft, double fc) {
  ml_ss s;
  const double th[ML_NP] = {0.0, 0.0, 0.0, log(fc)};
  sens__ml_state(&s, d, 0, ft, th);
  return s.P0[1][1];
}
