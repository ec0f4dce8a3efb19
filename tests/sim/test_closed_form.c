/* tests/sim/test_closed_form.c: the engine's double pendulum against equations of motion derived
 * here by Lagrange, independently of sim/.
 *
 * Model (configs/double_pendulum.json): two uniform rods, mass m = 1 kg, length l = 1 m, COM at
 * the middle (c = l/2), inertia about the COM for rotation about y: I = m·l²/12. Hinge 1 about +y
 * at the world origin, hinge 2 about +y at the tip of rod 1. At q = 0 both rods lie along +x.
 * Gravity g = 9.81 m/s² along −z.
 *
 * Angles, as the engine defines them: θ1 is rod 1's rotation about +y (absolute), θ2 is rod 2's
 * rotation relative to rod 1. A rotation by a about +y maps x̂ to
 *     u(a) = (cos a, 0, −sin a),   du/da = w(a) = (−sin a, 0, −cos a),
 * so positive angles swing +x toward −z. |w| = 1 and w(a)·w(b) = cos(a − b).
 *
 * COM positions, with φ = θ1 + θ2 the absolute angle of rod 2:
 *     p1 = c1·u(θ1),                 ṗ1 = c1·θ̇1·w(θ1)
 *     p2 = l1·u(θ1) + c2·u(φ),       ṗ2 = l1·θ̇1·w(θ1) + c2·φ̇·w(φ)
 *     |ṗ2|² = l1²θ̇1² + c2²φ̇² + 2·l1·c2·θ̇1·φ̇·cos θ2
 * Kinetic energy (translation of each COM plus rotation about it; both rods spin about y only,
 * at rates θ̇1 and φ̇):
 *     T = ½(m1c1² + I1)θ̇1² + ½m2|ṗ2|² + ½I2φ̇²  = ½ θ̇ᵀ M(θ2) θ̇ with
 *     M11 = I1 + m1c1² + I2 + m2(l1² + c2² + 2·l1·c2·cos θ2)
 *     M12 = M21 = I2 + m2(c2² + l1·c2·cos θ2)
 *     M22 = I2 + m2c2²
 * Potential energy (z of each COM is −c·sin of its absolute angle):
 *     V = −g[(m1c1 + m2l1)·sin θ1 + m2c2·sin φ]
 * Lagrange: M θ̈ + c(θ, θ̇) + G(θ) = τ, with Christoffel symbols
 * Γijk = ½(∂Mij/∂qk + ∂Mik/∂qj − ∂Mjk/∂qi). Only ∂/∂θ2 is non-zero: ∂M11/∂θ2 = −2h,
 * ∂M12/∂θ2 = −h, ∂M22/∂θ2 = 0, with h = m2·l1·c2·sin θ2. Hence
 *     c1 = −h(2θ̇1θ̇2 + θ̇2²),    c2 = h·θ̇1²
 *     G1 = ∂V/∂θ1 = −g[(m1c1 + m2l1)·cos θ1 + m2c2·cos φ],   G2 = ∂V/∂θ2 = −g·m2c2·cos φ
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

/* splitmix64: the test's own seeded random numbers */
static uint64_t rng_state;

static double uniform(double lo, double hi) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return lo + (hi - lo) * (double)(z >> 11) * 0x1.0p-53;
}

/* the rods as described above; g is the magnitude of gravity */
typedef struct pendulum {
  double m1, m2, l1, c1, c2, i1, i2, g;
} pendulum;

static pendulum pendulum_nominal(void) {
  pendulum p = {1.0, 1.0, 1.0, 0.5, 0.5, 1.0 / 12.0, 1.0 / 12.0, 9.81};
  return p;
}

static void pend_mass(const pendulum *p, const double q[2], double mm[4]) {
  double k = p->m2 * p->l1 * p->c2 * cos(q[1]);
  mm[0] = p->i1 + p->m1 * p->c1 * p->c1 + p->i2 + p->m2 * (p->l1 * p->l1 + p->c2 * p->c2) + 2 * k;
  mm[1] = p->i2 + p->m2 * p->c2 * p->c2 + k;
  mm[2] = mm[1];
  mm[3] = p->i2 + p->m2 * p->c2 * p->c2;
}

