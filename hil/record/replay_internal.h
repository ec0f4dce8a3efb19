/* hil/record/replay_internal.h: the player's state, shared by its files (internal to hil/record).
 *
 *   player.c         the player: creation, pacing on absolute deadlines, loops, figures
 *   replay_zmq.c     the ZeroMQ side: PUB samples and status, REP control, PULL commands
 *   replay_serial.c  the serial side: the protocol's handshake, descriptions and sample frames
 * The player calls the two sides; the sides call nothing of the player.
 */
#ifndef ACHILLES_HIL_REPLAY_INTERNAL_H
#define ACHILLES_HIL_REPLAY_INTERNAL_H

#include <stdatomic.h>

#include "hil/record/replay.h"
#include "hil/serial/serial_codec.h"
#include "hil/serial/serial_port.h"

#define GROUP_MAX 64   /* messages of one instant encoded ahead of their deadline */
#define STAGE_FRAMES 256 /* serial frames of one instant built ahead (255 ids, 1 per frame) */
#define TX_CAP 8192    /* serial bytes waiting for the board; whole frames beyond are dropped */
#define FRAME_MAX ACH_ENCODED_MAX(ACH_MAX_FRAME)
#define STATUS_MAX 2048
#define SERVICE_S 0.05 /* longest sleep between two looks at the input while waiting */
#define REPLY_MAX (64 * 1024) /* largest control reply (hello lists every sensor) */
#define CTL_BATCH 8    /* control requests answered per look at the input */
#define CMD_BATCH 64   /* command messages discarded per look at the input */
#define SIDE_S 0.002   /* while playing, the control and command sockets at most this often */

typedef struct pending_msg {
  int stream; /* sensor * 2 + truth */
  int topic_len, len;
  char topic[HIL_MSG_TOPIC_MAX];
  char body[HIL_MSG_SAMPLE_MAX];
} pending_msg;

struct hil_replay {
  const hil_replay_schedule *s;
  hil_replay_options o;
  atomic_int stop; /* set by another thread or a signal handler (lock-free: safe in both) */
  int rt;                    /* SCHED_FIFO granted */
  double start;              /* monotonic s of the first deadline */
  char where[HIL_SERIAL_PATH_MAX];
  /* ZeroMQ */
  void *ctx, *pub;
  void *ctl, *cmd;           /* REP (hello, status) and PULL (read and discarded); may be NULL */
  char ctl_where[HIL_ZMQ_ENDPOINT_MAX], cmd_where[HIL_ZMQ_ENDPOINT_MAX];
  char *reply;               /* [REPLY_MAX] */
  int status_subs;           /* subscriptions in place that receive "status" (wait_hello) */
  int hello_start;           /* wait_hello: a hello answered with such a subscription in place */
  double next_side;          /* monotonic s: the next look at ctl and cmd while playing */
  pending_msg *group;        /* [GROUP_MAX] */
  pending_msg *newest;       /* [2 * nsensors]: the last message sent of each stream (latest) */
  int ngroup;
  char status[STATUS_MAX];
  /* serial */
  hil_serial_port *port;
  ach_decoder dec;
  int connected, per_frame;
  int describe_next, describe_end; /* SENSOR_INFO ids still to send for a DESCRIBE */
  uint16_t tx_seq;
  uint8_t tx[TX_CAP];
  size_t tx_len;
  ach_sensor_samples stage[STAGE_FRAMES]; /* frames of the next instant, encoded when due */
  int nstage;
  hil_serial_table table;
  sens_sensor fake;          /* what hil_serial_sample_entries reads of a sensor */
  /* figures */
  hil_histogram all, period;
  hil_replay_report rep;
  double next_status;
};

/* --- the ZeroMQ side (replay_zmq.c) --- */
/* binds the PUB (an XPUB: it sees subscriptions) and the optional REP and PULL */
int hil__replay_zmq_open(hil_replay *r, char *err, size_t err_sz);
/* subscription messages of the XPUB; 1 when a subscription came */
int hil__replay_zmq_drain(hil_replay *r);
/* sends m and keeps it as its stream's newest (the answer to `latest`) */
void hil__replay_zmq_send_msg(hil_replay *r, const pending_msg *m);
/* encodes a sample into the group sent at the deadline (now = 0) or sends it at once (now = 1) */
void hil__replay_zmq_add(hil_replay *r, const hil_replay_sample *smp, int truth, int now);
/* physics steps as the recording counted them (status, hello, latest and the report) */
uint64_t hil__replay_played_steps(const hil_replay *r);
/* publishes the status message (final: the whole run's figures) */
void hil__replay_zmq_status(hil_replay *r, int final);
/* control requests and command messages waiting, without blocking */
void hil__replay_zmq_service_sides(hil_replay *r);

/* --- the serial side (replay_serial.c) --- */
/* the flat id table of docs/serial-transport.md, from the file's sensors */
void hil__replay_serial_table(hil_replay *r);
void hil__replay_serial_print_table(const hil_replay *r, FILE *out);
/* hands the queued bytes to the port */
void hil__replay_serial_flush(hil_replay *r);
/* the board's messages waiting (HELLO, DESCRIBE, ...), answered; then the queue flushed */
void hil__replay_serial_service(hil_replay *r);
void hil__replay_serial_status(hil_replay *r);
/* adds a sample to the frames of the next instant */
void hil__replay_serial_add(hil_replay *r, const hil_replay_sample *smp);
/* encodes and queues the frames of the instant */
void hil__replay_serial_send_stage(hil_replay *r);

#endif
