/* tests/sim/test_constraint.c: the constraint stage against closed forms.
 *
 *  - M·x and M⁻¹·x along the tree (crba.c) against the dense CRBA matrix;
 *  - Coulomb friction: a joint with frictionloss F slides at (τ − F)/I under τ > F (exactly,
 *    once the row is at its bound), and under |τ| < F holds still up to the soft model's
 *    creep, a constant velocity τ·R/b;
 *  - a joint pressed onto a limit settles at the violation where the soft spring balances the
 *    load: f = k·imp(x)·x/R(x), solved here by bisection with the impedance written out anew.
 * The formulas are MuJoCo's soft-constraint model (docs/architecture.md); nothing here is
 * computed by the code under test except the simulated motion.
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

/* a 1.5 kg box on a 0.5 kg carriage: slides x (the carriage) and z (the box), μ = 0.5 */
#define SLIDING_BOX ACHILLES_SOURCE_DIR "/tests/support/robots/sliding_box.json"


/* --- M along the tree ------------------------------------------------------------------------ */

/* a branching tree: dof parents skip a welded body and a sibling branch */
static const char tree_json[] =
    "{ \"bodies\": [\n"
    "  { \"name\": \"a\", \"parent\": \"world\", \"joint\": { \"name\": \"ja\", \"type\": \"hinge\",\n"
    "    \"axis\": [0, 0, 1], \"armature\": 0.01 }, \"inertial\": { \"mass\": 2, \"com\": [0.1, 0, 0.1],\n"
    "    \"inertia\": [0.02, 0.03, 0.015, 0.001, 0, 0] } },\n"
    "  { \"name\": \"b\", \"parent\": \"a\", \"pos\": [0, 0.2, 0.3], \"joint\": { \"name\": \"jb\",\n"
    "    \"type\": \"hinge\", \"axis\": [0, 1, 0] }, \"inertial\": { \"mass\": 1, \"com\": [0.1, 0, 0],\n"
    "    \"inertia\": [0.001, 0.004, 0.004, 0, 0, 0] } },\n"
    "  { \"name\": \"c\", \"parent\": \"a\", \"pos\": [0, -0.2, 0.3], \"inertial\": { \"mass\": 0.5,\n"
    "    \"inertia\": [0.001, 0.001, 0.001, 0, 0, 0] } },\n"
    "  { \"name\": \"d\", \"parent\": \"c\", \"pos\": [0.1, 0, 0], \"joint\": { \"name\": \"jd\",\n"
    "    \"type\": \"slide\", \"axis\": [0.6, 0, 0.8] }, \"inertial\": { \"mass\": 0.3,\n"
    "    \"inertia\": [0.0005, 0.0005, 0.0005, 0, 0, 0] } },\n"
    "  { \"name\": \"e\", \"parent\": \"b\", \"pos\": [0.25, 0, 0], \"joint\": { \"name\": \"je\",\n"
    "    \"type\": \"hinge\", \"axis\": [1, 0, 0] }, \"inertial\": { \"mass\": 0.4, \"com\": [0.05, 0, 0],\n"
    "    \"inertia\": [0.0002, 0.0003, 0.0003, 0, 0, 0] } } ] }\n";

