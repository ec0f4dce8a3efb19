/* sim/integrate.c: time integration of the state (qpos, qvel) by one timestep. */
#include "sim/sim.h"
#include "sim/spatial.h"

#include <math.h>
#include <string.h>

/* Who watches the evaluations (sim_step_observed): the hook, its context and the count so far. */
typedef struct observer {
  sim_stage_hook hook;
  void *ctx;
  int stage;
} observer;

/* The dynamics at the state held in d: qacc, with h·damping made implicit when h > 0. */
static void evaluate(const sim_model *m, sim_data *d, double implicit_h, observer *obs) {
  sim_forward_dynamics(m, d, implicit_h);
  if (obs->hook) {
    obs->hook(obs->ctx, m, d, obs->stage);
  }
  obs->stage++;
}

/* out = in + h·v for hinges and slides: the whole of a model without ball or free joints */
static void integrate_scalar(const sim_model *m, double *out, const double *in, const double *v,
                             double h) {
  for (int j = 0; j < m->njnt; j++) {
    const sim_joint *jnt = &m->joints[j];
    if (jnt->qposadr >= 0) {
      out[jnt->qposadr] = in[jnt->qposadr] + h * v[jnt->dofadr];
    }
  }
}

/* The same on the manifold for quaternions, as MuJoCo's mj_integratePos: a ball's (or free
 * joint's) orientation advances by the exponential map of h·ω in body axes,
 * q ← normalize(q)·exp(h·ω/2); a free joint's position by h·v (world). */
static void integrate_manifold(const sim_model *m, double *out, const double *in,
                               const double *v, double h) {
  for (int j = 0; j < m->njnt; j++) {
    const sim_joint *jnt = &m->joints[j];
    int q = jnt->qposadr, k = jnt->dofadr;
    switch (jnt->type) {
    case SIM_JOINT_HINGE:
    case SIM_JOINT_SLIDE:
      out[q] = in[q] + h * v[k];
      break;
    case SIM_JOINT_BALL:
      sim_quat_integrate(out + q, in + q, v + k, h);
      break;
    case SIM_JOINT_FREE:
      for (int r = 0; r < 3; r++) {
        out[q + r] = in[q + r] + h * v[k + r];
      }
      sim_quat_integrate(out + q + 3, in + q + 3, v + k + 3, h);
      break;
    case SIM_JOINT_FIXED:
    default:
      break;
    }
  }
}

/* out = in "+" h·v, joint by joint (nq == nv exactly when no joint has a quaternion) */
static void integrate_positions(const sim_model *m, double *out, const double *in,
                                const double *v, double h) {
  if (m->nq == m->nv) {
    integrate_scalar(m, out, in, v, h);
  } else {
    integrate_manifold(m, out, in, v, h);
  }
}

static void add_scaled(double *out, const double *a, const double *b, double s, int n) {
  for (int k = 0; k < n; k++) {
    out[k] = a[k] + s * b[k];
  }
}

static int any_damping(const sim_model *m) {
  for (int j = 0; j < m->njnt; j++) {
    if (m->joints[j].damping > 0) {
      return 1;
    }
  }
  return 0;
}

/* act += h·rate for the muscles' activations (a DC motor's current has rate 0 here: it is
 * advanced exactly by sim_actuator_advance), as MuJoCo's mj_advance; unclamped, as MuJoCo 2.2.2
 * leaves an activation without actlimited. */
static void advance_act(const sim_model *m, sim_data *d, const double *rate, double h) {
  for (int k = 0; k < m->na; k++) {
    d->act[k] += h * rate[k];
  }
}

/* Semi-implicit Euler: v += h·a, then q += h·v_new. Damping is implicit, as in MuJoCo:
 * (M + h·B)·a = f, which keeps stiff dampers stable at large steps. */
static void step_euler(const sim_model *m, sim_data *d, double h, observer *obs) {
  evaluate(m, d, any_damping(m) ? h : 0.0, obs);
  advance_act(m, d, d->act_dot, h);
  add_scaled(d->qvel, d->qvel, d->qacc, h, m->nv);
  integrate_positions(m, d->qpos, d->qpos, d->qvel, h);
}

