/* hil/client/achilles_client.h: the Achilles serial protocol, for firmware and simulator alike.
 *
 * Portable C99, standard headers only (stdint.h, stddef.h; string.h and limits.h in the .c
 * files), no malloc: every object lives where the caller puts it (static storage or the stack).
 * Copy this header, achilles_client_internal.h and the three files achilles_client.c (error
 * names, CRC), achilles_encode.c and achilles_decode.c into a firmware project unchanged, and
 * include this header only. The full wire specification, with byte layouts and example frames,
 * is docs/serial-protocol.md; this header is the API.
 *
 * Wire format in one paragraph. A frame is
 *     header (6 bytes) | payload (0..65535 bytes) | CRC-16 (2 bytes)
 * with header = version u8, type u8, sequence u16, payload length u16. Every multi-byte field is
 * little-endian; floats are IEEE-754 binary32. The CRC is CRC-16/CCITT-FALSE (poly 0x1021,
 * init 0xFFFF, no reflection, xorout 0; check value 0x29B1) over header and payload, appended
 * little-endian. The whole frame is COBS-encoded (Cheshire & Baker) and followed by one 0x00
 * delimiter, so 0x00 never occurs inside a frame and a receiver resynchronises at the next 0x00.
 *
 * COMPILE-TIME OPTIONS. Define them identically for every file that includes this header (on the
 * compiler command line, or in a file named by ACH_CONFIG_FILE), because they size the structs:
 *   ACH_CONFIG_FILE            a header to include first, e.g. -DACH_CONFIG_FILE='"ach_config.h"'
 *   ACH_MAX_PAYLOAD            largest payload a decoder accepts, bytes (default 256; >= 72).
 *                              The decoder's frame buffer is ACH_MAX_PAYLOAD + 8 bytes.
 *   ACH_MAX_SENSORS_PER_FRAME  sensor entries held by one ach_sensor_samples (default: as many
 *                              as fit in ACH_MAX_PAYLOAD, 16 for 256)
 *   ACH_MAX_JOINTS             joint entries held by one ach_motor_command (default 16)
 * RAM: an ach_decoder is 616 bytes with the defaults, 240 with ACH_MAX_PAYLOAD 72 and
 * ACH_MAX_JOINTS 3 (x86-64, sizeof); code is 6.7 kB (`size` of gcc 12 -std=c99 -Os -c, x86-64).
 *
 * USE ON A BOARD (sketch):
 *     static ach_decoder dec;                     // caller-owned, about 0.6 kB with defaults
 *     static uint8_t tx[ACH_ENCODED_MAX(ACH_MAX_FRAME)];
 *     static uint16_t tx_seq;
 *     ach_decoder_init(&dec);
 *     int n = ach_encode_hello(tx, sizeof tx, tx_seq++, &hello);   // n < 0: error code
 *     uart_write(tx, (size_t)n);
 *     for (;;) {                                  // one byte at a time, e.g. from a UART FIFO
 *       const ach_message *m = ach_decoder_feed(&dec, uart_read_byte());
 *       if (m && m->type == ACH_MSG_SENSOR_SAMPLES) { use(&m->u.sensor_samples); }
 *     }
 *
 * ERRORS are negative int values from ACH_ERRORS (ach_strerror names them); 0 or a length means
 * success. Functions never write past the size they are given.
 *
 * THREADS: nothing is global; one decoder must not be used by two threads at once.
 */
#ifndef ACHILLES_CLIENT_H
#define ACHILLES_CLIENT_H

#ifdef ACH_CONFIG_FILE
#include ACH_CONFIG_FILE
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- options and sizes ------------------------------------------------------------------- */

#ifndef ACH_MAX_PAYLOAD
#define ACH_MAX_PAYLOAD 256
#endif
/* The smallest receive limit of any build: the longest fixed message (ERROR, 69 bytes) fits. A
 * simulator refuses a HELLO whose rx_max_payload is below it. */
