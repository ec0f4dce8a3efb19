/* tests/sim/test_deriv_lqr.c: the worked example of docs/derivatives.md, checked by simulation:
 * an LQR gain computed from A and B of a double pendulum with two motors, at the hanging pose
 * (the closed loop follows the linear prediction (A − BK)ᵗ·x₀ and settles faster than the open
 * loop) and at the upright pose (unstable without it: the gain holds it up). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/deriv/deriv.h"

#define NX 4
#define NU 2
#define PI 3.14159265358979323846

static const char arm_json[] =
    "{ \"name\": \"double_pendulum_motors\", \"timestep\": 0.005, \"integrator\": \"euler\",\n"
    "  \"gravity\": [0, 0, -9.81],\n"
    "  \"bodies\": [\n"
    "    { \"name\": \"rod1\", \"parent\": \"world\",\n"
    "      \"joint\": { \"name\": \"hinge1\", \"type\": \"hinge\", \"axis\": [0, 1, 0], \"damping\": 0.05 },\n"
    "      \"inertial\": { \"mass\": 1, \"com\": [0, 0, -0.5], \"inertia\": [0.0834, 0.0834, 0.0001, 0, 0, 0] } },\n"
    "    { \"name\": \"rod2\", \"parent\": \"rod1\", \"pos\": [0, 0, -1],\n"
    "      \"joint\": { \"name\": \"hinge2\", \"type\": \"hinge\", \"axis\": [0, 1, 0], \"damping\": 0.05 },\n"
    "      \"inertial\": { \"mass\": 1, \"com\": [0, 0, -0.5], \"inertia\": [0.0834, 0.0834, 0.0001, 0, 0, 0] } } ],\n"
    "  \"actuators\": [\n"
    "    { \"name\": \"shoulder\", \"joint\": \"hinge1\", \"type\": \"motor\" },\n"
    "    { \"name\": \"elbow\", \"joint\": \"hinge2\", \"type\": \"motor\" } ] }\n";

/* --- small dense algebra ------------------------------------------------------------------- */

static void mul(double *out, const double *a, const double *b, int n, int k, int m) {
  double t[NX * NX];
  for (int r = 0; r < n; r++) {
    for (int c = 0; c < m; c++) {
      double s = 0;
      for (int j = 0; j < k; j++) s += a[r * k + j] * b[j * m + c];
      t[r * m + c] = s;
    }
  }
  memcpy(out, t, (size_t)(n * m) * sizeof(double));
}

static void transpose(double *out, const double *a, int n, int m) {
  for (int r = 0; r < n; r++)
    for (int c = 0; c < m; c++) out[c * n + r] = a[r * m + c];
}

static void inverse2(double out[4], const double a[4]) {
  double det = a[0] * a[3] - a[1] * a[2];
  out[0] = a[3] / det, out[1] = -a[1] / det, out[2] = -a[2] / det, out[3] = a[0] / det;
}

/* The discrete LQR gain: P = Q + AᵀPA − AᵀPB·(R + BᵀPB)⁻¹·BᵀPA iterated to its fixed point,
 * K = (R + BᵀPB)⁻¹·BᵀPA, for u = −K·x. */
static void lqr(double K[NU * NX], const double A[NX * NX], const double B[NX * NU],
                const double Q[NX * NX], const double R[NU * NU]) {
  double P[NX * NX], At[NX * NX], Bt[NU * NX], PA[NX * NX], PB[NX * NU], S[NU * NU], Si[NU * NU];
  double BtPA[NU * NX], next[NX * NX], AtPB[NX * NU];
  memcpy(P, Q, sizeof P);
  transpose(At, A, NX, NX);
  transpose(Bt, B, NX, NU);
  for (int it = 0; it < 20000; it++) {
    mul(PA, P, A, NX, NX, NX);
    mul(PB, P, B, NX, NX, NU);
    mul(S, Bt, PB, NU, NX, NU);
    for (int k = 0; k < NU * NU; k++) S[k] += R[k];
    inverse2(Si, S);
    mul(BtPA, Bt, PA, NU, NX, NX);
    mul(K, Si, BtPA, NU, NU, NX);
    mul(next, At, PA, NX, NX, NX);
    mul(AtPB, At, PB, NX, NX, NU);
    double KK[NX * NX], change = 0;
    mul(KK, AtPB, K, NX, NU, NX);
    for (int k = 0; k < NX * NX; k++) {
      next[k] += Q[k] - KK[k];
      change = fmax(change, fabs(next[k] - P[k]));
    }
    memcpy(P, next, sizeof P);
    if (change < 1e-12 * (1 + fabs(P[0]))) break;
  }
}

/* the largest |eigenvalue| of a 4×4 matrix by Gelfand's formula ρ = lim ‖Mᴺ‖^(1/N), N = 2¹⁴,
 * by repeated squaring with the scale kept apart (the dominant eigenvalues are a complex pair
 * here, where the power method does not settle) */
static double spectral_radius(const double M[NX * NX]) {
  double P[NX * NX], logscale = 0, N = 1;
  memcpy(P, M, sizeof P);
  for (int k = 0; k < 14; k++) {
    mul(P, P, P, NX, NX, NX);
    logscale *= 2, N *= 2;
    double c = 0;
    for (int e = 0; e < NX * NX; e++) c = fmax(c, fabs(P[e]));
    for (int e = 0; e < NX * NX; e++) P[e] /= c;
    logscale += log(c);
  }
  return exp(logscale / N);
}