/* Velocity Verlet: half kick, drift, half kick. The closing half kick needs the acceleration
 * at the new velocity, which velocity-dependent forces (Coriolis, damping) make implicit:
 * evaluating it at the half-step velocity alone leaves the method first order, so one
 * predictor pass estimates the end velocity first (second order, three evaluations a step). */
static void step_verlet(const sim_model *m, sim_data *d, double h, observer *obs) {
  int nv = m->nv;
  evaluate(m, d, 0.0, obs);
  memcpy(d->int_kact, d->act_dot, (size_t)m->na * sizeof(double)); /* act: explicit Euler */
  add_scaled(d->qvel, d->qvel, d->qacc, 0.5 * h, nv);
  integrate_positions(m, d->qpos, d->qpos, d->qvel, h);
  memcpy(d->int_v0, d->qvel, (size_t)nv * sizeof(double)); /* the half-step velocity */
  evaluate(m, d, 0.0, obs);
  add_scaled(d->qvel, d->int_v0, d->qacc, 0.5 * h, nv); /* predicted end velocity */
  evaluate(m, d, 0.0, obs);
  add_scaled(d->qvel, d->int_v0, d->qacc, 0.5 * h, nv);
  advance_act(m, d, d->int_kact, h);
}

/* Implicit midpoint x1 = x0 + h·f((x0 + x1)/2), solved by fixed-point iteration from an
 * explicit Euler guess. Time-symmetric, so energy errors stay bounded. */
static void step_midpoint(const sim_model *m, sim_data *d, double h, observer *obs) {
  int nq = m->nq, nv = m->nv;
  memcpy(d->int_q0, d->qpos, (size_t)nq * sizeof(double));
  memcpy(d->int_v0, d->qvel, (size_t)nv * sizeof(double));
  evaluate(m, d, 0.0, obs);
  memcpy(d->int_kact, d->act_dot, (size_t)m->na * sizeof(double)); /* act: explicit Euler */
  integrate_positions(m, d->int_q1, d->int_q0, d->int_v0, h);
  add_scaled(d->int_v1, d->int_v0, d->qacc, h, nv);
  double residual = 0;
  for (int it = 0; it < m->opt.midpoint_iterations; it++) {
    for (int k = 0; k < nq; k++) {
      d->qpos[k] = 0.5 * (d->int_q0[k] + d->int_q1[k]);
    }
    for (int k = 0; k < nv; k++) {
      d->qvel[k] = 0.5 * (d->int_v0[k] + d->int_v1[k]);
    }
    evaluate(m, d, 0.0, obs);
    residual = 0;
    integrate_positions(m, d->scratch, d->int_q0, d->qvel, h);
    for (int k = 0; k < nq; k++) {
      residual = fmax(residual, fabs(d->scratch[k] - d->int_q1[k]));
      d->int_q1[k] = d->scratch[k];
    }
    for (int k = 0; k < nv; k++) {
      double v1 = d->int_v0[k] + h * d->qacc[k];
      residual = fmax(residual, fabs(v1 - d->int_v1[k]));
      d->int_v1[k] = v1;
    }
  }
  memcpy(d->qpos, d->int_q1, (size_t)nq * sizeof(double));
  memcpy(d->qvel, d->int_v1, (size_t)nv * sizeof(double));
  advance_act(m, d, d->int_kact, h);
  d->midpoint_residual = residual;
}

/* RK4 on the rotation manifold (Runge–Kutta–Munthe-Kaas): stage s of a ball's (or free
 * joint's) orientation sits at q0·exp(Θ_s), Θ_s = c_s·h·k̃_(s-1), and its body rate k_s enters
 * as the derivative of Θ, k̃_s = dexp⁻¹(k_s) = k_s + ½·Θ_s×k_s + (1/12)·Θ_s×(Θ_s×k_s) (terms of
 * higher order do not affect a fourth-order method); the step is q0·exp(h·Σ b_s·k̃_s).
 * Stored in place of k_s in int_kq. Summing the k_s themselves, as MuJoCo 2.2.2 does, leaves
 * the rotation second order. */
