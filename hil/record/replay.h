/* hil/record/replay.h: replaying a recorded log (hil/log.h) or a CSV file to firmware with the original
 * timing, on the wire formats of the live simulator (docs/replay.md).
 *
 * Two stages:
 *   - a schedule: the sample records of a file, selected by a window of simulation time and by
 *     topic patterns, held in memory in file order (hil_replay_load). A damaged record (CRC
 *     mismatch, unparsable, truncated tail) ends the schedule there, or is skipped on request;
 *     the first damage is kept as "FILE: record N at byte B: what";
 *   - a player (hil_replay_new / hil_replay_run): paces the schedule on absolute
 *     CLOCK_MONOTONIC deadlines (t - t_first) / rate after the start, sleeping with
 *     clock_nanosleep(TIMER_ABSTIME) and spinning the last spin_s (optionally under SCHED_FIFO
 *     and pinned to one CPU with its ZeroMQ I/O thread), and sends every sample as the
 *     live simulator does: over ZeroMQ ([topic, json] on a PUB, the JSON written with hil_jw in
 *     the layout of hil_msg_encode_sample) or over a serial line (HELLO / HELLO_ACK, then one
 *     SENSOR_SAMPLES frame per instant, with the sensor id table of docs/serial-transport.md).
 *     Over ZeroMQ a REP control socket answers "hello", "status" and "latest" in the live layout
 *     (every other request gets {"ok":false}) and a PULL reads and discards commands; both are
 *     looked at without blocking before each deadline, never while spinning or sending.
 *
 * Loops: pass k (0, 1, ...) shifts t and t_truth by k·L, L = t_last - t_first + one period, and
 * each sensor's seq by k times its count of sequence numbers in the window, so a looped replay
 * looks like one continuous run.
 *
 * Ownership: hil_replay_load() allocates the schedule's arrays, hil_replay_free() releases them.
 * hil_replay_new() allocates a player (it binds the socket or creates the pty at once) that
 * borrows the schedule, which must outlive it; hil_replay_destroy() releases it, nulls the
 * pointer and accepts NULL. Playing allocates nothing per sample (the optional keep-awake thread
 * is started before the first).
 */
#ifndef ACHILLES_HIL_REPLAY_H
#define ACHILLES_HIL_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hil/client/achilles_client.h"
#include "hil/zmq/json_messages.h"
#include "hil/record/log.h"
#include "hil/serial/serial_transport.h"
#include "hil/runtime/stats.h"
#include "hil/zmq/zmq_transport.h"

#define HIL_REPLAY_MAX_SENSORS HIL_LOG_MAX_SENSORS
#define HIL_REPLAY_TOPICS_MAX 512
#define HIL_REPLAY_MESSAGE_MAX 256
#define HIL_REPLAY_MAX_GAP_S 10.0   /* default longest jump of t between two records, s */
#define HIL_REPLAY_WINDOW_TOL 1e-3  /* --from/--to tolerance, as a fraction of the period */

/* --- schedule --------------------------------------------------------------------------------- */

typedef struct hil_replay_sensor {
  char name[HIL_LOG_NAME_MAX];
  char type[16];                 /* "encoder", "imu", "torque"; "csv" when a CSV's is unknown */
  char topic[HIL_MSG_TOPIC_MAX]; /* "enc/<name>", "imu/<name>", "trq/<name>", "csv/<name>" */
  int nch;
  char channel[SENS_MAX_CHANNELS][SENS_CHANNEL_NAME_MAX];
  char unit[SENS_MAX_CHANNELS][HIL_LOG_UNIT_MAX];
  int selected;                  /* its topic passes the topic patterns */
  double rate_hz;                /* the header's (a CSV's: the schedule's rate) */
  long long samples;             /* entries of this sensor in the schedule */
  uint64_t seq_first, seq_last;  /* first and last seq in the schedule */
} hil_replay_sensor;

/* One sample; its values live in the schedule's pool: nch measured values, then nch truth
 * values when has_truth. */
typedef struct hil_replay_entry {
  double t, t_truth;
  uint64_t seq;
  int16_t sensor; /* index in hil_replay_schedule.sensor */
  uint8_t valid;
  uint8_t has_truth;
  uint32_t pool; /* index of the first value in the pool */
} hil_replay_entry;

