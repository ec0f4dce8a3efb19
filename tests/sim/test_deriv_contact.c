/* tests/sim/test_deriv_contact.c: step Jacobians through contacts of a plane with a sphere, a
 * capsule and a box (free bodies resting, sliding and spinning), of the shipped club arm
 * pressed on its table (capsules and a sphere, with its stops and joint friction), of two round
 * shapes and of a sphere and a box, against central differences of sim_step (deriv_fd.h), at
 * states whose active set (contacts and the rows' states) is the same at every point of the
 * stencil; the solver runs to convergence, and CG and Newton give the same Jacobians. Pairs and
 * cones without derivatives return their error, naming the contact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deriv_fd.h"
#include "random_tree.h"
#include "sim/deriv/deriv.h"
#include "sim/deriv/internal.h"
#include "sim/json_read.h"
#include "sim/spatial.h"
#include "support/numbers.h"
#include "support/skip.h"

/* a free shape over a plane; the contact's impedance is wide (0.02 m: both geoms', which the
 * contact averages) so that the penetrations below (3 to 9 mm) lie on its rising curve, each
 * stencil on one side of its midpoint (10 mm), where the curve's second derivative jumps */
static const char shape_json[] =
    "{ \"name\": \"shape\", \"timestep\": 0.002, \"integrator\": \"%s\", \"solver_iterations\": 1000,\n"
    "  \"solver_tolerance\": 0,\n"
    "  \"bodies\": [ { \"name\": \"b\", \"parent\": \"world\", \"joint\": { \"name\": \"root\", \"type\": \"free\" },\n"
    "    \"inertial\": { \"mass\": 1.5, \"com\": [0.01, -0.02, 0.005], \"inertia\": [0.004, 0.005, 0.006, 0, 0, 0] } } ],\n"
    "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\", \"friction\": [0.7, 0.005, 0.0001],\n"
    "      \"solimp\": [0.9, 0.95, 0.02, 0.5, 2] },\n"
    "    { \"name\": \"shape\", \"body\": \"b\", \"type\": \"%s\", \"size\": %s,\n"
    "      \"solimp\": [0.9, 0.95, 0.02, 0.5, 2] } ] }\n";

static sim_model *load_shape(const char *integrator, const char *type, const char *size) {
  char json[sizeof shape_json + 128], err[512];
  snprintf(json, sizeof json, shape_json, integrator, type, size);
  sim_model *m = sim_model_load_string(json, type, err, sizeof err);
  if (!m) fprintf(stderr, "%s\n", err);
  assert_non_null(m);
  return m;
}

static const char shape_params[] = "body/b/mass,body/b/com_x,body/b/iyy";

/* The evaluation's stencil: 2.5e-4 for positions and velocities, as the contacts' stiffness
 * makes high derivatives large (the capsule's ∂ω̇/∂z reads −27.53 at 2e-3, −28.45183 at 1e-3,
 * −28.45144 at 5e-4, the analytic value −28.45141); 1e-2 relative for parameters. */
static fd_steps eval_steps = {2.5e-4, 2.5e-4, 2.5e-4, 2.5e-4, 1e-2, 4};

/* --- the converged minimum, solved exactly ------------------------------------------------------ */

/* The solver's optimality condition with the active set it found, solved by Cholesky:
 * (M + Σ_Q D·JᵀJ)·a = M·a0 + Σ_Q D·Jᵀ·aref + Σ_bounds Jᵀ·f. The CG stops where its cost can no
 * longer resolve an improvement (a scaled gradient near 5e-7 on these stiff pyramid rows), and
 * finite differences of its output divided by ε = 1e-3 then carry that error; the derivatives
 * are those of this exact minimum. */
static void exact_qacc(const sim_model *m, sim_data *d, double *a) {
  int nv = m->nv;
  double H[36 * 36], rhs[36], Ma0[36];
  assert_true(nv <= 36);
  sim_forward(m, d);
  sim_crba(m, d);
  sim_mul_m(m, d, Ma0, d->qacc_smooth);
  memcpy(H, d->qM, (size_t)nv * nv * sizeof(double));
  memcpy(rhs, Ma0, (size_t)nv * sizeof(double));
  for (int i = 0; i < d->nefc; i++) {
    const double *J = d->efc_J + (size_t)i * nv;
    if (d->efc_state[i] == SIM_CSTATE_QUADRATIC) {
      for (int r = 0; r < nv; r++) {
        rhs[r] += d->efc_D[i] * J[r] * d->efc_aref[i];
        for (int c = 0; c < nv; c++) H[r * nv + c] += d->efc_D[i] * J[r] * J[c];
      }
    } else if (d->efc_state[i] != SIM_CSTATE_SATISFIED) {
      for (int r = 0; r < nv; r++) rhs[r] += J[r] * d->efc_force[i];
    }
  }
  double L[36 * 36];
  assert_int_equal(ts_cholesky(nv, H, L), 0);
  ts_cholesky_solve(nv, L, rhs, a);
}

