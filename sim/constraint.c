/* sim/constraint.c: constraint rows at the current state, in MuJoCo's soft-constraint model.
 *
 * Each row i is a scalar constraint on the acceleration, J_i·a, with a reference acceleration
 *   aref_i = −b·(J_i·v) − k·imp·pos_i
 * (a spring-damper pulling the violation pos_i back) and a regularisation
 *   R_i = (1 − imp)/imp · invweight0,  D_i = 1/R_i,
 * where (k, b) come from solref and the impedance imp from solimp and the violation. The
 * solver (solver.c) then finds the acceleration that minimizes
 *   ½(a − a0)ᵀM(a − a0) + Σ s_i(J_i·a − aref_i)
 * with s_i the row's cost: for a limit ½D·x² when x < 0 and 0 otherwise (it can only push);
 * for friction ½D·x² while |x| < R·F and F·|x| − ½R·F² beyond (|force| <= F).
 * Rows are made only for limits that are reached (margin 0: pos < 0), for joints with
 * friction and for contacts (whose rows and costs depend on condim and the cone: make_contact,
 * solver_cost.c), so limits that stay inactive cost one comparison each.
 *
 * Semantics follow MuJoCo 2.2.2 (mj_instantiateFriction, mj_instantiateLimit,
 * mj_instantiateContact, mj_diagApprox, mj_makeImpedance, mj_referenceConstraint); see
 * docs/architecture.md.
 */
#include "sim/constraint.h"
#include "sim/fluid.h"
#include "sim/inverse_weights.h"
#include "sim/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CNSTR_MINVAL 1e-15  /* MuJoCo's mjMINVAL */

/* --- model constants ------------------------------------------------------------------------ */

/* A dof's parent is the previous dof of its body, or else the last dof of the nearest
 * ancestor body that moves (MuJoCo's dof_parentid). */
static void set_dof_parents(sim_model *m) {
  for (int k = 0; k < m->nv; k++) {
    const sim_body *own = &m->bodies[m->dof_body[k]];
    int parent = k > own->dofadr ? k - 1 : -1;
    for (int b = own->parent; b > 0 && parent < 0; b = m->bodies[b].parent) {
      if (m->bodies[b].dofnum > 0) {
        parent = m->bodies[b].dofadr + m->bodies[b].dofnum - 1;
      }
    }
    m->dof_parent[k] = parent;
  }
}

/* MuJoCo's weld bodies: a body on a fixed joint moves with its parent (the contact filter) */
static void set_welds(sim_model *m) {
  m->bodies[0].weld = 0;
  for (int b = 1; b < m->nbody; b++) {
    const sim_joint *j = &m->joints[m->bodies[b].joint];
    m->bodies[b].weld = j->type == SIM_JOINT_FIXED ? m->bodies[m->bodies[b].parent].weld : b;
  }
}

int sim_constraint_setconst(sim_model *m) {
  set_welds(m);
  free(m->dof_parent);
  m->dof_parent = calloc((size_t)m->nv + 1, sizeof *m->dof_parent);
  if (!m->dof_parent) {
    return -1;
  }
  set_dof_parents(m);
  /* a joint has one row of friction and at most one limit row (lower and upper cannot both
   * be violated while lo < hi) */
  m->nefc_max = 0;
  for (int j = 0; j < m->njnt; j++) {
    const sim_joint *jt = &m->joints[j];
    if (jt->dofadr >= 0) {
      m->nefc_max += (jt->frictionloss > 0) + (jt->limited != 0);
    }
  }
  for (int t = 0; t < m->ntendon; t++) { /* a tendon's: with a margin both sides can be near */
    m->nefc_max += (m->tendons[t].frictionloss > 0) + 2 * (m->tendons[t].limited != 0);
  }
  m->nefc_max += 4 * m->max_contacts; /* condim 3, pyramidal: four edges per contact */
  m->nefc_max += sim__equality_rows_max(m);
  sim__fluid_setconst(m); /* not a constraint's, but a constant of the model's bodies too */
  return sim__inverse_weights(m) || sim__equality_setconst(m) ? -1 : 0;
}

/* --- impedance and reference ---------------------------------------------------------------- */

