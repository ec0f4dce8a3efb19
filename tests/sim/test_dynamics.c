/* tests/sim/test_dynamics.c: the dynamics stages checked against each other and against
 * identities on random kinematic trees (random_tree.h).
 *
 * On 100 trees of 1–30 bodies, at several random states each:
 *  (a) ABA's qacc = M⁻¹(τ + passive − bias), M from CRBA and bias from RNEA, solved here by
 *      Cholesky;
 *  (b) inverse dynamics (RNEA) of ABA's qacc returns τ + passive; the columns of M equal
 *      inverse(e_j) − inverse(0);
 *  (c) M is symmetric positive definite;
 *  (d) kinetic energy = ½ qdᵀ M qd, and also = Σ ½m|v_com|² + ½ωᵀIω + ½ armature·qd² with body
 *      velocities taken by finite differences of the engine's world poses;
 *  (e) ∂V/∂q by finite differences = gravity + spring force (bias at qd = 0 minus passive at
 *      qd = 0); V = −Σ m g·x_com + ½Σ k(q − q_ref)² from the world COMs; and dE/dt = power of
 *      the applied and damping forces, along a short RK4 trajectory and along the exact tangent;
 *  (f) expected failures: perturbed results and a perturbed model are detected;
 *  (g) the trees are what they claim: each loaded model holds the JSON's values (full inertia
 *      tensors, oblique axes), and the engine's world poses equal a forward kinematics written
 *      here from the placements (model.h conventions), which the energy checks rely on.
 *
 * Errors are reported relative to the size of the quantities compared; each tolerance says why.
 * The trees have no actuators; the actuator force (zero) is carried along so that the identities
 * stay complete.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "random_tree.h"
#include "sim/sim.h"
#include "support/model.h"
#include "support/numbers.h"
#include "support/skip.h"

#define NTREE 100
#define NSTATE 6
#define MAXV RT_MAX_BODIES

static const double PI = 3.14159265358979323846;

/* --- fixture: 100 random trees ------------------------------------------------------------ */

static char json[1 << 16];
static sim_model *trees[NTREE];
static uint64_t tree_seed[NTREE];

static rt_spec tree_spec(int k) {
  rt_spec s;
  memset(&s, 0, sizeof s);
  rt_rng rng;
  rt_rng_init(&rng, 7000 + (uint64_t)k);
  /* every fifth tree has the maximum size; otherwise 1–30 bodies */
  s.nbody = (k % 5 == 0) ? RT_MAX_BODIES : 1 + rt_int(&rng, RT_MAX_BODIES);
  s.passive = (k % 4 != 3);
  s.armature = (k % 3 != 2);
  s.gravity = (k % 7 != 6);
  s.fixed = 1;
  return s;
}

static sim_model *load_tree(uint64_t seed, const rt_spec *spec) {
  char err[512];
  size_t n = rt_tree_json(json, sizeof json, seed, spec);
  if (n >= sizeof json) return NULL;
  sim_model *m = sim_model_load_string(json, "random_tree", err, sizeof err);
  if (!m) fprintf(stderr, "random tree %llu did not load: %s\n", (unsigned long long)seed, err);
  return m;
}

