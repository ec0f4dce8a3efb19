/* sim/deriv/deriv.h: derivatives of the simulation — step Jacobians and rollout gradients.
 *
 * One step of the simulator maps the state x = (q, q̇, act) and the commands ctrl to the next
 * state x⁺ (sim_step). This module gives, analytically (spatial-algebra derivatives of the
 * stages, never differencing):
 *   A = ∂x⁺/∂x      (nx × nx),   nx = 2·nv + na
 *   B = ∂x⁺/∂ctrl   (nx × nu)
 *   P = ∂x⁺/∂θ      (nx × np)    for a chosen list θ of model parameters (sim_param below)
 * and, on top of them, the gradient of a loss summed over a rollout of T steps with respect to
 * the initial state, every step's commands and θ, by the adjoint method with checkpoints.
 *
 * Layout of x (rows and columns of A, rows of B and P): the nv position tangents, then the nv
 * velocities, then the na actuator states (DC-motor winding currents, A), in model order: dof k
 * of joint j is entry j's dofadr + k (sim_deriv_state_name gives every entry a name). Columns
 * of B are the actuators in model order, columns of P the parameters in the order given.
 * Matrices are row-major doubles.
 *
 * The tangent space. A hinge or slide's position entry is its angle or offset (rad, m). A ball
 * joint's three entries are a rotation vector δ in the body's own axes: the perturbed
 * quaternion is q·exp(δ/2) (MuJoCo's mj_integratePos with qvel = δ, dt = 1), so a column of A
 * for δ is the response to turning the body by δ about its own axes, and a row is the rotation
 * vector log(q⁺⁻¹·q⁺') of the perturbed result. A free joint's six are the displacement of the
 * body origin in world axes, then a rotation vector in body axes, as its qvel.
 * sim_state_perturb and sim_state_difference apply and measure these (for finite differences,
 * residuals and fitting).
 *
 * Units: an entry of A, B or P is (unit of the row) / (unit of the column): rad or m, rad/s or
 * m/s, A for the state; the command's unit for B (N·m, V, duty, rad, rad/s by actuator type);
 * the parameter's unit for P (sim_param_unit).
 *
 * What is differentiated: the step as sim_step takes it, for the Euler integrator (its implicit
 * joint damping included) and RK4 (with its dexp⁻¹-corrected rotation stages); hinge, slide,
 * ball and free joints; joint springs and dampers, armature, forces applied to bodies
 * (xfrc_applied), every actuator type (clamps of ctrlrange, current_limit and force_limit hold
 * their value: derivative 0 beyond them); joint limits, joint friction and contacts (a fixed
 * plane with a sphere, a capsule or a box; two spheres or capsules; a sphere or a capsule and a
 * box; condim 3 under the pyramidal cone) through the constraint solver's optimality condition with the active set held (at the
 * minimum of the solver's active set: an iteration-limited solve is differentiated as if
 * converged). Verlet and midpoint, and steps with other contacts or cones, return an error code
 * (sim_deriv_detail names the contact), never a zero.
 * docs/derivatives.md explains the layouts, the kinks at changes of active set and the checks.
 *
 * Ownership: sim_deriv_new allocates everything the derivatives need, sized for the model and
 * the parameter list; sim_deriv_free(&w) releases it (accepts NULL, nulls the pointer). No call
 * below allocates. A workspace belongs to one model and is used from one thread at a time (the
 * pool's worlds each take their own, sim_deriv_pool_step).
 */
#ifndef ACHILLES_SIM_DERIV_DERIV_H
#define ACHILLES_SIM_DERIV_DERIV_H

#include <stddef.h>

#include "sim/sim.h"

/* --- parameters (param.c) ------------------------------------------------------------------ */

/* The parameter families: kind, field name (as in the robot JSON), unit. Body fields are the
 * mass, the centre of mass in body axes and the rotational inertia about it in body axes (ixy
 * moves both symmetric entries); joint fields act on each of the joint's dofs. */