/* --- the example ----------------------------------------------------------------------------- */

typedef struct setup {
  sim_model *m;
  double A[NX * NX], B[NX * NU], K[NU * NX];
} setup;

static void linearize(setup *s, double q1) {
  char err[256];
  s->m = sim_model_load_string(arm_json, "double pendulum", err, sizeof err);
  assert_non_null(s->m);
  sim_data *d = sim_data_new(s->m);
  sim_deriv *w = sim_deriv_new(s->m, NULL, 0, err, sizeof err);
  d->qpos[0] = q1; /* at rest there: an equilibrium */
  assert_int_equal(sim_deriv_step(s->m, d, w, s->A, s->B, NULL), SIM_DERIV_OK);
  const double Q[NX * NX] = {100, 0, 0, 0, 0, 100, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  const double R[NU * NU] = {0.01, 0, 0, 0.01};
  lqr(s->K, s->A, s->B, Q, R);
  sim_deriv_free(&w);
  sim_data_free(d);
}

/* closed-loop simulation from x₀ = x* + dx for `steps`; returns the largest distance of the
 * simulated deviation from the linear prediction, relative to the deviation's size, and writes
 * the final deviation's size */
static double closed_loop(setup *s, double q1, const double dx[NX], int steps, double *final) {
  sim_data *d = sim_data_new(s->m);
  double x[NX], xl[NX], ABK[NX * NX], BK[NX * NX], worst = 0;
  mul(BK, s->B, s->K, NX, NU, NX);
  for (int k = 0; k < NX * NX; k++) ABK[k] = s->A[k] - BK[k];
  d->qpos[0] = q1 + dx[0], d->qpos[1] = dx[1], d->qvel[0] = dx[2], d->qvel[1] = dx[3];
  memcpy(xl, dx, sizeof xl);
  for (int t = 0; t < steps; t++) {
    x[0] = d->qpos[0] - q1, x[1] = d->qpos[1], x[2] = d->qvel[0], x[3] = d->qvel[1];
    double u[NU];
    mul(u, s->K, x, NU, NX, 1);
    d->ctrl[0] = -u[0], d->ctrl[1] = -u[1];
    sim_step(s->m, d);
    mul(xl, ABK, xl, NX, NX, 1);
    double e = 0, size = 0;
    x[0] = d->qpos[0] - q1, x[1] = d->qpos[1], x[2] = d->qvel[0], x[3] = d->qvel[1];
    for (int k = 0; k < NX; k++) {
      e = fmax(e, fabs(x[k] - xl[k]));
      size = fmax(size, fabs(xl[k]));
    }
    worst = fmax(worst, e / fmax(size, 1e-300) * (size > 1e-6)); /* while it is measurable */
    *final = size;
  }
  *final = fmax(fabs(d->qpos[0] - q1), fabs(d->qpos[1]));
  sim_data_free(d);
  return worst;
}

static void test_lqr_hanging(void **state) {
  (void)state;
  setup s;
  linearize(&s, 0);
  double ABK[NX * NX], BK[NX * NX];
  mul(BK, s.B, s.K, NX, NU, NX);
  for (int k = 0; k < NX * NX; k++) ABK[k] = s.A[k] - BK[k];
  double open = spectral_radius(s.A), closed = spectral_radius(ABK), final;
  printf("hanging: K = [%.4g %.4g %.4g %.4g; %.4g %.4g %.4g %.4g], spectral radius open %.6f, "
         "closed %.6f\n", s.K[0], s.K[1], s.K[2], s.K[3], s.K[4], s.K[5], s.K[6], s.K[7], open,
         closed);
  assert_true(closed < open && closed < 0.99);
  const double dx[NX] = {0.02, -0.01, 0, 0};
  double deviation = closed_loop(&s, 0, dx, 400, &final);
  printf("hanging, 2 s from (0.02, -0.01) rad: simulation within %.2g of the linear prediction, "
         "%.2g rad left\n", deviation, final);
  assert_true(deviation < 2e-3); /* second order in a deviation of 0.02 rad: 1.6e-4 measured */
  assert_true(final < 1e-4);
  sim_model_free(s.m);
}

static void test_lqr_upright(void **state) {
  (void)state;
  setup s;
  linearize(&s, PI);
  double ABK[NX * NX], BK[NX * NX];
  mul(BK, s.B, s.K, NX, NU, NX);
  for (int k = 0; k < NX * NX; k++) ABK[k] = s.A[k] - BK[k];
  double open = spectral_radius(s.A), closed = spectral_radius(ABK), final;
  printf("upright: spectral radius open %.6f (unstable), closed %.6f\n", open, closed);
  assert_true(open > 1 && closed < 1);
  const double dx[NX] = {0.02, -0.01, 0, 0};
  double deviation = closed_loop(&s, PI, dx, 1000, &final);
  printf("upright, 5 s from (0.02, -0.01) rad: within %.2g of the linear prediction, %.2g rad "
         "left\n", deviation, final);
  assert_true(deviation < 2e-3); /* 1.8e-4 measured */
  assert_true(final < 1e-4);
  sim_model_free(s.m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lqr_hanging),
      cmocka_unit_test(test_lqr_upright),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