static void test_tree_mass_matrix_products(void **state) {
  (void)state;
  sim_model *m = ts_model(tree_json);
  sim_data *d = sim_data_new(m);
  int nv = m->nv;
  assert_int_equal(nv, 4);
  /* dofs of a, b, d, e: d's parent dof is a's (c is welded), e's is b's */
  assert_int_equal(m->dof_parent[0], -1);
  assert_int_equal(m->dof_parent[1], 0);
  assert_int_equal(m->dof_parent[2], 0);
  assert_int_equal(m->dof_parent[3], 1);
  const double q[4] = {0.3, -0.7, 0.05, 1.1}, x[4] = {1.0, -2.0, 0.5, 3.0};
  memcpy(d->qpos, q, sizeof q);
  sim_kinematics(m, d);
  sim_crba(m, d);
  sim_factor_m(m, d);
  double Mx[4], dense[4] = {0}, y[4], e_mul = 0, e_solve = 0;
  sim_mul_m(m, d, Mx, x);
  for (int i = 0; i < nv; i++) {
    dense[i] = 0;
    for (int k = 0; k < nv; k++) {
      dense[i] += d->qM[i * nv + k] * x[k];
    }
    e_mul = fmax(e_mul, fabs(Mx[i] - dense[i]));
  }
  memcpy(y, dense, sizeof y);
  sim_solve_m(m, d, y); /* M⁻¹·(M·x) = x */
  for (int i = 0; i < nv; i++) {
    e_solve = fmax(e_solve, fabs(y[i] - x[i]));
  }
  print_message("tree M·x error %.2g, M^-1·M·x error %.2g\n", e_mul, e_solve);
  assert_true(e_mul <= 1e-15);
  assert_true(e_solve <= 1e-12);
  /* the coupling of the two branches (b and d) is zero: M is tree-sparse */
  assert_true(d->qM[1 * nv + 2] == 0);
  ts_sim_free(m, d);
}

/* --- the soft model, written out independently ---------------------------------------------- */

static const double solref_default[2] = {0.02, 1};
static const double solimp_default[5] = {0.9, 0.95, 0.001, 0.5, 2};

/* imp(x) from the documented curve: dmin + (dmax − dmin)·y(x/width), y = half-power sigmoid */
static double impedance(const double s[5], double x) {
  double r = fabs(x) / s[2];
  if (r >= 1) {
    return s[1];
  }
  double y = r <= s[3] ? pow(r, s[4]) / pow(s[3], s[4] - 1)
                       : 1 - pow(1 - r, s[4]) / pow(1 - s[3], s[4] - 1);
  return s[0] + (s[1] - s[0]) * y;
}

static double stiffness(const double ref[2], double dmax) {
  return 1 / (dmax * dmax * ref[0] * ref[0] * ref[1] * ref[1]);
}

static double damping(const double ref[2], double dmax) {
  return 2 / (dmax * ref[0]);
}

/* --- friction --------------------------------------------------------------------------------- */

/* a wheel on a vertical axis (gravity exerts no torque): I = izz + m·r² = 0.01 + 1·0.1² */
#define WHEEL(extra)                                                                           \
  "{ \"timestep\": 0.001, \"bodies\": [ { \"name\": \"w\", \"parent\": \"world\",\n"          \
  "  \"joint\": { \"name\": \"j\", \"type\": \"hinge\", \"axis\": [0, 0, 1] " extra " },\n"    \
  "  \"inertial\": { \"mass\": 1, \"com\": [0.1, 0, 0],\n"                                     \
  "                \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } } ] }\n"
static const double wheel_I = 0.02, wheel_F = 0.5;

static void test_friction_slides_at_tau_minus_f(void **state) {
  (void)state;
  sim_model *m = ts_model(WHEEL(", \"frictionloss\": 0.5"));
  sim_data *d = sim_data_new(m);
  const double tau = 0.8, expected = (tau - wheel_F) / wheel_I;
  d->qfrc_applied[0] = tau;
  double e_acc = 0;
  for (int s = 0; s < 1000; s++) {
    /* from rest on: the unconstrained push τ·D/(I + D) already exceeds F, so the friction row
     * sits at its bound −F and the soft model gives the rigid answer, (τ − F)/I */
    sim_forward(m, d);
    e_acc = fmax(e_acc, fabs(d->qacc[0] - expected) / expected);
    assert_int_equal(d->efc_state[0], SIM_CSTATE_LINEARPOS);
    sim_step(m, d);
  }
  double v_rigid = expected * d->time;
  print_message("sliding: qacc error %.2g relative; v(1 s) %.15g, rigid Coulomb %.15g\n", e_acc,
                d->qvel[0], v_rigid);
  assert_true(e_acc <= 1e-12);
  assert_true(fabs(d->qvel[0] - v_rigid) <= 1e-12 * v_rigid);
  ts_sim_free(m, d);
}