typedef struct hil_replay_select {
  int has_from, has_to;
  double from, to;                     /* window of t, s, both ends included, with a tolerance
                                          of HIL_REPLAY_WINDOW_TOL times the period (the
                                          schedule's period: the header's physics period, or a
                                          CSV's smallest time step), so that t accumulated with
                                          rounding (1.0000000000000007) counts as 1 */
  char topics[HIL_REPLAY_TOPICS_MAX];  /* comma-separated prefixes or fnmatch globs; "" = all */
  int skip_damaged;                    /* continue after a damaged record instead of stopping */
  double max_gap_s;                    /* longest jump of t from one sample record to the next
                                          (<= 0: HIL_REPLAY_MAX_GAP_S); a longer one is damage */
  int skip_gaps;                       /* a longer jump is kept and played without waiting for it
                                          (the next instant one period later) */
} hil_replay_select;

/* A jump of t longer than the limit, played across (skip_gaps): the entries from `entry` on are
 * due `cut` s earlier (and `total` s earlier than their t says: this gap and those before it). */
typedef struct hil_replay_gap {
  size_t entry;
  double cut, total;
} hil_replay_gap;

typedef struct hil_replay_schedule {
  char path[256];
  int is_csv;
  double rate_hz;       /* physics rate of the header; for CSV 1 / the smallest time step */
  int nactuators;       /* from the header (0 for CSV): HELLO_ACK.n_joints */
  char actuator[HIL_LOG_MAX_ACTUATORS][HIL_LOG_NAME_MAX]; /* their names (control hello) */
  char robot[HIL_LOG_NAME_MAX]; /* the header's robot; a CSV's file name without directory */
  int has_seed;         /* a log: seed is the header's noise seed */
  uint64_t seed;
  int nsensors;
  hil_replay_sensor sensor[HIL_REPLAY_MAX_SENSORS];
  size_t n;             /* entries */
  hil_replay_entry *entry;
  double *pool;
  size_t npool, pool_cap, entry_cap;
  double t_first, t_last; /* of the entries */
  double period;          /* 1 / rate_hz: the gap between the last instant of a pass and the
                             first of the next */
  long long samples_read; /* sample records read in the file (in or out of the selection) */
  long long damaged;      /* damaged records met (with skip_damaged, all of them) */
  int stopped;            /* 1: the schedule ends at the first damaged record */
  char damage[512];       /* the first damage, "FILE: record N at byte B: what", or "" */
  int incomplete;         /* a log read to its end without an end record (a killed recorder) */
  double window_tol;      /* s: the --from/--to tolerance used */
  long long gaps_met;     /* jumps longer than the limit played across (skip_gaps) */
  size_t ngaps, gap_cap;  /* those after the first entry: cut from the schedule */
  hil_replay_gap *gap;
  double gap_cut;         /* s: their total */
  char gap_note[512];     /* the first, "FILE: record N at byte B: what", or "" */
} hil_replay_schedule;

/* Returns 1 when topic passes the patterns: each comma-separated pattern is a prefix, or, when
 * it holds one of * ? [, a shell glob (fnmatch) matched against the whole topic. Empty = all. */
int hil_replay_topic_match(const char *patterns, const char *topic);

/* Reads path (a log, recognised by its first bytes, or a CSV file) into s. Returns 0 or a
 * negative HIL_LOG_* code with a message (file missing, not a log or CSV, out of memory, a
 * sensor beyond HIL_REPLAY_MAX_SENSORS). A damaged record is not an error here: s->damage
 * names it and the schedule holds what came before it (and after it with skip_damaged). */
int hil_replay_load(hil_replay_schedule *s, const char *path, const hil_replay_select *sel,
                    char *err, size_t err_sz);
void hil_replay_free(hil_replay_schedule *s);

/* A sample of the schedule as pass `pass` plays it (t, t_truth and seq shifted). */
typedef struct hil_replay_sample {
  int sensor;
  uint64_t seq;
  double t, t_truth;
  int valid, has_truth;
  double value[SENS_MAX_CHANNELS]; /* NaN when not valid */
  double truth[SENS_MAX_CHANNELS];
} hil_replay_sample;

