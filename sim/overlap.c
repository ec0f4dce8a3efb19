/* sim/overlap.c: pairs of a robot's own bodies that already touch at its initial pose
 * (sim_overlaps_at_rest, sim.h).
 *
 * CAD exports of arms (Debian's KUKA KR5 and Barrett WAM URDFs among them) often have link
 * meshes that overlap where two links meet, or further along the chain. MuJoCo's filter drops a
 * body and its parent, not a link and its grandparent, so such a pair pushes itself apart from
 * the first step with forces of 1e6 N and fights for ever. Found here at load so that the user
 * hears of it (and `achilles convert --exclude-overlapping` can write an exclude for each pair,
 * as MoveIt's allowed-collision matrix does for such arms). Runs once, at load: it allocates. */
#include "sim/collision.h"
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

/* the body just below the world on b's chain: the root of its tree */
static int root_of(const sim_model *m, int b) {
  while (b > 0 && m->bodies[b].parent > 0) {
    b = m->bodies[b].parent;
  }
  return b;
}

/* the entry of body pair (b1, b2) in out (added when new and there is room); -1 when full */
static int entry(sim_overlap *out, int *n, int max, int b1, int b2) {
  for (int k = 0; k < *n; k++) {
    if (out[k].body1 == b1 && out[k].body2 == b2) {
      return k;
    }
  }
  if (*n >= max) {
    return -1;
  }
  memset(&out[*n], 0, sizeof out[*n]);
  out[*n].body1 = b1, out[*n].body2 = b2;
  return (*n)++;
}

int sim_overlaps_at_rest(const sim_model *m, sim_overlap *out, int max) {
  sim_data *d = sim_data_new(m); /* kinematics at qpos0 */
  if (!d) {
    return -1;
  }
  int n = 0;
  for (int i = 0; i < m->ngeom; i++) {
    for (int j = i + 1; j < m->ngeom; j++) {
      const int bi = m->geoms[i].body, bj = m->geoms[j].body;
      if (bi == 0 || bj == 0 || root_of(m, bi) != root_of(m, bj) ||
          sim_collision_filtered(m, i, j)) {
        continue;
      }
      sim_contact con[SIM_COLLIDE_MAX];
      const int nc = sim_collide_geom_pair(m, d, i, j, con);
      double depth = 0;
      for (int c = 0; c < nc; c++) {
        depth = con[c].dist < -depth ? -con[c].dist : depth;
      }
      if (!(depth > 0)) {
        continue;
      }
      const int b1 = bi < bj ? bi : bj, b2 = bi < bj ? bj : bi;
      const int k = entry(out, &n, max, b1, b2);
      if (k >= 0 && depth > out[k].depth) {
        out[k].depth = depth;
        out[k].geom1 = bi < bj ? i : j;
        out[k].geom2 = bi < bj ? j : i;
      }
    }
  }
  sim_data_free(d);
  return n;
}