/* below the breakaway torque the soft friction row is a damper of rate D·b: the joint creeps
 * at τ/(D·b) = τ·R/b, R = (1 − dmin)/dmin · 1/I (the impedance at zero violation is dmin) */
static void test_friction_sticks_below_f(void **state) {
  (void)state;
  const char *cases[] = {WHEEL(", \"frictionloss\": 0.5"),
                         WHEEL(", \"frictionloss\": 0.5, "
                               "\"solimp_friction\": [0.999, 0.999, 0.001, 0.5, 2]")};
  const double dmin[] = {0.9, 0.999};
  for (int c = 0; c < 2; c++) {
    sim_model *m = ts_model(cases[c]);
    sim_data *d = sim_data_new(m);
    double tau = 0.3, R = (1 - dmin[c]) / dmin[c] / wheel_I;
    double b = damping(solref_default, dmin[c] == 0.9 ? solimp_default[1] : 0.999);
    double creep = tau * R / b;
    for (int sign = -1; sign <= 1; sign += 2) {
      sim_data_reset(m, d);
      d->qfrc_applied[0] = sign * tau;
      for (int s = 0; s < 1000; s++) {
        sim_step(m, d);
        assert_int_equal(d->efc_state[0], SIM_CSTATE_QUADRATIC); /* never breaks away */
        assert_true(fabs(d->qvel[0]) <= creep * (1 + 1e-9));
      }
      print_message("sticking (dmin %g): |tau| = %.2g < F = %.2g; v(1 s) = %.6g rad/s, creep "
                    "tau·R/b = %.6g, moved %.3g rad in 1 s\n", dmin[c], tau, wheel_F, d->qvel[0],
                    sign * creep, d->qpos[0]);
      assert_true(fabs(d->qvel[0] - sign * creep) <= 1e-6 * creep);
      assert_true(fabs(d->qpos[0]) <= creep * 1.0);
    }
    ts_sim_free(m, d);
  }
}

/* --- limits ----------------------------------------------------------------------------------- */

/* Violation x > 0 at which the soft limit holds the load f: the row's force at rest is
 * D·(−aref) = k·imp(x)·x/R(x) with R = (1 − imp)/imp · invweight0. */
static double settled_violation(double f, double invweight0, const double ref[2],
                                const double imp[5]) {
  double k = stiffness(ref, imp[1]), lo = 0, hi = 1;
  for (int it = 0; it < 200; it++) {
    double x = 0.5 * (lo + hi), I = impedance(imp, x);
    double force = k * I * x / ((1 - I) / I * invweight0);
    (force < f ? &lo : &hi)[0] = x;
  }
  return 0.5 * (lo + hi);
}

/* a 1 kg slider on a vertical rail, resting on its lower stop at 0 */
static void test_limit_settles_under_gravity(void **state) {
  (void)state;
  sim_model *m = ts_model(
      "{ \"timestep\": 0.001, \"bodies\": [ { \"name\": \"s\", \"parent\": \"world\",\n"
      "  \"joint\": { \"name\": \"j\", \"type\": \"slide\", \"axis\": [0, 0, 1], \"limited\": true,\n"
      "             \"range\": [0, 1] },\n"
      "  \"inertial\": { \"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } } ] }\n");
  sim_data *d = sim_data_new(m);
  d->qpos[0] = 0.01; /* dropped from 1 cm */
  ts_steps(m, d, 2000);
  double x = settled_violation(9.81, 1.0, solref_default, solimp_default);
  print_message("slider on its stop: settled at %.6g m, predicted %.6g m (imp %.4g)\n",
                d->qpos[0], -x, impedance(solimp_default, x));
  assert_true(fabs(d->qpos[0] + x) <= 0.01 * x);
  assert_true(fabs(d->qvel[0]) <= 1e-6);
  ts_sim_free(m, d);
}

/* a pendulum arm resting on its upper stop under gravity, with an underdamped custom solref
 * and a wider impedance curve; the load at the stop is m·g·r·cos(q) */
