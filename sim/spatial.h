/* sim/spatial.h: 3D and 6D (spatial) algebra used inside sim/ (internal header).
 *
 * Spatial motion vectors are [ω; v] and force vectors [n; f] (Featherstone's convention);
 * sim/ keeps them in world axes about the world origin. Matrices are row-major double arrays.
 * Outputs come first in every argument list; outputs may not alias inputs unless stated.
 * The small kernels are inline: they sit in the innermost loops of the dynamics, where a call
 * costs as much as the arithmetic.
 */
#ifndef ACHILLES_SIM_SPATIAL_H
#define ACHILLES_SIM_SPATIAL_H

#include <math.h>

/* --- 3-vectors and 3×3 matrices -------------------------------------------------------------- */

/* out = a × b; out may alias a or b. */
static inline void sim_cross3(double out[3], const double a[3], const double b[3]) {
  double x = a[1] * b[2] - a[2] * b[1];
  double y = a[2] * b[0] - a[0] * b[2];
  double z = a[0] * b[1] - a[1] * b[0];
  out[0] = x, out[1] = y, out[2] = z;
}

static inline double sim_dot3(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* v / |v| in place, by the reciprocal, as MuJoCo's mju_normalize3 (v = [1 0 0] when |v| is
 * below 1e-15); returns |v| */
static inline double sim_normalize3(double v[3]) {
  const double norm = sqrt(sim_dot3(v, v));
  if (norm < 1e-15) {
    v[0] = 1, v[1] = 0, v[2] = 0;
  } else {
    const double inv = 1 / norm;
    v[0] *= inv, v[1] *= inv, v[2] *= inv;
  }
  return norm;
}

/* The kernels below read an input into locals before they store any output: the compiler
 * must assume that an output may overlap an input and would otherwise load the input again
 * after every store (a third of their instructions). */

/* out = M·v */
static inline void sim_mat3_vec(double out[3], const double M[9], const double v[3]) {
  const double x = v[0], y = v[1], z = v[2];
  out[0] = M[0] * x + M[1] * y + M[2] * z;
  out[1] = M[3] * x + M[4] * y + M[5] * z;
  out[2] = M[6] * x + M[7] * y + M[8] * z;
}

/* out = Mᵀ·v */
static inline void sim_mat3t_vec(double out[3], const double M[9], const double v[3]) {
  const double x = v[0], y = v[1], z = v[2];
  out[0] = M[0] * x + M[3] * y + M[6] * z;
  out[1] = M[1] * x + M[4] * y + M[7] * z;
  out[2] = M[2] * x + M[5] * y + M[8] * z;
}

/* out = a·b: row i of out is a's row i times b (b is read first) */
static inline void sim_mat3_mul(double out[9], const double a[9], const double b[9]) {
  const double b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3], b4 = b[4], b5 = b[5], b6 = b[6],
               b7 = b[7], b8 = b[8];
  for (int i = 0; i < 3; i++) {
    const double x = a[3 * i], y = a[3 * i + 1], z = a[3 * i + 2];
    out[3 * i] = x * b0 + y * b3 + z * b6;
    out[3 * i + 1] = x * b1 + y * b4 + z * b7;
    out[3 * i + 2] = x * b2 + y * b5 + z * b8;
  }
}

/* out = aᵀ·b */
static inline void sim_mat3t_mul(double out[9], const double a[9], const double b[9]) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      out[3 * i + j] = a[i] * b[j] + a[3 + i] * b[3 + j] + a[6 + i] * b[6 + j];
    }
  }
}

/* out = a·bᵀ */
static inline void sim_mat3_mult(double out[9], const double a[9], const double b[9]) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      out[3 * i + j] =
          a[3 * i] * b[3 * j] + a[3 * i + 1] * b[3 * j + 1] + a[3 * i + 2] * b[3 * j + 2];
    }
  }
}

/* --- 6-vectors and 6×6 matrices ------------------------------------------------------------- */

/* Sums of four or six products below are added in pairs: fewer dependent additions on the
 * dynamics' chains from body to body, where the processor waits on each result (measured in
 * time with tools/bench_dynamics; the operation count is the same). */

