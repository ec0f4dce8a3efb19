/* sim/crba.c: joint-space inertia matrix by the Composite Rigid Body Algorithm. In world axes
 * a composite inertia is a plain sum of the inertias of the subtree. */
#include "sim/sim.h"
#include "sim/spatial.h"

#include <string.h>

static void composite_inertias(const sim_model *m, sim_data *d) {
  memcpy(d->cIA, d->cinert, (size_t)m->nbody * 36 * sizeof(double));
  for (int i = m->nbody - 1; i > 0; i--) {
    int p = m->bodies[i].parent;
    for (int k = 0; p > 0 && k < 36; k++) {
      d->cIA[36 * p + k] += d->cIA[36 * i + k];
    }
  }
}

/* Columns of body i's dofs: F = IC_i·S_col projected on every dof that moves body i, which are
 * the dof's ancestors along dof_parent (earlier dofs of the body, then the ancestor bodies'). */
static void fill_columns(const sim_model *m, sim_data *d, int i) {
  int nv = m->nv;
  const sim_body *b = &m->bodies[i];
  for (int col = b->dofadr; col < b->dofadr + b->dofnum; col++) {
    double F[6];
    sim_mat6_vec(F, d->cIA + 36 * i, d->cdof + 6 * col);
    d->qM[col * nv + col] = sim_dot6(d->cdof + 6 * col, F) + m->joints[m->dof_joint[col]].armature;
    for (int row = m->dof_parent[col]; row >= 0; row = m->dof_parent[row]) {
      double value = sim_dot6(d->cdof + 6 * row, F);
      d->qM[row * nv + col] = value;
      d->qM[col * nv + row] = value;
    }
  }
}

void sim_crba(const sim_model *m, sim_data *d) {
  memset(d->qM, 0, (size_t)m->nv * (size_t)m->nv * sizeof(double));
  composite_inertias(m, d);
  for (int i = 1; i < m->nbody; i++) {
    if (m->bodies[i].dofnum > 0) {
      fill_columns(m, d, i);
    }
  }
}

/* M = Lᵀ·D·L with L unit lower-triangular and nonzero only where the tree couples two dofs
 * (row k, columns of k's ancestors): Featherstone's LTDL factorization, O(nv·depth²), no
 * fill-in. In place on H, which holds a matrix with M's tree sparsity (M itself, or M plus a
 * diagonal: the derivatives' M + h·B). */
void sim_factor_ltdl(const sim_model *m, double *H) {
  int nv = m->nv;
  const int *parent = m->dof_parent;
  for (int k = nv - 1; k >= 0; k--) {
    for (int i = parent[k]; i >= 0; i = parent[i]) {
      double a = H[k * nv + i] / H[k * nv + k];
      for (int j = i; j >= 0; j = parent[j]) {
        H[i * nv + j] -= a * H[k * nv + j];
      }
      H[k * nv + i] = a;
    }
  }
}

/* x ← H⁻¹·x from the factorization: Lᵀ·y = x, then D·z = y, then L·x = z. */
void sim_solve_ltdl(const sim_model *m, const double *H, double *x) {
  int nv = m->nv;
  const int *parent = m->dof_parent;
  for (int k = nv - 1; k >= 0; k--) {
    for (int i = parent[k]; i >= 0; i = parent[i]) {
      x[i] -= H[k * nv + i] * x[k];
    }
  }
  for (int k = 0; k < nv; k++) {
    x[k] /= H[k * nv + k];
  }
  for (int k = 0; k < nv; k++) {
    for (int i = parent[k]; i >= 0; i = parent[i]) {
      x[k] -= H[k * nv + i] * x[i];
    }
  }
}

/* y −= a·x over n entries (two distinct rows: restrict lets the loop vectorize) */
static inline void row_axpy(double *restrict y, const double *restrict x, double a, int n) {
  for (int c = 0; c < n; c++) {
    y[c] -= a * x[c];
  }
}

/* the next up to four ancestors of a dof along the path from i (into anc), their count */
static inline int next_ancestors(const int *parent, int i, int anc[4]) {
  int count = 0;
  for (; i >= 0 && count < 4; i = parent[i]) {
    anc[count++] = i;
  }
  return count;
}

/* rows anc[0..3] −= H[k, anc]·row k: four rows per pass over the columns, each entry updated as
 * by four row_axpy calls in turn (the same bits) */
static inline void scatter4(double *X, const double *H, int nv, int k, const int anc[4], int n) {
  const double *restrict x = X + (size_t)k * n;
  double *restrict y0 = X + (size_t)anc[0] * n, *restrict y1 = X + (size_t)anc[1] * n;
  double *restrict y2 = X + (size_t)anc[2] * n, *restrict y3 = X + (size_t)anc[3] * n;
  const double a0 = H[k * nv + anc[0]], a1 = H[k * nv + anc[1]];
  const double a2 = H[k * nv + anc[2]], a3 = H[k * nv + anc[3]];
  for (int c = 0; c < n; c++) {
    const double v = x[c];
    y0[c] -= a0 * v, y1[c] -= a1 * v, y2[c] -= a2 * v, y3[c] -= a3 * v;
  }
}

