/* hil/scenario/scenario_internal.h: a loaded scenario and a run of it, shared by the files of
 * hil/scenario only (parse.c, params.c, events.c, checks.c, firmware.c, run.c, report.c). */
#ifndef ACHILLES_HIL_SCENARIO_INTERNAL_H
#define ACHILLES_HIL_SCENARIO_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "hil/runtime/runtime.h"
#include "hil/scenario/scenario.h"
#include "hil/transport.h"
#include "sensors/fault.h"
#include "sim/json_read.h"

#define SCN_PATH_MAX 1024
#define SCN_TEXT_MAX 256
#define SCN_MAX_ARGS 64
#define SCN_MAX_EVENTS 256
#define SCN_MAX_CHECKS 64
#define SCN_MAX_CHANGES 32
/* lockstep over a line that corrupts bytes: a frame the firmware's decoder dropped is never
 * answered, so the loop waits this long (wall time) for a step's commands, then steps on */
#define SCN_CORRUPT_WAIT_S 0.2

/* --- parameter changes of the model (params.c) ------------------------------------------------ */

typedef enum scn_target {
  SCN_TARGET_JOINT = 0,
  SCN_TARGET_BODY = 1,
  SCN_TARGET_GEOM = 2,
} scn_target;

/* {"joint"|"body"|"geom": NAME or pattern, "field": F, "scale": X | "value": V} */
typedef struct scn_change {
  scn_target target;
  char pattern[SIM_NAME_MAX];
  char field[24];
  int has_scale;
  double scale;
  int nvalue; /* 1, or 2 for a joint's range */
  double value[2];
  char path[SIM_JSON_PATH_MAX]; /* where it was written, for messages */
} scn_change;

/* Applies c to m (every matching element). 0, or -1 with "PATH: ..." in err (no element
 * matches, a value out of bounds, new constraint rows). Derived constants are recomputed
 * (sim_constraint_setconst). */
int scn_change_apply(sim_model *m, const scn_change *c, char *err, size_t err_sz);
/* Reads one change object at path; `start`: in model_overrides (initial positions allowed). */
int scn_change_parse(const sim_json_ctx *L, const cJSON *obj, const char *path, int start,
                     scn_change *out);

/* --- the timeline (events.c) ------------------------------------------------------------------ */

typedef enum scn_event_kind {
  SCN_EV_FORCE = 0,        /* a force and torque on a body for a while */
  SCN_EV_SENSOR_FAULT = 1, /* a fault switched on or off */
  SCN_EV_SENSOR_PARAM = 2, /* a noise parameter changed */
  SCN_EV_LINK = 3,         /* the firmware's line cut, mended or noisy */
  SCN_EV_MODEL = 4,        /* a parameter change of the robot (a model swapped in) */
  SCN_EV_STDIN = 5,        /* a line written to the firmware's standard input */
  SCN_EV_SIGNAL = 6,       /* a signal to the firmware: kill, term, stop, cont */
  SCN_EV_ZMQ = 7,          /* a message to the firmware's own ZeroMQ input */
} scn_event_kind;

typedef struct scn_event {
  double t;
  scn_event_kind kind;
  char path[SIM_JSON_PATH_MAX]; /* "timeline[3]" */
  char name[SIM_NAME_MAX];      /* body (force) or sensor pattern */
  char label[SCN_TEXT_MAX];     /* what it does, for the result */
  /* force */
  double wrench[6];   /* force, torque, world axes, N and N·m */
  double duration_s;  /* <= 0: until the end */
  /* sensor fault */
  char group[16];
  sens_fault fault;
  int dropout;        /* "dropout": the sensor's drop probability set instead */
  /* sensor parameter */
  char param[64];
  double value;
  /* link */
  hil_link_fault link;
  /* model */
  scn_change change;
  /* stdin, zmq */
  char text[1024];
  char endpoint[256];
  int zmq_pub;        /* 1: a PUB socket bound at endpoint; 0: PUSH connected */
  /* signal */
  int signal;
} scn_event;

int scn_event_parse(const sim_json_ctx *L, const cJSON *obj, const char *path, scn_event *out);

/* --- checks (checks.c) ------------------------------------------------------------------------ */

typedef enum scn_check_kind {
  SCN_CK_SETTLE = 0,
  SCN_CK_OVERSHOOT,
  SCN_CK_RANGE,
  SCN_CK_CONTACT_FORCE,
  SCN_CK_STALL,
  SCN_CK_COMMAND,
  SCN_CK_WATCHDOG,
  SCN_CK_OUTPUT,
  SCN_CK_EXIT_CODE,
  SCN_CK_OVERRUNS,
  SCN_CK_FIRMWARE_ALIVE, /* implicit: the firmware lived to the end */
  SCN_CK_TIME_LIMIT,     /* implicit: the run ended within its wall-clock limit */
} scn_check_kind;

