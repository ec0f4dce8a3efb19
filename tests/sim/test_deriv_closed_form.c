/* tests/sim/test_deriv_closed_form.c: the step Jacobians of a pendulum against its closed-form
 * linearization, at the hanging and at the upright pose (an independent check of the analytic
 * structure, no finite differences).
 *
 * A rigid pendulum on a hinge about y, COM at distance l below the axis at θ = 0, moment of
 * inertia I = I_yy + m·l² about the axis, damping b, a motor of gear k: I·θ̈ = −m·g·l·sin θ −
 * b·θ̇ + k·u. At rest at θ0 (0 hanging, π upright) the linearized dynamics are
 *   ẋ = F·x + G·u,  F = [[0, 1], [−c·m·g·l/I, −b/I]],  G = [0, k/I],  c = cos θ0 = ±1.
 * Euler (semi-implicit, damping implicit: (I + h·b)·θ̈ = ...), one step:
 *   α = −c·m·g·l/(I + h·b), β = −b/(I + h·b), γ = k/(I + h·b):
 *   v⁺ = (h·α)·δq + (1 + h·β)·v + h·γ·u,   q⁺ = δq + h·v⁺.
 * RK4 from an equilibrium: every stage sits at the equilibrium, so each stage's Jacobian is F
 * and the step's is exactly the Taylor polynomial A = Σₙ₌₀⁴ (hF)ⁿ/n!,
 * B = h·Σₙ₌₀³ (hF)ⁿ/(n+1)!·G (RK4 on a linear system). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/deriv/deriv.h"

#define MASS 1.3
#define LEN 0.45
#define IYY 0.02
#define DAMP 0.7
#define GEAR 2.5
#define GRAV 9.81
#define STEP 0.01
#define PI 3.14159265358979323846

static const char pendulum_json[] =
    "{ \"name\": \"pendulum\", \"timestep\": 0.01, \"integrator\": \"%s\",\n"
    "  \"gravity\": [0, 0, -9.81],\n"
    "  \"bodies\": [ { \"name\": \"pole\", \"parent\": \"world\",\n"
    "    \"joint\": { \"name\": \"swing\", \"type\": \"hinge\", \"axis\": [0, 1, 0], \"damping\": 0.7 },\n"
    "    \"inertial\": { \"mass\": 1.3, \"com\": [0, 0, -0.45], \"inertia\": [0.03, 0.02, 0.01, 0, 0, 0] } } ],\n"
    "  \"actuators\": [ { \"name\": \"motor\", \"joint\": \"swing\", \"type\": \"motor\", \"gear\": 2.5 } ] }\n";

static sim_model *load(const char *integrator) {
  char json[sizeof pendulum_json + 16], err[256];
  snprintf(json, sizeof json, pendulum_json, integrator);
  sim_model *m = sim_model_load_string(json, "pendulum", err, sizeof err);
  assert_non_null(m);
  return m;
}

/* A and B by sim_deriv at rest at angle q0 */
static void analytic(sim_model *m, double q0, double A[4], double B[2]) {
  char err[256];
  sim_data *d = sim_data_new(m);
  sim_deriv *w = sim_deriv_new(m, NULL, 0, err, sizeof err);
  assert_non_null(w);
  d->qpos[0] = q0;
  assert_int_equal(sim_deriv_step(m, d, w, A, B, NULL), SIM_DERIV_OK);
  sim_deriv_free(&w);
  sim_data_free(d);
}

static void assert_close(const double *a, const double *b, int n, const char *what) {
  for (int k = 0; k < n; k++) {
    double err = fabs(a[k] - b[k]);
    printf("  %s[%d] analytic %.17g, closed form %.17g\n", what, k, a[k], b[k]);
    assert_true(err <= 1e-13 * fmax(1, fabs(b[k])));
  }
}

static void euler_closed_form(double c, double A[4], double B[2]) {
  double I = IYY + MASS * LEN * LEN, den = I + STEP * DAMP;
  double alpha = -c * MASS * GRAV * LEN / den, beta = -DAMP / den, gamma = GEAR / den;
  double vq = STEP * alpha, vv = 1 + STEP * beta, vu = STEP * gamma;
  A[0] = 1 + STEP * vq, A[1] = STEP * vv; /* q⁺ row */
  A[2] = vq, A[3] = vv;                   /* v⁺ row */
  B[0] = STEP * vu, B[1] = vu;
}

static void mat2_mul(double out[4], const double a[4], const double b[4]) {
  double r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                 a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
  memcpy(out, r, sizeof r);
}

static void rk4_closed_form(double c, double A[4], double B[2]) {
  double I = IYY + MASS * LEN * LEN;
  double hF[4] = {0, STEP, -STEP * c * MASS * GRAV * LEN / I, -STEP * DAMP / I};
  double G[2] = {0, GEAR / I}, P[4] = {1, 0, 0, 1}, S[4] = {0}, fact = 1;
  memcpy(A, P, sizeof P);
  for (int n = 1; n <= 4; n++) { /* A = Σ (hF)ⁿ/n!, S = Σ₀³ (hF)ⁿ/(n+1)! */
    for (int k = 0; k < 4; k++) S[k] += P[k] / (fact * n);
    fact *= n;
    mat2_mul(P, P, hF);
    for (int k = 0; k < 4; k++) A[k] += P[k] / fact;
  }
  B[0] = STEP * (S[0] * G[0] + S[1] * G[1]);
  B[1] = STEP * (S[2] * G[0] + S[3] * G[1]);
}

static void check(const char *integrator, double q0) {
  sim_model *m = load(integrator);
  double A[4], B[2], Ac[4], Bc[2];
  analytic(m, q0, A, B);
  if (strcmp(integrator, "rk4") == 0) {
    rk4_closed_form(cos(q0), Ac, Bc);
  } else {
    euler_closed_form(cos(q0), Ac, Bc);
  }
  printf("%s at %s:\n", integrator, q0 == 0 ? "hanging" : "upright");
  assert_close(A, Ac, 4, "A");
  assert_close(B, Bc, 2, "B");
  sim_model_free(m);
}

static void test_euler_hanging(void **state) { (void)state; check("euler", 0); }
static void test_euler_upright(void **state) { (void)state; check("euler", PI); }
static void test_rk4_hanging(void **state) { (void)state; check("rk4", 0); }
static void test_rk4_upright(void **state) { (void)state; check("rk4", PI); }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_euler_hanging),
      cmocka_unit_test(test_euler_upright),
      cmocka_unit_test(test_rk4_hanging),
      cmocka_unit_test(test_rk4_upright),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