/* ∂q̈/∂[δq | v | θ] of one evaluation at the state in d: the analytic one (the first evaluation
 * of an RK4 step, where no damping is implicit, read from the workspace) against fourth-order
 * differences of exact_qacc; returns the worst excess, with the step's tolerance (A = 1 + h·Q:
 * 1e-6 relative, 1e-9/h absolute) */
static double check_evaluation(sim_model *m, const sim_data *d, const char *what) {
  char err[256];
  int nv = m->nv, ncol;
  sim_param params[8];
  int np = sim_param_parse(m, shape_params, params, 8, err, sizeof err);
  assert_true(np > 0);
  m->opt.integrator = SIM_INTEGRATOR_RK4;
  sim_deriv *w = sim_deriv_new(m, params, np, err, sizeof err);
  sim_data *work = sim_data_new(m);
  fd_copy_state(m, work, d);
  assert_int_equal(sim_deriv_step(m, work, w, NULL, NULL, NULL), SIM_DERIV_OK);
  ncol = w->ncol;
  static const double o[4] = {2, 1, -1, -2}, wt[4] = {-1.0 / 12, 8.0 / 12, -8.0 / 12, 1.0 / 12};
  double worst = 0, eps = eval_steps.q, a[4][36];
  int wr = -1, wc = -1;
  double wa = 0, wf = 0;
  for (int c = 0; c < 2 * nv + np; c++) {
    int col = c < 2 * nv ? c : w->cp + (c - 2 * nv);
    double value = c >= 2 * nv ? sim_param_get(m, params[c - 2 * nv]) : 0;
    double e = c >= 2 * nv ? eval_steps.param * fabs(value) : eps;
    for (int k = 0; k < 4; k++) {
      fd_copy_state(m, work, d);
      if (c < nv) {
        double dq[36] = {0};
        dq[c] = 1;
        sim_state_perturb(m, work->qpos, dq, o[k] * e);
      } else if (c < 2 * nv) {
        work->qvel[c - nv] += o[k] * e;
      } else {
        assert_int_equal(sim_param_set(m, params[c - 2 * nv], value + o[k] * e, err, sizeof err), 0);
      }
      exact_qacc(m, work, a[k]);
    }
    if (c >= 2 * nv) {
      assert_int_equal(sim_param_set(m, params[c - 2 * nv], value, err, sizeof err), 0);
    }
    for (int r = 0; r < nv; r++) {
      double f = 0;
      for (int k = 0; k < 4; k++) f += wt[k] * a[k][r] / e;
      double an = w->Q[(size_t)r * ncol + col];
      double x = fabs(an - f) / fmax(FD_REL_TOL * fabs(f), FD_ABS_TOL / m->opt.timestep);
      if (x > worst) worst = x, wr = r, wc = c, wa = an, wf = f;
    }
  }
  printf("  %s: ∂q̈ worst %.3g of the tolerance (row %d, column %d: analytic %.12g, FD %.12g)\n",
         what, worst, wr, wc, wa, wf);
  sim_deriv_free(&w);
  sim_data_free(work);
  return worst;
}

/* the state x = (position, quaternion from roll-pitch-yaw, velocity, angular velocity) */
static double check_shape(sim_model *m, const double pos[3], const double rpy[3],
                          const double vel[6], const char *what) {
  sim_data *d = sim_data_new(m);
  memcpy(d->qpos, pos, 3 * sizeof(double));
  sim_rpy_to_quat(d->qpos + 3, rpy);
  memcpy(d->qvel, vel, 6 * sizeof(double));
  char rows[1024];
  fd_row_states(m, d, rows);
  sim_data *probe = sim_data_new(m);
  fd_copy_state(m, probe, d);
  sim_forward(m, probe);
  printf("%s: %d contacts, rows %s\n", what, probe->ncon, rows);
  assert_true(probe->ncon > 0);
  sim_data_free(probe);
  fd_assert_one_active_set(m, d, rows, eval_steps);
  double e = check_evaluation(m, d, what);
  sim_data_free(d);
  return e;
}

