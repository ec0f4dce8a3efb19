/* sim/spatial.h: 3D and 6D (spatial) algebra used inside sim/ (internal header).
 *
 * Spatial motion vectors are [ω; v] and force vectors [n; f] (Featherstone's convention).
 * A Plücker transform from frame A to frame B is stored as (E, r): E rotates A-coordinates into
 * B-coordinates and r is B's origin expressed in A. Matrices are row-major double arrays.
 * Outputs come first in every argument list; outputs may not alias inputs unless stated.
 */
#ifndef ACHILLES_SIM_SPATIAL_H
#define ACHILLES_SIM_SPATIAL_H

/* 3-vectors and 3×3 matrices */
void sim_cross3(double out[3], const double a[3], const double b[3]);
double sim_dot3(const double a[3], const double b[3]);
void sim_mat3_vec(double out[3], const double mat[9], const double v[3]);
void sim_mat3t_vec(double out[3], const double mat[9], const double v[3]);
void sim_mat3_mul(double out[9], const double a[9], const double b[9]);
void sim_mat3t_mul(double out[9], const double a[9], const double b[9]);   /* aᵀ·b */
void sim_mat3_mult(double out[9], const double a[9], const double b[9]);   /* a·bᵀ */
void sim_quat_to_mat(double mat[9], const double quat[4]);
void sim_axis_angle_to_mat(double mat[9], const double axis[3], double angle);
void sim_rpy_to_quat(double quat[4], const double rpy[3]);

/* Transform a motion vector from parent to body: out = X·v. */
void sim_xform_motion(double out[6], const double E[9], const double r[3], const double v[6]);
/* Transform a force vector from body to parent: out = Xᵀ·f. */
void sim_xform_force_back(double out[6], const double E[9], const double r[3], const double f[6]);
/* Congruence of a spatial inertia from body to parent, accumulated: out += Xᵀ·I·X. */
void sim_xform_inertia_back_add(double out[36], const double E[9], const double r[3],
                                const double I[36]);

/* Motion cross product v ×m u, and force cross product v ×f f. */
void sim_cross_motion(double out[6], const double v[6], const double u[6]);
void sim_cross_force(double out[6], const double v[6], const double f[6]);

/* Spatial inertia about the body origin from mass, COM (body frame) and COM inertia. */
void sim_spatial_inertia(double out[36], double mass, const double com[3],
                         const double inertia_com[9]);
/* out = I·v for a 6×6 matrix. */
void sim_mat6_vec(double out[6], const double I[36], const double v[6]);
double sim_dot6(const double a[6], const double b[6]);

#endif
