/* sysid/windows.c: cutting the series into multiple-shooting windows, the residual rows each
 * window owns, and each window's starting state read off the log (sysid.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysid/internal.h"

/* q and q̇ of series joint j at true time tc, by a least-squares quadratic through its
 * readings (unscaled: (y − offset)/scale) at reading times within ±span of tc + latency; the
 * span widens until three readings are in it. 0 when the joint has no reading at all. */
static int estimate(const sysid_problem *p, int j, double tc, double span, double *q,
                    double *qd) {
  const sysid_meas *ms = &p->meas[j];
  double tr = tc + ms->latency;
  for (int tries = 0; tries < 30; tries++, span *= 2) {
    double A[3][3] = {{0}}, b[3] = {0};
    int cnt = 0;
    for (int i = 0; i < p->n; i++) {
      double dt = p->t[i] - tr, y = p->y[(size_t)i * p->nj + j];
      if (fabs(dt) > span || isnan(y)) {
        continue;
      }
      double v = (y - ms->offset) / ms->scale, phi[3] = {1, dt, dt * dt};
      for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
          A[r][c] += phi[r] * phi[c];
        }
        b[r] += phi[r] * v;
      }
      cnt++;
    }
    if (cnt < 3) {
      continue;
    }
    /* Cramer's rule on the 3×3 normal equations (well conditioned: dt within ±span) */
    double det = A[0][0] * (A[1][1] * A[2][2] - A[1][2] * A[2][1]) -
                 A[0][1] * (A[1][0] * A[2][2] - A[1][2] * A[2][0]) +
                 A[0][2] * (A[1][0] * A[2][1] - A[1][1] * A[2][0]);
    if (!(fabs(det) > 0)) {
      continue;
    }
    double x[3];
    for (int k = 0; k < 3; k++) {
      double M[3][3];
      memcpy(M, A, sizeof M);
      for (int r = 0; r < 3; r++) {
        M[r][k] = b[r];
      }
      x[k] = (M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) -
              M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) +
              M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0])) /
             det;
    }
    *q = x[0], *qd = x[1];
    return 1;
  }
  return 0;
}

/* the samples [s, e) of each window: consecutive spans of `window` seconds; a remainder of at
 * least half a window is a window of its own, else the last window takes it */
static int cut(sysid_problem *p, char *err, size_t err_sz) {
  double T = p->t[p->n - 1] - p->t[0], W = p->o.window;
  if (T < W) {
    snprintf(err, err_sz,
             "the log is %.3f s long, shorter than one window (%.3f s): record longer or give a "
             "shorter window",
             T, W);
    return -1;
  }
  int nw = (int)floor(T / W);
  if (T - nw * W >= 0.5 * W) {
    nw++;
  }
  p->win = calloc((size_t)nw, sizeof *p->win);
  if (!p->win) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  p->nw = nw;
  for (int w = 0; w < nw; w++) {
    p->win[w].s = -1;
  }
  for (int i = 0; i < p->n; i++) {
    int w = (int)floor((p->t[i] - p->t[0]) / W);
    w = w < 0 ? 0 : w >= nw ? nw - 1 : w;
    if (p->win[w].s < 0) {
      p->win[w].s = i;
    }
    p->win[w].e = i + 1;
  }
  for (int w = 0; w < nw; w++) {
    if (p->win[w].s < 0 || p->win[w].e - p->win[w].s < 2) {
      snprintf(err, err_sz, "window %d (from %.3f s) holds fewer than two samples", w,
               p->t[0] + w * W);
      return -1;
    }
  }
  return 0;
}

/* the rows of window w and the steps it takes: reading (i, j) is the true position at
 * t[i] − latency[j], step k + f after the window's start */
static int rows_of(sysid_problem *p, int w, int *cap) {
  sysid_window *win = &p->win[w];
  double h = p->m->opt.timestep;
  win->r0 = p->nrow;
  win->nsteps = 1;
  for (int i = win->s; i < win->e; i++) {
    for (int j = 0; j < p->nj; j++) {
      if (isnan(p->y[(size_t)i * p->nj + j])) {
        continue; /* no reading */
      }
      if (p->nrow == *cap) {
        int c = *cap ? 2 * *cap : 1024;
        sysid_row *r = realloc(p->row, (size_t)c * sizeof *r);
        if (!r) {
          return -1;
        }
        p->row = r, *cap = c;
      }
      double kf = (p->t[i] - p->meas[j].latency - win->t0) / h;
      if (kf < -1e-9) {
        continue; /* the position before the log began */
      }
      int k = (int)floor(kf + 1e-9);
      double f = kf - k;
      f = f < 0 ? 0 : f > 1 ? 1 : f;
      p->row[p->nrow++] = (sysid_row){i, j, k, w, f};
      if (k + 1 > win->nsteps) {
        win->nsteps = k + 1;
      }
    }
  }
  win->nr = p->nrow - win->r0;
  if (win->nsteps > p->maxsteps) {
    p->maxsteps = win->nsteps;
  }
  return 0;
}

/* window w's base pose (logged joints at their estimated positions, the others at qpos0) and
 * its state unknowns' start: tangent 0 from the base, velocities estimated */
static void start_state(sysid_problem *p, int w, double *xw) {
  sysid_window *win = &p->win[w];
  const sim_model *m = p->m;
  memcpy(win->qbase, m->qpos0, (size_t)m->nq * sizeof(double));
  memset(xw, 0, 2 * (size_t)m->nv * sizeof(double));
  for (int j = 0; j < p->nj; j++) {
    double q, qd;
    if (estimate(p, j, win->t0, p->o.velocity_span, &q, &qd)) {
      win->qbase[p->jqpos[j]] = q;
      xw[m->nv + p->jdof[j]] = qd;
    }
  }
}

int sysid__windows_make(sysid_problem *p, char *err, size_t err_sz) {
  if (cut(p, err, err_sz) < 0) {
    return -1;
  }
  double lmax = 0;
  for (int j = 0; j < p->nj; j++) {
    lmax = fmax(lmax, p->meas[j].latency);
  }
  int cap = 0, nv = p->m->nv;
  p->nunk = p->np + p->nw * p->nxs;
  p->xstart = calloc((size_t)p->nunk, sizeof(double));
  p->xfit = calloc((size_t)p->nunk, sizeof(double));
  p->vstart = calloc((size_t)p->nw * nv + 1, sizeof(double));
  double *xw = malloc(2 * (size_t)nv * sizeof(double) + 1);
  if (!xw || !p->xstart || !p->xfit || !p->vstart) {
    free(xw);
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  for (int w = 0; w < p->nw; w++) {
    sysid_window *win = &p->win[w];
    /* no window starts before the log: its inputs are unknown there (the first readings,
       of true times before t[0], are left out) */
    win->t0 = fmax(p->t[win->s] - lmax, p->t[0]);
    win->qbase = malloc((size_t)p->m->nq * sizeof(double) + 1);
    if (!win->qbase || rows_of(p, w, &cap) < 0) {
      free(xw);
      snprintf(err, err_sz, "out of memory");
      return -1;
    }
    start_state(p, w, xw);
    /* the log's velocities: the start of fitted ones, or the state itself */
    memcpy(p->vstart + (size_t)w * nv, xw + nv, (size_t)nv * sizeof(double));
    if (p->nxs) {
      memcpy(p->xstart + p->np + (size_t)w * p->nxs, xw, (size_t)p->nxs * sizeof(double));
    }
  }
  free(xw);
  if (p->nrow == 0) {
    snprintf(err, err_sz, "the log holds no finite joint reading");
    return -1;
  }
  return 0;
}
