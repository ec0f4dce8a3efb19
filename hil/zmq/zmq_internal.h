/* hil/zmq/zmq_internal.h: the ZeroMQ transport's state, shared by its files (internal to hil/zmq).
 *
 *   zmq_transport.c  sockets, the transport's ops, the intake of commands and control requests
 *   zmq_control.c    what a control request does and its reply (also for the view)
 *   zmq_publish.c    the PUB streams: samples, truth, end-of-step markers, status
 *   zmq_options.c    the "transports.zmq" options: defaults, parsing, checks
 *   zmq_counters.c   the counters as the "zmq" member of a status
 * Each uses only those below it (hello and status replies also publish a status message). The
 * public headers are one per file; zmq_transport.h includes them all.
 */
#ifndef ACHILLES_HIL_ZMQ_INTERNAL_H
#define ACHILLES_HIL_ZMQ_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "hil/transport.h"
#include "hil/zmq/json_messages.h"
#include "hil/zmq/zmq_options.h"
#include "hil/zmq/zmq_counters.h"

#define CMD_BATCH 256          /* most command messages read per poll */
#define CTL_BATCH 16           /* most control requests answered per poll */
#define REPLY_MAX (256 * 1024) /* largest control reply (hello lists every name) */
#define STATUS_MAX 2048
#define NSOCK HIL_ZMQ_NSOCK

/* One published stream (a sensor's samples, or their truth): its topic, the fixed parts of its
 * messages, and its newest message (the `latest` control request answers with it). */
typedef struct stream {
  char topic[HIL_MSG_TOPIC_MAX];
  hil_msg_sample_form form;
  char json[HIL_MSG_SAMPLE_MAX];
  int len;  /* of json; 0: no sample yet (since the last reset) */
  double t; /* the sample's time */
} stream;

/* The streams, sized by attach: sensor i at i, its truth at nsensor + i. */
typedef struct streams {
  stream *s; /* [n] */
  int nsensor, n;
  const sens_sensor *first; /* sensor i is first + i */
  double t;                 /* simulation time of the last step (a smaller one: a reset) */
} streams;

typedef struct zmq_transport {
  hil_transport base;
  hil_zmq_options opt;
  void *ctx;
  void *sock[NSOCK]; /* indexed by hil_zmq_socket */
  char endpoint[NSOCK][HIL_ZMQ_ENDPOINT_MAX];
  hil_zmq_counters n;
  char status[STATUS_MAX];
  char *reply; /* [REPLY_MAX] */
  streams streams;
  uint64_t step_samples;    /* sample messages published since the last end-of-step marker */
  double oversized_said_at; /* monotonic s of the last stderr line about an oversized message */
  uint64_t oversized_said;  /* the count that line gave */
} zmq_transport;

/* the publisher's transport ops (zmq_publish.c) */
int hil__zmq_attach(hil_transport *t, hil_runtime *rt);
void hil__zmq_publish_sample(hil_transport *t, hil_runtime *rt, const sens_sensor *s,
                             const sens_sample *smp);
void hil__zmq_publish_step(hil_transport *t, hil_runtime *rt, uint64_t steps, double sim_time);
void hil__zmq_publish_status(hil_transport *t, hil_runtime *rt, const hil_status *st);

/* Decodes and carries out one control request into out (zmq_control.c): the reply, or an error
 * reply. Returns the length and sets *failed. z may be NULL (see hil_zmq_control_answer). */
int hil__zmq_respond(zmq_transport *z, hil_runtime *rt, const char *req, size_t len, char *out,
                     size_t out_sz, int *failed);

#endif
