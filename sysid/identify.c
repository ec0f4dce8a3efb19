/* sysid/identify.c: what the log determines — the singular values of the scaled Jacobian with
 * the window states projected out, the directions it cannot determine, and the parameters'
 * covariance on the rest (internal.h: sysid__identify).
 *
 * With the window states fitted, a reading's residual depends on θ and on its own window's
 * state x_w. The parameters' information is what is left of J_θ after removing what the
 * window states can explain: per window, rows of J_θ projected onto the orthogonal complement
 * of range(J_w) (a column-pivoted QR of J_w; its rank's rows dropped). The stacked result J_r
 * (the Schur complement's square root, computed without forming JᵀJ, whose squared condition
 * number would bury singular values below ~1e-6 of the largest) has columns scaled by each
 * parameter's magnitude, D_k = scale_k / (dθ/dφ)_k, so that a singular value compares relative
 * changes. Its SVD J_r = U·Σ·Vᵀ (one-sided Jacobi: accurate small singular values) gives:
 *   - a parameter whose own column is nil (below weak_ratio·σ_max): no effect on the readings;
 *   - a direction v_k with σ_k < weak_ratio·σ_max, or whose standard error s/σ_k exceeds 1
 *     (the combination Σ v_kj·θ_j/scale_j known to no better than ±100 % of the parameters'
 *     magnitudes: a joint that barely moves, noise-driven): what the log cannot determine;
 *   - the covariance of the scaled parameters, s²·Σ_k v_k·v_kᵀ/σ_k² over the other directions.
 */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_permutation.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysid/internal.h"

/* window w's rows of J_θ·D projected off range(J_w), appended at Jr row *m */
static int project_window(const sysid_problem *p, int w, const double *D, gsl_matrix *Jr,
                          size_t *m) {
  const sysid_window *win = &p->win[w];
  int np = p->np, ns = p->nxs, nb = np + ns, nr = win->nr;
  gsl_matrix *B = gsl_matrix_alloc((size_t)nr > 0 ? (size_t)nr : 1, (size_t)np);
  if (!B) {
    return -1;
  }
  for (int r = 0; r < nr; r++) {
    const double *J = p->Jb + (size_t)(win->r0 + r) * nb;
    for (int k = 0; k < np; k++) {
      gsl_matrix_set(B, (size_t)r, (size_t)k, J[k] * D[k]);
    }
  }
  int rank = 0;
  if (ns > 0 && nr > ns) {
    gsl_matrix *A = gsl_matrix_alloc((size_t)nr, (size_t)ns);
    gsl_vector *tau = gsl_vector_alloc((size_t)ns), *norm = gsl_vector_alloc((size_t)ns);
    gsl_permutation *perm = gsl_permutation_alloc((size_t)ns);
    if (!A || !tau || !norm || !perm) {
      gsl_matrix_free(A), gsl_vector_free(tau), gsl_vector_free(norm), gsl_permutation_free(perm);
      gsl_matrix_free(B);
      return -1;
    }
    for (int r = 0; r < nr; r++) {
      const double *J = p->Jb + (size_t)(win->r0 + r) * nb;
      for (int c = 0; c < ns; c++) {
        gsl_matrix_set(A, (size_t)r, (size_t)c, J[np + c]);
      }
    }
    int signum;
    gsl_linalg_QRPT_decomp(A, tau, perm, &signum, norm);
    double r00 = fabs(gsl_matrix_get(A, 0, 0));
    while (rank < ns && fabs(gsl_matrix_get(A, (size_t)rank, (size_t)rank)) > 1e-12 * r00) {
      rank++;
    }
    for (int k = 0; k < np; k++) { /* Qᵀ·B, column by column */
      gsl_vector_view col = gsl_matrix_column(B, (size_t)k);
      gsl_linalg_QR_QTvec(A, tau, &col.vector);
    }
    gsl_matrix_free(A), gsl_vector_free(tau), gsl_vector_free(norm), gsl_permutation_free(perm);
  } else if (ns > 0) {
    rank = nr; /* a window with no more readings than states tells nothing of θ */
  }
  for (int r = rank; r < nr; r++) {
    for (int k = 0; k < np; k++) {
      gsl_matrix_set(Jr, *m, (size_t)k, gsl_matrix_get(B, (size_t)r, (size_t)k));
    }
    (*m)++;
  }
  gsl_matrix_free(B);
  return 0;
}

int sysid__add_weak(sysid_report *rep, const char *text) {
  char(*w)[256] = realloc(rep->weak, (size_t)(rep->nweak + 1) * sizeof *w);
  if (!w) {
    return -1;
  }
  rep->weak = w;
  snprintf(rep->weak[rep->nweak++], 256, "%s", text);
  return 0;
}

/* the standard deviation of model joint jid's readings over its σ (INFINITY when the series
   does not log it): a joint held still reads its noise only, ~1 */
static double reading_spread(const sysid_problem *p, int jid) {
  for (int j = 0; j < p->nj; j++) {
    if (p->jdof[j] != p->m->joints[jid].dofadr) {
      continue;
    }
    double s = 0, s2 = 0;
    int n = 0;
    for (int i = 0; i < p->n; i++) {
      double y = p->y[(size_t)i * p->nj + j];
      if (!isnan(y)) {
        s += y, s2 += y * y, n++;
      }
    }
    double mean = n ? s / n : 0, var = n > 1 ? (s2 - n * mean * mean) / (n - 1) : 0;
    return sqrt(fmax(var, 0)) / (fabs(p->meas[j].scale) * p->meas[j].sigma);
  }
  return INFINITY;
}