/* row k −= Σ H[k, anc]·rows anc[0..3], subtracted in that order (the same bits as row_axpy) */
static inline void gather4(double *X, const double *H, int nv, int k, const int anc[4], int n) {
  double *restrict y = X + (size_t)k * n;
  const double *restrict x0 = X + (size_t)anc[0] * n, *restrict x1 = X + (size_t)anc[1] * n;
  const double *restrict x2 = X + (size_t)anc[2] * n, *restrict x3 = X + (size_t)anc[3] * n;
  const double a0 = H[k * nv + anc[0]], a1 = H[k * nv + anc[1]];
  const double a2 = H[k * nv + anc[2]], a3 = H[k * nv + anc[3]];
  for (int c = 0; c < n; c++) {
    double t = y[c];
    t -= a0 * x0[c];
    t -= a1 * x1[c];
    t -= a2 * x2[c];
    t -= a3 * x3[c];
    y[c] = t;
  }
}

/* the same for two rows (the rest of a dof's ancestors after the fours) */
static inline void scatter2(double *X, const double *H, int nv, int k, const int anc[2], int n) {
  const double *restrict x = X + (size_t)k * n;
  double *restrict y0 = X + (size_t)anc[0] * n, *restrict y1 = X + (size_t)anc[1] * n;
  const double a0 = H[k * nv + anc[0]], a1 = H[k * nv + anc[1]];
  for (int c = 0; c < n; c++) {
    const double v = x[c];
    y0[c] -= a0 * v, y1[c] -= a1 * v;
  }
}

static inline void gather2(double *X, const double *H, int nv, int k, const int anc[2], int n) {
  double *restrict y = X + (size_t)k * n;
  const double *restrict x0 = X + (size_t)anc[0] * n, *restrict x1 = X + (size_t)anc[1] * n;
  const double a0 = H[k * nv + anc[0]], a1 = H[k * nv + anc[1]];
  for (int c = 0; c < n; c++) {
    double t = y[c];
    t -= a0 * x0[c];
    t -= a1 * x1[c];
    y[c] = t;
  }
}

/* X ← H⁻¹·X for n right-hand sides at once, X row-major nv × n (row k = dof k): the same three
 * sweeps with each step a row operation over the n contiguous columns, which vectorizes (the
 * derivatives' M⁻¹·G, sim/deriv); a dof's ancestors are taken four at a time (the rest two,
 * then one), so that one pass over the columns does four rows' updates. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
/* also built for AVX2, picked at load time: the same operations in the same order (no FMA), so
 * the same bits, on registers twice as wide (the derivatives spend a third of their time here) */
__attribute__((target_clones("avx2", "default")))
#endif
void sim_solve_ltdl_rows(const sim_model *m, const double *H, double *X, int n) {
  int nv = m->nv, anc[4];
  const int *parent = m->dof_parent;
  for (int k = nv - 1; k >= 0; k--) {
    for (int i = parent[k]; i >= 0;) {
      int count = next_ancestors(parent, i, anc);
      if (count == 4) {
        scatter4(X, H, nv, k, anc, n);
      } else {
        int a = 0;
        if (count >= 2) {
          scatter2(X, H, nv, k, anc, n);
          a = 2;
        }
        for (; a < count; a++) {
          row_axpy(X + (size_t)anc[a] * n, X + (size_t)k * n, H[k * nv + anc[a]], n);
        }
      }
      i = parent[anc[count - 1]];
    }
  }
  for (int k = 0; k < nv; k++) {
    double *xk = X + (size_t)k * n, inv = 1.0 / H[k * nv + k];
    for (int c = 0; c < n; c++) {
      xk[c] *= inv;
    }
  }
  for (int k = 0; k < nv; k++) {
    for (int i = parent[k]; i >= 0;) {
      int count = next_ancestors(parent, i, anc);
      if (count == 4) {
        gather4(X, H, nv, k, anc, n);
      } else {
        int a = 0;
        if (count >= 2) {
          gather2(X, H, nv, k, anc, n);
          a = 2;
        }
        for (; a < count; a++) {
          row_axpy(X + (size_t)k * n, X + (size_t)anc[a] * n, H[k * nv + anc[a]], n);
        }
      }
      i = parent[anc[count - 1]];
    }
  }
}

/* qLD from qM, leaving qM intact */
void sim_factor_m(const sim_model *m, sim_data *d) {
  memcpy(d->qLD, d->qM, (size_t)m->nv * (size_t)m->nv * sizeof(double));
  sim_factor_ltdl(m, d->qLD);
}

void sim_solve_m(const sim_model *m, const sim_data *d, double *x) {
  sim_solve_ltdl(m, d->qLD, x);
}

/* out = M·x using only the tree's nonzeros of qM (a dof and its ancestors). */
void sim_mul_m(const sim_model *m, const sim_data *d, double *out, const double *x) {
  int nv = m->nv;
  const int *parent = m->dof_parent;
  for (int k = 0; k < nv; k++) {
    out[k] = d->qM[k * nv + k] * x[k];
  }
  for (int k = 0; k < nv; k++) {
    for (int i = parent[k]; i >= 0; i = parent[i]) {
      double Mki = d->qM[k * nv + i];
      out[k] += Mki * x[i];
      out[i] += Mki * x[k];
    }
  }
}
