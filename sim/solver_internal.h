/* sim/solver_internal.h: what the two constraint solvers share, for solver.c (the entry and
 * CG) and solver_newton.c; defined in solver_cost.c, which calls neither (the dependency goes
 * solver.c → solver_newton.c → solver_cost.c). Not part of the library's interface. */
#ifndef ACHILLES_SIM_SOLVER_INTERNAL_H
#define ACHILLES_SIM_SOLVER_INTERNAL_H

#include "sim/sim.h"

/* The iteration's figures besides the arrays of sim_data (qacc, sol_*, efc_*). */
typedef struct sim__solver_ctx {
  double cost;     /* total cost at d->qacc: ½δᵀMδ + Σ row costs, δ = qacc − qacc_smooth */
  double gauss[3]; /* the Gauss term along the search: gauss[0] + gauss[1]·α + gauss[2]·α² */
  int ncone;       /* elliptic contacts on their cone's surface (Newton adds their Hessians) */
  int lsiter;      /* cost evaluations of the last line search */
} sim__solver_ctx;

/* out[i] = J_i·x (− sub_i when sub is given), over each row's nonzeros (efc_ind) */
void sim__mul_j(const sim_model *m, const sim_data *d, double *out, const double *x,
                const double *sub);

/* Each row's state and force at jar = J·a − aref, qfrc_constraint = Jᵀ·force, and the rows'
 * cost (returned); with `hessian`, each elliptic contact on its cone gets its cone Hessian in
 * con_H (MuJoCo's mj_constraintUpdate). */
double sim__constraint_update(const sim_model *m, sim_data *d, const double *jar, int hessian);

/* Everything at the current d->qacc: δ (in d->scratch, kept until the next move), sol_Mdelta =
 * M·δ, efc_jar, the rows (as above), ctx->cost, and sol_grad = M·δ − qfrc_constraint. */
void sim__solver_evaluate(const sim_model *m, sim_data *d, sim__solver_ctx *ctx, int hessian);

/* Moves d->qacc by alpha along sol_search, updating M·δ, δ and jar by the search's products
 * (sol_Mv, efc_Jv) as MuJoCo does, then the rows, cost and gradient as sim__solver_evaluate. */
void sim__solver_move(const sim_model *m, sim_data *d, sim__solver_ctx *ctx, double alpha,
                      int hessian);

/* MuJoCo's line search along sol_search from d->qacc (engine_solver.c's CGsearch): Newton
 * steps on the one-dimensional cost, bracketed, until its slope is below 1 % of the tolerance
 * (scaled by the search's length, meaninertia and nv), at most 50 evaluations. Returns the step
 * α (0: no improvement); leaves M·search in sol_Mv and J·search in efc_Jv. */
double sim__line_search(const sim_model *m, sim_data *d, sim__solver_ctx *ctx);

/* The first search direction, −sol_Mgrad, and the statistics cleared. */
void sim__solver_start(const sim_model *m, sim_data *d);

/* After a step from a point of cost oldcost: records the scaled improvement and gradient in
 * d->solver and returns 1 when either is below the tolerance (MuJoCo's termination). */
int sim__solver_done(const sim_model *m, sim_data *d, double oldcost, const sim__solver_ctx *ctx);

/* a cost or gradient figure scaled as MuJoCo's tolerance is: x / (meaninertia · max(1, nv)) */
double sim__solver_rescale(const sim_model *m, double x);

/* solver_newton.c: the Newton iterations from d->qacc (MuJoCo's mj_solNewton); fills
 * d->solver's iterations, cost, improvement and gradient. */
void sim__solve_newton(const sim_model *m, sim_data *d);

#endif
