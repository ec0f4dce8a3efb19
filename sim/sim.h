/* sim/sim.h: the articulated-dynamics core of Achilles.
 *
 * Include this one header. A simulation is an immutable sim_model (model.h) plus a sim_data
 * (data.h) holding all mutable state. Every stage has the form stage(m, d): it reads the model
 * and the state in d, and writes its results into d. No stage allocates memory, reads a clock,
 * or draws a random number: the same inputs give the same bits.
 *
 * Pipeline of one step:  kinematics → tendons → collision → passive forces → actuators → constraint rows
 *                        → ABA (bias forces inside: a0) → [constraint solver, when rows exist]
 *                        → integrate → actuator state.
 */
#ifndef ACHILLES_SIM_SIM_H
#define ACHILLES_SIM_SIM_H

#include "sim/data.h"
#include "sim/model.h"

/* --- stages (one file each) ------------------------------------------------------------ */

/* kinematics.c: body poses (xpos, xmat), centres of mass (xipos), site positions, world
 * spatial inertias (cinert), motion subspaces (cdof), velocities (cvel) and velocity-product
 * terms (cvp). Reads qpos and qvel. */
void sim_kinematics(const sim_model *m, sim_data *d);

/* tendon.c: each tendon's length (ten_length), Jacobian (ten_J, the moment arms) and rate
 * (ten_velocity), as MuJoCo 2.2.2's mj_tendon: fixed tendons Σ coef·q, spatial tendons along
 * their path of sites, wrapping geoms and pulleys. Needs sim_kinematics. */
void sim_tendons(const sim_model *m, sim_data *d);

/* kinematics.c: a motion vector w in world axes about the origin (a c* row), expressed in the
 * axes of body i at its origin. Needs sim_kinematics. */
void sim_motion_to_body(double out[6], const sim_data *d, int i, const double w[6]);

/* Body i's spatial velocity [ω; v] in its own axes, v the velocity of its origin (needs
 * sim_kinematics), and its spatial acceleration [α; a] likewise, including the fictitious base
 * acceleration −g (needs sim_aba, e.g. through sim_forward). The classical acceleration of the
 * origin is a + ω×v, which at rest reads +g upward, as an accelerometer does. */
void sim_body_velocity(double out[6], const sim_data *d, int i);
void sim_body_acceleration(double out[6], const sim_data *d, int i);

/* rnea.c: the base's spatial acceleration [0; −g] (gravity as a fictitious acceleration). */
void sim_base_acceleration(const sim_model *m, double a0[6]);

/* passive.c: qfrc_passive = -stiffness·(q - springref) - damping·qd + Σ_b J_bᵀ·xfrc_applied_b,
 * the last the generalized force of each body's applied force (at its centre of mass) and
 * torque (J_b: the Jacobian of that point and of the body's rotation), plus each tendon's
 * spring-damper along it, ten_Jᵀ·(−k·(L − springlength) − b·L̇). Needs sim_kinematics and
 * sim_tendons. */
void sim_passive(const sim_model *m, sim_data *d);

/* actuator.c: qfrc_actuator and actuator_force from ctrl (clamped to each ctrlrange; a
 * non-finite command reads as 0), the state, the DC motors' currents and the muscles'
 * activations in act; actuator_length and actuator_velocity (the joint's or the tendon's), and
 * the muscles' act_dot. An actuator on a tendon pulls along it (qfrc += ten_J·force). Needs
 * sim_tendons. */
void sim_actuate(const sim_model *m, sim_data *d);

/* actuator.c: advances actuator state (DC motor winding currents) by h, exactly for the linear
 * circuit with voltage and speed held over the step. sim_step calls it after integrating. */
void sim_actuator_advance(const sim_model *m, sim_data *d, double h);

/* rnea.c: qfrc_bias = C(q,qd)·qd + g(q) by Recursive Newton–Euler with zero acceleration.
 * Needs sim_kinematics. */
void sim_rnea_bias(const sim_model *m, sim_data *d);

