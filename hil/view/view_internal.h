/* hil/view/view_internal.h: what the view's loop side (view.c), its web server (server.c) and its
 * Foxglove protocol (foxglove.c) share. Two threads meet here only through `frames` (a triple
 * buffer: the loop writes, the server reads, neither waits) and two single-producer
 * single-consumer queues of jobs (requests in, replies out). */
#ifndef ACHILLES_HIL_VIEW_INTERNAL_H
#define ACHILLES_HIL_VIEW_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "hil/record/replay.h"
#include "hil/runtime/status.h"
#include "hil/view/view.h"
#include "hil/zmq/json_messages.h"
#include "sensors/sensors.h"
#include "sim/sim.h"

#define VIEW_MAX_CONTACTS 64      /* contacts a frame carries (more are left out) */
#define VIEW_TRANSPORTS_MAX 1024  /* the other transports' describe() lines, joined */
#define VIEW_REPLY_MAX (256 * 1024)
#define VIEW_QUEUE 64             /* jobs in flight between the threads, each way */
#define VIEW_MESSAGE_MAX (512 * 1024) /* the largest message the server writes (model, frame) */

/* The state at one instant, as the loop copied it. Arrays are sized at attach. */
typedef struct view_frame {
  uint64_t seq;      /* frames published since start */
  double t, wall;    /* simulation time, wall time since the run started (s) */
  uint64_t steps;
  int paused;
  double *qpos;      /* [nq] */
  double *xpos;      /* [nbody * 3] */
  double *xmat;      /* [nbody * 9] */
  int ncon;          /* <= VIEW_MAX_CONTACTS */
  double con[VIEW_MAX_CONTACTS][7]; /* position, normal, normal force (N) */
  sens_sample *smp;  /* [nsensor]: the newest sample of each sensor */
  int *has;          /* [nsensor]: a sample since the start or the last reset */
  uint64_t status_seq; /* status messages seen (0: none yet) */
  hil_status status;
  char transports[VIEW_TRANSPORTS_MAX];
  /* a replay (view_shared.replay): the newest sample of each of its sensors (smp[i] then holds
   * only its seq and t, for the Foxglove subscriptions), the replay's figures */
  hil_replay_sample *rsmp; /* [nsensor] */
  hil_replay_report rep;
  int finished;
} view_frame;

/* A triple buffer of frames: the writer fills `back` and swaps it with `middle`; the reader
 * swaps `middle` (when fresh) with `front`. Lock-free; the reader sees the newest whole frame. */
typedef struct view_frames {
  view_frame f[3];
  atomic_int middle; /* index | FRESH */
  int back, front;
} view_frames;

#define VIEW_FRESH 4

typedef enum view_job_kind {
  VIEW_JOB_CONTROL = 0,  /* a control request: reply wanted */
  VIEW_JOB_COMMANDS = 1, /* a command message (Foxglove client publish): no reply */
} view_job_kind;

/* One request from a browser, carried to the loop and (for control) back with its reply. */
typedef struct view_job {
  view_job_kind kind;
  uint64_t session;  /* who asked (a session that left meanwhile is skipped) */
  char *text;        /* the request, NUL-terminated */
  size_t len;
  char *reply;       /* [VIEW_REPLY_MAX], written by the loop (control) */
  int reply_len;
} view_job;

/* Single producer, single consumer, bounded; push fails when full. */
typedef struct view_queue {
  view_job *slot[VIEW_QUEUE];
  atomic_uint head, tail;
} view_queue;

int view__queue_push(view_queue *q, view_job *j);
view_job *view__queue_pop(view_queue *q);
void view__job_free(view_job *j);

/* What the server needs from the model, fixed after attach (read by both threads). */
typedef struct view_shared {
  const hil_replay_schedule *replay; /* a replay's view (replay_view.c): m and sensors are NULL,
                                        the streams are the schedule's sensors */
  atomic_int viewers;         /* WebSocket connections made so far (a replay waits for one) */
  const sim_model *m;
  const sens_set *sensors;
  int nsensor;
  hil_msg_sample_form *forms; /* [2 * nsensor]: measured, then truth */
  char (*topics)[HIL_MSG_TOPIC_MAX]; /* [2 * nsensor] */
  char *model_json;           /* the "model" message (docs/view.md) */
  int model_len;
  view_frames frames;
  view_queue requests, replies;
  int wake_fd;                /* eventfd: the server tells the loop a request waits */
  atomic_int signalled;       /* wake_fd was written and not yet read: the loop reads it only
                                 then (a read per tick would cost a system call per tick) */
  hil_view_options opt;
} view_shared;

/* --- the server (server.c) ------------------------------------------------------------------- */

typedef struct view_server view_server;

/* Binds; NULL with a message. The shared part must outlive the server. */
view_server *view__server_new(view_shared *sh, char *err, size_t err_sz);
int view__server_port(const view_server *s);
/* Starts the thread (after attach filled the shared part). */
int view__server_start(view_server *s);
/* Wakes the server thread (a frame or a reply is ready); any thread. */
void view__server_wake(view_server *s);
void view__server_destroy(view_server *s);

/* --- encoding (frame.c) ---------------------------------------------------------------------- */

/* The "frame" message of f; returns its length, or -1 when it did not fit. */
int view__encode_frame(char *out, size_t cap, const view_shared *sh, const view_frame *f);
/* The "status" message of f. */
int view__encode_status(char *out, size_t cap, const view_shared *sh, const view_frame *f);
/* The sample message (as ZeroMQ publishes it) of stream k (k < nsensor: measured, else truth);
 * -1 when the sensor has no sample. */
int view__encode_stream(char *out, size_t cap, const view_shared *sh, const view_frame *f, int k);
/* Orientation of a row-major rotation matrix as a unit quaternion [w x y z]. */
void view__mat_quat(double q[4], const double *mat);
/* A replay's answer to a control request (the server answers it: a replay has no loop to ask):
 * status and latest from the newest frame f (NULL: none yet), every other request an error. */
int view__replay_answer(char *out, size_t cap, const view_shared *sh, const view_frame *f,
                        const char *text, size_t len);
/* Builds sh->model_json (allocates). */
int view__build_model(view_shared *sh);

/* --- Foxglove (foxglove.c) -------------------------------------------------------------------- */

/* Per-connection Foxglove state lives in the session (server.c); these write its messages. */
int view__fox_server_info(char *out, size_t cap, const view_shared *sh);
int view__fox_advertise(char *out, size_t cap, const view_shared *sh);
/* Channel ids: streams 1..2n (as view__encode_stream's k + 1), then these. */
int view__fox_status_channel(const view_shared *sh);
int view__fox_tf_channel(const view_shared *sh);
int view__fox_nchannels(const view_shared *sh);
/* The FrameTransforms message (foxglove.FrameTransforms as JSON) of f. */
int view__fox_encode_tf(char *out, size_t cap, const view_shared *sh, const view_frame *f);
/* {"op":"status","level":L,"message":M} */
int view__fox_status_message(char *out, size_t cap, int level, const char *message);

#endif
