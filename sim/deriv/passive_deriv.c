/* sim/deriv/passive_deriv.c: derivative of the joint springs and dampers (sim/passive.c).
 *
 * Forward: τ_k = −stiffness·(q_k − springref) − damping·q̇_k on each dof k (springs on hinges
 * and slides only). Its derivative is diagonal: ∂τ_k/∂q_k = −stiffness, ∂τ_k/∂q̇_k = −damping,
 * and for the parameters ∂τ_k/∂stiffness = −(q_k − springref), ∂τ_k/∂springref = stiffness,
 * ∂τ_k/∂damping = −q̇_k. (Euler's implicit damping, (M + h·B)·q̈, belongs to the solve:
 * dynamics_deriv.c.)
 *
 * Forces on bodies (xfrc_applied, sim/passive.c): τ_j = S_j·W for each dof j that moves body b,
 * W = [t + p × f; f] the wrench about the world origin of the force f at the body's centre of
 * mass p and the torque t, both fixed in the world. Turning dof i (one of those) by ε moves p by
 * ε·(ω_i × p + v_i) (S_i = [ω_i; v_i]), so W changes by [(ω_i × p + v_i) × f; 0], and turns the
 * dofs it carries (j nearer the body than i, or both of one ball): S_j changes by S_i × S_j. So
 *   ∂τ_j/∂q_i = S_j·[(ω_i × p + v_i) × f; 0] + (j carried by i ? (S_i × S_j)·W : 0),
 * nothing on the velocities, and for the body's COM (com_x/y/z, body axes) p moves by the
 * axis R·e: ∂τ_j/∂com = S_j·[(R·e) × f; 0]. */
#include "sim/deriv/internal.h"
#include "sim/spatial.h"

/* dof j's derivative of a body's wrench when dof i moves the point p: S_j·[dp × f; 0] */
static double moved_point(const double *Sj, const double dp[3], const double *f) {
  double n[3];
  sim_cross3(n, dp, f);
  return Sj[0] * n[0] + Sj[1] * n[1] + Sj[2] * n[2];
}

/* (S_i × S_j)·W, the change of τ_j = S_j·W when dof i turns S_j */
static double turned_axis(const double *Si, const double *Sj, const double *W) {
  double a[3], b[3], c[3];
  sim_cross3(a, Si, Sj);         /* ω_i × ω_j */
  sim_cross3(b, Si, Sj + 3);     /* ω_i × v_j */
  sim_cross3(c, Si + 3, Sj);     /* v_i × ω_j */
  return a[0] * W[0] + a[1] * W[1] + a[2] * W[2] + (b[0] + c[0]) * W[3] + (b[1] + c[1]) * W[4] +
         (b[2] + c[2]) * W[5];
}

static int carried(const sim_deriv *w, int j, int i, int jj, int ii) {
  return jj <= ii || (w->rotgroup[j] >= 0 && w->rotgroup[j] == w->rotgroup[i]);
}

/* the derivative of body b's applied force and torque */
static void body_force_deriv(sim_deriv *w, const sim_data *d, int b) {
  const sim_model *m = w->m;
  const double *f = d->xfrc_applied + 6 * b, *t = f + 3, *p = d->xipos + 3 * b;
  double W[6], pf[3];
  sim_cross3(pf, p, f);
  for (int r = 0; r < 3; r++) {
    W[r] = t[r] + pf[r], W[3 + r] = f[r];
  }
  int last = -1; /* the dofs that move b: from its last one along dof_parent */
  for (int a = b; a > 0 && last < 0; a = m->bodies[a].parent) {
    if (m->bodies[a].dofnum > 0) {
      last = m->bodies[a].dofadr + m->bodies[a].dofnum - 1;
    }
  }
  for (int i = last, ii = 0; i >= 0; i = m->dof_parent[i], ii++) {
    const double *Si = d->cdof + 6 * i;
    double dp[3];
    sim_cross3(dp, Si, p);
    for (int r = 0; r < 3; r++) {
      dp[r] += Si[3 + r];
    }
    for (int j = last, jj = 0; j >= 0; j = m->dof_parent[j], jj++) {
      const double *Sj = d->cdof + 6 * j;
      double v = moved_point(Sj, dp, f);
      if (carried(w, j, i, jj, ii)) {
        v += turned_axis(Si, Sj, W);
      }
      w->G[(size_t)j * w->ncol + i] += v;
    }
  }
  for (int q = 0; q < w->np; q++) { /* the COM in body axes moves p along the body's axes */
    const sim_param prm = w->params[q];
    const int axis = prm.field - SIM_PARAM_BODY_com_x;
    if (prm.index != b || axis < 0 || axis > 2) {
      continue;
    }
    const double dp[3] = {d->xmat[9 * b + axis], d->xmat[9 * b + 3 + axis],
                          d->xmat[9 * b + 6 + axis]};
    for (int j = last; j >= 0; j = m->dof_parent[j]) {
      w->G[(size_t)j * w->ncol + w->cp + q] += moved_point(d->cdof + 6 * j, dp, f);
    }
  }
}

void sim__passive_deriv(sim_deriv *w, const sim_data *d) {
  const sim_model *m = w->m;
  for (int k = 0; k < w->nv; k++) {
    const sim_joint *j = &m->joints[m->dof_joint[k]];
    double *row = w->G + (size_t)k * w->ncol;
    if (j->stiffness != 0) {
      row[k] -= j->stiffness;
    }
    row[w->cv + k] -= j->damping;
  }
  for (int b = 1; b < m->nbody; b++) {
    const double *x = d->xfrc_applied + 6 * b;
    if (x[0] != 0 || x[1] != 0 || x[2] != 0 || x[3] != 0 || x[4] != 0 || x[5] != 0) {
      body_force_deriv(w, d, b);
    }
  }
  for (int n = 0; n < w->np; n++) {
    sim_param p = w->params[n];
    if (sim_param_kind_of(p.field) != SIM_PARAM_JOINT) {
      continue;
    }
    const sim_joint *j = &m->joints[p.index];
    for (int k = j->dofadr; k >= 0 && k < j->dofadr + sim_joint_nv(j->type); k++) {
      double *entry = w->G + (size_t)k * w->ncol + w->cp + n;
      switch (p.field) {
      case SIM_PARAM_JOINT_stiffness:
        *entry -= d->qpos[j->qposadr] - j->springref;
        break;
      case SIM_PARAM_JOINT_springref:
        *entry += j->stiffness;
        break;
      case SIM_PARAM_JOINT_damping:
        *entry -= d->qvel[k];
        break;
      default: /* armature: dynamics_deriv.c; frictionloss: constraint_deriv.c */
        break;
      }
    }
  }
}