static void test_limit_settles_custom_solref(void **state) {
  (void)state;
  sim_model *m = ts_model(
      "{ \"timestep\": 0.001, \"bodies\": [ { \"name\": \"p\", \"parent\": \"world\",\n"
      "  \"joint\": { \"name\": \"j\", \"type\": \"hinge\", \"axis\": [0, 1, 0], \"limited\": true,\n"
      "             \"range\": [-1, 0.2], \"solref_limit\": [0.05, 0.5],\n"
      "             \"solimp_limit\": [0.5, 0.99, 0.05, 0.3, 3] },\n"
      "  \"inertial\": { \"mass\": 2, \"com\": [0.3, 0, 0],\n"
      "                \"inertia\": [0.001, 0.01, 0.01, 0, 0, 0] } } ] }\n");
  sim_data *d = sim_data_new(m);
  d->qpos[0] = 0.1;
  ts_steps(m, d, 5000);
  /* hinge about +y: gravity's torque on a COM at +x is +m·g·r·cos(q) (it lowers the arm,
   * raising q) against the upper stop; I = 0.01 + 2·0.3² */
  const double ref[2] = {0.05, 0.5}, imp[5] = {0.5, 0.99, 0.05, 0.3, 3};
  double I = 0.01 + 2 * 0.09, q = d->qpos[0];
  double x = settled_violation(2 * 9.81 * 0.3 * cos(q), 1 / I, ref, imp);
  print_message("arm on its stop: settled at %.6g rad, predicted %.6g rad\n", q, 0.2 + x);
  assert_true(fabs((q - 0.2) - x) <= 0.01 * x);
  assert_true(fabs(d->qvel[0]) <= 1e-6);
  ts_sim_free(m, d);
}

/* inactive limits make no rows and leave the solver idle */
static void test_inactive_limits_cost_nothing(void **state) {
  (void)state;
  sim_model *m = ts_model(WHEEL(", \"limited\": true, \"range\": [-1, 1]"));
  sim_data *d = sim_data_new(m);
  d->qfrc_applied[0] = 0.01;
  sim_step(m, d);
  assert_int_equal(d->nefc, 0);
  assert_int_equal(d->solver.iterations, 0);
  d->qpos[0] = 1.001;
  sim_forward(m, d);
  assert_int_equal(d->nefc, 1);
  assert_true(d->efc_force[0] > 0 || d->efc_state[0] == SIM_CSTATE_SATISFIED);
  assert_true(d->solver.iterations > 0);
  ts_sim_free(m, d);
}

/* --- contacts --------------------------------------------------------------------------------- */

/* a ball of radius 0.1 on a vertical rail above the floor (flat plane at z = 0) */
static const char ball_json[] =
    "{ \"timestep\": 0.001, \"bodies\": [ { \"name\": \"ball\", \"parent\": \"world\",\n"
    "  \"joint\": { \"name\": \"z\", \"type\": \"slide\", \"axis\": [0, 0, 1] },\n"
    "  \"inertial\": { \"mass\": 2, \"inertia\": [0.008, 0.008, 0.008, 0, 0, 0] } } ],\n"
    "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },\n"
    "    { \"name\": \"s\", \"body\": \"ball\", \"type\": \"sphere\", \"size\": [0.1] } ] }\n";

/* At rest the four pyramid edges (all along the normal here) share the weight m·g, each
 * pushing D·k·imp·x at penetration x, with the pyramidal R = 2μ²(1 + μ²)·(1 − imp)/imp·w and
 * w = 1/(3m), the body's translational invweight0 (only z moves: diag(0, 0, 1/m) averaged). */
