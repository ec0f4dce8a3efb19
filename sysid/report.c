/* sysid/report.c: what a fit says about its parameters — values, standard errors,
 * correlations, what the log cannot determine (identify.c) — and the residuals before and
 * after, per joint (sysid.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysid/internal.h"

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
  double *cov = malloc((size_t)np * (size_t)np * sizeof(double) + 1);
  double scale[np > 0 ? np : 1], D[np > 0 ? np : 1];
  int weak_of[np > 0 ? np : 1], rc = -1;
  if (!cov || alloc_report(p, rep) < 0) {
    goto oom;
  }
  fill_params(p, x, rep);
  rep->nresidual = p->nrow, rep->nunknown = p->nunk;
  for (int j = 0; j < p->nj; j++) {
    snprintf(rep->joint[j], SIM_NAME_MAX, "%s", p->jname[j]);
  }
  joint_residuals(p, r0, rep->rms_before, rep->max_before);
  joint_residuals(p, r, rep->rms_after, rep->max_after);
  /* columns scaled to relative changes: D = scale / (dθ/dφ) (p->dtheta is x's) */
  for (int k = 0; k < np; k++) {
    double v = rep->param[k].value;
    scale[k] = fabs(v) > 0 ? fabs(v) : 1;
    D[k] = scale[k] / p->dtheta[k];
  }
  int dof = p->nrow - p->nunk;
  double s2 = dof > 0 ? 2 * rep->cost_after / dof : NAN;
  if (sysid__identify(p, D, s2, rep, cov, weak_of) < 0) {
    goto oom;
  }
  for (int k = 0; k < np; k++) {
    rep->param[k].identifiable = weak_of[k] == 0;
  }
  for (int k = 0; k < np; k++) {
    sysid_param_result *o = &rep->param[k];
    o->stderr_ = o->identifiable ? scale[k] * sqrt(fmax(cov[k * np + k], 0)) : NAN;
    /* a magnitude (positive or bounded) determined only to ±100 % or worse: not a number to
       trust either (a free quantity such as a centre of mass may well be near 0) */
    if (o->identifiable && p->ps[k].map != SYSID_MAP_FREE && !(o->stderr_ < fabs(o->value))) {
      char t[256];
      snprintf(t, sizeof t, "%s: %.3g ± %.3g, the log barely determines it", o->name, o->value,
               o->stderr_);
      if (sysid__add_weak(rep, t) < 0) {
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
  free(cov);
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
