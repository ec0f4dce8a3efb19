/* sim/data.h: every mutable value of a simulation, in one allocation.
 *
 * sim_data_new() (sim.h) sizes and allocates all arrays from the model once; no function of
 * sim/ allocates after that. Arrays are declared once in SIM_STATE_ARRAYS and SIM_WORK_ARRAYS,
 * which generate the struct fields, the layout and the snapshot copy. Ownership: sim_data_new()
 * allocates, sim_data_free() releases (and accepts NULL).
 *
 * Frames: x* arrays are world positions and orientations. c* arrays are spatial quantities in
 * world axes about the world origin, where the recursive algorithms run: no transforms between
 * bodies are needed there (sim_body_velocity and sim_body_acceleration give a body's motion in
 * its own axes, as sensors see it). Spatial vectors are [angular; linear].
 */
#ifndef ACHILLES_SIM_DATA_H
#define ACHILLES_SIM_DATA_H

#include "sim/model.h"

/* Newton's Hessian is nv × nv, kept only by a model that can have constraint rows */
#define SIM_DATA_NH(m) ((m)->nefc_max > 0 ? (m)->nv : 0)

/* the tendon stage's scratch for two point Jacobians (3 × nv each), kept only with tendons */
#define SIM_DATA_NTJAC(m) ((m)->ntendon > 0 ? 6 : 0)

/* The state that defines a simulation: stepping from equal state gives equal bits. */
#define SIM_STATE_ARRAYS(X)                                                    \
  X(qpos, nq, 1)          /* joint positions, rad or m */                      \
  X(qvel, nv, 1)          /* joint velocities */                               \
  X(qfrc_applied, nv, 1)  /* generalized forces applied by the user, N·m or N */   \
  X(xfrc_applied, nbody, 6) /* Cartesian force (N) and torque (N·m) on each body, world axes, \
                               the force acting at the body's centre of mass: [f; τ] as   \
                               MuJoCo's xfrc_applied (sim_passive maps it onto the dofs) */ \
  X(ctrl, nu, 1)          /* actuator commands (meaning per actuator type) */   \
  X(act, na, 1)           /* actuator internal state: DC motor current, A; muscle activation */ \
  X(qacc_warmstart, nv, 1) /* the constraint solver's last solution: next warm start */

