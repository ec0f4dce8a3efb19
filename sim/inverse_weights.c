/* sim/inverse_weights.c: the load-time constants of the constraint rows' regularisation, as
 * MuJoCo's mj_setConst: each dof's (M⁻¹)ₖₖ, each body's J·M⁻¹·Jᵀ at its centre of mass, and the
 * mean of diag(M), at qpos0.
 *
 * M is built, factored and solved here in the tree's own sparse layout (row k holds the dof and
 * its ancestors along dof_parent, MuJoCo's layout of qM), and each solve runs along the one path
 * from a dof to the root, since every right-hand side here is nonzero only there and only the
 * path's entries of the answer are wanted. The work is then the sum over dofs of depth² and the
 * memory the sum of depths: linear in the number of bodies for a tree of bounded depth. (With
 * the step's dense nv×nv factor and full solves, a model of 10 000 bodies took 1.6 GB and
 * 28 s to load.) */
#include "sim/inverse_weights.h"

#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/spatial.h"

typedef struct tree_m {
  double *H;    /* row k at adr[k]: entry s is M[k][the s-th ancestor of k] (s = 0: k itself) */
  size_t *adr;
  int *depth;   /* entries of row k: 1 + the number of k's ancestors */
  double *path; /* one right-hand side along a path, and room for a Jacobian row beside it */
  int *dofs;    /* that path's dofs, deepest first */
} tree_m;

static void tree_free(tree_m *t) {
  free(t->H), free(t->adr), free(t->depth), free(t->path), free(t->dofs);
}

static int tree_alloc(tree_m *t, const sim_model *m) {
  const int nv = m->nv;
  memset(t, 0, sizeof *t);
  t->adr = malloc(((size_t)nv + 1) * sizeof *t->adr);
  t->depth = malloc(((size_t)nv + 1) * sizeof *t->depth);
  if (!t->adr || !t->depth) {
    return -1;
  }
  size_t total = 0;
  int deepest = 1;
  for (int k = 0; k < nv; k++) { /* a dof's parent comes before it */
    const int p = m->dof_parent[k];
    t->depth[k] = 1 + (p >= 0 ? t->depth[p] : 0);
    t->adr[k] = total;
    total += (size_t)t->depth[k];
    deepest = t->depth[k] > deepest ? t->depth[k] : deepest;
  }
  t->H = malloc((total + 1) * sizeof *t->H);
  t->path = malloc(2 * ((size_t)deepest + 1) * sizeof *t->path);
  t->dofs = malloc(((size_t)deepest + 1) * sizeof *t->dofs);
  return t->H && t->path && t->dofs ? 0 : -1;
}

/* CRBA into the tree layout: composite inertias summed up the tree (d->cIA), then for each dof
 * col of body i, F = IC_i·S_col and M[col][row] = S_row·F for col and each of its ancestors */
static void tree_crba(const sim_model *m, sim_data *d, tree_m *t) {
  memcpy(d->cIA, d->cinert, (size_t)m->nbody * 36 * sizeof(double));
  for (int i = m->nbody - 1; i > 0; i--) {
    const int p = m->bodies[i].parent;
    for (int k = 0; p > 0 && k < 36; k++) {
      d->cIA[36 * p + k] += d->cIA[36 * i + k];
    }
  }
  for (int col = 0; col < m->nv; col++) {
    double F[6], *row = t->H + t->adr[col];
    sim_mat6_vec(F, d->cIA + 36 * m->dof_body[col], d->cdof + 6 * col);
    row[0] = sim_dot6(d->cdof + 6 * col, F) + m->joints[m->dof_joint[col]].armature;
    int s = 1;
    for (int r = m->dof_parent[col]; r >= 0; r = m->dof_parent[r], s++) {
      row[s] = sim_dot6(d->cdof + 6 * r, F);
    }
  }
}

/* M = Lᵀ·D·L in place, as sim_factor_m: the s-th ancestor's row is updated by the entries of
 * row k beyond s (the ancestors of that ancestor) */
static void tree_factor(const sim_model *m, tree_m *t) {
  for (int k = m->nv - 1; k >= 0; k--) {
    double *Hk = t->H + t->adr[k];
    int i = m->dof_parent[k];
    for (int s = 1; s < t->depth[k]; s++, i = m->dof_parent[i]) {
      double *Hi = t->H + t->adr[i];
      const double a = Hk[s] / Hk[0];
      for (int u = 0; u < t->depth[i]; u++) {
        Hi[u] -= a * Hk[s + u];
      }
      Hk[s] = a;
    }
  }
}