/* R, D and aref of row i from its solref/solimp, violation and velocity J·v */
static void row_impedance(const sim_model *m, sim_data *d, int i, const double *solref,
                          const double *solimp, double invweight, double vel, int friction) {
  double ref[SIM_NREF], imp[SIM_NIMP];
  sim_constraint_sanitize(ref, imp, solref, solimp, m->opt.timestep);
  double pos = d->efc_pos[i], I = sim_constraint_impedance(imp, pos), dmax = imp[1], k, b;
  d->efc_R[i] = fmax(CNSTR_MINVAL, (1 - I) * invweight / I);
  d->efc_D[i] = 1 / d->efc_R[i];
  sim_constraint_spring_damper(&k, &b, ref, dmax);
  k = friction ? 0 : k;
  d->efc_aref[i] = -b * vel - k * I * pos;
}

/* --- rows ----------------------------------------------------------------------------------- */

/* the fields every new row i starts with (its Jacobian and its nonzeros are the caller's) */
static void row_header(sim_data *d, int i, int nnz, double pos, sim_constraint_type type, int id) {
  d->efc_nnz[i] = nnz;
  d->efc_pos[i] = pos;
  d->efc_type[i] = type;
  d->efc_id[i] = id;
  d->efc_frictionloss[i] = 0;
  d->efc_force[i] = 0;
  d->efc_state[i] = SIM_CSTATE_SATISFIED;
}

/* a row J = sign·e_dof; returns its index */
static int add_row(const sim_model *m, sim_data *d, int dof, double sign, double pos,
                   sim_constraint_type type, int joint) {
  int i = d->nefc++;
  double *J = d->efc_J + (size_t)i * m->nv;
  memset(J, 0, (size_t)m->nv * sizeof(double));
  J[dof] = sign;
  /* its one nonzero: the products visit only the dofs a row lists (contact rows list their
   * bodies' chains), in ascending order, so every sum is the dense one bit for bit */
  d->efc_ind[(size_t)i * m->nv] = dof;
  row_header(d, i, 1, pos, type, joint);
  return i;
}

/* a row J = sign·ten_J of tendon t, listing its nonzeros; returns its index */
static int add_tendon_row(const sim_model *m, sim_data *d, int t, double sign, double pos,
                          sim_constraint_type type) {
  const int nv = m->nv, i = d->nefc++;
  const double *tj = d->ten_J + (size_t)t * nv;
  double *J = d->efc_J + (size_t)i * nv;
  int *ind = d->efc_ind + (size_t)i * nv, nnz = 0;
  for (int k = 0; k < nv; k++) {
    J[k] = sign * tj[k];
    if (tj[k] != 0) {
      ind[nnz++] = k;
    }
  }
  row_header(d, i, nnz, pos, type, t);
  return i;
}

/* Tendon rows (MuJoCo's mjCNSTR_FRICTION_TENDON and mjCNSTR_LIMIT_TENDON): friction along the
 * tendon bounded by its frictionloss; a limit row on each side the length comes within margin
 * of, J = ∓ten_J, its violation measured beyond the margin (pos = distance − margin, as MuJoCo's
 * impedance and reference take it). Their regularisation scales with tendon invweight0. */
static void make_tendon_friction(const sim_model *m, sim_data *d) {
  for (int t = 0; t < m->ntendon; t++) {
    const sim_tendon *ten = &m->tendons[t];
    if (ten->frictionloss > 0) {
      const int i = add_tendon_row(m, d, t, 1.0, 0.0, SIM_CNSTR_FRICTION_TENDON);
      d->efc_frictionloss[i] = ten->frictionloss;
      row_impedance(m, d, i, ten->solref_friction, ten->solimp_friction, ten->invweight0,
                    d->ten_velocity[t], 1);
    }
  }
}

static void make_tendon_limits(const sim_model *m, sim_data *d) {
  for (int t = 0; t < m->ntendon; t++) {
    const sim_tendon *ten = &m->tendons[t];
    if (!ten->limited) {
      continue;
    }
    const double L = d->ten_length[t], v = d->ten_velocity[t];
    for (int side = -1; side <= 1; side += 2) {
      const double dist = side * (ten->range[(side + 1) / 2] - L);
      if (dist < ten->margin) {
        const int i = add_tendon_row(m, d, t, -side, dist - ten->margin, SIM_CNSTR_LIMIT_TENDON);
        row_impedance(m, d, i, ten->solref_limit, ten->solimp_limit, ten->invweight0, -side * v,
                      0);
      }
    }
  }
}