static void test_ball_settles(void **state) {
  (void)state;
  sim_model *m = ts_model(ball_json);
  sim_data *d = sim_data_new(m);
  d->qpos[0] = 0.101;
  ts_steps(m, d, 3000);
  const double mass = 2, g = 9.81, mu = 1, w = 1 / (3 * mass);
  double k = stiffness(solref_default, solimp_default[1]), lo = 0, hi = 0.1;
  for (int it = 0; it < 200; it++) {
    double x = 0.5 * (lo + hi), I = impedance(solimp_default, x);
    double R = 2 * mu * mu * (1 + mu * mu) * (1 - I) / I * w;
    (4 * k * I * x / R < mass * g ? &lo : &hi)[0] = x;
  }
  double x = 0.5 * (lo + hi), pen = 0.1 - d->qpos[0];
  print_message("ball at rest: penetration %.6g m, predicted %.6g m; %d contact, normal force "
                "%.6g N (weight %.6g N)\n", pen, x, d->ncon, d->qfrc_constraint[0], mass * g);
  assert_int_equal(d->ncon, 1);
  assert_true(fabs(pen - x) <= 0.01 * x);
  assert_true(fabs(d->qfrc_constraint[0] - mass * g) <= 1e-6 * mass * g);
  ts_sim_free(m, d);
}

/* A box sliding along x on the floor (slides x and z) with μ = 0.5 decelerates at μ·N/m. The
 * pyramid falls short of it by a little: the edges across the motion (n ± μ·t₁) stay active
 * and carry a share of the normal load without adding friction along x (MuJoCo's pyramid does
 * the same: test_constraint_reference's test_sliding_box_shortfall finds MuJoCo 2.2.2's
 * deceleration equal to ours on this model). Measured −2.3 %; bound 3 %. */
static void test_box_slides_at_mu_g(void **state) {
  (void)state;
  sim_model *m = ts_model_file(SLIDING_BOX);
  sim_data *d = sim_data_new(m);
  /* the whole carriage (2 kg) moves in x, only the box (1.5 kg) presses on the floor:
   * deceleration μ·g·1.5/2 */
  d->qpos[1] = 0.0997;
  d->qvel[0] = 2.0;
  double v1 = 0, v2 = 0;
  for (int s = 0; s < 400; s++) {
    sim_step(m, d);
    if (s == 99) {
      v1 = d->qvel[0];
    }
    if (s == 299) {
      v2 = d->qvel[0];
    }
  }
  double decel = (v1 - v2) / 0.2, expected = 0.5 * 9.81 * 1.5 / 2.0;
  print_message("sliding box: deceleration %.6g m/s², mu·N/m = %.6g m/s² (%.2g %% off)\n", decel,
                expected, 100 * (decel - expected) / expected);
  assert_true(fabs(decel - expected) <= 0.03 * expected);
  assert_true(decel < expected);
  ts_sim_free(m, d);
}

/* A box on a plane tilted by θ about y (μ = 0.5 on both), free to move in x and z: it sticks
 * below tan θ = μ (no acceleration; the soft model's creep at constant speed) and slides above at g·(sin θ − μ·cos θ)
 * along the slope (within 3 %, the pyramid's shortfall as for the flat slide). */
static double incline(double theta, double *moved) {
  char json[2048];
  double c = cos(theta / 2), s = sin(theta / 2);
  snprintf(json, sizeof json,
      "{ \"timestep\": 0.001, \"bodies\": [\n"
      "  { \"name\": \"cx\", \"parent\": \"world\", \"joint\": { \"name\": \"x\", \"type\": \"slide\",\n"
      "    \"axis\": [1, 0, 0] }, \"inertial\": { \"mass\": 1e-4, \"inertia\": [1e-6, 1e-6, 1e-6, 0, 0, 0] } },\n"
      "  { \"name\": \"box\", \"parent\": \"cx\", \"joint\": { \"name\": \"z\", \"type\": \"slide\",\n"
      "    \"axis\": [0, 0, 1] }, \"inertial\": { \"mass\": 1, \"inertia\": [1e-3, 1e-3, 1e-3, 0, 0, 0] } } ],\n"
      "  \"geoms\": [ { \"name\": \"slope\", \"body\": \"world\", \"type\": \"plane\",\n"
      "      \"quat\": [%.17g, 0, %.17g, 0], \"friction\": [0.5, 0, 0] },\n"
      "    { \"name\": \"b\", \"body\": \"box\", \"type\": \"box\", \"size\": [0.1, 0.1, 0.1],\n"
      "      \"quat\": [%.17g, 0, %.17g, 0], \"friction\": [0.5, 0, 0] } ] }\n", c, s, c, s);
  sim_model *m = ts_model(json);
  sim_data *d = sim_data_new(m);
  double h = 0.1 - 0.0002; /* resting depth, about where it settles */
  d->qpos[0] = h * sin(theta);
  d->qpos[1] = h * cos(theta);
  double along0 = 0, v1 = 0, v2 = 0;
  for (int k = 0; k < 1000; k++) {
    sim_step(m, d);
    double v = d->qvel[0] * cos(theta) - d->qvel[1] * sin(theta); /* downhill */
    if (k == 199) {
      v1 = v;
      along0 = d->qpos[0] * cos(theta) - d->qpos[1] * sin(theta);
    }
    if (k == 699) {
      v2 = v;
    }
  }
  *moved = d->qpos[0] * cos(theta) - d->qpos[1] * sin(theta) - along0;
  ts_sim_free(m, d);
  return (v2 - v1) / 0.5;
}

