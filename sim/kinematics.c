/* sim/kinematics.c: positions and velocities of every body from qpos and qvel. */
#include "sim/sim.h"
#include "sim/spatial.h"

#include <string.h>

/* Joint motion subspace in the body frame: hinge [axis; 0], slide [0; axis]. */
static void joint_subspace(double S[6], const sim_joint *j) {
  memset(S, 0, 6 * sizeof(double));
  if (j->type == SIM_JOINT_HINGE) {
    memcpy(S, j->axis, 3 * sizeof(double));
  } else if (j->type == SIM_JOINT_SLIDE) {
    memcpy(S + 3, j->axis, 3 * sizeof(double));
  }
}

/* Parent→body transform: rotation R (body axes in parent coordinates) and origin r. */
static void joint_transform(double R[9], double r[3], const sim_body *b, const sim_joint *j,
                            double q) {
  memcpy(r, b->pos, 3 * sizeof(double));
  if (j->type == SIM_JOINT_HINGE) {
    double Rj[9];
    sim_axis_angle_to_mat(Rj, j->axis, q);
    sim_mat3_mul(R, b->mat, Rj);
    return;
  }
  memcpy(R, b->mat, 9 * sizeof(double));
  if (j->type == SIM_JOINT_SLIDE) {
    double shift[3];
    sim_mat3_vec(shift, b->mat, j->axis);
    for (int k = 0; k < 3; k++) {
      r[k] += shift[k] * q;
    }
  }
}

static void world_pose(const sim_model *m, sim_data *d, int i, const double R[9],
                       const double r[3]) {
  int p = m->bodies[i].parent;
  double offset[3];
  sim_mat3_mul(d->xmat + 9 * i, d->xmat + 9 * p, R);
  sim_mat3_vec(offset, d->xmat + 9 * p, r);
  for (int k = 0; k < 3; k++) {
    d->xpos[3 * i + k] = d->xpos[3 * p + k] + offset[k];
  }
  sim_mat3_vec(offset, d->xmat + 9 * i, m->bodies[i].com);
  for (int k = 0; k < 3; k++) {
    d->xipos[3 * i + k] = d->xpos[3 * i + k] + offset[k];
  }
}

/* v_i = X_i·v_parent + S·qd, and the velocity-product term c_i = v_i ×m (S·qd). */
static void body_velocity(const sim_model *m, sim_data *d, int i) {
  const sim_joint *j = &m->joints[m->bodies[i].joint];
  double *v = d->bvel + 6 * i, Sqd[6] = {0};
  sim_xform_motion(v, d->bE + 9 * i, d->br + 3 * i, d->bvel + 6 * m->bodies[i].parent);
  if (j->dofadr >= 0) {
    double qd = d->qvel[j->dofadr];
    for (int k = 0; k < 6; k++) {
      Sqd[k] = d->bS[6 * i + k] * qd;
      v[k] += Sqd[k];
    }
  }
  sim_cross_motion(d->bcvel + 6 * i, v, Sqd);
}

static void site_positions(const sim_model *m, sim_data *d) {
  for (int s = 0; s < m->nsite; s++) {
    int b = m->sites[s].body;
    double offset[3];
    sim_mat3_vec(offset, d->xmat + 9 * b, m->sites[s].pos);
    for (int k = 0; k < 3; k++) {
      d->site_xpos[3 * s + k] = d->xpos[3 * b + k] + offset[k];
    }
  }
}

void sim_kinematics(const sim_model *m, sim_data *d) {
  static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  memset(d->xpos, 0, 3 * sizeof(double));
  memset(d->xipos, 0, 3 * sizeof(double));
  memcpy(d->xmat, identity, sizeof identity);
  memset(d->bvel, 0, 6 * sizeof(double));
  memset(d->bcvel, 0, 6 * sizeof(double));
  for (int i = 1; i < m->nbody; i++) {
    const sim_joint *j = &m->joints[m->bodies[i].joint];
    double q = j->qposadr >= 0 ? d->qpos[j->qposadr] : 0, R[9];
    joint_transform(R, d->br + 3 * i, &m->bodies[i], j, q);
    /* the Plücker rotation maps parent coordinates into body coordinates: E = Rᵀ */
    for (int r = 0; r < 3; r++) {
      for (int c = 0; c < 3; c++) {
        d->bE[9 * i + 3 * r + c] = R[3 * c + r];
      }
    }
    joint_subspace(d->bS + 6 * i, j);
    world_pose(m, d, i, R, d->br + 3 * i);
    body_velocity(m, d, i);
  }
  site_positions(m, d);
}