#define ACH_MIN_PAYLOAD 72
#if ACH_MAX_PAYLOAD < ACH_MIN_PAYLOAD || ACH_MAX_PAYLOAD > 65535
#error "ACH_MAX_PAYLOAD must be in [72, 65535]: the longest fixed message (ERROR, 69) must fit"
#endif

/* Fixed by the protocol (not options). */
#define ACH_PROTOCOL_VERSION_MAJOR 1 /* in every header; a different major is rejected */
#define ACH_PROTOCOL_VERSION_MINOR 2 /* only in HELLO / HELLO_ACK; minors are compatible */
#define ACH_HEADER_SIZE 6            /* version, type, sequence u16, payload length u16 */
#define ACH_CRC_SIZE 2
#define ACH_NAME_LEN 16               /* HELLO board name field, bytes, NUL-padded */
#define ACH_ERROR_TEXT_MAX 64         /* ERROR text, bytes */
#define ACH_SENSOR_ENTRY_SIZE 15      /* bytes of one SENSOR_SAMPLES entry on the wire */
#define ACH_SENSOR_FIXED_SIZE 9       /* time u64 + count u8 */
#define ACH_MOTOR_ENTRY_SIZE 6        /* bytes of one MOTOR_COMMAND entry on the wire */
#define ACH_MOTOR_FIXED_SIZE 5        /* board time u32 + count u8 */
#define ACH_UNITS_LEN 8               /* SENSOR_INFO units field, bytes at most */
#define ACH_INFO_NAME_LEN 32          /* SENSOR_INFO and JOINT_INFO name field, bytes at most */
#define ACH_ACTUATOR_NAME_LEN 24      /* JOINT_INFO actuator field, bytes at most */

#ifndef ACH_MAX_SENSORS_PER_FRAME
#define ACH_MAX_SENSORS_PER_FRAME \
  ((ACH_MAX_PAYLOAD - ACH_SENSOR_FIXED_SIZE) / ACH_SENSOR_ENTRY_SIZE)
#endif
#if ACH_MAX_SENSORS_PER_FRAME < 1 || ACH_MAX_SENSORS_PER_FRAME > 255
#error "ACH_MAX_SENSORS_PER_FRAME must be in [1, 255] (the count is one byte)"
#endif
#ifndef ACH_MAX_JOINTS
#define ACH_MAX_JOINTS 16
#endif
#if ACH_MAX_JOINTS < 1 || ACH_MAX_JOINTS > 255
#error "ACH_MAX_JOINTS must be in [1, 255] (the count is one byte)"
#endif

/* Largest frame (header + payload + CRC, before COBS) a decoder accepts. */
#define ACH_MAX_FRAME (ACH_HEADER_SIZE + ACH_MAX_PAYLOAD + ACH_CRC_SIZE)
/* Bytes on the wire for n frame bytes: COBS adds at most one byte per 254 plus one, then the
 * 0x00 delimiter. Size transmit buffers with ACH_ENCODED_MAX(ACH_MAX_FRAME). */
#define ACH_ENCODED_MAX(n) ((n) + (n) / 254 + 2)

/* ---- errors ------------------------------------------------------------------------------ */

#define ACH_ERRORS(X)                                                                        \
  X(ACH_OK, 0, "ok")                                                                         \
  X(ACH_E_ARG, -1, "invalid argument (NULL pointer or bad value)")                           \
  X(ACH_E_NOSPACE, -2, "output buffer too small")                                            \
  X(ACH_E_RANGE, -3, "count or string longer than the message allows")                       \
  X(ACH_E_TYPE, -4, "unknown message type")                                                  \
  X(ACH_E_COBS, -5, "COBS framing error (frame ended inside a block, or 0x00 in the data)")  \
  X(ACH_E_TOO_LONG, -6, "frame longer than ACH_MAX_FRAME, dropped")                          \
  X(ACH_E_TRUNCATED, -7, "frame shorter than its header, CRC or declared payload length")    \
  X(ACH_E_LENGTH, -8, "frame longer than its declared payload length")                       \
  X(ACH_E_CRC, -9, "CRC mismatch")                                                           \
  X(ACH_E_VERSION, -10, "protocol major version differs")                                    \
  X(ACH_E_PAYLOAD, -11, "payload too short for its message, or more entries than this build holds")

