/* sim/muscle.h: MuJoCo 2.2.2's muscle model (sim/muscle.c), used by the actuator stage and the
 * load-time length ranges (sim/muscle_range.c).
 *
 * The actuator length l maps to the normalized length L = range[0] + (l − lr[0])/L0, with
 * L0 = (lr[1] − lr[0])/(range[1] − range[0]) the optimal length (lr: the lengthrange), and the
 * velocity to V = v/(L0·vmax). The force along the tendon (negative: a muscle pulls) is
 *   force = −F·FL(L)·FV(V)·act − F·FP(L),    F = force, or scale/acc0 when force < 0,
 * with FL a bump of four half-parabolas between lmin and lmax (1 at L = 1), FV 0 below V = −1
 * rising to fvmax when lengthening, FP the passive spring beyond L = 1. The activation follows
 * d(act)/dt = (u − act)/τ, u the command clamped to [0, 1], τ = tau_act·(0.5 + 1.5·act) when
 * rising and tau_deact/(0.5 + 1.5·act) when falling (Millard et al. 2013). */
#ifndef ACHILLES_SIM_MUSCLE_H
#define ACHILLES_SIM_MUSCLE_H

#include "sim/model.h"

/* −F·FL·FV: the force per unit activation (mju_muscleGain) */
double sim__muscle_gain(const sim_muscle *p, double len, double vel, const double lr[2],
                        double acc0);
/* −F·FP: the passive force (mju_muscleBias) */
double sim__muscle_bias(const sim_muscle *p, double len, const double lr[2], double acc0);
/* d(act)/dt (mju_muscleDynamics) */
double sim__muscle_dynamics(const sim_muscle *p, double ctrl, double act);

#endif
