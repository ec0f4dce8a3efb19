/* hil/zmq/zmq_counters.c: the ZeroMQ transport's counters as the "zmq" member of a status; see
 * zmq_counters.h. */
#include "hil/zmq/zmq_counters.h"

#include "hil/json_writer.h"

void hil_zmq_write_counters(hil_jw *w, const hil_zmq_counters *c) {
  hil_jw_key(w, "zmq");
  hil_jw_begin_object(w);
  hil_jw_key(w, "sent");
  hil_jw_uint(w, c->sent);
  hil_jw_key(w, "send_failed");
  hil_jw_uint(w, c->send_failed);
  hil_jw_key(w, "cmd_messages");
  hil_jw_uint(w, c->cmd_messages);
  hil_jw_key(w, "oversized");
  hil_jw_uint(w, c->oversized);
  hil_jw_key(w, "ctl_requests");
  hil_jw_uint(w, c->ctl_requests);
  hil_jw_key(w, "ctl_errors");
  hil_jw_uint(w, c->ctl_errors);
  hil_jw_end_object(w);
}
