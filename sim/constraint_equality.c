/* sim/constraint_equality.c: the rows of equality constraints (MuJoCo 2.2.2's <equality>
 * connect, weld and joint), the first rows of the constraint stage.
 *
 * An equality row is a soft constraint like a limit (sim/constraint.c) but two-sided: its cost
 * is ½D·(J·a − aref)² whatever the sign, so it is always in its quadratic state. As MuJoCo's
 * mj_instantiateEquality, mj_diagApprox and mj_makeImpedance:
 *  - connect: pos = p₁ − p₂, the anchor on body1 minus the same point on body2 (world), J the
 *    difference of the two points' translational Jacobians (3 rows);
 *  - weld: those 3 rows (the anchor on body2 and its image on body1), then the orientation
 *    error, the vector part of q₂⁻¹·q₁·q_rel, with the Jacobian ½·[q₂⁻¹·(ω₁ − ω₂)·q₁·q_rel]
 *    (vector part) scaled by torquescale (6 rows);
 *  - joint: pos = q₁ − c₀ − Σₖ cₖ·q₂ᵏ (k = 1..4), J = e₁ − p′(q₂)·e₂ (1 row), positions
 *    relative to MuJoCo's qpos0 (0 for hinges and slides);
 *  - the impedance of all the rows of one equality comes from one violation: |pos| of a
 *    connect's 3 rows, |(pos₁..₃, torquescale·pos₄..₆)| of a weld's 6, |pos| of a joint's;
 *  - the regularisation's diagonal estimate is the two bodies' translational invweight0 for
 *    every row of a connect and of a weld (2.2.2's mj_diagApprox compares a row's constraint
 *    type with mjEQ_WELD, so its counter of weld rows never passes 0 and the rotation rows
 *    take the translational weight too), the joints' invweight0 summed for a joint coupling;
 *  - an equality whose rows are all zero (two bodies welded to the world) makes no rows.
 */
#include "sim/constraint.h"
#include "sim/data.h"
#include "sim/inverse_weights.h"
#include "sim/sim.h"
#include "sim/spatial.h"

#include <math.h>
#include <string.h>

#define EQ_MINVAL 1e-15 /* MuJoCo's mjMINVAL */

int sim__equality_rows_max(const sim_model *m) {
  int n = 0;
  for (int e = 0; e < m->neq; e++) {
    const sim_equality_type t = m->equalities[e].type;
    n += t == SIM_EQ_CONNECT ? 3 : t == SIM_EQ_WELD ? 6 : 1; /* joint, tendon: 1 */
  }
  return n;
}

/* --- model constants -------------------------------------------------------------------------- */

/* Body b's orientation in the world as a quaternion, composed as MuJoCo's mj_kinematics builds
 * xquat (the product of the placements and the joints' rotations down the tree), so that its
 * sign, and with it the sign of a weld's rotation rows, is MuJoCo's. Composed from the body up
 * (q ← local·q), which is the same product. */
static void body_quat(const sim_model *m, const sim_data *d, int b, double q[4]) {
  q[0] = 1, q[1] = q[2] = q[3] = 0;
  for (; b > 0; b = m->bodies[b].parent) {
    const sim_body *B = &m->bodies[b];
    double local[4] = {1, 0, 0, 0}, t[4];
    int is_free = 0;
    for (int a = B->jntnum - 1; a >= 0 && !is_free; a--) { /* the last joint acts last */
      const sim_joint *j = &m->joints[B->joint + a];
      double r[4] = {1, 0, 0, 0};
      if (j->type == SIM_JOINT_HINGE) {
        const double h = 0.5 * d->qpos[j->qposadr], s = sin(h);
        r[0] = cos(h), r[1] = j->axis[0] * s, r[2] = j->axis[1] * s, r[3] = j->axis[2] * s;
      } else if (j->type == SIM_JOINT_BALL || j->type == SIM_JOINT_FREE) {
        sim_quat_normalize(r, d->qpos + j->qposadr + (j->type == SIM_JOINT_FREE ? 3 : 0));
        is_free = j->type == SIM_JOINT_FREE;
      }
      sim_quat_mul(t, r, local);
      memcpy(local, t, sizeof t);
    }
    if (!is_free) { /* a free joint's quaternion is the body's orientation in the world */
      sim_quat_mul(t, B->quat, local);
      memcpy(local, t, sizeof t);
    }
    sim_quat_mul(t, local, q);
    memcpy(q, t, sizeof t);
    if (is_free) {
      break;
    }
  }
  sim_quat_normalize(q, q);
}

/* out = Rᵀ·v */
static void rot_t(double out[3], const double R[9], const double v[3]) {
  for (int r = 0; r < 3; r++) {
    out[r] = R[r] * v[0] + R[3 + r] * v[1] + R[6 + r] * v[2];
  }
}