static void rk4_rotation_rates(const sim_model *m, sim_data *d, int s, double h) {
  static const double stage_c[4] = {0.0, 0.5, 0.5, 1.0};
  int nv = m->nv;
  for (int j = 0; s > 0 && j < m->njnt; j++) {
    const sim_joint *jnt = &m->joints[j];
    if (jnt->type != SIM_JOINT_BALL && jnt->type != SIM_JOINT_FREE) {
      continue;
    }
    int dof = jnt->dofadr + (jnt->type == SIM_JOINT_FREE ? 3 : 0);
    double *k = d->int_kq + s * nv + dof, theta[3], txk[3], txtxk[3];
    for (int r = 0; r < 3; r++) {
      theta[r] = stage_c[s] * h * d->int_kq[(s - 1) * nv + dof + r];
    }
    sim_cross3(txk, theta, k);
    sim_cross3(txtxk, theta, txk);
    for (int r = 0; r < 3; r++) {
      k[r] += 0.5 * txk[r] + txtxk[r] / 12;
    }
  }
}

/* Classic fourth-order Runge–Kutta on x = (q, v, act), ẋ = (v, a(q, v, act), act_dot), as
 * MuJoCo's mj_RungeKutta carries act; rotations of ball and free joints on their manifold
 * (rk4_rotation_rates). */
static void step_rk4(const sim_model *m, sim_data *d, double h, observer *obs) {
  static const double stage_c[4] = {0.0, 0.5, 0.5, 1.0};
  static const double weight[4] = {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6};
  int nq = m->nq, nv = m->nv, na = m->na;
  memcpy(d->int_q0, d->qpos, (size_t)nq * sizeof(double));
  memcpy(d->int_v0, d->qvel, (size_t)nv * sizeof(double));
  memcpy(d->int_act0, d->act, (size_t)na * sizeof(double));
  for (int s = 0; s < 4; s++) {
    double *kq = d->int_kq + s * nv, *kv = d->int_kv + s * nv, *ka = d->int_kact + s * na;
    if (s > 0) {
      integrate_positions(m, d->qpos, d->int_q0, kq - nv, stage_c[s] * h);
      add_scaled(d->qvel, d->int_v0, kv - nv, stage_c[s] * h, nv);
      add_scaled(d->act, d->int_act0, ka - na, stage_c[s] * h, na);
    }
    evaluate(m, d, 0.0, obs);
    memcpy(kq, d->qvel, (size_t)nv * sizeof(double));
    memcpy(kv, d->qacc, (size_t)nv * sizeof(double));
    memcpy(ka, d->act_dot, (size_t)na * sizeof(double));
    if (m->nq != m->nv) {
      rk4_rotation_rates(m, d, s, h);
    }
  }
  for (int k = 0; k < nv; k++) {
    double dq = 0, dv = 0;
    for (int s = 0; s < 4; s++) {
      dq += weight[s] * d->int_kq[s * nv + k];
      dv += weight[s] * d->int_kv[s * nv + k];
    }
    d->scratch[k] = dq;
    d->qvel[k] = d->int_v0[k] + h * dv;
  }
  integrate_positions(m, d->qpos, d->int_q0, d->scratch, h);
  for (int k = 0; k < na; k++) {
    double da = 0;
    for (int s = 0; s < 4; s++) {
      da += weight[s] * d->int_kact[s * na + k];
    }
    d->act[k] = d->int_act0[k] + h * da;
  }
}

void sim_step_observed(const sim_model *m, sim_data *d, sim_stage_hook stage, void *ctx) {
  double h = m->opt.timestep;
  observer obs = {stage, ctx, 0};
  switch (m->opt.integrator) {
  case SIM_INTEGRATOR_VERLET:
    step_verlet(m, d, h, &obs);
    break;
  case SIM_INTEGRATOR_MIDPOINT:
    step_midpoint(m, d, h, &obs);
    break;
  case SIM_INTEGRATOR_RK4:
    step_rk4(m, d, h, &obs);
    break;
  case SIM_INTEGRATOR_EULER:
  default:
    step_euler(m, d, h, &obs);
    break;
  }
  sim_actuator_advance(m, d, h);
  d->time += h;
  d->nstep++;
}

void sim_step(const sim_model *m, sim_data *d) {
  sim_step_observed(m, d, NULL, NULL);
}