/* c(θ, θ̇) + G(θ) */
static void pend_bias(const pendulum *p, const double q[2], const double qd[2], double b[2]) {
  double h = p->m2 * p->l1 * p->c2 * sin(q[1]);
  double cphi = cos(q[0] + q[1]);
  b[0] = -h * (2 * qd[0] * qd[1] + qd[1] * qd[1]) -
         p->g * ((p->m1 * p->c1 + p->m2 * p->l1) * cos(q[0]) + p->m2 * p->c2 * cphi);
  b[1] = h * qd[0] * qd[0] - p->g * p->m2 * p->c2 * cphi;
}

/* θ̈ = M⁻¹(τ − c − G), by the 2×2 inverse */
static void pend_accel(const pendulum *p, const double q[2], const double qd[2],
                       const double tau[2], double qdd[2]) {
  double mm[4], b[2];
  pend_mass(p, q, mm);
  pend_bias(p, q, qd, b);
  double r0 = tau[0] - b[0], r1 = tau[1] - b[1];
  double det = mm[0] * mm[3] - mm[1] * mm[2];
  qdd[0] = (mm[3] * r0 - mm[1] * r1) / det;
  qdd[1] = (mm[0] * r1 - mm[2] * r0) / det;
}

static double pend_kinetic(const pendulum *p, const double q[2], const double qd[2]) {
  double mm[4];
  pend_mass(p, q, mm);
  return 0.5 * (mm[0] * qd[0] * qd[0] + 2 * mm[1] * qd[0] * qd[1] + mm[3] * qd[1] * qd[1]);
}

static double pend_potential(const pendulum *p, const double q[2]) {
  return -p->g * ((p->m1 * p->c1 + p->m2 * p->l1) * sin(q[0]) + p->m2 * p->c2 * sin(q[0] + q[1]));
}

/* COM positions p1, p2 in world coordinates */
static void pend_coms(const pendulum *p, const double q[2], double p1[3], double p2[3]) {
  double phi = q[0] + q[1];
  p1[0] = p->c1 * cos(q[0]);
  p1[1] = 0;
  p1[2] = -p->c1 * sin(q[0]);
  p2[0] = p->l1 * cos(q[0]) + p->c2 * cos(phi);
  p2[1] = 0;
  p2[2] = -p->l1 * sin(q[0]) - p->c2 * sin(phi);
}

/* --- fixture ------------------------------------------------------------------------------ */

static sim_model *model;

static int setup(void **state) {
  *state = model = ts_config("double_pendulum");
  return 0;
}

/* engine qacc at (q, qd, tau), in a separate data so that a stepping run is not disturbed */
static void engine_qacc(sim_data *probe, const double q[2], const double qd[2],
                        const double tau[2], double qacc[2]) {
  for (int i = 0; i < 2; i++) {
    probe->qpos[i] = q[i];
    probe->qvel[i] = qd[i];
    probe->qfrc_applied[i] = tau[i];
  }
  sim_forward(model, probe);
  qacc[0] = probe->qacc[0];
  qacc[1] = probe->qacc[1];
}

static double max_abs_diff2(const double a[2], const double b[2]) {
  return fmax(fabs(a[0] - b[0]), fabs(a[1] - b[1]));
}

/* Accuracy bound for qacc. |qacc| stays below ~210 rad/s² on these runs and M is well conditioned
 * (eigenvalues ~0.05..2.7 kg·m²), so double rounding in either computation is ~1e-13 rad/s²;
 * 1e-10 leaves 1000× margin yet catches any modelling slip (a 1e-9 relative change of one mass
 * already shows, see the expected-failure test). The config stores I = 0.0833333333333333
 * rather than 1/12: that difference (3e-17) moves qacc by ~1e-15. */
