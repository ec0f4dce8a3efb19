/* sim/constraint_soft.c: what every kind of constraint row is made of (constraint.c's joint,
 * tendon and contact rows, constraint_equality.c's equality rows, sim/deriv's derivatives):
 * MuJoCo 2.2.2's soft-constraint parameters (getsolparam, mj_makeImpedance's curve and spring)
 * and the Jacobians of a body's point along the tree. */
#include "sim/constraint.h"
#include "sim/sim.h"

#include <math.h>
#include <string.h>

#define CNSTR_MINVAL 1e-15  /* MuJoCo's mjMINVAL */
#define CNSTR_MINIMP 0.0001 /* impedance is clamped to [MINIMP, MAXIMP] */
#define CNSTR_MAXIMP 0.9999

/* --- soft-constraint parameters ------------------------------------------------------------ */

/* solref and solimp as MuJoCo uses them (getsolparam): a solref mixing its two forms is
 * replaced by the default, a time constant is at least two steps, and solimp is clamped */
void sim_constraint_sanitize(double ref[SIM_NREF], double imp[SIM_NIMP], const double *solref,
                             const double *solimp, double timestep) {
  ref[0] = solref[0], ref[1] = solref[1];
  if ((ref[0] > 0) != (ref[1] > 0)) {
    ref[0] = 0.02, ref[1] = 1;
  }
  if (ref[0] > 0) { /* a time constant below two steps cannot be integrated: impose 2h */
    ref[0] = fmax(ref[0], 2 * timestep);
  }
  for (int k = 0; k < SIM_NIMP; k++) {
    imp[k] = solimp[k];
  }
  imp[0] = fmin(CNSTR_MAXIMP, fmax(CNSTR_MINIMP, imp[0]));
  imp[1] = fmin(CNSTR_MAXIMP, fmax(CNSTR_MINIMP, imp[1]));
  imp[2] = fmax(0, imp[2]);
  imp[3] = fmin(CNSTR_MAXIMP, fmax(CNSTR_MINIMP, imp[3]));
  imp[4] = fmax(1, imp[4]);
}

/* imp(x): dmin at x = 0 rising to dmax at x = width, x = |pos|, along two power curves that
 * meet at the midpoint (MuJoCo's sigmoid). */
double sim_constraint_impedance(const double solimp[SIM_NIMP], double pos) {
  double dmin = solimp[0], dmax = solimp[1], width = solimp[2], mid = solimp[3], p = solimp[4];
  if (dmin == dmax || width <= CNSTR_MINVAL) {
    return 0.5 * (dmin + dmax);
  }
  double x = fabs(pos / width);
  if (x >= 1 || x <= 0) {
    return x >= 1 ? dmax : dmin;
  }
  double y;
  if (p == 1) {
    y = x;
  } else if (x <= mid) {
    double a = 1 / pow(mid, p - 1);
    y = a * pow(x, p);
  } else {
    double b = 1 / pow(1 - mid, p - 1);
    y = 1 - b * pow(1 - x, p);
  }
  return dmin + y * (dmax - dmin);
}

/* the spring k and damper b of a sanitized solref: standard [timeconst, dampratio] gives
 * k = 1/(dmax²·timeconst²·dampratio²), b = 2/(dmax·timeconst); direct [−k', −b'] gives
 * k = k'/dmax², b = b'/dmax */
void sim_constraint_spring_damper(double *k, double *b, const double ref[SIM_NREF], double dmax) {
  *k = ref[0] > 0 ? 1 / fmax(CNSTR_MINVAL, dmax * dmax * ref[0] * ref[0] * ref[1] * ref[1])
                  : -ref[0] / fmax(CNSTR_MINVAL, dmax * dmax);
  *b = ref[1] > 0 ? 2 / fmax(CNSTR_MINVAL, dmax * ref[0]) : -ref[1] / fmax(CNSTR_MINVAL, dmax);
}

/* --- Jacobians along the tree ---------------------------------------------------------------- */

/* the last dof that moves body b (its own, or its nearest moving ancestor's); -1 if none */
static int last_moving_dof(const sim_model *m, int b) {
  for (; b > 0; b = m->bodies[b].parent) {
    if (m->bodies[b].dofnum > 0) {
      return m->bodies[b].dofadr + m->bodies[b].dofnum - 1;
    }
  }
  return -1;
}

void sim_jac_point(const sim_model *m, const sim_data *d, double *jacp, double *jacr, int b,
                   const double p[3]) {
  int nv = m->nv;
  memset(jacp, 0, 3 * (size_t)nv * sizeof(double));
  if (jacr) {
    memset(jacr, 0, 3 * (size_t)nv * sizeof(double));
  }
  /* a dof's motion [ω; v0] about the world origin moves p at v0 + ω × p */
  for (int k = last_moving_dof(m, b); k >= 0; k = m->dof_parent[k]) {
    const double *w = d->cdof + 6 * k, *v0 = w + 3;
    double v[3] = {v0[0] + w[1] * p[2] - w[2] * p[1], v0[1] + w[2] * p[0] - w[0] * p[2],
                   v0[2] + w[0] * p[1] - w[1] * p[0]};
    for (int r = 0; r < 3; r++) {
      jacp[r * nv + k] = v[r];
      if (jacr) {
        jacr[r * nv + k] = w[r];
      }
    }
  }
}

/* The dofs that can move a contact between bodies b1 and b2: both bodies' chains to the world,
 * ascending (the order of the dense products, so that skipping the rest changes no bit). */
int sim__constraint_chain_dofs(const sim_model *m, int b1, int b2, int *dofs) {
  int n = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int k = last_moving_dof(m, pass ? b2 : b1); k >= 0; k = m->dof_parent[k]) {
      int seen = 0;
      for (int t = 0; t < n && !seen; t++) {
        seen = dofs[t] == k;
      }
      if (!seen) {
        dofs[n++] = k;
      }
    }
  }
  for (int i = 1; i < n; i++) { /* insertion sort: chains are short */
    const int k = dofs[i];
    int j = i;
    while (j > 0 && dofs[j - 1] > k) {
      dofs[j] = dofs[j - 1];
      j--;
    }
    dofs[j] = k;
  }
  return n;
}