static void test_shapes_on_a_plane(void **state) {
  (void)state;
  double worst = 0;
  sim_model *m = load_shape("rk4", "sphere", "[0.1]");
  /* 6 mm into the floor: x = 0.3 of the impedance width, the stencil well off its midpoint */
  const double p1[3] = {0.1, -0.2, 0.094}, r0[3] = {0.3, -0.2, 0.5};
  const double rest[6] = {0.01, 0, -0.02, 0.1, 0, 0.05}, slide[6] = {1.2, -0.5, 0, 0.3, 2, -1};
  worst = fmax(worst, check_shape(m, p1, r0, rest, "sphere pressed in and rolling slowly"));
  worst = fmax(worst, check_shape(m, p1, r0, slide, "sphere sliding and spinning"));
  sim_model_free(m);
  m = load_shape("rk4", "capsule", "[0.05, 0.2]");
  const double p2[3] = {0, 0, 0.044}, r2[3] = {1.5708 + 0.005, 0.01, 0.3};
  const double roll[6] = {0.3, 0.4, 0.01, 0.5, -0.2, 0.1};
  worst = fmax(worst, check_shape(m, p2, r2, roll, "capsule lying on both ends"));
  sim_model_free(m);
  m = load_shape("rk4", "box", "[0.1, 0.15, 0.05]");
  const double p3[3] = {0.2, 0.1, 0.044}, r3[3] = {0.01, -0.01, 0.7}; /* 3.5-8.5 mm deep */
  const double move[6] = {0.2, -0.1, 0.01, 0.1, 0.2, -0.5};
  worst = fmax(worst, check_shape(m, p3, r3, move, "box on its four corners"));
  const double p4[3] = {0.2, 0.1, 0.07}, r4[3] = {0.4, 0.1, 0.7};
  worst = fmax(worst, check_shape(m, p4, r4, move, "box tipped onto an edge"));
  sim_model_free(m);
  printf("shapes on a plane: worst entry %.3g of the tolerance\n", worst);
  assert_true(worst <= 1);
}

/* the shipped club arm pressed on its table (shoulder swung down onto it, the elbow anywhere,
 * moving and pushed), the whole Euler step against differences of sim_step: the first states
 * whose contacts all have derivatives, where the solver converged and whose active set holds
 * over the stencil */
static void test_club_arm_on_its_table(void **state) {
  (void)state;
  char err[512];
  char *json = sim_json_read_file(ACHILLES_SOURCE_DIR "/configs/club_arm.json", err, sizeof err);
  assert_non_null(json);
  sim_model *m = sim_model_load_string(json, "club_arm", err, sizeof err);
  free(json);
  assert_non_null(m);
  m->opt.solver_iterations = 1000;
  m->opt.solver_tolerance = 0;
  m->opt.solver = SIM_SOLVER_NEWTON; /* the minimum to rounding at every point of the stencil */
  rt_rng rng;
  rt_rng_init(&rng, 26);
  double worst = 0;
  int checked = 0, tried = 0, stops = 0;
  sim_data *d = sim_data_new(m), *probe = sim_data_new(m);
  for (; tried < 2000 && checked < 6; tried++) {
    d->qpos[0] = rt_uniform(&rng, -3, 3), d->qpos[1] = rt_uniform(&rng, 0.6, 1.7);
    d->qpos[2] = rt_uniform(&rng, -2.4, 2.4), d->qpos[3] = rt_uniform(&rng, -3, 3);
    for (int i = 0; i < 4; i++) {
      d->qvel[i] = rt_uniform(&rng, -0.5, 0.5);
      d->qfrc_applied[i] = rt_uniform(&rng, -1, 1);
      d->ctrl[i] = rt_uniform(&rng, -0.3, 0.3);
    }
    for (int i = 0; i < m->na; i++) d->act[i] = 0;
    fd_copy_state(m, probe, d);
    sim_forward(m, probe);
    char rows[1024];
    if (probe->ncon == 0 || probe->ncon > 3) continue;
    fd_row_states(m, d, rows);
    int quadratic = strchr(rows + probe->nefc - 4 * probe->ncon, 'Q') != NULL;
    /* the solver converged there (its scaled gradient), so that sim_step's differences are
     * those of the minimum the derivatives describe */
    if (!quadratic || probe->solver.gradient > 1e-10 ||
        !fd_one_active_set(m, d, rows, fd_default_steps()))
      continue;
    /* Euler: the state's own evaluation is the step's (RK4's later stages would need their
     * own active sets and convergence checked; its chain is the one tested without contacts) */
    m->opt.integrator = SIM_INTEGRATOR_EULER;
    printf("club arm (%s), q = (%.3f, %.3f, %.3f, %.3f): %d contacts, rows %s\n",
           sim_integrator_name(m->opt.integrator), d->qpos[0], d->qpos[1], d->qpos[2], d->qpos[3],
           probe->ncon, rows);
    stops += probe->nefc - probe->nf - 4 * probe->ncon > 0;
    worst = fmax(worst, fd_check_step(m, d, "body/forearm/mass,joint/*/frictionloss", 1));
    checked++;
  }
  printf("club arm on its table: %d states (of %d drawn), %d at a stop too; worst %.3g of the "
         "tolerance\n", checked, tried, stops, worst);
  assert_int_equal(checked, 6);
  assert_true(worst <= 1);
  sim_data_free(d);
  sim_data_free(probe);
  sim_model_free(m);
}