typedef enum ach_err {
#define ACH_X_ENUM(name, value, text) name = value,
  ACH_ERRORS(ACH_X_ENUM)
#undef ACH_X_ENUM
} ach_err;

/* The text for an error code ("unknown error" for anything else). Never NULL, static storage. */
const char *ach_strerror(int err);

/* ---- messages ---------------------------------------------------------------------------- */

/* Message types (header byte 1). Directions: B = board, S = simulator. */
typedef enum ach_msg_type {
  ACH_MSG_HELLO = 0x01,          /* B→S  handshake: versions, board name, flags */
  ACH_MSG_HELLO_ACK = 0x02,      /* S→B  handshake answer: versions, rates, sizes, sim time */
  ACH_MSG_SENSOR_SAMPLES = 0x03, /* S→B  sim time + up to ACH_MAX_SENSORS_PER_FRAME samples */
  ACH_MSG_MOTOR_COMMAND = 0x04,  /* B→S  board time + up to ACH_MAX_JOINTS commands */
  ACH_MSG_HEARTBEAT = 0x05,      /* both: sender's time and the last time heard from the peer */
  ACH_MSG_STATUS = 0x06,         /* S→B  state flags, counters, sim time */
  ACH_MSG_ERROR = 0x07,          /* both: code + short text */
  ACH_MSG_STEP_REQUEST = 0x08,   /* B→S  lockstep: advance n physics steps */
  ACH_MSG_DESCRIBE = 0x09,       /* B→S  (1.1) which sensor ids (1.2: or joint ids) exist */
  ACH_MSG_SENSOR_INFO = 0x0A,    /* S→B  (1.1) one sensor id: name, kind, joint, cpr, rate, units */
  ACH_MSG_JOINT_INFO = 0x0B,     /* S→B  (1.2) one joint id: its mode, command range, names */
  ACH_MSG_REQUEST = 0x0C         /* B→S  (1.2) a STATUS now, or the latest samples again */
} ach_msg_type;

/* HELLO flags. */
#define ACH_HELLO_LOCKSTEP 0x0001u /* the board drives time with STEP_REQUEST */

/* HELLO (B→S). Its layout is frozen across all versions so any version can read it. */
typedef struct ach_hello {
  uint8_t version_major;           /* ACH_PROTOCOL_VERSION_MAJOR of the board */
  uint8_t version_minor;
  uint16_t flags;                  /* ACH_HELLO_* bits; others 0 */
  uint16_t rx_max_payload;         /* largest payload the board accepts (its ACH_MAX_PAYLOAD) */
  char name[ACH_NAME_LEN + 1];     /* board name, NUL-terminated (at most 16 bytes on wire) */
} ach_hello;

/* HELLO_ACK result codes. */
#define ACH_HELLO_OK 0               /* accepted */
#define ACH_HELLO_VERSION_MISMATCH 1 /* major versions differ: the simulator ignores the board */
#define ACH_HELLO_REFUSED 2          /* refused for another reason (see a following ERROR) */

/* HELLO_ACK (S→B). Its first 17 bytes are frozen across all versions, like HELLO; fields from
 * minor 1 on are appended after them, and decode as 0 from a 1.0 simulator (unknown). */
typedef struct ach_hello_ack {
  uint8_t version_major;           /* the simulator's versions */
  uint8_t version_minor;
  uint8_t result;                  /* ACH_HELLO_OK / _VERSION_MISMATCH / _REFUSED */
  uint8_t n_joints;                /* joints the board may command (ids 0..n_joints-1) */
  uint8_t n_sensors;               /* sensors the simulator publishes (ids 0..n_sensors-1) */
  uint32_t physics_rate_hz;        /* physics steps per second of simulation time */
  uint64_t sim_time_ns;            /* simulation time now, ns */
  uint16_t rx_max_payload;         /* (1.1) largest payload the simulator accepts; 0 unknown */
  uint8_t max_joints;              /* (1.1) entries per MOTOR_COMMAND it accepts; 0 unknown */
} ach_hello_ack;

