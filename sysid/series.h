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

#include <stddef.h>

#include "sensors/sensors.h"
#include "sim/sim.h"

typedef struct sysid_series {
  int n;              /* samples */
  double *t;          /* n times, s, strictly increasing */
  int njoint;         /* logged joints */
  char **joint_name;  /* njoint names */
  double *q;          /* n × njoint measured positions */
  int nact;           /* logged actuators */
  char **act_name;    /* nact names */
  double *u;          /* n × nact inputs, in the actuator's ctrl units */
  int from_log;       /* 1: read from an Achilles log (sysid_series_load_log) */
  char source[256];   /* where it came from (file name), for messages */
  char warning[512];  /* what the reader accepted but the user should know ("" when nothing):
                         a log cut by a killed run, a log of a robot of another name */
} sysid_series;

/* Releases what s owns and zeroes it (accepts NULL and a zeroed series). */
void sysid_series_free(sysid_series *s);

/* --- readers (docs/sysid.md section 2): each fills a zeroed series and returns 0, or -1 with a
 * message naming the place (file, line or record, column) and leaves s zeroed. -------------- */

/* A CSV of a real arm: a header line of column names, then one row per time. `map` (NULL or
 * "" for the default) says which column is what, comma-separated entries
 *   time=COLUMN[*K]        the time column (default "time"), s after the factor K
 *   JOINT=COLUMN[*K]       joint JOINT's reading, rad or m after the factor K
 *   JOINT=COLUMN/N         joint JOINT's reading in encoder counts, N counts a turn (2π/N rad each)
 *   ACTUATOR=COLUMN[*K]    actuator ACTUATOR's input, in its ctrl units after the factor K
 * Without a map every column named as a joint of m is that joint's reading (rad or m) and every
 * column named as an actuator of m that actuator's input; a map names every column that is read.
 * Times must increase strictly; a blank joint cell is a missing reading (NAN), a blank input cell
 * holds the input of the row before (0 before the first). Non-finite cells are errors. */
int sysid_series_load_csv(sysid_series *s, const char *path, const sim_model *m, const char *map,
                          char *err, size_t err_sz);

/* An Achilles log (`achilles run --record`, docs/logs.md): the joint readings are the encoder
 * samples of `set` (the sensors file that recorded the run: it says which joint each encoder
 * reads), taken from the angle channel (unwrapped when the encoder wraps), else from counts ×
 * the encoder's step; an invalid sample is a missing reading. One row per instant at which an
 * encoder sample was published. Inputs are the command records: an accepted value (clamped to
 * the actuator's ctrlrange when the record says "clamped") holds until the next one, a
 * watchdog record sets its value; rejected ones are skipped. Every actuator of the log's header
 * must be one of m's. Damaged records are errors naming their record and byte. */
int sysid_series_load_log(sysid_series *s, const char *path, const sim_model *m,
                          const sens_set *set, char *err, size_t err_sz);

/* `--servo-goals` on an Achilles log (docs/sysid.md section 10.1): the inputs of the nsv servos
 * sv (series actuators, X-series models) become their Goal Positions, rad ((ticks − 2048)·2π/4096),
 * as the log's servo records (docs/logs.md) say each servo's loop took them: a goal recorded at
 * step k is the input of the row of step k and holds until the next. The rows before the first at
 * which every servo runs with torque on and its factory settings (the fit's servo loop) are left
 * out. s was read from the log at path (sysid_series_load_log). 0, or -1 with a message naming the
 * place: no servo record for a servo (a log of version 1), a later record that takes a servo off
 * the factory settings or turns its torque off, a field that is not the model's, a damaged
 * record. */
struct sysid_servo;
int sysid_series_servo_goals(sysid_series *s, const char *path, const struct sysid_servo *sv,
                             int nsv, char *err, size_t err_sz);

/* Either reader, told apart by the file's first bytes as hil_series_load does; `map` applies to
 * a CSV (a log with a map is an error: its columns are the recording's own). */
int sysid_series_load(sysid_series *s, const char *path, const sim_model *m, const sens_set *set,
                      const char *map, char *err, size_t err_sz);

/* Appends sample (t, q[njoint], u[nact]) growing the arrays; 0, or -1 when out of memory. Used
 * by the readers; *cap is the capacity in samples (0 at first). */
int sysid_series_push(sysid_series *s, int *cap, double t, const double *q, const double *u);

#endif