/* --- two round shapes ---------------------------------------------------------------------------- */

/* a free body "b" (and a second one "c" when c_json is given) with the geoms listed, no plane */
static const char pair_json[] =
    "{ \"name\": \"pair\", \"timestep\": 0.002, \"integrator\": \"rk4\", \"solver_iterations\": 1000,\n"
    "  \"solver_tolerance\": 0,\n"
    "  \"bodies\": [ { \"name\": \"b\", \"parent\": \"world\", \"joint\": { \"name\": \"root\", \"type\": \"free\" },\n"
    "    \"inertial\": { \"mass\": 1.5, \"com\": [0.01, -0.02, 0.005], \"inertia\": [0.004, 0.005, 0.006, 0, 0, 0] } }%s ],\n"
    "  \"geoms\": [ %s ] }\n";
static const char second_body[] =
    ",\n    { \"name\": \"c\", \"parent\": \"world\", \"joint\": { \"name\": \"root2\", \"type\": \"free\" },\n"
    "    \"inertial\": { \"mass\": 0.8, \"com\": [0, 0.01, 0], \"inertia\": [0.002, 0.003, 0.0025, 0, 0, 0] } }";
#define ROUND_SOLIMP "\"solimp\": [0.9, 0.95, 0.02, 0.5, 2], \"friction\": [0.6, 0.005, 0.0001]"

static sim_model *load_pair(const char *geoms, int two) {
  char json[4096], err[512];
  snprintf(json, sizeof json, pair_json, two ? second_body : "", geoms);
  sim_model *m = sim_model_load_string(json, "pair", err, sizeof err);
  if (!m) fprintf(stderr, "%s\n", err);
  assert_non_null(m);
  return m;
}

/* A sphere or a capsule against a sphere or a capsule (contact_round_deriv.c): a free shape on a
 * fixed one (the nearest points fixed or sliding along the capsules' axes, a capsule's end),
 * and two free bodies touching, each evaluation against differences of the exact minimum, about
 * 4.5 mm deep (on the impedance's rising curve, as above) */