typedef struct scn_check {
  scn_check_kind kind;
  char name[SCN_TEXT_MAX];
  char path[SIM_JSON_PATH_MAX];
  char target[SIM_NAME_MAX]; /* joint, actuator ("*": all) or geom ("": any) */
  int index;                 /* resolved against the model at the start of a run */
  int velocity;              /* settle: of the velocity, not the position */
  double value, tolerance;   /* settle; overshoot's target in value */
  double from, to;           /* window, simulation s (to = INFINITY: the end) */
  double bound;              /* overshoot, contact force, command, stall current, overruns */
  double for_s;              /* stall */
  int has_min, has_max;
  double min, max;           /* range */
  int exact;                 /* watchdog: trips must equal bound (else at most) */
  char match[SCN_TEXT_MAX];  /* output */
  int absent;                /* output: must never appear */
  int has_by;
  double by;                 /* output: by this time */
  /* evaluation */
  int seen;                  /* a state inside the window was read */
  double worst, at;          /* the measured value so far and when */
  double q0, sign;           /* overshoot: position at `from`, direction of the step */
  double above_since;        /* stall: when the current last rose above the bound */
  uint64_t trips_from;       /* watchdog: the actuators' trip count at the last state */
  /* verdict */
  int pass;
  double measured;
  char unit[12];
  char message[SCN_TEXT_MAX];
} scn_check;

int scn_check_parse(const sim_json_ctx *L, const cJSON *obj, const char *path, scn_check *out);
/* Resolves names against m (messages name the check's path). */
int scn_check_resolve(scn_check *c, const sim_model *m, const char *source, char *err,
                      size_t err_sz);
/* One state (after its samples): the checks that read the physics. */
void scn_check_observe(scn_check *c, const sim_model *m, const sim_data *d,
                       const hil_command_counters *counters, double h);
/* A line of the firmware's output arrived at simulation time t. */
void scn_check_output(scn_check *c, const char *line, double t);
/* The end of the run: measured value, verdict, message. */
typedef struct scn_outcome {
  double end_time;          /* simulation s */
  int firmware;             /* a firmware process was run */
  int exited;               /* it exited (or died by a signal) */
  int exit_code;            /* its exit status, 128 + signal when killed */
  double exited_at;         /* simulation s */
  int stopped_by_scenario;  /* a timeline signal ended it */
  int expected_exit;        /* the scenario has an exit_code check */
  int hung;                 /* the wall-clock limit ended the run */
  double wall_s, time_limit_s;
  uint64_t trips, overruns;
} scn_outcome;
void scn_check_finish(scn_check *c, const scn_outcome *o);
const char *scn_check_kind_name(scn_check_kind k);

/* --- the scenario ---------------------------------------------------------------------------- */

typedef enum scn_link {
  SCN_LINK_SERIAL = 0,
  SCN_LINK_SERVO_BUS = 1,
  SCN_LINK_ZMQ = 2,
  SCN_LINK_NONE = 3,
} scn_link;

struct hil_scenario {
  char name[SCN_TEXT_MAX];
  char description[SCN_TEXT_MAX];
  char source[SCN_PATH_MAX];  /* the scenario file, for messages */
  char dir[SCN_PATH_MAX];     /* relative paths start here */
  char robot[SCN_PATH_MAX];   /* resolved */
  char servos[SCN_PATH_MAX];  /* a servos file on the robot's joints (docs/servo-bus.md), or "" */
  char load[SCN_PATH_MAX];    /* what the loaders read: the robot, or (with servos) the name the
                                 robot with its servos is pinned under (servo_file_pin) */
  char robot_name[SIM_NAME_MAX];
  char *sensors_text;         /* the sensors block after the overrides; NULL: the robot's own */
  char sensors_file[SCN_PATH_MAX]; /* the file it came from ("" for none or inline) */
  int has_seed;
  uint64_t seed;
  double duration_s;
  double time_limit_s;
  hil_options opt;            /* the robot's runtime section with the scenario's over it */
  int nstart;
  scn_change start[SCN_MAX_CHANGES]; /* model_overrides: before the first step */
  /* firmware */
  scn_link link;
  int argc;
  char *argv[SCN_MAX_ARGS + 1]; /* the command as written (placeholders not expanded) */
  int argv_from_cli;            /* given after `--` on the command line */
  char replay[SCN_PATH_MAX];    /* commands from a log instead of a program */
  double stop_timeout_s;
  /* timeline and checks, events in time order */
  int nevents;
  scn_event *events;          /* [SCN_MAX_EVENTS] */
  int nchecks;
  scn_check *checks;          /* [SCN_MAX_CHECKS] */
  char *text;                 /* the scenario as read, for the inputs digest */
};

