/* sim/collision_box.c: a box against a box, as MuJoCo 2.2.2 builds the contacts (its
 * mjc_BoxBox), so that a gripper's fingers on a cube, a box stacked on a box and a box on a
 * block touch as they do in MuJoCo (see collision.h for the conventions).
 *
 * The construction, in three steps:
 *  1. Separating axes: the overlap of the two boxes along each of the 15 candidate axes (the
 *     three face normals of each box, then the nine cross products of an edge of box 1 with an
 *     edge of box 2). Any overlap below −margin separates them; otherwise the axis of least
 *     overlap decides the kind of contact (face axes first; an edge axis must be smaller by a
 *     relative 1e-12 to win).
 *  2. A face axis: that box's face is the reference face, turned (a signed permutation of the
 *     axes) so that its outward normal is +z and it lies at z = 0; the other box's face or edge
 *     nearest it (the incident feature: its lowest corner and the edges from it that lie within
 *     60° of the face plane) is clipped against the reference rectangle. Contacts are the
 *     crossings of the incident edges with the rectangle's sides, the rectangle's corners
 *     inside the incident face, and the incident corners inside the rectangle (the lowest
 *     corner always), each within margin of the face; a contact sits halfway between the face
 *     and the incident point and reports half the incident point's height as its distance
 *     (MuJoCo 2.2.2's figure, kept so that forces match its own).
 *  3. An edge axis: the face of box 1 beside its nearest edge, the one whose normal is least
 *     aligned with box 2's edge, is the reference; box 2's face holding its nearest edge is
 *     projected onto the reference plane along the separating axis and clipped the same way,
 *     each contact halfway between the two boxes with the distance between them.
 * Every contact of a pair has the same normal, from box 1 into box 2. Positions may repeat
 * (clipping finds a corner twice): the contact stage keeps one of each (collision.c), as
 * MuJoCo's driver does. Nothing here allocates. */
#include "sim/collision.h"
#include "sim/spatial.h"

#include <math.h>
#include <string.h>

#define BOX_MINVAL 1e-15

/* out = a + s·b */
static void add_scaled(double out[3], const double a[3], const double b[3], double s) {
  for (int k = 0; k < 3; k++) {
    out[k] = a[k] + s * b[k];
  }
}

/* --- the turn that puts a face on z = 0 --------------------------------------------------------
 * Face f of a box is axis f % 3, on the positive side for f < 3. The turn T is a signed
 * permutation with T·(outward normal) = +z: (T·v)[r] = sign[r]·v[perm[r]]. */
typedef struct face_turn {
  int perm[3];
  double sign[3];
} face_turn;

static face_turn turn_of(int face) {
  static const face_turn turns[6] = {
      {{2, 1, 0}, {-1, 1, 1}}, {{0, 2, 1}, {1, -1, 1}}, {{0, 1, 2}, {1, 1, 1}},
      {{2, 1, 0}, {1, 1, -1}}, {{0, 2, 1}, {1, 1, -1}}, {{0, 1, 2}, {-1, 1, -1}},
  };
  return turns[face];
}

static void turn_vec(double out[3], const face_turn *t, const double v[3]) {
  for (int r = 0; r < 3; r++) {
    out[r] = t->sign[r] * v[t->perm[r]];
  }
}

/* rows of T·A for a row-major 3×3 A */
static void turn_rows(double out[9], const face_turn *t, const double A[9]) {
  for (int r = 0; r < 3; r++) {
    for (int c = 0; c < 3; c++) {
      out[3 * r + c] = t->sign[r] * A[3 * t->perm[r] + c];
    }
  }
}

/* a point or direction x of the turned frame of a box at (pos, mat) in the world:
 * pos + mat·Tᵀ·x (pos may be NULL for a direction) */
static void turned_to_world(double out[3], const face_turn *t, const double *pos,
                            const double mat[9], const double x[3]) {
  double v[3];
  for (int r = 0; r < 3; r++) {
    v[t->perm[r]] = t->sign[r] * x[r];
  }
  for (int k = 0; k < 3; k++) {
    out[k] = (pos ? pos[k] : 0.0) + mat[3 * k] * v[0] + mat[3 * k + 1] * v[1] + mat[3 * k + 2] * v[2];
  }
}