/* Sensor sample kinds: what the 4 value bytes hold. */
#define ACH_KIND_COUNTS 0 /* int32 counts (encoder ticks, ADC codes) */
#define ACH_KIND_VALUE 1  /* float32 in SI units (rad, rad/s, m/s^2, N·m, ...) */

/* Sensor sample flags. */
#define ACH_SAMPLE_STALE 0x01u     /* no new measurement since the last frame: value repeated */
#define ACH_SAMPLE_DROPPED 0x02u   /* the measurement was lost; value is the last good one */
#define ACH_SAMPLE_FAULT 0x04u     /* the sensor reports a fault; value is not to be trusted */
#define ACH_SAMPLE_SATURATED 0x08u /* the value is clipped at the sensor's range */

typedef struct ach_sample {
  uint8_t sensor_id;
  uint8_t flags;                   /* ACH_SAMPLE_* bits */
  uint8_t kind;                    /* ACH_KIND_*; unknown kinds are delivered, value in raw */
  uint32_t sample_seq;             /* this sensor's own measurement counter (wraps) */
  uint32_t age_ns;                 /* measurement instant = frame sim_time_ns - age_ns */
  union {
    int32_t counts;                /* ACH_KIND_COUNTS */
    float value;                   /* ACH_KIND_VALUE */
    uint32_t raw;                  /* the 4 bytes as a little-endian integer */
  } v;
} ach_sample;

/* SENSOR_SAMPLES (S→B). */
typedef struct ach_sensor_samples {
  uint64_t sim_time_ns;            /* simulation time at which the frame was built, ns */
  uint8_t count;                   /* entries used in samples[] */
  ach_sample samples[ACH_MAX_SENSORS_PER_FRAME];
} ach_sensor_samples;

/* Motor command modes: what value means. */
typedef enum ach_motor_mode {
  ACH_MODE_TORQUE = 0,             /* N·m (revolute) or N (prismatic) */
  ACH_MODE_DUTY = 1,               /* PWM duty, -1..1 */
  ACH_MODE_VOLTAGE = 2,            /* V */
  ACH_MODE_POSITION = 3,           /* rad or m (servo set point) */
  ACH_MODE_VELOCITY = 4            /* rad/s or m/s */
} ach_motor_mode;

typedef struct ach_joint_command {
  uint8_t joint_id;
  uint8_t mode;                    /* ach_motor_mode */
  float value;
} ach_joint_command;

/* MOTOR_COMMAND (B→S). */
typedef struct ach_motor_command {
  uint32_t board_time_us;          /* the board's clock when it computed the command, µs (wraps) */
  uint8_t count;                   /* entries used in joints[] */
  ach_joint_command joints[ACH_MAX_JOINTS];
} ach_motor_command;

/* HEARTBEAT (both directions). */
typedef struct ach_heartbeat {
  uint64_t time_ns;                /* sender's clock: sim time (S→B) or board time (B→S), ns */
  uint64_t echo_ns;                /* time_ns of the last HEARTBEAT received from the peer, 0 if
                                      none: the peer gets a round trip without shared clocks */
} ach_heartbeat;

/* STATUS state flags. */
#define ACH_STATE_RUNNING 0x0001u    /* physics is advancing */
#define ACH_STATE_PAUSED 0x0002u     /* paused by the operator */
#define ACH_STATE_LOCKSTEP 0x0004u   /* physics advances only on STEP_REQUEST */
#define ACH_STATE_CONNECTED 0x0008u  /* a HELLO was accepted */
#define ACH_STATE_WATCHDOG 0x0010u   /* command watchdog tripped: actuators at their safe value */
#define ACH_STATE_OVERRUN 0x0020u    /* the last real-time step was late */

