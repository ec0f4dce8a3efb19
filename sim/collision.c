/* sim/collision.c: the contact stage's driver (see collision.h for the conventions): the broad
 * phase (sweep and prune), MuJoCo's contact filter, and the dispatch of each pair to its narrow
 * phase (collision_primitive.c, collision_box.c, collision_convex.c), which never call back. */
#include "sim/collision.h"
#include "sim/sim.h"

#include <string.h>

/* geom g as a convex shape at its current pose */
static sim_shape shape_of(const sim_model *m, const sim_data *d, int g) {
  const sim_geom *geom = &m->geoms[g];
  sim_shape s = {.type = (int)geom->type, .pos = d->geom_xpos + 3 * g,
                 .mat = d->geom_xmat + 9 * g, .size = geom->size, .center = geom->center};
  if (geom->type == SIM_GEOM_MESH) {
    s.vert = m->hull_vert + 3 * geom->hull_adr;
    s.nvert = geom->hull_nvert;
    s.graph = m->hull_graph + geom->graph_adr;
  }
  return s;
}

/* a pair's margin: the larger of its geoms' (MuJoCo's) */
static double pair_margin(const sim_model *m, int g1, int g2) {
  return m->geoms[g1].margin > m->geoms[g2].margin ? m->geoms[g1].margin : m->geoms[g2].margin;
}

/* the contacts of plane g1 with shape g2 into the scratch list; returns their number */
static int collide_pair(sim_contact *con, const sim_model *m, const sim_data *d, int g1, int g2) {
  const double *pp = d->geom_xpos + 3 * g1, *pm = d->geom_xmat + 9 * g1;
  const double *gp = d->geom_xpos + 3 * g2, *gm = d->geom_xmat + 9 * g2;
  const double *size = m->geoms[g2].size, mg = pair_margin(m, g1, g2);
  switch (m->geoms[g2].type) {
  case SIM_GEOM_SPHERE:
    return sim_collide_plane_sphere(con, mg, pp, pm, gp, size[0]);
  case SIM_GEOM_CAPSULE:
    return sim_collide_plane_capsule(con, mg, pp, pm, gp, gm, size);
  case SIM_GEOM_BOX:
    return sim_collide_plane_box(con, mg, pp, pm, gp, gm, size);
  case SIM_GEOM_CYLINDER:
    return sim_collide_plane_cylinder(con, mg, pp, pm, gp, gm, size);
  case SIM_GEOM_MESH: {
    const sim_shape mesh = shape_of(m, d, g2);
    return sim_collide_plane_mesh(con, mg, pp, pm, &mesh, m->geoms[g2].hull_rbound);
  }
  case SIM_GEOM_PLANE:
  default:
    return 0;
  }
}

/* the sphere bounding a shape, about its origin (MuJoCo's rbound, computed at load) */
static double bound_radius(const sim_geom *g) {
  return g->rbound;
}

/* an excluded body pair (sorted, smaller body first): binary search */
static int excluded_pair(const sim_model *m, int b1, int b2) {
  const int lo = b1 < b2 ? b1 : b2, hi = b1 < b2 ? b2 : b1;
  int first = 0, last = m->nexclude - 1;
  while (first <= last) {
    const int mid = (first + last) / 2, *e = m->exclude + 2 * mid;
    if (e[0] == lo && e[1] == hi) {
      return 1;
    }
    if (e[0] < lo || (e[0] == lo && e[1] < hi)) {
      first = mid + 1;
    } else {
      last = mid - 1;
    }
  }
  return 0;
}

/* MuJoCo's filter: contact groups, then no contacts within a weld body or between a weld body
 * and its parent's unless one of them is the world, then the excluded body pairs */
