/* hil/zmq/zmq_transport.h: the ZeroMQ transport — sensor streams out, motor commands in, control.
 *
 * Three sockets, all bound by the simulator (message formats: docs/messages.md):
 *   - PUB  `pub`  multipart [topic, json]: one topic per sensor ("enc/<name>", "imu/<name>",
 *                 "trq/<name>"), its ground truth under "truth/<topic>" (when `truth`), and the
 *                 periodic "status". Never blocks: a subscriber that falls behind by more than
 *                 `sndhwm` messages loses the newest ones until it catches up; the sequence
 *                 numbers show the gap. A reader that wants only the present asks the control
 *                 socket for {"cmd":"latest"}: the newest message of every stream.
 *   - PULL `cmd`  one-part command messages from any number of PUSH clients. PUSH/PULL rather
 *                 than PUB/SUB: a PUSH queues its first messages until the connection is up, so a
 *                 controller's first commands are not lost the way a late subscriber's are.
 *   - REP  `ctl`  control requests; every request gets exactly one reply, malformed ones an
 *                 {"ok":false,...} reply.
 * Default endpoints are on 127.0.0.1 only; an endpoint on any other interface is refused unless
 * `allow_remote` is set.
 *
 * Ownership: hil_zmq_transport_new() returns a transport with its own ZeroMQ context; hand it
 * to hil_runtime_add_transport(), which destroys it with the runtime.
 */
#ifndef ACHILLES_HIL_ZMQ_TRANSPORT_H
#define ACHILLES_HIL_ZMQ_TRANSPORT_H

#include <stddef.h>

#include "hil/transport.h"

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

/* Checks o, creates the context and binds the three sockets (whatever o->enabled says: that
 * flag is for the caller). NULL with a message on failure. */
hil_transport *hil_zmq_transport_new(const hil_zmq_options *o, char *err, size_t err_sz);

typedef enum hil_zmq_socket {
  HIL_ZMQ_PUB = 0,
  HIL_ZMQ_CMD = 1,
  HIL_ZMQ_CTL = 2,
} hil_zmq_socket;

/* The endpoint a socket is bound to, wildcards resolved ("tcp://127.0.0.1:*" → the port the
 * system chose). Owned by the transport. */
const char *hil_zmq_transport_endpoint(const hil_transport *t, hil_zmq_socket which);

/* Counters since creation (also in the status message under "zmq"). */
typedef struct hil_zmq_counters {
  uint64_t sent;             /* messages handed to the PUB socket */
  uint64_t send_failed;      /* messages the PUB socket refused (should stay 0) */
  uint64_t cmd_messages;     /* command messages received */
  uint64_t ctl_requests;     /* control requests answered */
  uint64_t ctl_errors;       /* of which answered with ok = false */
  uint64_t oversized;        /* command messages and control requests over max_message_bytes */
} hil_zmq_counters;

void hil_zmq_transport_counters(const hil_transport *t, hil_zmq_counters *out);

/* Writes the "zmq" member of a status object (docs/messages.md, section 4); shared by the
 * transport and the replay so that both statuses have one layout. */
struct hil_jw;
void hil_zmq_write_counters(struct hil_jw *w, const hil_zmq_counters *c);

/* Answers one control request (docs/messages.md, section 7) exactly as the ctl socket does, for
 * another front end whose requests reach the loop thread (the web view, hil/view/view.h). Call
 * it on the loop thread only (between ticks, from a transport's poll). t is the run's ZeroMQ
 * transport, or NULL when the run has none: then a hello reply has no endpoints and truth
 * false, a status reply no "zmq" member, a latest reply no samples, and no status is
 * published. Writes the reply (an {"ok":false,...} reply when the request fails) into out and
 * returns its length (0 only when out_sz cannot hold even the error reply). Not counted in the
 * ZeroMQ counters. */
int hil_zmq_control_answer(hil_transport *t, hil_runtime *rt, const char *req, size_t len,
                           char *out, size_t out_sz);

/* Reads one whole message (all its parts) from sock without waiting; returns its part count,
 * 0 when nothing is waiting. *msg holds the first part (the caller closes it). Shared by the
 * transport and the replay's control socket. */
int hil_zmq_recv_message(void *sock, zmq_msg_t *msg);

#endif