/* rnea.c: inverse dynamics, qfrc_inverse = M(q)·qacc + bias (armature included, passive
 * forces not). Needs sim_kinematics; reads d->qacc. */
void sim_inverse(const sim_model *m, sim_data *d);

/* crba.c: joint-space inertia matrix qM (dense nv×nv, armature on the diagonal) by the
 * Composite Rigid Body Algorithm. Needs sim_kinematics. */
void sim_crba(const sim_model *m, sim_data *d);

/* aba.c: qacc from qfrc_applied + qfrc_passive + qfrc_actuator by the Articulated Body Algorithm, with
 * Coriolis/centrifugal bias, gravity as a fictitious base acceleration, and armature.
 * `implicit_h` > 0 adds h·damping to each joint's inertia, solving (M + h·B)·qacc = f as
 * MuJoCo's Euler does; pass 0 for the explicit dynamics. Needs sim_kinematics, sim_passive,
 * sim_actuate. */
void sim_aba(const sim_model *m, sim_data *d, double implicit_h);

/* aba.c: body accelerations cacc from qacc (ABA's third pass alone). Needs sim_kinematics. */
void sim_body_accelerations(const sim_model *m, sim_data *d);

/* crba.c: the tree-sparse factorization M = Lᵀ·D·L of qM into qLD (needs sim_crba), the
 * solve x ← M⁻¹·x with it, and out = M·x from qM's tree nonzeros. */
void sim_factor_m(const sim_model *m, sim_data *d);
void sim_solve_m(const sim_model *m, const sim_data *d, double *x);
void sim_mul_m(const sim_model *m, const sim_data *d, double *out, const double *x);
/* The same factorization in place on a caller's nv×nv matrix H with M's tree sparsity (M plus
 * a diagonal, e.g. M + h·B), and the solve x ← H⁻¹·x with the factor it leaves. */
void sim_factor_ltdl(const sim_model *m, double *H);
void sim_solve_ltdl(const sim_model *m, const double *H, double *x);
/* X ← H⁻¹·X for n right-hand sides, X row-major nv × n (row k belongs to dof k). */
void sim_solve_ltdl_rows(const sim_model *m, const double *H, double *X, int n);

/* constraint.c: the Jacobians of a point p (world) moving with body b: jacp (3×nv, row-major)
 * maps q̇ to the point's velocity, jacr (3×nv, may be NULL) to the body's angular velocity.
 * Needs sim_kinematics. */
void sim_jac_point(const sim_model *m, const sim_data *d, double *jacp, double *jacr, int b,
                   const double p[3]);

/* collision.c: contacts between geoms at the current poses (needs sim_kinematics): every
 * plane against every other shape (sphere, capsule, box, cylinder, mesh), and the pairs of those
 * that the contact filter lets touch (collision.h), penetrating ones only (margin 0), at most
 * max_contacts; ncon, con_*. */
void sim_collide(const sim_model *m, sim_data *d);

/* constraint.c: the constraint rows at the current state (joint friction, then reached joint
 * limits, then each contact's: four pyramid edges, the elliptic cone's three rows, or one for
 * condim 1): efc_J, efc_pos, efc_R/D, efc_aref; nefc and nf; con_dim, con_efc, con_mu. Needs
 * sim_kinematics and sim_collide. */
void sim_constraint_make(const sim_model *m, sim_data *d);

/* solver.c: the constrained acceleration qacc, efc_force and qfrc_constraint from the rows and
 * qacc_smooth by the model's solver, CG or Newton (solver_newton.c) (needs sim_constraint_make,
 * sim_crba and sim_factor_m); fills d->solver and stores qacc in qacc_warmstart. */
void sim_solve_constraints(const sim_model *m, sim_data *d);

/* constraint.c: the force of contact c (0 <= c < ncon) in its frame, [normal, tangent 1,
 * tangent 2], N, from its rows' forces (MuJoCo's mj_contactForce): what geom 1
 * exerts on geom 2 (the normal component is >= 0: contacts only push). Needs
 * sim_solve_constraints (sim_forward). */
void sim_contact_force(const sim_model *m, const sim_data *d, int c, double out[3]);