static int setup(void **state) {
  (void)state;
  for (int k = 0; k < NTREE; k++) {
    rt_spec s = tree_spec(k);
    tree_seed[k] = 100 + (uint64_t)k;
    trees[k] = load_tree(tree_seed[k], &s);
    if (!trees[k]) return -1;
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (int k = 0; k < NTREE; k++) {
    sim_model_free(trees[k]);
    trees[k] = NULL;
  }
  return 0;
}

/* random q (hinges anywhere on the circle, slides within ±0.3 m), qd within ±2, τ within ±2 */
static void random_state(rt_rng *rng, const sim_model *m, sim_data *d) {
  for (int j = 0; j < m->njnt; j++) {
    const sim_joint *jt = &m->joints[j];
    if (jt->type == SIM_JOINT_HINGE) d->qpos[jt->qposadr] = rt_uniform(rng, -PI, PI);
    if (jt->type == SIM_JOINT_SLIDE) d->qpos[jt->qposadr] = rt_uniform(rng, -0.3, 0.3);
  }
  for (int i = 0; i < m->nv; i++) {
    d->qvel[i] = rt_uniform(rng, -2, 2);
    d->qfrc_applied[i] = rt_uniform(rng, -2, 2);
  }
}

/* position coordinate of degree of freedom i (hinges and slides have one of each) */
static int qadr(const sim_model *m, int i) { return m->joints[m->dof_joint[i]].qposadr; }

/* --- small linear algebra ----------------------------------------------------------------- */

static double norm_inf(int n, const double *v) {
  double r = 0;
  for (int i = 0; i < n; i++) r = fmax(r, fabs(v[i]));
  return r;
}

static double diff_inf(int n, const double *a, const double *b) {
  double r = 0;
  for (int i = 0; i < n; i++) r = fmax(r, fabs(a[i] - b[i]));
  return r;
}

/* --- the checks, each returning a relative error so that a perturbed input can be fed in --- */

/* (a) relative difference between `qacc` and M⁻¹(τ + passive − bias) at d's state (d must hold
 * sim_forward's results for this state). Scale: |qacc_ref|. */
static double aba_error(const sim_model *m, sim_data *d, const double *qacc) {
  int n = m->nv;
  double l[MAXV * MAXV], rhs[MAXV] = {0}, ref[MAXV];
  sim_kinematics(m, d);
  sim_passive(m, d);
  sim_actuate(m, d);
  sim_crba(m, d);
  sim_rnea_bias(m, d);
  for (int i = 0; i < n; i++)
    rhs[i] = d->qfrc_applied[i] + d->qfrc_passive[i] + d->qfrc_actuator[i] - d->qfrc_bias[i];
  if (ts_cholesky(n, d->qM, l)) return INFINITY;
  ts_cholesky_solve(n, l, rhs, ref);
  return diff_inf(n, qacc, ref) / fmax(norm_inf(n, ref), 1e-300);
}

/* (b) relative difference between inverse dynamics of `qacc` and τ + passive. Scale: the largest
 * of the terms that are summed, |τ + passive|, |bias| and |M·qacc|. */
static double inverse_error(const sim_model *m, sim_data *d, const double *qacc) {
  int n = m->nv;
  double target[MAXV], mqacc[MAXV];
  sim_kinematics(m, d);
  sim_passive(m, d);
  sim_actuate(m, d);
  sim_rnea_bias(m, d);
  memcpy(d->qacc, qacc, sizeof(double) * (size_t)n);
  sim_inverse(m, d);
  for (int i = 0; i < n; i++) {
    target[i] = d->qfrc_applied[i] + d->qfrc_passive[i] + d->qfrc_actuator[i];
    mqacc[i] = d->qfrc_inverse[i] - d->qfrc_bias[i];
  }
  double scale = fmax(norm_inf(n, target), fmax(norm_inf(n, d->qfrc_bias), norm_inf(n, mqacc)));
  return diff_inf(n, d->qfrc_inverse, target) / fmax(scale, 1e-300);
}

/* potential energy at d's qpos */
static double potential(const sim_model *m, sim_data *d) {
  sim_kinematics(m, d);
  return sim_energy_potential(m, d);
}

/* kinetic + potential at d's state */
static double total_energy(const sim_model *m, sim_data *d) {
  sim_kinematics(m, d);
  return sim_energy_kinetic(m, d) + sim_energy_potential(m, d);
}

/* power of applied and damping forces: Σ qd·(τ − b·qd) */
static double power_applied_damping(const sim_model *m, const sim_data *d) {
  double p = 0;
  for (int i = 0; i < m->nv; i++) {
    const sim_joint *jt = &m->joints[m->dof_joint[i]];
    p += d->qvel[i] * (d->qfrc_applied[i] - jt->damping * d->qvel[i]);
  }
  return p;
}

/* scale of the power flows at d's state: Σ |qd|·(|τ| + |passive| + |bias|) (needs passive and
 * bias computed) */
static double power_scale(const sim_model *m, const sim_data *d) {
  double s = 0;
  for (int i = 0; i < m->nv; i++)
    s += fabs(d->qvel[i]) *
         (fabs(d->qfrc_applied[i]) + fabs(d->qfrc_passive[i]) + fabs(d->qfrc_bias[i]));
  return s;
}

/* --- iteration over trees and states ------------------------------------------------------ */

typedef double (*state_check)(const sim_model *m, sim_data *d);

/* Runs `check` at NSTATE random states of every tree; returns the largest result and prints it
 * with the tree that produced it. */
static double over_trees(const char *what, state_check check) {
  double worst = 0;
  int worst_tree = -1;
  for (int k = 0; k < NTREE; k++) {
    const sim_model *m = trees[k];
    sim_data *d = sim_data_new(m);
    assert_non_null(d);
    rt_rng rng;
    rt_rng_init(&rng, 999 + (uint64_t)k);
    for (int s = 0; s < NSTATE; s++) {
      random_state(&rng, m, d);
      double e = check(m, d);
      if (worst_tree < 0 || !(e <= worst)) {
        worst = e;
        worst_tree = k;
      }
    }
    sim_data_free(d);
  }
  print_message("%-44s max %.3e (tree seed %llu, nv %d)\n", what, worst,
                worst_tree >= 0 ? (unsigned long long)tree_seed[worst_tree] : 0ull,
                worst_tree >= 0 ? trees[worst_tree]->nv : 0);
  return worst;
}

/* --- (a) ---------------------------------------------------------------------------------- */

/* error(m, d, qacc) of the qacc sim_forward computes */
typedef double (*qacc_error)(const sim_model *m, sim_data *d, const double *qacc);
static double of_forward(const sim_model *m, sim_data *d, qacc_error error) {
  double qacc[MAXV];
  sim_forward(m, d);
  memcpy(qacc, d->qacc, sizeof(double) * (size_t)m->nv);
  return error(m, d, qacc);
}

static double check_aba(const sim_model *m, sim_data *d) {
  return of_forward(m, d, aba_error);
}

/* the implicit-damping variant used by Euler: ABA with h = 10 ms solves
 * (M + h·diag(damping))·qacc = τ + passive − bias */
static double check_aba_implicit(const sim_model *m, sim_data *d) {
  const double h = 0.01;
  int n = m->nv;
  double qacc[MAXV], a[MAXV * MAXV], l[MAXV * MAXV], rhs[MAXV] = {0}, ref[MAXV];
  sim_kinematics(m, d);
  sim_passive(m, d);
  sim_actuate(m, d);
  sim_aba(m, d, h);
  memcpy(qacc, d->qacc, sizeof(double) * (size_t)n);
  sim_crba(m, d);
  sim_rnea_bias(m, d);
  memcpy(a, d->qM, sizeof(double) * (size_t)(n * n));
  for (int i = 0; i < n; i++) {
    a[i * n + i] += h * m->joints[m->dof_joint[i]].damping;
    rhs[i] = d->qfrc_applied[i] + d->qfrc_passive[i] + d->qfrc_actuator[i] - d->qfrc_bias[i];
  }
  if (ts_cholesky(n, a, l)) return INFINITY;
  ts_cholesky_solve(n, l, rhs, ref);
  return diff_inf(n, qacc, ref) / fmax(norm_inf(n, ref), 1e-300);
}

/* Tolerance 1e-9 relative: both sides are backward stable, so they differ by ~cond(M)·1e-16;
 * cond(M) of these trees is ~1e3–1e4 (a lower bound is printed by test_mass_matrix_spd). */
static void test_aba_equals_crba_rnea(void **state) {
  (void)state;
  assert_true(over_trees("(a) ABA vs M⁻¹(τ+passive−bias)", check_aba) <= 1e-9);
  assert_true(over_trees("(a) ABA h=0.01 vs (M+hB)⁻¹(τ+passive−bias)", check_aba_implicit) <=
              1e-9);
}

/* --- (b) ---------------------------------------------------------------------------------- */

static double check_inverse(const sim_model *m, sim_data *d) {
  return of_forward(m, d, inverse_error);
}

/* the columns of M from RNEA: inverse(e_j) − inverse(0); relative to max |M_ij| */
static double check_columns(const sim_model *m, sim_data *d) {
  int n = m->nv;
  double base[MAXV], mm[MAXV * MAXV];
  sim_kinematics(m, d);
  sim_crba(m, d);
  memcpy(mm, d->qM, sizeof(double) * (size_t)(n * n));
  memset(d->qacc, 0, sizeof(double) * (size_t)n);
  sim_inverse(m, d);
  memcpy(base, d->qfrc_inverse, sizeof(double) * (size_t)n);
  double worst = 0;
  for (int j = 0; j < n; j++) {
    memset(d->qacc, 0, sizeof(double) * (size_t)n);
    d->qacc[j] = 1;
    sim_inverse(m, d);
    for (int i = 0; i < n; i++)
      worst = fmax(worst, fabs(d->qfrc_inverse[i] - base[i] - mm[i * n + j]));
  }
  return worst / norm_inf(n * n, mm);
}

/* Tolerance 1e-9 relative to the largest term: RNEA sums terms of that size, rounding ~1e-15. */
static void test_inverse_of_aba(void **state) {
  (void)state;
  assert_true(over_trees("(b) RNEA(ABA qacc) vs τ+passive", check_inverse) <= 1e-9);
  assert_true(over_trees("(b) RNEA columns vs CRBA", check_columns) <= 1e-9);
}

/* --- (c) ---------------------------------------------------------------------------------- */

static double max_cond;

/* asymmetry relative to max |M_ij|; +inf when Cholesky fails. Records cond(M) estimated as
 * max(diag L)² / min(diag L)² (a lower bound, good enough to report). */
static double check_spd(const sim_model *m, sim_data *d) {
  int n = m->nv;
  double l[MAXV * MAXV];
  sim_kinematics(m, d);
  sim_crba(m, d);
  double asym = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) asym = fmax(asym, fabs(d->qM[i * n + j] - d->qM[j * n + i]));
  if (ts_cholesky(n, d->qM, l)) return INFINITY;
  double lo = INFINITY, hi = 0;
  for (int i = 0; i < n; i++) {
    lo = fmin(lo, l[i * n + i]);
    hi = fmax(hi, l[i * n + i]);
  }
  max_cond = fmax(max_cond, hi * hi / (lo * lo));
  return asym / norm_inf(n * n, d->qM);
}

