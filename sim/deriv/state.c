/* sim/deriv/state.c: the layout of the state x = (δq, q̇, act) and its tangent space (deriv.h). */
#include "sim/deriv/deriv.h"
#include "sim/spatial.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int sim_deriv_nx(const sim_model *m) {
  return 2 * m->nv + m->na;
}

/* entry names of each joint type's dofs: positions (tangent), then velocities (deriv.h) */
static const char *const tangent_suffix[5][6] = {
    {0}, {"q"}, {"q"}, {"rx", "ry", "rz"}, {"x", "y", "z", "rx", "ry", "rz"}};
static const char *const velocity_suffix[5][6] = {
    {0}, {"qd"}, {"qd"}, {"wx", "wy", "wz"}, {"vx", "vy", "vz", "wx", "wy", "wz"}};

void sim_deriv_state_name(const sim_model *m, int i, char *buf, size_t buf_sz) {
  int nv = m->nv;
  if (buf_sz == 0) {
    return;
  }
  buf[0] = '\0';
  if (i >= 2 * nv && i < 2 * nv + m->na) {
    for (int a = 0; a < m->nu; a++) {
      if (m->actuators[a].actadr == i - 2 * nv) {
        snprintf(buf, buf_sz, "%s.current", m->actuators[a].name);
      }
    }
    return;
  }
  if (i < 0 || i >= 2 * nv) {
    return;
  }
  int k = i % nv;
  const sim_joint *j = &m->joints[m->dof_joint[k]];
  const char *const *suffix = i < nv ? tangent_suffix[j->type] : velocity_suffix[j->type];
  snprintf(buf, buf_sz, "%s.%s", j->name, suffix[k - j->dofadr]);
}

void sim_state_perturb(const sim_model *m, double *qpos, const double *dq, double scale) {
  for (int j = 0; j < m->njnt; j++) {
    const sim_joint *jt = &m->joints[j];
    int q = jt->qposadr, k = jt->dofadr;
    switch (jt->type) {
    case SIM_JOINT_HINGE:
    case SIM_JOINT_SLIDE:
      qpos[q] += scale * dq[k];
      break;
    case SIM_JOINT_FREE:
      for (int r = 0; r < 3; r++) {
        qpos[q + r] += scale * dq[k + r];
      }
      sim_quat_integrate(qpos + q + 3, qpos + q + 3, dq + k + 3, scale);
      break;
    case SIM_JOINT_BALL:
      sim_quat_integrate(qpos + q, qpos + q, dq + k, scale);
      break;
    case SIM_JOINT_FIXED:
    default:
      break;
    }
  }
}

/* the rotation vector of the unit quaternion q0⁻¹·q1, the shorter way round */
static void quat_difference(double out[3], const double q1_[4], const double q0_[4]) {
  double q0[4], q1[4], r[4];
  sim_quat_normalize(q0, q0_);
  sim_quat_normalize(q1, q1_);
  const double inv0[4] = {q0[0], -q0[1], -q0[2], -q0[3]};
  sim_quat_mul(r, inv0, q1);
  if (r[0] < 0) {
    for (int k = 0; k < 4; k++) {
      r[k] = -r[k];
    }
  }
  double s = sqrt(r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
  double scale = s < 1e-12 ? 2.0 : 2 * atan2(s, r[0]) / s; /* angle / sin(angle/2) */
  for (int k = 0; k < 3; k++) {
    out[k] = scale * r[1 + k];
  }
}

void sim_state_difference(const sim_model *m, double *dq, const double *qpos1,
                          const double *qpos0) {
  for (int j = 0; j < m->njnt; j++) {
    const sim_joint *jt = &m->joints[j];
    int q = jt->qposadr, k = jt->dofadr;
    switch (jt->type) {
    case SIM_JOINT_HINGE:
    case SIM_JOINT_SLIDE:
      dq[k] = qpos1[q] - qpos0[q];
      break;
    case SIM_JOINT_FREE:
      for (int r = 0; r < 3; r++) {
        dq[k + r] = qpos1[q + r] - qpos0[q + r];
      }
      quat_difference(dq + k + 3, qpos1 + q + 3, qpos0 + q + 3);
      break;
    case SIM_JOINT_BALL:
      quat_difference(dq + k, qpos1 + q, qpos0 + q);
      break;
    case SIM_JOINT_FIXED:
    default:
      break;
    }
  }
}