/* --- step 1: the axis of least overlap ------------------------------------------------------- */

typedef struct box_axes {
  double rot[9];    /* rot[3i + j] = (axis i of box 1) · (axis j of box 2) */
  double rotabs[9]; /* |rot| */
  double pos21[3];  /* centre of box 2 in box 1's axes, from box 1's centre */
  double pos12[3];  /* centre of box 1 in box 2's axes, from box 2's centre */
} box_axes;

typedef struct box_axis {
  int code;          /* 0..5: face of box 1 (axis + 3 on the negative side); 6..11: face of box
                        2 likewise; 12 + 3i + j: edge i of box 1 across edge j of box 2 */
  double overlap;
  double normal[3];  /* edge axes: the unit axis in box 1's axes */
  int corner1;       /* edge axes: coordinate signs (bit k: +) of box 1's nearest edge */
  int corner2;       /* ... and of box 2's nearest edge, in box 2's axes */
  int flipped;       /* edge axes: box 2 lies on the negative side of normal */
} box_axis;

/* the overlaps along the face normals; 0 when one of them separates the boxes */
static int face_axes(box_axis *best, const box_axes *a, const double s1[3], const double s2[3],
                     double margin) {
  for (int i = 0; i < 3; i++) {
    double reach2 = 0, reach1 = 0; /* box 2 projected on axis i of box 1, box 1 on axis i of 2 */
    for (int k = 0; k < 3; k++) {
      reach2 += a->rotabs[3 * i + k] * s2[k];
      reach1 += a->rotabs[3 * k + i] * s1[k];
    }
    const double o1 = -fabs(a->pos21[i]) + s1[i] + reach2;
    const double o2 = -fabs(a->pos12[i]) + s2[i] + reach1;
    if (o1 < -margin || o2 < -margin) {
      return 0;
    }
    if (o1 < best->overlap) {
      best->overlap = o1;
      best->code = i + 3 * (a->pos21[i] < 0);
    }
    if (o2 < best->overlap) {
      best->overlap = o2;
      best->code = i + 3 * (a->pos12[i] < 0) + 6;
    }
  }
  return 1;
}

/* the overlaps along the nine edge–edge axes n = e1ᵢ × e2ⱼ (parallel edges give none); 0 when
 * one of them separates the boxes */
static int edge_axes(box_axis *best, const box_axes *a, const double s1[3], const double s2[3],
                     double margin) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      const double b[3] = {a->rot[j], a->rot[3 + j], a->rot[6 + j]}; /* edge j of box 2 */
      /* eᵢ × b: (0, −b_z, b_y), (b_z, 0, −b_x), (−b_y, b_x, 0) */
      double n[3] = {0, 0, 0};
      const int u = (i + 1) % 3, w = (i + 2) % 3;
      n[u] = -b[w];
      n[w] = b[u];
      const double len = sqrt(sim_dot3(n, n));
      if (len < BOX_MINVAL) {
        continue;
      }
      for (int k = 0; k < 3; k++) {
        n[k] *= 1 / len;
      }
      const double centre = sim_dot3(a->pos21, n);
      /* box 2's edge k ≠ j projects on n as |e1ᵢ·(e2ⱼ × e2ₖ)| = |rot[i][3 − j − k]| / len */
      double overlap = 0;
      for (int k = 0; k < 3; k++) {
        overlap += k != i ? s1[k] * fabs(n[k]) : 0.0;
      }
      for (int k = 0; k < 3; k++) {
        overlap += k != j ? s2[k] * a->rotabs[3 * i + 3 - k - j] / len : 0.0;
      }
      overlap -= fabs(centre);
      if (overlap < -margin) {
        return 0;
      }
      if (!(overlap < best->overlap * (1 - 1e-12))) {
        continue;
      }
      best->overlap = overlap;
      best->code = 12 + 3 * i + j;
      best->flipped = centre < 0;
      memcpy(best->normal, n, sizeof n);
      /* the nearest edges: box 1's corner signs follow n towards box 2; box 2's oppose it, where
       * e2ₖ·n has the sign of rot[i][3 − j − k], flipped unless k follows j cyclically */
      best->corner1 = best->corner2 = 0;
      for (int k = 0; k < 3; k++) {
        if (k != i && ((n[k] > 0) ^ best->flipped)) {
          best->corner1 |= 1 << k;
        }
        if (k != j && ((a->rot[3 * i + 3 - k - j] > 0) ^ best->flipped ^ ((k - j + 3) % 3 == 1))) {
          best->corner2 |= 1 << k;
        }
      }
    }
  }
  return 1;
}