static void test_round_pairs(void **state) {
  (void)state;
  double worst = 0;
  const double rest[6] = {0.01, -0.02, 0.005, 0.1, -0.05, 0.08};
  const double slide[6] = {0.4, -0.3, 0.01, 0.5, 1.2, -0.7};
  sim_model *m = load_pair("{ \"name\": \"base\", \"body\": \"world\", \"type\": \"sphere\", \"size\": [0.1], " ROUND_SOLIMP " },\n"
                           "{ \"name\": \"ball\", \"body\": \"b\", \"type\": \"sphere\", \"size\": [0.08], " ROUND_SOLIMP " }", 0);
  const double p1[3] = {0.02, -0.01, 0.174}, r1[3] = {0.3, -0.2, 0.5};
  worst = fmax(worst, check_shape(m, p1, r1, rest, "sphere on a sphere"));
  worst = fmax(worst, check_shape(m, p1, r1, slide, "sphere sliding on a sphere"));
  sim_model_free(m);
  /* a fixed capsule along x, a free one across it along y: both nearest points slide */
  m = load_pair("{ \"name\": \"bar\", \"body\": \"world\", \"type\": \"capsule\", \"size\": [0.05, 0.2], \"quat\": [0.70710678118654752, 0, 0.70710678118654752, 0], " ROUND_SOLIMP " },\n"
                "{ \"name\": \"rod\", \"body\": \"b\", \"type\": \"capsule\", \"size\": [0.04, 0.15], " ROUND_SOLIMP " }", 0);
  const double p2[3] = {0.03, 0.02, 0.086}, r2[3] = {1.5708 + 0.05, 0.03, 0.2};
  worst = fmax(worst, check_shape(m, p2, r2, rest, "capsule across a capsule"));
  worst = fmax(worst, check_shape(m, p2, r2, slide, "capsule sliding across a capsule"));
  sim_model_free(m);
  /* a free sphere on the fixed capsule (the capsule's point slides), a capsule's end on a sphere */
  m = load_pair("{ \"name\": \"bar\", \"body\": \"world\", \"type\": \"capsule\", \"size\": [0.05, 0.2], \"quat\": [0.70710678118654752, 0, 0.70710678118654752, 0], " ROUND_SOLIMP " },\n"
                "{ \"name\": \"ball\", \"body\": \"b\", \"type\": \"sphere\", \"size\": [0.06], " ROUND_SOLIMP " }", 0);
  const double p3[3] = {0.05, 0.01, 0.1055};
  worst = fmax(worst, check_shape(m, p3, r1, slide, "sphere on a capsule"));
  sim_model_free(m);
  m = load_pair("{ \"name\": \"base\", \"body\": \"world\", \"type\": \"sphere\", \"size\": [0.1], " ROUND_SOLIMP " },\n"
                "{ \"name\": \"rod\", \"body\": \"b\", \"type\": \"capsule\", \"size\": [0.04, 0.1], " ROUND_SOLIMP " }", 0);
  const double p4[3] = {0.012, 0.006, 0.2356}, r4[3] = {0.1, 0.05, 0.3};
  worst = fmax(worst, check_shape(m, p4, r4, rest, "capsule's end on a sphere"));
  sim_model_free(m);
  /* two free bodies: a capsule lying on a free sphere (the sphere's body at rest at the origin):
   * every dof of both moves the contact, the rows' two sides with opposite signs */
  m = load_pair("{ \"name\": \"rod\", \"body\": \"b\", \"type\": \"capsule\", \"size\": [0.04, 0.15], " ROUND_SOLIMP " },\n"
                "{ \"name\": \"ball\", \"body\": \"c\", \"type\": \"sphere\", \"size\": [0.08], " ROUND_SOLIMP " }", 1);
  const double p5[3] = {0.03, 0.02, 0.1155}, v5[6] = {0.05, 0.1, -0.5, 0.2, 0, 0.1};
  worst = fmax(worst, check_shape(m, p5, r2, v5, "capsule on a free sphere"));
  sim_model_free(m);
  /* a sphere against a box, from outside: the box's nearest point slides on a face (two
   * directions), along an edge (one), or sits at a corner (none); a free box on a fixed sphere */
  m = load_pair("{ \"name\": \"crate\", \"body\": \"world\", \"type\": \"box\", \"size\": [0.2, 0.15, 0.1], \"quat\": [0.9950041652780258, 0, 0, 0.09983341664682815], " ROUND_SOLIMP " },\n"
                "{ \"name\": \"ball\", \"body\": \"b\", \"type\": \"sphere\", \"size\": [0.06], " ROUND_SOLIMP " }", 0);
  const double face[3] = {0.05, -0.03, 0.1555};
  worst = fmax(worst, check_shape(m, face, r1, slide, "sphere on a box's face"));
  sim_model_free(m);
  m = load_pair("{ \"name\": \"base\", \"body\": \"world\", \"type\": \"sphere\", \"size\": [0.1], " ROUND_SOLIMP " },\n"
                "{ \"name\": \"crate\", \"body\": \"b\", \"type\": \"box\", \"size\": [0.08, 0.06, 0.05], " ROUND_SOLIMP " }", 0);
  const double on_face[3] = {0.01, -0.02, 0.1455}, tilt[3] = {0.1, -0.05, 0.3};
  worst = fmax(worst, check_shape(m, on_face, tilt, rest, "box's face on a sphere"));
  /* pitched 45°: its edge at box (0.08, ·, −0.05) lowest, above the sphere's centre */
  const double on_edge[3] = {-0.0212 + 0.003, 0.01, 0.1874}, tipped[3] = {0, 0.785398, 0};
  worst = fmax(worst, check_shape(m, on_edge, tipped, rest, "box's edge on a sphere"));
  const double on_corner[3] = {0.0, 0.0, 0.1 + 0.1118 - 0.0045}, corner_up[3] = {0.6155, 0.785398, 0};
  worst = fmax(worst, check_shape(m, on_corner, corner_up, rest, "box's corner on a sphere"));
  sim_model_free(m);
  /* a capsule against a box: lying on its face (both ends touching), an end on its top edge */
  m = load_pair("{ \"name\": \"crate\", \"body\": \"world\", \"type\": \"box\", \"size\": [0.3, 0.3, 0.1], " ROUND_SOLIMP " },\n"
                "{ \"name\": \"rod\", \"body\": \"b\", \"type\": \"capsule\", \"size\": [0.04, 0.15], " ROUND_SOLIMP " }", 0);
  const double lying[3] = {0.05, -0.02, 0.1355}, flat[3] = {1.5708 + 0.01, 0.01, 0.3};
  worst = fmax(worst, check_shape(m, lying, flat, rest, "capsule lying on a box's face"));
  const double leaning[3] = {0.3 + 0.022, -0.1, 0.1 + 0.022 + 0.1495};
  const double upright[3] = {0.05, 0.02, 0.1};
  /* an edge's contact turns fast with the end's position: 4th-order differences at 2.5e-4 err
   * by 3 of the tolerance on ∂ẍ/∂x (analytic 196.04164, FD 196.04204), at 1e-4 by 0.05, at 5e-5
   * by 0.02: the differences' truncation, so this scene takes 1e-4 */
  eval_steps.q = eval_steps.v = 1e-4;
  worst = fmax(worst, check_shape(m, leaning, upright, rest, "capsule's end on a box's edge"));
  eval_steps.q = eval_steps.v = 2.5e-4;
  /* across its top edge, the outer end lower: the segment's point nearest the edge slides along
   * the capsule while the box's slides along the edge */
  const double over_edge[3] = {0.3, 0.02, 0.1362}, across[3] = {0, 1.5708 + 0.1, 0.05};
  eval_steps.q = eval_steps.v = 1e-4;
  worst = fmax(worst, check_shape(m, over_edge, across, rest, "capsule across a box's edge"));
  eval_steps.q = eval_steps.v = 2.5e-4;
  sim_model_free(m);
  printf("round pairs: worst entry %.3g of the tolerance\n", worst);
  assert_true(worst <= 1);
}

