/* sysid/fit.c: the least squares — GSL's trust-region Levenberg–Marquardt on the residuals and
 * their Jacobian from the sensitivities (sysid.h).
 *
 * GSL's large-problem interface (gsl_multilarge_nlinear) takes the Jacobian as products J·u,
 * Jᵀ·u and the normal matrix JᵀJ, which the block rows of residual.c give without ever forming
 * the dense matrix: a minute of a 4-joint arm at 1 kHz with fitted window states has 240 000
 * residuals × 252 unknowns (0.5 GB dense), but 240 000 × 20 nonzeros.
 */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multilarge_nlinear.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sysid/internal.h"

typedef struct fit_ctx {
  sysid_problem *p;
  double *r;             /* scratch residuals of the Jacobian's evaluation */
  char err[512];         /* the first evaluation error */
  int failed;            /* evaluations that failed at a trial point (rejected steps) */
} fit_ctx;

/* residuals at x; a trial point the model cannot run gets large residuals, so that the trust
   region rejects the step and shrinks */
static int cb_f(const gsl_vector *x, void *vctx, gsl_vector *f) {
  fit_ctx *c = vctx;
  char err[512];
  if (sysid__eval(c->p, x->data, f->data, 0, err, sizeof err) < 0) {
    if (!c->failed++) {
      snprintf(c->err, sizeof c->err, "%s", err);
    }
    gsl_vector_set_all(f, 1e6);
  }
  return GSL_SUCCESS;
}

static int ensure_jacobian(fit_ctx *c, const gsl_vector *x) {
  sysid_problem *p = c->p;
  if (p->haveJ && memcmp(p->xJ, x->data, (size_t)p->nunk * sizeof(double)) == 0) {
    return 0;
  }
  char err[512];
  if (sysid__eval(p, x->data, c->r, 1, err, sizeof err) < 0) {
    snprintf(c->err, sizeof c->err, "%s", err);
    return -1;
  }
  return 0;
}

/* JᵀJ from the block rows: a row's columns ascend (parameters, then its window's states), so
 * its products fill the lower triangle, mirrored at the end */
void sysid__normal_matrix(const sysid_problem *p, double *H) {
  int n = p->nunk, nb = p->np + p->nxs;
  memset(H, 0, (size_t)n * (size_t)n * sizeof(double));
  int col[nb > 0 ? nb : 1];
  for (int ri = 0; ri < p->nrow; ri++) {
    const double *J = p->Jb + (size_t)ri * nb;
    for (int a = 0; a < nb; a++) {
      col[a] = sysid__column(p, p->row[ri].w, a);
    }
    for (int a = 0; a < nb; a++) {
      if (J[a] == 0) {
        continue;
      }
      double *Hrow = H + (size_t)col[a] * n;
      for (int b = 0; b <= a; b++) {
        Hrow[col[b]] += J[a] * J[b];
      }
    }
  }
  for (int a = 0; a < n; a++) {
    for (int b = a + 1; b < n; b++) {
      H[(size_t)a * n + b] = H[(size_t)b * n + a];
    }
  }
}

void sysid__jacobian_product(const sysid_problem *p, int transpose, const double *u,
                             size_t us, double *v, size_t vs) {
  int nb = p->np + p->nxs;
  size_t nv = transpose ? (size_t)p->nunk : (size_t)p->nrow;
  for (size_t i = 0; i < nv; i++) {
    v[i * vs] = 0;
  }
  for (int ri = 0; ri < p->nrow; ri++) {
    const double *J = p->Jb + (size_t)ri * nb;
    int w = p->row[ri].w;
    if (!transpose) {
      double s = 0;
      for (int a = 0; a < nb; a++) {
        s += J[a] * u[(size_t)sysid__column(p, w, a) * us];
      }
      v[(size_t)ri * vs] = s;
    } else {
      double ur = u[(size_t)ri * us];
      for (int a = 0; a < nb; a++) {
        v[(size_t)sysid__column(p, w, a) * vs] += J[a] * ur;
      }
    }
  }
}

static int cb_df(CBLAS_TRANSPOSE_t trans, const gsl_vector *x, const gsl_vector *u, void *vctx,
                 gsl_vector *v, gsl_matrix *JTJ) {
  fit_ctx *c = vctx;
  sysid_problem *p = c->p;
  if (ensure_jacobian(c, x) < 0) {
    return GSL_EBADFUNC;
  }
  if (u && v) {
    sysid__jacobian_product(p, trans == CblasTrans, u->data, u->stride, v->data, v->stride);
  }
  if (JTJ) {
    sysid__normal_matrix(p, JTJ->data);
  }
  return GSL_SUCCESS;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double half_sq(const double *r, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    s += r[i] * r[i];
  }
  return 0.5 * s;
}