static void make_friction(const sim_model *m, sim_data *d) {
  for (int k = 0; k < m->nv; k++) {
    const sim_joint *jt = &m->joints[m->dof_joint[k]];
    if (jt->frictionloss > 0) {
      int i = add_row(m, d, k, 1.0, 0.0, SIM_CNSTR_FRICTION_DOF, m->dof_joint[k]);
      d->efc_frictionloss[i] = jt->frictionloss;
      row_impedance(m, d, i, jt->solref_friction, jt->solimp_friction, jt->invweight0,
                    d->qvel[k], 1);
    }
  }
  make_tendon_friction(m, d);
  d->nf = d->nefc - d->ne;
}

/* lower side: dist = q − lo, J = +1; upper side: dist = hi − q, J = −1 (margin 0) */
static void make_limits(const sim_model *m, sim_data *d) {
  for (int j = 0; j < m->njnt; j++) {
    const sim_joint *jt = &m->joints[j];
    if (!jt->limited || jt->dofadr < 0) {
      continue;
    }
    double q = d->qpos[jt->qposadr], v = d->qvel[jt->dofadr];
    for (int side = -1; side <= 1; side += 2) {
      double dist = side * (jt->range[(side + 1) / 2] - q);
      if (dist < 0) {
        int i = add_row(m, d, jt->dofadr, -side, dist, SIM_CNSTR_LIMIT_JOINT, j);
        row_impedance(m, d, i, jt->solref_limit, jt->solimp_limit, jt->invweight0, -side * v,
                      0);
      }
    }
  }
}

/* --- contacts --------------------------------------------------------------------------------- */

#define CNSTR_MINMU 1e-5 /* MuJoCo's mjMINMU: friction is at least this */

/* friction, solref and solimp of a geom pair (MuJoCo's mj_contactParam): those of the geom of
 * higher priority when the two differ; else friction the larger, the soft parameters mixed half
 * and half (MuJoCo's solmix 1; direct solrefs take the smaller) */
static void contact_params(double *mu, double ref[SIM_NREF], double imp[SIM_NIMP],
                           const sim_geom *g1, const sim_geom *g2) {
  if (g1->priority != g2->priority) {
    const sim_geom *g = g1->priority > g2->priority ? g1 : g2;
    *mu = fmax(CNSTR_MINMU, g->friction[0]);
    memcpy(ref, g->solref, SIM_NREF * sizeof(double));
    memcpy(imp, g->solimp, SIM_NIMP * sizeof(double));
    return;
  }
  *mu = fmax(CNSTR_MINMU, fmax(g1->friction[0], g2->friction[0]));
  const double mix = 0.5;
  for (int k = 0; k < SIM_NREF; k++) {
    ref[k] = g1->solref[0] > 0 && g2->solref[0] > 0
                 ? mix * g1->solref[k] + (1 - mix) * g2->solref[k]
                 : fmin(g1->solref[k], g2->solref[k]);
  }
  for (int k = 0; k < SIM_NIMP; k++) {
    imp[k] = g1->solimp[k] * mix;
    imp[k] += g2->solimp[k] * (1 - mix);
  }
}

/* the pair's condim: the higher priority geom's, else the larger */
static int contact_condim(const sim_geom *g1, const sim_geom *g2) {
  if (g1->priority != g2->priority) {
    return g1->priority > g2->priority ? g1->condim : g2->condim;
  }
  return g1->condim > g2->condim ? g1->condim : g2->condim;
}

/* normal and tangent Jacobian rows of contact c: frame · (J₂ − J₁) at the contact point, on the
 * n dofs listed (the other entries of jf are not used) */
static void contact_jacobian(const sim_model *m, sim_data *d, int c, int b1, int b2,
                             const int *dofs, int n) {
  int nv = m->nv;
  double *j1 = d->con_jac, *j2 = j1 + 3 * nv, *jf = j2 + 3 * nv;
  const double *p = d->con_pos + 3 * c, *f = d->con_frame + 9 * c;
  sim_jac_point(m, d, j1, NULL, b1, p);
  sim_jac_point(m, d, j2, NULL, b2, p);
  for (int t = 0; t < n; t++) {
    const int k = dofs[t];
    for (int j = 0; j < 3; j++) {
      j2[j * nv + k] -= j1[j * nv + k];
    }
    for (int r = 0; r < 3; r++) {
      double s = 0;
      for (int j = 0; j < 3; j++) {
        s += f[3 * r + j] * j2[j * nv + k];
      }
      jf[r * nv + k] = s;
    }
  }
}

