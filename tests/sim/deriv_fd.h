/* tests/sim/deriv_fd.h: step Jacobians by central finite differences of sim_step itself, in the
 * tangent convention of sim/deriv/deriv.h, the independent reference of the derivative tests
 * and the baseline of tools/bench_deriv.
 *
 * Each column perturbs one input by ±ε (and ±2ε for the fourth order) from the state in d,
 * steps a scratch copy, and differences the results (positions by sim_state_difference, so
 * quaternions are measured in the tangent space). d is left unchanged, the model too
 * (parameters are put back exactly). Step sizes (fd_steps) are absolute for the state and
 * commands and relative for parameters (to |θ|, or to a scale of the family when θ is small:
 * a body's largest inertia entry, 0.1 m for a COM, 1e-3 otherwise).
 *
 * Errors: the two-point stencil (f(ε) − f(−ε))/2ε, 2 steps per column (2·(nx + nu + np) in
 * all, the benchmark's baseline), errs by ε²·f'''/6 from truncation and u·|x⁺|/ε from rounding
 * (u = 1.1e-16): about 1e-10 absolute at best (ε ≈ 1e-6), measured here as up to 3e-9 on
 * derivatives of 1e-6 to 1e-5, too coarse for a 1e-9 test. The fourth-order stencil
 * (−f(2ε) + 8f(ε) − 8f(−ε) + f(−2ε))/12ε errs by ε⁴·f⁽⁵⁾/30, so ε = 1e-3 leaves rounding near
 * 1e-13 and truncation near it: the reference of the tests (fd_default_steps). Measured on the
 * random trees of test_deriv_fd, the worst entry's distance to the analytic value falls as ε
 * grows from 1e-4 (1.8 of the tolerance) through 6e-4 (0.47) and 1e-3 (0.25) to 2e-3 (0.15): it
 * is the differences' rounding, not the derivatives. Parameters take 1e-2 relative: with
 * constraint rows the converged solver's own rounding (about 1e-13 of q̈) divided by a step of
 * a small parameter (an inertia of 1e-3 kg·m²) otherwise reaches 1e-7 (test_deriv_constraint). */
#ifndef ACHILLES_TESTS_SIM_DERIV_FD_H
#define ACHILLES_TESTS_SIM_DERIV_FD_H

#include "sim/deriv/deriv.h"

typedef struct fd_steps {
  double q, v, act, ctrl; /* absolute: rad or m, rad/s or m/s, A, command units */
  double param;           /* relative to |θ| (or to its family's scale) */
  int order;              /* 2: (f(ε) − f(−ε))/2ε; 4: the fourth-order central stencil */
} fd_steps;

/* The tests' reference: fourth order, 1e-3 for the state and commands, 1e-2 relative for
 * parameters (ACHILLES_FD_STEP sets all five). */
fd_steps fd_default_steps(void);
/* The plain central differences: second order, 1e-6. */
fd_steps fd_plain_steps(void);

/* A (nx × nx), B (nx × nu), P (nx × np), row-major, any may be NULL; scratch is a sim_data of m.
 * Returns 0, or -1 when a parameter could not be set (the message in err). */
int fd_step_jacobians(sim_model *m, const sim_data *d, sim_data *scratch, const sim_param *params,
                      int np, fd_steps eps, double *A, double *B, double *P, char *err,
                      size_t err_sz);

/* The tolerance of the derivative tests: an entry passes when |analytic − FD| <= FD_REL_TOL·|FD|
 * or <= FD_ABS_TOL (a derivative near 0). */
#define FD_REL_TOL 1e-6
#define FD_ABS_TOL 1e-9

/* A, B and P (for the comma-separated parameter list, NULL for none) of one sim_deriv_step from
 * the state in d, against fd_step_jacobians with fd_default_steps; d is left unchanged. Prints
 * the worst entry of each (always when verbose, else when it fails) and returns the worst
 * |analytic − FD| / max(FD_REL_TOL·|FD|, FD_ABS_TOL) (<= 1 passes). Fails the cmocka test when
 * a step cannot be differentiated. */
double fd_check_step(sim_model *m, const sim_data *d, const char *params, int verbose);

/* The same with the given steps. */
double fd_check_step_with(sim_model *m, const sim_data *d, const char *params, fd_steps eps,
                          int verbose);

/* The active set at the state in d (after sim_forward), as a string, per row: Q (quadratic),
 - and + (friction at its bound, force +F and −F), s (satisfied); a contact's four edges
 * among them, so a contact found or lost changes it too. out holds 4·nefc_max + 1 chars. */
void fd_row_states(const sim_model *m, const sim_data *d, char *out);
/* Fails the test unless every point the stencil of eps reaches (each q and v moved by ±2ε) has
 * the active set `rows` (at most 1023 rows). */
void fd_assert_one_active_set(const sim_model *m, const sim_data *d, const char *rows,
                              fd_steps eps);
/* The same as a test: 1 when every point has that active set. */
int fd_one_active_set(const sim_model *m, const sim_data *d, const char *rows, fd_steps eps);

/* dst's state arrays and time become src's (SIM_STATE_ARRAYS). */
void fd_copy_state(const sim_model *m, sim_data *dst, const sim_data *src);

#endif
