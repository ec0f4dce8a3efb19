/* sensors/sensors.h: simulated sensors attached to a robot model.
 *
 * A sensor set is loaded once from JSON (format: docs/sensors.md) against a sim_model. After the
 * caller has brought the derived arrays of sim_data up to date (sim_step, then sim_forward), it
 * calls sens_set_update(): every sensor that is due takes a sample of the true state, runs it
 * through its processing chains (chain.h) and publishes a sens_sample. The physics is never
 * touched; all randomness comes from per-sensor streams of one seed (rng.h), so the same seed,
 * config and inputs give bit-identical sensor streams.
 *
 * Sensor types and their channels (units):
 *  - encoder: "counts" (signed 32-bit counter that wraps), "angle" (rad), "velocity" (rad/s, from
 *    consecutive counts, as firmware would compute it), "index" (1 on the sample in which the
 *    index mark at angle 0 mod 2π was crossed, else 0). One chain ("angle") in rad.
 *  - imu: "gyro.x/y/z" (rad/s, body angular velocity) and "accel.x/y/z" (m/s², specific force,
 *    +g upward at rest), in the axes of the body carrying the IMU. Chains "gyro" and "accel",
 *    one per axis.
 *  - torque: "torque" (N·m or N, the generalized force on the joint's dof), or "current" (A)
 *    when a torque constant is given. One chain.
 *  - touch: "normal" (N, the summed normal force of the contacts on a geom) and optionally
 *    "force.x/y/z" (N, the total contact force on the geom in its axes). Chains "normal" and
 *    "force" (one per axis).
 *
 * Sample timing: a sensor with rate_hz dividing the physics rate exactly samples every k-th
 * physics step (k = physics rate / rate_hz). Any other rate runs on its own clock (samples at
 * n/rate_hz) with sample-and-hold of the truth: a sample at time t uses the state of the last
 * physics step at or before t. Latency delays the measured values by round(latency_s·rate_hz)
 * samples; dropped samples and a dead sensor keep their sequence numbers and are published with
 * valid = 0, so gaps are visible.
 *
 * Ownership: sens_set_load_*() allocate a set (one allocation for the sensors, one for all delay
 * lines); sens_set_free() releases it. No function allocates after loading.
 */
#ifndef ACHILLES_SENSORS_SENSORS_H
#define ACHILLES_SENSORS_SENSORS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "sensors/chain.h"
#include "sensors/delay.h"
#include "sensors/error.h"
#include "sensors/rng.h"
#include "sim/sim.h"

#define SENS_NAME_MAX 64
#define SENS_CHANNEL_NAME_MAX 16
#define SENS_MAX_CHANNELS 8
#define SENS_MAX_CHAINS 6
/* truth vectors inside the set carry one extra slot: the raw chain input of an encoder */
#define SENS_TRUTH_SLOTS (SENS_MAX_CHANNELS + 1)

typedef enum sens_type {
  SENS_ENCODER = 0,
  SENS_IMU = 1,
  SENS_TORQUE = 2,
  SENS_TOUCH = 3,
} sens_type;

/* One published sample. */
typedef struct sens_sample {
  double t;                        /* s, simulation time at which the sample is published */
  double t_truth;                  /* s, time of the true state the measurement comes from:
                                      t - delay_s (earlier for sample-and-hold) */
  uint64_t seq;                    /* 0, 1, 2, ...: dropped samples consume a number */
  int valid;                       /* 0: dropped, dead, or delay line still filling */
  double meas[SENS_MAX_CHANNELS];  /* measured values (NaN when not valid) */
  double truth[SENS_MAX_CHANNELS]; /* noise-free values at time t, not delayed */
} sens_sample;