/* Motion cross product v ×m u = [ω×u_ω; ω×u_v + v_v×u_ω]. */
static inline void sim_cross_motion(double out[6], const double v_[6], const double u_[6]) {
  const double v[6] = {v_[0], v_[1], v_[2], v_[3], v_[4], v_[5]};
  const double u[6] = {u_[0], u_[1], u_[2], u_[3], u_[4], u_[5]};
  out[0] = v[1] * u[2] - v[2] * u[1];
  out[1] = v[2] * u[0] - v[0] * u[2];
  out[2] = v[0] * u[1] - v[1] * u[0];
  out[3] = (v[1] * u[5] - v[2] * u[4]) + (v[4] * u[2] - v[5] * u[1]);
  out[4] = (v[2] * u[3] - v[0] * u[5]) + (v[5] * u[0] - v[3] * u[2]);
  out[5] = (v[0] * u[4] - v[1] * u[3]) + (v[3] * u[1] - v[4] * u[0]);
}

/* Force cross product v ×f f = [ω×n + v_v×f_f; ω×f_f]. */
static inline void sim_cross_force(double out[6], const double v_[6], const double f_[6]) {
  const double v[6] = {v_[0], v_[1], v_[2], v_[3], v_[4], v_[5]};
  const double f[6] = {f_[0], f_[1], f_[2], f_[3], f_[4], f_[5]};
  out[0] = (v[1] * f[2] - v[2] * f[1]) + (v[4] * f[5] - v[5] * f[4]);
  out[1] = (v[2] * f[0] - v[0] * f[2]) + (v[5] * f[3] - v[3] * f[5]);
  out[2] = (v[0] * f[1] - v[1] * f[0]) + (v[3] * f[4] - v[4] * f[3]);
  out[3] = v[1] * f[5] - v[2] * f[4];
  out[4] = v[2] * f[3] - v[0] * f[5];
  out[5] = v[0] * f[4] - v[1] * f[3];
}

/* out = I·v for a 6×6 matrix. */
static inline void sim_mat6_vec(double out[6], const double I[36], const double v_[6]) {
  const double v[6] = {v_[0], v_[1], v_[2], v_[3], v_[4], v_[5]};
  for (int i = 0; i < 6; i++) {
    const double *row = I + 6 * i;
    out[i] = row[0] * v[0] + row[1] * v[1] + row[2] * v[2] + row[3] * v[3] + row[4] * v[4] +
             row[5] * v[5];
  }
}

/* summed in pairs: three dependent additions, not five, on the ABA's chains from body to body */
static inline double sim_dot6(const double a[6], const double b[6]) {
  return ((a[0] * b[0] + a[1] * b[1]) + (a[2] * b[2] + a[3] * b[3])) + (a[4] * b[4] + a[5] * b[5]);
}

/* out = I·x for a rigid body's spatial inertia I = [Ī, h̃; h̃ᵀ, m·1] as sim_spatial_inertia
 * lays it out (Ī symmetric, h = m·c): Ī·ω + h×v over m·v + ω×h, 42 flops where the 6×6
 * product takes 66. Reads Ī from the upper left block, h from the upper right, m from [21]. */
static inline void sim_rigid_inertia_vec(double out[6], const double I[36], const double x[6]) {
  const double hx = I[16], hy = I[5], hz = I[9], m = I[21];
  const double w0 = x[0], w1 = x[1], w2 = x[2], v0 = x[3], v1 = x[4], v2 = x[5];
  out[0] = (I[0] * w0 + I[1] * w1) + (I[2] * w2 + (hy * v2 - hz * v1));
  out[1] = (I[6] * w0 + I[7] * w1) + (I[8] * w2 + (hz * v0 - hx * v2));
  out[2] = (I[12] * w0 + I[13] * w1) + (I[14] * w2 + (hx * v1 - hy * v0));
  out[3] = m * v0 + (w1 * hz - w2 * hy);
  out[4] = m * v1 + (w2 * hx - w0 * hz);
  out[5] = m * v2 + (w0 * hy - w1 * hx);
}

/* --- rotations and inertias (spatial.c) ---------------------------------------------------------- */

void sim_quat_to_mat(double mat[9], const double quat[4]);
/* Rodrigues' formula, R = c·1 + s·ã + (1 − c)·a·aᵀ; axis must be a unit vector. Inline, with
 * the products shared between the entries (22 flops besides sin and cos): every hinge of every
 * evaluation builds one. */
