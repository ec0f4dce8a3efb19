/* sim/collision_convex.c: cylinders and convex meshes in the contact stage (see collision.h).
 *
 * A plane against a cylinder or a mesh has its own construction (up to 4 or 3 contacts, MuJoCo
 * 2.2.2's rules). Every other pair with a cylinder or a mesh goes through one general routine:
 * libccd's Minkowski Portal Refinement on the shapes' support functions (the farthest point of
 * a shape in a direction), one contact per pair, as MuJoCo 2.2.2's mjc_Convex does with the same
 * library and settings, so that contacts agree with its own to rounding. MPR allocates nothing. */
#include "sim/collision.h"
#include "sim/spatial.h"
#include "sim/model.h"

#include <ccd/ccd.h>
#include <math.h>
#include <string.h>

#define CONVEX_MINVAL 1e-15
#define CONVEX_MPR_TOLERANCE 1e-6 /* MuJoCo's opt.mpr_tolerance default */
#define CONVEX_MPR_ITERATIONS 50  /* MuJoCo's opt.mpr_iterations default */
#define PLANE_MESH_MAX 3          /* contacts of a plane with a mesh */
#define PLANE_MESH_SPREAD 0.3     /* extra contacts at least this·rbound from the first */

static double sign(double x) {
  return x < 0 ? -1 : x > 0 ? 1 : 0;
}

/* the hull vertex farthest along dir (geom frame): hill-climbing over the hull graph from its
 * first vertex, which on a convex hull ends at the farthest one */
static int hull_support(const sim_shape *s, const double dir[3]) {
  const int *edgeadr = s->graph, *edges = s->graph + s->nvert;
  int best = 0;
  double top = sim_dot3(dir, s->vert);
  for (int change = 1; change;) {
    change = 0;
    for (int e = edgeadr[best]; edges[e] >= 0; e++) {
      const double v = sim_dot3(dir, s->vert + 3 * edges[e]);
      if (v > top) {
        top = v;
        best = edges[e];
        change = 1;
      }
    }
  }
  return best;
}

/* the farthest point of a shape along dir (world; MPR hands unit directions) */
void sim_shape_support(double out[3], const sim_shape *s, const double dir_world[3]) {
  double dir[3], res[3];
  const double *size = s->size;
  sim_mat3t_vec(dir, s->mat, dir_world);
  switch (s->type) {
  case SIM_GEOM_SPHERE:
    for (int k = 0; k < 3; k++) {
      res[k] = dir[k] * size[0];
    }
    break;
  case SIM_GEOM_CAPSULE:
    for (int k = 0; k < 3; k++) {
      res[k] = dir[k] * size[0];
    }
    res[2] += sign(dir[2]) * size[1];
    break;
  case SIM_GEOM_CYLINDER: { /* the rim point in dir's xy direction, the cap on dir's side */
    const double xy = sqrt(dir[0] * dir[0] + dir[1] * dir[1]);
    res[0] = xy > CONVEX_MINVAL ? dir[0] / xy * size[0] : 0;
    res[1] = xy > CONVEX_MINVAL ? dir[1] / xy * size[0] : 0;
    res[2] = sign(dir[2]) * size[1];
    break;
  }
  case SIM_GEOM_BOX:
    for (int k = 0; k < 3; k++) {
      res[k] = sign(dir[k]) * size[k];
    }
    break;
  case SIM_GEOM_MESH:
    memcpy(res, s->vert + 3 * hull_support(s, dir), sizeof res);
    break;
  default:
    res[0] = res[1] = res[2] = 0;
    break;
  }
  for (int k = 0; k < 3; k++) {
    res[k] += dir[k] * s->inflate;
  }
  sim_mat3_vec(out, s->mat, res);
  for (int k = 0; k < 3; k++) {
    out[k] += s->pos[k];
  }
}

/* libccd's callbacks: the objects are sim_shape */
static void ccd_support(const void *obj, const ccd_vec3_t *dir, ccd_vec3_t *vec) {
  sim_shape_support(vec->v, obj, dir->v);
}

/* an interior point: the geom's origin, or a mesh hull's centroid */
static void ccd_center(const void *obj, ccd_vec3_t *center) {
  const sim_shape *s = obj;
  if (s->type == SIM_GEOM_MESH) {
    sim_mat3_vec(center->v, s->mat, s->center);
    for (int k = 0; k < 3; k++) {
      center->v[k] += s->pos[k];
    }
  } else {
    memcpy(center->v, s->pos, sizeof center->v);
  }
}

/* The outward normal of a round shape (sphere, capsule, or a cylinder's side) at the contact
 * point, world axes; 0 when the shape has none there. MuJoCo's mjc_fixNormal: MPR's normal is
 * only as good as its tolerance, a round shape's is exact. */