/* one step from (pos, rpy) at rest: its status, and its detail into out */
static int step_status(sim_model *m, const double pos[3], const double rpy[3], char *out,
                       size_t out_sz) {
  char err[256];
  sim_deriv *w = sim_deriv_new(m, NULL, 0, err, sizeof err);
  sim_data *d = sim_data_new(m);
  memcpy(d->qpos, pos, 3 * sizeof(double));
  sim_rpy_to_quat(d->qpos + 3, rpy);
  int nx = sim_deriv_nx(m);
  double A[24 * 24];
  for (int i = 0; i < nx * nx; i++) A[i] = 7;
  int rc = sim_deriv_step(m, d, w, A, NULL, NULL);
  for (int i = 0; rc != SIM_DERIV_OK && i < nx * nx; i++) assert_true(A[i] == 7); /* unwritten */
  snprintf(out, out_sz, "%s", sim_deriv_detail(w));
  printf("  status %d (%s): %s\n", rc, sim_deriv_strerror(rc), out);
  sim_deriv_free(&w);
  sim_data_free(d);
  return rc;
}

/* pairs and cones without derivatives say so and name the contact's geoms, never a zero */
static void test_pairs_without_derivatives(void **state) {
  (void)state;
  char detail[256];
  const double up[3] = {0, 0, 0};
  /* a long capsule across a small box's top edge (an X, the outer end lower): its second
   * point placed by a rule, where the box ends */
  sim_model *m = load_pair("{ \"name\": \"crate\", \"body\": \"world\", \"type\": \"box\", \"size\": [0.05, 0.05, 0.05], " ROUND_SOLIMP " },\n"
                           "{ \"name\": \"rod\", \"body\": \"b\", \"type\": \"capsule\", \"size\": [0.04, 0.4], " ROUND_SOLIMP " }", 0);
  const double over_edge[3] = {0.05, 0.01, 0.05 + 0.034}, across[3] = {0, 1.5708 + 0.05, 0};
  assert_int_equal(step_status(m, over_edge, across, detail, sizeof detail), SIM_DERIV_ECONTACT);
  assert_non_null(strstr(detail, "capsule 'rod' against box 'crate': the capsule's contact point "
                                 "is placed inside its segment by a rule"));
  sim_model_free(m);
  /* two boxes */
  m = load_pair("{ \"name\": \"table\", \"body\": \"world\", \"type\": \"box\", \"size\": [0.3, 0.3, 0.1], " ROUND_SOLIMP " },\n"
                "{ \"name\": \"crate\", \"body\": \"b\", \"type\": \"box\", \"size\": [0.05, 0.05, 0.05], " ROUND_SOLIMP " }", 0);
  const double on_table[3] = {0.01, 0, 0.148};
  assert_int_equal(step_status(m, on_table, up, detail, sizeof detail), SIM_DERIV_ECONTACT);
  assert_non_null(strstr(detail, "box 'table' against box 'crate'"));
  sim_model_free(m);
  /* a sphere deep in a box: its centre inside (the face pushing out is chosen, not derived) */
  m = load_pair("{ \"name\": \"base\", \"body\": \"world\", \"type\": \"sphere\", \"size\": [0.1], " ROUND_SOLIMP " },\n"
                "{ \"name\": \"crate\", \"body\": \"b\", \"type\": \"box\", \"size\": [0.2, 0.2, 0.2], " ROUND_SOLIMP " }", 0);
  const double around[3] = {0.01, 0.02, 0.03};
  assert_int_equal(step_status(m, around, up, detail, sizeof detail), SIM_DERIV_ECONTACT);
  assert_non_null(strstr(detail, "sphere 'base' against box 'crate': the sphere's centre is inside"));
  sim_model_free(m);
  /* two spheres with one centre: the normal is the axes' cross product, not the centres' */
  m = load_pair("{ \"name\": \"base\", \"body\": \"world\", \"type\": \"sphere\", \"size\": [0.1], " ROUND_SOLIMP " },\n"
                "{ \"name\": \"ball\", \"body\": \"b\", \"type\": \"sphere\", \"size\": [0.08], " ROUND_SOLIMP " }", 0);
  const double centre[3] = {0, 0, 0}, turned[3] = {0.5, 0, 0};
  assert_int_equal(step_status(m, centre, turned, detail, sizeof detail), SIM_DERIV_ECONTACT);
  assert_non_null(strstr(detail, "sphere 'base' against sphere 'ball': the two centres coincide"));
  sim_model_free(m);
  m = load_shape("rk4", "sphere", "[0.1]");
  const double pressed[3] = {0, 0, 0.095};
  assert_int_equal(step_status(m, pressed, up, detail, sizeof detail), SIM_DERIV_OK);
  assert_string_equal(detail, "");
  m->opt.cone = SIM_CONE_ELLIPTIC;
  assert_int_equal(step_status(m, pressed, up, detail, sizeof detail), SIM_DERIV_ECONE);
  assert_non_null(strstr(detail, "plane 'floor' against sphere 'shape': the elliptic cone"));
  m->opt.cone = SIM_CONE_PYRAMIDAL;
  m->opt.impratio = 2;
  assert_int_equal(step_status(m, pressed, up, detail, sizeof detail), SIM_DERIV_ECONE);
  assert_non_null(strstr(detail, "impratio"));
  sim_model_free(m);
}

