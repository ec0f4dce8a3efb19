/* sim/collision.c: narrow phase against a plane (see collision.h for the conventions). */
#include "sim/collision.h"
#include "sim/sim.h"

#include <math.h>
#include <string.h>

#define COLLIDE_MINVAL 1e-15

static double dot3(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* v / |v| in place (v = [1 0 0] when |v| is below 1e-15); returns |v| */
static double normalize3(double v[3]) {
  double norm = sqrt(dot3(v, v));
  if (norm < COLLIDE_MINVAL) {
    v[0] = 1, v[1] = 0, v[2] = 0;
  } else {
    double inv = 1 / norm;
    v[0] *= inv, v[1] *= inv, v[2] *= inv;
  }
  return norm;
}

/* column k of a row-major rotation: the frame's k-th axis in world coordinates */
static void axis_of(double out[3], const double mat[9], int k) {
  out[0] = mat[k], out[1] = mat[3 + k], out[2] = mat[6 + k];
}

int sim_contact_frame(double f[9]) {
  if (normalize3(f) < 0.5) {
    return -1;
  }
  /* no tangent hint: world y, or world z when the normal is close to y */
  if (sqrt(dot3(f + 3, f + 3)) < 0.5) {
    f[3] = f[4] = f[5] = 0;
    if (f[1] < 0.5 && f[1] > -0.5) {
      f[4] = 1;
    } else {
      f[5] = 1;
    }
  }
  /* tangent 1 ⟂ normal (Gram–Schmidt), tangent 2 = normal × tangent 1 */
  double s = dot3(f, f + 3);
  for (int k = 0; k < 3; k++) {
    f[3 + k] -= f[k] * s;
  }
  normalize3(f + 3);
  f[6] = f[1] * f[5] - f[2] * f[4];
  f[7] = f[2] * f[3] - f[0] * f[5];
  f[8] = f[0] * f[4] - f[1] * f[3];
  return 0;
}

/* a sphere at c against the plane: distance along the normal minus the radius; the point
 * halfway into the overlap below the centre */
static int plane_sphere(sim_contact *con, double margin, const double plane_pos[3],
                        const double normal[3], const double c[3], double radius,
                        const double *tangent_hint) {
  double rel[3] = {c[0] - plane_pos[0], c[1] - plane_pos[1], c[2] - plane_pos[2]};
  double cdist = dot3(rel, normal);
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
  double dist = dot3(rel, normal);
  int n = 0;
  for (int i = 0; i < 8 && n < 4; i++) {
    double local[3] = {i & 1 ? size[0] : -size[0], i & 2 ? size[1] : -size[1],
                       i & 4 ? size[2] : -size[2]};
    double corner[3];
    for (int r = 0; r < 3; r++) {
      corner[r] = mat[3 * r] * local[0] + mat[3 * r + 1] * local[1] + mat[3 * r + 2] * local[2];
    }
    double ldist = dot3(normal, corner);
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
  double centres = sqrt(dot3(n, n));
  if (centres > margin + r1 + r2) {
    return 0;
  }
  con->dist = centres - r1 - r2;
  if (normalize3(n) < 1e-15) {
    n[0] = z1[1] * z2[2] - z1[2] * z2[1];
    n[1] = z1[2] * z2[0] - z1[0] * z2[2];
    n[2] = z1[0] * z2[1] - z1[1] * z2[0];
    normalize3(n);
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
  double x = dot3(half, rel) / dot3(half, half);
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
  const double a = dot3(h1, h1), b = -dot3(h1, h2), c = dot3(h2, h2);
  const double u = -dot3(h1, dif), v = dot3(h2, dif), det = a * c - b * b;
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

/* the contacts of plane g1 with shape g2 into the scratch list; returns their number */
static int collide_pair(sim_contact *con, const sim_model *m, const sim_data *d, int g1, int g2) {
  const double *pp = d->geom_xpos + 3 * g1, *pm = d->geom_xmat + 9 * g1;
  const double *gp = d->geom_xpos + 3 * g2, *gm = d->geom_xmat + 9 * g2;
  const double *size = m->geoms[g2].size;
  switch (m->geoms[g2].type) {
  case SIM_GEOM_SPHERE:
    return sim_collide_plane_sphere(con, 0, pp, pm, gp, size[0]);
  case SIM_GEOM_CAPSULE:
    return sim_collide_plane_capsule(con, 0, pp, pm, gp, gm, size);
  case SIM_GEOM_BOX:
    return sim_collide_plane_box(con, 0, pp, pm, gp, gm, size);
  case SIM_GEOM_PLANE:
  default:
    return 0;
  }
}

/* the sphere bounding a round shape, about its centre */
static double round_bound(const sim_geom *g) {
  return g->type == SIM_GEOM_CAPSULE ? g->size[0] + g->size[1] : g->size[0];
}

/* MuJoCo's default filter: no contacts within a body or between a parent and its child, unless
 * one of them is the world */
static int excluded(const sim_model *m, int b1, int b2) {
  if (b1 == b2) {
    return 1;
  }
  return b1 != 0 && b2 != 0 && (m->bodies[b1].parent == b2 || m->bodies[b2].parent == b1);
}

/* a pair of spheres and capsules, the sphere first as MuJoCo orders them */
static int collide_round(sim_contact *con, const sim_model *m, const sim_data *d, int g1, int g2) {
  const sim_geom *a = &m->geoms[g1], *b = &m->geoms[g2];
  const double *p1 = d->geom_xpos + 3 * g1, *m1 = d->geom_xmat + 9 * g1;
  const double *p2 = d->geom_xpos + 3 * g2, *m2 = d->geom_xmat + 9 * g2;
  if (a->type == SIM_GEOM_SPHERE && b->type == SIM_GEOM_SPHERE) {
    return sim_collide_sphere_sphere(con, 0, p1, m1, a->size[0], p2, m2, b->size[0]);
  }
  if (a->type == SIM_GEOM_SPHERE) {
    return sim_collide_sphere_capsule(con, 0, p1, m1, a->size[0], p2, m2, b->size);
  }
  return sim_collide_capsule_capsule(con, 0, p1, m1, a->size, p2, m2, b->size);
}

/* keeps the penetrating contacts of a pair (MuJoCo leaves dist >= margin − gap = 0 out) */
static void keep(const sim_model *m, sim_data *d, const sim_contact *con, int n, int g1, int g2) {
  for (int c = 0; c < n && d->ncon < m->max_contacts; c++) {
    if (!(con[c].dist < 0)) {
      continue;
    }
    int i = d->ncon++;
    d->con_dist[i] = con[c].dist;
    memcpy(d->con_pos + 3 * i, con[c].pos, sizeof con[c].pos);
    memcpy(d->con_frame + 9 * i, con[c].frame, sizeof con[c].frame);
    d->con_geom[2 * i] = g1;
    d->con_geom[2 * i + 1] = g2;
  }
}

static int is_round(const sim_geom *g) {
  return g->type == SIM_GEOM_SPHERE || g->type == SIM_GEOM_CAPSULE;
}

static double low_x(const sim_model *m, const sim_data *d, int g) {
  return d->geom_xpos[3 * g] - round_bound(&m->geoms[g]);
}

/* Broad phase: sweep and prune along x. The round geoms, ordered by the low end of their
 * bounding spheres' x extent, are kept in data.geom_sweep from step to step, so insertion sort
 * costs about one pass while the order changes little; only geoms whose x extents overlap are
 * looked at more closely. */
static int sweep_order(const sim_model *m, sim_data *d) {
  int *order = d->geom_sweep;
  if (d->nsweep == 0) { /* first use: the round geoms in model order */
    for (int k = 0; k < m->ngeom; k++) {
      if (is_round(&m->geoms[k])) {
        order[d->nsweep++] = k;
      }
    }
  }
  /* any starting order sorts to the same result (ties by index): the order is only a cache */
  const int n = d->nsweep;
  for (int i = 1; i < n; i++) {
    const int g = order[i];
    const double x = low_x(m, d, g);
    int k = i;
    while (k > 0 && (low_x(m, d, order[k - 1]) > x ||
                     (low_x(m, d, order[k - 1]) == x && order[k - 1] > g))) {
      order[k] = order[k - 1];
      k--;
    }
    order[k] = g;
  }
  return n;
}

/* every pair of round shapes whose bounding spheres overlap */
static void collide_round_pairs(const sim_model *m, sim_data *d) {
  const int n = sweep_order(m, d);
  const int *order = d->geom_sweep;
  for (int a = 0; a < n; a++) {
    const int i = order[a];
    const double high = d->geom_xpos[3 * i] + round_bound(&m->geoms[i]);
    for (int b = a + 1; b < n && low_x(m, d, order[b]) <= high; b++) {
      const int j = order[b];
      const sim_geom *gi = &m->geoms[i], *gj = &m->geoms[j];
      if (excluded(m, gi->body, gj->body)) {
        continue;
      }
      const double *pi = d->geom_xpos + 3 * i, *pj = d->geom_xpos + 3 * j;
      const double dx = pi[0] - pj[0], dy = pi[1] - pj[1], dz = pi[2] - pj[2];
      const double reach = round_bound(gi) + round_bound(gj);
      if (dx * dx + dy * dy + dz * dz > reach * reach) {
        continue;
      }
      /* the sphere first; two of a kind in model order */
      const int lo = i < j ? i : j, hi = i < j ? j : i;
      const int swap = m->geoms[lo].type == SIM_GEOM_CAPSULE && m->geoms[hi].type == SIM_GEOM_SPHERE;
      const int g1 = swap ? hi : lo, g2 = swap ? lo : hi;
      sim_contact con[SIM_COLLIDE_MAX];
      keep(m, d, con, collide_round(con, m, d, g1, g2), g1, g2);
    }
  }
}

void sim_collide(const sim_model *m, sim_data *d) {
  d->ncon = 0;
  for (int g1 = 0; g1 < m->ngeom; g1++) {
    if (m->geoms[g1].type != SIM_GEOM_PLANE) {
      continue;
    }
    for (int g2 = 0; g2 < m->ngeom; g2++) {
      if (m->geoms[g2].type == SIM_GEOM_PLANE || m->geoms[g2].body == m->geoms[g1].body) {
        continue;
      }
      sim_contact con[SIM_COLLIDE_MAX];
      keep(m, d, con, collide_pair(con, m, d, g1, g2), g1, g2);
    }
  }
  collide_round_pairs(m, d);
}