static int round_normal(double out[3], const sim_shape *s, const double pos[3]) {
  double rel[3] = {pos[0] - s->pos[0], pos[1] - s->pos[1], pos[2] - s->pos[2]}, p[3], n[3];
  sim_mat3t_vec(p, s->mat, rel);
  switch (s->type) {
  case SIM_GEOM_SPHERE:
    memcpy(n, p, sizeof n);
    break;
  case SIM_GEOM_CAPSULE: /* from the nearest point of the segment */
    n[0] = p[0], n[1] = p[1];
    n[2] = p[2] < -s->size[1] ? p[2] + s->size[1] : p[2] > s->size[1] ? p[2] - s->size[1] : 0;
    break;
  case SIM_GEOM_CYLINDER: { /* the side only: well away from the caps, nearer the side */
    if (fabs(p[2]) > 0.95 * s->size[1]) {
      return 0;
    }
    const double to_cap = fabs(s->size[1] - fabs(p[2]));
    const double to_side = fabs(s->size[0] - sqrt(p[0] * p[0] + p[1] * p[1]));
    if (to_cap < 0.25 * to_side) {
      return 0;
    }
    n[0] = p[0], n[1] = p[1], n[2] = 0;
    break;
  }
  default:
    return 0;
  }
  sim_normalize3(n);
  sim_mat3_vec(out, s->mat, n);
  return 1;
}

/* MPR's normal replaced by the round shapes' own: one of them, or their average */
static void fix_normal(double normal[3], const sim_shape *a, const sim_shape *b,
                       const double pos[3]) {
  double na[3], nb[3];
  const int ha = round_normal(na, a, pos), hb = round_normal(nb, b, pos);
  for (int k = 0; k < 3; k++) { /* nb points out of b, towards a */
    normal[k] = ha && hb ? na[k] - nb[k] : ha ? na[k] : hb ? -nb[k] : normal[k];
  }
  if (ha && hb) {
    sim_normalize3(normal);
  }
}

int sim_collide_convex(sim_contact *con, double margin, const sim_shape *a_in,
                       const sim_shape *b_in) {
  sim_shape shapes[2] = {*a_in, *b_in};
  const sim_shape *a = &shapes[0], *b = &shapes[1];
  shapes[0].inflate = shapes[1].inflate = 0.5 * margin;
  ccd_t ccd;
  CCD_INIT(&ccd);
  ccd.support1 = ccd_support;
  ccd.support2 = ccd_support;
  ccd.center1 = ccd_center;
  ccd.center2 = ccd_center;
  ccd.max_iterations = CONVEX_MPR_ITERATIONS;
  ccd.mpr_tolerance = CONVEX_MPR_TOLERANCE;
  ccd_real_t depth;
  ccd_vec3_t dir, pos;
  if (ccdMPRPenetration(a, b, &ccd, &depth, &dir, &pos) != 0 ||
      (dir.v[0] == 0 && dir.v[1] == 0 && dir.v[2] == 0)) { /* apart, or no normal */
    return 0;
  }
  con->dist = margin - depth;
  memcpy(con->pos, pos.v, sizeof con->pos);
  memcpy(con->frame, dir.v, 3 * sizeof *con->frame);
  fix_normal(con->frame, a, b, con->pos);
  con->frame[3] = con->frame[4] = con->frame[5] = 0;
  sim_contact_frame(con->frame);
  return 1;
}

/* one contact of a plane (normal n through p0) at the point x of a shape */
static void plane_point(sim_contact *con, const double p0[3], const double n[3],
                        const double x[3]) {
  const double rel[3] = {x[0] - p0[0], x[1] - p0[1], x[2] - p0[2]};
  con->dist = sim_dot3(n, rel);
  for (int k = 0; k < 3; k++) {
    con->pos[k] = x[k] + n[k] * (-0.5 * con->dist);
    con->frame[k] = n[k];
    con->frame[3 + k] = 0;
  }
  sim_contact_frame(con->frame);
}

/* a plane contact at dist, at x moved halfway back into the overlap along n */
static void cylinder_point(sim_contact *con, double dist, const double x[3], const double n[3]) {
  con->dist = dist;
  for (int k = 0; k < 3; k++) {
    con->pos[k] = x[k] + n[k] * (-dist * 0.5);
    con->frame[k] = n[k];
    con->frame[3 + k] = 0;
  }
  sim_contact_frame(con->frame);
}

/* A cylinder against a plane (MuJoCo 2.2.2's construction, its order of operations kept so
 * that results agree to the bit): the rim point of the lower cap nearest the plane; the same
 * point on the other cap; and, when the lower cap reaches the plane halfway across, the two rim
 * points of that cap 120° either side of the first. */