/* STATUS (S→B): the simulator's view of the link. */
typedef struct ach_status {
  uint64_t sim_time_ns;
  uint32_t state;                  /* ACH_STATE_* bits */
  uint32_t rx_frames_ok;           /* frames from the board decoded */
  uint32_t rx_bad_crc;             /* frames from the board with a CRC mismatch */
  uint32_t rx_framing_errors;      /* COBS errors + truncated + too long + bad length */
  uint32_t rx_seq_lost;            /* board frames missing by sequence number */
  uint32_t rx_rejected;            /* bad version + unknown type + bad payload */
  uint32_t watchdog_trips;         /* times the command watchdog tripped */
  uint32_t overruns;               /* real-time steps that missed their deadline */
  uint32_t commands_clamped;       /* joint commands clamped or refused by the intake */
} ach_status;

/* ERROR codes (application level, carried by ERROR messages). */
#define ACH_ERROR_CODES(X)                                                   \
  X(ACH_ERRC_NONE, 0)             /* unused */                                \
  X(ACH_ERRC_VERSION, 1)          /* protocol major version mismatch */       \
  X(ACH_ERRC_NOT_CONNECTED, 2)    /* a message arrived before HELLO */        \
  X(ACH_ERRC_BAD_JOINT, 3)        /* joint id out of range */                 \
  X(ACH_ERRC_BAD_MODE, 4)         /* mode not supported by that actuator */   \
  X(ACH_ERRC_BAD_VALUE, 5)        /* NaN/inf or out of range: clamped or refused */ \
  X(ACH_ERRC_BAD_SENSOR, 6)       /* sensor id out of range */                \
  X(ACH_ERRC_WATCHDOG, 7)         /* no command in time: safe state */        \
  X(ACH_ERRC_UNSUPPORTED, 8)      /* request not supported in this mode */    \
  X(ACH_ERRC_INTERNAL, 9)         /* the sender failed; the text says why */  \
  X(ACH_ERRC_TOO_LONG, 10)        /* (1.1) frame over the receiver's limit */ \
  X(ACH_ERRC_BAD_PAYLOAD, 11)     /* (1.1) payload short, or too many entries */

typedef enum ach_error_code {
#define ACH_X_ERRC(name, value) name = value,
  ACH_ERROR_CODES(ACH_X_ERRC)
#undef ACH_X_ERRC
} ach_error_code;

/* ERROR (both directions). */
typedef struct ach_error {
  uint16_t code;                   /* ach_error_code */
  uint16_t about_seq;              /* sequence number of the frame it concerns, 0xFFFF if none */
  uint8_t text_len;                /* bytes of text on the wire, <= ACH_ERROR_TEXT_MAX */
  char text[ACH_ERROR_TEXT_MAX + 1]; /* NUL-terminated after decoding and ach_error_set */
} ach_error;

/* Fills an ERROR: text is copied up to ACH_ERROR_TEXT_MAX bytes (longer text is cut; NULL is
 * empty) and text_len set. */
void ach_error_set(ach_error *err, uint16_t code, uint16_t about_seq, const char *text);

/* STEP_REQUEST (B→S, lockstep mode). */
typedef struct ach_step_request {
  uint32_t steps;                  /* physics steps to advance; the simulator answers with
                                      SENSOR_SAMPLES at the end */
} ach_step_request;

/* DESCRIBE (B→S, 1.1): asks for the SENSOR_INFO of one sensor id, or of every id. */
#define ACH_DESCRIBE_ALL 0xFFu
#define ACH_DESCRIBE_SENSORS 0     /* DESCRIBE.what: SENSOR_INFO (1.1, and when absent) */
#define ACH_DESCRIBE_JOINTS 1      /* DESCRIBE.what (1.2): JOINT_INFO */

typedef struct ach_describe {
  uint8_t sensor_id;               /* an id, or ACH_DESCRIBE_ALL: one answer per id, in order */
  uint8_t what;                    /* (1.2) ACH_DESCRIBE_SENSORS or ACH_DESCRIBE_JOINTS (sensor_id
                                      is then a joint id); sent only when not SENSORS */
} ach_describe;