#define QACC_TOL 1e-10

/* a data of the suite's model */
static sim_data *new_data(void) {
  sim_data *d = sim_data_new(model);
  assert_non_null(d);
  return d;
}

/* the model set to integrator and timestep (the caller restores model->opt), and a data of it at
 * the start */
static sim_data *data_with(sim_integrator integrator, double timestep) {
  sim_data *d = new_data();
  model->opt.integrator = integrator;
  model->opt.timestep = timestep;
  sim_data_reset(model, d);
  return d;
}

/* Runs the engine from `q0` at rest with constant torque `tau` and compares, at every state, the
 * engine's qacc with the closed form of `p`; returns the largest error. */
static double run_and_compare(sim_integrator integrator, double timestep, double duration,
                              const double tau[2], const pendulum *p, double *max_qacc) {
  sim_data *probe = new_data();
  sim_option saved = model->opt;
  sim_data *d = data_with(integrator, timestep);
  d->qfrc_applied[0] = tau[0];
  d->qfrc_applied[1] = tau[1];
  int nstep = (int)lround(duration / timestep);
  double worst = 0, amax = 0;
  for (int k = 0; k <= nstep; k++) {
    double a_eng[2], a_ref[2];
    engine_qacc(probe, d->qpos, d->qvel, tau, a_eng);
    pend_accel(p, d->qpos, d->qvel, tau, a_ref);
    worst = fmax(worst, max_abs_diff2(a_eng, a_ref));
    amax = fmax(amax, fmax(fabs(a_ref[0]), fabs(a_ref[1])));
    if (k < nstep) sim_step(model, d);
  }
  model->opt = saved;
  sim_data_free(probe);
  sim_data_free(d);
  if (max_qacc) *max_qacc = amax;
  return worst;
}

/* --- tests -------------------------------------------------------------------------------- */

/* the model is the one the derivation assumes: two dofs, the shipped gravity, horizontal start */
static void test_model_matches_derivation(void **state) {
  (void)state;
  assert_int_equal(model->nv, 2);
  assert_int_equal(model->nq, 2);
  assert_true(model->opt.gravity[0] == 0 && model->opt.gravity[1] == 0);
  assert_true(model->opt.gravity[2] == -9.81);
  assert_true(model->qpos0[0] == 0 && model->qpos0[1] == 0);
}

/* angle convention: the engine's COM positions equal p1(θ), p2(θ) above. Tolerance: positions of
 * order 1 m through two rotations, rounding ~1e-16 m; 1e-12 m. */
static void test_kinematics_convention(void **state) {
  (void)state;
  pendulum p = pendulum_nominal();
  sim_data *d = new_data();
  rng_state = 11;
  int b1 = sim_model_body(model, "rod1"), b2 = sim_model_body(model, "rod2");
  assert_true(b1 > 0 && b2 > 0);
  for (int k = 0; k < 200; k++) {
    double q[2] = {uniform(-PI, PI), uniform(-PI, PI)};
    double p1[3], p2[3];
    d->qpos[0] = q[0];
    d->qpos[1] = q[1];
    sim_kinematics(model, d);
    pend_coms(&p, q, p1, p2);
    for (int i = 0; i < 3; i++) {
      assert_true(fabs(d->xipos[3 * b1 + i] - p1[i]) < 1e-12);
      assert_true(fabs(d->xipos[3 * b2 + i] - p2[i]) < 1e-12);
    }
  }
  sim_data_free(d);
}

/* 10 s of 2 ms steps of the nominal pendulum under constant torques tau: every step's qacc
 * within QACC_TOL of the closed form */
static void expect_closed_form_run(sim_integrator integrator, const double tau[2],
                                   const char *what) {
  pendulum p = pendulum_nominal();
  double amax;
  const double err = run_and_compare(integrator, 0.002, 10.0, tau, &p, &amax);
  print_message("%s: max |qacc - closed form| = %.3e rad/s² (max |qacc| %.1f)\n", what, err,
                amax);
  assert_true(err <= QACC_TOL);
}

