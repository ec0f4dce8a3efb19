/* sim/tendon.c: the tendon stage: each tendon's length, its Jacobian (moment arms) and its rate,
 * as MuJoCo 2.2.2's mj_tendon computes them with a dense Jacobian.
 *
 * A fixed tendon is linear in the joints: L = Σ coef_j·q_j, J has coef_j at joint j's dof.
 * A spatial tendon is a path of sites, optionally bent around a sphere or a cylinder between two
 * sites (tendon_wrap.c) and split by pulleys: each branch after a pulley counts divided by its
 * divisor. For every straight piece a→b of the path whose ends move with different bodies, the
 * length's derivative is the unit vector along it times the ends' relative velocity:
 *   J += (b − a)/|b − a| · (J_b − J_a) / divisor,
 * with J_a, J_b the point Jacobians of a and b on their bodies (a curved piece on a geom moves
 * with the geom's body: its two ends are on the same body and add nothing). Pieces on one body
 * (a wrap's arc, two sites of the same body) are skipped, as MuJoCo skips them.
 */
#include "sim/tendon.h"

#include <math.h>
#include <string.h>

/* L = Σ coef·q and J = coef at each joint's dof */
static void fixed_tendon(const sim_model *m, sim_data *d, int t) {
  const sim_tendon *ten = &m->tendons[t];
  double *J = d->ten_J + (size_t)t * m->nv;
  for (int w = ten->wrapadr; w < ten->wrapadr + ten->wrapnum; w++) {
    const sim_joint *j = &m->joints[m->wraps[w].id];
    d->ten_length[t] += m->wraps[w].prm * d->qpos[j->qposadr];
    J[j->dofadr] = m->wraps[w].prm;
  }
}

/* J += (unit vector a→b)·(J_b − J_a)/divisor for points a on body ba and b on body bb */
static void add_segment_moment(const sim_model *m, sim_data *d, int t, const double *a, int ba,
                               const double *b, int bb, double divisor) {
  const int nv = m->nv;
  double dir[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
  const double n = sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
  if (n < 1e-15) { /* MuJoCo's normalize: a zero direction reads as x */
    dir[0] = 1, dir[1] = dir[2] = 0;
  } else {
    const double inv = 1 / n;
    dir[0] *= inv, dir[1] *= inv, dir[2] *= inv;
  }
  double *ja = d->ten_jac, *jb = ja + 3 * nv, *J = d->ten_J + (size_t)t * nv;
  sim_jac_point(m, d, ja, NULL, ba, a);
  sim_jac_point(m, d, jb, NULL, bb, b);
  for (int k = 0; k < nv; k++) {
    double s = 0;
    for (int r = 0; r < 3; r++) {
      s += (jb[r * nv + k] - ja[r * nv + k]) * dir[r];
    }
    J[k] += s * (1 / divisor);
  }
}

static double dist3(const double *a, const double *b) {
  const double x = a[0] - b[0], y = a[1] - b[1], z = a[2] - b[2];
  return sqrt(x * x + y * y + z * z);
}

/* The path from element j (a site) to the next site, through the wrapping geom between them if
 * there is one: its length into ten_length, its moments into ten_J. Returns the index of the
 * element it ended on. */
static int path_piece(const sim_model *m, sim_data *d, int t, int j, double divisor) {
  const sim_wrap *w = m->wraps + j;
  const int s0 = w[0].id;
  int s1 = w[1].id, geom = -1;
  const double *x0 = d->site_xpos + 3 * s0;
  double pts[12], wlen = -1; /* site 0, the wrap's two tangent points, site 1 */
  memcpy(pts, x0, 3 * sizeof(double));
  if (w[1].type == SIM_WRAP_SPHERE || w[1].type == SIM_WRAP_CYLINDER) {
    geom = w[1].id;
    s1 = w[2].id;
    const double *side = w[1].sidesite >= 0 ? d->site_xpos + 3 * w[1].sidesite : NULL;
    wlen = sim__wrap(pts + 3, x0, d->site_xpos + 3 * s1, d->geom_xpos + 3 * geom,
                     d->geom_xmat + 9 * geom, m->geoms[geom].size[0],
                     w[1].type == SIM_WRAP_CYLINDER, side);
  }
  int body[4] = {m->sites[s0].body, m->sites[s1].body, 0, 0};
  int npiece = 1;
  if (wlen < 0) {
    memcpy(pts + 3, d->site_xpos + 3 * s1, 3 * sizeof(double));
    d->ten_length[t] += dist3(pts, pts + 3) / divisor;
  } else {
    memcpy(pts + 9, d->site_xpos + 3 * s1, 3 * sizeof(double));
    body[1] = body[2] = m->geoms[geom].body;
    body[3] = m->sites[s1].body;
    d->ten_length[t] += (dist3(pts, pts + 3) + wlen + dist3(pts + 6, pts + 9)) / divisor;
    npiece = 3;
  }
  for (int k = 0; k < npiece; k++) {
    if (body[k] != body[k + 1]) {
      add_segment_moment(m, d, t, pts + 3 * k, body[k], pts + 3 * k + 3, body[k + 1], divisor);
    }
  }
  return j + (geom >= 0 ? 2 : 1);
}

/* a spatial tendon's path: pieces from site to site, a pulley setting the divisor of what
 * follows it */
static void spatial_tendon(const sim_model *m, sim_data *d, int t) {
  const sim_tendon *ten = &m->tendons[t];
  const int end = ten->wrapadr + ten->wrapnum - 1;
  double divisor = 1;
  for (int j = ten->wrapadr; j < end;) {
    if (m->wraps[j].type == SIM_WRAP_PULLEY) {
      divisor = m->wraps[j].prm;
      j++;
    } else if (m->wraps[j + 1].type == SIM_WRAP_PULLEY) {
      j++; /* a branch ends at a site before a pulley */
    } else {
      j = path_piece(m, d, t, j, divisor);
    }
  }
}

void sim_tendons(const sim_model *m, sim_data *d) {
  const int nv = m->nv;
  if (m->ntendon == 0) {
    return;
  }
  memset(d->ten_length, 0, (size_t)m->ntendon * sizeof(double));
  memset(d->ten_J, 0, (size_t)m->ntendon * (size_t)nv * sizeof(double));
  for (int t = 0; t < m->ntendon; t++) {
    if (m->tendons[t].spatial) {
      spatial_tendon(m, d, t);
    } else {
      fixed_tendon(m, d, t);
    }
    const double *J = d->ten_J + (size_t)t * nv;
    double v = 0;
    for (int k = 0; k < nv; k++) {
      v += J[k] * d->qvel[k];
    }
    d->ten_velocity[t] = v;
  }
}