/* SENSOR_INFO sensor types (what kind of device the id belongs to). */
#define ACH_SENSOR_ENCODER 0
#define ACH_SENSOR_IMU 1
#define ACH_SENSOR_TORQUE 2
#define ACH_SENSOR_TOUCH 3 /* contact force on a geom, N */
#define ACH_SENSOR_OTHER 255
#define ACH_NO_JOINT 0xFFu         /* SENSOR_INFO.joint of a sensor on no commanded joint */

/* SENSOR_INFO (S→B, 1.1): the answer to DESCRIBE, one per sensor id. */
typedef struct ach_sensor_info {
  uint8_t sensor_id;
  uint8_t kind;                    /* ACH_KIND_* of its samples */
  uint8_t sensor_type;             /* ACH_SENSOR_* */
  uint8_t joint;                   /* joint id (as in MOTOR_COMMAND) of the actuator on the joint
                                      it measures, ACH_NO_JOINT if none */
  uint32_t counts_per_rev;         /* encoders: counter counts per revolution; else 0 */
  float rate_hz;                   /* samples per second of simulation time */
  char units[ACH_UNITS_LEN + 1];   /* ASCII, NUL-terminated: "count", "rad", "rad/s", ... */
  char name[ACH_INFO_NAME_LEN + 1]; /* ASCII, NUL-terminated: "sensor.channel" */
  uint32_t latency_ns;             /* (1.2) the latency applied to its samples, ns; 0 from a 1.1
                                      simulator */
} ach_sensor_info;

/* JOINT_INFO joint types */
#define ACH_JOINT_ROTARY 0 /* a hinge: rad, rad/s, N·m */
#define ACH_JOINT_LINEAR 1 /* a slide: m, m/s, N */

/* JOINT_INFO (S→B, 1.2): the answer to DESCRIBE of joints, one per joint id. */
typedef struct ach_joint_info {
  uint8_t joint_id;
  uint8_t mode;                    /* the ach_motor_mode MOTOR_COMMAND must use for it */
  uint8_t joint_type;              /* ACH_JOINT_ROTARY or ACH_JOINT_LINEAR */
  float ctrl_min, ctrl_max;        /* values outside are clamped; ±infinity when unlimited */
  char name[ACH_INFO_NAME_LEN + 1]; /* ASCII, NUL-terminated: the joint's name */
  char actuator[ACH_ACTUATOR_NAME_LEN + 1]; /* the actuator's name */
} ach_joint_info;

/* REQUEST.what (B→S, 1.2) */
#define ACH_REQUEST_STATUS 0  /* one STATUS now */
#define ACH_REQUEST_SAMPLES 1 /* the latest sample of every sensor again, stamped with the time now */

typedef struct ach_request {
  uint8_t what;
} ach_request;

/* Any message: what the decoder delivers and what ach_encode() takes. */
typedef struct ach_message {
  uint8_t type;                    /* ach_msg_type: selects the member of u */
  uint8_t version;                 /* header version byte (another major only for HELLO(_ACK)) */
  uint16_t seq;                    /* header sequence number */
  uint16_t payload_len;            /* payload bytes on the wire (may exceed what was parsed) */
  union {
    ach_hello hello;
    ach_hello_ack hello_ack;
    ach_sensor_samples sensor_samples;
    ach_motor_command motor_command;
    ach_heartbeat heartbeat;
    ach_status status;
    ach_error error;
    ach_step_request step_request;
    ach_describe describe;
    ach_sensor_info sensor_info;
    ach_joint_info joint_info;
    ach_request request;
  } u;
} ach_message;

/* ---- building blocks --------------------------------------------------------------------- */

/* CRC-16/CCITT-FALSE over n bytes, continuing from crc (start with ACH_CRC_INIT). */
#define ACH_CRC_INIT 0xFFFFu
uint16_t ach_crc16(uint16_t crc, const uint8_t *data, size_t n);