#define SIM_PARAM_FIELDS(X)                                                                    \
  X(BODY, mass, "kg")                                                                          \
  X(BODY, com_x, "m")                                                                          \
  X(BODY, com_y, "m")                                                                          \
  X(BODY, com_z, "m")                                                                          \
  X(BODY, ixx, "kg·m²")                                                                        \
  X(BODY, iyy, "kg·m²")                                                                        \
  X(BODY, izz, "kg·m²")                                                                        \
  X(BODY, ixy, "kg·m²")                                                                        \
  X(BODY, ixz, "kg·m²")                                                                        \
  X(BODY, iyz, "kg·m²")                                                                        \
  X(JOINT, damping, "N·m·s/rad or N·s/m")                                                      \
  X(JOINT, stiffness, "N·m/rad or N/m")                                                        \
  X(JOINT, springref, "rad or m")                                                              \
  X(JOINT, armature, "kg·m² or kg")                                                            \
  X(JOINT, frictionloss, "N·m or N")                                                           \
  X(ACTUATOR, gear, "1")                                                                       \
  X(ACTUATOR, kp, "N·m/rad")                                                                   \
  X(ACTUATOR, kd, "N·m·s/rad")                                                                 \
  X(ACTUATOR, kv, "N·m·s/rad")                                                                 \
  X(ACTUATOR, resistance, "Ω")                                                                 \
  X(ACTUATOR, kt, "N·m/A")                                                                     \
  X(ACTUATOR, ke, "V·s/rad")                                                                   \
  X(ACTUATOR, inductance, "H")

typedef enum sim_param_kind {
  SIM_PARAM_BODY = 0,
  SIM_PARAM_JOINT = 1,
  SIM_PARAM_ACTUATOR = 2,
} sim_param_kind;

typedef enum sim_param_field {
#define SIM_PARAM_ENUM(kind, field, unit) SIM_PARAM_##kind##_##field,
  SIM_PARAM_FIELDS(SIM_PARAM_ENUM)
#undef SIM_PARAM_ENUM
      SIM_PARAM_NFIELD
} sim_param_field;

/* One parameter: a field of body, joint or actuator `index` (a plain value). */
typedef struct sim_param {
  sim_param_field field;
  int index;
} sim_param;

/* Parses a comma-separated list of names KIND/NAME/FIELD: body/NAME/mass, joint/NAME/damping,
 * actuator/NAME/kp, ... (FIELD as in SIM_PARAM_FIELDS). NAME `*` takes every element the field
 * applies to, FIELD `*` every field that applies to the element. Writes up to `max` parameters
 * to out (out may be NULL to count) and returns how many the list names, or -1 with a message
 * in err naming the entry and what was expected: an unknown kind, name or field, or a field the
 * element does not have (stiffness of a ball joint, kp of a DC motor, inductance of a motor
 * without winding state, frictionloss 0 (no friction row to differentiate), damping of a fixed
 * joint). Names that repeat are kept once. */
int sim_param_parse(const sim_model *m, const char *list, sim_param *out, int max, char *err,
                    size_t err_sz);

sim_param_kind sim_param_kind_of(sim_param_field field);
/* "body/upper_arm/mass" into buf (truncated to buf_sz). */
void sim_param_name(const sim_model *m, sim_param p, char *buf, size_t buf_sz);
const char *sim_param_unit(sim_param_field field);
double sim_param_get(const sim_model *m, sim_param p);
/* Sets a parameter between steps (the model is otherwise immutable). The loader's derived
 * values that depend on it follow (a body's diagonal_inertia flag); the constraint stage's
 * constants (invweight0, meaninertia: sim_constraint_setconst) are held, so that derivatives
 * and steps agree; call sim_constraint_setconst to refresh them. Returns 0, or -1 with a message
 * when the value is out of the range the loader accepts (a mass <= 0, an inertia that is not
 * positive definite, a resistance <= 0, ...), leaving the model unchanged. */
int sim_param_set(sim_model *m, sim_param p, double value, char *err, size_t err_sz);

/* --- the state and its tangent space (state.c) ------------------------------------------- */

/* nx = 2·nv + na: the rows of A. */
int sim_deriv_nx(const sim_model *m);
/* Name of entry i of x: "<joint>.q" (hinge, slide), "<joint>.rx/.ry/.rz" (ball: rotation vector,
 * body axes), "<joint>.x/.y/.z/.rx/.ry/.rz" (free), then the velocities "<joint>.qd",
 * "<joint>.wx/.wy/.wz", "<joint>.vx/.vy/.vz/.wx/.wy/.wz", then "<actuator>.current". */
void sim_deriv_state_name(const sim_model *m, int i, char *buf, size_t buf_sz);
/* qpos ← qpos ⊕ scale·dq: dq (nv) a tangent vector (hinge, slide: added; ball and free
 * orientations: q·exp(scale·dq/2); free positions: added in world axes). */
void sim_state_perturb(const sim_model *m, double *qpos, const double *dq, double scale);
/* dq = qpos1 ⊖ qpos0, the tangent vector that sim_state_perturb maps qpos0 to qpos1 with
 * (orientations: the rotation vector log(q0⁻¹·q1), the shorter way round). */
