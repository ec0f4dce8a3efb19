/* sim/tendon_wrap.c: the shortest path of a tendon segment between two sites around a sphere or
 * a cylinder, as MuJoCo 2.2.2 finds it (engine_util_misc.c: mju_wrap, wrap_circle,
 * wrap_inside), so that lengths and moments agree with MuJoCo's to round-off.
 *
 * The problem is solved in a plane. For a sphere the plane holds the centre and both sites; for
 * a cylinder it is the cross-section (the path's height is added afterwards, spread along the
 * straight and curved parts in proportion to their lengths). In that plane the path is a
 * tangent from each site to the circle and the arc between the tangent points:
 *  - no side site: of the two tangent pairs, the one whose tangent points lie closer together
 *    (the shorter way round), unless the straight segment misses the circle;
 *  - a side site outside the circle: the pair whose mid-direction points most toward the side
 *    site, and the straight segment is kept only when it misses the circle on that side;
 *  - a side site inside the circle: the path goes through the circle (MuJoCo's "inside" wrap),
 *    touching it at one point found by Newton's method.
 */
#include "sim/tendon.h"

#include <math.h>

#define WRAP_MINVAL 1e-15 /* MuJoCo's mjMINVAL */
#define WRAP_PI 3.14159265358979323846

static double dot2(const double *a, const double *b) {
  return a[0] * b[0] + a[1] * b[1];
}

static double norm2(const double *a) {
  return sqrt(dot2(a, a));
}

/* a ← a/|a| when |a| is not tiny (MuJoCo's mju_normalize leaves a tiny vector as [1 0]) */
static void normalize2(double *a) {
  const double n = norm2(a);
  if (n < WRAP_MINVAL) {
    a[0] = 1, a[1] = 0;
  } else {
    const double inv = 1 / n; /* MuJoCo scales by the inverse: the same bits */
    a[0] *= inv, a[1] *= inv;
  }
}

static double normalize3(double *a) {
  const double n = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  if (n < WRAP_MINVAL) {
    a[0] = 1, a[1] = a[2] = 0;
  } else {
    const double inv = 1 / n;
    a[0] *= inv, a[1] *= inv, a[2] *= inv;
  }
  return n;
}

static void cross3(double *out, const double *a, const double *b) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

/* do segments p1-p2 and p3-p4 of the plane cross? */
static int segments_cross(const double *p1, const double *p2, const double *p3, const double *p4) {
  const double det = (p4[1] - p3[1]) * (p2[0] - p1[0]) - (p4[0] - p3[0]) * (p2[1] - p1[1]);
  if (fabs(det) < WRAP_MINVAL) {
    return 0;
  }
  const double a = ((p4[0] - p3[0]) * (p1[1] - p3[1]) - (p4[1] - p3[1]) * (p1[0] - p3[0])) / det;
  const double b = ((p2[0] - p1[0]) * (p1[1] - p3[1]) - (p2[1] - p1[1]) * (p1[0] - p3[0])) / det;
  return a >= 0 && a <= 1 && b >= 0 && b <= 1;
}

/* the arc from p0 to p1 on the circle of radius rad: the angle between them, or its complement
 * to 2π when the pair chosen goes the other way round (which = 1 for the second solution) */
static double arc_length(const double *p0, const double *p1, int which, double rad) {
  double a[2] = {p0[0], p0[1]}, b[2] = {p1[0], p1[1]};
  normalize2(a);
  normalize2(b);
  double angle = acos(fmin(1, fmax(-1, dot2(a, b))));
  const double cross = p0[1] * p1[0] - p0[0] * p1[1];
  if ((cross > 0 && which) || (cross < 0 && !which)) {
    angle = 2 * WRAP_PI - angle;
  }
  return rad * angle;
}

/* Planar wrap of d = (site 0, site 1) around the circle of radius rad about the origin, side
 * point sd (on the circle) or NULL: the tangent points into pnt, the arc length, or -1 when
 * the path is straight. */
