/* sim/rnea.c: Recursive Newton–Euler inverse dynamics in body coordinates. */
#include "sim/sim.h"
#include "sim/spatial.h"

#include <string.h>

/* Gravity enters as a fictitious upward acceleration of the base: a_0 = [0; −g]. */
static void base_acceleration(const sim_model *m, double a0[6]) {
  memset(a0, 0, 6 * sizeof(double));
  a0[3] = -m->opt.gravity[0];
  a0[4] = -m->opt.gravity[1];
  a0[5] = -m->opt.gravity[2];
}

/* Forward pass: body accelerations and the net force each body needs,
 * f_i = I_i·a_i + v_i ×f (I_i·v_i). qacc may be NULL for zero acceleration. */
static void rnea_forward(const sim_model *m, sim_data *d, const double *qacc) {
  base_acceleration(m, d->bacc);
  for (int i = 1; i < m->nbody; i++) {
    const sim_body *b = &m->bodies[i];
    const sim_joint *j = &m->joints[b->joint];
    double *a = d->bacc + 6 * i, Iv[6], vxIv[6], Ia[6];
    sim_xform_motion(a, d->bE + 9 * i, d->br + 3 * i, d->bacc + 6 * b->parent);
    for (int k = 0; k < 6; k++) {
      a[k] += d->bcvel[6 * i + k];
    }
    if (qacc && j->dofadr >= 0) {
      for (int k = 0; k < 6; k++) {
        a[k] += d->bS[6 * i + k] * qacc[j->dofadr];
      }
    }
    sim_mat6_vec(Iv, b->sinertia, d->bvel + 6 * i);
    sim_cross_force(vxIv, d->bvel + 6 * i, Iv);
    sim_mat6_vec(Ia, b->sinertia, a);
    for (int k = 0; k < 6; k++) {
      d->bfrc[6 * i + k] = Ia[k] + vxIv[k];
    }
  }
}

/* Backward pass: project each body's force on its joint and pass it to the parent. */
static void rnea_backward(const sim_model *m, sim_data *d, double *tau) {
  for (int i = m->nbody - 1; i > 0; i--) {
    const sim_body *b = &m->bodies[i];
    const sim_joint *j = &m->joints[b->joint];
    if (j->dofadr >= 0) {
      tau[j->dofadr] = sim_dot6(d->bS + 6 * i, d->bfrc + 6 * i);
    }
    if (b->parent > 0) {
      double fp[6];
      sim_xform_force_back(fp, d->bE + 9 * i, d->br + 3 * i, d->bfrc + 6 * i);
      for (int k = 0; k < 6; k++) {
        d->bfrc[6 * b->parent + k] += fp[k];
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