/* Length of one pass, s: t_last - t_first + period. */
double hil_replay_pass_length(const hil_replay_schedule *s);
/* When entry i of pass `pass` is due, in s of the replay clock after the first entry of pass 0
 * at rate 1 (the player divides by the rate): its t from the first, less the gaps played across
 * before it, plus pass × (the pass length less all the gaps cut), so a looped pass never waits
 * a cut gap again (docs/replay.md, sections 3 and 4). */
double hil_replay_due_offset(const hil_replay_schedule *s, size_t i, long long pass);
void hil_replay_sample_at(hil_replay_sample *out, const hil_replay_schedule *s, size_t i,
                          long long pass);

/* The topic ("truth/" prepended when truth) and the JSON message of a sample, in the layout of
 * hil_msg_encode_sample (docs/messages.md). Return the length, or HIL_EINVAL / HIL_ENOMEM. */
int hil_replay_topic(char *out, size_t out_sz, const hil_replay_sensor *sn, int truth);
int hil_replay_encode_json(char *out, size_t out_sz, const hil_replay_sensor *sn,
                           const hil_replay_sample *smp, int truth);

/* --- player ----------------------------------------------------------------------------------- */

typedef struct hil_replay hil_replay;

typedef enum hil_replay_output {
  HIL_REPLAY_ZMQ = 0,    /* a PUB (an XPUB, to see subscribers) at zmq_endpoint */
  HIL_REPLAY_SERIAL = 1, /* the serial protocol over a pty or a device */
} hil_replay_output;

typedef struct hil_replay_options {
  double rate;            /* speed factor: 2 plays twice as fast (default 1) */
  int loop;               /* start again after the last sample */
  long long loops;        /* with loop: passes to play, 0 = until stopped */
  hil_replay_output output;
  char zmq_endpoint[HIL_ZMQ_ENDPOINT_MAX]; /* default tcp://127.0.0.1:5555 */
  int allow_remote;       /* accept a non-local endpoint */
  int sndhwm;             /* PUB queue per subscriber (default 1000, as live) */
  int truth;              /* ZeroMQ: also publish truth/<topic> when the file has truth */
  int wait_subscriber;    /* ZeroMQ: start when the first subscription arrives (default 1) */
  int wait_hello;         /* ZeroMQ: start right after answering a control "hello" while a
                             subscription that receives "status" is in place: the handshake of
                             docs/messages.md section 8, so the controller misses nothing (needs
                             ctl_endpoint; overrides wait_subscriber) */
  char ctl_endpoint[HIL_ZMQ_ENDPOINT_MAX]; /* ZeroMQ: a REP answering the control requests
                             hello, status and latest as live, every other one with an
                             error (default tcp://127.0.0.1:5557; "" = none) */
  char cmd_endpoint[HIL_ZMQ_ENDPOINT_MAX]; /* ZeroMQ: a PULL whose command messages are read
                             and counted, never applied (default tcp://127.0.0.1:5556; "" = none) */
  int ctl_required;       /* 1: failing to bind ctl_endpoint is an error; 0 (default): said on
                             progress and played without the control socket */
  int cmd_required;       /* the same for cmd_endpoint */
  hil_serial_options serial;
  double spin_s;          /* busy-wait this long before each deadline (default 500 µs) */
  int shift;              /* 0 (default): absolute deadlines; after a stall the late samples go
                             out back to back until the schedule is caught up. 1: an instant
                             sent more than shift_after_s late moves the rest of the schedule
                             later by its lateness (intervals kept, the replay falls behind, as
                             the live loop's "skip" policy; under sustained load it slows down) */
  double shift_after_s;   /* lateness that shifts the schedule (default 0.5 ms) */
  double lead_s;          /* from the start (subscriber or HELLO) to the first sample (2 ms) */
  int rt_priority;        /* > 0: SCHED_FIFO at this priority for the playing thread and the
                             ZeroMQ I/O thread, when the system grants it (root or
                             CAP_SYS_NICE; else said once and played without); 0: none */
  int cpu;                /* >= 0: pin the playing thread and the ZeroMQ I/O thread to this
                             CPU (default -1: any) */
  int keep_awake;         /* with cpu: while playing, a SCHED_IDLE thread on that CPU spins so
                             it never idles (a halted virtual CPU wakes late; the thread yields
                             to everything else at once). Costs the CPU's idle time. */
  double status_period_s; /* progress line and status message period (default 1; 0 = never) */
  FILE *progress;         /* progress lines and the summary (NULL: none) */
  /* An observer (the live view, hil/view/view.h): called on the playing thread right after
   * instant [i, j) of pass `pass` went out and was timed, with r for hil_replay_get_report. It
   * must return at once (copy what it needs, never wait), so the timing of the next instant does
   * not depend on it. NULL: none. */
  void (*on_instant)(void *user, const hil_replay *r, size_t i, size_t j, long long pass);
  /* ZeroMQ with wait_subscriber: looked at while waiting for the first subscriber (every 50 ms
   * at most); nonzero starts the replay as a subscription would (a browser connected). */
  int (*ready)(void *user);
  void *user;             /* their first argument */
} hil_replay_options;

