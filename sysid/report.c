/* sysid/report.c: what a fit says about its parameters — standard errors, correlations,
 * identifiability — and the residuals before and after (sysid.h).
 *
 * At the solution, with H = JᵀJ over all unknowns (parameters and window states, in the fit's
 * coordinates φ), the parameters' own information is the Schur complement that eliminates the
 * window states (each window's block on its own):
 *   F = H_θθ − Σ_w H_θw · H_ww⁺ · H_wθ
 * Turned into value coordinates scaled by each parameter's magnitude (column k of J times
 * scale_k / (dθ/dφ)_k, scale_k = |θ_k|, or 1 at 0), Fs = D·F·D. Its eigenvalues are the squared
 * singular values of the scaled Jacobian (the window states projected out). A parameter whose
 * own column is nil, or a direction with σ below weak_ratio·σ_max, is what the log cannot
 * determine; the covariance s²·Fs⁺ is taken on the rest, s² = Σr²/(m − n).
 */
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_matrix.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysid/internal.h"

/* A⁺ of a symmetric n×n block, in place (eigenvalues below 1e-12 of the largest dropped) */
static int pinv_sym(double *A, int n) {
  gsl_matrix_view Av = gsl_matrix_view_array(A, (size_t)n, (size_t)n);
  gsl_vector *ev = gsl_vector_alloc((size_t)n);
  gsl_matrix *V = gsl_matrix_alloc((size_t)n, (size_t)n);
  gsl_eigen_symmv_workspace *ws = gsl_eigen_symmv_alloc((size_t)n);
  if (!ev || !V || !ws) {
    gsl_vector_free(ev), gsl_matrix_free(V), gsl_eigen_symmv_free(ws);
    return -1;
  }
  gsl_eigen_symmv(&Av.matrix, ev, V, ws);
  double lmax = 0;
  for (int k = 0; k < n; k++) {
    lmax = fmax(lmax, gsl_vector_get(ev, (size_t)k));
  }
  for (int a = 0; a < n; a++) {
    for (int b = 0; b < n; b++) {
      double s = 0;
      for (int k = 0; k < n; k++) {
        double l = gsl_vector_get(ev, (size_t)k);
        if (l > 1e-12 * lmax) {
          s += gsl_matrix_get(V, (size_t)a, (size_t)k) * gsl_matrix_get(V, (size_t)b, (size_t)k) / l;
        }
      }
      A[a * n + b] = s;
    }
  }
  gsl_vector_free(ev), gsl_matrix_free(V), gsl_eigen_symmv_free(ws);
  return 0;
}

/* F (np × np): the parameters' information with the window states eliminated */
static int reduced_information(const sysid_problem *p, double *F) {
  int n = p->nunk, np = p->np, ns = p->nxs;
  double *H = malloc((size_t)n * (size_t)n * sizeof(double));
  double *Hww = malloc((size_t)ns * (size_t)ns * sizeof(double) + 1);
  double *T = malloc((size_t)np * (size_t)ns * sizeof(double) + 1);
  int rc = -1;
  if (!H || !Hww || !T) {
    goto done;
  }
  sysid__normal_matrix(p, H);
  for (int a = 0; a < np; a++) {
    for (int b = 0; b < np; b++) {
      F[a * np + b] = H[(size_t)a * n + b];
    }
  }
  for (int w = 0; w < p->nw && ns > 0; w++) {
    int o = np + w * ns;
    for (int a = 0; a < ns; a++) {
      for (int b = 0; b < ns; b++) {
        Hww[a * ns + b] = H[(size_t)(o + a) * n + o + b];
      }
    }
    if (pinv_sym(Hww, ns) < 0) {
      goto done;
    }
    for (int a = 0; a < np; a++) { /* T = H_θw · H_ww⁺ */
      for (int b = 0; b < ns; b++) {
        double s = 0;
        for (int k = 0; k < ns; k++) {
          s += H[(size_t)a * n + o + k] * Hww[k * ns + b];
        }
        T[a * ns + b] = s;
      }
    }
    for (int a = 0; a < np; a++) {
      for (int b = 0; b < np; b++) {
        double s = 0;
        for (int k = 0; k < ns; k++) {
          s += T[a * ns + k] * H[(size_t)(o + k) * n + b];
        }
        F[a * np + b] -= s;
      }
    }
  }
  rc = 0;
done:
  free(H), free(Hww), free(T);
  return rc;
}

static int add_weak(sysid_report *rep, const char *text) {
  char(*w)[256] = realloc(rep->weak, (size_t)(rep->nweak + 1) * sizeof *w);
  if (!w) {
    return -1;
  }
  rep->weak = w;
  snprintf(rep->weak[rep->nweak++], 256, "%s", text);
  return 0;
}

