/* tests/sim/test_free_body.c: a free rigid body in space against the laws it must obey.
 *
 * Without gravity or any force, a free body keeps its spatial momentum (linear momentum and
 * angular momentum about a fixed point) and its kinetic energy; its orientation quaternion
 * stays a unit one. Both are computed here from qpos and qvel alone (the quaternion's own
 * rotation matrix, the description's inertia), not from the engine's derived arrays.
 *
 * Dzhanibekov's effect: a torque-free asymmetric top (I1 < I2 < I3) spun about its intermediate
 * axis flips over and back periodically. Euler's equations give ω in Jacobi elliptic functions
 * (Landau & Lifshitz, Mechanics §37): with energy E and squared angular momentum M², for
 * M² > 2E·I2
 *     ω2 = sqrt((2E·I3 − M²)/(I2(I3 − I2)))·sn(τ, k),
 *     τ = t·sqrt((I3 − I2)(M² − 2E·I1)/(I1·I2·I3)),  k² = (I2 − I1)(2E·I3 − M²)/((I3 − I2)(M² − 2E·I1)),
 * (for M² < 2E·I2 the indices 1 and 3 swap), so ω2 changes sign every 2K(k)/λ (λ = dτ/dt):
 * the time between two flips, with K the complete elliptic integral of the first kind
 * (computed here by the arithmetic-geometric mean, K = π / (2·AGM(1, sqrt(1 − k²)))).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/sim.h"
#include "support/model.h"
#include "support/skip.h"

static const double PI = 3.14159265358979323846;

/* a free body, no gravity; inertia diag(I1, I2, I3) plus products, COM off the origin */
static sim_model *load_body(const char *inertia, const char *com, const char *integrator) {
  char json[1024];
  snprintf(json, sizeof json,
           "{ \"name\": \"top\", \"timestep\": 0.001, \"integrator\": \"%s\",\n"
           "  \"gravity\": [0, 0, 0],\n"
           "  \"bodies\": [ { \"name\": \"top\", \"parent\": \"world\", \"pos\": [0.3, -0.1, 1],\n"
           "    \"joint\": { \"name\": \"root\", \"type\": \"free\" },\n"
           "    \"inertial\": { \"mass\": 2.5, \"com\": %s, \"inertia\": %s } } ] }\n",
           integrator, com, inertia);
  return ts_model(json);
}

static void quat_mat(double R[9], const double q[4]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  double n = w * w + x * x + y * y + z * z; /* the rotation of q/|q| */
  R[0] = 1 - 2 * (y * y + z * z) / n, R[1] = 2 * (x * y - w * z) / n;
  R[2] = 2 * (x * z + w * y) / n, R[3] = 2 * (x * y + w * z) / n;
  R[4] = 1 - 2 * (x * x + z * z) / n, R[5] = 2 * (y * z - w * x) / n;
  R[6] = 2 * (x * z - w * y) / n, R[7] = 2 * (y * z + w * x) / n;
  R[8] = 1 - 2 * (x * x + y * y) / n;
}

static void mat_vec(double out[3], const double R[9], const double v[3]) {
  for (int r = 0; r < 3; r++) {
    out[r] = R[3 * r] * v[0] + R[3 * r + 1] * v[1] + R[3 * r + 2] * v[2];
  }
}

static void cross(double out[3], const double a[3], const double b[3]) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

/* momentum [L about the world origin; p] and kinetic energy from qpos, qvel alone:
 * ω_w = R·ω_b, c = x + R·com, v_c = v + ω_w × (R·com), L = R·I·ω_b + m·c × v_c */
static double momentum(double h[6], const sim_model *m, const double *qpos, const double *qvel) {
  const sim_body *b = &m->bodies[1];
  double R[9], rc[3], c[3], w[3], vc[3], Iw[3], RIw[3], cxv[3];
  quat_mat(R, qpos + 3);
  mat_vec(rc, R, b->com);
  mat_vec(w, R, qvel + 3);
  cross(vc, w, rc);
  for (int k = 0; k < 3; k++) {
    c[k] = qpos[k] + rc[k];
    vc[k] += qvel[k];
  }
  mat_vec(Iw, b->inertia, qvel + 3);
  mat_vec(RIw, R, Iw);
  cross(cxv, c, vc);
  double energy = 0;
  for (int k = 0; k < 3; k++) {
    h[k] = RIw[k] + b->mass * cxv[k];
    h[3 + k] = b->mass * vc[k];
    energy += 0.5 * (qvel[3 + k] * Iw[k] + b->mass * vc[k] * vc[k]);
  }
  return energy;
}

