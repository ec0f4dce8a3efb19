/* sim/spatial.c: 3D and spatial (6D) algebra; see spatial.h for conventions. */
#include "sim/spatial.h"

#include <math.h>
#include <string.h>

void sim_cross3(double out[3], const double a[3], const double b[3]) {
  double x = a[1] * b[2] - a[2] * b[1];
  double y = a[2] * b[0] - a[0] * b[2];
  double z = a[0] * b[1] - a[1] * b[0];
  out[0] = x;
  out[1] = y;
  out[2] = z;
}

double sim_dot3(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

void sim_mat3_vec(double out[3], const double mat[9], const double v[3]) {
  for (int i = 0; i < 3; i++) {
    out[i] = mat[3 * i] * v[0] + mat[3 * i + 1] * v[1] + mat[3 * i + 2] * v[2];
  }
}

void sim_mat3t_vec(double out[3], const double mat[9], const double v[3]) {
  for (int i = 0; i < 3; i++) {
    out[i] = mat[i] * v[0] + mat[3 + i] * v[1] + mat[6 + i] * v[2];
  }
}

void sim_mat3_mul(double out[9], const double a[9], const double b[9]) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      out[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
    }
  }
}

void sim_mat3t_mul(double out[9], const double a[9], const double b[9]) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      out[3 * i + j] = a[i] * b[j] + a[3 + i] * b[3 + j] + a[6 + i] * b[6 + j];
    }
  }
}

void sim_mat3_mult(double out[9], const double a[9], const double b[9]) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      out[3 * i + j] =
          a[3 * i] * b[3 * j] + a[3 * i + 1] * b[3 * j + 1] + a[3 * i + 2] * b[3 * j + 2];
    }
  }
}

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

/* Rodrigues' formula for a unit axis. */
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

/* Roll about x, then pitch about y, then yaw about z, all about fixed axes: R = Rz·Ry·Rx. */
void sim_rpy_to_quat(double quat[4], const double rpy[3]) {
  double cr = cos(rpy[0] / 2), sr = sin(rpy[0] / 2);
  double cp = cos(rpy[1] / 2), sp = sin(rpy[1] / 2);
  double cy = cos(rpy[2] / 2), sy = sin(rpy[2] / 2);
  quat[0] = cr * cp * cy + sr * sp * sy;
  quat[1] = sr * cp * cy - cr * sp * sy;
  quat[2] = cr * sp * cy + sr * cp * sy;
  quat[3] = cr * cp * sy - sr * sp * cy;
}

/* X·v = [E·ω; E·(v − r×ω)] */
void sim_xform_motion(double out[6], const double E[9], const double r[3], const double v[6]) {
  double rxw[3], lin[3];
  sim_cross3(rxw, r, v);
  lin[0] = v[3] - rxw[0];
  lin[1] = v[4] - rxw[1];
  lin[2] = v[5] - rxw[2];
  sim_mat3_vec(out, E, v);
  sim_mat3_vec(out + 3, E, lin);
}

/* Xᵀ·f = [Eᵀ·n + r×(Eᵀ·f); Eᵀ·f] */
void sim_xform_force_back(double out[6], const double E[9], const double r[3], const double f[6]) {
  double n[3], lin[3], rxf[3];
  sim_mat3t_vec(n, E, f);
  sim_mat3t_vec(lin, E, f + 3);
  sim_cross3(rxf, r, lin);
  out[0] = n[0] + rxf[0];
  out[1] = n[1] + rxf[1];
  out[2] = n[2] + rxf[2];
  out[3] = lin[0];
  out[4] = lin[1];
  out[5] = lin[2];
}

static void block_get(double out[9], const double I[36], int row, int col) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      out[3 * i + j] = I[6 * (row + i) + col + j];
    }
  }
}

/* out = Eᵀ·M·E */
static void rotate_back(double out[9], const double E[9], const double M[9]) {
  double tmp[9];
  sim_mat3_mul(tmp, M, E);
  sim_mat3t_mul(out, E, tmp);
}

/* out = r̃·M (each column of M crossed with r) */
static void skew_mul(double out[9], const double r[3], const double M[9]) {
  for (int j = 0; j < 3; j++) {
    double col[3] = {M[j], M[3 + j], M[6 + j]}, rc[3];
    sim_cross3(rc, r, col);
    out[j] = rc[0];
    out[3 + j] = rc[1];
    out[6 + j] = rc[2];
  }
}

