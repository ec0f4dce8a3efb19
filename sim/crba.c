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

/* X ← H⁻¹·X for n right-hand sides at once, X row-major nv × n (row k = dof k): the same three
 * sweeps with each step a row operation over the n contiguous columns, which vectorizes (the
 * derivatives' M⁻¹·G, sim/deriv). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__SANITIZE_ADDRESS__)
/* also built for AVX2, picked at load time: the same operations in the same order (no FMA), so
 * the same bits, on registers twice as wide (the derivatives spend a third of their time here) */
__attribute__((target_clones("avx2", "default")))
#endif
void sim_solve_ltdl_rows(const sim_model *m, const double *H, double *X, int n) {
  int nv = m->nv;
  const int *parent = m->dof_parent;
  for (int k = nv - 1; k >= 0; k--) {
    for (int i = parent[k]; i >= 0; i = parent[i]) {
      row_axpy(X + (size_t)i * n, X + (size_t)k * n, H[k * nv + i], n);
    }
  }
  for (int k = 0; k < nv; k++) {
    double *xk = X + (size_t)k * n, inv = 1.0 / H[k * nv + k];
    for (int c = 0; c < n; c++) {
      xk[c] *= inv;
    }
  }
  for (int k = 0; k < nv; k++) {
    for (int i = parent[k]; i >= 0; i = parent[i]) {
      row_axpy(X + (size_t)k * n, X + (size_t)i * n, H[k * nv + i], n);
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
