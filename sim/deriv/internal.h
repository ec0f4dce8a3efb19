/* sim/deriv/internal.h: the workspace of the derivatives and the stages' entry points (internal
 * to sim/deriv).
 *
 * One evaluation of the dynamics (sim_forward_dynamics: kinematics, forces, rows, ABA, solver)
 * maps the evaluation's state (q, v), the actuator state act, the commands u and the parameters θ
 * to the acceleration q̈. Its derivative
 *   Q = ∂q̈/∂[δq | v | act | u | θ]     (nv × ncol, ncol = 2nv + na + nu + np)
 * is built from the derivative of the generalized forces (G, same columns) by the stages' files:
 *   rnea_deriv.c        −∂ID/∂(q, v) at a given q̈ and −∂ID/∂(body parameters): inverse
 *                       dynamics ID(q, v, q̈) = M·q̈ + C·v + g, reversed along the tree
 *   passive_deriv.c     ∂τ of springs and dampers
 *   actuator_deriv.c    ∂τ of the actuators, and the winding current's advance after the step
 *   impedance_deriv.c   the slope of the rows' impedance curve (below both of the next two)
 *   contact_round_deriv.c contacts of two round shapes (spheres, capsules), both moving
 *   contact_deriv.c     which contacts have derivatives; a plane with a sphere, a capsule or a
 *                       box
 *   constraint_deriv.c  limits and friction, and the solver's optimality condition at its
 *                       solution through every row (the contacts' terms from contact_deriv.c)
 *   dynamics_deriv.c    one evaluation: G, then Q = (M + h·B)⁻¹·G (or through the rows)
 *   integrate_deriv.c   the integrators chained over their evaluations into A, B, P
 *
 * Matrices of the workspace are row-major with the ncol inputs as columns (row k of Q and G is
 * dof k, at k·ncol): every solve, product and chain rule below is a row operation over ncol
 * contiguous entries, which vectorizes; the public A, B, P are blocks of its rows.
 */
#ifndef ACHILLES_SIM_DERIV_INTERNAL_H
#define ACHILLES_SIM_DERIV_INTERNAL_H

#include "sim/deriv/deriv.h"

#define DERIV_STAGES 4 /* RK4's evaluations; Euler uses the first */

/* The row loops that carry most of the work (RK4's chain, M⁻¹·G) also built for AVX2, chosen at
 * load time by the CPU: the same operations in the same order on wider registers (AVX2 without
 * FMA, so no contraction), hence the same bits as the generic x86-64 build. GCC only, and not
 * under its sanitizers (the clang build of CI runs the generic loops). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define DERIV_WIDE __attribute__((target_clones("avx2", "default")))
#else
#define DERIV_WIDE
#endif

/* Per body, the sums over its subtree that the derivative of inverse dynamics needs (world
 * axes, about the origin): the composite inertia (Ī, h = m·c, m), the net force F, the
 * momentum sum (n, f) of I·v, and the symmetric 3×3 and the vector t of the velocity terms
 * (rnea_deriv.c). */
enum {
  COMP_I = 0,     /* Ī, 3×3 row-major */
  COMP_H = 9,     /* h */
  COMP_M = 12,    /* m */
  COMP_F = 13,    /* force [n; f] */
  COMP_P = 19,    /* momentum [n; f] */
  COMP_Y = 25,    /* symmetric 3×3 Īŵ + (Īŵ)ᵀ + h·zᵀ + z·hᵀ − 2(h·z)·1 */
  COMP_T = 34,    /* h × w − m·z */
  COMP_SIZE = 37, /* v = [w; z] the body's velocity */
};