static inline void sim_axis_sincos_to_mat(double mat[9], const double axis[3], double s,
                                          double c);
static inline void sim_axis_angle_to_mat(double mat[9], const double axis[3], double angle) {
  sim_axis_sincos_to_mat(mat, axis, sin(angle), cos(angle));
}
/* the same from the angle's sine s and cosine c */
static inline void sim_axis_sincos_to_mat(double mat[9], const double axis[3], double s,
                                          double c) {
  const double t = 1 - c;
  const double x = axis[0], y = axis[1], z = axis[2];
  const double tx = t * x, ty = t * y, tz = t * z, sx = s * x, sy = s * y, sz = s * z;
  const double txy = tx * y, txz = tx * z, tyz = ty * z;
  mat[0] = tx * x + c;
  mat[1] = txy - sz;
  mat[2] = txz + sy;
  mat[3] = txy + sz;
  mat[4] = ty * y + c;
  mat[5] = tyz - sx;
  mat[6] = txz - sy;
  mat[7] = tyz + sx;
  mat[8] = tz * z + c;
}
/* Roll about x, then pitch about y, then yaw about z, all about fixed axes: R = Rz·Ry·Rx. */
void sim_rpy_to_quat(double quat[4], const double rpy[3]);
/* out = q/|q|; a zero or non-finite quaternion gives the identity [1 0 0 0] (out may alias q). */
void sim_quat_normalize(double out[4], const double q[4]);
/* out = a·b (Hamilton product); out may alias a or b. */
void sim_quat_mul(double out[4], const double a[4], const double b[4]);
/* out = normalize(q)·exp(h·ω/2): q advanced by the angular velocity ω given in the rotated
 * (body) frame over time h, as MuJoCo's mju_quatIntegrate (out may alias q). */
void sim_quat_integrate(double out[4], const double q[4], const double omega[3], double h);
/* Spatial inertia about a point, from mass, the COM relative to that point and the rotational
 * inertia about the COM (all in the same axes): [Ic + m·c̃·c̃ᵀ, m·c̃; m·c̃ᵀ, m·1], with
 * c̃·c̃ᵀ = |c|²·1 − c·cᵀ. Ic is read from its upper triangle and the result is exactly
 * symmetric (each off-diagonal entry computed once and mirrored). Inline: kinematics builds one
 * per body per evaluation. */
static inline void sim_spatial_inertia(double out[36], double mass, const double com[3],
                                       const double inertia_com[9]) {
  const double x = com[0], y = com[1], z = com[2];
  const double hx = mass * x, hy = mass * y, hz = mass * z; /* h = m·c */
  const double *Ic = inertia_com;
  out[0] = Ic[0] + (hy * y + hz * z);
  out[7] = Ic[4] + (hx * x + hz * z);
  out[14] = Ic[8] + (hx * x + hy * y);
  out[1] = out[6] = Ic[1] - hx * y;
  out[2] = out[12] = Ic[2] - hx * z;
  out[8] = out[13] = Ic[5] - hy * z;
  /* upper right h̃, lower left its transpose */
  out[3] = 0, out[4] = -hz, out[5] = hy;
  out[9] = hz, out[10] = 0, out[11] = -hx;
  out[15] = -hy, out[16] = hx, out[17] = 0;
  out[18] = 0, out[19] = hz, out[20] = -hy;
  out[24] = -hz, out[25] = 0, out[26] = hx;
  out[30] = hy, out[31] = -hx, out[32] = 0;
  /* lower right m·1 */
  out[21] = mass, out[22] = 0, out[23] = 0;
  out[27] = 0, out[28] = mass, out[29] = 0;
  out[33] = 0, out[34] = 0, out[35] = mass;
}

/* out = R·I·Rᵀ for a symmetric I: T = R·I, then only the upper triangle of T·Rᵀ, mirrored
 * (75 flops, not 90; the result is exactly symmetric). */
static inline void sim_mat3_congruence(double out[9], const double R[9], const double I[9]) {
  double T[9];
  sim_mat3_mul(T, R, I);
#pragma GCC unroll 3
  for (int i = 0; i < 3; i++) {
#pragma GCC unroll 3
    for (int j = i; j < 3; j++) {
      out[3 * i + j] = out[3 * j + i] =
          T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2];
    }
  }
}

#endif