/* --- clipping against the reference rectangle |x| <= half[0], |y| <= half[1] ------------------ */

/* where the segment start + t·dir (t in [0, 1]) crosses the side x_q = side·half[q] within the
 * rectangle: returns 1 with t and the other coordinate */
static int crossing(double *t, double *other, const double start[3], const double dir[3], int q,
                    int side, const double half[3]) {
  if (!(fabs(dir[q]) > BOX_MINVAL)) {
    return 0;
  }
  *t = (side * half[q] - start[q]) * (1 / dir[q]);
  if (*t < 0 || *t > 1) {
    return 0;
  }
  *other = start[1 - q] + dir[1 - q] * *t;
  return !(fabs(*other) > half[1 - q]);
}

/* the determinant of the x, y parts of e1 and e2 */
static double det2(const double e1[3], const double e2[3]) {
  return e1[0] * e2[1] - e2[0] * e1[1];
}

/* (u, v) with start + u·e1 + v·e2 = corner in x and y, given det = det2(e1, e2) */
static void face_coords(double *u, double *v, const double start[3], const double e1[3],
                        const double e2[3], double det, double cx, double cy) {
  const double x = cx - start[0], y = cy - start[1];
  *u = (x * e2[1] - y * e2[0]) * (1 / det);
  *v = (y * e1[0] - x * e1[1]) * (1 / det);
}

/* corner c of the rectangle: x sign from bit 1, y sign from bit 0 */
static double corner_x(const double half[3], int c) {
  return c / 2 ? half[0] : -half[0];
}

static double corner_y(const double half[3], int c) {
  return c % 2 ? half[1] : -half[1];
}

/* --- step 2: a face of one box against the other --------------------------------------------- */

typedef struct box_pose {
  const double *pos, *mat, *size;
} box_pose;

