/* sim/kinematics.c: positions and velocities of every body from qpos and qvel.
 *
 * Spatial quantities are computed in world axes about the world origin (c* arrays): there a
 * child's velocity is its parent's plus its joint's, with no coordinate transform, which keeps
 * the recursive algorithms that follow cheap. */
#include "sim/sim.h"
#include "sim/spatial.h"

#include <string.h>

/* Parent→body rotation R (body axes in parent coordinates) and origin r at joint position q. */
static void joint_transform(double R[9], double r[3], const sim_body *b, const sim_joint *j,
                            double q) {
  memcpy(r, b->pos, 3 * sizeof(double));
  if (j->type == SIM_JOINT_HINGE) {
    if (b->identity_quat) {
      sim_axis_angle_to_mat(R, j->axis, q);
    } else {
      double Rj[9];
      sim_axis_angle_to_mat(Rj, j->axis, q);
      sim_mat3_mul(R, b->mat, Rj);
    }
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

/* Motion subspace in world axes at the origin: a hinge through p along a is [a; p×a]
 * (a rotation about p moves the point at the origin with velocity ω×(0−p) = p×ω);
 * a slide along a is [0; a]. */
static void joint_subspace(sim_data *d, int i, const sim_joint *j) {
  double *S = d->cdof + 6 * j->dofadr, a[3];
  sim_mat3_vec(a, d->xmat + 9 * i, j->axis);
  if (j->type == SIM_JOINT_HINGE) {
    memcpy(S, a, sizeof a);
    sim_cross3(S + 3, d->xpos + 3 * i, a);
  } else {
    memset(S, 0, 3 * sizeof(double));
    memcpy(S + 3, a, sizeof a);
  }
}

/* Spatial inertia about the world origin, in world axes: COM xipos, Ic_w = R·Ic·Rᵀ. */
static void world_inertia(const sim_model *m, sim_data *d, int i) {
  const sim_body *b = &m->bodies[i];
  const double *R = d->xmat + 9 * i;
  double T[9], Ic[9];
  if (b->diagonal_inertia) { /* T = R·diag(I) */
    for (int r = 0; r < 3; r++) {
      T[3 * r] = R[3 * r] * b->inertia[0];
      T[3 * r + 1] = R[3 * r + 1] * b->inertia[4];
      T[3 * r + 2] = R[3 * r + 2] * b->inertia[8];
    }
  } else {
    sim_mat3_mul(T, R, b->inertia);
  }
  sim_mat3_mult(Ic, T, R); /* R·I·Rᵀ */
  sim_spatial_inertia(d->cinert + 36 * i, b->mass, d->xipos + 3 * i, Ic);
}

/* v_i = v_parent + S·qd, and the velocity-product term c_i = v_i ×m (S·qd). */
static void body_velocity(const sim_model *m, sim_data *d, int i, const sim_joint *j) {
  double *v = d->cvel + 6 * i;
  memcpy(v, d->cvel + 6 * m->bodies[i].parent, 6 * sizeof(double));
  if (j->dofadr < 0) {
    memset(d->cvp + 6 * i, 0, 6 * sizeof(double));
    return;
  }
  double Sqd[6], qd = d->qvel[j->dofadr];
  for (int k = 0; k < 6; k++) {
    Sqd[k] = d->cdof[6 * j->dofadr + k] * qd;
    v[k] += Sqd[k];
  }
  sim_cross_motion(d->cvp + 6 * i, v, Sqd);
}

/* A world-origin motion vector seen in body i's axes at its origin: [Rᵀω; Rᵀ(v + ω×p)]. */
void sim_motion_to_body(double out[6], const sim_data *d, int i, const double w[6]) {
  const double *R = d->xmat + 9 * i, *p = d->xpos + 3 * i;
  double wxp[3], lin[3];
  sim_cross3(wxp, w, p);
  for (int k = 0; k < 3; k++) {
    lin[k] = w[3 + k] + wxp[k];
  }
  sim_mat3t_vec(out, R, w);
  sim_mat3t_vec(out + 3, R, lin);
}

void sim_body_velocity(double out[6], const sim_data *d, int i) {
  sim_motion_to_body(out, d, i, d->cvel + 6 * i);
}

void sim_body_acceleration(double out[6], const sim_data *d, int i) {
  sim_motion_to_body(out, d, i, d->cacc + 6 * i);
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

static void geom_poses(const sim_model *m, sim_data *d) {
  for (int g = 0; g < m->ngeom; g++) {
    const sim_geom *geom = &m->geoms[g];
    const double *R = d->xmat + 9 * geom->body;
    double offset[3];
    sim_mat3_vec(offset, R, geom->pos);
    for (int k = 0; k < 3; k++) {
      d->geom_xpos[3 * g + k] = d->xpos[3 * geom->body + k] + offset[k];
    }
    sim_mat3_mul(d->geom_xmat + 9 * g, R, geom->mat);
  }
}

void sim_kinematics(const sim_model *m, sim_data *d) {
  static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  memset(d->xpos, 0, 3 * sizeof(double));
  memset(d->xipos, 0, 3 * sizeof(double));
  memcpy(d->xmat, identity, sizeof identity);
  memset(d->cvel, 0, 6 * sizeof(double));
  memset(d->cvp, 0, 6 * sizeof(double));
  for (int i = 1; i < m->nbody; i++) {
    const sim_joint *j = &m->joints[m->bodies[i].joint];
    double q = j->qposadr >= 0 ? d->qpos[j->qposadr] : 0, R[9], r[3];
    joint_transform(R, r, &m->bodies[i], j, q);
    world_pose(m, d, i, R, r);
    if (j->dofadr >= 0) {
      joint_subspace(d, i, j);
    }
    world_inertia(m, d, i);
    body_velocity(m, d, i, j);
  }
  site_positions(m, d);
  geom_poses(m, d);
}