/* Tolerance 1e-14 relative: the two triangles of a symmetric CRBA come from the same products;
 * anything beyond rounding of one addition is a bug. */
static void test_mass_matrix_spd(void **state) {
  (void)state;
  max_cond = 0;
  assert_true(over_trees("(c) M asymmetry (inf if not PD)", check_spd) <= 1e-14);
  print_message("(c) largest cond(M) lower bound: %.3e\n", max_cond);
}

/* --- (d) ---------------------------------------------------------------------------------- */

static double check_kinetic_quadratic(const sim_model *m, sim_data *d) {
  int n = m->nv;
  sim_kinematics(m, d);
  sim_crba(m, d);
  double t = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) t += 0.5 * d->qvel[i] * d->qM[i * n + j] * d->qvel[j];
  return fabs(sim_energy_kinetic(m, d) - t) / t;
}

/* kinetic energy from the world poses alone: COM velocity and angular velocity by central
 * differences of xipos and xmat along q ± h·qd (ω from the skew part of Ṙ·Rᵀ), with the model's
 * inertia about the COM rotated to world axes, plus ½·armature·qd² */
static double check_kinetic_poses(const sim_model *m, sim_data *d) {
  const double h = 1e-6;
  int nb = m->nbody, nq = m->nq;
  double q0[MAXV], xp[3 * (MAXV + 1)] = {0}, xm[3 * (MAXV + 1)] = {0}, rp[9 * (MAXV + 1)] = {0},
      rm[9 * (MAXV + 1)] = {0}, r0[9 * (MAXV + 1)];
  memcpy(q0, d->qpos, sizeof(double) * (size_t)nq);
  sim_kinematics(m, d);
  double t_engine = sim_energy_kinetic(m, d);
  memcpy(r0, d->xmat, sizeof(double) * 9 * (size_t)nb);
  for (int sgn = -1; sgn <= 1; sgn += 2) {
    for (int i = 0; i < m->nv; i++) d->qpos[qadr(m, i)] = q0[qadr(m, i)] + sgn * h * d->qvel[i];
    sim_kinematics(m, d);
    memcpy(sgn > 0 ? xp : xm, d->xipos, sizeof(double) * 3 * (size_t)nb);
    memcpy(sgn > 0 ? rp : rm, d->xmat, sizeof(double) * 9 * (size_t)nb);
  }
  memcpy(d->qpos, q0, sizeof(double) * (size_t)nq);
  sim_kinematics(m, d);

  double t = 0;
  for (int b = 1; b < nb; b++) {
    const sim_body *bd = &m->bodies[b];
    const double *r = r0 + 9 * b;
    double v[3], w[9], om[3], ib[9], iw[9];
    for (int k = 0; k < 3; k++) v[k] = (xp[3 * b + k] - xm[3 * b + k]) / (2 * h);
    /* W = Ṙ·Rᵀ */
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        double s = 0;
        for (int k = 0; k < 3; k++)
          s += (rp[9 * b + 3 * i + k] - rm[9 * b + 3 * i + k]) / (2 * h) * r[3 * j + k];
        w[3 * i + j] = s;
      }
    om[0] = 0.5 * (w[7] - w[5]);
    om[1] = 0.5 * (w[2] - w[6]);
    om[2] = 0.5 * (w[3] - w[1]);
    /* I_world = R·I_body·Rᵀ */
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        double s = 0;
        for (int k = 0; k < 3; k++) s += bd->inertia[3 * i + k] * r[3 * j + k];
        ib[3 * i + j] = s;
      }
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        double s = 0;
        for (int k = 0; k < 3; k++) s += r[3 * i + k] * ib[3 * k + j];
        iw[3 * i + j] = s;
      }
    t += 0.5 * bd->mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) t += 0.5 * om[i] * iw[3 * i + j] * om[j];
  }
  for (int i = 0; i < m->nv; i++)
    t += 0.5 * m->joints[m->dof_joint[i]].armature * d->qvel[i] * d->qvel[i];
  return fabs(t_engine - t) / t;
}