/* the path from dof k to the root into t->dofs; its length */
static int tree_path(const sim_model *m, tree_m *t, int k) {
  int n = 0;
  for (; k >= 0; k = m->dof_parent[k]) {
    t->dofs[n++] = k;
  }
  return n;
}

/* t->path ← (M⁻¹·x) on the path of n dofs, for x = t->path (zero off the path): Lᵀ·y = x from
 * the deepest dof up, then D, then L·z = y from the root down, each touching only the path */
static void tree_solve_path(const tree_m *t, int n) {
  double *x = t->path;
  for (int u = 0; u < n; u++) {
    const double *H = t->H + t->adr[t->dofs[u]];
    for (int s = 1; u + s < n; s++) {
      x[u + s] -= H[s] * x[u];
    }
  }
  for (int u = 0; u < n; u++) {
    x[u] /= t->H[t->adr[t->dofs[u]]];
  }
  for (int u = n - 1; u >= 0; u--) {
    const double *H = t->H + t->adr[t->dofs[u]];
    for (int s = 1; u + s < n; s++) {
      x[u] -= H[s] * x[u + s];
    }
  }
}

/* the last dof that moves body b (its own, or its nearest moving ancestor's); -1 if none */
static int last_moving_dof(const sim_model *m, int b) {
  for (; b > 0; b = m->bodies[b].parent) {
    if (m->bodies[b].dofnum > 0) {
      return m->bodies[b].dofadr + m->bodies[b].dofnum - 1;
    }
  }
  return -1;
}

/* body_invweight0: the mean diagonal blocks of J·M⁻¹·Jᵀ for the Jacobian J = [jacp; jacr] of
 * the body's centre of mass, whose nonzeros are the path's: a dof's [ω; v0] about the origin
 * moves the point p at v0 + ω × p */
static void body_weights(sim_model *m, const sim_data *d, tree_m *t, int b) {
  const int last = last_moving_dof(m, b);
  const int n = last >= 0 ? tree_path(m, t, last) : 0;
  const double *p = d->xipos + 3 * b;
  double diag[6] = {0};
  for (int r = 0; r < 6 && n > 0; r++) {
    double *J = t->path + n; /* the row itself, beside the solve's copy */
    for (int u = 0; u < n; u++) {
      const double *w = d->cdof + 6 * t->dofs[u], *v0 = w + 3;
      const double v[3] = {v0[0] + w[1] * p[2] - w[2] * p[1], v0[1] + w[2] * p[0] - w[0] * p[2],
                           v0[2] + w[0] * p[1] - w[1] * p[0]};
      J[u] = r < 3 ? v[r] : w[r - 3];
    }
    memcpy(t->path, J, (size_t)n * sizeof *J);
    tree_solve_path(t, n);
    for (int u = 0; u < n; u++) {
      diag[r] += J[u] * t->path[u];
    }
  }
  m->bodies[b].invweight0[0] = (diag[0] + diag[1] + diag[2]) / 3;
  m->bodies[b].invweight0[1] = (diag[3] + diag[4] + diag[5]) / 3;
}

/* qpos0 as MuJoCo's: 0 for hinges and slides, the identity for a ball, the placement for a free
 * joint (MuJoCo computes these constants there) */
void sim__mujoco_qpos0(const sim_model *m, sim_data *d) {
  memset(d->qpos, 0, (size_t)m->nq * sizeof(double));
  for (int j = 0; j < m->njnt; j++) {
    const sim_joint *jt = &m->joints[j];
    const sim_body *b = &m->bodies[jt->body];
    if (jt->type == SIM_JOINT_BALL) {
      d->qpos[jt->qposadr] = 1;
    } else if (jt->type == SIM_JOINT_FREE) {
      memcpy(d->qpos + jt->qposadr, b->pos, 3 * sizeof(double));
      memcpy(d->qpos + jt->qposadr + 3, b->quat, 4 * sizeof(double));
    }
  }
  memset(d->qvel, 0, (size_t)m->nv * sizeof(double));
}

