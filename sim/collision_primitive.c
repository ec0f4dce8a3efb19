/* sim/collision_primitive.c: the narrow phase of the primitive shapes (see collision.h for the
 * conventions): sphere, capsule and box on a plane, pairs of spheres and capsules, and spheres
 * and capsules against boxes, each as MuJoCo 2.2.2 builds them (engine_collision_primitive.c,
 * engine_collision_box.c). Depends on contact_frame.c only. */
#include "sim/collision.h"
#include "sim/spatial.h"

#include <math.h>
#include <string.h>

#define COLLIDE_MINVAL 1e-15

/* column k of a row-major rotation: the frame's k-th axis in world coordinates */
static void axis_of(double out[3], const double mat[9], int k) {
  out[0] = mat[k], out[1] = mat[3 + k], out[2] = mat[6 + k];
}


/* a sphere at c against the plane: distance along the normal minus the radius; the point
 * halfway into the overlap below the centre */
static int plane_sphere(sim_contact *con, double margin, const double plane_pos[3],
                        const double normal[3], const double c[3], double radius,
                        const double *tangent_hint) {
  double rel[3] = {c[0] - plane_pos[0], c[1] - plane_pos[1], c[2] - plane_pos[2]};
  double cdist = sim_dot3(rel, normal);
  if (cdist > margin + radius) {
    return 0;
  }
  con->dist = cdist - radius;
  double s = -con->dist / 2 - radius;
  for (int k = 0; k < 3; k++) {
    con->pos[k] = c[k] + normal[k] * s;
    con->frame[k] = normal[k];
    con->frame[3 + k] = tangent_hint ? tangent_hint[k] : 0.0;
  }
  sim_contact_frame(con->frame);
  return 1;
}

int sim_collide_plane_sphere(sim_contact *con, double margin, const double plane_pos[3],
                             const double plane_mat[9], const double pos[3], double radius) {
  double normal[3];
  axis_of(normal, plane_mat, 2);
  return plane_sphere(con, margin, plane_pos, normal, pos, radius, NULL);
}

/* the two end spheres of the segment pos ± half-length·axis; tangents aligned with the axis */
int sim_collide_plane_capsule(sim_contact *con, double margin, const double plane_pos[3],
                              const double plane_mat[9], const double pos[3],
                              const double mat[9], const double size[2]) {
  double normal[3], axis[3], end[3];
  axis_of(normal, plane_mat, 2);
  axis_of(axis, mat, 2);
  int n = 0;
  for (int side = 1; side >= -1; side -= 2) {
    for (int k = 0; k < 3; k++) {
      end[k] = pos[k] + side * axis[k] * size[1];
    }
    n += plane_sphere(con + n, margin, plane_pos, normal, end, size[0], axis);
  }
  return n;
}

/* corners within margin of the plane that lie on its side of the centre (at most 4) */
int sim_collide_plane_box(sim_contact *con, double margin, const double plane_pos[3],
                          const double plane_mat[9], const double pos[3], const double mat[9],
                          const double size[3]) {
  double normal[3];
  axis_of(normal, plane_mat, 2);
  double rel[3] = {pos[0] - plane_pos[0], pos[1] - plane_pos[1], pos[2] - plane_pos[2]};
  double dist = sim_dot3(rel, normal);
  int n = 0;
  for (int i = 0; i < 8 && n < 4; i++) {
    double local[3] = {i & 1 ? size[0] : -size[0], i & 2 ? size[1] : -size[1],
                       i & 4 ? size[2] : -size[2]};
    double corner[3];
    for (int r = 0; r < 3; r++) {
      corner[r] = mat[3 * r] * local[0] + mat[3 * r + 1] * local[1] + mat[3 * r + 2] * local[2];
    }
    double ldist = sim_dot3(normal, corner);
    if (dist + ldist > margin || ldist > 0) {
      continue;
    }
    sim_contact *c = &con[n++];
    c->dist = dist + ldist;
    for (int k = 0; k < 3; k++) {
      c->pos[k] = corner[k] + pos[k] - normal[k] * c->dist / 2;
      c->frame[k] = normal[k];
      c->frame[3 + k] = 0;
    }
    sim_contact_frame(c->frame);
  }
  return n;
}

/* --- pairs of round shapes -------------------------------------------------------------------
 * A capsule is a sphere swept along a segment, so every pair of spheres and capsules reduces to
 * two spheres at the nearest points of their segments (MuJoCo's construction, so that contacts
 * match its own to rounding). */