/* COBS-encodes n bytes of in into out and appends the 0x00 delimiter. Returns the bytes written
 * (at most ACH_ENCODED_MAX(n)) or ACH_E_NOSPACE / ACH_E_ARG; writes nothing beyond out_sz. in and
 * out must not overlap. */
int ach_cobs_encode(uint8_t *out, size_t out_sz, const uint8_t *in, size_t n);

/* Decodes one COBS block sequence of n bytes (without the 0x00 delimiter) into out. Returns the
 * decoded length, ACH_E_COBS if in holds 0x00 or ends inside a block, ACH_E_NOSPACE if out_sz is
 * too small (nothing is written past out_sz). */
int ach_cobs_decode(uint8_t *out, size_t out_sz, const uint8_t *in, size_t n);

/* ---- encoding ------------------------------------------------------------------------------
 * Each encoder writes one complete wire frame (COBS-encoded, 0x00-terminated) to out and
 * returns its length in bytes, or a negative ach_err: ACH_E_ARG (NULL), ACH_E_RANGE (count above
 * the build's maximum, text too long), ACH_E_NOSPACE (out_sz too small; a buffer of
 * ACH_ENCODED_MAX(ACH_MAX_FRAME) bytes holds any message whose payload fits ACH_MAX_PAYLOAD,
 * which with the default options is every message). Nothing is written past out_sz; on
 * error the content of out is unspecified. seq is the sender's sequence number for this frame:
 * the sender adds one for every frame it sends, of any type, wrapping at 65536. */
int ach_encode_hello(uint8_t *out, size_t out_sz, uint16_t seq, const ach_hello *msg);
int ach_encode_hello_ack(uint8_t *out, size_t out_sz, uint16_t seq, const ach_hello_ack *msg);
int ach_encode_sensor_samples(uint8_t *out, size_t out_sz, uint16_t seq,
                              const ach_sensor_samples *msg);
int ach_encode_motor_command(uint8_t *out, size_t out_sz, uint16_t seq,
                             const ach_motor_command *msg);
int ach_encode_heartbeat(uint8_t *out, size_t out_sz, uint16_t seq, const ach_heartbeat *msg);
int ach_encode_status(uint8_t *out, size_t out_sz, uint16_t seq, const ach_status *msg);
int ach_encode_error(uint8_t *out, size_t out_sz, uint16_t seq, const ach_error *msg);
int ach_encode_step_request(uint8_t *out, size_t out_sz, uint16_t seq,
                            const ach_step_request *msg);
int ach_encode_describe(uint8_t *out, size_t out_sz, uint16_t seq, const ach_describe *msg);
/* units and name are sent up to their first NUL (ACH_E_RANGE if longer than the field). */
int ach_encode_sensor_info(uint8_t *out, size_t out_sz, uint16_t seq, const ach_sensor_info *msg);
int ach_encode_joint_info(uint8_t *out, size_t out_sz, uint16_t seq, const ach_joint_info *msg);
int ach_encode_request(uint8_t *out, size_t out_sz, uint16_t seq, const ach_request *msg);
/* Encodes msg->u according to msg->type (msg->seq, version and payload_len are ignored: seq is
 * the argument). ACH_E_TYPE for an unknown type. */
int ach_encode(uint8_t *out, size_t out_sz, uint16_t seq, const ach_message *msg);

/* Payload bytes the message will take on the wire, or a negative ach_err. */
int ach_payload_size(const ach_message *msg);

/* Parses one frame after COBS decoding (header + payload + CRC, n bytes) into out, checking in
 * this order: length >= 8 and = 8 + declared payload (ACH_E_TRUNCATED / ACH_E_LENGTH), CRC
 * (ACH_E_CRC), version (ACH_E_VERSION; HELLO and HELLO_ACK pass with any version), type
 * (ACH_E_TYPE), payload (ACH_E_PAYLOAD). Returns 0 or that error. Bytes after the fields this
 * version knows are ignored (later minor versions may append fields). */