typedef struct sens_encoder {
  int joint, qposadr, dofadr;
  int counts_per_rev;      /* lines (cycles) per revolution of the code wheel */
  int quadrature;          /* 1: ×4 decoding, 4·counts_per_rev counts per revolution */
  double step;             /* rad per count = 2π / (counts_per_rev·(quadrature ? 4 : 1)) */
  int64_t counts_per_turn; /* counts per revolution of the counter */
  int ch_counts, ch_angle, ch_velocity, ch_index; /* channel indices, -1 when not output */
  int wrap;                /* angle output wrapped into [-π, π) */
  double inv_step;         /* counts per rad */
  int incremental;          /* 1: the counter reads 0 at the first sample after each reset;
                               0: absolute, 0 at `origin` (a magnetic absolute encoder) */
  double origin;            /* rad: joint angle where the code wheel's count is 0 and its index
                               mark sits (absolute: "zero_offset"; incremental: "index_angle") */
  int have_prev, have_true; /* a previous measured / true count exists (velocity, index) */
  int64_t start_count, true_start_count; /* wheel counts at the first sample (incremental) */
  int64_t prev_count, prev_true_count;
  int64_t rem, true_rem;   /* previous counts modulo counts_per_turn, in [0, counts_per_turn) */
} sens_encoder;

typedef struct sens_imu {
  int body;        /* body carrying the IMU; axes are the body's axes */
  int site;        /* site it sits on, or -1 for the body origin */
  double pos[3];   /* position in the body frame, m */
} sens_imu;

typedef struct sens_torque {
  int joint, dofadr;
  double torque_constant; /* N·m/A at the motor; 0: output torque, not current */
  double gear_ratio;      /* joint torque = gear_ratio · motor torque */
  int actuator;           /* >= 0: the current of this DC motor actuator, as the model
                             computes it (data.actuator_current); -1: from the force */
} sens_torque;

typedef struct sens_touch {
  int geom;   /* the geom whose contacts are summed */
  int force3; /* 1: also the force.x/y/z channels */
} sens_touch;

typedef struct sens_sensor {
  char name[SENS_NAME_MAX];
  sens_type type;
  double rate_hz;          /* samples per second */
  int divisor;             /* physics steps per sample, 0 for sample-and-hold */
  int delay_samples;       /* latency in samples = round(latency_s·rate_hz) */
  double delay_s;          /* the latency actually applied: delay_samples / rate_hz */
  double drop_probability; /* per sample, [0, 1] */
  int dead;                /* dead-sensor fault on */
  int nch;
  char channel[SENS_MAX_CHANNELS][SENS_CHANNEL_NAME_MAX];
  int nchain;
  sens_chain chain[SENS_MAX_CHAINS];
  char group[2][SENS_CHANNEL_NAME_MAX]; /* chain group names ("angle"; "gyro", "accel"; ...) */
  int group_of_chain[SENS_MAX_CHAINS];
  union {
    sens_encoder enc;
    sens_imu imu;
    sens_torque trq;
    sens_touch tch;
  } u;
  uint64_t stream;         /* stream base derived from the name: reordering keeps streams */
  sens_rng events;         /* drops and spikes */
  sens_delay delay;
  /* clock */
  uint64_t seq;
  long long next_n, last_nstep;
  double held_truth[SENS_TRUTH_SLOTS], held_time;
  int have_held;
  /* output */
  sens_sample sample;      /* the latest published sample */
  int fresh;               /* samples published by the last sens_set_update */
} sens_sensor;

typedef struct sens_set sens_set;

/* Called for every published sample (optional; also when several are due in one update). */
typedef void (*sens_sample_fn)(void *user, const sens_sensor *s, const sens_sample *smp);

/* --- loading (sensor_config.c) -------------------------------------------------------------- */

/* From a parsed sensors block {"seed": N, "list": [...]}; `source` prefixes error messages
 * (e.g. the file name). */
int sens_set_load_json(sens_set **out, const sim_model *m, const cJSON *block, const char *source,
                       char *err, size_t err_sz);
/* From a JSON file whose top level is a sensors block. */
int sens_set_load_file(sens_set **out, const sim_model *m, const char *path, char *err,
                       size_t err_sz);
