/* tests/sysid/arm_log.h: logs of a simulated arm with known parameters, as a real arm's would
 * read — the fixture of the sysid suites.
 *
 * The arm: base yaw (z), shoulder and elbow pitch (y), torque motors (ctrl in N·m), damping,
 * armature and Coulomb friction in every joint, no contacts or stops (arm_json). A firmware-like
 * PD controller at the log rate tracks exciting set points (sums of sines, a chirp, steps) from
 * the *measured* angles and its torque is what the log records as applied. The sensor of each
 * joint is the sensors/ library's chain (white noise, quantization) behind its delay line
 * (latency): reading(tᵢ) = chain(q(tᵢ − latency)).
 *
 * Ownership: arm_log_make fills a series the caller releases with sysid_series_free.
 */
#ifndef ACHILLES_TESTS_SYSID_ARM_LOG_H
#define ACHILLES_TESTS_SYSID_ARM_LOG_H

#include <stdint.h>

#include "sim/sim.h"
#include "sysid/series.h"
#include "sysid/sysid.h"

#define ARM_NJ 3

/* The arm's parameters the fit looks for. */
typedef struct arm_params {
  double damping[ARM_NJ], armature[ARM_NJ], frictionloss[ARM_NJ];
  double mass_upper, mass_fore; /* kg */
  int dc_motors;                /* 0: torque motors (ctrl N·m); 1: 12 V DC gearmotors driven
                                   by duty (kt = ke = 0.02, R = 2 Ω, gear 100, η 0.8); 2:
                                   position servos (kp 20 N·m/rad, kd 0.5 N·m·s/rad; the log's
                                   input is the set point itself) */
} arm_params;

/* The truth: damping 0.05/0.08/0.05, armature 0.002/0.003/0.002, frictionloss 0.02/0.03/0.02,
 * masses 0.6 and 0.4 kg (the club arm's figures). */
void arm_truth(arm_params *p);
/* Each value of the truth off by 30–50 % (alternating up and down). */
void arm_guess(arm_params *p);

/* The arm's robot file with these parameters (timestep h, Euler) into buf; returns buf. */
char *arm_json(char *buf, size_t sz, const arm_params *p, double h);

typedef struct arm_log_opts {
  double duration;     /* s */
  double rate_hz;      /* log rate (the controller's too) */
  double h;            /* the simulator's timestep; rate_hz·h·k = 1 for an integer k */
  double latency;      /* s, a multiple of h */
  double white_sigma;  /* rad */
  double resolution;   /* rad (0: none) */
  int still_joint;     /* -1, or a joint held at 0 (its set point and torque 0) */
  uint64_t seed;
} arm_log_opts;

/* 10 s at 1 kHz, h = 0.5 ms, latency 1.5 ms, white 2e-4 rad, 14-bit encoder (2π/16384). */
void arm_log_defaults(arm_log_opts *o);

/* Simulates the arm m (made from arm_json) and fills s and meas (ARM_NJ entries: the latency,
 * scale 1, offset 0 and σ = √(white² + resolution²/12)). 0, or -1 when the arm blows up. */
int arm_log_make(const sim_model *m, const arm_log_opts *o, sysid_series *s, sysid_meas *meas);

/* The fit's parameter list for the arm and the truth/guess values in the same order. */
extern const char *const arm_param_list;
int arm_param_values(const arm_params *p, double *out); /* returns 11 */

/* The group fixture of the suites that read one log: the arm at its truth (arm_json) and a log
 * of duration_s made with the other defaults (arm_log_defaults). arm_fixture_setup puts a new
 * one into *state: 0, or -1 when the log could not be made; arm_fixture_teardown frees it. */
typedef struct arm_fixture {
  sim_model *m;
  sysid_series s;
  sysid_meas meas[ARM_NJ];
} arm_fixture;
int arm_fixture_setup(void **state, double duration_s);
int arm_fixture_teardown(void **state);

#endif