static double wrap_circle(double pnt[4], const double d[4], const double *sd, double rad) {
  const double sq0 = d[0] * d[0] + d[1] * d[1], sq1 = d[2] * d[2] + d[3] * d[3];
  const double sqrad = rad * rad, dif[2] = {d[2] - d[0], d[3] - d[1]};
  if (sq0 < sqrad || sq1 < sqrad || rad < WRAP_MINVAL) { /* a site inside: straight */
    return -1;
  }
  const double dd = dot2(dif, dif);
  if (dd < WRAP_MINVAL) {
    return -1;
  }
  /* the segment's point nearest the centre: straight when it misses the circle, on the side
   * site's side when there is one */
  const double a = fmin(1, fmax(0, -dot2(dif, d) / dd));
  double near[2] = {d[0] + a * dif[0], d[1] + a * dif[1]};
  if (dot2(near, near) > sqrad && (!sd || dot2(sd, near) >= 0)) {
    return -1;
  }
  /* the two pairs of tangent points, and how good each is */
  double sol[2][4], good[2];
  const double r0 = sqrt(sq0 - sqrad), r1 = sqrt(sq1 - sqrad);
  for (int i = 0; i < 2; i++) {
    const double sgn = i == 0 ? 1 : -1;
    sol[i][0] = (d[0] * sqrad + sgn * rad * d[1] * r0) / sq0;
    sol[i][1] = (d[1] * sqrad - sgn * rad * d[0] * r0) / sq0;
    sol[i][2] = (d[2] * sqrad - sgn * rad * d[3] * r1) / sq1;
    sol[i][3] = (d[3] * sqrad + sgn * rad * d[2] * r1) / sq1;
    double t[2];
    if (sd) { /* the mid-direction toward the side site */
      t[0] = sol[i][0] + sol[i][2], t[1] = sol[i][1] + sol[i][3];
      normalize2(t);
      good[i] = dot2(t, sd);
    } else { /* the tangent points closer together */
      t[0] = sol[i][0] - sol[i][2], t[1] = sol[i][1] - sol[i][3];
      good[i] = -dot2(t, t);
    }
    if (segments_cross(d, sol[i], d + 2, sol[i] + 2)) { /* the tangents cross: not a path */
      good[i] = -10000;
    }
  }
  const int i = good[0] > good[1] ? 0 : 1;
  for (int k = 0; k < 4; k++) {
    pnt[k] = sol[i][k];
  }
  if (segments_cross(d, pnt, d + 2, pnt + 2)) {
    return -1;
  }
  return arc_length(sol[i], sol[i] + 2, i, rad);
}

/* Planar wrap through the circle (a side site inside it): the one point of the circle where the
 * path from site 0 to site 1 touches it, where asin(A·z) + asin(B·z) − 2·asin(z) + G = 0 with
 * A = rad/|d0|, B = rad/|d1|, G the angle between the sites; 0 with the point (twice) in pnt,
 * or -1 when the path is straight. */
static double wrap_inside(double pnt[4], const double d[4], double rad) {
  const int maxiter = 20;
  const double zinit = 1 - 1e-7, tolerance = 1e-6;
  const double len0 = norm2(d), len1 = norm2(d + 2), dif[2] = {d[2] - d[0], d[3] - d[1]};
  const double dd = dot2(dif, dif);
  if (len0 <= rad || len1 <= rad || rad < WRAP_MINVAL || len0 < WRAP_MINVAL ||
      len1 < WRAP_MINVAL) {
    return -1;
  }
  if (dd > WRAP_MINVAL) { /* the segment already crosses the circle: straight */
    const double a = -dot2(dif, d) / dd;
    if (a > 0 && a < 1) {
      const double t[2] = {d[0] + a * dif[0], d[1] + a * dif[1]};
      if (norm2(t) <= rad) {
        return -1;
      }
    }
  }
  /* fallback should Newton fail: the circle's point toward the sites' midpoint */
  pnt[0] = 0.5 * (d[0] + d[2]), pnt[1] = 0.5 * (d[1] + d[3]);
  normalize2(pnt);
  pnt[0] *= rad, pnt[1] *= rad;
  pnt[2] = pnt[0], pnt[3] = pnt[1];
  const double A = rad / len0, B = rad / len1;
  const double cosG = (len0 * len0 + len1 * len1 - dd) / (2 * len0 * len1);
  if (cosG < -1 + WRAP_MINVAL) {
    return -1;
  }
  if (cosG > 1 - WRAP_MINVAL) {
    return 0;
  }
  const double G = acos(cosG);
  double z = zinit, f = asin(A * z) + asin(B * z) - 2 * asin(z) + G;
  if (f > 0) {
    return 0;
  }
  int iter;
  for (iter = 0; iter < maxiter && fabs(f) > tolerance; iter++) {
    const double df = A / fmax(WRAP_MINVAL, sqrt(1 - z * z * A * A)) +
                      B / fmax(WRAP_MINVAL, sqrt(1 - z * z * B * B)) -
                      2 / fmax(WRAP_MINVAL, sqrt(1 - z * z));
    if (df > -WRAP_MINVAL) {
      return 0;
    }
    const double z1 = z - f / df;
    if (z1 > z) {
      return 0;
    }
    z = z1;
    f = asin(A * z) + asin(B * z) - 2 * asin(z) + G;
    if (f > tolerance) {
      return 0;
    }
  }
  if (iter >= maxiter) {
    return 0;
  }
  /* the touching point: the direction of the site on the left turned by the angle found */
  double vec[2], ang;
  if (d[0] * d[3] - d[1] * d[2] > 0) {
    vec[0] = d[0], vec[1] = d[1];
    ang = asin(z) - asin(A * z);
  } else {
    vec[0] = d[2], vec[1] = d[3];
    ang = asin(z) - asin(B * z);
  }
  normalize2(vec);
  pnt[0] = rad * (cos(ang) * vec[0] - sin(ang) * vec[1]);
  pnt[1] = rad * (sin(ang) * vec[0] + cos(ang) * vec[1]);
  pnt[2] = pnt[0], pnt[3] = pnt[1];
  return 0;
}

