/* sim/spatial.c: 3D and spatial (6D) algebra; see spatial.h for conventions. */
#include "sim/spatial.h"

#include <math.h>
#include <string.h>

void sim_quat_to_mat(double mat[9], const double quat[4]) {
  double w = quat[0], x = quat[1], y = quat[2], z = quat[3];
  mat[0] = 1 - 2 * (y * y + z * z);
  mat[1] = 2 * (x * y - w * z);
  mat[2] = 2 * (x * z + w * y);
  mat[3] = 2 * (x * y + w * z);
  mat[4] = 1 - 2 * (x * x + z * z);
  mat[5] = 2 * (y * z - w * x);
  mat[6] = 2 * (x * z - w * y);
  mat[7] = 2 * (y * z + w * x);
  mat[8] = 1 - 2 * (x * x + y * y);
}

void sim_rpy_to_quat(double quat[4], const double rpy[3]) {
  double cr = cos(rpy[0] / 2), sr = sin(rpy[0] / 2);
  double cp = cos(rpy[1] / 2), sp = sin(rpy[1] / 2);
  double cy = cos(rpy[2] / 2), sy = sin(rpy[2] / 2);
  quat[0] = cr * cp * cy + sr * sp * sy;
  quat[1] = sr * cp * cy - cr * sp * sy;
  quat[2] = cr * sp * cy + sr * cp * sy;
  quat[3] = cr * cp * sy - sr * sp * cy;
}

void sim_quat_normalize(double out[4], const double q[4]) {
  double norm = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (!(norm > 1e-15) || !isfinite(norm)) { /* as MuJoCo: a degenerate quaternion is the identity */
    out[0] = 1, out[1] = out[2] = out[3] = 0;
    return;
  }
  for (int k = 0; k < 4; k++) {
    out[k] = q[k] / norm;
  }
}

void sim_quat_mul(double out[4], const double a[4], const double b[4]) {
  double w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  double x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  double y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  double z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  out[0] = w, out[1] = x, out[2] = y, out[3] = z;
}

void sim_quat_integrate(double out[4], const double q[4], const double omega[3], double h) {
  double speed = sqrt(sim_dot3(omega, omega)), qn[4], dq[4];
  sim_quat_normalize(qn, q);
  if (!(speed > 1e-15)) { /* MuJoCo's normalize3 leaves a tiny vector's rotation at zero */
    memcpy(out, qn, sizeof qn);
    return;
  }
  double half = 0.5 * h * speed, s = sin(half) / speed;
  dq[0] = cos(half);
  dq[1] = omega[0] * s, dq[2] = omega[1] * s, dq[3] = omega[2] * s;
  sim_quat_mul(out, qn, dq);
}
