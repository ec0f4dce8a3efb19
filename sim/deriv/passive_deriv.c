/* sim/deriv/passive_deriv.c: derivative of the joint springs and dampers (sim/passive.c).
 *
 * Forward: τ_k = −stiffness·(q_k − springref) − damping·q̇_k on each dof k (springs on hinges
 * and slides only). Its derivative is diagonal: ∂τ_k/∂q_k = −stiffness, ∂τ_k/∂q̇_k = −damping,
 * and for the parameters ∂τ_k/∂stiffness = −(q_k − springref), ∂τ_k/∂springref = stiffness,
 * ∂τ_k/∂damping = −q̇_k. (Euler's implicit damping, (M + h·B)·q̈, belongs to the solve:
 * dynamics_deriv.c.) */
#include "sim/deriv/internal.h"

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