TS_TEST(test_rk4_trajectory,
        expect_closed_form_run(SIM_INTEGRATOR_RK4, (const double[2]){0, 0}, "rk4 2 ms, 10 s"))

TS_TEST(test_euler_trajectory,
        expect_closed_form_run(SIM_INTEGRATOR_EULER, (const double[2]){0, 0}, "euler 2 ms, 10 s"))

static void test_constant_torque(void **state) {
  (void)state;
  expect_closed_form_run(SIM_INTEGRATOR_RK4, (const double[2]){0.7, -0.3},
                         "rk4 with τ = (0.7, -0.3) N·m");
}

/* random states over the whole circle, |θ̇| ≤ 6 rad/s, |τ| ≤ 5 N·m (|qacc| ≲ 300 rad/s²; the
 * error is compared relative to max(1, |qacc|) so rounding, ~1e-15 relative, stays far below);
 * also M from CRBA and c + G from RNEA separately, to name the culprit if qacc disagrees */
static void test_random_states(void **state) {
  (void)state;
  pendulum p = pendulum_nominal();
  sim_data *probe = new_data();
  rng_state = 12345;
  double worst = 0, worst_m = 0, worst_b = 0;
  for (int k = 0; k < 5000; k++) {
    double q[2], qd[2], tau[2], a_eng[2], a_ref[2];
    for (int i = 0; i < 2; i++) {
      q[i] = uniform(-PI, PI);
      qd[i] = uniform(-6, 6);
      tau[i] = uniform(-5, 5);
    }
    engine_qacc(probe, q, qd, tau, a_eng);
    pend_accel(&p, q, qd, tau, a_ref);
    double scale = fmax(1.0, fmax(fabs(a_ref[0]), fabs(a_ref[1])));
    worst = fmax(worst, max_abs_diff2(a_eng, a_ref) / scale);
    /* the parts: CRBA's M and RNEA's c + G against M(θ2) and c + G above */
    double mm[4], b[2];
    pend_mass(&p, q, mm);
    pend_bias(&p, q, qd, b);
    sim_crba(model, probe);
    sim_rnea_bias(model, probe);
    for (int i = 0; i < 4; i++) worst_m = fmax(worst_m, fabs(probe->qM[i] - mm[i]));
    double bscale = fmax(1.0, fmax(fabs(b[0]), fabs(b[1])));
    worst_b = fmax(worst_b, max_abs_diff2(probe->qfrc_bias, b) / bscale);
  }
  print_message("random states: max |Δqacc| / max(1, |qacc|) = %.3e\n", worst);
  print_message("random states: max |ΔM| = %.3e kg·m², max |Δbias| / max(1, |bias|) = %.3e\n",
                worst_m, worst_b);
  assert_true(worst <= QACC_TOL);
  /* M entries ≤ 2.7 kg·m² and bias ≲ 100 N·m, each a few operations: rounding ~1e-15 → 1e-12 */
  assert_true(worst_m <= 1e-12);
  assert_true(worst_b <= 1e-12);
  sim_data_free(probe);
}

/* energies: T and V of the engine equal the closed forms along the RK4 run (energies ≲ 30 J,
 * rounding ~1e-14 J; tolerance 1e-10 J) */
static void test_energies(void **state) {
  (void)state;
  pendulum p = pendulum_nominal();
  sim_option saved = model->opt;
  sim_data *d = data_with(SIM_INTEGRATOR_RK4, 0.002);
  double worst_t = 0, worst_v = 0;
  for (int k = 0; k <= 2000; k++) {
    sim_kinematics(model, d);
    double t_ref = pend_kinetic(&p, d->qpos, d->qvel);
    worst_t = fmax(worst_t, fabs(sim_energy_kinetic(model, d) - t_ref));
    worst_v = fmax(worst_v, fabs(sim_energy_potential(model, d) - pend_potential(&p, d->qpos)));
    sim_step(model, d);
  }
  model->opt = saved;
  print_message("energies over 4 s: max |ΔT| = %.3e J, max |ΔV| = %.3e J\n", worst_t, worst_v);
  assert_true(worst_t <= 1e-10);
  assert_true(worst_v <= 1e-10);
  sim_data_free(d);
}