/* From the "sensors" key of a robot file: a sensors block inline, or a string naming a sensors
 * file relative to the robot file. SENS_ENOTFOUND when the robot has no "sensors" key. */
int sens_set_load_robot(sens_set **out, const sim_model *m, const char *robot_path, char *err,
                        size_t err_sz);
/* Releases *s and sets it to NULL; accepts NULL. */
void sens_set_free(sens_set **s);

/* --- running (sensor_set.c) ------------------------------------------------------------------ */

/* Resets every state and clock, reseeding all streams from `seed`. */
void sens_set_reset(sens_set *s, uint64_t seed);
uint64_t sens_set_seed(const sens_set *s);

/* Takes the samples that are due at d->time. d's derived arrays must match qpos/qvel (call
 * sim_forward after sim_step). Returns the number of samples published. */
int sens_set_update(sens_set *s, const sim_model *m, const sim_data *d);

/* Generalized forces the torque sensors read ([nv]); NULL (the default) reads
 * d->qfrc_applied. The array must stay alive while the set is updated. */
void sens_set_torque_source(sens_set *s, const double *qfrc);
void sens_set_callback(sens_set *s, sens_sample_fn fn, void *user);

int sens_set_count(const sens_set *s);
const sens_sensor *sens_set_sensor(const sens_set *s, int i);
/* Index of a sensor by name, -1 when absent. */
int sens_set_find(const sens_set *s, const char *name);
/* Index of a channel of a sensor by name, -1 when absent. */
int sens_sensor_channel(const sens_sensor *s, const char *channel);

/* --- live tuning (sensor_set.c) -------------------------------------------------------------- */

/* Sets one numeric parameter of a running sensor, keeping filter and drift state.
 * `path` is the JSON path inside the sensor object: "noise.white.sigma", "filter.cutoff_hz",
 * "drop_probability", ...; for an IMU prefix the group: "gyro.noise.gauss_markov.tau_s" (all
 * three axes). Invalid values are rejected with the same message as the loader's and change
 * nothing. */
int sens_set_param(sens_set *s, const char *sensor, const char *path, double value, char *err,
                   size_t err_sz);
/* Switches a fault on or off. group: NULL for every chain of the sensor, or "gyro"/"accel".
 * SENS_FAULT_DEAD applies to the whole sensor; SENS_FAULT_NONE also revives it. */
int sens_set_fault(sens_set *s, const char *sensor, const char *group, const sens_fault *f,
                   char *err, size_t err_sz);
/* Resets one sensor's state (drift, filters, turn-on bias, delay line) and its streams. */
int sens_set_reset_sensor(sens_set *s, const char *sensor, char *err, size_t err_sz);

/* --- per-type sampling (encoder.c, imu.c, torque.c, touch.c) ---------------------------------- */

/* True values of every channel of s at the state in d (no noise), into truth[SENS_TRUTH_SLOTS].
 * The encoder's keeps the previous true count (for the index channel), hence non-const. */
void sens_encoder_truth(sens_sensor *s, const sim_model *m, const sim_data *d, double *truth);
void sens_imu_truth(const sens_sensor *s, const sim_model *m, const sim_data *d, double *truth);
/* The torque sensor reads qfrc (the set's torque source) or, for an actuator current sensor,
 * d->actuator_current. */
void sens_torque_truth(const sens_sensor *s, const sim_data *d, const double *qfrc,
                       double *truth);
/* The touch sensor reads the contacts and their forces of the last sim_forward. */
void sens_touch_truth(const sens_sensor *s, const sim_model *m, const sim_data *d,
                      double *truth);

/* Measured values from true values (advances the chains and, for encoders, the counter). */
void sens_encoder_measure(sens_sensor *s, const double *truth, double *meas);
void sens_imu_measure(sens_sensor *s, const double *truth, double *meas);
void sens_torque_measure(sens_sensor *s, const double *truth, double *meas);
void sens_touch_measure(sens_sensor *s, const double *truth, double *meas);

const char *sens_type_name(sens_type type);

#endif