/* out = x + R·v, a body point in the world */
static void to_world(double out[3], const double x[3], const double R[9], const double v[3]) {
  for (int r = 0; r < 3; r++) {
    out[r] = x[r] + R[3 * r] * v[0] + R[3 * r + 1] * v[1] + R[3 * r + 2] * v[2];
  }
}

static void quat_conj(double out[4], const double q[4]) {
  out[0] = q[0], out[1] = -q[1], out[2] = -q[2], out[3] = -q[3];
}

int sim__equality_setconst(sim_model *m) {
  int need = 0;
  for (int e = 0; e < m->neq; e++) {
    need |= m->equalities[e].type == SIM_EQ_CONNECT || m->equalities[e].type == SIM_EQ_WELD;
  }
  if (!need) {
    return 0;
  }
  const int nefc_max = m->nefc_max;
  m->nefc_max = 0; /* the scratch data needs no rows */
  sim_data *d = sim__data_alloc(m);
  m->nefc_max = nefc_max;
  if (!d) {
    return -1;
  }
  sim__mujoco_qpos0(m, d);
  sim_kinematics(m, d);
  for (int e = 0; e < m->neq; e++) {
    sim_equality *q = &m->equalities[e];
    const int b1 = q->obj1, b2 = q->obj2;
    const double *x1 = d->xpos + 3 * b1, *R1 = d->xmat + 9 * b1;
    const double *x2 = d->xpos + 3 * b2, *R2 = d->xmat + 9 * b2;
    double p[3], rel[3];
    if (q->type == SIM_EQ_CONNECT) { /* the anchor of body1 in body2's frame */
      to_world(p, x1, R1, q->data);
      for (int k = 0; k < 3; k++) {
        rel[k] = p[k] - x2[k];
      }
      rot_t(q->data + 3, R2, rel);
    } else if (q->type == SIM_EQ_WELD) { /* joint and tendon couplings need nothing here */
      double *quat = q->data + 6;
      if (quat[0] != 0 || quat[1] != 0 || quat[2] != 0 || quat[3] != 0) { /* relpose given */
        sim_quat_normalize(quat, quat);
        continue;
      }
      to_world(p, x2, R2, q->data); /* the anchor of body2 in body1's frame */
      for (int k = 0; k < 3; k++) {
        rel[k] = p[k] - x1[k];
      }
      rot_t(q->data + 3, R1, rel);
      double q1[4], q2[4], n1[4];
      body_quat(m, d, b1, q1);
      body_quat(m, d, b2, q2);
      quat_conj(n1, q1);
      sim_quat_mul(quat, n1, q2); /* body2's orientation relative to body1's */
    }
  }
  sim_data_free(d);
  return 0;
}

/* --- rows ------------------------------------------------------------------------------------- */

/* rows i..i+n-1 start: type, id, no friction, no force yet */
static void eq_header(sim_data *d, int i, int n, int e, const double *pos) {
  for (int r = 0; r < n; r++) {
    d->efc_pos[i + r] = pos[r];
    d->efc_type[i + r] = SIM_CNSTR_EQUALITY;
    d->efc_id[i + r] = e;
    d->efc_frictionloss[i + r] = 0;
    d->efc_force[i + r] = 0;
    d->efc_state[i + r] = SIM_CSTATE_QUADRATIC;
  }
}

/* every row of J at rows i..i+n-1 lists the same dofs (ndof of them, ascending, in the first
 * row's index list); returns 1 when all of their entries are 0 */
static int eq_share_dofs(const sim_model *m, sim_data *d, int i, int n, int ndof) {
  const int nv = m->nv;
  const int *dofs = d->efc_ind + (size_t)i * nv;
  int empty = 1;
  for (int r = 0; r < n; r++) {
    const double *J = d->efc_J + (size_t)(i + r) * nv;
    for (int t = 0; t < ndof; t++) {
      empty = empty && J[dofs[t]] == 0;
    }
    if (r > 0) {
      memcpy(d->efc_ind + (size_t)(i + r) * nv, dofs, (size_t)ndof * sizeof(int));
    }
    d->efc_nnz[i + r] = ndof;
  }
  return empty;
}

/* R, D and aref of the n rows from i: one impedance from the violation `viol`, each row's own
 * position and velocity J·v; diag is the rows' diagonal estimate */
