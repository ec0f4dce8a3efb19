/* sim/kinematics.c: positions and velocities of every body from qpos and qvel.
 *
 * Spatial quantities are computed in world axes about the world origin (c* arrays): there a
 * child's velocity is its parent's plus its joint's, with no coordinate transform, which keeps
 * the recursive algorithms that follow cheap. */
#include "sim/sim.h"
#include "sim/spatial.h"

#include <math.h>
#include <string.h>

/* Parent→body rotation R (body axes in parent coordinates) and origin r at joint position q
 * (a hinge's sine and cosine in sc). */
static void joint_transform(double R[9], double r[3], const sim_body *b, const sim_joint *j,
                            double q, const double sc[2]) {
  memcpy(r, b->pos, 3 * sizeof(double));
  if (j->type == SIM_JOINT_HINGE) {
    double Rj[9];
    sim_axis_sincos_to_mat(b->identity_quat ? R : Rj, j->axis, sc[0], sc[1]);
    if (!b->identity_quat) {
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

/* Spatial inertia about the world origin, in world axes: COM xipos, Ic_w = R·Ic·Rᵀ (computed as
 * a symmetric product, so cinert is exactly symmetric, which the ABA's symmetric updates keep). */
static void world_inertia(const sim_model *m, sim_data *d, int i) {
  const sim_body *b = &m->bodies[i];
  const double *R = d->xmat + 9 * i;
  double Ic[9];
  if (b->diagonal_inertia) { /* R·diag(I)·Rᵀ: T = R·diag(I), upper triangle of T·Rᵀ */
    double T[9];
    for (int r = 0; r < 3; r++) {
      T[3 * r] = R[3 * r] * b->inertia[0];
      T[3 * r + 1] = R[3 * r + 1] * b->inertia[4];
      T[3 * r + 2] = R[3 * r + 2] * b->inertia[8];
    }
    for (int r = 0; r < 3; r++) {
      for (int c = r; c < 3; c++) {
        Ic[3 * r + c] = Ic[3 * c + r] =
            T[3 * r] * R[3 * c] + T[3 * r + 1] * R[3 * c + 1] + T[3 * r + 2] * R[3 * c + 2];
      }
    }
  } else {
    sim_mat3_congruence(Ic, R, b->inertia);
  }
  sim_spatial_inertia(d->cinert + 36 * i, b->mass, d->xipos + 3 * i, Ic);
}

/* --- bodies with several joints or a ball or free joint ------------------------------------ */

/* [a; p×a]: rotation about the axis a through p (world axes, at the origin) */
static void rotation_dof(double S[6], const double a[3], const double p[3]) {
  memcpy(S, a, 3 * sizeof(double));
  sim_cross3(S + 3, p, a);
}

/* The three rotation dofs of a ball (or a free joint's last three): the body's axes (columns of
 * R) through its origin p, as MuJoCo's ball velocity is in body axes. */
static void ball_dofs(double *S, const double R[9], const double p[3]) {
  for (int c = 0; c < 3; c++) {
    double a[3] = {R[c], R[3 + c], R[6 + c]};
    rotation_dof(S + 6 * c, a, p);
  }
}

/* Free joint: the pose is qpos itself; translation dofs along the world axes. */
static void free_pose(sim_data *d, const sim_joint *j, double R[9], double x[3]) {
  const double *q = d->qpos + j->qposadr;
  double quat[4], *S = d->cdof + 6 * j->dofadr;
  memcpy(x, q, 3 * sizeof(double));
  sim_quat_normalize(quat, q + 3);
  sim_quat_to_mat(R, quat);
  memset(S, 0, 18 * sizeof(double));
  S[3] = S[10] = S[17] = 1;
  ball_dofs(S + 18, R, x);
}

/* One hinge, slide or ball of a multi-joint body acting on the pose (R, x) built so far; its
 * dofs' motion subspaces are recorded at that moment (MuJoCo's xaxis and xanchor). */
static void apply_joint(sim_data *d, const sim_joint *j, const double sc[2], double R[9],
                        double x[3]) {
  const double *q = d->qpos + j->qposadr;
  double *S = d->cdof + 6 * j->dofadr, a[3], Rj[9], Rn[9], quat[4];
  if (j->type == SIM_JOINT_SLIDE) {
    sim_mat3_vec(a, R, j->axis);
    memset(S, 0, 3 * sizeof(double));
    memcpy(S + 3, a, sizeof a);
    for (int k = 0; k < 3; k++) {
      x[k] += a[k] * q[0];
    }
    return;
  }
  double anchor[3]; /* the joint's anchor in world: a rotation about it leaves it in place */
  sim_mat3_vec(anchor, R, j->pos);
  for (int k = 0; k < 3; k++) {
    anchor[k] += x[k];
  }
  if (j->type == SIM_JOINT_HINGE) {
    sim_mat3_vec(a, R, j->axis);
    rotation_dof(S, a, anchor);
    sim_axis_sincos_to_mat(Rj, j->axis, sc[0], sc[1]);
  } else { /* ball */
    sim_quat_normalize(quat, q);
    sim_quat_to_mat(Rj, quat);
  }
  sim_mat3_mul(Rn, R, Rj);
  memcpy(R, Rn, sizeof Rn);
  double moved[3]; /* the origin after turning about the anchor: anchor − R·pos */
  sim_mat3_vec(moved, R, j->pos);
  for (int k = 0; k < 3; k++) {
    x[k] = anchor[k] - moved[k];
  }
  if (j->type == SIM_JOINT_BALL) {
    ball_dofs(S, R, x); /* no rotation follows a ball (loader): R is final */
  }
}

/* Joints in order, each in the frame the previous ones left (as MuJoCo's mj_kinematics): the
 * body's world pose (xmat, xpos, xipos) and each dof's motion subspace. */
/* (kept out of line: inlined, it would cost the 1-dof loop of sim_kinematics registers) */
__attribute__((noinline)) static void multi_joint_pose(const sim_model *m, sim_data *d, int i) {
  const sim_body *b = &m->bodies[i];
  const double *Rp = d->xmat + 9 * b->parent, *xp = d->xpos + 3 * b->parent;
  double *R = d->xmat + 9 * i, *x = d->xpos + 3 * i, offset[3];
  const sim_joint *first = &m->joints[b->joint];
  if (first->type == SIM_JOINT_FREE) { /* alone on its body (loader) */
    free_pose(d, first, R, x);
  } else {
    sim_mat3_mul(R, Rp, b->mat);
    sim_mat3_vec(offset, Rp, b->pos);
    for (int k = 0; k < 3; k++) {
      x[k] = xp[k] + offset[k];
    }
    for (int n = 0; n < b->jntnum; n++) {
      apply_joint(d, &m->joints[b->joint + n], d->jnt_sincos + 2 * (b->joint + n), R, x);
    }
  }
  sim_mat3_vec(offset, R, b->com);
  for (int k = 0; k < 3; k++) {
    d->xipos[3 * i + k] = x[k] + offset[k];
  }
}

/* Velocity and velocity-product term dof by dof, as MuJoCo's mj_comVel: a hinge or slide dof
 * adds v ×m (S·qd) with v the velocity so far; a ball's three dofs all see the velocity before
 * the ball; a free joint's translation adds no term, its rotation sees the translation. */
__attribute__((noinline)) static void multi_joint_velocity(const sim_model *m, sim_data *d, int i) {
  const sim_body *b = &m->bodies[i];
  double *v = d->cvel + 6 * i, *c = d->cvp + 6 * i, Sqd[6], term[6];
  memcpy(v, d->cvel + 6 * b->parent, 6 * sizeof(double));
  memset(c, 0, 6 * sizeof(double));
  for (int n = 0; n < b->jntnum; n++) {
    const sim_joint *j = &m->joints[b->joint + n];
    int k0 = j->dofadr, nv = sim_joint_nv(j->type);
    if (j->type == SIM_JOINT_FREE) { /* translation first: its dofs are constant */
      for (int r = 0; r < 3; r++) {
        v[3 + r] += d->qvel[k0 + r];
      }
      k0 += 3, nv = 3;
    }
    memset(Sqd, 0, sizeof Sqd);
    for (int k = k0; k < k0 + nv; k++) {
      for (int r = 0; r < 6; r++) {
        Sqd[r] += d->cdof[6 * k + r] * d->qvel[k];
      }
    }
    sim_cross_motion(term, v, Sqd);
    for (int r = 0; r < 6; r++) {
      c[r] += term[r];
      v[r] += Sqd[r];
    }
  }
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

/* Every hinge's sine and cosine first, in a loop of their own: none depends on another, so the
 * processor overlaps them, where in the body loop each would wait for the body before. */
static void hinge_sincos(const sim_model *m, sim_data *d) {
  for (int j = 0; j < m->njnt; j++) {
    if (m->joints[j].type == SIM_JOINT_HINGE) { /* the compiler fuses sin and cos */
      const double q = d->qpos[m->joints[j].qposadr];
      d->jnt_sincos[2 * j] = sin(q);
      d->jnt_sincos[2 * j + 1] = cos(q);
    }
  }
}

void sim_kinematics(const sim_model *m, sim_data *d) {
  static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  hinge_sincos(m, d);
  memset(d->xpos, 0, 3 * sizeof(double));
  memset(d->xipos, 0, 3 * sizeof(double));
  memcpy(d->xmat, identity, sizeof identity);
  memset(d->cvel, 0, 6 * sizeof(double));
  memset(d->cvp, 0, 6 * sizeof(double));
  for (int i = 1; i < m->nbody; i++) {
    const sim_joint *j = &m->joints[m->bodies[i].joint];
    int multi = m->bodies[i].multi_dof;
    if (multi) {
      multi_joint_pose(m, d, i);
    } else {
      double q = j->qposadr >= 0 ? d->qpos[j->qposadr] : 0, R[9], r[3];
      joint_transform(R, r, &m->bodies[i], j, q, d->jnt_sincos + 2 * m->bodies[i].joint);
      world_pose(m, d, i, R, r);
      if (j->dofadr >= 0) {
        joint_subspace(d, i, j);
      }
    }
    world_inertia(m, d, i);
    if (multi) {
      multi_joint_velocity(m, d, i);
    } else {
      body_velocity(m, d, i, j);
    }
  }
  site_positions(m, d);
  geom_poses(m, d);
}