/* Everything derived from the state (recomputed by sim_forward) and scratch space. */
#define SIM_WORK_ARRAYS(X)                                                     \
  X(qacc, nv, 1)          /* joint accelerations from the last sim_forward */  \
  X(qfrc_passive, nv, 1)  /* springs, dampers and the bodies' xfrc_applied */   \
  X(qfrc_actuator, nv, 1) /* generalized forces of all actuators */            \
  X(actuator_force, nu, 1) /* each actuator's force at its joint, N·m or N */  \
  X(actuator_current, nu, 1) /* DC motor current (0 for others), A */          \
  X(actuator_length, nu, 1) /* its joint's position or its tendon's length (sim_actuate) */ \
  X(actuator_velocity, nu, 1) /* ... and its rate */                            \
  X(act_dot, na, 1)       /* d(act)/dt of the muscles (0 for DC motors, advanced exactly) */ \
  /* tendons (tendon.c), from sim_tendons (sim_forward after sim_kinematics): plain MuJoCo \
   * names, for every stage that pulls along a tendon (passive, actuators, constraint rows) */ \
  X(ten_length, ntendon, 1) /* each tendon's length, m (fixed: Σ coef·q) */   \
  X(ten_velocity, ntendon, 1) /* its rate, ten_J·qvel */                      \
  X(ten_J, ntendon, m->nv) /* its Jacobian ∂L/∂q (moment arms), dense, row per tendon */ \
  X(ten_jac, nv, SIM_DATA_NTJAC(m)) /* scratch: the point Jacobians of a path segment */ \
  X(qfrc_bias, nv, 1)     /* Coriolis, centrifugal and gravity forces (RNEA) */\
  X(qfrc_inverse, nv, 1)  /* output of sim_inverse */                          \
  X(qM, nv, m->nv)        /* joint-space inertia matrix incl. armature (CRBA) */\
  X(xpos, nbody, 3)       /* body frame origin, world */                       \
  X(xmat, nbody, 9)       /* body orientation, world, row-major */             \
  X(xipos, nbody, 3)      /* body centre of mass, world */                     \
  X(site_xpos, nsite, 3)  /* site positions, world */                          \
  X(cinert, nbody, 36)    /* spatial inertia, world axes, about the world origin */\
  X(cdof, nv, 6)          /* joint motion subspace per dof, world axes, at origin */\
  X(cvel, nbody, 6)       /* spatial velocity, world axes, at origin */        \
  X(cvp, nbody, 6)        /* velocity-product acceleration v ×m (S·qd), world */ \
  X(cacc, nbody, 6)       /* spatial acceleration incl. -g, world (sim_aba) */ \
  X(cfrc, nbody, 6)       /* RNEA force / ABA bias force pA, world */          \
  X(cIA, nbody, 36)       /* articulated (ABA: upper triangle) or composite (CRBA) inertia */ \
  X(dof_U, nv, 6)         /* ABA: IA·S */                                      \
  X(dof_D, nv, 1)         /* ABA: S'·IA·S + armature (+ h·damping) */          \
  X(dof_u, nv, 1)         /* ABA: tau - S'·pA */                               \
  X(dof_Dinv, nv, SIM_BODY_DOF_MAX) /* ABA: row k of D⁻¹ (k×k; 1/D for one dof) */ \
  X(crne_acc, nbody, 6)   /* RNEA's accelerations; ABA's scratch (a⁰, then a − a⁰) */ \
  X(jnt_sincos, njnt, 2)  /* kinematics: sin and cos of each hinge's angle */   \
  X(int_q0, nq, 1)        /* integrator scratch: state at step start */        \
  X(int_v0, nv, 1)                                                             \
  X(int_q1, nq, 1)                                                             \
  X(int_v1, nv, 1)                                                             \
  X(int_kq, nv, 4)        /* RK4 stage derivatives of q */                      \
  X(int_kv, nv, 4)        /* RK4 stage derivatives of v */                      \
  X(int_act0, na, 1)      /* integrator scratch: act at step start */          \
  X(int_kact, na, 4)      /* RK4 stage derivatives of act */                    \
  X(scratch, nv, 1)                                                            \
  /* constraint stage (constraint.c, solver.c): rows 0..nefc-1 are in use */     \
  X(qacc_smooth, nv, 1)   /* a0: the acceleration without constraints */        \
  X(qfrc_constraint, nv, 1) /* Jᵀ·efc_force, N·m or N */                        \
  X(qLD, nv, m->nv)       /* M = Lᵀ·D·L along the tree (L below, D on the diagonal) */ \
  X(efc_J, nefc_max, m->nv) /* constraint Jacobian rows */                       \
  X(efc_pos, nefc_max, 1) /* violation: distance from the limit (< 0 inside) */ \
  X(efc_frictionloss, nefc_max, 1) /* friction rows: the force bound */         \
  X(efc_R, nefc_max, 1)   /* regularisation R = (1 − imp)/imp · invweight0 */   \
  X(efc_D, nefc_max, 1)   /* 1/R */                                             \
  X(efc_aref, nefc_max, 1) /* reference acceleration −b·J·v − k·imp·pos */      \
  X(efc_b, nefc_max, 1)   /* J·a0 − aref */                                     \
  X(efc_jar, nefc_max, 1) /* J·a − aref at the solver's current a */            \
  X(efc_Jv, nefc_max, 1)  /* J·search */                                        \
  X(efc_force, nefc_max, 1) /* constraint force per row, N·m or N */            \
  X(efc_quad, nefc_max, 3) /* line search: each row's cost along the search as a quadratic */ \
  X(sol_Mdelta, nv, 1)    /* M·(a − a0) */                                      \
  X(sol_Mv, nv, 1)        /* M·search */                                        \
  X(sol_grad, nv, 1)      /* gradient of the cost */                            \
  X(sol_Mgrad, nv, 1)     /* the preconditioned gradient: M⁻¹ (CG) or H⁻¹ (Newton) times it */ \
  X(sol_gradold, nv, 1)                                                        \
  X(sol_Mgradold, nv, 1)                                                       \
  X(sol_search, nv, 1)    /* search direction */                                \
  X(sol_H, nv, SIM_DATA_NH(m)) /* Newton: Cholesky factor of M + JᵀDJ (lower, row-major) */ \
  X(sol_Hcone, nv, SIM_DATA_NH(m)) /* ... with the elliptic cones' Hessians added */ \
  X(sol_LTJ, nv, 3)       /* Newton: one contact's cone rows, Lᵀ·J */            \
  X(geom_xpos, ngeom, 3)  /* geom centre, world */                              \
  X(geom_xmat, ngeom, 9)  /* geom orientation, world, row-major */              \
  X(con_dist, max_contacts, 1) /* contacts (collision.c): signed distance */    \
  X(con_pos, max_contacts, 3)  /* midpoint between the surfaces, world */       \
  X(con_frame, max_contacts, 9) /* normal (geom 1 → geom 2), tangent 1, tangent 2 */ \
  X(con_friction, max_contacts, 1) /* sliding friction μ of the pair */            \
  X(con_mu, max_contacts, 1)   /* the cone's μ on the regularised forces, μ/√impratio */ \
  X(con_H, max_contacts, 9)    /* an elliptic contact's cone Hessian (dim × dim) */ \
  X(con_jac, nv, 9)       /* contact Jacobians: body 1, body 2, in the contact frame */