void hil_replay_options_default(hil_replay_options *o);

/* Figures of a replay, updated as it plays. Timing error = send time - scheduled time. */
typedef struct hil_replay_report {
  uint64_t played;        /* samples played (serial: also while no board is connected) */
  uint64_t messages;      /* ZeroMQ messages (truth included) or serial frames sent */
  uint64_t send_failed;   /* refused by the PUB, or frames dropped (board not reading) */
  uint64_t instants;      /* instants played: runs of records with the same t (a sensor on its
                             own clock splits a physics step into several) */
  uint64_t steps;         /* physics steps as the recording counted them: round(t * rate_hz) at
                             the latest t played (a log); the instants (a CSV: its rows) */
  long long passes;       /* passes started */
  double t;               /* the latest t sent (the running maximum, shifted by the passes) */
  double wall;            /* s since the start */
  uint64_t late_1ms;      /* instants sent more than 1 ms after their deadline */
  uint64_t shifts;        /* times the schedule was moved later (shift) */
  double behind;          /* s, how much later than the original schedule it now runs */
  double err_p50, err_p99, err_max; /* s, over the whole replay */
  uint64_t motor_commands;  /* serial: MOTOR_COMMAND frames received (ignored) */
  uint64_t frames_in;       /* serial: frames decoded from the board */
  uint64_t ctl_requests;    /* ZeroMQ: control requests answered (errors included) */
  uint64_t ctl_errors;      /* ZeroMQ: control requests answered with "ok":false */
  uint64_t cmd_messages;    /* ZeroMQ: command messages read on the PULL and discarded */
  int stopped;              /* 1: stopped by hil_replay_request_stop */
  int realtime;             /* 1: played under SCHED_FIFO (rt_priority granted) */
} hil_replay_report;

/* Binds the socket (ZeroMQ) or creates the pty / opens the device (serial). NULL with a
 * message on failure (non-local endpoint without allow_remote, bind failure, bad device). */
hil_replay *hil_replay_new(const hil_replay_schedule *s, const hil_replay_options *o, char *err,
                           size_t err_sz);
void hil_replay_destroy(hil_replay **r);

/* The bound endpoint with wildcards resolved (ZeroMQ), or the path to open (serial). */
const char *hil_replay_where(const hil_replay *r);
/* The bound control (REP) and command (PULL) endpoints, "" when not bound. */
const char *hil_replay_ctl_where(const hil_replay *r);
const char *hil_replay_cmd_where(const hil_replay *r);

/* Waits for a subscriber (ZeroMQ, if asked) or a HELLO (serial), then plays the schedule.
 * Returns 0 when it played to the end (or was stopped), or a negative HIL_* code. */
int hil_replay_run(hil_replay *r);

/* Asks hil_replay_run to return at the next sample or wait; async-signal-safe. */
void hil_replay_request_stop(hil_replay *r);

/* The figures so far (safe to call from the playing thread only, or after run returned). */
void hil_replay_get_report(const hil_replay *r, hil_replay_report *out);

#endif
