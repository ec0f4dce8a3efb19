/* tests/sim/test_spatial.c: spatial algebra against its definitions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "sim/spatial.h"
#include "support/skip.h"

static unsigned long long rng_state = 0x9E3779B97F4A7C15ull;

static double uniform(void) { /* xorshift64*, in [-1, 1) */
  rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
  return (double)((rng_state * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1.0;
}

static double max_diff(const double *a, const double *b, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) {
    e = fmax(e, fabs(a[i] - b[i]));
  }
  return e;
}

/* The motion cross product from its definition with 3D cross products:
 * [ω; v] ×m [ω'; v'] = [ω×ω'; ω×v' + v×ω']. */
static void test_cross_motion_definition(void **state) {
  (void)state;
  for (int trial = 0; trial < 100; trial++) {
    double v[6], u[6], out[6], a[3], b[3], c[3];
    for (int i = 0; i < 6; i++) {
      v[i] = uniform(), u[i] = uniform();
    }
    sim_cross_motion(out, v, u);
    sim_cross3(a, v, u);
    sim_cross3(b, v, u + 3);
    sim_cross3(c, v + 3, u);
    for (int k = 0; k < 3; k++) {
      assert_true(fabs(out[k] - a[k]) < 1e-15);
      assert_true(fabs(out[3 + k] - b[k] - c[k]) < 1e-15);
    }
  }
}

/* v ×f = −(v ×m)ᵀ: the force cross product is the dual of the motion cross product. */
static void test_cross_products_are_dual(void **state) {
  (void)state;
  double v[6], basis[6], Cm[36], Cf[36];
  for (int i = 0; i < 6; i++) {
    v[i] = uniform();
  }
  for (int j = 0; j < 6; j++) {
    double col_m[6], col_f[6];
    memset(basis, 0, sizeof basis);
    basis[j] = 1;
    sim_cross_motion(col_m, v, basis);
    sim_cross_force(col_f, v, basis);
    for (int i = 0; i < 6; i++) {
      Cm[6 * i + j] = col_m[i];
      Cf[6 * i + j] = col_f[i];
    }
  }
  for (int i = 0; i < 6; i++) {
    for (int j = 0; j < 6; j++) {
      assert_true(fabs(Cf[6 * i + j] + Cm[6 * j + i]) < 1e-15);
    }
  }
}

/* A point mass m at c: kinetic energy ½·vᵀ·I·v equals ½·m·|v_lin + ω×c|². */
static void test_spatial_inertia_of_point_mass(void **state) {
  (void)state;
  double c[3] = {0.3, -0.2, 0.7}, zero[9] = {0}, I[36], v[6], Iv[6];
  for (int i = 0; i < 6; i++) {
    v[i] = uniform();
  }
  sim_spatial_inertia(I, 2.5, c, zero);
  sim_mat6_vec(Iv, I, v);
  double wxc[3], vp[3];
  sim_cross3(wxc, v, c);
  for (int k = 0; k < 3; k++) {
    vp[k] = v[3 + k] + wxc[k];
  }
  assert_true(fabs(sim_dot6(v, Iv) - 2.5 * sim_dot3(vp, vp)) < 1e-13);
}

/* A rigid body's inertia times a vector from the compact form (mass, m·c, rotational
 * inertia) is the full 6×6 product; R·I·Rᵀ as a symmetric product is the plain one, and both
 * that and the spatial inertia come out exactly symmetric (the ABA updates only their upper
 * triangles). */
static void test_compact_and_symmetric_inertia(void **state) {
  (void)state;
  for (int trial = 0; trial < 100; trial++) {
    double axis[3] = {uniform(), uniform(), uniform()}, R[9], I[9], com[3], x[6];
    double n = sqrt(sim_dot3(axis, axis));
    for (int k = 0; k < 3; k++) {
      axis[k] /= n;
      com[k] = uniform();
    }
    sim_axis_angle_to_mat(R, axis, 3 * uniform());
    const double p[3] = {uniform() * 0.1, uniform() * 0.1, uniform() * 0.1};
    I[0] = 2 + uniform(), I[4] = 2 + uniform(), I[8] = 2 + uniform();
    I[1] = I[3] = p[0], I[2] = I[6] = p[1], I[5] = I[7] = p[2];
    double T[9], plain[9], sym[9], S[36], full[6], compact[6];
    sim_mat3_mul(T, R, I);
    sim_mat3_mult(plain, T, R);
    sim_mat3_congruence(sym, R, I);
    assert_true(max_diff(sym, plain, 9) < 1e-14);
    sim_spatial_inertia(S, 1.5 + uniform(), com, sym);
    for (int r = 0; r < 6; r++) {
      for (int c = 0; c < r; c++) {
        assert_true(S[6 * r + c] == S[6 * c + r]);
      }
      x[r] = uniform();
    }
    sim_mat6_vec(full, S, x);
    sim_rigid_inertia_vec(compact, S, x);
    assert_true(max_diff(full, compact, 6) < 1e-14);
  }
}

static void test_rotations(void **state) {
  (void)state;
  const double axis[3] = {0, 0, 1}, x[3] = {1, 0, 0};
  double R[9], y[3], RtR[9];
  sim_axis_angle_to_mat(R, axis, 0.5 * 3.14159265358979323846);
  sim_mat3_vec(y, R, x); /* right-handed: +90° about z takes x to y */
  assert_true(fabs(y[0]) < 1e-15 && fabs(y[1] - 1) < 1e-15);
  const double rpy[3] = {0.3, -0.4, 1.1};
  double q[4], Rq[9], Rz[9], Ry[9], Rx[9], tmp[9];
  const double ez[3] = {0, 0, 1}, ey[3] = {0, 1, 0}, ex[3] = {1, 0, 0};
  sim_rpy_to_quat(q, rpy);
  sim_quat_to_mat(Rq, q);
  sim_axis_angle_to_mat(Rz, ez, rpy[2]);
  sim_axis_angle_to_mat(Ry, ey, rpy[1]);
  sim_axis_angle_to_mat(Rx, ex, rpy[0]);
  sim_mat3_mul(tmp, Ry, Rx);
  sim_mat3_mul(R, Rz, tmp);
  assert_true(max_diff(R, Rq, 9) < 1e-15 * 8);
  sim_mat3t_mul(RtR, Rq, Rq);
  const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  assert_true(max_diff(RtR, I3, 9) < 1e-15 * 8);
}

TS_MAIN(test_cross_motion_definition, test_cross_products_are_dual,
        test_spatial_inertia_of_point_mass, test_rotations, test_compact_and_symmetric_inertia)
