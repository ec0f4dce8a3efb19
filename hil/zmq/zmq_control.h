/* hil/zmq/zmq_control.h: the control requests' answers, for front ends other than the ctl socket;
 * implemented in zmq_control.c. */
#ifndef ACHILLES_HIL_ZMQ_CONTROL_H
#define ACHILLES_HIL_ZMQ_CONTROL_H

#include <stddef.h>

#include "hil/transport.h"

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

#endif