/* spheres of radii r1 at c1 and r2 at c2: normal from 1 to 2, point halfway into the overlap.
 * Coincident centres take the normal z1 × z2 of the shapes' axes (MuJoCo's rule). */
static int sphere_pair(sim_contact *con, double margin, const double c1[3], const double z1[3],
                       double r1, const double c2[3], const double z2[3], double r2) {
  double n[3] = {c2[0] - c1[0], c2[1] - c1[1], c2[2] - c1[2]};
  double centres = sqrt(sim_dot3(n, n));
  if (centres > margin + r1 + r2) {
    return 0;
  }
  con->dist = centres - r1 - r2;
  if (sim_normalize3(n) < 1e-15) {
    n[0] = z1[1] * z2[2] - z1[2] * z2[1];
    n[1] = z1[2] * z2[0] - z1[0] * z2[2];
    n[2] = z1[0] * z2[1] - z1[1] * z2[0];
    sim_normalize3(n);
  }
  const double s = r1 + con->dist / 2;
  for (int k = 0; k < 3; k++) {
    con->pos[k] = c1[k] + n[k] * s;
    con->frame[k] = n[k];
    con->frame[3 + k] = 0;
  }
  sim_contact_frame(con->frame);
  return 1;
}

int sim_collide_sphere_sphere(sim_contact *con, double margin, const double pos1[3],
                              const double mat1[9], double r1, const double pos2[3],
                              const double mat2[9], double r2) {
  double z1[3], z2[3];
  axis_of(z1, mat1, 2);
  axis_of(z2, mat2, 2);
  return sphere_pair(con, margin, pos1, z1, r1, pos2, z2, r2);
}

/* the capsule's segment point nearest the sphere's centre (clamped to the segment) */
int sim_collide_sphere_capsule(sim_contact *con, double margin, const double pos1[3],
                               const double mat1[9], double r1, const double pos2[3],
                               const double mat2[9], const double size2[2]) {
  double z1[3], z2[3], half[3], rel[3], near[3];
  axis_of(z1, mat1, 2);
  axis_of(z2, mat2, 2);
  for (int k = 0; k < 3; k++) {
    half[k] = z2[k] * size2[1];
    rel[k] = pos1[k] - pos2[k];
  }
  double x = sim_dot3(half, rel) / sim_dot3(half, half);
  x = x > 1 ? 1 : x < -1 ? -1 : x;
  for (int k = 0; k < 3; k++) {
    near[k] = pos2[k] + half[k] * x;
  }
  return sphere_pair(con, margin, pos1, z1, r1, near, z2, size2[0]);
}

/* Nearest points of two segments c + x·h, x in [−1, 1]: the unconstrained minimum, then each
 * clamped in turn with the other re-solved (MuJoCo's order, which decides the rare ties). */
static void segment_params(double *x1, double *x2, double a, double b, double c, double u,
                           double v, double det) {
  *x1 = (c * u - b * v) / det;
  *x2 = (a * v - b * u) / det;
  if (*x1 > 1 || *x1 < -1) {
    *x1 = *x1 > 1 ? 1 : -1;
    *x2 = (v - b * *x1) / c;
  }
  if (*x2 > 1 || *x2 < -1) {
    *x2 = *x2 > 1 ? 1 : -1;
    *x1 = (u - b * *x2) / a;
    *x1 = *x1 > 1 ? 1 : *x1 < -1 ? -1 : *x1;
  }
}