int sim_collide_plane_cylinder(sim_contact *con, double margin, const double plane_pos[3],
                               const double plane_mat[9], const double pos[3],
                               const double mat[9], const double size[2]) {
  const double n[3] = {plane_mat[2], plane_mat[5], plane_mat[8]};
  double axis[3] = {mat[2], mat[5], mat[8]}, rim[3], x[3];
  double along = sim_dot3(n, axis);
  if (along > 0) { /* make the axis point towards the plane */
    for (int k = 0; k < 3; k++) {
      axis[k] = -axis[k];
    }
    along = -along;
  }
  const double rel[3] = {pos[0] - plane_pos[0], pos[1] - plane_pos[1], pos[2] - plane_pos[2]};
  const double centre = sim_dot3(rel, n);
  /* towards the plane within the cap's plane: −n less its part along the axis */
  for (int k = 0; k < 3; k++) {
    rim[k] = axis[k] * along - n[k];
  }
  const double len = sqrt(sim_dot3(rim, rim));
  const double scl = len >= CONVEX_MINVAL ? size[0] / len : 0;
  for (int k = 0; k < 3; k++) { /* a cap parallel to the plane: the cylinder's x axis */
    rim[k] = len >= CONVEX_MINVAL ? rim[k] * scl : mat[3 * k] * size[0];
  }
  const double down = sim_dot3(rim, n);
  for (int k = 0; k < 3; k++) {
    axis[k] *= size[1];
  }
  along *= size[1];
  if (centre + along + down > margin) {
    return 0;
  }
  int cnt = 0;
  for (int side = 1; side >= -1; side -= 2) {
    const double dist = side > 0 ? centre + along + down : centre - along + down;
    if (dist <= margin) {
      for (int k = 0; k < 3; k++) {
        x[k] = side > 0 ? pos[k] + rim[k] + axis[k] : pos[k] + rim[k] - axis[k];
      }
      cylinder_point(&con[cnt++], dist, x, n);
    }
  }
  const double half_down = -down * 0.5;
  if (centre + along + half_down <= margin) {
    double side[3] = {rim[1] * axis[2] - rim[2] * axis[1], rim[2] * axis[0] - rim[0] * axis[2],
                      rim[0] * axis[1] - rim[1] * axis[0]};
    sim_normalize3(side);
    for (int k = 0; k < 3; k++) {
      side[k] *= size[0] * sqrt(3.0) / 2;
    }
    for (int s = 1; s >= -1; s -= 2) {
      for (int k = 0; k < 3; k++) {
        x[k] = (s > 0 ? pos[k] + side[k] : pos[k] - side[k]) + axis[k];
        x[k] += rim[k] * -0.5;
      }
      cylinder_point(&con[cnt++], centre + along + half_down, x, n);
    }
  }
  return cnt;
}

/* A mesh against a plane (MuJoCo 2.2.2's mjc_PlaneConvex): the hull vertex deepest below the
 * plane, then up to two of its hull neighbours within margin of the plane that lie at least
 * 0.3·rbound from it (rbound: the hull's radius about its centroid). */
int sim_collide_plane_mesh(sim_contact *con, double margin, const double plane_pos[3],
                           const double plane_mat[9], const sim_shape *mesh, double rbound) {
  const double n[3] = {plane_mat[2], plane_mat[5], plane_mat[8]};
  const double down[3] = {-n[0], -n[1], -n[2]};
  double local[3], x[3];
  sim_mat3t_vec(local, mesh->mat, down);
  const int best = hull_support(mesh, local);
  sim_mat3_vec(x, mesh->mat, mesh->vert + 3 * best);
  for (int k = 0; k < 3; k++) {
    x[k] += mesh->pos[k];
  }
  plane_point(con, plane_pos, n, x);
  if (con->dist > margin) {
    return 0;
  }
  const double rel[3] = {mesh->pos[0] - plane_pos[0], mesh->pos[1] - plane_pos[1],
                         mesh->pos[2] - plane_pos[2]};
  const double threshold = sim_dot3(n, rel) - margin;
  const int *edges = mesh->graph + mesh->nvert;
  int cnt = 1;
  for (int e = mesh->graph[best]; edges[e] >= 0 && cnt < PLANE_MESH_MAX; e++) {
    const double *v = mesh->vert + 3 * edges[e];
    if (!(sim_dot3(local, v) > threshold)) {
      continue;
    }
    sim_mat3_vec(x, mesh->mat, v);
    double gap[3];
    for (int k = 0; k < 3; k++) {
      x[k] += mesh->pos[k];
      gap[k] = x[k] - con->pos[k];
    }
    if (sqrt(sim_dot3(gap, gap)) < PLANE_MESH_SPREAD * rbound) {
      continue;
    }
    plane_point(&con[cnt++], plane_pos, n, x);
  }
  return cnt;
}