/* The rows of contact c by its condim and the model's cone (MuJoCo's mj_instantiateContact,
 * mj_diagApprox, mj_makeImpedance): with tran = invweight0₁ + invweight0₂ (translation) and
 * R₀ = (1 − imp)/imp times the row's diagonal estimate,
 *  - condim 1: one row along the normal, R = R₀(tran);
 *  - pyramidal: four edges n ± μ·t₁, n ± μ·t₂ sharing R = 2·μ_r²·R₀(tran + μ²·tran), where
 *    μ_r = μ·√(1/impratio) is the cone's friction on the regularised forces;
 *  - elliptic: the normal and the two tangent rows, R = R₀(tran) for the normal and
 *    R₀/impratio for the tangents; only the normal row has a spring (the tangents' aref is
 *    −b·J·v).
 * The edges' order is n + μt₁, n − μt₁, n + μt₂, n − μt₂. */
typedef struct contact_rows {
  const double *jn;   /* the normal and tangent Jacobian rows (3 rows of nv) */
  const int *dofs;    /* the dofs they touch, ascending */
  int n;
  double dist, I, k, b; /* violation, impedance, spring and damper */
  double margin;        /* margin − gap: the spring and the impedance measure dist from it */
} contact_rows;

/* a row J = a (+ scale·b when b is given), zero outside the contact's dofs; returns its index */
static int contact_row(const sim_model *m, sim_data *d, const contact_rows *cr, const double *a,
                       const double *b, double scale, int c, sim_constraint_type type, double pos,
                       double R, double spring) {
  int nv = m->nv, i = d->nefc++;
  double *J = d->efc_J + (size_t)i * nv, vel = 0;
  int *ind = d->efc_ind + (size_t)i * nv;
  memset(J, 0, (size_t)nv * sizeof(double));
  for (int t = 0; t < cr->n; t++) {
    const int q = cr->dofs[t];
    J[q] = b ? a[q] + b[q] * scale : a[q];
    vel += J[q] * d->qvel[q];
    ind[t] = q;
  }
  row_header(d, i, cr->n, pos, type, c);
  d->efc_R[i] = R;
  d->efc_D[i] = 1 / R;
  d->efc_aref[i] = -cr->b * vel - spring * cr->I * (pos - cr->margin);
  return i;
}

static void make_contact(const sim_model *m, sim_data *d, int c) {
  int nv = m->nv;
  const sim_geom *g1 = &m->geoms[d->con_geom[2 * c]], *g2 = &m->geoms[d->con_geom[2 * c + 1]];
  double mu, solref[SIM_NREF], solimp[SIM_NIMP], ref[SIM_NREF], imp[SIM_NIMP];
  contact_params(&mu, solref, solimp, g1, g2);
  sim_constraint_sanitize(ref, imp, solref, solimp, m->opt.timestep);
  /* the first row's index list holds the chain dofs, which every row of the contact shares */
  int *dofs = d->efc_ind + (size_t)d->nefc * nv;
  const int n = sim__constraint_chain_dofs(m, g1->body, g2->body, dofs);
  contact_jacobian(m, d, c, g1->body, g2->body, dofs, n);
  contact_rows cr = {.jn = d->con_jac + 6 * nv, .dofs = dofs, .n = n, .dist = d->con_dist[c],
                     .margin = d->con_margin[c]};
  cr.I = sim_constraint_impedance(imp, cr.dist - cr.margin);
  const double dmax = imp[1];
  sim_constraint_spring_damper(&cr.k, &cr.b, ref, dmax);
  const double tran = m->bodies[g1->body].invweight0[0] + m->bodies[g2->body].invweight0[0];
  const int dim = contact_condim(g1, g2);
  d->con_dim[c] = dim > 1 ? 3 : 1;
  d->con_friction[c] = mu;
  d->con_efc[c] = d->nefc;
  if (dim <= 1) {
    d->con_mu[c] = 0;
    const double R = fmax(CNSTR_MINVAL, (1 - cr.I) * tran / cr.I);
    contact_row(m, d, &cr, cr.jn, NULL, 0, c, SIM_CNSTR_CONTACT_FRICTIONLESS, cr.dist, R, cr.k);
    return;
  }
  const double *jt1 = cr.jn + nv, *jt2 = cr.jn + 2 * nv;
  if (m->opt.cone == SIM_CONE_ELLIPTIC) {
    const double R0 = fmax(CNSTR_MINVAL, (1 - cr.I) * tran / cr.I);
    const double R1 = R0 / fmax(CNSTR_MINVAL, m->opt.impratio);
    const double R2 = R1 * mu * mu / (mu * mu); /* R₂μ₂² = R₁μ₁² with μ₂ = μ₁ */
    d->con_mu[c] = mu * sqrt(R1 / R0);
    contact_row(m, d, &cr, cr.jn, NULL, 0, c, SIM_CNSTR_CONTACT_ELLIPTIC, cr.dist, R0, cr.k);
    contact_row(m, d, &cr, jt1, NULL, 0, c, SIM_CNSTR_CONTACT_ELLIPTIC, 0, R1, 0);
    contact_row(m, d, &cr, jt2, NULL, 0, c, SIM_CNSTR_CONTACT_ELLIPTIC, 0, R2, 0);
    return;
  }
  const double R0 = fmax(CNSTR_MINVAL, (1 - cr.I) * (tran + mu * mu * tran) / cr.I);
  const double R1 = R0 / fmax(CNSTR_MINVAL, m->opt.impratio);
  const double mu_r = mu * sqrt(R1 / R0);
  const double R = 2 * mu_r * mu_r * R0;
  d->con_mu[c] = mu_r;
  for (int e = 0; e < 4; e++) {
    contact_row(m, d, &cr, cr.jn, cr.jn + (1 + e / 2) * nv, e % 2 ? -mu : mu, c,
                SIM_CNSTR_CONTACT_PYRAMIDAL, cr.dist, R, cr.k);
  }
}