int sim_collide_capsule_capsule(sim_contact *con, double margin, const double pos1[3],
                                const double mat1[9], const double size1[2],
                                const double pos2[3], const double mat2[9],
                                const double size2[2]) {
  double z1[3], z2[3], h1[3], h2[3], dif[3], p1[3], p2[3];
  axis_of(z1, mat1, 2);
  axis_of(z2, mat2, 2);
  for (int k = 0; k < 3; k++) {
    h1[k] = z1[k] * size1[1];
    h2[k] = z2[k] * size2[1];
    dif[k] = pos1[k] - pos2[k];
  }
  /* minimise |dif + x1·h1 − x2·h2|²: [a b; b c]·[x1; x2] = [u; v] */
  const double a = sim_dot3(h1, h1), b = -sim_dot3(h1, h2), c = sim_dot3(h2, h2);
  const double u = -sim_dot3(h1, dif), v = sim_dot3(h2, dif), det = a * c - b * b;
  if (fabs(det) >= 1e-15) {
    double x1, x2;
    segment_params(&x1, &x2, a, b, c, u, v, det);
    for (int k = 0; k < 3; k++) {
      p1[k] = pos1[k] + h1[k] * x1;
      p2[k] = pos2[k] + h2[k] * x2;
    }
    return sphere_pair(con, margin, p1, z1, size1[0], p2, z2, size2[0]);
  }
  /* parallel: the ends of the first segment against their nearest points on the second, then,
   * while fewer than two contacts were found, the ends of the second against the first */
  int n = 0;
  for (int end = 0; end < 4 && !(end == 2 && n >= 2) && !(end == 3 && n >= 2); end++) {
    const double side = end % 2 == 0 ? 1 : -1;
    double x1 = side, x2 = side;
    if (end < 2) {
      x2 = (v - b * side) / c;
      x2 = x2 > 1 ? 1 : x2 < -1 ? -1 : x2;
    } else {
      x1 = (u - b * side) / a;
      x1 = x1 > 1 ? 1 : x1 < -1 ? -1 : x1;
    }
    for (int k = 0; k < 3; k++) {
      p1[k] = pos1[k] + h1[k] * x1;
      p2[k] = pos2[k] + h2[k] * x2;
    }
    n += sphere_pair(con + n, margin, p1, z1, size1[0], p2, z2, size2[0]);
  }
  return n;
}

/* --- boxes against round shapes ---------------------------------------------------------------
 * MuJoCo 2.2.2's construction (engine_collision_box.c), so that contacts match its own to
 * rounding: a sphere meets a box at the box point nearest its centre; a capsule is reduced to
 * one or two spheres on its segment (the point nearest the box, and a second one chosen by the
 * capsule's attitude to the nearest face, edge or corner). Everything is worked in box axes. */

/* a centre inside the box: the face nearest it (first of −x, +x, −y, +y, −z, +z on ties); the
 * normal points from the sphere into the box, through that face */
static double inside_face(double normal[3], const double c[3], const double half[3]) {
  double closest = (half[0] + half[1] + half[2]) * 2;
  int face = 0;
  for (int i = 0; i < 6; i++) {
    const double gap = fabs((i % 2 ? 1 : -1) * half[i / 2] - c[i / 2]);
    if (closest > gap) {
      closest = gap;
      face = i;
    }
  }
  normal[0] = normal[1] = normal[2] = 0;
  normal[face / 2] = face % 2 ? -1 : 1;
  return closest;
}

int sim_collide_sphere_box(sim_contact *con, double margin, const double pos1[3], double r1,
                           const double pos2[3], const double mat2[9], const double size2[3]) {
  double rel[3] = {pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]};
  double c[3], near[3], dir[3], local[3];
  sim_mat3t_vec(c, mat2, rel);
  for (int k = 0; k < 3; k++) {
    near[k] = c[k] < -size2[k] ? -size2[k] : c[k] > size2[k] ? size2[k] : c[k];
    dir[k] = near[k] - c[k];
  }
  const double dist = sim_normalize3(dir);
  if (dist - r1 > margin) {
    return 0;
  }
  if (dist <= COLLIDE_MINVAL) { /* the centre is inside: push out through the nearest face */
    const double closest = inside_face(dir, c, size2);
    for (int k = 0; k < 3; k++) {
      local[k] = c[k] + dir[k] * ((r1 - closest) / 2);
    }
  } else { /* halfway between the box point and the sphere's deepest point */
    for (int k = 0; k < 3; k++) {
      local[k] = near[k] * 0.5 + (c[k] + dir[k] * r1) * 0.5;
    }
  }
  sim_mat3_vec(con->frame, mat2, dir);
  sim_mat3_vec(con->pos, mat2, local);
  for (int k = 0; k < 3; k++) {
    con->pos[k] += pos2[k];
    con->frame[3 + k] = 0;
  }
  con->dist = dist - r1;
  sim_contact_frame(con->frame);
  return 1;
}

/* The box feature nearest a capsule's segment p + x·h, x in [−1, 1] (box axes). kind: -4 none
 * found, -3 / -1 the end x = −1 / +1 against a face (face: the clamped axis, −1 when inside),
 * 0..8 an edge: 3·(where on the edge: 0 low end, 1 middle, 2 high end) + (where on the
 * segment, same code); corner: the edge's end nearest (x bit 0, y bit 1, z bit 2). */
typedef struct box_feature {
  int kind, face, corner, edge;
  double seg;  /* x of the segment's nearest point */
  double edge_at; /* where on the edge, in [−1, 1] */
} box_feature;

