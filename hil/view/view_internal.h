/* hil/view/view_internal.h: what the view's rooms share. The loop side (view.c, replay_view.c,
 * params.c's reading) writes; the server (server.c, requests.c, fox_session.c, access.c) serves;
 * the encoders (frame.c, foxglove.c, scene.c) turn a frame into messages; jobs.c carries work
 * between the threads. Calls go one way: view.c -> server.c -> fox_session.c -> requests.c ->
 * jobs.c, and everyone -> the encoders. Two threads meet only through `frames` (a triple
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
#define VIEW_MESSAGE_MAX (512 * 1024) /* the largest frame message (the model may be larger) */
#define VIEW_PARAM_NAME_MAX (SENS_NAME_MAX + HIL_MSG_PATH_MAX + 2)

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
  /* the sensors' live-tunable parameters (view_shared.params), read by the loop at each status
     and after each request it carried out; params_seq counts the readings */
  double *param;     /* [nparam] */
  uint64_t params_seq;
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
  VIEW_JOB_CONTROL = 0,  /* a control request: reply wanted ({"type":"reply",...}) */
  VIEW_JOB_COMMANDS = 1, /* a command message (Foxglove client publish): a reply (a Foxglove
                            status message) only when it was refused */
  VIEW_JOB_PARAMS = 2,   /* a Foxglove getParameters/setParameters: the reply is sent as it is */
} view_job_kind;

#define VIEW_COMMAND_ERROR_MAX 640 /* a refused command message's status message */

/* One request from a browser, carried to the loop and (for control) back with its reply. */
typedef struct view_job {
  view_job_kind kind;
  uint64_t session;  /* who asked (a session that left meanwhile is skipped) */
  char *text;        /* the request, NUL-terminated */
  size_t len;
  char *reply;       /* written by the loop: [VIEW_REPLY_MAX] (control, parameters) or
                        [VIEW_COMMAND_ERROR_MAX] (commands) */
  int reply_len;     /* 0: no reply (a command message that was taken) */
} view_job;

/* Single producer, single consumer, bounded; push fails when full. */
typedef struct view_queue {
  view_job *slot[VIEW_QUEUE];
  atomic_uint head, tail;
} view_queue;

/* jobs.c */
int view__queue_push(view_queue *q, view_job *j);
/* The head without taking it (the loop leaves commands queued while lockstep holds a full set). */
view_job *view__queue_peek(view_queue *q);
view_job *view__queue_pop(view_queue *q);
void view__job_free(view_job *j);
/* Frees every job left in q (after the threads stopped). */
void view__queue_drain(view_queue *q);

/* One live-tunable sensor parameter as Foxglove names it: "<sensor>.<path>" (params.c). */
typedef struct view_param {
  char name[VIEW_PARAM_NAME_MAX];
  int sensor;
  char path[HIL_MSG_PATH_MAX]; /* as set_param takes it: "noise.white.sigma", "gyro.noise.bias" */
  int chain;                   /* the chain it is read from (the first of its group) */
  long offset;                 /* its field in that chain's parameters; -1: drop_probability */
} view_param;

/* A mesh geom's hull as triangles for drawing (scene.c): indices into the model's hull_vert. */
typedef struct view_mesh {
  int *tri;  /* [3·ntri], outward winding, indices relative to the geom's hull_adr */
  int ntri;
} view_mesh;

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
  view_param *params;         /* [nparam]: the sensors' live-tunable parameters (params.c) */
  int nparam;
  view_mesh *meshes;          /* [ngeom]: hull triangles of the mesh geoms (scene.c) */
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
/* Nanoseconds of a simulation time (t <= 0: 0), rounded to nearest: Foxglove's timestamps. */
uint64_t view__ns(double t);
/* Builds sh->model_json (allocates). */
int view__build_model(view_shared *sh);

/* --- Foxglove (foxglove.c) -------------------------------------------------------------------- */

/* Channel ids: streams 1..2n (as view__encode_stream's k + 1), then status, /tf and, for a
 * live run (a model to draw), /robot and /contacts (foxglove.SceneUpdate). */