/* Tolerances: ½qdᵀMqd is a sum of nv² terms of one sign pattern, rounding ~1e-15 → 1e-12.
 * The finite differences: truncation h²·|x⃛| ~ 1e-12 and rounding 1e-16/h ~ 1e-10 relative
 * → 1e-7. */
static void test_kinetic_energy(void **state) {
  (void)state;
  assert_true(over_trees("(d) T vs ½ qdᵀ M qd", check_kinetic_quadratic) <= 1e-12);
  assert_true(over_trees("(d) T vs poses by finite differences", check_kinetic_poses) <= 1e-7);
}

/* --- (e) ---------------------------------------------------------------------------------- */

/* ∂V/∂q_i by central differences vs bias(qd = 0) − passive(qd = 0); relative to max(1, |G|) */
static double check_potential_gradient(const sim_model *m, sim_data *d) {
  const double h = 1e-6;
  int n = m->nv;
  double g[MAXV], fd[MAXV];
  memset(d->qvel, 0, sizeof(double) * (size_t)n);
  sim_kinematics(m, d);
  sim_passive(m, d);
  sim_rnea_bias(m, d);
  for (int i = 0; i < n; i++) g[i] = d->qfrc_bias[i] - d->qfrc_passive[i];
  for (int i = 0; i < n; i++) {
    double *qi = &d->qpos[qadr(m, i)], q = *qi;
    *qi = q + h;
    double vp = potential(m, d);
    *qi = q - h;
    double vm = potential(m, d);
    *qi = q;
    fd[i] = (vp - vm) / (2 * h);
  }
  return diff_inf(n, fd, g) / fmax(1.0, norm_inf(n, g));
}