/* the eigen-analysis of Fs: singular values, weak directions, covariance on the rest */
static int identifiability(const sysid_problem *p, double *Fs, double s2,
                           sysid_report *rep, double *cov) {
  int np = p->np;
  gsl_matrix_view Fv = gsl_matrix_view_array(Fs, (size_t)np, (size_t)np);
  gsl_vector *ev = gsl_vector_alloc((size_t)np);
  gsl_matrix *V = gsl_matrix_alloc((size_t)np, (size_t)np);
  gsl_eigen_symmv_workspace *ws = gsl_eigen_symmv_alloc((size_t)np);
  if (!ev || !V || !ws) {
    gsl_vector_free(ev), gsl_matrix_free(V), gsl_eigen_symmv_free(ws);
    return -1;
  }
  double diag[np];
  for (int k = 0; k < np; k++) {
    diag[k] = Fs[k * np + k];
  }
  gsl_eigen_symmv(&Fv.matrix, ev, V, ws);
  gsl_eigen_symmv_sort(ev, V, GSL_EIGEN_SORT_VAL_DESC);
  double smax = sqrt(fmax(gsl_vector_get(ev, 0), 0)), tol = p->o.weak_ratio * smax;
  int weak_of[np];
  memset(weak_of, 0, sizeof weak_of);
  memset(cov, 0, (size_t)np * (size_t)np * sizeof(double));
  /* a parameter whose own column is (nearly) nil: named alone */
  for (int k = 0; k < np; k++) {
    if (!(sqrt(fmax(diag[k], 0)) > tol) || smax == 0) {
      char t[256];
      snprintf(t, sizeof t, "%s: no effect on the readings (|scaled column| %.2g, largest σ %.2g)"
               "%s", p->ps[k].name, sqrt(fmax(diag[k], 0)), smax,
               sim_param_kind_of(p->ps[k].sp.field) == SIM_PARAM_JOINT ? ": does the joint move?" : "");
      if (add_weak(rep, t) < 0) {
        goto oom;
      }
      weak_of[k] = 1;
    }
  }
  for (int e = 0; e < np; e++) {
    double l = gsl_vector_get(ev, (size_t)e), sv = sqrt(fmax(l, 0));
    rep->singular_values[e] = sv;
    if (sv > tol && smax > 0) {
      for (int a = 0; a < np; a++) { /* covariance in scaled coordinates */
        for (int b = 0; b < np; b++) {
          cov[a * np + b] += s2 * gsl_matrix_get(V, (size_t)a, (size_t)e) *
                             gsl_matrix_get(V, (size_t)b, (size_t)e) / l;
        }
      }
      continue;
    }
    /* a weak direction: the parameters that weigh in it */
    char t[256] = "";
    int named = 0, fresh = 0;
    for (int k = 0; k < np; k++) {
      double v = gsl_matrix_get(V, (size_t)k, (size_t)e);
      if (fabs(v) > 0.1) {
        size_t len = strlen(t);
        snprintf(t + len, sizeof t - len, "%s%.2f·%s", named ? (v < 0 ? " − " : " + ") : (v < 0 ? "−" : ""),
                 fabs(v), p->ps[k].name);
        named++;
        fresh |= !weak_of[k];
        weak_of[k] |= 2;
      }
    }
    if (fresh) { /* combinations of parameters already named alone add nothing */
      size_t len = strlen(t);
      snprintf(t + len, sizeof t - len, ": not determined by the log (σ/σmax %.1e)", smax > 0 ? sv / smax : 0);
      if (add_weak(rep, t) < 0) {
        goto oom;
      }
    }
  }
  for (int k = 0; k < np; k++) {
    rep->param[k].identifiable = weak_of[k] == 0;
  }
  gsl_vector_free(ev), gsl_matrix_free(V), gsl_eigen_symmv_free(ws);
  return 0;
oom:
  gsl_vector_free(ev), gsl_matrix_free(V), gsl_eigen_symmv_free(ws);
  return -1;
}

/* per series joint RMS and max of the unweighted residuals r·σ */
static void joint_residuals(const sysid_problem *p, const double *r, double *rms, double *mx) {
  int cnt[p->nj];
  memset(cnt, 0, sizeof cnt);
  for (int j = 0; j < p->nj; j++) {
    rms[j] = mx[j] = 0;
  }
  for (int ri = 0; ri < p->nrow; ri++) {
    int j = p->row[ri].j;
    double e = fabs(r[ri] * p->meas[j].sigma);
    rms[j] += e * e, cnt[j]++;
    mx[j] = fmax(mx[j], e);
  }
  for (int j = 0; j < p->nj; j++) {
    rms[j] = cnt[j] ? sqrt(rms[j] / cnt[j]) : NAN;
  }
}