/* Every array of the workspace: name, element count (expressions of the sizes in scope). */
#define DERIV_ARRAYS(X)                                                                        \
  X(Q, DERIV_STAGES * nv * ncol)  /* per evaluation ∂q̈/∂[δq|v|act|u|θ], nv × ncol */         \
  X(G, nv * ncol)                 /* force derivative of the evaluation, nv × ncol */         \
  X(G2, nv * ncol)                /* constraint stage: the rows' part, and the second solve */\
  X(Mt, nv * nv)                  /* M (+ h·B), then its LTDL factor */                       \
  X(H, nv * nv)                   /* M + JᵀDJ, then its Cholesky factor */                    \
  X(comp, nbody * COMP_SIZE)      /* per body composite sums (above) */                       \
  X(acc, nbody * 6)               /* per body acceleration at the given q̈ (incl. −g) */      \
  X(dof_sd, nv * 6)               /* Ṡ = v_pre × S */                                         \
  X(dof_c, nv * 6)                /* c = a_pre × S + v_pre × Ṡ */                             \
  X(dof_e, nv * 6)                /* e = Ṡ − S × v_after */                                   \
  X(dof_ics, nv * 6)              /* IC·S */                                                  \
  X(dof_bcs, nv * 6)              /* BCᵀ·S */                                                 \
  X(dof_g, nv * 6)                /* S ×* F + IC·c + BC·Ṡ */                                  \
  X(dof_h, nv * 6)                /* IC·e + BC·S */                                           \
  X(stage_v, DERIV_STAGES * nv)   /* each evaluation's velocity */                            \
  X(qpos0, nq)                    /* the state at the step's start */                         \
  X(qvel0, nv)                                                                                 \
  X(act0, na)                                                                                  \
  X(Dq, nv * ncol)                /* RK4 chain: tangent of the stage position, less 1 */      \
  X(Dv, nv * ncol)                /* ... of the stage velocity, less 1 */                     \
  X(dth, nv * ncol)               /* ... of the stage's rotation Θ */                         \
  X(dkq, DERIV_STAGES * nv * ncol) /* ... of the stage position rates */                      \
  X(dkv, DERIV_STAGES * nv * ncol) /* ... of the stage accelerations */                       \
  X(Xn, ncol * (2 * nv + na))     /* the step's derivative [∂δq⁺; ∂v⁺; ∂act⁺], nx × ncol */    \
  X(rot, 18 * njnt + 1)           /* per joint turning: Φ = R(Θ)ᵀ and Ψ = Jr(Θ) of a stage */ \
  X(sens, (2 * nv + na) * (2 * nv + na + np)) /* sim_deriv_sensitivity_step's new S */          \
  X(theta, nv + 1)                /* scratch: a step's or stage's rotation Θ per dof */     \
  X(unit, nv + 1)                 /* scratch: a column of the identity */                   \
  X(dpar, np + 1)                 /* scratch: one actuator's parameter derivatives */       \
  X(jar, nefc_max + 1)            /* constraint rows: J·a − aref at the solution */          \
  X(efc_f, nefc_max + 1)          /* constraint rows: their forces at the polished solution */\
  X(acc_exact, nv + 1)            /* the solver's solution polished on its active set */      \
  X(rowtmp, ncol + 1)             /* scratch: one row's J·X over the columns */              \
  X(con_work, 40 * nv + 40)       /* contact_deriv.c, contact_round_deriv.c: one contact's  \
                                     per-dof terms */

struct sim_deriv {
  const sim_model *m;
  int nv, nq, na, nu, np, nbody, njnt, nx, ncol, nefc_max;
  int cv, ca, cu, cp;  /* first column of v, act, u and θ in Q and G */
  int status;          /* of the evaluations of the current step */
  char detail[256];    /* what made the last step fail, naming the place (sim_deriv_detail) */
  double implicit_h;   /* Euler's h when its damping is implicit, else 0 */
  sim_param *params;   /* [np] */
  int *rotgroup;       /* [nv] first dof of the ball (or free rotation) a dof belongs to, or -1 */
  int *act_dof;        /* [na] the dof an actuator state drives */
  int *act_actuator;   /* [na] its actuator */
#define DERIV_FIELD(name, count) double *name;
  DERIV_ARRAYS(DERIV_FIELD)
#undef DERIV_FIELD
  void *buffer;
};

/* rnea_deriv.c: the forward and backward passes at the kinematics in d and the acceleration
 * qacc (composites, per-dof terms), then G[:, δq] += s·∂ID/∂q, G[:, v] += s·∂ID/∂v and the body
 * parameter columns G[:, θ] += s·∂ID/∂θ. */
void sim__rnea_deriv(sim_deriv *w, const sim_data *d, const double *qacc, double s);
/* Mt = M from the composites of the last sim__rnea_deriv (armature on the diagonal). */
void sim__rnea_mass_matrix(sim_deriv *w, const sim_data *d);

/* passive_deriv.c, actuator_deriv.c: G += ∂τ/∂[δq | v | act | u | θ] at the state in d. */
void sim__passive_deriv(sim_deriv *w, const sim_data *d);
void sim__actuator_deriv(sim_deriv *w, const sim_data *d);
/* actuator_deriv.c: the rows of ∂act⁺ in X (nx × ncol) from ∂v⁺ (rows nv.. of X), after the
 * step (d holds v⁺ and act⁺, w->act0 the state before). */
void sim__actuator_advance_deriv(sim_deriv *w, const sim_data *d, double h, double *X);

