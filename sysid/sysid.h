/* sysid/sysid.h: system identification — fit a robot's parameters to a log of what the arm did.
 *
 * The problem. A series (series.h) says, at its sample times tᵢ, what was applied to each
 * actuator (uᵢ) and what each joint's sensor read (yᵢ). The fit chooses model parameters θ
 * (damping, friction, armature, masses, ... by name, below) so that the simulator, driven by the
 * logged inputs, reads what the sensors read:
 *
 *   minimize ½·Σᵢⱼ rᵢⱼ²,   rᵢⱼ = (scaleⱼ·qⱼ(tᵢ − latencyⱼ; θ, x₀) + offsetⱼ − yᵢⱼ) / σⱼ
 *
 * where qⱼ(t) is joint j's simulated position (sysid_meas: the deterministic part of its sensor;
 * σⱼ its white noise ⊕ quantization), linearly interpolated between the model's steps.
 *
 * Multiple shooting. The log is cut into windows of `window` seconds; each is simulated on its
 * own from an initial state taken from the log (q from the readings, q̇ from a smoothed
 * difference of them) or, with fit_initial_state, fitted as extra unknowns starting there. A
 * wrong guess cannot diverge over a minute of data, and the windows' residuals are independent.
 * Inputs are held between samples (zero-order hold at the model's timestep h: the step that
 * starts at τ takes the input of the last sample at or before τ); the log's sample times need
 * not be multiples of h.
 *
 * The Jacobian of the residuals comes from the step Jacobians (sim/deriv/deriv.h): along each
 * window the forward sensitivities S ← A·S + [0 | P] give ∂x/∂[x₀ | θ] at every step, never
 * finite differences of rollouts. The least squares are GSL's trust-region Levenberg–Marquardt
 * in its large-problem form (gsl_multilarge_nlinear, which takes J·u, Jᵀ·u and JᵀJ: the
 * Jacobian is kept as its nonzero blocks, as a minute at 1 kHz with fitted window states would
 * be ~0.5 GB dense) on unconstrained coordinates: a quantity that must stay
 * positive (mass, damping, armature, frictionloss, inertias, gains, resistance, kt, ...) is
 * fitted as log θ, a bounded one as lo + (hi − lo)·logistic(φ), others as θ itself.
 *
 * Friction (and contacts) enter through the constraint solver, which sim/deriv differentiates
 * with the active set held: at a stick–slip transition the Jacobian is one side's (measured:
 * 2.8e-3 of a column's scale where a stiff servo makes a joint stick and slip within the
 * differences' step, 1e-7–1e-5 elsewhere; `ctest -R test_sysid -V` prints the figures); the fit
 * goes through them. When masses or armatures change, the constraint stage's constants
 * (sim_constraint_setconst) are refreshed as a robot file with those values would load, a
 * dependence the Jacobian leaves out (1.9e-3 of a column).
 *
 * Parameters by name, KIND.NAME.FIELD with fnmatch(3) wildcards in NAME (and FIELD), comma
 * separated:
 *   joint.NAME.damping | armature | frictionloss | stiffness | springref
 *   body.NAME.mass | com_x | com_y | com_z | ixx | iyy | izz | ixy | ixz | iyz
 *   body.NAME.com       = com_x, com_y, com_z      body.NAME.inertia = ixx, iyy, izz
 *   actuator.NAME.gear | kp | kd | kv | resistance | kt | ke | inductance
 *   actuator.NAME.gear_friction, actuator.NAME.rotor_inertia: a smart servo's gearbox, which the
 *     loader folds into its joint (sim/servo_spec.h): they name the joint's frictionloss and
 *     armature (and are reported under those names).
 * A wildcard takes the elements that have the field (joint.*.frictionloss skips a joint whose
 * frictionloss is 0: it has no friction row to differentiate; body.* skips the world); a name
 * without wildcards that lacks it is an error. sim_param (deriv.h) holds them.
 *
 * Bounds, "ENTRY=LO:HI,..." with ENTRY as in the list (wildcards too) and LO or HI empty for
 * none: "joint.*.damping=0:1,body.forearm.mass=0.1:". A later entry overrides an earlier one.
 *
 * Errors are values: functions that can fail return -1 (or NULL) with a message in err naming
 * the place — the parameter entry, the series joint or actuator the model lacks (a log of
 * another robot), the sample with a non-finite value, a log shorter than one window.
 *
 * Ownership: sysid_problem_new copies the model, the series' arrays it needs and the options;
 * the caller keeps and frees its own. sysid_problem_free releases everything the problem owns,
 * sysid_report_free what sysid_fit put in a report. One problem is used from one thread.
 */
#ifndef ACHILLES_SYSID_SYSID_H
#define ACHILLES_SYSID_SYSID_H

#include <stddef.h>

#include "sim/deriv/deriv.h"
#include "sim/sim.h"
#include "sysid/series.h"

