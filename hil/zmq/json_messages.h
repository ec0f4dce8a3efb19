/* hil/zmq/json_messages.h: the JSON messages of the ZeroMQ transport, encoded and decoded without
 * sockets (docs/messages.md is the reference for every format; keep the two in step).
 *
 * Messages (protocol version HIL_MSG_VERSION, carried in every message as "v"):
 *   - sensor sample   topic "enc/<name>", "imu/<name>", "trq/<name>"; ground truth under
 *                     "truth/<topic>"; the same JSON layout for both;
 *   - status          topic "status": the hil_status counters;
 *   - commands        {"v":1, "t":..., "commands": {"<actuator or joint>": value, ...}};
 *   - control request {"cmd": "<op>", ...} and its reply {"ok": true, ...} or
 *                     {"ok": false, "error": "..."}.
 *
 * Numbers are written by hil/number_format.h: the shortest digits that read back to the same
 * double, so a decoded value is bit-identical to the encoded one. JSON has no NaN or infinity: a
 * non-finite value is written as null, and a null read where a number is expected is NaN.
 *
 * Encoders write into a caller's buffer and never allocate (they run at the sensor rate);
 * decoders parse with cJSON, which allocates and frees before returning.
 */
#ifndef ACHILLES_HIL_JSON_MESSAGES_H
#define ACHILLES_HIL_JSON_MESSAGES_H

#include <stddef.h>
#include <stdint.h>

#include "hil/json_writer.h"
#include "hil/runtime/command.h"
#include "hil/runtime/status.h"
#include "sensors/sensors.h"
#include "sim/sim.h"

#define HIL_MSG_VERSION 1
#define HIL_MSG_TOPIC_MAX (SENS_NAME_MAX + 16) /* "truth/" + "enc/" + name + NUL fits */
#define HIL_MSG_SAMPLE_MAX 2048                 /* enough for any sensor sample message */
#define HIL_MSG_PATH_MAX 96                     /* parameter path in control requests */
#define HIL_MSG_UNIT_MAX 16

/* --- sensor samples --------------------------------------------------------------------------- */

/* A sample message from plain values. The live publisher and the replay both encode through it,
 * so a replayed message is byte-identical to the live one. For the ground-truth message (truth =
 * 1) t_truth is written as t and valid as true, as docs/messages.md describes. */
typedef struct hil_msg_sample_view {
  const char *sensor, *type;
  int truth;
  uint64_t seq;
  double t, t_truth;
  int valid;
  int nch;
  const char *channel[SENS_MAX_CHANNELS];
  const char *unit[SENS_MAX_CHANNELS];
  const double *values; /* [nch]: measured values, or the truth when truth = 1 */
} hil_msg_sample_view;
int hil_msg_encode_sample_view(char *out, size_t out_sz, const hil_msg_sample_view *v);

/* The members describing one sensor in a hello reply (and get_param without a path): name,
 * type, topic, rate_hz, latency_s, drop_probability, dead, channels, units, then what it is
 * mounted on (joint for encoders and torque sensors, body for IMUs; written when not NULL) and,
 * for encoders (counts_per_turn > 0), counts_per_rev (lines of the code wheel),
 * counts_per_turn (counts of the counter per revolution: 4 lines with quadrature) and
 * resolution (rad per count). Written for both the live simulator and the replay, so their hello
 * replies share one layout. */
typedef struct hil_msg_sensor_view {
  const char *name, *type, *topic;
  const char *joint, *body, *geom; /* NULL: not written */
  int counts_per_rev;
  int64_t counts_per_turn; /* 0: not an encoder */
  double resolution;       /* rad per count */
  double rate_hz, latency_s, drop_probability;
  int dead;
  int nch;
  const char *channel[SENS_MAX_CHANNELS];
  const char *unit[SENS_MAX_CHANNELS];
} hil_msg_sensor_view;
void hil_msg_write_sensor_fields(hil_jw *w, const hil_msg_sensor_view *v);