int sim_collision_filtered(const sim_model *m, int g1, int g2) {
  const sim_geom *a = &m->geoms[g1], *b = &m->geoms[g2];
  if (!(a->contype & b->conaffinity) && !(b->contype & a->conaffinity)) {
    return 1;
  }
  const int w1 = m->bodies[a->body].weld, w2 = m->bodies[b->body].weld;
  if (w1 == w2) {
    return 1;
  }
  const int p1 = m->bodies[m->bodies[w1].parent < 0 ? 0 : m->bodies[w1].parent].weld;
  const int p2 = m->bodies[m->bodies[w2].parent < 0 ? 0 : m->bodies[w2].parent].weld;
  if (w1 != 0 && w2 != 0 && (w1 == p2 || w2 == p1)) {
    return 1;
  }
  return m->nexclude > 0 && excluded_pair(m, a->body, b->body);
}

/* box–box contacts at the same position once, the last of each (MuJoCo's driver) */
static int drop_repeats(sim_contact *con, int n) {
  int kept = 0;
  for (int i = 0; i < n; i++) {
    int repeated = 0;
    for (int j = i + 1; j < n && !repeated; j++) {
      repeated = con[i].pos[0] == con[j].pos[0] && con[i].pos[1] == con[j].pos[1] &&
                 con[i].pos[2] == con[j].pos[2];
    }
    if (!repeated) {
      con[kept++] = con[i];
    }
  }
  return kept;
}

/* a pair of moving shapes, ordered as MuJoCo orders them (sim_geom_order); a cylinder or a mesh
 * goes through MPR */
static int collide_moving(sim_contact *con, const sim_model *m, const sim_data *d, int g1,
                          int g2) {
  const sim_geom *a = &m->geoms[g1], *b = &m->geoms[g2];
  if (a->type >= SIM_GEOM_CYLINDER || b->type >= SIM_GEOM_CYLINDER) {
    const sim_shape s1 = shape_of(m, d, g1), s2 = shape_of(m, d, g2);
    return sim_collide_convex(con, pair_margin(m, g1, g2), &s1, &s2);
  }
  const double *p1 = d->geom_xpos + 3 * g1, *m1 = d->geom_xmat + 9 * g1;
  const double *p2 = d->geom_xpos + 3 * g2, *m2 = d->geom_xmat + 9 * g2;
  const double mg = pair_margin(m, g1, g2);
  if (a->type == SIM_GEOM_BOX && b->type == SIM_GEOM_BOX) {
    return drop_repeats(con, sim_collide_box_box(con, mg, p1, m1, a->size, p2, m2, b->size));
  }
  if (b->type == SIM_GEOM_BOX) {
    return a->type == SIM_GEOM_SPHERE    ? sim_collide_sphere_box(con, mg, p1, a->size[0], p2, m2, b->size)
           : a->type == SIM_GEOM_CAPSULE ? sim_collide_capsule_box(con, mg, p1, m1, a->size, p2, m2, b->size)
                                         : 0;
  }
  if (a->type == SIM_GEOM_SPHERE && b->type == SIM_GEOM_SPHERE) {
    return sim_collide_sphere_sphere(con, mg, p1, m1, a->size[0], p2, m2, b->size[0]);
  }
  if (a->type == SIM_GEOM_SPHERE) {
    return sim_collide_sphere_capsule(con, mg, p1, m1, a->size[0], p2, m2, b->size);
  }
  return sim_collide_capsule_capsule(con, mg, p1, m1, a->size, p2, m2, b->size);
}

int sim_collide_geom_pair(const sim_model *m, const sim_data *d, int g1, int g2,
                          sim_contact *con) {
  if (m->geoms[g1].type == SIM_GEOM_PLANE || m->geoms[g2].type == SIM_GEOM_PLANE) {
    return 0;
  }
  const int lo = g1 < g2 ? g1 : g2, hi = g1 < g2 ? g2 : g1;
  const int swap = sim_geom_order(m->geoms[lo].type) > sim_geom_order(m->geoms[hi].type);
  return collide_moving(con, m, d, swap ? hi : lo, swap ? lo : hi);
}

/* keeps the contacts of a pair within its margin (MuJoCo's); those at margin − gap or farther
 * are in the gap: kept, without rows (con_efc −1, constraint.c) */