void sim_state_difference(const sim_model *m, double *dq, const double *qpos1,
                          const double *qpos0);

/* --- step Jacobians (deriv.c) -------------------------------------------------------------- */

#define SIM_DERIV_ERRORS(X)                                                                    \
  X(SIM_DERIV_OK, 0, "ok")                                                                     \
  X(SIM_DERIV_EINTEGRATOR, -1,                                                                 \
    "no derivatives for this integrator (euler and rk4 have them)")                           \
  X(SIM_DERIV_ECONTACT, -2,                                                                    \
    "the step has a contact of a pair without derivatives yet (a fixed plane against a "        \
    "sphere, a capsule or a box, a sphere or a capsule against a sphere, a capsule or a box "   \
    "have them, with exceptions; sim_deriv_detail names the contact and why)")                 \
  X(SIM_DERIV_EARG, -3, "invalid argument")                                                   \
  X(SIM_DERIV_EREPLAY, -4,                                                                     \
    "a step recomputed in the backward pass left a state other than the forward pass's (the "  \
    "model or a state changed between the passes, or the loss wrote to its data)")               \
  X(SIM_DERIV_ECONE, -5,                                                                       \
    "the step has a contact whose cone has no derivatives yet (the pyramidal cone with condim " \
    "3 and impratio 1 has them; the elliptic cone has not; sim_deriv_detail names the contact)")

typedef enum sim_deriv_status {
#define SIM_DERIV_ENUM(name, value, text) name = value,
  SIM_DERIV_ERRORS(SIM_DERIV_ENUM)
#undef SIM_DERIV_ENUM
} sim_deriv_status;

const char *sim_deriv_strerror(int status);

typedef struct sim_deriv sim_deriv;

/* A workspace for the Jacobians of m's step with respect to the np parameters listed (params
 * may be NULL when np is 0; the list is copied). NULL with a message on failure (out of
 * memory). */
sim_deriv *sim_deriv_new(const sim_model *m, const sim_param *params, int np, char *err,
                         size_t err_sz);
void sim_deriv_free(sim_deriv **w);
int sim_deriv_nparam(const sim_deriv *w);
const sim_param *sim_deriv_params(const sim_deriv *w);

/* Takes one step from the state in d exactly as sim_step does (the same bits), and writes the
 * Jacobians of that step: A (nx × nx), B (nx × nu), P (nx × np), row-major; any may be NULL.
 * Returns SIM_DERIV_OK, or a negative sim_deriv_status when the step cannot be differentiated
 * (its integrator, contacts): the step is still taken and A, B, P are left unwritten. To
 * linearize at a state without moving on, save it first (sim_snapshot_save) and restore it. */
int sim_deriv_step(const sim_model *m, sim_data *d, sim_deriv *w, double *A, double *B,
                   double *P);

/* After a step that returned SIM_DERIV_ECONTACT or SIM_DERIV_ECONE: which contact, its geoms'
 * types and names and what is missing ("contact 0, box 'crate' against sphere 'ball': pairs
 * with derivatives: ..."); "" after a step without such an error. Owned by w. */
const char *sim_deriv_detail(const sim_deriv *w);

/* Forward sensitivities along a window (fitting parameters to a log): S, nx × (nx + np)
 * row-major, holds ∂xₜ/∂[x₀ | θ] (columns: the initial state's nx tangent entries, then the np
 * parameters). One step from the state in d takes the step (as sim_deriv_step) and updates it,
 *   S ← A·S + [0 | P],
 * so that after t steps from S = [1 | 0] (sim_deriv_sensitivity_init) it holds ∂xₜ/∂x₀ and
 * ∂xₜ/∂θ. Returns as sim_deriv_step (S is left unchanged on an error). */
void sim_deriv_sensitivity_init(const sim_deriv *w, double *S);
int sim_deriv_sensitivity_step(const sim_model *m, sim_data *d, sim_deriv *w, double *S);

/* The pool's worlds each take one step with its Jacobians, in parallel: world i uses
 * workspace w[i] (one per world, of the pool's model) and writes A + i·nx·nx, B + i·nx·nu,
 * P + i·nx·np (any of A, B, P may be NULL); status[i] gets its sim_deriv_step status. */
struct sim_pool;
void sim_deriv_pool_step(struct sim_pool *p, sim_deriv **w, double *A, double *B, double *P,
                         int *status);

#endif