static int face_contacts(sim_contact *con, const box_axes *a, const box_pose *b1,
                         const box_pose *b2, int face, int on_box2, double margin) {
  const face_turn t = turn_of(face);
  const box_pose *ref = on_box2 ? b2 : b1, *inc = on_box2 ? b1 : b2;
  /* the incident box's axes (columns of r) and centre in the turned reference frame */
  double r[9], p[3], half[3];
  if (on_box2) {
    double rott[9];
    for (int i = 0; i < 3; i++) {
      for (int j = 0; j < 3; j++) {
        rott[3 * i + j] = a->rot[3 * j + i];
      }
    }
    turn_rows(r, &t, rott);
    turn_vec(p, &t, a->pos12);
  } else {
    turn_rows(r, &t, a->rot);
    turn_vec(p, &t, a->pos21);
  }
  turn_vec(half, &t, ref->size);
  for (int k = 0; k < 3; k++) {
    half[k] = fabs(half[k]);
  }
  const double *s = inc->size, hz = half[2];
  p[2] -= hz; /* the reference face on z = 0 */
  double axis[3][3];
  for (int i = 0; i < 3; i++) {
    axis[i][0] = r[i], axis[i][1] = r[3 + i], axis[i][2] = r[6 + i];
  }
  /* the incident box's lowest corner, and its edges within 60° of the face plane */
  int low = 0;
  for (int i = 0; i < 3; i++) {
    low |= (r[6 + i] < 0) << i;
  }
  double pts[6][3] = {{0}};
  memcpy(pts[0], p, sizeof p);
  for (int i = 0; i < 3; i++) {
    add_scaled(pts[0], pts[0], axis[i], s[i] * ((low >> i & 1) ? 1 : -1));
  }
  int m = 1;
  for (int i = 0; i < 3; i++) {
    if (fabs(r[6 + i]) < 0.5) {
      for (int k = 0; k < 3; k++) {
        pts[m][k] = axis[i][k] * (s[i] * ((low >> i & 1) ? -2 : 2));
      }
      m++;
    }
  }
  /* the incident face's other corners, and its edges as (start, direction) */
  for (int k = 0; k < 3; k++) {
    pts[3][k] = pts[0][k] + pts[1][k];
    pts[4][k] = pts[0][k] + pts[2][k];
    pts[5][k] = pts[3][k] + pts[2][k];
  }
  const double *lines[4][2] = {{pts[0], pts[1]}, {pts[0], pts[2]}, {pts[3], pts[2]}, {pts[4], pts[1]}};
  const int nlines = m == 1 ? 0 : m == 2 ? 1 : 4;
  double pt[24][3];
  int n = 0;
  for (int i = 0; i < nlines; i++) {
    for (int q = 0; q < 2; q++) {
      for (int side = -1; side <= 1; side += 2) {
        double tc, other;
        if (crossing(&tc, &other, lines[i][0], lines[i][1], q, side, half)) {
          add_scaled(pt[n++], lines[i][0], lines[i][1], tc);
        }
      }
    }
  }
  if (m > 2) { /* the rectangle's corners strictly inside the incident face */
    for (int c = 0; c < 4; c++) {
      const double cx = corner_x(half, c), cy = corner_y(half, c);
      double u, v;
      face_coords(&u, &v, pts[0], pts[1], pts[2], det2(pts[1], pts[2]), cx, cy);
      if (u <= 0 || v <= 0 || u >= 1 || v >= 1) {
        continue;
      }
      pt[n][0] = cx, pt[n][1] = cy;
      pt[n][2] = pts[0][2] + u * pts[1][2] + v * pts[2][2];
      n++;
    }
  }
  for (int c = 0; c < 1 << (m - 1); c++) { /* incident corners strictly inside (the lowest always) */
    const double *q = pts[c == 0 ? 0 : c + 2];
    if (c && (q[0] <= -half[0] || q[0] >= half[0] || q[1] <= -half[1] || q[1] >= half[1])) {
      continue;
    }
    memcpy(pt[n++], q, 3 * sizeof(double));
  }
  /* those within margin of the face, halfway up, in the world */
  double normal[3];
  const double up[3] = {0, 0, 1};
  turned_to_world(normal, &t, NULL, ref->mat, up);
  int kept = 0;
  for (int i = 0; i < n; i++) {
    if (pt[i][2] > margin) {
      continue;
    }
    sim_contact *c = &con[kept++];
    const double local[3] = {pt[i][0], pt[i][1], pt[i][2] * 0.5 + hz};
    c->dist = pt[i][2] * 0.5;
    turned_to_world(c->pos, &t, ref->pos, ref->mat, local);
    for (int k = 0; k < 3; k++) {
      c->frame[k] = on_box2 ? -normal[k] : normal[k];
      c->frame[3 + k] = 0;
    }
  }
  return kept;
}

/* --- step 3: an edge across an edge ------------------------------------------------------------ */

/* the two axes of a box other than axis k, the first the one more aligned with `along` (|dots|) */
static void other_axes(int *first, int *second, int k, const double dots[3]) {
  *first = k == 1 ? 0 : 1;
  *second = k == 2 ? 0 : 2;
  if (dots[*first] < dots[*second]) {
    *first = *second;
    *second = 3 - k - *first;
  }
}

