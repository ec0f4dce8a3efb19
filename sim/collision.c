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
      int n = collide_pair(con, m, d, g1, g2);
      /* penetrating contacts only: MuJoCo leaves dist >= margin − gap = 0 out of the rows */
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
  }
}