static void eq_impedance(const sim_model *m, sim_data *d, int i, int n, const sim_equality *q,
                         double viol, double diag) {
  double ref[SIM_NREF], imp[SIM_NIMP], k, b;
  sim_constraint_sanitize(ref, imp, q->solref, q->solimp, m->opt.timestep);
  const double I = sim_constraint_impedance(imp, viol);
  sim_constraint_spring_damper(&k, &b, ref, imp[1]);
  const int nv = m->nv;
  for (int r = i; r < i + n; r++) {
    const double *J = d->efc_J + (size_t)r * nv;
    const int *ind = d->efc_ind + (size_t)r * nv;
    double vel = 0;
    for (int t = 0; t < d->efc_nnz[r]; t++) {
      vel += J[ind[t]] * d->qvel[ind[t]];
    }
    d->efc_R[r] = fmax(EQ_MINVAL, (1 - I) * diag / I);
    d->efc_D[r] = 1 / d->efc_R[r];
    d->efc_aref[r] = -b * vel - k * I * d->efc_pos[r];
  }
}

/* rows i.. of body1's point p1 minus body2's point p2 (translation), and when rot, the angular
 * Jacobians' difference ω₁ − ω₂ in the three rows after them; on the ndof dofs listed */
static void eq_point_rows(const sim_model *m, sim_data *d, int i, int b1, int b2,
                          const double p1[3], const double p2[3], int rot, int ndof) {
  const int nv = m->nv;
  const int *dofs = d->efc_ind + (size_t)i * nv;
  double *jp = d->con_jac, *jr = jp + 3 * (size_t)nv; /* scratch: 6 rows of nv */
  double *J = d->efc_J + (size_t)i * nv;
  memset(J, 0, (size_t)(rot ? 6 : 3) * (size_t)nv * sizeof(double));
  for (int side = 0; side < 2; side++) {
    const double sign = side ? -1 : 1;
    sim_jac_point(m, d, jp, rot ? jr : NULL, side ? b2 : b1, side ? p2 : p1);
    for (int t = 0; t < ndof; t++) {
      const int k = dofs[t];
      for (int r = 0; r < 3; r++) {
        J[r * nv + k] += sign * jp[r * nv + k];
        if (rot) {
          J[(3 + r) * nv + k] += sign * jr[r * nv + k];
        }
      }
    }
  }
}

static int make_connect(const sim_model *m, sim_data *d, int e, const sim_equality *q) {
  const int i = d->nefc, nv = m->nv, b1 = q->obj1, b2 = q->obj2;
  double p1[3], p2[3], pos[3];
  to_world(p1, d->xpos + 3 * b1, d->xmat + 9 * b1, q->data);
  to_world(p2, d->xpos + 3 * b2, d->xmat + 9 * b2, q->data + 3);
  for (int r = 0; r < 3; r++) {
    pos[r] = p1[r] - p2[r];
  }
  const int ndof = sim__constraint_chain_dofs(m, b1, b2, d->efc_ind + (size_t)i * nv);
  eq_point_rows(m, d, i, b1, b2, p1, p2, 0, ndof);
  if (eq_share_dofs(m, d, i, 3, ndof)) {
    return 0;
  }
  eq_header(d, i, 3, e, pos);
  d->nefc += 3;
  const sim_body *B1 = &m->bodies[b1], *B2 = &m->bodies[b2];
  eq_impedance(m, d, i, 3, q, sqrt(pos[0] * pos[0] + pos[1] * pos[1] + pos[2] * pos[2]),
               B1->invweight0[0] + B2->invweight0[0]);
  return 3;
}

static int make_weld(const sim_model *m, sim_data *d, int e, const sim_equality *q) {
  const int i = d->nefc, nv = m->nv, b1 = q->obj1, b2 = q->obj2;
  double p1[3], p2[3], pos[6];
  to_world(p1, d->xpos + 3 * b1, d->xmat + 9 * b1, q->data + 3);
  to_world(p2, d->xpos + 3 * b2, d->xmat + 9 * b2, q->data);
  for (int r = 0; r < 3; r++) {
    pos[r] = p1[r] - p2[r];
  }
  const int ndof = sim__constraint_chain_dofs(m, b1, b2, d->efc_ind + (size_t)i * nv);
  eq_point_rows(m, d, i, b1, b2, p1, p2, 1, ndof);
  /* orientation error: the vector part of q₂⁻¹·q₁·q_rel */
  double q1[4], q2[4], n2[4], held[4], err[4];
  body_quat(m, d, b1, q1);
  body_quat(m, d, b2, q2);
  quat_conj(n2, q2);
  sim_quat_mul(held, q1, q->data + 6);
  sim_quat_mul(err, n2, held);
  pos[3] = err[1], pos[4] = err[2], pos[5] = err[3];
  const double ts = q->data[10];
  const int *dofs = d->efc_ind + (size_t)i * nv;
  double *Jr = d->efc_J + (size_t)(i + 3) * nv;
  for (int t = 0; t < ndof; t++) { /* ½·q₂⁻¹·(0, ω₁ − ω₂)·q₁·q_rel, times torquescale */
    const int k = dofs[t];
    const double w[4] = {0, Jr[k], Jr[nv + k], Jr[2 * nv + k]};
    double a[4], c[4];
    sim_quat_mul(a, n2, w);
    sim_quat_mul(c, a, held);
    for (int r = 0; r < 3; r++) {
      Jr[r * nv + k] = 0.5 * c[1 + r] * ts;
    }
  }
  if (eq_share_dofs(m, d, i, 6, ndof)) {
    return 0;
  }
  eq_header(d, i, 6, e, pos);
  d->nefc += 6;
  double viol = 0;
  for (int r = 0; r < 6; r++) {
    const double v = r < 3 ? pos[r] : ts * pos[r];
    viol += v * v;
  }
  const sim_body *B1 = &m->bodies[b1], *B2 = &m->bodies[b2];
  eq_impedance(m, d, i, 6, q, sqrt(viol), B1->invweight0[0] + B2->invweight0[0]);
  return 6;
}

