/* tests/sim/test_ball_pendulum.c: a rigid body hanging from a ball joint against closed forms,
 * with no MuJoCo needed. The ABA's branch for bodies of several dofs (S 6×3, D 3×3, sim/aba.c)
 * was checked only against MuJoCo; these motions pin it down where libmujoco-dev is missing.
 *
 * The body: mass m, centre of mass at distance l below the pivot on its own −z axis, inertia
 * about the centre of mass diag(I1, I1, I3), so I1' = I1 + m·l² about the pivot.
 *
 * - Planar swing released at rest from θ0 about x: I1'·θ'' = −m·g·l·sin θ, whose period is
 *   T = 4·sqrt(I1'/(m·g·l))·K(sin(θ0/2)) (K the complete elliptic integral of the first kind,
 *   by the arithmetic-geometric mean).
 * - Conical motion: tilted by θ from the downward vertical, without spin about its own axis
 *   (ω·â = 0, â the axis to the centre of mass), precessing about the vertical at Ω with
 *   Ω² = m·g·l/(I1'·cos θ) (Lagrange's equation for θ at θ' = 0), θ stays put and the azimuth
 *   of â turns at Ω.
 * - On a cart of mass M that slides freely along x (the ball body's parent, so the branch reads
 *   a moving parent and hands its inertia to it): small swings about y have
 *   ω² = m·g·l/(I1' − m²·l²/(M + m)), and the horizontal momentum M·ẋ + m·ċₓ is constant.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim.h"
#include "support/model.h"
#include "support/skip.h"

static const double PI = 3.14159265358979323846;
static const double G = 9.81, MASS = 1.5, L = 0.4, I1 = 0.012, I3 = 0.005, CART = 2.0;

/* a ball pendulum (on a cart sliding along x when cart is set), no damping, RK4 at dt */
static sim_model *pendulum(int cart, double dt) {
  char json[2048], carriage[512] = "";
  if (cart) {
    snprintf(carriage, sizeof carriage,
             "{ \"name\": \"cart\", \"parent\": \"world\", \"joint\": { \"name\": \"x\", "
             "\"type\": \"slide\", \"axis\": [1, 0, 0] }, \"inertial\": { \"mass\": %.17g, "
             "\"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } },",
             CART);
  }
  snprintf(json, sizeof json,
           "{ \"timestep\": %.17g, \"integrator\": \"rk4\", \"gravity\": [0, 0, %.17g],\n"
           "  \"bodies\": [ %s { \"name\": \"bob\", \"parent\": \"%s\", \"joint\": { \"name\": "
           "\"ball\", \"type\": \"ball\" }, \"inertial\": { \"mass\": %.17g, \"com\": [0, 0, "
           "%.17g], \"inertia\": [%.17g, %.17g, %.17g, 0, 0, 0] } } ] }",
           dt, -G, carriage, cart ? "cart" : "world", MASS, -L, I1, I1, I3);
  return ts_model(json);
}

/* v' = R(q)·v for a quaternion [w, x, y, z] (written here, not the engine's) */
static void rotate(double out[3], const double q[4], const double v[3]) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  const double t[3] = {2 * (y * v[2] - z * v[1]), 2 * (z * v[0] - x * v[2]),
                       2 * (x * v[1] - y * v[0])};
  out[0] = v[0] + w * t[0] + (y * t[2] - z * t[1]);
  out[1] = v[1] + w * t[1] + (z * t[0] - x * t[2]);
  out[2] = v[2] + w * t[2] + (x * t[1] - y * t[0]);
}

/* the unit axis from the pivot to the centre of mass, in world axes */
static void com_axis(double a[3], const double q[4]) {
  const double down[3] = {0, 0, -1};
  rotate(a, q, down);
}

static double elliptic_k(double k) {
  double a = 1, b = sqrt(1 - k * k);
  for (int i = 0; i < 40 && fabs(a - b) > 1e-16 * a; i++) {
    const double an = 0.5 * (a + b);
    b = sqrt(a * b);
    a = an;
  }
  return PI / (2 * a);
}

/* Released at rest from θ0 about x, the swing stays in the yz plane with the exact period. */
static void test_planar_swing_period(void **state) {
  (void)state;
  const double dt = 1e-4, theta0 = 1.2;
  sim_model *m = pendulum(0, dt);
  sim_data *d = sim_data_new(m);
  const double q0[4] = {cos(theta0 / 2), sin(theta0 / 2), 0, 0};
  memcpy(d->qpos, q0, sizeof q0);
  const double Ip = I1 + MASS * L * L;
  const double period = 4 * sqrt(Ip / (MASS * G * L)) * elliptic_k(sin(theta0 / 2));
  /* the swing angle is atan2(a_y, −a_z); its zero crossings are half a period apart */
  double crossings[4], prev = theta0, t_prev = 0, off_plane = 0;
  int n = 0;
  while (n < 4 && d->time < 3 * period) {
    sim_step(m, d);
    double a[3];
    com_axis(a, d->qpos);
    const double angle = atan2(a[1], -a[2]);
    off_plane = fmax(off_plane, fabs(a[0]));
    if ((prev > 0) != (angle > 0)) { /* linear interpolation of the crossing */
      crossings[n++] = t_prev + dt * prev / (prev - angle);
    }
    prev = angle, t_prev = d->time;
  }
  assert_int_equal(n, 4);
  const double measured = (crossings[3] - crossings[1] + crossings[2] - crossings[0]) / 2;
  print_message("ball pendulum, planar swing from %.2f rad: period %.12f s, closed form "
                "%.12f s (relative %.2g), off the plane %.2g\n",
                theta0, measured, period, fabs(measured - period) / period, off_plane);
  assert_true(fabs(measured - period) <= 1e-7 * period);
  assert_true(off_plane <= 1e-12);
  ts_sim_free(m, d);
}

