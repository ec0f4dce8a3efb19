/* hil/runtime/status.h: what the runtime reports about itself (mode, timing, counters), as a
 * plain struct. Apart from runtime.h so that the message encoders (zmq/json_messages.h) and the
 * recorder can format a status without depending on the runtime that fills it. */
#ifndef ACHILLES_HIL_STATUS_H
#define ACHILLES_HIL_STATUS_H

#include <stdint.h>

#include "hil/runtime/command.h"

typedef enum hil_mode {
  HIL_MODE_REALTIME = 0, /* steps at the physics rate on absolute monotonic deadlines */
  HIL_MODE_LOCKSTEP = 1, /* a step happens when every actuator has a new command, or on request */
  HIL_MODE_FAST = 2,     /* as fast as possible (or at `speed` × real time when speed > 0) */
} hil_mode;

const char *hil_mode_name(hil_mode mode);

typedef struct hil_status {
  double sim_time;            /* s, simulation time */
  double wall_time;           /* s, monotonic time since start */
  uint64_t steps;
  hil_mode mode;
  int paused;
  uint64_t overruns;          /* ticks whose step finished after the next deadline */
  uint64_t skipped;           /* ticks dropped by the skip policy */
  double late_p50, late_p99, late_max;          /* s, wake-up lateness (realtime mode) */
  double compute_p50, compute_p99, compute_max; /* s, tick compute time */
  /* Realtime mode: the tick that steps from simulation time t was due at CLOCK_MONOTONIC time
   * t + deadline_offset (s), so a tool on the same host can line its clock up with the ticks.
   * Changes when ticks are skipped or the loop re-anchors (pause, reset); 0 in other modes. */
  double deadline_offset;
  int whole_run;              /* 1: timing over the whole run; 0: over the last status period */
  hil_command_counters commands;
  uint64_t samples_published;
  uint64_t record_errors;     /* log records lost to write, flush or close errors */
  uint64_t input_deferred;    /* input passes a transport cut short at the time budget */
  double input_p50, input_p99, input_max; /* s, CPU time of one input pass (realtime mode) */
  /* the constraint stage of the last step (sim_data.solver): 0 for a robot without limits,
   * friction or geoms, or while none is active */
  int contacts, constraint_rows, constraint_active, solver_iterations;
  int stops;           /* joint limits in force (a joint pressed against a hard stop) */
  double normal_force; /* N, the contacts' normal forces summed (a resting robot: its weight) */
} hil_status;

#endif