static int edge_contacts(sim_contact *con, const box_axes *a, const box_pose *b1,
                         const box_pose *b2, const box_axis *ax, double margin) {
  const int i1 = (ax->code - 12) / 3, j2 = (ax->code - 12) % 3;
  /* box 2's side axes ordered by alignment with edge i1 of box 1; box 1's with edge j2 of box 2 */
  const double along1[3] = {a->rotabs[3 * i1], a->rotabs[3 * i1 + 1], a->rotabs[3 * i1 + 2]};
  const double along2[3] = {a->rotabs[j2], a->rotabs[3 + j2], a->rotabs[6 + j2]};
  int ax1, ax2, pax1, pax2;
  other_axes(&ax1, &ax2, j2, along1);
  other_axes(&pax1, &pax2, i1, along2);
  (void)pax1;
  /* the reference: box 1's face across pax2 on its nearest edge's side */
  const int face = (ax->corner1 >> pax2 & 1) ? pax2 : pax2 + 3;
  const face_turn t = turn_of(face);
  double p[3], rn[3], r[9], half[3];
  turn_vec(p, &t, a->pos21);
  turn_vec(rn, &t, ax->normal);
  turn_rows(r, &t, a->rot);
  turn_vec(half, &t, b1->size);
  for (int k = 0; k < 3; k++) {
    half[k] = fabs(half[k]);
  }
  const double hz = half[2], *s2 = b2->size;
  p[2] -= hz;
  double axis[3][3];
  for (int i = 0; i < 3; i++) {
    axis[i][0] = r[i], axis[i][1] = r[3 + i], axis[i][2] = r[6 + i];
  }
  /* box 2's face holding its nearest edge: corners 0, 1 on that edge (+ and − along j2), 2, 3
   * across the face along ax1 */
  const double sg1 = (ax->corner2 >> ax1 & 1) ? 1 : -1, sg2 = (ax->corner2 >> ax2 & 1) ? 1 : -1;
  double pu[4][3];
  for (int c = 0; c < 4; c++) {
    const double across = c < 2 ? sg1 : -sg1, end = c % 2 ? -1 : 1;
    add_scaled(pu[c], p, axis[ax1], s2[ax1] * across);
    add_scaled(pu[c], pu[c], axis[ax2], s2[ax2] * sg2);
    add_scaled(pu[c], pu[c], axis[j2], end * s2[j2]);
  }
  if (fabs(rn[2]) < BOX_MINVAL) {
    return 0;
  }
  const double innorm = (1 / rn[2]) * (ax->flipped ? -1 : 1);
  /* projected along the axis onto z = 0 */
  double proj[4][3];
  for (int c = 0; c < 4; c++) {
    add_scaled(proj[c], pu[c], rn, -pu[c][2] * (1 / rn[2]));
  }
  double e1[3], e2[3], u1[3], u2[3], s01[3], s02[3], us01[3], us02[3];
  for (int k = 0; k < 3; k++) {
    e1[k] = proj[1][k] - proj[0][k], e2[k] = proj[2][k] - proj[0][k];
    u1[k] = pu[1][k] - pu[0][k], u2[k] = pu[2][k] - pu[0][k];
    s01[k] = proj[0][k] + e1[k], s02[k] = proj[0][k] + e2[k];
    us01[k] = pu[0][k] + u1[k], us02[k] = pu[0][k] + u2[k];
  }
  /* the face's edges: projected (start, direction), then unprojected (start, direction) */
  const double *lines[4][4] = {{proj[0], e1, pu[0], u1}, {proj[0], e2, pu[0], u2},
                               {s01, e2, us01, u2}, {s02, e1, us02, u1}};
  double pt[24][3], depth[24];
  int n = 0;
  for (int i = 0; i < 4; i++) {
    for (int q = 0; q < 2; q++) {
      for (int side = -1; side <= 1; side += 2) {
        double tc, other;
        if (!crossing(&tc, &other, lines[i][0], lines[i][1], q, side, half)) {
          continue;
        }
        const double *us = lines[i][2], *ud = lines[i][3];
        if ((us[2] + ud[2] * tc) * innorm > margin) {
          continue;
        }
        /* halfway between box 2's edge point and the reference side */
        for (int k = 0; k < 3; k++) {
          pt[n][k] = us[k] * 0.5 + ud[k] * (0.5 * tc);
        }
        pt[n][q] += 0.5 * side * half[q];
        pt[n][1 - q] += 0.5 * other;
        depth[n] = pt[n][2] * innorm * 2;
        n++;
      }
    }
  }
  const int nl = n;
  /* MuJoCo 2.2.2 keeps the squared gap of a corner in the determinant's variable, so every
   * corner after the first that reaches the gap is placed with that figure as its determinant;
   * kept, so that the contacts are its own */
  double det = det2(e1, e2);
  for (int c = 0; c < 4; c++) { /* the rectangle's corners over box 2's face */
    const double cx = corner_x(half, c), cy = corner_y(half, c);
    double u, v;
    face_coords(&u, &v, proj[0], e1, e2, det, cx, cy);
    const int uout = u < 0 || u > 1, vout = v < 0 || v > 1;
    if (nl == 0 ? (uout && vout) : (uout || vout)) {
      continue;
    }
    u = fmin(1, fmax(0, u));
    v = fmin(1, fmax(0, v));
    double on[3], gap[3];
    for (int k = 0; k < 3; k++) {
      on[k] = pu[0][k] * (1 - u - v) + pu[1][k] * u + pu[2][k] * v;
    }
    const double corner[3] = {cx, cy, 0};
    for (int k = 0; k < 3; k++) {
      gap[k] = corner[k] - on[k];
    }
    const double g2 = sim_dot3(gap, gap);
    det = g2;
    if (on[2] > 0 && g2 > margin * margin) {
      continue;
    }
    for (int k = 0; k < 3; k++) {
      pt[n][k] = (corner[k] + on[k]) * 0.5;
    }
    depth[n++] = sqrt(g2) * (on[2] < 0 ? -1 : 1);
  }
  const int nf = n;
  for (int c = 0; c < 4; c++) { /* box 2's corners over the rectangle */
    const double x = proj[c][0], y = proj[c][1];
    const int xout = x < -half[0] || x > half[0], yout = y < -half[1] || y > half[1];
    if (nl == 0 ? (nf != 0 && xout && yout) : (xout || yout)) {
      continue;
    }
    double g2 = 0, mid[3] = {x * 0.5, y * 0.5, 0};
    for (int k = 0; k < 2; k++) {
      const double out = proj[c][k] < -half[k] ? proj[c][k] + half[k]
                         : proj[c][k] > half[k] ? proj[c][k] - half[k]
                                                : 0.0;
      g2 += out * out;
      if (proj[c][k] < -half[k] || proj[c][k] > half[k]) {
        mid[k] = (proj[c][k] < 0 ? -half[k] : half[k]) * 0.5;
      }
    }
    g2 += pu[c][2] * innorm * pu[c][2] * innorm;
    if (pu[c][2] > 0 && g2 > margin * margin) {
      continue;
    }
    add_scaled(pt[n], mid, pu[c], 0.5);
    depth[n++] = sqrt(g2) * (pu[c][2] < 0 ? -1 : 1);
  }
  double normal[3];
  turned_to_world(normal, &t, NULL, b1->mat, rn);
  for (int i = 0; i < n; i++) {
    const double local[3] = {pt[i][0], pt[i][1], pt[i][2] + hz};
    con[i].dist = depth[i];
    turned_to_world(con[i].pos, &t, b1->pos, b1->mat, local);
    for (int k = 0; k < 3; k++) {
      con[i].frame[k] = ax->flipped ? -normal[k] : normal[k];
      con[i].frame[3 + k] = 0;
    }
  }
  return n;
}

