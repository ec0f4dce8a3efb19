/* hil/serial/serial_codec.h: the mapping between runtime objects and serial protocol messages.
 *
 * No port and no runtime here, so every rule can be unit-tested on a model and a sensor set:
 *   - sensor ids: one flat table of (sensor, channel) pairs over a sensor set, in set order and
 *     channel order: id 0 is the first channel of the first sensor, and so on (at most 255 ids);
 *   - samples: a sens_sample becomes one ach_sample per channel; encoder "counts" travel as
 *     ACH_KIND_COUNTS (int32), every other channel as ACH_KIND_VALUE (float32, SI units); a
 *     sample that is not valid carries the channel's last good value, flagged
 *     ACH_SAMPLE_DROPPED (or ACH_SAMPLE_FAULT when the sensor is dead);
 *   - joint ids: a MOTOR_COMMAND joint id is the actuator's index in the model (the order of
 *     "actuators" in the robot file), and its mode must be the one the actuator takes.
 * The wire format itself is docs/serial-protocol.md; this mapping is docs/serial-transport.md.
 *
 * Ownership: a hil_serial_table is a plain value the caller owns (no allocation).
 */
#ifndef ACHILLES_HIL_SERIAL_CODEC_H
#define ACHILLES_HIL_SERIAL_CODEC_H

#include <stdint.h>
#include <stdio.h>

#include "hil/client/achilles_client.h"
#include "sensors/sensors.h"
#include "sim/model.h"

#define HIL_SERIAL_MAX_IDS 255 /* sensor ids are one byte on the wire */

typedef struct hil_serial_channel {
  int16_t sensor;  /* index in the sensor set */
  uint8_t channel; /* channel index of that sensor */
  uint8_t kind;    /* ACH_KIND_COUNTS or ACH_KIND_VALUE */
} hil_serial_channel;

typedef struct hil_serial_table {
  int n;        /* ids in use */
  int nsensors; /* sensors with at least one id */
  int omitted;  /* channels left out because ids ran out */
  hil_serial_channel id[HIL_SERIAL_MAX_IDS];
  int16_t first_id[HIL_SERIAL_MAX_IDS + 1]; /* per sensor index: its first id, -1 if none */
  uint32_t last_good[HIL_SERIAL_MAX_IDS];   /* last valid value of each id, wire bits */
} hil_serial_table;

/* Builds the table for a sensor set (NULL: no sensors). Channels beyond 255 ids get none and
 * are counted in omitted. */
void hil_serial_table_build(hil_serial_table *t, const sens_set *s);

/* The two steps of a build, for a table of other sensors (the replay's): an empty table, then
 * the next id for channel `channel` of sensor index `sensor`, of ACH_KIND_* `kind` (counted in
 * omitted when the ids have run out). */
void hil_serial_table_clear(hil_serial_table *t);
void hil_serial_table_add(hil_serial_table *t, int sensor, int channel, int kind);

/* Writes one line per sensor: "serial:   enc_base_yaw     encoder 0=counts(int32) 1=angle
 * 2=velocity 3=index  (1000 Hz, latency 1 ms, 8192 counts/rev)" (rate, the latency applied in
 * whole samples, an encoder's counts per turn). */
void hil_serial_table_print(const hil_serial_table *t, const sens_set *s, FILE *out);

/* The entries of one sample: writes at most max entries into out and returns how many. Ages
 * are measured from frame_time (s, simulation time): age_ns = (frame_time - t_truth)·1e9. */
int hil_serial_sample_entries(ach_sample *out, int max, hil_serial_table *t, int sensor_index,
                              const sens_sensor *s, const sens_sample *smp, double frame_time);

/* The DESCRIBE answer for sensor id `id` of table t over sensor set s and model m: the name
 * "sensor.channel" (cut to ACH_INFO_NAME_LEN), the sample kind, the sensor type, the joint id
 * (actuator index) of the actuator on the measured joint (ACH_NO_JOINT for an IMU or a joint no
 * actuator drives), the encoder's counts per revolution of its counter (0 for other sensors),
 * the sample rate and the channel's units. Returns 0, or -1 when id is not in the table. */
int hil_serial_sensor_info(ach_sensor_info *out, const hil_serial_table *t, const sens_set *s,
                           const sim_model *m, int id);

/* JOINT_INFO (1.2) of joint id `id` (an actuator index: MOTOR_COMMAND's joint id): the mode its
 * commands take, its joint's kind (rotary or linear), its ctrlrange (±infinity unlimited), the
 * joint's and the actuator's names cut to their fields. -1 for an id that is not an actuator. */
int hil_serial_joint_info(ach_joint_info *out, const sim_model *m, int id);

/* The unit of channel c of sensor s: "count", "rad", "m", "rad/s", "m/s", "m/s^2", "N*m", "N",
 * "A" or "1" (dimensionless, such as an index pulse). */
const char *hil_serial_channel_units(const sens_sensor *s, const sim_model *m, int c);

/* The mode an actuator accepts: motor → TORQUE, DC motor → DUTY or VOLTAGE (its input),
 * position servo → POSITION, velocity servo → VELOCITY. */
ach_motor_mode hil_serial_actuator_mode(const sim_actuator *a);

/* Checks one joint command against the model: ACH_ERRC_NONE when it may be submitted, else
 * ACH_ERRC_BAD_JOINT (no such actuator) or ACH_ERRC_BAD_MODE (wrong mode for the actuator). */
ach_error_code hil_serial_check_command(const sim_model *m, const ach_joint_command *c);

/* Simulation time (s) to protocol nanoseconds (rounded; negative times give 0). */
uint64_t hil_serial_time_ns(double t);

const char *hil_serial_mode_name(int mode);

#endif
