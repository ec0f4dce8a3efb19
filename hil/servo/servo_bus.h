/* hil/servo/servo_bus.h: the simulator as a smart-servo bus. Each actuator of type "servo" in
 * the robot file is one servo on the bus at its configured ID; a controller talks to them with
 * Dynamixel Protocol 2.0 or the Feetech SMS/STS protocol over a pseudo-terminal (a host
 * program) or a serial device (a board on a USB-UART adapter), unchanged.
 *
 * A bus thread reads instruction packets, lets the servos' control tables answer them, and
 * writes the status packets as the wire would deliver them: after the servo's return delay time
 * and, on a pty, the reply's own byte time at the bus baud rate (10 bits a byte); servos answer a
 * SYNC/BULK read or a broadcast ping one after another; two servos at one ID answer at once and
 * garble each other. Once per physics step (the runtime's publish_step), each servo's firmware
 * loop and motor (hil/servo/servo_model.h) read the goals from its table, the joint from its
 * encoder sensor when one is configured (else the true joint), write the present fields, and
 * submit the joint torque as the actuator's command for the next step.
 *
 * Configuration: "transports": {"servo_bus": {...}} of the robot file, the "servo" blocks of
 * the actuators, and `achilles run --servo-bus pty|DEVICE --bus-protocol ...`: docs/servo-bus.md.
 *
 * Ownership: servo_bus_new() returns a transport to hand to hil_runtime_add_transport(); from
 * then on the runtime owns and destroys it (the thread is joined, the port closed).
 */
#ifndef ACHILLES_HIL_SERVO_SERVO_BUS_H
#define ACHILLES_HIL_SERVO_SERVO_BUS_H

#include <stddef.h>

#include "hil/runtime/runtime.h"

#define SERVO_BUS_PATH_MAX 256
/* A packet whose bytes stop coming for this long is dropped (counted as bad). */
#define SERVO_BUS_PACKET_TIMEOUT_S 0.01
/* The bus thread spins the last this long before a reply is due (sleeps before). */
#define SERVO_BUS_SPIN_S 150e-6

typedef enum servo_protocol {
  SERVO_PROTOCOL_DYNAMIXEL2 = 0,
  SERVO_PROTOCOL_FEETECH = 1,
} servo_protocol;

typedef struct servo_bus_options {
  int use_pty;                    /* 1: a new pseudo-terminal; 0: the device `port` */
  char port[SERVO_BUS_PATH_MAX];  /* device path */
  char link[SERVO_BUS_PATH_MAX];  /* pty: symlink to the slave, "" for none */
  int has_protocol;               /* 0: the protocol of the servos' models */
  servo_protocol protocol;
  long baud;                      /* bits per second of the bus (also each servo's Baud Rate) */
  int quiet;                      /* no servo table on stderr */
} servo_bus_options;

/* Defaults: pty, protocol from the models, 1 000 000 baud. */
void servo_bus_options_default(servo_bus_options *o);

/* Reads "transports": {"servo_bus": {...}}; *present = 1 when the section exists. HIL_OK or
 * HIL_ECONFIG with a message naming the JSON path. */
int servo_bus_options_parse(servo_bus_options *o, int *present, const char *config_path,
                            char *err, size_t err_sz);

/* Reads a servo bus section ({"port", "link", "protocol", "baud"}) found at `path` of the file
 * `source` (the servos file's "bus"), over o's values. HIL_OK or HIL_ECONFIG with a message. */
struct cJSON;
int servo_bus_options_read(servo_bus_options *o, const struct cJSON *section, const char *source,
                           const char *path, char *err, size_t err_sz);

/* "dynamixel2" or "feetech". */
const char *servo_bus_protocol_name(servo_protocol p);

/* 1 when the robot file has at least one actuator of type "servo" (0 for MJCF and URDF). */
int servo_bus_config_has_servos(const char *config_path);

/* Reads the servos of config_path (their "servo" blocks), makes the pty or opens the device,
 * and prints the port and the servo table unless quiet. NULL with a message in err (one that
 * starts "servo bus: port" when the port failed, else the configuration is wrong). The bus
 * thread starts when the transport is attached to a runtime. */
hil_transport *servo_bus_new(const servo_bus_options *o, const char *config_path, char *err,
                             size_t err_sz);

/* The path a controller opens (pty slave or device); NULL when t is not a servo bus. */
const char *servo_bus_path(const hil_transport *t);

typedef struct servo_bus_counters {
  unsigned long packets;     /* instruction packets decoded */
  unsigned long bad_packets; /* CRC/checksum or length errors (dropped, as a servo does) */
  unsigned long replies;     /* status packets written */
  unsigned long collisions;  /* replies garbled by two servos at one ID */
  unsigned long tx_dropped;  /* reply bytes the port did not take */
  unsigned long rx_early;    /* pty: request bytes that came faster than the baud rate allows */
  unsigned long steps;       /* control loop steps run */
  double pty_latency_s;      /* pty: the delivery latency measured at start, s, that the bus
                                takes out of each direction (hil/servo/pty_latency.h); else 0 */
} servo_bus_counters;

/* Fills *out; HIL_EINVAL when t is not a servo bus. */
int servo_bus_counters_get(const hil_transport *t, servo_bus_counters *out);

#endif
