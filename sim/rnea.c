/* sim/rnea.c: Recursive Newton–Euler inverse dynamics, in world axes about the origin. */
#include "sim/sim.h"
#include "sim/spatial.h"

#include <string.h>

/* Gravity enters as a fictitious upward acceleration of the base: a_0 = [0; −g]. */
void sim_base_acceleration(const sim_model *m, double a0[6]) {
  a0[0] = a0[1] = a0[2] = 0;
  a0[3] = -m->opt.gravity[0];
  a0[4] = -m->opt.gravity[1];
  a0[5] = -m->opt.gravity[2];
}

/* Forward pass: body accelerations and the net force each body needs,
 * f_i = I_i·a_i + v_i ×f (I_i·v_i). qacc may be NULL for zero acceleration. */
static void rnea_forward(const sim_model *m, sim_data *d, const double *qacc) {
  sim_base_acceleration(m, d->crne_acc);
  for (int i = 1; i < m->nbody; i++) {
    const sim_body *b = &m->bodies[i];
    const double *I = d->cinert + 36 * i, *v = d->cvel + 6 * i;
    double *a = d->crne_acc + 6 * i, Iv[6], vxIv[6], Ia[6];
    for (int k = 0; k < 6; k++) {
      a[k] = d->crne_acc[6 * b->parent + k] + d->cvp[6 * i + k];
    }
    for (int dof = b->dofadr; qacc && dof >= 0 && dof < b->dofadr + b->dofnum; dof++) {
      for (int k = 0; k < 6; k++) {
        a[k] += d->cdof[6 * dof + k] * qacc[dof];
      }
    }
    sim_mat6_vec(Iv, I, v);
    sim_cross_force(vxIv, v, Iv);
    sim_mat6_vec(Ia, I, a);
    for (int k = 0; k < 6; k++) {
      d->cfrc[6 * i + k] = Ia[k] + vxIv[k];
    }
  }
}

/* Backward pass: project each body's force on its joint and add it to the parent's. */
static void rnea_backward(const sim_model *m, sim_data *d, double *tau) {
  for (int i = m->nbody - 1; i > 0; i--) {
    const sim_body *b = &m->bodies[i];
    for (int dof = b->dofadr; dof >= 0 && dof < b->dofadr + b->dofnum; dof++) {
      tau[dof] = sim_dot6(d->cdof + 6 * dof, d->cfrc + 6 * i);
    }
    if (b->parent > 0) {
      for (int k = 0; k < 6; k++) {
        d->cfrc[6 * b->parent + k] += d->cfrc[6 * i + k];
      }
    }
  }
}

void sim_rnea_bias(const sim_model *m, sim_data *d) {
  rnea_forward(m, d, NULL);
  rnea_backward(m, d, d->qfrc_bias);
}

void sim_inverse(const sim_model *m, sim_data *d) {
  rnea_forward(m, d, d->qacc);
  rnea_backward(m, d, d->qfrc_inverse);
  for (int k = 0; k < m->nv; k++) {
    d->qfrc_inverse[k] += m->joints[m->dof_joint[k]].armature * d->qacc[k];
  }
}