/* V from the world COMs and the joint springs, vs sim_energy_potential; relative to
 * Σ|m g·x| + Σ ½k(q − q_ref)² */
static double check_potential_value(const sim_model *m, sim_data *d) {
  sim_kinematics(m, d);
  double v = 0, scale = 0;
  for (int b = 1; b < m->nbody; b++) {
    double e = 0;
    for (int k = 0; k < 3; k++) e -= m->bodies[b].mass * m->opt.gravity[k] * d->xipos[3 * b + k];
    v += e;
    scale += fabs(e);
  }
  for (int i = 0; i < m->nv; i++) {
    const sim_joint *jt = &m->joints[m->dof_joint[i]];
    double x = d->qpos[jt->qposadr] - jt->springref;
    v += 0.5 * jt->stiffness * x * x;
    scale += 0.5 * jt->stiffness * x * x;
  }
  return fabs(sim_energy_potential(m, d) - v) / fmax(scale, 1e-300);
}

/* dE/dt along an RK4 trajectory: (E(t+h) − E(t−h))/2h vs power at t, h = 1e-4 s */
static double check_power_trajectory(const sim_model *m, sim_data *d) {
  sim_model *mm = (sim_model *)m; /* opt may be changed between steps (model.h) */
  const double h = 1e-4;
  sim_option saved = mm->opt;
  mm->opt.integrator = SIM_INTEGRATOR_RK4;
  mm->opt.timestep = h;
  double e0 = total_energy(m, d);
  sim_step(m, d);
  sim_forward(m, d);
  sim_rnea_bias(m, d);
  double p = power_applied_damping(m, d), scale = power_scale(m, d);
  sim_step(m, d);
  double e2 = total_energy(m, d);
  mm->opt = saved;
  return fabs((e2 - e0) / (2 * h) - p) / fmax(scale, 1e-300);
}

/* dE/dt along the exact tangent (qd, qacc): central difference with ε = 1e-6 s */
static double check_power_tangent(const sim_model *m, sim_data *d) {
  const double eps = 1e-6;
  int n = m->nv;
  double q0[MAXV], v0[MAXV], a[MAXV];
  assert_int_equal(m->nq, n); /* hinges and slides only */
  sim_forward(m, d);
  sim_rnea_bias(m, d);
  double p = power_applied_damping(m, d), scale = power_scale(m, d);
  memcpy(q0, d->qpos, sizeof(double) * (size_t)n);
  memcpy(v0, d->qvel, sizeof(double) * (size_t)n);
  memcpy(a, d->qacc, sizeof(double) * (size_t)n);
  double e[2];
  for (int s = 0; s < 2; s++) {
    double sg = s ? 1.0 : -1.0;
    for (int i = 0; i < n; i++) {
      d->qpos[qadr(m, i)] = q0[qadr(m, i)] + sg * eps * v0[i];
      d->qvel[i] = v0[i] + sg * eps * a[i];
    }
    e[s] = total_energy(m, d);
  }
  memcpy(d->qpos, q0, sizeof(double) * (size_t)n);
  memcpy(d->qvel, v0, sizeof(double) * (size_t)n);
  return fabs((e[1] - e[0]) / (2 * eps) - p) / fmax(scale, 1e-300);
}