/* --- the solvers ------------------------------------------------------------------------------ */

/* A and B of one step from d's state with the given solver (converged: 1000 iterations, no
 * tolerance); returns the largest entry of |A| and |B| */
static double jacobians_with(sim_model *m, const sim_data *d, sim_solver_type solver, double *AB) {
  char err[256];
  m->opt.solver = solver;
  m->opt.solver_iterations = 1000;
  m->opt.solver_tolerance = 0;
  sim_deriv *w = sim_deriv_new(m, NULL, 0, err, sizeof err);
  sim_data *work = sim_data_new(m);
  fd_copy_state(m, work, d);
  int nx = sim_deriv_nx(m);
  assert_int_equal(sim_deriv_step(m, work, w, AB, AB + nx * nx, NULL), SIM_DERIV_OK);
  double big = 0;
  for (int i = 0; i < nx * (nx + m->nu); i++) big = fmax(big, fabs(AB[i]));
  sim_deriv_free(&w);
  sim_data_free(work);
  return big;
}

/* the largest difference of the Jacobians of CG's and Newton's converged steps, relative to
 * the largest entry */
static double solver_difference(sim_model *m, const sim_data *d, const char *what) {
  int nx = sim_deriv_nx(m), n = nx * (nx + m->nu);
  double *cg = calloc((size_t)2 * n, sizeof(double)), *newton = cg + n, diff = 0;
  double big = jacobians_with(m, d, SIM_SOLVER_CG, cg);
  jacobians_with(m, d, SIM_SOLVER_NEWTON, newton);
  for (int i = 0; i < n; i++) diff = fmax(diff, fabs(cg[i] - newton[i]));
  printf("%s (%s): CG and Newton's A, B differ by %.3g of the largest entry (%.3g)\n", what,
         sim_integrator_name(m->opt.integrator), diff / big, big);
  free(cg);
  return diff / big;
}

/* Newton and CG run to convergence give the same Jacobians: the derivatives are those of the
 * minimum on the active set, polished by one exact solve, whichever solver found it */
static void test_solvers_agree(void **state) {
  (void)state;
  double worst = 0;
  const double slide[6] = {1.2, -0.5, 0, 0.3, 2, -1};
  for (int integ = 0; integ < 2; integ++) {
    sim_model *m = load_shape(integ ? "rk4" : "euler", "box", "[0.1, 0.15, 0.05]");
    sim_data *d = sim_data_new(m);
    const double p[3] = {0.2, 0.1, 0.044}, r[3] = {0.01, -0.01, 0.7};
    const double move[6] = {0.2, -0.1, 0.01, 0.1, 0.2, -0.5};
    memcpy(d->qpos, p, sizeof p);
    sim_rpy_to_quat(d->qpos + 3, r);
    memcpy(d->qvel, move, sizeof move);
    worst = fmax(worst, solver_difference(m, d, "box on its four corners"));
    sim_data_free(d);
    sim_model_free(m);
    m = load_pair("{ \"name\": \"bar\", \"body\": \"world\", \"type\": \"capsule\", \"size\": [0.05, 0.2], \"quat\": [0.70710678118654752, 0, 0.70710678118654752, 0], " ROUND_SOLIMP " },\n"
                  "{ \"name\": \"rod\", \"body\": \"b\", \"type\": \"capsule\", \"size\": [0.04, 0.15], " ROUND_SOLIMP " }", 0);
    m->opt.integrator = integ ? SIM_INTEGRATOR_RK4 : SIM_INTEGRATOR_EULER;
    d = sim_data_new(m);
    const double p2[3] = {0.03, 0.02, 0.086}, r2[3] = {1.5708 + 0.05, 0.03, 0.2};
    memcpy(d->qpos, p2, sizeof p2);
    sim_rpy_to_quat(d->qpos + 3, r2);
    memcpy(d->qvel, slide, sizeof slide);
    worst = fmax(worst, solver_difference(m, d, "capsule sliding across a capsule"));
    sim_data_free(d);
    sim_model_free(m);
  }
  printf("solvers: worst difference %.3g\n", worst);
  assert_true(worst <= 1e-9);
}