int view__fox_status_channel(const view_shared *sh);
int view__fox_tf_channel(const view_shared *sh);
int view__fox_robot_channel(const view_shared *sh);    /* -1 in a replay */
int view__fox_contacts_channel(const view_shared *sh); /* -1 in a replay */
int view__fox_nchannels(const view_shared *sh);
/* Per-connection Foxglove state lives in the session (fox_session.c); these write messages. */
int view__fox_server_info(char *out, size_t cap, const view_shared *sh);
/* The advertise message; NULL cap estimate: view__fox_advertise_size. */
int view__fox_advertise(char *out, size_t cap, const view_shared *sh);
size_t view__fox_advertise_size(const view_shared *sh);
/* Stream k's sample message as its channel carries it: the ZeroMQ message with the values that
 * are null there (a dropped sample, a non-finite value) left out, so that every value the
 * schema declares a number is one. -1 when the sensor has no sample. */
int view__fox_encode_sample(char *out, size_t cap, const view_shared *sh, const view_frame *f,
                            int k);
/* The FrameTransforms message (foxglove.FrameTransforms as JSON) of f. */
int view__fox_encode_tf(char *out, size_t cap, const view_shared *sh, const view_frame *f);
/* {"op":"status","level":L,"message":M} */
int view__fox_status_message(char *out, size_t cap, int level, const char *message);

/* --- the robot's geometry (scene.c) ------------------------------------------------------------- */

/* At attach: the mesh geoms' hull triangles (for the page's model message and Foxglove).
 * HIL_OK or HIL_ENOMEM. */
int view__scene_build(view_shared *sh);
void view__scene_free(view_shared *sh);
/* The foxglove.SceneUpdate of the robot: one entity per geom (id "geom/<name>"), in the frame
 * of its body (frame_locked), its primitives placed as the geom is in that body: a sphere, a
 * box (cube), a cylinder, a capsule (a cylinder and two spheres), a mesh (its hull as a
 * triangle list), a plane (a thin square cube). Timestamps t. */
int view__scene_encode_robot(char *out, size_t cap, const view_shared *sh, double t);
size_t view__scene_robot_size(const view_shared *sh);
/* The contacts of f as one entity "contacts" in the world frame: a sphere at each point and an
 * arrow along its normal, 1 cm per newton (as the page draws them). */
int view__scene_encode_contacts(char *out, size_t cap, const view_shared *sh,
                                const view_frame *f);
/* JSON Schemas of the channels (strings): SceneUpdate, the sample schema of one stream. */
extern const char view__scene_schema[];

/* --- the sensors' parameters (params.c) --------------------------------------------------------- */

/* At attach (before the server starts): every parameter that the page's Get/Set and the
 * control requests get_param/set_param reach, for every sensor. HIL_OK or HIL_ENOMEM. */
int view__params_build(view_shared *sh);
/* Their values now (the loop thread): out[nparam]. */
void view__params_read(const view_shared *sh, double *out);
/* A Foxglove getParameters or setParameters, carried out on the loop thread: the
 * parameterValues reply, or a status message naming what was wrong. Returns its length. */
int view__params_answer(char *out, size_t cap, view_shared *sh, sens_set *sensors,
                        const char *text, size_t len);
/* parameterValues for the parameters idx[0..n) with values val (id: NULL or the request's). */
int view__params_values(char *out, size_t cap, const view_shared *sh, const int *idx, int n,
                        const double *val, const char *id);

/* --- who may connect (access.c) ----------------------------------------------------------------- */

/* The Host header names one of the names the server was bound for: its address (any IPv4
 * address when bound to 0.0.0.0), localhost, or a name given with hil_view_add_host; the port
 * is not compared (an SSH tunnel's local port differs). */
int view__host_allowed(const hil_view_options *o, const char *host);
/* A WebSocket's Origin: absent (NULL), the view's own page ("http://" + host, compared whole),
 * the Foxglove web app, or file:// (desktop apps). */
int view__origin_allowed(const char *origin, const char *host);

#endif