/* the engine's RK4 is the classic scheme: stepping the closed form with the same tableau gives
 * the same trajectory. Differences start at rounding (1e-16) per step and grow with the motion's
 * sensitivity (over 1 s from rest the pendulum is not yet chaotic; growth ≲ 1e3), so 1e-10 rad. */
static void closed_form_rk4(const pendulum *p, double h, double q[2], double v[2]) {
  const double tau[2] = {0, 0};
  double kq[4][2], kv[4][2], qs[2], vs[2];
  static const double c[4] = {0, 0.5, 0.5, 1};
  for (int s = 0; s < 4; s++) {
    for (int i = 0; i < 2; i++) {
      qs[i] = s ? q[i] + c[s] * h * kq[s - 1][i] : q[i];
      vs[i] = s ? v[i] + c[s] * h * kv[s - 1][i] : v[i];
    }
    kq[s][0] = vs[0];
    kq[s][1] = vs[1];
    pend_accel(p, qs, vs, tau, kv[s]);
  }
  for (int i = 0; i < 2; i++) {
    q[i] += h / 6 * (kq[0][i] + 2 * kq[1][i] + 2 * kq[2][i] + kq[3][i]);
    v[i] += h / 6 * (kv[0][i] + 2 * kv[1][i] + 2 * kv[2][i] + kv[3][i]);
  }
}

static void test_rk4_matches_classic_tableau(void **state) {
  (void)state;
  pendulum p = pendulum_nominal();
  sim_option saved = model->opt;
  sim_data *d = data_with(SIM_INTEGRATOR_RK4, 0.002);
  double q[2] = {0, 0}, v[2] = {0, 0}, worst = 0;
  for (int k = 0; k < 500; k++) {
    sim_step(model, d);
    closed_form_rk4(&p, 0.002, q, v);
    worst = fmax(worst, max_abs_diff2(q, d->qpos));
  }
  model->opt = saved;
  print_message("rk4 vs closed-form rk4 over 1 s: max |Δq| = %.3e rad\n", worst);
  assert_true(worst <= 1e-10);
  sim_data_free(d);
}

/* expected failure: the same comparison against a closed form whose rod 2 is 1% heavier must
 * exceed the tolerance by orders of magnitude, so the check above can fail */
static void test_perturbed_model_detected(void **state) {
  (void)state;
  pendulum p = pendulum_nominal();
  p.m2 *= 1.01;
  const double tau[2] = {0, 0};
  double err = run_and_compare(SIM_INTEGRATOR_RK4, 0.002, 2.0, tau, &p, NULL);
  print_message("closed form with m2 +1%%: max error %.3e rad/s² (must be >> %.0e)\n", err,
                QACC_TOL);
  assert_true(err > 1e4 * QACC_TOL);

  /* and a perturbation near the tolerance: m2 changed by 1e-9 relative still shows */
  p = pendulum_nominal();
  p.m2 *= 1 + 1e-9;
  err = run_and_compare(SIM_INTEGRATOR_RK4, 0.002, 2.0, tau, &p, NULL);
  print_message("closed form with m2 +1e-9 relative: max error %.3e rad/s²\n", err);
  assert_true(err > QACC_TOL);
}

TS_MAIN_WITH(setup, ts_model_teardown, test_model_matches_derivation, test_kinematics_convention,
                              test_rk4_trajectory, test_euler_trajectory, test_constant_torque,
                              test_random_states, test_energies, test_rk4_matches_classic_tableau,
                              test_perturbed_model_detected)