/* p = Rᵀ·(x − c): a world point in the geom's frame */
static void to_local(double p[3], const double x[3], const double c[3], const double R[9]) {
  const double t[3] = {x[0] - c[0], x[1] - c[1], x[2] - c[2]};
  for (int i = 0; i < 3; i++) {
    p[i] = R[i] * t[0] + R[3 + i] * t[1] + R[6 + i] * t[2];
  }
}

/* the plane of a sphere wrap: axis 0 toward site 0, the normal across both sites (any normal
 * when they are aligned with the centre), axis 1 = normal × axis 0 */
static void sphere_plane(double axis[2][3], const double p0[3], const double p1[3]) {
  double normal[3];
  axis[0][0] = p0[0], axis[0][1] = p0[1], axis[0][2] = p0[2];
  normalize3(axis[0]);
  cross3(normal, p0, p1);
  if (normalize3(normal) < WRAP_MINVAL) {
    int i = 0;
    const double *a = axis[0];
    if (fabs(a[1]) > fabs(a[0]) && fabs(a[1]) > fabs(a[2])) {
      i = 1;
    }
    if (fabs(a[2]) > fabs(a[0]) && fabs(a[2]) > fabs(a[1])) {
      i = 2;
    }
    double other[3] = {1, 1, 1};
    other[i] = 0;
    cross3(normal, axis[0], other);
    normalize3(normal);
  }
  cross3(axis[1], normal, axis[0]);
  normalize3(axis[1]);
}

double sim__wrap(double wpnt[6], const double x0[3], const double x1[3], const double xpos[3],
                 const double xmat[9], double radius, int cylinder, const double *side) {
  double p[2][3], axis[2][3] = {{1, 0, 0}, {0, 1, 0}};
  to_local(p[0], x0, xpos, xmat);
  to_local(p[1], x1, xpos, xmat);
  for (int s = 0; s < 2; s++) {
    if (sqrt(p[s][0] * p[s][0] + p[s][1] * p[s][1] + p[s][2] * p[s][2]) < WRAP_MINVAL) {
      return -1;
    }
  }
  if (!cylinder) {
    sphere_plane(axis, p[0], p[1]);
  }
  double d[4], sd[2] = {0, 0}, pnt[4];
  for (int s = 0; s < 2; s++) {
    d[2 * s] = p[s][0] * axis[0][0] + p[s][1] * axis[0][1] + p[s][2] * axis[0][2];
    d[2 * s + 1] = p[s][0] * axis[1][0] + p[s][1] * axis[1][1] + p[s][2] * axis[1][2];
  }
  if (side) { /* the side site projected like the sites: onto the circle, or 0 inside it */
    double s[3];
    to_local(s, side, xpos, xmat);
    sd[0] = s[0] * axis[0][0] + s[1] * axis[0][1] + s[2] * axis[0][2];
    sd[1] = s[0] * axis[1][0] + s[1] * axis[1][1] + s[2] * axis[1][2];
    if (norm2(sd) >= radius) {
      normalize2(sd);
      sd[0] *= radius, sd[1] *= radius;
    } else {
      sd[0] = sd[1] = 0;
    }
  }
  const double wlen = side && sd[0] == 0 && sd[1] == 0 ? wrap_inside(pnt, d, radius)
                                                        : wrap_circle(pnt, d, side ? sd : 0, radius);
  if (wlen < 0) {
    return -1;
  }
  double res[6];
  for (int i = 0; i < 2; i++) {
    for (int r = 0; r < 3; r++) {
      res[3 * i + r] = axis[0][r] * pnt[2 * i] + axis[1][r] * pnt[2 * i + 1];
    }
  }
  double len = wlen;
  if (cylinder) { /* heights in proportion to the path's length so far; the arc climbs */
    const double L0 = sqrt((p[0][0] - res[0]) * (p[0][0] - res[0]) +
                           (p[0][1] - res[1]) * (p[0][1] - res[1]));
    const double L1 = sqrt((p[1][0] - res[3]) * (p[1][0] - res[3]) +
                           (p[1][1] - res[4]) * (p[1][1] - res[4]));
    res[2] = p[0][2] + (p[1][2] - p[0][2]) * L0 / (L0 + wlen + L1);
    res[5] = p[0][2] + (p[1][2] - p[0][2]) * (L0 + wlen) / (L0 + wlen + L1);
    const double height = fabs(res[5] - res[2]);
    len = sqrt(wlen * wlen + height * height);
  }
  for (int i = 0; i < 2; i++) { /* back to the world */
    for (int r = 0; r < 3; r++) {
      wpnt[3 * i + r] = xmat[3 * r] * res[3 * i] + xmat[3 * r + 1] * res[3 * i + 1] +
                        xmat[3 * r + 2] * res[3 * i + 2] + xpos[r];
    }
  }
  return len;
}
