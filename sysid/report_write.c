/* sysid/report_write.c: the report as text and as JSON (report_write.h). */
#include "sysid/report_write.h"

#include <math.h>
#include <string.h>

static const char *kind_name(int kind) {
  return kind == SIM_PARAM_BODY ? "body" : kind == SIM_PARAM_JOINT ? "joint" : "actuator";
}

static void print_params(FILE *out, const sysid_report *r) {
  fprintf(out, "\n%-34s %13s %13s %11s  %s\n", "parameter", "initial", "fitted", "std. error",
          "unit");
  for (int i = 0; i < r->np; i++) {
    const sysid_param_result *p = &r->param[i];
    char se[32];
    if (p->identifiable && isfinite(p->stderr_)) {
      snprintf(se, sizeof se, "%11.3g", p->stderr_);
    } else {
      snprintf(se, sizeof se, "%11s", "n/a");
    }
    fprintf(out, "%-34s %13.6g %13.6g %s  %s%s\n", p->name, p->initial, p->value, se,
            p->unit ? p->unit : "", p->identifiable ? "" : "  (not identifiable)");
  }
}

static void print_corr_and_weak(FILE *out, const sysid_report *r) {
  if (r->ncorr > 0) {
    fprintf(out, "\ncorrelations above 0.9 (the log tells these apart poorly):\n");
    for (int k = 0; k < r->ncorr; k++) {
      fprintf(out, "  %+.3f  %s ~ %s\n", r->corr[k].r, r->param[r->corr[k].i].name,
              r->param[r->corr[k].j].name);
    }
  }
  if (r->nweak > 0) {
    fprintf(out, "\nnot identifiable from this log (their values above are not results):\n");
    for (int k = 0; k < r->nweak; k++) {
      fprintf(out, "  %s\n", r->weak[k]);
    }
  }
}

void sysid_report_print(FILE *out, const sysid_report *r, const sysid_report_source *src) {
  fprintf(out, "sysid: %s fitted to %s: %d parameters, %d samples, %d windows, %d residuals, "
          "%d unknowns\n", src->robot, src->log, r->np, src->samples, src->windows,
          r->nresidual, r->nunknown);
  fprintf(out, "%d iterations in %.3g s (%s); cost %.6g -> %.6g\n", r->iterations, r->seconds,
          r->stop[0] ? r->stop : "done", r->cost_before, r->cost_after);
  print_params(out, r);
  fprintf(out, "\n%-20s %13s %13s %13s %13s\n", "residual per joint", "rms before", "rms after",
          "max before", "max after");
  for (int j = 0; j < r->njoint; j++) {
    fprintf(out, "%-20s %13.4g %13.4g %13.4g %13.4g\n", r->joint[j], r->rms_before[j],
            r->rms_after[j], r->max_before[j], r->max_after[j]);
  }
  print_corr_and_weak(out, r);
}

/* a number, or null when it is not finite */
static cJSON *num(double v) {
  return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static int add(cJSON *o, const char *key, cJSON *v) {
  return v && cJSON_AddItemToObject(o, key, v) ? 0 : -1;
}

static cJSON *param_json(const sysid_param_result *p) {
  cJSON *o = cJSON_CreateObject();
  int bad = !o;
  bad = bad || add(o, "name", cJSON_CreateString(p->name));
  bad = bad || add(o, "kind", cJSON_CreateString(kind_name(p->kind)));
  bad = bad || add(o, "element", cJSON_CreateString(p->element));
  bad = bad || add(o, "field", cJSON_CreateString(p->field));
  bad = bad || add(o, "unit", cJSON_CreateString(p->unit ? p->unit : ""));
  bad = bad || add(o, "initial", num(p->initial)) || add(o, "value", num(p->value));
  bad = bad || add(o, "stderr", num(p->identifiable ? p->stderr_ : NAN));
  bad = bad || add(o, "identifiable", cJSON_CreateBool(p->identifiable));
  if (bad) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static cJSON *joints_json(const sysid_report *r) {
  cJSON *a = cJSON_CreateArray();
  for (int j = 0; a && j < r->njoint; j++) {
    cJSON *o = cJSON_CreateObject();
    if (!o || add(o, "name", cJSON_CreateString(r->joint[j])) ||
        add(o, "rms_before", num(r->rms_before[j])) || add(o, "rms_after", num(r->rms_after[j])) ||
        add(o, "max_before", num(r->max_before[j])) || add(o, "max_after", num(r->max_after[j]))) {
      cJSON_Delete(o);
      cJSON_Delete(a);
      return NULL;
    }
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

static cJSON *lists_json(cJSON *o, const sysid_report *r) {
  cJSON *params = cJSON_AddArrayToObject(o, "parameters");
  for (int i = 0; params && i < r->np; i++) {
    cJSON *p = param_json(&r->param[i]);
    if (!p) {
      return NULL;
    }
    cJSON_AddItemToArray(params, p);
  }
  cJSON *corr = cJSON_AddArrayToObject(o, "correlations");
  for (int k = 0; corr && k < r->ncorr; k++) {
    cJSON *c = cJSON_CreateObject();
    if (!c || add(c, "a", cJSON_CreateString(r->param[r->corr[k].i].name)) ||
        add(c, "b", cJSON_CreateString(r->param[r->corr[k].j].name)) ||
        add(c, "r", num(r->corr[k].r))) {
      cJSON_Delete(c);
      return NULL;
    }
    cJSON_AddItemToArray(corr, c);
  }
  cJSON *weak = cJSON_AddArrayToObject(o, "unidentifiable");
  for (int k = 0; weak && k < r->nweak; k++) {
    cJSON_AddItemToArray(weak, cJSON_CreateString(r->weak[k]));
  }
  cJSON *sv = cJSON_AddArrayToObject(o, "singular_values");
  for (int k = 0; sv && r->singular_values && k < r->np; k++) {
    cJSON_AddItemToArray(sv, num(r->singular_values[k]));
  }
  return params && corr && weak && sv && add(o, "joints", joints_json(r)) == 0 ? o : NULL;
}

cJSON *sysid_report_json(const sysid_report *r, const sysid_report_source *src) {
  cJSON *o = cJSON_CreateObject();
  int bad = !o;
  bad = bad || add(o, "format", cJSON_CreateString("achilles-sysid-report"));
  bad = bad || add(o, "version", cJSON_CreateNumber(1));
  bad = bad || add(o, "robot", cJSON_CreateString(src->robot));
  bad = bad || add(o, "log", cJSON_CreateString(src->log));
  bad = bad || add(o, "samples", cJSON_CreateNumber(src->samples));
  bad = bad || add(o, "windows", cJSON_CreateNumber(src->windows));
  bad = bad || add(o, "residuals", cJSON_CreateNumber(r->nresidual));
  bad = bad || add(o, "unknowns", cJSON_CreateNumber(r->nunknown));
  bad = bad || add(o, "iterations", cJSON_CreateNumber(r->iterations));
  bad = bad || add(o, "seconds", num(r->seconds));
  bad = bad || add(o, "stop", cJSON_CreateString(r->stop));
  bad = bad || add(o, "status", cJSON_CreateNumber(r->status));
  bad = bad || add(o, "cost_before", num(r->cost_before));
  bad = bad || add(o, "cost_after", num(r->cost_after));
  if (bad || !lists_json(o, r)) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}