/* forward.c: kinematics, passive forces, actuators, constraint rows, ABA and the constraint
 * solver: qacc at the current state, with h·damping implicit when implicit_h > 0 (the
 * constraint solve itself uses the explicit M, as MuJoCo's Euler does). */
void sim_forward_dynamics(const sim_model *m, sim_data *d, double implicit_h);

/* forward.c: sim_forward_dynamics(m, d, 0): qacc at the current state. */
void sim_forward(const sim_model *m, sim_data *d);

/* integrate.c: advances the state by m->opt.timestep with m->opt.integrator. */
void sim_step(const sim_model *m, sim_data *d);

/* state_check.c: the first joint (in model order) whose position or velocity is NaN or
 * infinite, or -1 when the whole state is finite. A state that turned non-finite (a model
 * singular at the pose reached, an integration that blew up) stays so: the runtime and the
 * batch commands stop on it and name the joint and the time. */
int sim_state_nonfinite(const sim_model *m, const sim_data *d);

/* integrate.c: sim_step, calling stage(ctx, m, d, s) right after each evaluation of the dynamics
 * (s = 0 for Euler; 0..3 for RK4; the evaluations of Verlet and midpoint in order), when d holds
 * that evaluation's kinematics, rows and qacc and before the integrator uses them. The hook
 * only reads d. The state it leaves is sim_step's, bit for bit (sim/deriv differentiates the
 * step through it). */
typedef void (*sim_stage_hook)(void *ctx, const sim_model *m, const sim_data *d, int stage);
void sim_step_observed(const sim_model *m, sim_data *d, sim_stage_hook stage, void *ctx);

/* --- reset.c ------------------------------------------------------------------------------ */

/* Allocates data for m (data.h) and resets it. Returns NULL when out of memory. */
sim_data *sim_data_new(const sim_model *m);

/* Sets time 0, qpos = qpos0, qvel = 0, applied forces 0, and recomputes derived values
 * (sim_forward). */
void sim_data_reset(const sim_model *m, sim_data *d);

/* --- overlap.c ----------------------------------------------------------------------------- */

/* A pair of bodies of one robot that touch at its initial pose. */
typedef struct sim_overlap {
  int body1, body2; /* the bodies, the smaller index first */
  int geom1, geom2; /* their geoms that overlap most (geom1 on body1) */
  double depth;     /* how far those overlap, m (> 0) */
} sim_overlap;

/* The body pairs of one tree (below the same child of the world; the world's own geoms left out)
 * whose geoms overlap at qpos0 although the contact filter lets them touch: self-contact at
 * rest, which pushes the robot apart from its first step. At most max pairs into out, in geom
 * order; returns their number, or -1 when out of memory. Allocates (a load-time check). */
int sim_overlaps_at_rest(const sim_model *m, sim_overlap *out, int max);

/* --- energy.c ----------------------------------------------------------------------------- */

/* Kinetic energy ½·qd'·M·qd (armature included). Needs sim_kinematics. */
double sim_energy_kinetic(const sim_model *m, const sim_data *d);

/* Potential energy: gravity (-Σ m·g·com) plus joint and tendon springs. Needs sim_kinematics
 * and sim_tendons (sim_forward does both). */
double sim_energy_potential(const sim_model *m, const sim_data *d);

/* --- snapshot.c --------------------------------------------------------------------------- */

/* A copy of the state (time, qpos, qvel, the applied forces, ...): restoring it and stepping on
 * reproduces the original run bit for bit. Ownership: sim_snapshot_new() allocates, sim_snapshot_free()
 * releases and accepts NULL. */
typedef struct sim_snapshot sim_snapshot;

sim_snapshot *sim_snapshot_new(const sim_model *m);
void sim_snapshot_free(sim_snapshot *s);
void sim_snapshot_save(const sim_model *m, const sim_data *d, sim_snapshot *s);
/* Restores the state and recomputes the derived values (sim_forward). */
void sim_snapshot_restore(const sim_model *m, sim_data *d, const sim_snapshot *s);

#endif