static void keep(const sim_model *m, sim_data *d, const sim_contact *con, int n, int g1, int g2) {
  const double mg = pair_margin(m, g1, g2);
  const double gap = m->geoms[g1].gap > m->geoms[g2].gap ? m->geoms[g1].gap : m->geoms[g2].gap;
  for (int c = 0; c < n && d->ncon < m->max_contacts; c++) {
    if (!(con[c].dist < mg)) {
      continue;
    }
    int i = d->ncon++;
    d->con_margin[i] = mg - gap;
    d->con_dist[i] = con[c].dist;
    memcpy(d->con_pos + 3 * i, con[c].pos, sizeof con[c].pos);
    memcpy(d->con_frame + 9 * i, con[c].frame, sizeof con[c].frame);
    d->con_geom[2 * i] = g1;
    d->con_geom[2 * i + 1] = g2;
  }
}

int sim_geom_order(int type) {
  static const int order[] = {0, 1, 2, 4, 3, 5}; /* plane sphere capsule cylinder box mesh */
  return type >= 0 && type <= SIM_GEOM_MESH ? order[type] : type;
}

static int is_moving(const sim_geom *g) {
  return g->type != SIM_GEOM_PLANE;
}

/* the bounding sphere grown by the geom's margin (a pair's is the larger of the two) */
static double low_x(const sim_model *m, const sim_data *d, int g) {
  return d->geom_xpos[3 * g] - (bound_radius(&m->geoms[g]) + m->geoms[g].margin);
}

/* Broad phase: sweep and prune along x. The geoms other than planes, ordered by the low end of their
 * bounding spheres' x extent, are kept in data.geom_sweep from step to step, so insertion sort
 * costs about one pass while the order changes little; only geoms whose x extents overlap are
 * looked at more closely. */
static int sweep_order(const sim_model *m, sim_data *d) {
  int *order = d->geom_sweep;
  if (d->nsweep == 0) { /* first use: the geoms other than planes in model order */
    for (int k = 0; k < m->ngeom; k++) {
      if (is_moving(&m->geoms[k])) {
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

/* every pair of shapes other than planes whose bounding spheres overlap */
static void collide_moving_pairs(const sim_model *m, sim_data *d) {
  const int n = sweep_order(m, d);
  const int *order = d->geom_sweep;
  for (int a = 0; a < n; a++) {
    const int i = order[a];
    const double high = d->geom_xpos[3 * i] + bound_radius(&m->geoms[i]) + m->geoms[i].margin;
    for (int b = a + 1; b < n && low_x(m, d, order[b]) <= high; b++) {
      const int j = order[b];
      const sim_geom *gi = &m->geoms[i], *gj = &m->geoms[j];
      if (sim_collision_filtered(m, i, j)) {
        continue;
      }
      const double *pi = d->geom_xpos + 3 * i, *pj = d->geom_xpos + 3 * j;
      const double dx = pi[0] - pj[0], dy = pi[1] - pj[1], dz = pi[2] - pj[2];
      const double reach = bound_radius(gi) + bound_radius(gj) + pair_margin(m, i, j);
      if (dx * dx + dy * dy + dz * dz > reach * reach) {
        continue;
      }
      /* by type (sim_geom_order); two of a kind in model order */
      const int lo = i < j ? i : j, hi = i < j ? j : i;
      const int swap = sim_geom_order(m->geoms[lo].type) > sim_geom_order(m->geoms[hi].type);
      const int g1 = swap ? hi : lo, g2 = swap ? lo : hi;
      sim_contact con[SIM_COLLIDE_MAX];
      keep(m, d, con, collide_moving(con, m, d, g1, g2), g1, g2);
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
      if (m->geoms[g2].type == SIM_GEOM_PLANE || sim_collision_filtered(m, g1, g2)) {
        continue;
      }
      sim_contact con[SIM_COLLIDE_MAX];
      keep(m, d, con, collide_pair(con, m, d, g1, g2), g1, g2);
    }
  }
  collide_moving_pairs(m, d);
}