static int make_joint(const sim_model *m, sim_data *d, int e, const sim_equality *q) {
  const int i = d->nefc, nv = m->nv;
  const sim_joint *j1 = &m->joints[q->obj1], *j2 = q->obj2 >= 0 ? &m->joints[q->obj2] : NULL;
  const double *c = q->data;
  double *J = d->efc_J + (size_t)i * nv;
  int *ind = d->efc_ind + (size_t)i * nv;
  memset(J, 0, (size_t)nv * sizeof(double));
  J[j1->dofadr] = 1;
  double pos = d->qpos[j1->qposadr] - c[0], diag = j1->invweight0;
  int n = 1;
  ind[0] = j1->dofadr;
  if (j2) {
    const double x = d->qpos[j2->qposadr];
    pos -= c[1] * x + c[2] * x * x + c[3] * x * x * x + c[4] * x * x * x * x;
    J[j2->dofadr] -= c[1] + 2 * c[2] * x + 3 * c[3] * x * x + 4 * c[4] * x * x * x;
    diag += j2->invweight0;
    ind[j2->dofadr < j1->dofadr ? 0 : 1] = j2->dofadr;
    ind[j2->dofadr < j1->dofadr ? 1 : 0] = j1->dofadr;
    n = 2;
  }
  d->efc_nnz[i] = n;
  eq_header(d, i, 1, e, &pos);
  d->nefc += 1;
  eq_impedance(m, d, i, 1, q, pos, diag);
  return 1;
}

/* the coupling of two tendons' lengths: the joint coupling's polynomial on L − length0, the row
 * J₁ − p′·J₂ from the tendons' Jacobians (sim/tendon.c), on the dofs either moves */
static int make_tendon(const sim_model *m, sim_data *d, int e, const sim_equality *q) {
  const int i = d->nefc, nv = m->nv;
  const sim_tendon *t1 = &m->tendons[q->obj1], *t2 = q->obj2 >= 0 ? &m->tendons[q->obj2] : NULL;
  const double *c = q->data, *J1 = d->ten_J + (size_t)q->obj1 * nv;
  const double *J2 = t2 ? d->ten_J + (size_t)q->obj2 * nv : NULL;
  double *J = d->efc_J + (size_t)i * nv;
  int *ind = d->efc_ind + (size_t)i * nv;
  double pos = d->ten_length[q->obj1] - t1->length0 - c[0], diag = t1->invweight0, deriv = 0;
  if (t2) {
    const double x = d->ten_length[q->obj2] - t2->length0;
    pos -= c[1] * x + c[2] * x * x + c[3] * x * x * x + c[4] * x * x * x * x;
    deriv = c[1] + 2 * c[2] * x + 3 * c[3] * x * x + 4 * c[4] * x * x * x;
    diag += t2->invweight0;
  }
  int n = 0;
  for (int k = 0; k < nv; k++) {
    J[k] = t2 ? J1[k] - deriv * J2[k] : J1[k];
    if (J1[k] != 0 || (t2 && J2[k] != 0)) {
      ind[n++] = k;
    }
  }
  if (eq_share_dofs(m, d, i, 1, n)) { /* tendons that move with nothing: no row (MuJoCo's) */
    return 0;
  }
  eq_header(d, i, 1, e, &pos);
  d->nefc += 1;
  eq_impedance(m, d, i, 1, q, pos, diag);
  return 1;
}

void sim__equality_make(const sim_model *m, sim_data *d) {
  for (int e = 0; e < m->neq; e++) {
    const sim_equality *q = &m->equalities[e];
    if (!q->active) {
      continue;
    }
    const int rows = q->type == SIM_EQ_CONNECT ? make_connect(m, d, e, q)
                     : q->type == SIM_EQ_WELD  ? make_weld(m, d, e, q)
                     : q->type == SIM_EQ_JOINT ? make_joint(m, d, e, q)
                                               : make_tendon(m, d, e, q);
    d->ne += rows;
  }
}