/* RK4, 10 s of a fast tumbling body with products of inertia and an offset COM */
static void test_spinning_conserves(void **state) {
  (void)state;
  sim_model *m = load_body("[0.02, 0.035, 0.05, 0.002, -0.001, 0.003]", "[0.05, -0.02, 0.03]",
                           "rk4");
  sim_data *d = sim_data_new(m);
  assert_non_null(d);
  const double v0[6] = {0.3, -0.2, 0.1, 2.0, -7.0, 3.0}; /* m/s world; rad/s body */
  memcpy(d->qvel, v0, sizeof v0);
  double h0[6], h[6], dh = 0, hscale = 0, dq = 0, dE = 0, dEk = 0;
  double E0 = momentum(h0, m, d->qpos, d->qvel);
  for (int k = 0; k < 6; k++) {
    hscale = fmax(hscale, fabs(h0[k]));
  }
  for (int n = 0; n < 10000; n++) {
    sim_step(m, d);
    double E = momentum(h, m, d->qpos, d->qvel);
    for (int k = 0; k < 6; k++) {
      dh = fmax(dh, fabs(h[k] - h0[k]) / hscale);
    }
    dE = fmax(dE, fabs(E - E0) / E0);
    const double *q = d->qpos + 3;
    dq = fmax(dq, fabs(sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]) - 1));
  }
  sim_kinematics(m, d); /* the engine's own kinetic energy agrees */
  dEk = fabs(sim_energy_kinetic(m, d) - momentum(h, m, d->qpos, d->qvel)) / E0;
  print_message("free body, RK4, 10 s at 1 ms: max relative drift of momentum %.2g, of energy "
                "%.2g; max | |q| - 1 | %.2g; engine's kinetic energy off by %.2g\n",
                dh, dE, dq, dEk);
  assert_true(dh <= 1e-9);
  assert_true(dE <= 1e-9);
  assert_true(dq <= 1e-14);
  assert_true(dEk <= 1e-12); /* rounding: the engine sums about the world origin */
  ts_sim_free(m, d);
}

/* the same body with semi-implicit Euler drifts measurably: the check above can fail */
static void test_euler_drift_is_visible(void **state) {
  (void)state;
  sim_model *m = load_body("[0.02, 0.035, 0.05, 0.002, -0.001, 0.003]", "[0.05, -0.02, 0.03]",
                           "euler");
  sim_data *d = sim_data_new(m);
  const double v0[6] = {0.3, -0.2, 0.1, 2.0, -7.0, 3.0};
  memcpy(d->qvel, v0, sizeof v0);
  double h[6], E0 = momentum(h, m, d->qpos, d->qvel), dE = 0;
  for (int n = 0; n < 10000; n++) {
    sim_step(m, d);
    dE = fmax(dE, fabs(momentum(h, m, d->qpos, d->qvel) - E0) / E0);
  }
  print_message("free body, Euler, 10 s at 1 ms: max relative energy drift %.2g\n", dE);
  assert_true(dE > 1e-6);
  ts_sim_free(m, d);
}

/* What an IMU on a free body sees: falling freely under gravity, its proper acceleration is
 * zero (a + ω×v at the COM), its angular velocity in body axes is qvel[3..5], and its angular
 * acceleration is Euler's, I·α = (I·ω)×ω (body axes, COM at the body origin). */
static void test_falling_body_motion(void **state) {
  (void)state;
  char json[1024];
  snprintf(json, sizeof json,
           "{ \"gravity\": [0.5, -1, -9.81], \"bodies\": [ { \"name\": \"top\", \"parent\": "
           "\"world\", \"pos\": [0, 0, 2], \"quat\": [0.8, 0.6, 0, 0],\n"
           "  \"joint\": { \"name\": \"root\", \"type\": \"free\" },\n"
           "  \"inertial\": { \"mass\": 1.5, \"inertia\": [0.01, 0.02, 0.03, 0, 0, 0] } } ] }");
  sim_model *m = ts_model(json);
  sim_data *d = sim_data_new(m);
  const double v0[6] = {1.0, 0.5, 2.0, 3.0, -2.0, 1.5};
  memcpy(d->qvel, v0, sizeof v0);
  sim_forward(m, d);
  double vel[6], acc[6], wxv[3], expect[3], Iw[3];
  sim_body_velocity(vel, d, 1);
  sim_body_acceleration(acc, d, 1);
  cross(wxv, vel, vel + 3);
  const double I[3] = {0.01, 0.02, 0.03};
  for (int k = 0; k < 3; k++) {
    Iw[k] = I[k] * v0[3 + k];
  }
  cross(expect, Iw, v0 + 3);
  double e_lin = 0, e_ang = 0, e_w = 0;
  for (int k = 0; k < 3; k++) {
    e_lin = fmax(e_lin, fabs(acc[3 + k] + wxv[k]));
    e_ang = fmax(e_ang, fabs(acc[k] - expect[k] / I[k]));
    e_w = fmax(e_w, fabs(vel[k] - v0[3 + k]));
  }
  print_message("falling spinning body: |proper acceleration| %.2g m/s², angular acceleration "
                "off Euler's by %.2g rad/s², body rate off qvel by %.2g\n", e_lin, e_ang, e_w);
  assert_true(e_lin <= 1e-12);
  assert_true(e_ang <= 1e-12);
  assert_true(e_w <= 1e-15);
  ts_sim_free(m, d);
}