/* parse.c */
int scn_parse(hil_scenario *s, const cJSON *root, char *err, size_t err_sz);
/* With a servos file: the robot with its servos pinned under s->load (again before a run). */
int scn_pin_robot(hil_scenario *s, char *err, size_t err_sz);

/* --- the firmware process (firmware.c) -------------------------------------------------------- */

typedef struct scn_process {
  pid_t pid;            /* 0: none started */
  int in_fd;            /* its standard input, -1 when closed */
  int out_fd;           /* its standard output and error, -1 at their end */
  FILE *log;            /* everything it printed, as it came */
  char partial[1024];   /* a line not yet ended */
  size_t npartial;
  int exited;
  int status;           /* waitpid status */
  int frozen;           /* SIGSTOP sent by the timeline */
  int killed;           /* the timeline sent a deadly signal */
} scn_process;

/* Starts argv (already expanded) in the environment env, with its standard input a pipe and its
 * output to a pipe copied into log_path; argv[0] without a slash is looked up in PATH. HIL_OK
 * or HIL_ESYSTEM with a message. */
int scn_process_start(scn_process *p, char *const *argv, char *const *env, const char *log_path,
                      char *err, size_t err_sz);
/* Reads what it printed so far; on_line for every whole line. */
void scn_process_read(scn_process *p, void (*on_line)(void *user, const char *line), void *user);
/* 1 when it has exited (reaped: p->status); never waits. */
int scn_process_poll(scn_process *p);
/* Waits up to timeout_s for it to exit, then SIGTERM, then SIGKILL. */
void scn_process_stop(scn_process *p, double timeout_s,
                      void (*on_line)(void *user, const char *line), void *user);
int scn_process_write(scn_process *p, const char *text);
int scn_process_signal(scn_process *p, int sig);
/* exit code, or 128 + signal */
int scn_process_exit_code(const scn_process *p);
void scn_process_close(scn_process *p);

/* --- the run (run.c), its events (events.c) and its result (report.c) ------------------------- */

typedef struct scn_force {
  int body;
  double wrench[6];
  double until; /* simulation s; INFINITY: to the end */
} scn_force;

typedef struct scn_command {
  double t;
  int actuator;
  double value;
} scn_command;

typedef struct scn_run {
  const hil_scenario *s;
  hil_runtime *rt;
  hil_transport *link;       /* the serial link or servo bus the firmware talks over, or NULL */
  hil_transport *zmq;        /* the ZeroMQ transport when the firmware speaks it */
  char ipc_dir[128];         /* the ZeroMQ endpoints' folder (removed at the end) */
  scn_process fw;
  scn_check checks[SCN_MAX_CHECKS];
  sim_model *models[SCN_MAX_EVENTS]; /* the model of each model event, until swapped in */
  void *zmq_ctx;             /* for the timeline's ZeroMQ messages */
  void *zmq_socket[SCN_MAX_EVENTS];
  int next_event;
  int nforces;
  scn_force forces[SCN_MAX_EVENTS];
  int cut;                   /* the firmware's line is cut */
  int corrupting;            /* it corrupts bytes: lockstep waits at most SCN_CORRUPT_WAIT_S */
  double last_state_wall;    /* monotonic s of the last state's after_sense */
  double drop0[64];          /* each sensor's drop probability at the start */
  scn_command *replay;       /* commands of a replayed log, in time order */
  int nreplay, next_replay;
  double wall_start;         /* monotonic s */
  int hung;
  int interrupted;           /* hil_scenario_interrupt ended it */
  int firmware_gone;         /* 0 alive, 1 noticed (one more input pass), 2 the loop may go on */
  double exited_at;
  double end_time;           /* simulation s, once the loop ended */
  uint64_t digest;           /* FNV-1a of every state's qpos and qvel */
  hil_command_counters counters; /* the command counters at the last state */
  hil_link_counters link_counters; /* the link's faults, read before the runtime goes */
  int has_link_counters;
  cJSON *applied;            /* the events as applied: [{t, event}] */
  char err[512];             /* the first failure inside the loop (a swap refused) */
} scn_run;

/* Prepares what the events need before the loop starts (models, sockets); HIL_OK or a code. */
int scn_events_prepare(scn_run *r, char *err, size_t err_sz);
/* Applies every event due by simulation time t (before the step from t). */
void scn_events_due(scn_run *r, sim_data *d);
/* The body forces in force at time t, into d->xfrc_applied. */
void scn_forces_apply(scn_run *r, sim_data *d);
void scn_events_release(scn_run *r);

/* One check's entry of the result. */
cJSON *scn_check_json(const scn_check *c);

#endif