/* "enc", "imu", "trq" or "tch". */
const char *hil_msg_topic_prefix(sens_type type);
/* Unit of channel ch of s: "count", "rad", "rad/s", "flag", "m/s^2", "N*m", "N", "A".
 * m resolves a torque sensor on a slide joint (force, "N"); it may be NULL. */
const char *hil_msg_unit(const sim_model *m, const sens_sensor *s, int ch);
/* "enc/<name>" (truth = 0) or "truth/enc/<name>" (truth = 1). Returns the length, or HIL_EINVAL
 * when out_sz is too small. */
int hil_msg_topic(char *out, size_t out_sz, const sens_sensor *s, int truth);
/* The sample message: measured values (truth = 0), or the ground truth of the same sample
 * (truth = 1: t_truth = t and valid = true). Returns the length or HIL_ENOMEM. */
int hil_msg_encode_sample(char *out, size_t out_sz, const sim_model *m, const sens_sensor *s,
                          const sens_sample *smp, int truth);

/* The same message, faster: a form keeps the parts that never change for one sensor (names,
 * type, channel keys, units, already escaped), so encoding a sample only formats its numbers
 * (about half the work of hil_msg_encode_sample). The output is byte-identical to
 * hil_msg_encode_sample's. Init returns HIL_OK, or HIL_ENOMEM when the fixed parts alone do not
 * fit a sample message. */
typedef struct hil_msg_sample_form {
  char text[HIL_MSG_SAMPLE_MAX]; /* the head, each channel key, the tail, one after another */
  uint16_t head_end, key_end[SENS_MAX_CHANNELS], tail_end;
  int nch, truth;
} hil_msg_sample_form;
int hil_msg_sample_form_init(hil_msg_sample_form *f, const sim_model *m, const sens_sensor *s,
                             int truth);
int hil_msg_encode_sample_form(char *out, size_t out_sz, const hil_msg_sample_form *f,
                               const sens_sample *smp);

/* The reply to {"cmd":"latest"}, written the same way by the live transport and the replay:
 * {"ok":true,"t":T,"steps":N,"samples":{topic: sample message, ...}}. Begin, then one
 * latest_sample per stream (len <= 0: the stream has no sample yet and is left out), then end. */
void hil_msg_begin_latest(hil_jw *w, double t, uint64_t steps);
void hil_msg_latest_sample(hil_jw *w, const char *topic, const char *json, int len);
void hil_msg_end_latest(hil_jw *w);

/* A sample message read back (clients, tests). */
typedef struct hil_msg_sample {
  char sensor[SENS_NAME_MAX];
  char type[16];
  int truth;
  uint64_t seq;
  double t, t_truth;
  int valid;
  int n; /* channels */
  char channel[SENS_MAX_CHANNELS][SENS_CHANNEL_NAME_MAX];
  char unit[SENS_MAX_CHANNELS][HIL_MSG_UNIT_MAX];
  double value[SENS_MAX_CHANNELS]; /* NaN for null */
} hil_msg_sample;

/* Parses and checks a sample message (every key present, right types, version 1, units for
 * every value; other keys are ignored, as the versioning rule asks of readers). Returns HIL_OK or
 * HIL_EMALFORMED with a message naming the key. */
int hil_msg_decode_sample(hil_msg_sample *out, const char *json, size_t len, char *err,
                          size_t err_sz);

/* --- status ----------------------------------------------------------------------------------- */

/* Writes the members of a status object (no braces), so a transport can add its own. */
void hil_msg_write_status_fields(hil_jw *w, const hil_status *st);
/* {"v":1, ...the status fields...}. Returns the length or HIL_ENOMEM. */
int hil_msg_encode_status(char *out, size_t out_sz, const hil_status *st);

/* --- commands --------------------------------------------------------------------------------- */

