/* sim/deriv/impedance_deriv.c: the slope of the constraint impedance curve (sim/constraint.c's
 * sim_constraint_impedance), shared by the rows of limits and friction (constraint_deriv.c) and
 * of contacts (contact_deriv.c, contact_round_deriv.c), which all stand on it, and a contact's
 * soft-constraint coefficients with the slope of its D.
 *
 * imp(pos) rises from dmin at pos = 0 to dmax at |pos| = width along a two-piece power curve
 * with midpoint mid and power p: y(x) = xᵖ/midᵖ⁻¹ up to mid, 1 − (1 − x)ᵖ/(1 − mid)ᵖ⁻¹ after,
 * x = |pos|/width, imp = dmin + (dmax − dmin)·y; so d imp/d pos = (dmax − dmin)·y'(x)·sign(pos)/
 * width, 0 outside 0 < x < 1 (flat there).
 *
 * A pyramid contact's edges share R = 2μ²·(1 − imp)·(1 + μ²)·tran/imp (tran = both bodies'
 * invweight0, impratio 1), D = 1/R, so ∂D/∂dist = D²·2μ²·(1 + μ²)·tran·imp'/imp² (0 where R is
 * clamped at its floor). */
#include "sim/constraint.h"
#include "sim/deriv/internal.h"

#include <math.h>

#define CNSTR_MINVAL 1e-15 /* sim/constraint.c's */

/* d imp/d pos of sim_constraint_impedance (the same branches) */
double sim__impedance_slope(const double solimp[SIM_NIMP], double pos) {
  double dmin = solimp[0], dmax = solimp[1], width = solimp[2], mid = solimp[3], p = solimp[4];
  if (dmin == dmax || width <= CNSTR_MINVAL) {
    return 0;
  }
  double x = fabs(pos / width), dy;
  if (x >= 1 || x <= 0) {
    return 0;
  }
  if (p == 1) {
    dy = 1;
  } else if (x <= mid) {
    dy = p * pow(x, p - 1) / pow(mid, p - 1);
  } else {
    dy = p * pow(1 - x, p - 1) / pow(1 - mid, p - 1);
  }
  return (dmax - dmin) * dy * (pos < 0 ? -1.0 : 1.0) / width;
}

sim_contact_coefs sim__contact_coefs(const sim_model *m, const sim_data *d, int c, int row) {
  const sim_geom *g1 = &m->geoms[d->con_geom[2 * c]], *g2 = &m->geoms[d->con_geom[2 * c + 1]];
  double solref[SIM_NREF], solimp[SIM_NIMP], ref[SIM_NREF], imp[SIM_NIMP];
  sim_contact_coefs k;
  sim_constraint_contact_params(&k.mu, solref, solimp, g1, g2);
  sim_constraint_sanitize(ref, imp, solref, solimp, m->opt.timestep);
  double dist = d->con_dist[c], dmax = imp[1];
  k.imp = sim_constraint_impedance(imp, dist);
  k.slope = sim__impedance_slope(imp, dist);
  k.k = ref[0] > 0 ? 1 / fmax(CNSTR_MINVAL, dmax * dmax * ref[0] * ref[0] * ref[1] * ref[1])
                   : -ref[0] / fmax(CNSTR_MINVAL, dmax * dmax);
  k.b = ref[1] > 0 ? 2 / fmax(CNSTR_MINVAL, dmax * ref[0]) : -ref[1] / fmax(CNSTR_MINVAL, dmax);
  double tran = m->bodies[g1->body].invweight0[0] + m->bodies[g2->body].invweight0[0];
  double T = tran + k.mu * k.mu * tran, D = d->efc_D[row];
  int clamped = !((1 - k.imp) * T / k.imp > CNSTR_MINVAL);
  k.dD = clamped ? 0 : D * D * 2 * k.mu * k.mu * T * k.slope / (k.imp * k.imp);
  return k;
}

void sim__edge_column(const sim_deriv *w, const sim_contact_coefs *k, const sim_edge_column *e,
                      const double *J, const int *dofs, int n, int u, double *Rc) {
  const int ncol = w->ncol;
  const double dfq = -k->dD * e->ddist * e->jar - e->D * e->dJa +
                     e->D * (-k->b * e->dJv - k->k * (k->imp + k->slope * e->dist) * e->ddist);
  const double dfv = -k->b * e->D * J[dofs[u]];
  for (int s = 0; s < n; s++) {
    double *out = Rc + (size_t)dofs[s] * ncol;
    out[dofs[u]] += J[dofs[s]] * dfq;
    out[w->cv + dofs[u]] += J[dofs[s]] * dfv;
  }
}

int sim__edge_head(const sim_deriv *w, const sim_data *d, const sim_contact_coefs *k, int row,
                   int e, const double nrm[3], const double *frame, const int *dofs, int n,
                   const double *a, double F[3], double de[3], sim_edge_column *col) {
  const int i = row + e;
  const double *t = frame + 3 * (1 + e / 2), f = w->efc_f[i], sign = e % 2 ? -k->mu : k->mu;
  for (int q = 0; q < 3; q++) {
    de[q] = nrm[q] + sign * t[q];
    F[q] += f * de[q];
  }
  if (d->efc_state[i] != SIM_CSTATE_QUADRATIC) {
    return 0;
  }
  const double *J = d->efc_J + (size_t)i * w->nv;
  col->D = d->efc_D[i];
  col->jar = -d->efc_aref[i];
  for (int u = 0; u < n; u++) {
    col->jar += J[dofs[u]] * a[dofs[u]];
  }
  return 1;
}