static void test_incline_stick_and_slide(void **state) {
  (void)state;
  const double g = 9.81, mu = 0.5;
  double moved, theta = 0.35; /* tan = 0.365 < μ */
  double a = incline(theta, &moved);
  print_message("incline %.2f rad (tan %.3f < mu): moved %.3g m in the last 0.8 s, a %.3g m/s²\n",
                theta, tan(theta), moved, a);
  /* stuck: no acceleration, only the soft contact's creep at constant speed (~1.2 mm/s here;
   * without friction it would slide 1.6 m in that time) */
  assert_true(fabs(a) < 1e-4 * g);
  assert_true(fabs(moved) < 2e-3);
  theta = 0.6; /* tan = 0.684 > μ */
  a = incline(theta, &moved);
  double expected = g * (sin(theta) - mu * cos(theta));
  print_message("incline %.2f rad (tan %.3f > mu): a = %.6g m/s², g(sin - mu cos) = %.6g (%.2g %%)\n",
                theta, tan(theta), a, expected, 100 * (a - expected) / expected);
  assert_true(fabs(a - expected) <= 0.03 * g * mu * cos(theta) + 1e-9);
}

/* A DC motor at full duty drives its joint into the hard stop: the joint rests there, the
 * winding current rises to the stall current V/R (the firmware's stall detection sees it), and
 * the stop's constraint force balances the motor torque kt·i·gear·efficiency. */
static void test_motor_stalls_at_hard_stop(void **state) {
  (void)state;
  static const char json[] =
      "{ \"name\": \"stop\", \"timestep\": 0.001, \"gravity\": [0, 0, 0],\n"
      "  \"bodies\": [ { \"name\": \"link\", \"parent\": \"world\",\n"
      "    \"joint\": { \"name\": \"j\", \"type\": \"hinge\", \"axis\": [0, 0, 1],\n"
      "                 \"damping\": 0.05, \"limited\": true, \"range\": [-1, 0.5] },\n"
      "    \"inertial\": { \"mass\": 1, \"com\": [0.1, 0, 0],\n"
      "                    \"inertia\": [0.001, 0.005, 0.005, 0, 0, 0] } } ],\n"
      "  \"actuators\": [ { \"name\": \"m\", \"joint\": \"j\", \"type\": \"dc_motor\",\n"
      "    \"supply_voltage\": 12, \"resistance\": 4, \"kt\": 0.01, \"gear\": 50,\n"
      "    \"efficiency\": 0.8 } ] }\n";
  sim_model *m = ts_model(json);
  sim_data *d = sim_data_new(m);
  d->ctrl[0] = 1.0; /* full duty */
  ts_steps(m, d, 3000);
  sim_forward(m, d);
  const double stall = 12.0 / 4.0, torque = 0.01 * stall * 50 * 0.8;
  print_message("at the stop: q %.5f rad, qd %.2e rad/s, current %.4f A (stall %.4f), "
                "constraint %.4f N·m (motor %.4f)\n",
                d->qpos[0], d->qvel[0], d->actuator_current[0], stall, d->qfrc_constraint[0],
                torque);
  assert_true(d->qpos[0] > 0.49 && d->qpos[0] < 0.52); /* at the stop, soft by millimetres */
  assert_true(fabs(d->qvel[0]) < 1e-3);
  assert_true(fabs(d->actuator_current[0] - stall) < 1e-3 * stall);
  assert_true(fabs(d->qfrc_constraint[0] + torque) < 1e-3 * torque);
  ts_sim_free(m, d);
}