/* the scratch data at MuJoCo's qpos0 (mujoco 1) or at the description's initial pose
 * (m->qpos0) with its kinematics, and M there in the tree layout; NULL when out of memory */
static sim_data *tree_at(sim_model *m, tree_m *t, int mujoco) {
  const int nefc_max = m->nefc_max;
  m->nefc_max = 0; /* the scratch data needs no rows */
  sim_data *d = sim__data_alloc(m); /* every value 0 (no stage runs on it but the kinematics) */
  m->nefc_max = nefc_max;
  if (!d || tree_alloc(t, m)) {
    if (d) {
      tree_free(t);
    }
    sim_data_free(d);
    return NULL;
  }
  if (mujoco) {
    sim__mujoco_qpos0(m, d);
  } else {
    memcpy(d->qpos, m->qpos0, (size_t)m->nq * sizeof(double));
  }
  sim_kinematics(m, d);
  tree_crba(m, d, t);
  return d;
}

/* the descendant dof c of dof k whose motion is closest to k's: the largest
 * M[c][k]² / (M[c][c]·M[k][k]), in t before it is factored */
static int closest_below(const sim_model *m, const tree_m *t, int k) {
  int best = -1;
  double most = -1;
  for (int c = k + 1; c < m->nv; c++) { /* descendants come after */
    int a = m->dof_parent[c];
    for (int u = 1; a >= 0 && a >= k; u++, a = m->dof_parent[a]) {
      if (a == k) {
        const double x = t->H[t->adr[c] + (size_t)u];
        const double r = x * x / (t->H[t->adr[c]] * t->H[t->adr[k]]);
        if (r > most) {
          most = r, best = c;
        }
        break;
      }
    }
  }
  return best;
}

int sim__singular_dof(sim_model *m, int *no_inertia, int *partner) {
  tree_m t;
  sim_data *d = tree_at(m, &t, 0);
  if (!d) {
    return -2;
  }
  double largest = 0;
  for (int k = 0; k < m->nv; k++) {
    largest = t.H[t.adr[k]] > largest ? t.H[t.adr[k]] : largest;
  }
  int bad = -1;
  *no_inertia = 0;
  for (int k = 0; k < m->nv && bad < 0; k++) { /* a dof that moves (next to) nothing */
    if (!(t.H[t.adr[k]] > 1e-16 * largest)) {
      bad = k, *no_inertia = 1;
    }
  }
  if (bad < 0) {
    double *own = malloc(((size_t)m->nv + 1) * sizeof *own);
    if (!own) {
      tree_free(&t);
      sim_data_free(d);
      return -2;
    }
    for (int k = 0; k < m->nv; k++) {
      own[k] = t.H[t.adr[k]];
    }
    tree_factor(m, &t);
    for (int k = m->nv - 1; k >= 0; k--) { /* the factor runs from the leaves: the deepest */
      if (!(t.H[t.adr[k]] > 1e-13 * own[k])) { /* pivot of a dependent motion: rounding only */
        bad = k;
      }
    }
    free(own);
  }
  *partner = -1;
  if (bad >= 0 && !*no_inertia) {
    tree_crba(m, d, &t); /* M again, unfactored */
    *partner = closest_below(m, &t, bad);
  }
  tree_free(&t);
  sim_data_free(d);
  return bad;
}

int sim__inverse_weights(sim_model *m) {
  tree_m t;
  sim_data *d = tree_at(m, &t, 1);
  if (!d) {
    return -1;
  }
  double trace = 0;
  for (int k = 0; k < m->nv; k++) {
    trace += t.H[t.adr[k]];
  }
  m->meaninertia = m->nv > 0 ? trace / m->nv : 1.0;
  tree_factor(m, &t);
  for (int k = 0; k < m->nv; k++) { /* (M⁻¹)ₖₖ: the solve of e_k along k's path */
    const int n = tree_path(m, &t, k);
    memset(t.path, 0, (size_t)n * sizeof *t.path);
    t.path[0] = 1;
    tree_solve_path(&t, n);
    m->joints[m->dof_joint[k]].invweight0 = t.path[0];
  }
  for (int b = 1; b < m->nbody; b++) {
    body_weights(m, d, &t, b);
  }
  tree_free(&t);
  sim_data_free(d);
  return 0;
}
