/* hil/zmq/zmq_counters.h: the ZeroMQ transport's counters and the "zmq" member they give a
 * status message (docs/messages.md, section 4); implemented in zmq_counters.c. */
#ifndef ACHILLES_HIL_ZMQ_COUNTERS_H
#define ACHILLES_HIL_ZMQ_COUNTERS_H

#include <stdint.h>

/* Counters since creation (also in the status message under "zmq"). */
typedef struct hil_zmq_counters {
  uint64_t sent;             /* messages handed to the PUB socket */
  uint64_t send_failed;      /* messages the PUB socket refused (should stay 0) */
  uint64_t cmd_messages;     /* command messages received */
  uint64_t ctl_requests;     /* control requests answered */
  uint64_t ctl_errors;       /* of which answered with ok = false */
  uint64_t oversized;        /* command messages and control requests over max_message_bytes */
} hil_zmq_counters;

/* Writes the "zmq" member of a status object (docs/messages.md, section 4); shared by the
 * transport and the replay so that both statuses have one layout. */
struct hil_jw;
void hil_zmq_write_counters(struct hil_jw *w, const hil_zmq_counters *c);

#endif
