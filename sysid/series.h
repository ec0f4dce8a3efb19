/* sysid/series.h: what an arm did, as system identification reads it.
 *
 * A series is a log cut to what the fit needs, whatever file it came from (an Achilles log of
 * `run --record`, or a CSV of a real arm read through a column map): n samples at increasing
 * times, at each the measured position of every logged joint and the input applied to every
 * logged actuator. Inputs are in the units the actuator's `ctrl` takes in the robot file (N·m
 * for a motor, V or duty for a DC motor, rad for a position servo's goal, ...), so the fit can
 * hold them between samples and hand them to the simulator as they are.
 *
 * Layout: row-major by sample. q[i·njoint + j] is joint j's measured position at t[i] (rad or m,
 * NAN where the log has no reading at that sample); u[i·nact + k] actuator k's input at t[i].
 * Joints and actuators are named as in the robot file; matching by name is how a log of another
 * robot is told apart.
 *
 * Ownership: a series owns its arrays and names; sysid_series_free releases them.
 */
#ifndef ACHILLES_SYSID_SERIES_H
#define ACHILLES_SYSID_SERIES_H

typedef struct sysid_series {
  int n;              /* samples */
  double *t;          /* n times, s, strictly increasing */
  int njoint;         /* logged joints */
  char **joint_name;  /* njoint names */
  double *q;          /* n × njoint measured positions */
  int nact;           /* logged actuators */
  char **act_name;    /* nact names */
  double *u;          /* n × nact inputs, in the actuator's ctrl units */
  char source[256];   /* where it came from (file name), for messages */
} sysid_series;

/* Releases what s owns and zeroes it (accepts NULL and a zeroed series). */
void sysid_series_free(sysid_series *s);

#endif
