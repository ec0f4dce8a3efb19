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
#include "hil/zmq/zmq_control.h"
#include "hil/zmq/zmq_options.h"
#include "hil/zmq/zmq_counters.h"

/* Checks o, creates the context and binds the three sockets (whatever o->enabled says: that
 * flag is for the caller). NULL with a message on failure. */
hil_transport *hil_zmq_transport_new(const hil_zmq_options *o, char *err, size_t err_sz);

/* The endpoint a socket is bound to, wildcards resolved ("tcp://127.0.0.1:*" → the port the
 * system chose). Owned by the transport. */
const char *hil_zmq_transport_endpoint(const hil_transport *t, hil_zmq_socket which);

/* Counters since creation (zmq_counters.h; also in the status message under "zmq"). */
void hil_zmq_transport_counters(const hil_transport *t, hil_zmq_counters *out);

/* Reads one whole message (all its parts) from sock without waiting; returns its part count,
 * 0 when nothing is waiting. *msg holds the first part (the caller closes it). Shared by the
 * transport and the replay's control socket. */
int hil_zmq_recv_message(void *sock, zmq_msg_t *msg);

#endif
