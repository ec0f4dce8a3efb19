/* hil/runtime/runtime_internal.h: the runtime's struct, shared by runtime.c, loop.c and options.c only. */
#ifndef ACHILLES_HIL_RUNTIME_INTERNAL_H
#define ACHILLES_HIL_RUNTIME_INTERNAL_H

#include <stdatomic.h>
#include <signal.h>

#include "hil/record/log.h"
#include "hil/runtime/runtime.h"

#define HIL_MAX_TRANSPORTS 8

struct hil_runtime {
  sim_model *model;
  sim_model *models[HIL_MAX_MODELS]; /* every model of the run: [0] the loaded one, then swaps */
  int nmodels;
  hil_hook hook;                 /* hil_runtime_set_hook; zeroed: none */
  sim_data *data;
  sens_set *sensors;             /* NULL when the robot has no sensors */
  sim_snapshot *snapshot;
  int have_snapshot;
  hil_commands commands;
  hil_options opt;
  uint64_t seed;                 /* the sensors' seed for this run (used again by reset) */
  hil_transport *transports[HIL_MAX_TRANSPORTS];
  int ntransports;
  atomic_int stop; /* set by another thread or a signal handler (lock-free: safe in both) */
  int paused;
  int resynchronize;             /* realtime: re-anchor deadlines (after pause, reset, restore) */
  uint64_t pending_steps;        /* lockstep: steps granted by step requests */
  double start_wall;             /* monotonic s at creation */
  double deadline_offset;        /* realtime: a tick's deadline minus the sim time it steps from */
  uint64_t steps, overruns, skipped, samples;
  hil_histogram late, compute;   /* the current status period */
  hil_histogram late_total, compute_total; /* the whole run (the final report) */
  hil_log_writer *log;           /* recording, or NULL */
  double log_next_flush;         /* monotonic s */
  char log_path[256];            /* for messages */
  uint64_t record_errors;        /* records lost to write, flush or close errors */
  int nonfinite;                 /* the state turned NaN or infinite: the run stopped there */
  int status_due;                /* publish a status now (an error to tell), whatever the period */
  double input_until;            /* monotonic s: the current input pass's budget ends */
  uint64_t input_deferred;
  hil_histogram input;           /* input pass durations, the current status period */
  hil_histogram input_total;
  const char *polling;           /* name of the transport being polled (command records) */
};

double hil__monotonic_now(void);
void hil__poll_transports(hil_runtime *rt);
/* The same, the pass's budget ending no later than `until` (CLOCK_MONOTONIC, s): a pass taken
 * while waiting for a deadline must not run past it. */
void hil__poll_transports_until(hil_runtime *rt, double until);
void hil__step(hil_runtime *rt);
void hil__sense(hil_runtime *rt);
/* Writes a status record to the log when recording. */
void hil__record_status(hil_runtime *rt, const hil_status *st);
/* Closes the log (end record), counting and telling a failure. */
void hil__close_record(hil_runtime *rt);

#endif