/* Integer arrays, laid out after the doubles in the same allocation. */
#define SIM_INT_ARRAYS(X)                                                      \
  X(efc_type, nefc_max, 1)  /* sim_constraint_type of each row */              \
  X(efc_id, nefc_max, 1)    /* joint or tendon (friction, limit) or contact of each row */                       \
  X(efc_state, nefc_max, 1) /* sim_constraint_state of each row */             \
  X(efc_nnz, nefc_max, 1)   /* nonzeros of each Jacobian row */                 \
  X(efc_ind, nefc_max, m->nv) /* their dof indices: the products skip the zeros */ \
  X(con_geom, max_contacts, 2) /* the two geoms of each contact (plane first) */    \
  X(con_dim, max_contacts, 1)  /* its condim: 1 (frictionless) or 3 */             \
  X(con_efc, max_contacts, 1)  /* its first constraint row */                      \
  X(efc_oldstate, nefc_max, 1) /* Newton: the states before the last step */       \
  X(sol_Hfirst, nv, 1)      /* Newton: first column of each row of the Hessian's profile */ \
  X(geom_sweep, ngeom, 1)   /* round geoms by the low x of their bounding spheres (broad phase) */

/* Constraint rows: friction rows come first (box-constrained: joints', then tendons'), then
 * one-sided limits (joints', then tendons'), then the contacts' rows (each contact's
 * consecutive, from con_efc). */
typedef enum sim_constraint_type {
  SIM_CNSTR_FRICTION_DOF = 0, /* Coulomb friction of a joint, |force| <= frictionloss */
  SIM_CNSTR_LIMIT_JOINT = 1,  /* a joint at or past a limit, force >= 0 */
  SIM_CNSTR_CONTACT_PYRAMIDAL = 2, /* one edge of a contact's friction pyramid, force >= 0 */
  SIM_CNSTR_CONTACT_FRICTIONLESS = 3, /* a condim-1 contact's normal, force >= 0 */
  SIM_CNSTR_CONTACT_ELLIPTIC = 4, /* an elliptic contact's normal, tangent 1, tangent 2 rows */
  SIM_CNSTR_FRICTION_TENDON = 5, /* Coulomb friction along a tendon (a friction row, first nf) */
  SIM_CNSTR_LIMIT_TENDON = 6,    /* a tendon at or past a length limit, force >= 0 */
} sim_constraint_type;

typedef enum sim_constraint_state {
  SIM_CSTATE_SATISFIED = 0, /* a limit pulling away: no force, no cost */
  SIM_CSTATE_QUADRATIC = 1, /* force −D·jar (the soft spring-damper) */
  SIM_CSTATE_LINEARNEG = 2, /* friction at its bound, force +frictionloss */
  SIM_CSTATE_LINEARPOS = 3, /* friction at its bound, force −frictionloss */
  SIM_CSTATE_CONE = 4,      /* an elliptic contact on its cone's surface (all its rows) */
} sim_constraint_state;

/* What the constraint solver did in the last evaluation (plain data for status lines). */
typedef struct sim_solver_stats {
  int nefc;           /* constraint rows instantiated (active limits, friction rows, contacts) */
  int ncon;           /* contacts (4 pyramid rows, 3 elliptic or 1 frictionless each) */
  int nactive;        /* rows carrying force (not satisfied) at the solution: friction rows
                         at their bound included */
  int iterations;     /* solver iterations run (CG or Newton) */
  int warmstart;      /* 1: started from the previous solution, 0: from a0 */
  double cost;        /* final cost ½δᵀMδ + Σ row costs, δ = a − a0 */
  double improvement; /* last scaled cost decrease */
  double gradient;    /* last scaled gradient norm */
} sim_solver_stats;

typedef struct sim_data {
  double time;                  /* simulation time, s */
  double midpoint_residual;     /* max |Δ| of the last implicit midpoint iteration */
  long long nstep;              /* steps taken since creation or reset */
  int ncon;                     /* contacts found by the last collision pass */
  int nefc;                     /* constraint rows in use (the first nf are friction rows) */
  int nf;
  int nsweep;                   /* round geoms in geom_sweep (0 until the first collision pass) */
  sim_solver_stats solver;      /* the last constraint solve */
#define SIM_X_FIELD(name, n, k) double *name;
  SIM_STATE_ARRAYS(SIM_X_FIELD)
  SIM_WORK_ARRAYS(SIM_X_FIELD)
#undef SIM_X_FIELD
#define SIM_X_INT_FIELD(name, n, k) int *name;
  SIM_INT_ARRAYS(SIM_X_INT_FIELD)
#undef SIM_X_INT_FIELD
  void *buffer;                 /* the one allocation behind every array */
  size_t nbuffer;               /* its size in bytes */
} sim_data;

/* Allocates the arrays of data for m, every value 0; NULL when out of memory. Internal to sim/:
 * sim_data_new (sim.h, reset.c) gives the initial state with its derived values, and the
 * loader's constants (constraint.c) a scratch data. */
sim_data *sim__data_alloc(const sim_model *m);

/* Releases data; accepts NULL. */
void sim_data_free(sim_data *d);

#endif