/* the weak directions named in words; weak_of[k] set for the parameters in them */
static int name_weak(const sysid_problem *p, const gsl_vector *S, const gsl_matrix *V,
                     const double *colnorm, double tol, const int *weak_dir, double s,
                     sysid_report *rep, int *weak_of) {
  int np = p->np;
  double smax = gsl_vector_get(S, 0);
  for (int k = 0; k < np; k++) { /* a parameter whose own column is nil: named alone */
    if (!(colnorm[k] > tol)) {
      char t[256];
      snprintf(t, sizeof t, "%s: no effect on the readings (scaled column %.2g, largest σ %.2g)",
               p->ps[k].name, colnorm[k], smax);
      double spread = sim_param_kind_of(p->ps[k].sp.field) == SIM_PARAM_JOINT
                          ? reading_spread(p, p->ps[k].sp.index)
                          : INFINITY;
      if (spread < 5) {
        size_t len = strlen(t);
        snprintf(t + len, sizeof t - len, ": the joint barely moves in the log (spread %.1f σ)",
                 spread);
      }
      if (sysid__add_weak(rep, t) < 0) {
        return -1;
      }
      weak_of[k] = 1;
    }
  }
  for (int e = 0; e < np; e++) {
    double sv = gsl_vector_get(S, (size_t)e);
    if (!weak_dir[e]) {
      continue;
    }
    char t[256] = "";
    int named = 0, fresh = 0, joint = -2; /* the one joint all of them belong to, or -1 */
    for (int k = 0; k < np; k++) {
      double v = gsl_matrix_get(V, (size_t)k, (size_t)e);
      if (fabs(v) > 0.1) {
        int jk = sim_param_kind_of(p->ps[k].sp.field) == SIM_PARAM_JOINT ? p->ps[k].sp.index : -1;
        joint = joint == -2 || joint == jk ? jk : -1;
        size_t len = strlen(t);
        snprintf(t + len, sizeof t - len, "%s%.2f·%s",
                 named ? (v < 0 ? " − " : " + ") : (v < 0 ? "−" : ""), fabs(v), p->ps[k].name);
        named++;
        fresh |= !weak_of[k];
        weak_of[k] |= 2;
      }
    }
    if (fresh) { /* a combination of parameters already named alone adds nothing */
      size_t len = strlen(t);
      snprintf(t + len, sizeof t - len, ": not determined by the log (σ/σmax %.1e, ±%.0f %%)",
               smax > 0 ? sv / smax : 0, sv > 0 && isfinite(s) ? 100 * s / sv : INFINITY);
      double spread = joint >= 0 ? reading_spread(p, joint) : INFINITY;
      if (spread < 5) {
        len = strlen(t);
        snprintf(t + len, sizeof t - len, ": joint %s barely moves in the log (spread %.1f σ)",
                 p->m->joints[joint].name, spread);
      }
      if (sysid__add_weak(rep, t) < 0) {
        return -1;
      }
    }
  }
  return 0;
}

int sysid__identify(const sysid_problem *p, const double *D, double s2, sysid_report *rep,
                    double *cov, int *weak_of) {
  int np = p->np, rc = -1;
  gsl_matrix *Jr = gsl_matrix_alloc((size_t)p->nrow, (size_t)np);
  gsl_matrix *V = gsl_matrix_alloc((size_t)np, (size_t)np);
  gsl_vector *S = gsl_vector_alloc((size_t)np);
  double *colnorm = calloc((size_t)np, sizeof(double));
  size_t m = 0;
  if (!Jr || !V || !S || !colnorm) {
    goto done;
  }
  for (int w = 0; w < p->nw; w++) {
    if (project_window(p, w, D, Jr, &m) < 0) {
      goto done;
    }
  }
  memset(cov, 0, (size_t)np * (size_t)np * sizeof(double));
  memset(weak_of, 0, (size_t)np * sizeof(int));
  if (m < (size_t)np) { /* fewer informative rows than parameters: nothing is determined */
    for (int k = 0; k < np; k++) {
      weak_of[k] = 1;
    }
    rc = sysid__add_weak(rep, "every parameter: the log has fewer readings than unknowns");
    goto done;
  }
  gsl_matrix_view A = gsl_matrix_submatrix(Jr, 0, 0, m, (size_t)np);
  for (int k = 0; k < np; k++) {
    gsl_vector_view c = gsl_matrix_column(&A.matrix, (size_t)k);
    colnorm[k] = gsl_blas_dnrm2(&c.vector);
  }
  gsl_linalg_SV_decomp_jacobi(&A.matrix, V, S); /* descending singular values */
  double smax = gsl_vector_get(S, 0), tol = p->o.weak_ratio * smax;
  double s = sqrt(s2); /* ~1 when the σ are right */
  int *weak_dir = calloc((size_t)np, sizeof(int));
  if (!weak_dir) {
    goto done;
  }
  for (int e = 0; e < np; e++) {
    double sv = gsl_vector_get(S, (size_t)e);
    rep->singular_values[e] = sv;
    weak_dir[e] = !(sv > tol && smax > 0) || (isfinite(s) && !(s < sv));
    if (!weak_dir[e]) {
      for (int a = 0; a < np; a++) {
        for (int b = 0; b < np; b++) {
          cov[a * np + b] += s2 * gsl_matrix_get(V, (size_t)a, (size_t)e) *
                             gsl_matrix_get(V, (size_t)b, (size_t)e) / (sv * sv);
        }
      }
    }
  }
  rc = name_weak(p, S, V, colnorm, smax > 0 ? tol : INFINITY, weak_dir, s, rep, weak_of);
  free(weak_dir);
done:
  gsl_matrix_free(Jr), gsl_matrix_free(V), gsl_vector_free(S);
  free(colnorm);
  return rc;
}