/* The deterministic part of a joint's sensor, as the fit models it. */
typedef struct sysid_meas {
  double latency;       /* s, >= 0: the reading at t is the true position at t − latency */
  double scale, offset; /* reading = scale·q + offset (before quantization); scale != 0 */
  double sigma;         /* measurement error std (white noise ⊕ quantization step/√12), rad or
                           m, > 0: weights the joint's residuals */
} sysid_meas;

/* An exact reading: latency 0, scale 1, offset 0, sigma 1e-3. */
void sysid_meas_default(sysid_meas *m);

/* A smart servo driven by its Goal Position (docs/sysid.md section 10): the series actuator
 * `actuator` (of type servo) takes the servo's Goal Position as input, in rad (the joint angle it
 * asks for; the register's whole ticks are 2048 + angle·4096/2π), and the servo's own firmware
 * loop (hil/servo's dxl_servo_step: the position PID at the model's default gains and limits,
 * the PWM and the motor with its back-EMF and current limit) turns it into the joint's torque at
 * every step of the simulation, the loop's feedback included in the Jacobian. */
typedef struct sysid_servo {
  char actuator[SIM_NAME_MAX];
  int model;              /* Dynamixel model number: 1060 (XL430-W250), 1020 (XM430-W350) */
  int joint_sensor;       /* 0: the series' readings of its joint are the servo's Present
                             Position (its encoder's output, whose hysteresis holds it half a
                             tick behind a moving joint: modelled, then the joint's sysid_meas);
                             1: another sensor's, read as the joint's true angle */
  double sensor_step;     /* rad: the resolution of the joint's encoder sensor when the servo
                             reads its position from it (as the bus does with one configured:
                             hil/servo/servo_bus.c), rounded to it before the servo's encoder;
                             0: the servo reads the joint itself */
  int feedback_logged;    /* 1: at each step whose sample the series has, the loop reads the
                             joint's logged reading (as the series holds it, rad) instead of the
                             simulated joint through sensor_step: the encoder samples the bus fed
                             the servo, so the loop gives the torques the servo gave, whatever
                             the simulated joint's ticks (an Achilles log of every step: docs/
                             sysid.md section 10.1); the joint's readings are then read as the
                             joint's angle (as joint_sensor 1) */
} sysid_servo;

typedef struct sysid_options {
  double window;          /* s, multiple-shooting window length (default 0.5); the last
                             window takes the remainder when it is at least half a window, else
                             the one before it grows. Short windows keep the fit convex: on
                             tests/sysid's arm from parameters 30–50 % off, 0.5 s windows
                             converge in ~12 iterations, 1 s in ~50, and 2 s windows (open-loop
                             torques over 2 s of a wrong arm) stop in a local minimum */
  int fit_initial_state;  /* 1 (default): each window's q and q̇ are fitted too (unknowns
                             2·nv per window); 0: each window starts from the log, which is
                             faster but biased by the velocity estimate's error (tests/sysid's
                             arm: frictionloss 22 % off, residual RMS 20–80 σ) */
  double velocity_span;   /* s, half width of the smoothed difference that estimates q̇ from
                             the readings at a window's start (default 0.01: a local quadratic
                             fit over ±span) */
  int max_iter;           /* trust-region iterations (default 100) */
  double xtol, gtol, ftol; /* GSL's stop rules (gsl_multilarge_nlinear_test; defaults 1e-10,
                              1e-10, 1e-12) */
  double weak_ratio;      /* a singular value of the scaled Jacobian below weak_ratio × the
                             largest names a combination the log cannot determine (default
                             1e-6); so does one whose standard error exceeds ±100 % of the
                             parameters' magnitudes (sysid/identify.c) */
  const sysid_servo *servo; /* nservo servos driven by their Goal Position (above; copied by
                               sysid_problem_new); NULL: every input is its actuator's ctrl */
  int nservo;
  /* called after each iteration: iteration (1, 2, ...), cost ½·Σr², and the step's norm in
     the fit's coordinates; NULL for none */
  void (*progress)(void *ctx, int iter, double cost, double step);
  void *ctx;
} sysid_options;

void sysid_options_default(sysid_options *o);

/* Opaque: a copy of the model, the series' samples, the parameters, the windows, workspaces. */
typedef struct sysid_problem sysid_problem;

/* A problem: fit `params` (list above) of m to series s. bounds may be NULL (positive
 * quantities kept positive, others free). meas: one per series joint, in the series' order
 * (NULL: sysid_meas_default for all). o: NULL for sysid_options_default. Every series joint
 * must name a 1-dof (hinge or slide) joint of m and every series actuator an actuator of m;
 * actuators of m that the series lacks get ctrl 0. Returns NULL with a message in err on bad
 * input (see above) or when out of memory. */
sysid_problem *sysid_problem_new(const sim_model *m, const sysid_series *s, const char *params,
                                 const char *bounds, const sysid_meas *meas,
                                 const sysid_options *o, char *err, size_t err_sz);
/* Releases p and nulls *p (accepts NULL and a NULL *p). */
void sysid_problem_free(sysid_problem **p);