int ach_parse_frame(ach_message *out, const uint8_t *frame, size_t n);

/* ---- stream decoder ------------------------------------------------------------------------
 * Feed it every received byte, in order; it COBS-decodes on the fly into its own buffer, and at
 * each 0x00 delimiter checks the frame (ach_parse_frame) and delivers the message or counts the
 * error. After any error it simply waits for the next delimiter (resynchronisation). Empty
 * frames (several 0x00 in a row) are ignored without counting, so a sender may send a 0x00
 * before a frame to flush a receiver's partial frame (recommended after a reset).
 *
 * Each rejected frame increments exactly one error counter: the first check that failed.
 * Sequence numbers: the decoder expects each frame's sequence number to be the previous one
 * plus one. A forward jump of d (1 <= d < 32768, modulo 65536) counts one seq_gaps and d
 * seq_lost (frames lost, including those rejected as corrupt); a backward jump or repeat counts
 * seq_resets. The first frame after ach_decoder_init and every HELLO restart the count. Only
 * frames that pass CRC and version checks take part. The caller owns the struct; it holds no
 * pointers, so it may be copied or zeroed by ach_decoder_init at any time. */
typedef struct ach_counters {
  uint32_t frames_ok;     /* frames delivered */
  uint32_t cobs_errors;   /* delimiter inside a COBS block */
  uint32_t too_long;      /* frame longer than ACH_MAX_FRAME: dropped without overflow */
  uint32_t truncated;     /* shorter than header + CRC, or than its declared payload */
  uint32_t bad_length;    /* longer than its declared payload */
  uint32_t bad_crc;
  uint32_t bad_version;   /* major version differs (not HELLO / HELLO_ACK) */
  uint32_t unknown_type;  /* valid frame of a type this build does not know: skipped */
  uint32_t bad_payload;   /* payload too short for its type, or too many entries */
  uint32_t seq_gaps;      /* forward jumps in the sequence numbers */
  uint32_t seq_lost;      /* frames missing, summed over the gaps */
  uint32_t seq_resets;    /* backward jumps or repeats (the peer restarted its counter) */
} ach_counters;

typedef struct ach_decoder {
  ach_counters counters;
  uint32_t bytes;         /* bytes fed since init (wraps) */
  int error;              /* the first error seen since init (0 if none): it sticks */
  uint32_t error_at;      /* value of bytes when error was recorded (byte offset of the 0x00) */
  /* internal state */
  uint16_t expected_seq;
  uint8_t seq_known;
  uint8_t overflow;       /* the current frame no longer fits: drop it at the delimiter */
  uint8_t block_left;     /* data bytes left in the current COBS block */
  uint8_t block_code;     /* code byte of the current block (0: none yet in this frame) */
  uint32_t len;           /* decoded bytes in buf (after delivery, buf holds the last frame) */
  uint8_t buf[ACH_MAX_FRAME];
  ach_message msg;        /* the last delivered message */
} ach_decoder;

/* Resets everything: counters, sticky error, sequence tracking, partial frame. Feed a decoder
 * from one context only (e.g. drain a UART ring buffer in the main loop, not from the ISR and
 * the main loop at once). */
void ach_decoder_init(ach_decoder *dec);

/* Feeds one byte. Returns the decoded message when this byte was the delimiter of a good frame,
 * else NULL. The message lives in dec and stays valid until the next feed/push/init call. */
const ach_message *ach_decoder_feed(ach_decoder *dec, uint8_t byte);

/* Called once per decoded message by ach_decoder_push. */
typedef void (*ach_message_fn)(const ach_message *msg, void *user);

/* Feeds n bytes and calls fn (if not NULL) for each message, in order. Returns the number of
 * messages decoded. Frames may be split across calls at any byte. */
size_t ach_decoder_push(ach_decoder *dec, const uint8_t *bytes, size_t n, ach_message_fn fn,
                        void *user);

#ifdef __cplusplus
}
#endif

#endif /* ACHILLES_CLIENT_H */