/* Tilted by θ and precessing at the closed-form Ω, the body keeps its tilt and turns at Ω. */
static void test_conical_precession(void **state) {
  (void)state;
  const double dt = 1e-3, theta = 0.7;
  sim_model *m = pendulum(0, dt);
  sim_data *d = sim_data_new(m);
  const double Ip = I1 + MASS * L * L, omega = sqrt(MASS * G * L / (Ip * cos(theta)));
  const double q0[4] = {cos(theta / 2), sin(theta / 2), 0, 0};
  memcpy(d->qpos, q0, sizeof q0);
  /* ω = Ω·(ẑ − (ẑ·â)·â) in world axes, handed to the joint in body axes: R^T·ω */
  double a[3];
  com_axis(a, q0);
  const double w_world[3] = {-omega * a[2] * a[0], -omega * a[2] * a[1],
                             omega * (1 - a[2] * a[2])};
  const double q_inv[4] = {q0[0], -q0[1], -q0[2], -q0[3]};
  rotate(d->qvel, q_inv, w_world);
  const double az0 = atan2(a[1], a[0]);
  double tilt_err = 0, az_err = 0;
  const int steps = (int)(3 * 2 * PI / omega / dt); /* three turns */
  double unwrapped = az0, last = az0;
  for (int s = 0; s < steps; s++) {
    sim_step(m, d);
    com_axis(a, d->qpos);
    tilt_err = fmax(tilt_err, fabs(acos(-a[2]) - theta));
    const double az = atan2(a[1], a[0]);
    double step = az - last;
    step -= 2 * PI * round(step / (2 * PI));
    unwrapped += step, last = az;
    az_err = fmax(az_err, fabs(unwrapped - (az0 + omega * d->time)));
  }
  print_message("ball pendulum, conical at %.2f rad, %.4f rad/s: tilt off by %.2g rad, azimuth "
                "off by %.2g rad over %.2f s\n",
                theta, omega, tilt_err, az_err, d->time);
  assert_true(tilt_err <= 1e-9);
  assert_true(az_err <= 1e-8);
  ts_sim_free(m, d);
}

/* horizontal momentum of cart and bob, from qpos and qvel alone */
static double momentum_x(const sim_data *d) {
  const double *q = d->qpos + 1, *w_body = d->qvel + 1;
  double w[3], r[3];
  const double com[3] = {0, 0, -L};
  rotate(w, q, w_body);
  rotate(r, q, com);
  const double cdot_x = d->qvel[0] + (w[1] * r[2] - w[2] * r[1]);
  return CART * d->qvel[0] + MASS * cdot_x;
}

/* Small swings about y on the sliding cart: the closed-form frequency, and the horizontal
 * momentum given at the start (a push of the cart) kept. */
static void test_on_a_sliding_cart(void **state) {
  (void)state;
  const double dt = 1e-3, theta0 = 1e-4;
  sim_model *m = pendulum(1, dt);
  assert_int_equal(m->nv, 4);
  sim_data *d = sim_data_new(m);
  const double q0[4] = {cos(theta0 / 2), 0, sin(theta0 / 2), 0};
  memcpy(d->qpos + 1, q0, sizeof q0);
  d->qvel[0] = 0.3;
  const double Ip = I1 + MASS * L * L;
  const double w2 = MASS * G * L / (Ip - MASS * MASS * L * L / (CART + MASS));
  const double period = 2 * PI / sqrt(w2), p0 = momentum_x(d);
  double crossings[5], prev = theta0, t_prev = 0, dp = 0;
  int n = 0;
  while (n < 5 && d->time < 4 * period) {
    sim_step(m, d);
    double a[3];
    com_axis(a, d->qpos + 1);
    const double angle = atan2(-a[0], -a[2]);
    dp = fmax(dp, fabs(momentum_x(d) - p0));
    if ((prev > 0) != (angle > 0)) {
      crossings[n++] = t_prev + dt * prev / (prev - angle);
    }
    prev = angle, t_prev = d->time;
  }
  assert_int_equal(n, 5);
  const double measured = (crossings[4] - crossings[0]) / 2;
  print_message("ball pendulum on a cart: period %.10f s, closed form %.10f s (relative %.2g); "
                "horizontal momentum %.6f kg m/s kept to %.2g\n",
                measured, period, fabs(measured - period) / period, p0, dp);
  assert_true(fabs(measured - period) <= 1e-7 * period); /* the swing's own error: O(θ0²) */
  assert_true(dp <= 1e-12 * fabs(p0) + 1e-14);
  ts_sim_free(m, d);
}

TS_MAIN(test_planar_swing_period, test_conical_precession, test_on_a_sliding_cart)