/* Tolerances: gradient, truncation h²·V⃛ ~ 1e-10 and rounding |V|·1e-16/h ~ 1e-8 → 1e-6.
 * Value: sums of ~30 terms → 1e-12. Trajectory power: central difference truncation
 * h²·E⃛/6 with |E⃛| ≲ (ω ~ 30 rad/s)²·|P| → ~1e-5 relative; RK4's own error h⁵ is far smaller
 * → 1e-4. Tangent power: rounding |E|·1e-16/ε ~ 1e-9, truncation ε² → 1e-6. */
static void test_potential_and_power(void **state) {
  (void)state;
  assert_true(over_trees("(e) ∂V/∂q vs gravity + spring force", check_potential_gradient) <= 1e-6);
  assert_true(over_trees("(e) V vs COMs and springs", check_potential_value) <= 1e-12);
  assert_true(over_trees("(e) dE/dt on RK4 trajectory vs power", check_power_trajectory) <= 1e-4);
  assert_true(over_trees("(e) dE/dt on tangent vs power", check_power_tangent) <= 1e-6);
}

/* --- (f) expected failures ---------------------------------------------------------------- */

static void test_perturbed_results_detected(void **state) {
  (void)state;
  /* the largest tree, at one random state */
  const sim_model *m = trees[0];
  assert_true(m->nv >= 2);
  sim_data *d = sim_data_new(m);
  assert_non_null(d);
  rt_rng rng;
  rt_rng_init(&rng, 4242);
  random_state(&rng, m, d);
  sim_forward(m, d);
  double qacc[MAXV];
  memcpy(qacc, d->qacc, sizeof(double) * (size_t)m->nv);
  double scale = norm_inf(m->nv, qacc);

  /* a change of 1e-7 relative in one acceleration fails (a) and (b) */
  double bad[MAXV];
  memcpy(bad, qacc, sizeof bad);
  bad[m->nv - 1] += 1e-7 * scale;
  double ea = aba_error(m, d, bad), eb = inverse_error(m, d, bad);
  print_message("(f) qacc perturbed by 1e-7: (a) error %.3e, (b) error %.3e\n", ea, eb);
  assert_true(ea > 1e-9);
  assert_true(eb > 1e-9);
  assert_true(aba_error(m, d, qacc) <= 1e-9);

  /* a matrix that is not positive definite is refused by the Cholesky used in (a) and (c) */
  double l[MAXV * MAXV], a[MAXV * MAXV];
  sim_crba(m, d);
  memcpy(a, d->qM, sizeof(double) * (size_t)(m->nv * m->nv));
  assert_int_equal(ts_cholesky(m->nv, a, l), 0);
  a[1] = a[m->nv] = sqrt(a[0] * a[m->nv + 1]) * 1.01; /* |M01| > √(M00·M11): indefinite */
  assert_int_equal(ts_cholesky(m->nv, a, l), -1);

  /* the power balance sees damping: dropping the damping term breaks (e) on a damped tree */
  sim_forward(m, d);
  sim_rnea_bias(m, d);
  double p_true = power_applied_damping(m, d), p_undamped = 0;
  for (int i = 0; i < m->nv; i++) p_undamped += d->qvel[i] * d->qfrc_applied[i];
  double ps = power_scale(m, d);
  print_message("(f) power without damping differs by %.3e relative\n",
                fabs(p_true - p_undamped) / ps);
  assert_true(fabs(p_true - p_undamped) / ps > 1e-4);
  sim_data_free(d);
}