/* the ends of the segment against the faces: an end beyond at most one face */
static void nearest_face(box_feature *f, double *best, const double p[3], const double h[3],
                         const double size[3]) {
  for (int side = -1; side <= 1; side += 2) {
    double end[3], clamped[3];
    int nout = 0, out = -1;
    for (int k = 0; k < 3; k++) {
      end[k] = p[k] + h[k] * side;
      clamped[k] = end[k];
      if (end[k] < -size[k] || end[k] > size[k]) {
        nout++;
        out = k;
        clamped[k] = end[k] < -size[k] ? -size[k] : size[k];
      }
      clamped[k] -= end[k];
    }
    const double dist2 = sim_dot3(clamped, clamped);
    if (nout <= 1 && dist2 < *best) {
      *best = dist2;
      f->seg = side;
      f->kind = side - 2;
      f->face = out;
    }
  }
}

/* parameter of a clamped end of one segment re-solved on the other: (w ∓ b)/a, clamped */
static int clamp_end(double *x) {
  if (*x > 1) {
    *x = 1;
    return 2;
  }
  if (*x < -1) {
    *x = -1;
    return 0;
  }
  return 1;
}

/* the segment against the twelve edges: the box's edge along axis j through the midpoint mid is
 * mid + x1·size[j]·e_j; nearest points of the two segments, clamped as MuJoCo clamps them */
static void nearest_edge(box_feature *f, double *best, const double p[3], const double h[3],
                         double half_len, const double size[3]) {
  for (int j = 0; j < 3; j++) {
    for (int i = 0; i < 8; i++) {
      if (i & (1 << j)) {
        continue;
      }
      double mid[3] = {(i & 1 ? 1 : -1) * size[0], (i & 2 ? 1 : -1) * size[1],
                       (i & 4 ? 1 : -1) * size[2]}, dif[3];
      mid[j] = 0;
      for (int k = 0; k < 3; k++) {
        dif[k] = mid[k] - p[k];
      }
      const double a = size[j] * size[j], b = -size[j] * h[j], c = half_len * half_len;
      const double u = -size[j] * dif[j], v = sim_dot3(h, dif), det = a * c - b * b;
      if (fabs(det) < COLLIDE_MINVAL) {
        continue;
      }
      const double idet = 1 / det;
      double x1 = (c * u - b * v) * idet, x2 = (a * v - b * u) * idet;
      int s1 = 1, s2 = 1;
      if (x1 > 1 || x1 < -1) {
        s1 = clamp_end(&x1);
        x2 = (v - b * x1) * (1 / c);
      }
      if (x2 > 1 || x2 < -1) {
        s2 = clamp_end(&x2);
        x1 = (u - b * x2) * (1 / a);
        const int s = clamp_end(&x1);
        s1 = s == 1 ? s1 : s; /* an x1 back inside keeps the first clamp's code (MuJoCo's) */
      }
      for (int k = 0; k < 3; k++) {
        dif[k] += h[k] * -x2;
      }
      dif[j] += size[j] * x1;
      const double dist2 = sim_dot3(dif, dif);
      /* the 1e-15 keeps a face found above when the segment is parallel to the box (rounding) */
      if (dist2 < *best - COLLIDE_MINVAL) {
        *best = dist2;
        f->seg = x2;
        f->edge_at = x1;
        f->kind = s1 * 3 + s2;
        f->corner = i + (1 << j) * (f->kind / 6);
        f->edge = j;
      }
    }
  }
}

static double min2(double a, double b) {
  return b < a ? b : a;
}

/* Nearest to a box corner: a segment pointing at or away from the corner (the signs of its
 * direction, axisdir, equal the corner's or their opposite) has no second point; one that runs
 * along an edge (|axis| above 1/√2 along it) takes it further along that edge, one that lies
 * along a face further across it, both only as far as the box reaches. */
static double second_at_corner(const box_feature *f, int axisdir, const double axis[3],
                               const double h[3], const double size[3]) {
  int c = axisdir ^ f->corner;
  if (c == 0 || c == 7) {
    return -4;
  }
  double mul = 1, ahead = 1 - f->seg, back = 1 + f->seg;
  if (c == 3 || c == 5 || c == 6) {
    mul = -1, c = 7 - c, ahead = 1 + f->seg, back = 1 - f->seg;
  }
  const int ax = c == 1 ? 0 : c == 2 ? 1 : 2, ax1 = (ax + 1) % 3, ax2 = (ax + 2) % 3;
  if (axis[ax] * axis[ax] > 0.5) {
    return min2(ahead, 2 * size[ax] / fabs(h[ax])) * mul;
  }
  double x = min2(back, 2 * size[ax1] / fabs(h[ax1]));
  return min2(x, 2 * size[ax2] / fabs(h[ax2])) * -mul;
}