/* out = M·r̃ = −(r̃·Mᵀ)ᵀ */
static void mul_skew(double out[9], const double M[9], const double r[3]) {
  double mt[9], tmp[9];
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      mt[3 * i + j] = M[3 * j + i];
    }
  }
  skew_mul(tmp, r, mt);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      out[3 * i + j] = -tmp[3 * j + i];
    }
  }
}

/* With X = diag(E,E)·[1 0; −r̃ 1] and I = [A B; Bᵀ C] rotated to A',B',C':
 *   Xᵀ I X = [A' − B'r̃ + r̃B'ᵀ − r̃C'r̃,  B' + r̃C';  (B' + r̃C')ᵀ,  C'].
 * Block arithmetic costs about a third of the dense 6×6 congruence. */
void sim_xform_inertia_back_add(double out[36], const double E[9], const double r[3],
                                const double I[36]) {
  double A[9], B[9], C[9], Ar[9], Br[9], Cr[9];
  block_get(A, I, 0, 0);
  block_get(B, I, 0, 3);
  block_get(C, I, 3, 3);
  rotate_back(Ar, E, A);
  rotate_back(Br, E, B);
  rotate_back(Cr, E, C);

  double rC[9], Bnew[9], Brs[9], rBt[9], rCr[9], Bt[9];
  skew_mul(rC, r, Cr);
  for (int k = 0; k < 9; k++) {
    Bnew[k] = Br[k] + rC[k];
  }
  mul_skew(Brs, Br, r);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      Bt[3 * i + j] = Br[3 * j + i];
    }
  }
  skew_mul(rBt, r, Bt);
  mul_skew(rCr, rC, r);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      int k = 3 * i + j;
      out[6 * i + j] += Ar[k] - Brs[k] + rBt[k] - rCr[k];
      out[6 * i + 3 + j] += Bnew[k];
      out[6 * (3 + j) + i] += Bnew[k];
      out[6 * (3 + i) + 3 + j] += Cr[k];
    }
  }
}

/* v ×m u = [ω×u_ω; ω×u_v + v_v×u_ω] */
void sim_cross_motion(double out[6], const double v[6], const double u[6]) {
  double a[3], b[3], c[3];
  sim_cross3(a, v, u);
  sim_cross3(b, v, u + 3);
  sim_cross3(c, v + 3, u);
  out[0] = a[0];
  out[1] = a[1];
  out[2] = a[2];
  out[3] = b[0] + c[0];
  out[4] = b[1] + c[1];
  out[5] = b[2] + c[2];
}

/* v ×f f = [ω×n + v_v×f_f; ω×f_f] */
void sim_cross_force(double out[6], const double v[6], const double f[6]) {
  double a[3], b[3], c[3];
  sim_cross3(a, v, f);
  sim_cross3(b, v + 3, f + 3);
  sim_cross3(c, v, f + 3);
  out[0] = a[0] + b[0];
  out[1] = a[1] + b[1];
  out[2] = a[2] + b[2];
  out[3] = c[0];
  out[4] = c[1];
  out[5] = c[2];
}

/* I_O = [I_c + m·c̃·c̃ᵀ, m·c̃; m·c̃ᵀ, m·1] */
void sim_spatial_inertia(double out[36], double mass, const double com[3],
                         const double inertia_com[9]) {
  const double c[3] = {com[0], com[1], com[2]};
  const double cx[9] = {0, -c[2], c[1], c[2], 0, -c[0], -c[1], c[0], 0};
  double cct[9];
  sim_mat3_mult(cct, cx, cx); /* c̃·c̃ᵀ */
  memset(out, 0, 36 * sizeof(double));
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      out[6 * i + j] = inertia_com[3 * i + j] + mass * cct[3 * i + j];
      out[6 * i + 3 + j] = mass * cx[3 * i + j];
      out[6 * (3 + i) + j] = mass * cx[3 * j + i];
    }
    out[6 * (3 + i) + 3 + i] = mass;
  }
}

void sim_mat6_vec(double out[6], const double I[36], const double v[6]) {
  for (int i = 0; i < 6; i++) {
    const double *row = I + 6 * i;
    out[i] = row[0] * v[0] + row[1] * v[1] + row[2] * v[2] + row[3] * v[3] + row[4] * v[4] +
             row[5] * v[5];
  }
}

double sim_dot6(const double a[6], const double b[6]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}
