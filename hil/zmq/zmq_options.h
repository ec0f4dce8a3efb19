/* hil/zmq/zmq_options.h: the ZeroMQ transport's options (the "transports.zmq" section of a robot
 * file) and the three sockets they name; implemented in zmq_options.c. */
#ifndef ACHILLES_HIL_ZMQ_OPTIONS_H
#define ACHILLES_HIL_ZMQ_OPTIONS_H

#include <stddef.h>

#define HIL_ZMQ_ENDPOINT_MAX 256
#define HIL_ZMQ_HARD_MAX_BYTES (256LL * 1024 * 1024) /* ZMQ_MAXMSGSIZE of the cmd and ctl sockets */

typedef struct hil_zmq_options {
  int enabled;                          /* 0: the config asks for no ZeroMQ transport */
  char pub[HIL_ZMQ_ENDPOINT_MAX];       /* sensor streams and status (PUB) */
  char cmd[HIL_ZMQ_ENDPOINT_MAX];       /* motor commands (PULL) */
  char ctl[HIL_ZMQ_ENDPOINT_MAX];       /* control requests (REP) */
  int truth;                            /* also publish every sensor's ground truth */
  int allow_remote;                     /* accept endpoints outside 127.0.0.1 / localhost */
  int sndhwm;                           /* PUB queue per subscriber, messages */
  int max_message_bytes;                /* larger command or control messages are refused:
                                           counted (oversized), said on stderr, a control
                                           request answered with an error; messages over
                                           HIL_ZMQ_HARD_MAX_BYTES are dropped by ZeroMQ with
                                           their connection, unseen */
  int io_cpu;                           /* pin the context's I/O thread to this CPU; -1: any */
  int io_priority;                      /* > 0: the I/O thread runs SCHED_FIFO at this priority */
} hil_zmq_options;

/* Defaults: enabled, tcp://127.0.0.1:5555 / :5556 / :5557, truth on, local only, sndhwm 1000,
 * messages up to 65536 bytes, I/O thread on any CPU at normal priority (the last two are set by
 * `achilles run --rt --cpu N`, not by the robot file). */
void hil_zmq_options_default(hil_zmq_options *o);

/* Fills o with the defaults, then reads the optional "transports": {"zmq": {...}} section of a
 * robot file over them (keys: enabled, pub, cmd, ctl, truth, allow_remote, sndhwm,
 * max_message_bytes, comment). Other keys under "transports" belong to other transports and are
 * ignored. Returns HIL_OK or HIL_ECONFIG with a
 * message naming the file and the JSON path. */
int hil_zmq_options_parse(hil_zmq_options *o, const char *config_path, char *err, size_t err_sz);

/* HIL_OK when every endpoint is local (or remote ones are allowed); otherwise HIL_ECONFIG with
 * a message naming the key, e.g. "transports.zmq.pub: tcp://0.0.0.0:5555 is not a local
 * endpoint; set transports.zmq.allow_remote to true to bind it". */
int hil_zmq_options_check(const hil_zmq_options *o, char *err, size_t err_sz);

typedef enum hil_zmq_socket {
  HIL_ZMQ_PUB = 0,
  HIL_ZMQ_CMD = 1,
  HIL_ZMQ_CTL = 2,
} hil_zmq_socket;

/* For the transport's files: the options' key of each socket, indexed by hil_zmq_socket ("pub",
 * "cmd", "ctl"), and the endpoint the options give socket `which`. */
#define HIL_ZMQ_NSOCK 3
extern const char *const hil__zmq_socket_key[HIL_ZMQ_NSOCK];
const char *hil__zmq_option_endpoint(const hil_zmq_options *o, int which);

#endif