/* two branches of one tree touching: a yaw hinge carries two arms on pitch hinges, a sphere at
 * the end of one pressed against the other's capsule (the yaw moves both sides of the contact,
 * each pitch one), the whole Euler step against differences of sim_step with Newton converged */
static const char branches_json[] =
    "{ \"name\": \"branches\", \"timestep\": 0.002, \"solver\": \"newton\", \"solver_iterations\": 1000,\n"
    "  \"solver_tolerance\": 0,\n"
    "  \"bodies\": [ { \"name\": \"a\", \"parent\": \"world\", \"joint\": { \"name\": \"yaw\", \"type\": \"hinge\", \"axis\": [0, 0, 1], \"damping\": 0.1 },\n"
    "      \"inertial\": { \"mass\": 2, \"inertia\": [0.01, 0.01, 0.02, 0, 0, 0] } },\n"
    "    { \"name\": \"b1\", \"parent\": \"a\", \"pos\": [0.1, 0, 0], \"joint\": { \"name\": \"p1\", \"type\": \"hinge\", \"axis\": [0, 1, 0] },\n"
    "      \"inertial\": { \"mass\": 0.7, \"com\": [0, 0, 0.2], \"inertia\": [0.004, 0.004, 0.001, 0, 0, 0] } },\n"
    "    { \"name\": \"b2\", \"parent\": \"a\", \"pos\": [-0.1, 0, 0], \"joint\": { \"name\": \"p2\", \"type\": \"hinge\", \"axis\": [0, 1, 0], \"armature\": 1 },\n"
    "      \"inertial\": { \"mass\": 0.9, \"com\": [0, 0, 0.2], \"inertia\": [0.005, 0.005, 0.001, 0, 0, 0] } } ],\n"
    "  \"geoms\": [ { \"name\": \"tip\", \"body\": \"b1\", \"type\": \"sphere\", \"size\": [0.05], \"pos\": [0, 0.02, 0.3], " ROUND_SOLIMP " },\n"
    "    { \"name\": \"post\", \"body\": \"b2\", \"type\": \"capsule\", \"size\": [0.04, 0.2], \"pos\": [0, 0, 0.2], " ROUND_SOLIMP " } ],\n"
    "  \"actuators\": [ { \"name\": \"m1\", \"joint\": \"p1\", \"type\": \"motor\" } ] }\n";

static void test_branches_touching(void **state) {
  (void)state;
  char err[512];
  sim_model *m = sim_model_load_string(branches_json, "branches", err, sizeof err);
  if (!m) fprintf(stderr, "%s\n", err);
  assert_non_null(m);
  sim_data *d = sim_data_new(m), *probe = sim_data_new(m);
  const double q[3] = {0.3, -0.3917, 0.02}, v[3] = {0.01, -0.02, 0.01};
  memcpy(d->qpos, q, sizeof q);
  memcpy(d->qvel, v, sizeof v);
  d->ctrl[0] = -1.0; /* pressing the tip against the post */
  fd_copy_state(m, probe, d);
  sim_forward(m, probe);
  char rows[1024];
  fd_row_states(m, d, rows);
  printf("branches: %d contacts (%s against %s), rows %s\n", probe->ncon,
         probe->ncon ? m->geoms[probe->con_geom[0]].name : "-",
         probe->ncon ? m->geoms[probe->con_geom[1]].name : "-", rows);
  assert_int_equal(probe->ncon, 1);
  fd_assert_one_active_set(m, d, rows, fd_default_steps());
  double worst = fd_check_step(m, d, "body/b1/mass,body/b2/com_z,joint/yaw/damping", 1);
  printf("branches touching: worst %.3g of the tolerance\n", worst);
  assert_true(worst <= 1);
  sim_data_free(d);
  sim_data_free(probe);
  sim_model_free(m);
}

TS_MAIN(test_shapes_on_a_plane, test_club_arm_on_its_table, test_round_pairs,
        test_branches_touching, test_pairs_without_derivatives, test_solvers_agree)
