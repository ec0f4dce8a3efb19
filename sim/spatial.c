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

void sim_axis_angle_to_mat(double mat[9], const double axis[3], double angle) {
  double c = cos(angle), s = sin(angle), t = 1 - c;
  double x = axis[0], y = axis[1], z = axis[2];
  mat[0] = t * x * x + c;
  mat[1] = t * x * y - s * z;
  mat[2] = t * x * z + s * y;
  mat[3] = t * x * y + s * z;
  mat[4] = t * y * y + c;
  mat[5] = t * y * z - s * x;
  mat[6] = t * x * z - s * y;
  mat[7] = t * y * z + s * x;
  mat[8] = t * z * z + c;
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

/* I_O = [I_c + m·c̃·c̃ᵀ, m·c̃; m·c̃ᵀ, m·1], with c̃·c̃ᵀ = |c|²·1 − c·cᵀ; written out element by
 * element because kinematics builds one per body per step. */
void sim_spatial_inertia(double out[36], double mass, const double com[3],
                         const double inertia_com[9]) {
  const double x = com[0], y = com[1], z = com[2];
  const double mx = mass * x, my = mass * y, mz = mass * z;
  const double *Ic = inertia_com;
  out[0] = Ic[0] + my * y + mz * z;
  out[1] = Ic[1] - mx * y;
  out[2] = Ic[2] - mx * z;
  out[6] = Ic[3] - mx * y;
  out[7] = Ic[4] + mx * x + mz * z;
  out[8] = Ic[5] - my * z;
  out[12] = Ic[6] - mx * z;
  out[13] = Ic[7] - my * z;
  out[14] = Ic[8] + mx * x + my * y;
  /* upper right m·c̃, lower left its transpose */
  out[3] = 0, out[4] = -mz, out[5] = my;
  out[9] = mz, out[10] = 0, out[11] = -mx;
  out[15] = -my, out[16] = mx, out[17] = 0;
  out[18] = 0, out[19] = mz, out[20] = -my;
  out[24] = -mz, out[25] = 0, out[26] = mx;
  out[30] = my, out[31] = -mx, out[32] = 0;
  /* lower right m·1 */
  out[21] = mass, out[22] = 0, out[23] = 0;
  out[27] = 0, out[28] = mass, out[29] = 0;
  out[33] = 0, out[34] = 0, out[35] = mass;
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