static int alloc_report(const sysid_problem *p, sysid_report *rep) {
  int np = p->np, nj = p->nj;
  rep->np = np, rep->njoint = nj;
  rep->param = calloc((size_t)np, sizeof *rep->param);
  rep->joint = calloc((size_t)nj, sizeof *rep->joint);
  rep->rms_before = calloc((size_t)nj, sizeof(double));
  rep->rms_after = calloc((size_t)nj, sizeof(double));
  rep->max_before = calloc((size_t)nj, sizeof(double));
  rep->max_after = calloc((size_t)nj, sizeof(double));
  rep->singular_values = calloc((size_t)np, sizeof(double));
  return rep->param && rep->joint && rep->rms_before && rep->rms_after && rep->max_before &&
                 rep->max_after && rep->singular_values
             ? 0
             : -1;
}

static void fill_params(const sysid_problem *p, const double *x, sysid_report *rep) {
  for (int k = 0; k < p->np; k++) {
    const sysid_pspec *s = &p->ps[k];
    sysid_param_result *o = &rep->param[k];
    double d;
    snprintf(o->name, sizeof o->name, "%s", s->name);
    o->kind = (int)sim_param_kind_of(s->sp.field);
    const char *dot1 = strchr(s->name, '.'), *dot2 = strrchr(s->name, '.');
    snprintf(o->element, sizeof o->element, "%.*s", (int)(dot2 - dot1 - 1), dot1 + 1);
    snprintf(o->field, sizeof o->field, "%s", dot2 + 1);
    o->unit = sim_param_unit(s->sp.field);
    o->initial = s->initial;
    o->value = sysid__value(s, x[k], &d);
  }
}

int sysid__report(sysid_problem *p, const double *x, const double *r0, const double *r,
                  sysid_report *rep, char *err, size_t err_sz) {
  int np = p->np;
  double *F = malloc((size_t)np * (size_t)np * sizeof(double));
  double *cov = malloc((size_t)np * (size_t)np * sizeof(double));
  double scale[np];
  int rc = -1;
  if (!F || !cov || alloc_report(p, rep) < 0 || reduced_information(p, F) < 0) {
    goto oom;
  }
  fill_params(p, x, rep);
  rep->nresidual = p->nrow, rep->nunknown = p->nunk;
  for (int j = 0; j < p->nj; j++) {
    snprintf(rep->joint[j], SIM_NAME_MAX, "%s", p->jname[j]);
  }
  joint_residuals(p, r0, rep->rms_before, rep->max_before);
  joint_residuals(p, r, rep->rms_after, rep->max_after);
  /* value coordinates scaled by the magnitudes: D = scale / (dθ/dφ) */
  for (int k = 0; k < np; k++) {
    double v = rep->param[k].value;
    scale[k] = fabs(v) > 0 ? fabs(v) : 1;
    double D = scale[k] / p->dtheta[k];
    for (int b = 0; b < np; b++) {
      F[k * np + b] *= D;
      F[b * np + k] *= D;
    }
  }
  int dof = p->nrow - p->nunk;
  double s2 = dof > 0 ? 2 * rep->cost_after / dof : NAN;
  if (identifiability(p, F, s2, rep, cov) < 0) {
    goto oom;
  }
  for (int k = 0; k < np; k++) {
    sysid_param_result *o = &rep->param[k];
    o->stderr_ = o->identifiable ? scale[k] * sqrt(fmax(cov[k * np + k], 0)) : NAN;
    /* determined only to ±100 % or worse: not a number to trust either */
    if (o->identifiable && !(o->stderr_ < fabs(o->value))) {
      char t[256];
      snprintf(t, sizeof t, "%s: %.3g ± %.3g, the log barely determines it", o->name, o->value,
               o->stderr_);
      if (add_weak(rep, t) < 0) {
        goto oom;
      }
      o->identifiable = 0;
    }
  }
  for (int a = 0; a < np; a++) {
    for (int b = a + 1; b < np; b++) {
      double den = sqrt(cov[a * np + a] * cov[b * np + b]);
      double c = den > 0 ? cov[a * np + b] / den : 0;
      if (rep->param[a].identifiable && rep->param[b].identifiable && fabs(c) > 0.9) {
        sysid_corr *cc = realloc(rep->corr, (size_t)(rep->ncorr + 1) * sizeof *cc);
        if (!cc) {
          goto oom;
        }
        rep->corr = cc;
        rep->corr[rep->ncorr++] = (sysid_corr){a, b, c};
      }
    }
  }
  rc = 0;
  goto done;
oom:
  snprintf(err, err_sz, "out of memory (the report)");
done:
  free(F), free(cov);
  return rc;
}

void sysid_report_free(sysid_report *r) {
  if (!r) {
    return;
  }
  free(r->param), free(r->corr), free(r->joint), free(r->rms_before), free(r->rms_after);
  free(r->max_before), free(r->max_after), free(r->weak), free(r->singular_values);
  memset(r, 0, sizeof *r);
}