/* --- the pair --------------------------------------------------------------------------------- */

int sim_collide_box_box(sim_contact *con, double margin, const double pos1[3],
                        const double mat1[9], const double size1[3], const double pos2[3],
                        const double mat2[9], const double size2[3]) {
  box_axes a;
  const double d21[3] = {pos2[0] - pos1[0], pos2[1] - pos1[1], pos2[2] - pos1[2]};
  const double d12[3] = {-d21[0], -d21[1], -d21[2]};
  sim_mat3t_vec(a.pos21, mat1, d21);
  sim_mat3t_vec(a.pos12, mat2, d12);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      a.rot[3 * i + j] = mat1[i] * mat2[j] + mat1[3 + i] * mat2[3 + j] + mat1[6 + i] * mat2[6 + j];
      a.rotabs[3 * i + j] = fabs(a.rot[3 * i + j]);
    }
  }
  box_axis best = {.code = -1, .overlap = margin};
  for (int i = 0; i < 3; i++) {
    best.overlap += size1[i] * 3 + size2[i] * 3;
  }
  if (!face_axes(&best, &a, size1, size2, margin) || !edge_axes(&best, &a, size1, size2, margin) ||
      best.code < 0) {
    return 0;
  }
  const box_pose b1 = {pos1, mat1, size1}, b2 = {pos2, mat2, size2};
  int n = best.code < 12 ? face_contacts(con, &a, &b1, &b2, best.code % 6, best.code / 6, margin)
                         : edge_contacts(con, &a, &b1, &b2, &best, margin);
  for (int i = 0; i < n; i++) {
    sim_contact_frame(con[i].frame);
  }
  return n;
}