/* a model whose body 1 is 1e-5 heavier gives accelerations that (a) tells apart */
static void test_perturbed_model_detected(void **state) {
  (void)state;
  rt_spec s = tree_spec(0);
  s.scale_body = 1;
  s.scale_mass = 1 + 1e-5;
  sim_model *heavy = load_tree(tree_seed[0], &s);
  assert_non_null(heavy);
  const sim_model *m = trees[0];
  assert_int_equal(heavy->nv, m->nv);
  sim_data *d = sim_data_new(m), *dh = sim_data_new(heavy);
  assert_non_null(d);
  assert_non_null(dh);
  rt_rng rng;
  rt_rng_init(&rng, 4243);
  random_state(&rng, m, d);
  memcpy(dh->qpos, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(dh->qvel, d->qvel, sizeof(double) * (size_t)m->nv);
  memcpy(dh->qfrc_applied, d->qfrc_applied, sizeof(double) * (size_t)m->nv);
  sim_forward(heavy, dh);
  double e = aba_error(m, d, dh->qacc);
  print_message("(f) ABA of a model with m1·(1+1e-5) vs the original: %.3e\n", e);
  assert_true(e > 1e-9);
  sim_data_free(dh);
  ts_sim_free(heavy, d);
}

/* --- (g) the trees as drawn --------------------------------------------------------------- */

static const cJSON *item(const cJSON *obj, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* largest difference between a JSON number array (nested arrays flattened row by row) and v */
static double json_diff(const cJSON *arr, const double *v, int n) {
  double d = 0;
  int k = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, arr) {
    if (cJSON_IsArray(e)) {
      const cJSON *f;
      cJSON_ArrayForEach(f, e) d = fmax(d, k < n ? fabs(f->valuedouble - v[k++]) : INFINITY);
    } else {
      d = fmax(d, k < n ? fabs(e->valuedouble - v[k++]) : INFINITY);
    }
  }
  return k == n ? d : INFINITY;
}

/* Values are printed with 17 significant digits, so they read back exactly; the loader may
 * normalise axes and quaternions that are already unit to 1e-16, hence 1e-14. */
static void test_trees_as_drawn(void **state) {
  (void)state;
  int counts[3] = {0, 0, 0}, off_diagonal = 0, max_depth = 0;
  for (int k = 0; k < NTREE; k++) {
    rt_spec spec = tree_spec(k);
    rt_tree_json(json, sizeof json, tree_seed[k], &spec);
    cJSON *root = cJSON_Parse(json);
    assert_non_null(root);
    const sim_model *m = trees[k];
    assert_int_equal(m->nbody, cJSON_GetArraySize(item(root, "bodies")) + 1);
    assert_true(json_diff(item(root, "gravity"), m->opt.gravity, 3) <= 1e-14);
    const cJSON *jb;
    cJSON_ArrayForEach(jb, item(root, "bodies")) {
      int b = sim_model_body(m, item(jb, "name")->valuestring);
      assert_true(b > 0);
      const sim_body *bd = &m->bodies[b];
      const char *parent = item(jb, "parent")->valuestring;
      assert_int_equal(bd->parent, strcmp(parent, "world") ? sim_model_body(m, parent) : 0);
      const cJSON *ji = item(jb, "inertial"), *jj = item(jb, "joint");
      assert_true(fabs(item(ji, "mass")->valuedouble - bd->mass) <= 1e-14);
      assert_true(json_diff(item(ji, "com"), bd->com, 3) <= 1e-14);
      assert_true(json_diff(item(ji, "inertia"), bd->inertia, 9) <= 1e-14);
      assert_true(json_diff(item(jb, "pos"), bd->pos, 3) <= 1e-14);
      assert_true(json_diff(item(jb, "quat"), bd->quat, 4) <= 1e-14);
      if (fabs(bd->inertia[1]) > 1e-6) off_diagonal++;
      const sim_joint *jt = &m->joints[bd->joint];
      const char *type = item(jj, "type")->valuestring;
      int t = !strcmp(type, "hinge") ? SIM_JOINT_HINGE
                                     : (!strcmp(type, "slide") ? SIM_JOINT_SLIDE : SIM_JOINT_FIXED);
      assert_int_equal(jt->type, t);
      counts[t]++;
      if (t != SIM_JOINT_FIXED) {
        assert_true(json_diff(item(jj, "axis"), jt->axis, 3) <= 1e-14);
        assert_true(fabs(item(jj, "damping")->valuedouble - jt->damping) <= 1e-14);
        assert_true(fabs(item(jj, "armature")->valuedouble - jt->armature) <= 1e-14);
        assert_true(fabs(item(jj, "stiffness")->valuedouble - jt->stiffness) <= 1e-14);
        assert_true(fabs(item(jj, "springref")->valuedouble - jt->springref) <= 1e-14);
      }
      int depth = 0;
      for (int a = b; a > 0; a = m->bodies[a].parent) depth++;
      max_depth = depth > max_depth ? depth : max_depth;
    }
    cJSON_Delete(root);
  }
  print_message("(g) %d hinges, %d slides, %d fixed; %d bodies with off-diagonal inertia; "
                "deepest chain %d\n", counts[SIM_JOINT_HINGE], counts[SIM_JOINT_SLIDE],
                counts[SIM_JOINT_FIXED], off_diagonal, max_depth);
  /* the population exercises what it should */
  assert_true(counts[SIM_JOINT_HINGE] > 100 && counts[SIM_JOINT_SLIDE] > 50 &&
              counts[SIM_JOINT_FIXED] > 10);
  assert_true(max_depth >= 10);
}

/* 3×3 row-major products */
static void mat_mul(double *c, const double *a, const double *b) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      c[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
}

static void mat_vec(double *c, const double *a, const double *v) {
  for (int i = 0; i < 3; i++) c[i] = a[3 * i] * v[0] + a[3 * i + 1] * v[1] + a[3 * i + 2] * v[2];
}

static void quat_mat(double *r, const double *q) {
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
  double v[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                 2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                 2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
  memcpy(r, v, sizeof v);
}

/* rotation by angle t about unit axis a (Rodrigues) */
static void axis_angle_mat(double *r, const double *a, double t) {
  double c = cos(t), s = sin(t), k = 1 - c;
  double v[9] = {c + a[0] * a[0] * k,        a[0] * a[1] * k - a[2] * s, a[0] * a[2] * k + a[1] * s,
                 a[1] * a[0] * k + a[2] * s, c + a[1] * a[1] * k,        a[1] * a[2] * k - a[0] * s,
                 a[2] * a[0] * k - a[1] * s, a[2] * a[1] * k + a[0] * s, c + a[2] * a[2] * k};
  memcpy(r, v, sizeof v);
}

/* largest difference between the engine's xpos, xmat, xipos and the poses composed here:
 * R = R_parent·R(quat)·Rot(axis, q) for a hinge; p = p_parent + R_parent·(pos + R(quat)·axis·q)
 * for a slide (q = 0 for a hinge); COM = p + R·com */
static double check_world_poses(const sim_model *m, sim_data *d) {
  double xp[3 * (MAXV + 1)], xr[9 * (MAXV + 1)], worst = 0;
  memset(xp, 0, sizeof xp);
  memset(xr, 0, sizeof xr);
  xr[0] = xr[4] = xr[8] = 1;
  sim_kinematics(m, d);
  for (int b = 1; b < m->nbody; b++) {
    const sim_body *bd = &m->bodies[b];
    const sim_joint *jt = &m->joints[bd->joint];
    const double *rp = xr + 9 * bd->parent, *pp = xp + 3 * bd->parent;
    double rq[9], rj[9], tmp[9], off[3], w[3], com[3];
    quat_mat(rq, bd->quat);
    double q = jt->type == SIM_JOINT_FIXED ? 0 : d->qpos[jt->qposadr];
    axis_angle_mat(rj, jt->axis, jt->type == SIM_JOINT_HINGE ? q : 0);
    mat_mul(tmp, rq, rj);
    mat_mul(xr + 9 * b, rp, tmp);
    double slide = jt->type == SIM_JOINT_SLIDE ? q : 0;
    mat_vec(off, rq, jt->axis);
    for (int k = 0; k < 3; k++) off[k] = bd->pos[k] + slide * off[k];
    mat_vec(w, rp, off);
    for (int k = 0; k < 3; k++) xp[3 * b + k] = pp[k] + w[k];
    mat_vec(com, xr + 9 * b, bd->com);
    for (int k = 0; k < 3; k++) {
      worst = fmax(worst, fabs(d->xpos[3 * b + k] - xp[3 * b + k]));
      worst = fmax(worst, fabs(d->xipos[3 * b + k] - xp[3 * b + k] - com[k]));
    }
    for (int k = 0; k < 9; k++) worst = fmax(worst, fabs(d->xmat[9 * b + k] - xr[9 * b + k]));
  }
  return worst;
}

/* Tolerance: chains of ≤ 30 rotations and offsets ≤ 0.6 m, rounding ~1e-15 per level → 1e-12. */
static void test_world_poses(void **state) {
  (void)state;
  assert_true(over_trees("(g) world poses vs composed placements", check_world_poses) <= 1e-12);
}

TS_MAIN_WITH(setup, teardown, test_trees_as_drawn, test_world_poses, test_aba_equals_crba_rnea,
                              test_inverse_of_aba, test_mass_matrix_spd, test_kinetic_energy,
                              test_potential_and_power, test_perturbed_results_detected,
                              test_perturbed_model_detected)
