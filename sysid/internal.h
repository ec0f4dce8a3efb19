/* sysid/internal.h: what the files of sysid/ share — the problem's layout (not public). */
#ifndef ACHILLES_SYSID_INTERNAL_H
#define ACHILLES_SYSID_INTERNAL_H

#include "sysid/sysid.h"

/* How a parameter's fit coordinate φ maps to its value θ (params.c). */
typedef enum sysid_map {
  SYSID_MAP_FREE = 0,  /* θ = φ */
  SYSID_MAP_LOWER = 1, /* θ = lo + e^φ (positive quantities: lo = 0) */
  SYSID_MAP_UPPER = 2, /* θ = hi − e^φ */
  SYSID_MAP_BOX = 3,   /* θ = lo + (hi − lo)·logistic(φ) */
} sysid_map;

typedef struct sysid_pspec {
  sim_param sp;
  char name[160];       /* joint.elbow.damping */
  sysid_map map;
  double lo, hi;        /* bounds (±INFINITY for none) */
  double initial;       /* the model's value when the problem was made */
  double start;         /* the value the fit starts from (initial, or a small positive value
                           when a positive quantity was 0) */
  double scale;         /* column scale of the identifiability analysis */
} sysid_pspec;

typedef struct sysid_window {
  int s, e;             /* its samples [s, e) */
  double t0;            /* simulated start time: t[s] − the largest latency (not before t[0]) */
  int nsteps;           /* steps simulated (states 0..nsteps) */
  double *qbase;        /* nq: the base pose its tangent unknowns perturb */
  int r0, nr;           /* its residual rows [r0, r0 + nr) */
} sysid_window;

/* A residual row: joint j's reading at sample i, at simulated time t0 + (k + f)·h. */
typedef struct sysid_row {
  int i, j, k, w;   /* sample, series joint, step, window */
  double f;
} sysid_row;

struct sysid_problem {
  sim_model *m;         /* the problem's copy: the parameters are set into it */
  sim_data *d;
  sim_deriv *w;
  sysid_options o;
  /* the series */
  int n, nj, na;        /* samples, series joints, series actuators */
  double *t, *y, *u;    /* n, n × nj, n × na */
  char (*jname)[SIM_NAME_MAX];
  int *jqpos, *jdof;    /* per series joint: its model qpos and dof address */
  int *act;             /* per series actuator: its model actuator */
  sysid_meas *meas;     /* nj */
  /* parameters */
  int np;
  sysid_pspec *ps;
  /* windows and rows */
  int nw;
  sysid_window *win;
  int nrow;
  sysid_row *row;
  int nx;               /* sim_deriv_nx */
  int nxs;              /* window-state unknowns per window: 2·nv or 0 */
  int nunk;             /* np + nw·nxs */
  double *xstart;       /* nunk: the start point (window states from the log) */
  double *xfit;         /* nunk, valid when fitted */
  double *vstart;       /* nw × nv: each window's velocities estimated from the log */
  int fitted;
  /* workspaces */
  double *S;            /* nx × (nx + np) sensitivities */
  double *traj;         /* (maxsteps + 1) × nj positions of the series joints */
  double *trajS;        /* (maxsteps + 1) × nj × (2·nv + np) their sensitivity rows */
  int maxsteps;
  double *theta, *dtheta; /* np: values and dθ/dφ at the last evaluation */
  double *Jb;           /* nrow × (np + nxs): the Jacobian's nonzero blocks, last evaluation */
  double *xJ;           /* nunk: the point Jb belongs to */
  int haveJ;
  double simulated;     /* seconds simulated */
  int refresh_const;    /* 1 (default): sim_constraint_setconst after the masses change; the
                           Jacobian leaves out that dependence of the soft rows (tests set 0 to
                           compare it with differences of an exactly held model) */
};

/* model_copy.c: a deep copy of a loaded model (NULL when out of memory); free with
 * sim_model_free. Its name index is left out (lookups search). */
sim_model *sysid__model_copy(const sim_model *m);

/* params.c */
int sysid__params_parse(sysid_problem *p, const char *params, const char *bounds, char *err,
                        size_t err_sz);
double sysid__value(const sysid_pspec *s, double phi, double *dtheta);
double sysid__coordinate(const sysid_pspec *s, double theta);

/* windows.c: the windows, rows and start states of a problem whose series is copied */
int sysid__windows_make(sysid_problem *p, char *err, size_t err_sz);

/* residual.c: one window simulated from x; r and (with Jb) its Jacobian rows */
int sysid__eval(sysid_problem *p, const double *x, double *r, int jacobian, char *err,
                size_t err_sz);

/* residual.c: the column of entry c of a Jacobian block row in window w */
int sysid__column(const sysid_problem *p, int w, int c);

/* fit.c: JᵀJ (nunk × nunk, row-major) of the last Jacobian evaluation */
void sysid__normal_matrix(const sysid_problem *p, double *H);
/* v = J·u (transpose 0; u nunk, v nrow) or Jᵀ·u (1; u nrow, v nunk), strides us, vs */
void sysid__jacobian_product(const sysid_problem *p, int transpose, const double *u,
                             size_t us, double *v, size_t vs);

/* identify.c: singular values, weak directions (named into rep->weak; weak_of[k] != 0 for the
 * parameters in them) and the covariance of the scaled parameters θ_k/scale_k (cov, np × np)
 * from the last Jacobian, columns scaled by D (np); s2 the residual variance */
int sysid__identify(const sysid_problem *p, const double *D, double s2, sysid_report *rep,
                    double *cov, int *weak_of);
int sysid__add_weak(sysid_report *rep, const char *text);

/* report.c */
int sysid__report(sysid_problem *p, const double *x, const double *r0, const double *r,
                  sysid_report *rep, char *err, size_t err_sz);

#endif