void sim_constraint_make(const sim_model *m, sim_data *d) {
  d->nefc = d->nf = d->ne = 0;
  if (m->nefc_max == 0) {
    return;
  }
  sim__equality_make(m, d); /* MuJoCo's order: equality rows first (constraint_equality.c) */
  make_friction(m, d);
  make_limits(m, d);
  make_tendon_limits(m, d);
  for (int c = 0; c < d->ncon; c++) {
    if (d->con_dist[c] < d->con_margin[c]) {
      make_contact(m, d, c);
    } else { /* in the gap (margin − gap <= dist < margin): no rows, as MuJoCo's exclude 1 */
      const sim_geom *g1 = &m->geoms[d->con_geom[2 * c]], *g2 = &m->geoms[d->con_geom[2 * c + 1]];
      d->con_efc[c] = -1;
      d->con_dim[c] = (g1->condim > g2->condim ? g1->condim : g2->condim) > 1 ? 3 : 1;
      d->con_friction[c] = d->con_mu[c] = 0;
    }
  }
}

/* The rows of contact c start at con_efc[c]. A pyramid's edges n + μt₁, n − μt₁, n + μt₂,
 * n − μt₂ each push along the normal with their whole size and along their tangent with μ times
 * it; an elliptic contact's rows are the force itself; a frictionless one has its normal only. */
void sim_contact_force(const sim_model *m, const sim_data *d, int c, double out[3]) {
  (void)m;
  out[0] = out[1] = out[2] = 0;
  if (c < 0 || c >= d->ncon) {
    return;
  }
  const int row = d->con_efc[c];
  if (row < 0 || row < d->ne + d->nf || row >= d->nefc) { /* a contact in the gap: no force */
    return;
  }
  const double *f = d->efc_force + row;
  switch (d->efc_type[row]) {
  case SIM_CNSTR_CONTACT_FRICTIONLESS:
    out[0] = f[0];
    break;
  case SIM_CNSTR_CONTACT_ELLIPTIC:
    out[0] = f[0], out[1] = f[1], out[2] = f[2];
    break;
  default: {
    const double mu = d->con_friction[c];
    out[0] = f[0] + f[1] + f[2] + f[3];
    out[1] = mu * (f[0] - f[1]);
    out[2] = mu * (f[2] - f[3]);
  }
  }
}

/* --- for sim/deriv (constraint.h): the rows' parameters exactly as the rows above use them -- */

void sim_constraint_contact_params(double *mu, double ref[SIM_NREF], double imp[SIM_NIMP],
                                   const sim_geom *g1, const sim_geom *g2) {
  contact_params(mu, ref, imp, g1, g2);
}