/* Nearest to the middle of an edge: a segment across the edge in a T has no second point; one
 * crossing it (an X) takes it towards the face it is flattest against, as far as the box
 * reaches along that face and along the edge. */
static double second_at_edge(const box_feature *f, int axisdir, const double axis[3],
                             const double h[3], const double size[3]) {
  const int c = (axisdir ^ f->corner) & (7 - (1 << f->edge));
  if (c != 1 && c != 2 && c != 4) {
    return -4;
  }
  const int ax = f->edge;
  int ax1 = (ax + 1) % 3, ax2 = (ax + 2) % 3;
  if (fabs(axis[ax1]) > fabs(axis[ax2])) {
    ax1 = ax2;
  }
  ax2 = 3 - ax - ax1;
  const int up = (c & (1 << ax2)) != 0;
  const double mul = up ? 1 : -1;
  double x = min2(up ? 1 - f->seg : 1 + f->seg, 2 * size[ax2] / fabs(h[ax2]));
  const double along = ((axisdir & (1 << ax)) != 0) == up ? 1 - f->edge_at : 1 + f->edge_at;
  x = min2(x, size[ax] * along / fabs(h[ax]));
  return x * mul;
}

/* An end nearest a face from outside: the second point is the other end, or where the segment
 * leaves the box's slab across one of the other two axes, whichever comes first. */
static double second_at_face(const box_feature *f, const double p[3], const double h[3],
                             const double size[3]) {
  if (f->face == -1) { /* the end is inside the box */
    return -4;
  }
  const double mul = f->kind == -3 ? 1 : -1;
  double x = 2, end[3];
  for (int k = 0; k < 3; k++) {
    end[k] = p[k] + h[k] * -mul;
  }
  for (int k = 0; k < 3; k++) {
    if (k == f->face) {
      continue;
    }
    for (int side = 1; side >= -1; side -= 2) {
      const double e = (side * size[k] - end[k]) / h[k] * mul;
      if (e > 0 && e < x) {
        x = e;
      }
    }
  }
  return x * mul;
}

/* the sphere of the capsule at x along its segment (box axes), back in world coordinates */
static int capsule_sphere_box(sim_contact *con, double margin, const double p[3],
                              const double h[3], double x, double radius, const double pos2[3],
                              const double mat2[9], const double size2[3]) {
  double local[3], world[3];
  for (int k = 0; k < 3; k++) {
    local[k] = p[k] + h[k] * x;
  }
  sim_mat3_vec(world, mat2, local);
  for (int k = 0; k < 3; k++) {
    world[k] += pos2[k];
  }
  return sim_collide_sphere_box(con, margin, world, radius, pos2, mat2, size2);
}

int sim_collide_capsule_box(sim_contact *con, double margin, const double pos1[3],
                            const double mat1[9], const double size1[2], const double pos2[3],
                            const double mat2[9], const double size2[3]) {
  double rel[3] = {pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]};
  double p[3], z[3], axis[3], h[3];
  sim_mat3t_vec(p, mat2, rel);
  axis_of(z, mat1, 2);
  sim_mat3t_vec(axis, mat2, z);
  int axisdir = 0;
  for (int k = 0; k < 3; k++) {
    h[k] = axis[k] * size1[1];
    axisdir += h[k] > 0 ? 1 << k : 0;
  }
  /* nearest feature: faces first, then edges (squared distances against a linear bound, as
   * MuJoCo starts them) */
  box_feature f = {.kind = -4, .face = -1, .corner = 0, .edge = 0, .seg = 0, .edge_at = 0};
  double best = margin + 2 * (size1[0] + size1[1] + size2[0] + size2[1] + size2[2]);
  nearest_face(&f, &best, p, h, size2);
  nearest_edge(&f, &best, p, h, size1[1], size2);
  if (f.kind == -4) {
    return 0;
  }
  const double second = f.kind < 0        ? second_at_face(&f, p, h, size2)
                        : f.kind / 3 != 1 ? second_at_corner(&f, axisdir, axis, h, size2)
                                          : second_at_edge(&f, axisdir, axis, h, size2);
  int n = capsule_sphere_box(con, margin, p, h, f.seg, size1[0], pos2, mat2, size2);
  if (second > -3) {
    n += capsule_sphere_box(con + n, margin, p, h, second + f.seg, size1[0], pos2, mat2, size2);
  }
  return n;
}

