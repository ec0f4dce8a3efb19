/* sysid/problem.c: not built yet — every entry of sysid.h answers "not built yet" until the
 * fit lands (sysid-core). */
#include "sysid/sysid.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void sysid_meas_default(sysid_meas *m) {
  *m = (sysid_meas){.latency = 0, .scale = 1, .offset = 0, .sigma = 1e-3};
}

void sysid_options_default(sysid_options *o) {
  *o = (sysid_options){.window = 2,
                       .fit_initial_state = 1,
                       .velocity_span = 0.01,
                       .max_iter = 100,
                       .xtol = 1e-10,
                       .gtol = 1e-10,
                       .ftol = 1e-12,
                       .weak_ratio = 1e-6};
}

sysid_problem *sysid_problem_new(const sim_model *m, const sysid_series *s, const char *params,
                                 const char *bounds, const sysid_meas *meas,
                                 const sysid_options *o, char *err, size_t err_sz) {
  (void)m, (void)s, (void)params, (void)bounds, (void)meas, (void)o;
  snprintf(err, err_sz, "sysid: not built yet");
  return NULL;
}
void sysid_problem_free(sysid_problem **p) { (void)p; }
int sysid_nparam(const sysid_problem *p) { (void)p; return 0; }
int sysid_nwindow(const sysid_problem *p) { (void)p; return 0; }
int sysid_nunknown(const sysid_problem *p) { (void)p; return 0; }
int sysid_nresidual(const sysid_problem *p) { (void)p; return 0; }
sim_param sysid_param(const sysid_problem *p, int i) { (void)p, (void)i; return (sim_param){0}; }
const char *sysid_param_name(const sysid_problem *p, int i) { (void)p, (void)i; return ""; }
void sysid_start(const sysid_problem *p, double *x0) { (void)p, (void)x0; }
int sysid_residual(sysid_problem *p, const double *x, double *r, double *J, char *err,
                   size_t err_sz) {
  (void)p, (void)x, (void)r, (void)J;
  snprintf(err, err_sz, "sysid: not built yet");
  return -1;
}
void sysid_values(const sysid_problem *p, const double *x, double *theta) { (void)p, (void)x, (void)theta; }
double sysid_simulated_seconds(const sysid_problem *p) { (void)p; return 0; }
int sysid_fit(sysid_problem *p, sysid_report *r, char *err, size_t err_sz) {
  (void)p;
  memset(r, 0, sizeof *r);
  snprintf(err, err_sz, "sysid: not built yet");
  return -1;
}
void sysid_report_free(sysid_report *r) { (void)r; }
int sysid_simulate(sysid_problem *p, int which, double *q_out) { (void)p, (void)which, (void)q_out; return -1; }
const sim_model *sysid_fitted_model(const sysid_problem *p) { (void)p; return NULL; }