typedef struct hil_msg_cmd_report {
  int entries;  /* entries in "commands" */
  int accepted; /* accepted by hil_commands_submit (clamped ones included) */
  int rejected; /* unknown names, non-finite or non-numeric values */
  int has_t;
  double t;     /* the sender's time, s (its own clock; informational) */
} hil_msg_cmd_report;

/* Decodes one command message and submits every entry to c at loop time `now`:
 *   - not JSON, not an object, wrong "v", unknown top-level key, "t" not a number, "commands"
 *     missing or not an object: the whole message is dropped and counted once in
 *     rejected_malformed; returns HIL_EMALFORMED;
 *   - each entry goes to hil_commands_submit_named, which counts unknown names
 *     (rejected_unknown) and non-finite values (rejected_nonfinite). A value of null, a string
 *     ("NaN", "inf", ...), or a number that overflows a double (1e999) is non-finite; a boolean,
 *     array or object value counts as malformed, one per entry.
 * Returns HIL_OK when the message was well formed (even if entries were rejected). err (may be
 * NULL) describes the first problem. rep may be NULL. */
int hil_msg_submit_commands(hil_commands *c, const char *json, size_t len, double now,
                            hil_msg_cmd_report *rep, char *err, size_t err_sz);

/* Writes a command message (clients, tests). t: the sender's time, NaN to leave it out.
 * Non-finite values are written as null (and will be rejected). Returns length or HIL_ENOMEM. */
int hil_msg_encode_commands(char *out, size_t out_sz, const char *const *names,
                            const double *values, int n, double t);

/* --- control requests ------------------------------------------------------------------------- */

#define HIL_CTL_OPS(X)                                                                          \
  X(HIL_CTL_HELLO, "hello")                                                                     \
  X(HIL_CTL_STATUS, "status")                                                                   \
  X(HIL_CTL_LATEST, "latest")                                                                   \
  X(HIL_CTL_PAUSE, "pause")                                                                     \
  X(HIL_CTL_RESUME, "resume")                                                                   \
  X(HIL_CTL_STEP, "step")                                                                       \
  X(HIL_CTL_RESET, "reset")                                                                     \
  X(HIL_CTL_SNAPSHOT_SAVE, "snapshot_save")                                                     \
  X(HIL_CTL_SNAPSHOT_RESTORE, "snapshot_restore")                                               \
  X(HIL_CTL_GET_PARAM, "get_param")                                                             \
  X(HIL_CTL_SET_PARAM, "set_param")                                                             \
  X(HIL_CTL_FAULT, "fault")

typedef enum hil_ctl_op {
#define HIL_X_OP(name, text) name,
  HIL_CTL_OPS(HIL_X_OP)
#undef HIL_X_OP
      HIL_CTL_COUNT
} hil_ctl_op;

#define HIL_CTL_STEP_MAX 1000000000ULL /* most steps one request may grant */

typedef struct hil_ctl_request {
  hil_ctl_op op;
  uint64_t n;                        /* step: steps to grant, 1 when absent */
  char sensor[SENS_NAME_MAX];        /* get_param, set_param, fault */
  char path[HIL_MSG_PATH_MAX];       /* get_param ("" = describe the sensor), set_param */
  double value;                      /* set_param */
  char group[SENS_CHANNEL_NAME_MAX]; /* fault: "gyro"/"accel", "" = every chain */
  sens_fault fault;                  /* fault */
} hil_ctl_request;

const char *hil_ctl_op_name(hil_ctl_op op);

/* Parses a control request. Unknown "cmd", unknown keys, missing or mistyped arguments give
 * HIL_EMALFORMED with a message for the error reply. */
int hil_msg_decode_control(hil_ctl_request *out, const char *json, size_t len, char *err,
                           size_t err_sz);

/* {"ok":false,"error":"<message>"}; returns the length or HIL_ENOMEM. */
int hil_msg_encode_error(char *out, size_t out_sz, const char *message);

#endif