/* Two spheres on slides pushed into each other with equal and opposite forces come to rest
 * touching: the contact between the two moving bodies carries the push to each, as Newton's
 * third law asks (both bodies' Jacobians in one contact row set). */
static void test_two_bodies_push_each_other(void **state) {
  (void)state;
  static const char json[] =
      "{ \"name\": \"pair\", \"timestep\": 0.001, \"gravity\": [0, 0, 0],\n"
      "  \"bodies\": [\n"
      "  { \"name\": \"a\", \"parent\": \"world\", \"pos\": [-0.5, 0, 0],\n"
      "    \"joint\": { \"name\": \"xa\", \"type\": \"slide\", \"axis\": [1, 0, 0], \"damping\": 2 },\n"
      "    \"inertial\": { \"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } },\n"
      "  { \"name\": \"b\", \"parent\": \"world\", \"pos\": [0.5, 0, 0],\n"
      "    \"joint\": { \"name\": \"xb\", \"type\": \"slide\", \"axis\": [1, 0, 0], \"damping\": 2 },\n"
      "    \"inertial\": { \"mass\": 2, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } } ],\n"
      "  \"geoms\": [ { \"name\": \"sa\", \"body\": \"a\", \"type\": \"sphere\", \"size\": [0.3] },\n"
      "    { \"name\": \"sb\", \"body\": \"b\", \"type\": \"capsule\", \"size\": [0.2, 0.1],\n"
      "      \"quat\": [0.7071067811865476, 0, 0.7071067811865476, 0] } ] }\n";
  sim_model *m = ts_model(json);
  sim_data *d = sim_data_new(m);
  const double F = 3.0;
  for (int s = 0; s < 8000; s++) {
    d->qfrc_applied[0] = F;
    d->qfrc_applied[1] = -F;
    sim_step(m, d);
  }
  sim_forward(m, d);
  /* the capsule lies along x: its near end is 0.1 + 0.2 from its centre; touching means the
   * centres are 0.3 + 0.3 apart, less a small soft penetration */
  const double gap = (0.5 + d->qpos[1]) - (-0.5 + d->qpos[0]);
  print_message("two bodies: gap of centres %.5f m (touching at 0.6), contact forces %.4f and "
                "%.4f N against pushes of %.1f N, velocities %.2e %.2e\n", gap,
                d->qfrc_constraint[0], d->qfrc_constraint[1], F, d->qvel[0], d->qvel[1]);
  assert_int_equal(d->ncon, 1);
  assert_true(gap < 0.6 && gap > 0.59);
  /* at rest (damping has taken the pair's common drift) */
  assert_true(fabs(d->qvel[0]) < 1e-3 && fabs(d->qvel[1]) < 1e-3);
  assert_true(fabs(d->qfrc_constraint[0] + F) < 1e-2 * F);
  assert_true(fabs(d->qfrc_constraint[1] - F) < 1e-2 * F);
  ts_sim_free(m, d);
}

TS_MAIN(test_tree_mass_matrix_products, test_friction_slides_at_tau_minus_f,
        test_friction_sticks_below_f, test_limit_settles_under_gravity,
        test_limit_settles_custom_solref, test_inactive_limits_cost_nothing, test_ball_settles,
        test_box_slides_at_mu_g, test_incline_stick_and_slide, test_motor_stalls_at_hard_stop,
        test_two_bodies_push_each_other)