/* Parameters and counts. */
int sysid_nparam(const sysid_problem *p);
int sysid_nwindow(const sysid_problem *p);
/* The fit's unknowns: np parameters, then (fit_initial_state) 2·nv per window. */
int sysid_nunknown(const sysid_problem *p);
/* Residuals: one per finite reading (NAN readings are missing samples), but for the first
 * readings whose true time t − latency falls before the log's first sample (no input known
 * there). */
int sysid_nresidual(const sysid_problem *p);
/* Parameter i: the sim_param (deriv.h) and its name "joint.elbow.damping". */
sim_param sysid_param(const sysid_problem *p, int i);
const char *sysid_param_name(const sysid_problem *p, int i);

/* Evaluation in the fit's own coordinates (for checks and for other optimizers, e.g. NLopt
 * in tools/bench). x0 (nunknown) gets the starting point: the model's values and the windows'
 * states from the log. sysid_residual sets the parameters of x into the problem's model,
 * simulates every window and writes r (nresidual) and, when J is not NULL, J = ∂r/∂x
 * (nresidual × nunknown, row-major) from the sensitivities. Returns 0, or -1 with a message
 * (a value outside what the model accepts, a window whose state turned non-finite, a step
 * sim/deriv cannot differentiate). */
void sysid_start(const sysid_problem *p, double *x0);
int sysid_residual(sysid_problem *p, const double *x, double *r, double *J, char *err,
                   size_t err_sz);
/* Parameter values (np, model units) of a point x of the fit's coordinates. */
void sysid_values(const sysid_problem *p, const double *x, double *theta);
/* Simulated seconds so far (steps × h over every evaluation): the work measure of the
 * benchmarks. */
double sysid_simulated_seconds(const sysid_problem *p);

/* --- the fit and its report ------------------------------------------------------------------ */

typedef struct sysid_param_result {
  char name[160];        /* "joint.elbow.damping", "body.forearm.com_x", ... */
  int kind;              /* sim_param_kind: SIM_PARAM_BODY / JOINT / ACTUATOR */
  char element[SIM_NAME_MAX]; /* the body, joint or actuator name as in the robot file */
  char field[32];        /* the sim_param field name (mass, com_x, damping, kt, ...) */
  const char *unit;      /* sim_param_unit */
  double initial, value; /* model units */
  double stderr_;        /* standard error, from s²·(JᵀJ)⁻¹ with s² = Σr²/(m − n) (the
                            residual variance; ~1 when the σ are right); NAN when not
                            identifiable */
  int identifiable;      /* 0 when the log cannot determine it: it weighs in a combination
                            listed in weak (a joint that never moves, a mass a damping mimics) */
} sysid_param_result;

typedef struct sysid_corr {
  int i, j;              /* parameter indices, i < j */
  double r;              /* their correlation in the fit's covariance, |r| > 0.9 */
} sysid_corr;

typedef struct sysid_report {
  int np;
  sysid_param_result *param; /* np */
  int ncorr;
  sysid_corr *corr;      /* ncorr pairs with |r| > 0.9 */
  int njoint;            /* the series' joints, in its order */
  char (*joint)[SIM_NAME_MAX];
  double *rms_before, *rms_after; /* per series joint, reading units (rad or m): the
                                     unweighted residual over its readings */
  double *max_before, *max_after;
  int iterations;        /* steps taken (the progress callback's calls) */
  double seconds;        /* wall-clock time of the fit */
  double cost_before, cost_after; /* ½·Σr² (weighted residuals) */
  int nresidual, nunknown;
  int status;            /* GSL's status of the last iteration (0: converged) */
  char stop[64];         /* why it stopped: "small step", "small gradient", "small cost
                            change", "iteration limit", ... */
  int nweak;
  char (*weak)[256];     /* parameters or combinations the log cannot determine, in words:
                            "joint.base.damping (never moves)", "0.71·body.a.mass −
                            0.70·joint.a.damping", ... */
  double *singular_values; /* of the scaled Jacobian's parameter columns (each column scaled
                              by max(|θ|, its bound scale)), np, descending */
} sysid_report;

/* Runs the fit from the model's values and fills r (zeroed first; free it with
 * sysid_report_free). After it the problem's model holds the fitted values. Returns 0 (also
 * when the fit stops at the iteration limit: r->stop says so), or -1 with a message. */
int sysid_fit(sysid_problem *p, sysid_report *r, char *err, size_t err_sz);
void sysid_report_free(sysid_report *r);

/* Simulated readings over the whole series, n × njoint like series.q (every sample lies in a
 * window; the first ones, of true times before the log, read the log's first state), with the
 * initial (which = 0: the model's values, windows from the log) or fitted
 * (1: after sysid_fit, with its fitted window states) parameters. Returns 0, or -1 when the
 * simulation fails (or which = 1 before a fit). */
int sysid_simulate(sysid_problem *p, int which, double *q_out);

/* The problem's model: after sysid_fit, with the fitted values (for --out). Owned by p. */
const sim_model *sysid_fitted_model(const sysid_problem *p);

#endif