/* dynamics_deriv.c: the derivative of one evaluation into Q (the hook of sim_step_observed). */
void sim__dynamics_deriv(void *ctx, const sim_model *m, const sim_data *d, int stage);

/* dynamics_deriv.c: G = ∂τ − ∂ID − h·∂B·q̈ at the acceleration acc (no rows), and Mt = M. */
void sim__smooth_deriv(sim_deriv *w, const sim_data *d, const double *acc, double implicit_h);

/* constraint_deriv.c (limits and friction, the rows of constant Jacobian):
 * Rc = ∂(Jᵀ·f)/∂[δq|v|act|u|θ] at fixed acceleration a (forces f in efc_f), nv × ncol;
 * H = M + Σ D·JᵀJ over the rows in their quadratic zone (from Mt = M), factorized; the solve
 * X ← H⁻¹·X (nv × n); and Out += s·JᵀDJ·X. */
void sim__constraint_rows_deriv(sim_deriv *w, const sim_data *d, const double *a, double *Rc);
void sim__constraint_hessian(sim_deriv *w, const sim_data *d);
void sim__constraint_solve(const sim_deriv *w, double *X, int n);
/* The minimum with the solver's active set, solved exactly (the solver stops where its cost can
 * no longer resolve an improvement): acc_exact = H⁻¹·(M·a0 + Σ_Q D·Jᵀ·aref + Σ_bound Jᵀ·f), and
 * the rows' forces there in efc_f. Needs sim__constraint_hessian from Mt = M. */
void sim__constraint_polish(sim_deriv *w, const sim_data *d);
void sim__constraint_jtdj(const sim_deriv *w, const sim_data *d, const double *X, double *Out,
                          double s);
/* d imp/d pos of the impedance curve (impedance_deriv.c). */
double sim__impedance_slope(const double solimp[SIM_NIMP], double pos);

/* contact_deriv.c: SIM_DERIV_OK when every contact has derivatives, else SIM_DERIV_ECONTACT
 * (its pair) or SIM_DERIV_ECONE (its cone, condim or impratio) with w->detail naming the
 * contact and its geoms; the contact rows' part of Rc (sim__constraint_rows_deriv's). */
int sim__contact_check(sim_deriv *w, const sim_data *d);
void sim__contact_rows_deriv(sim_deriv *w, const sim_data *d, const double *a, double *Rc);
/* contact_round_deriv.c: contact c's part of Rc for two round shapes (spheres, capsules). */
void sim__contact_round_deriv(sim_deriv *w, const sim_data *d, int c, const double *a,
                              double *Rc);

/* impedance_deriv.c: a pyramid contact's constants, μ, k and b of its reference, imp and imp' at
 * dist, and D's slope ∂D/∂dist (row: its first edge). */
typedef struct sim_contact_coefs {
  double mu, k, b, imp, slope, dD;
} sim_contact_coefs;
sim_contact_coefs sim__contact_coefs(const sim_model *m, const sim_data *d, int c, int row);
/* One pyramid edge row's column dofs[u] (both contact files): from the row's D, jar = J·a −
 * aref, dist and its derivative, and the derivatives of J·a and J·v along that column, the
 * edge force's derivatives ∂f/∂q and ∂f/∂v, spread by the row's Jᵀ into Rc. */
typedef struct sim_edge_column {
  double D, jar, dist, ddist, dJa, dJv;
} sim_edge_column;
void sim__edge_column(const sim_deriv *w, const sim_contact_coefs *k, const sim_edge_column *e,
                      const double *J, const int *dofs, int n, int u, double *Rc);
/* Edge e of the pyramid contact whose first row is row (normal nrm, tangents frame[3..8]): its
 * direction de = n ± μ·t, its force's share f·de added to F, and, when the row is quadratic
 * (only then does its force move with the state), its D and jar = J·a − aref into col;
 * returns whether it is (both contact files). */
int sim__edge_head(const sim_deriv *w, const sim_data *d, const sim_contact_coefs *k, int row,
                   int e, const double nrm[3], const double *frame, const int *dofs, int n,
                   const double *a, double F[3], double de[3], sim_edge_column *col);

/* integrate_deriv.c: the step's derivative X (nx × ncol) from the evaluations' Q. */
void sim__integrate_deriv(sim_deriv *w, const sim_data *d, double *X);

/* SO(3) helpers (integrate_deriv.c): R = exp(θ̂), the right Jacobian Jr(θ) with
 * exp(θ + ε) ≈ exp(θ)·exp(Jr(θ)·ε). */
void sim__so3_exp(double R[9], const double theta[3]);
void sim__so3_right_jacobian(double J[9], const double theta[3]);

#endif