/* K(k) = π / (2·AGM(1, sqrt(1 − k²))) */
static double elliptic_k(double k2) {
  double a = 1, b = sqrt(1 - k2);
  for (int i = 0; i < 60 && fabs(a - b) > 1e-16 * a; i++) {
    double an = 0.5 * (a + b);
    b = sqrt(a * b);
    a = an;
  }
  return PI / (2 * a);
}

/* the time between two flips of ω2 from E and M² (see the header) */
static double flip_interval(const double I[3], const double w[3]) {
  double E2 = 0, M2 = 0; /* 2E and M² */
  for (int k = 0; k < 3; k++) {
    E2 += I[k] * w[k] * w[k];
    M2 += I[k] * I[k] * w[k] * w[k];
  }
  double I1 = I[0], I2 = I[1], I3 = I[2], lambda, k2;
  if (M2 > E2 * I2) {
    lambda = sqrt((I3 - I2) * (M2 - E2 * I1) / (I1 * I2 * I3));
    k2 = (I2 - I1) * (E2 * I3 - M2) / ((I3 - I2) * (M2 - E2 * I1));
  } else {
    lambda = sqrt((I2 - I1) * (E2 * I3 - M2) / (I1 * I2 * I3));
    k2 = (I3 - I2) * (M2 - E2 * I1) / ((I2 - I1) * (E2 * I3 - M2));
  }
  return 2 * elliptic_k(k2) / lambda;
}

static void run_flips(const double w0[3], double *interval, double *predicted, int *nflip) {
  const double I[3] = {0.01, 0.02, 0.03};
  sim_model *m = load_body("[0.01, 0.02, 0.03, 0, 0, 0]", "[0, 0, 0]", "rk4");
  sim_data *d = sim_data_new(m);
  memcpy(d->qvel + 3, w0, 3 * sizeof(double));
  double times[64], worst = 0;
  int n = 0;
  double prev = d->qvel[4];
  for (int step = 0; step < 60000 && n < 64; step++) { /* 60 s */
    double t0 = d->time;
    sim_step(m, d);
    double cur = d->qvel[4]; /* ω about the intermediate (body y) axis */
    if ((prev < 0) != (cur < 0)) { /* a flip: the crossing by linear interpolation */
      times[n++] = t0 + (d->time - t0) * prev / (prev - cur);
    }
    prev = cur;
  }
  *predicted = flip_interval(I, w0);
  for (int k = 1; k < n; k++) {
    worst = fmax(worst, fabs((times[k] - times[k - 1]) - *predicted));
  }
  *interval = n > 1 ? (times[n - 1] - times[0]) / (n - 1) : 0;
  *nflip = n;
  print_message("Dzhanibekov, ω0 = (%g, %g, %g) rad/s: %d flips, mean interval %.9f s, "
                "closed form %.9f s, worst single interval off by %.2g s\n",
                w0[0], w0[1], w0[2], n, *interval, *predicted, worst);
  assert_true(worst <= 1e-6 * *predicted);
  ts_sim_free(m, d);
}

static void test_dzhanibekov_flip_period(void **state) {
  (void)state;
  double interval, predicted;
  int n;
  /* both families: M² above and below 2E·I2 */
  const double above[3] = {0.01, 5.0, 0.05}, below[3] = {0.05, 5.0, 0.01};
  run_flips(above, &interval, &predicted, &n);
  assert_true(n >= 4);
  assert_true(fabs(interval - predicted) <= 1e-7 * predicted);
  run_flips(below, &interval, &predicted, &n);
  assert_true(n >= 4);
  assert_true(fabs(interval - predicted) <= 1e-7 * predicted);
}

TS_MAIN(test_spinning_conserves, test_euler_drift_is_visible, test_dzhanibekov_flip_period,
        test_falling_body_motion)