/* the iterations; x in: the start, out: the solution */
static int iterate(sysid_problem *p, fit_ctx *c, double *x, sysid_report *rep, char *err,
                   size_t err_sz) {
  gsl_multilarge_nlinear_parameters par = gsl_multilarge_nlinear_default_parameters();
  par.trs = gsl_multilarge_nlinear_trs_lm;
  par.scale = gsl_multilarge_nlinear_scale_more;
  par.solver = gsl_multilarge_nlinear_solver_cholesky;
  gsl_multilarge_nlinear_fdf fdf = {0};
  fdf.f = cb_f, fdf.df = cb_df, fdf.n = (size_t)p->nrow, fdf.p = (size_t)p->nunk, fdf.params = c;
  gsl_multilarge_nlinear_workspace *w =
      gsl_multilarge_nlinear_alloc(gsl_multilarge_nlinear_trust, &par, fdf.n, fdf.p);
  if (!w) {
    snprintf(err, err_sz, "out of memory (GSL workspace of %d unknowns)", p->nunk);
    return -1;
  }
  gsl_vector_view xv = gsl_vector_view_array(x, (size_t)p->nunk);
  int status = gsl_multilarge_nlinear_init(&xv.vector, &fdf, w), info = 0, it = 0;
  snprintf(rep->stop, sizeof rep->stop, "iteration limit");
  while (status == GSL_SUCCESS && it < p->o.max_iter) {
    status = gsl_multilarge_nlinear_iterate(w);
    if (status == GSL_ENOPROG) { /* an iteration that found no step: converged as far as it goes */
      snprintf(rep->stop, sizeof rep->stop, "no step lowers the cost further");
      status = GSL_SUCCESS;
      break;
    }
    if (status != GSL_SUCCESS) {
      break;
    }
    it++;
    const gsl_vector *f = gsl_multilarge_nlinear_residual(w);
    if (p->o.progress) {
      p->o.progress(p->o.ctx, it, half_sq(f->data, p->nrow),
                    gsl_blas_dnrm2(gsl_multilarge_nlinear_step(w)));
    }
    int test = gsl_multilarge_nlinear_test(p->o.xtol, p->o.gtol, p->o.ftol, &info, w);
    if (test == GSL_SUCCESS) {
      snprintf(rep->stop, sizeof rep->stop, "%s",
               info == 1 ? "small step" : info == 2 ? "small gradient" : "small cost change");
      break;
    }
  }
  rep->iterations = it;
  rep->status = status;
  if (status != GSL_SUCCESS) {
    snprintf(err, err_sz, "the fit stopped: %s%s%s", gsl_strerror(status), c->err[0] ? ": " : "",
             c->err);
    gsl_multilarge_nlinear_free(w);
    return -1;
  }
  memcpy(x, gsl_multilarge_nlinear_position(w)->data, (size_t)p->nunk * sizeof(double));
  gsl_multilarge_nlinear_free(w);
  return 0;
}

int sysid_fit(sysid_problem *p, sysid_report *rep, char *err, size_t err_sz) {
  memset(rep, 0, sizeof *rep);
  double t0 = now();
  size_t nr = (size_t)p->nrow;
  double *x = malloc((size_t)p->nunk * sizeof(double)), *r0 = malloc(nr * sizeof(double)),
         *r = malloc(nr * sizeof(double));
  fit_ctx c = {p, r, "", 0};
  int rc = -1;
  gsl_error_handler_t *old = gsl_set_error_handler_off(); /* errors are values here */
  if (!x || !r0 || !r) {
    snprintf(err, err_sz, "out of memory");
    goto done;
  }
  memcpy(x, p->xstart, (size_t)p->nunk * sizeof(double));
  /* the start must run: its error is the user's (a model that blows up with these values) */
  if (sysid__eval(p, x, r0, 0, err, err_sz) < 0) {
    goto done;
  }
  rep->cost_before = half_sq(r0, p->nrow);
  if (iterate(p, &c, x, rep, err, err_sz) < 0) {
    goto done;
  }
  /* the residuals and the Jacobian at the solution, for the report */
  if (sysid__eval(p, x, r, 1, err, err_sz) < 0) {
    goto done;
  }
  memcpy(p->xfit, x, (size_t)p->nunk * sizeof(double));
  p->fitted = 1;
  rep->cost_after = half_sq(r, p->nrow);
  rep->seconds = now() - t0;
  rc = sysid__report(p, x, r0, r, rep, err, err_sz);
done:
  gsl_set_error_handler(old);
  free(x), free(r0), free(r);
  if (rc < 0) {
    sysid_report_free(rep);
  }
  return rc;
}
