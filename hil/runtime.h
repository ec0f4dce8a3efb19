/* hil/runtime.h: the hardware-in-the-loop runtime — one simulated robot, its sensors, the
 * command intake, the transports, and the loop that paces them.
 *
 * One tick:  transports → commands (validate, clamp, watchdog) → ctrl → sim_step → sim_forward
 *            → sensors → transports (publish).
 *
 * Clocks. Every time value says its clock:
 *   - simulation time (s): sim_data.time, advanced by the physics step;
 *   - loop time (s): the clock the watchdog and command timestamps use: monotonic wall time since
 *     the runtime started in realtime mode, simulation time in lockstep and fast modes (so those
 *     runs are deterministic);
 *   - wall time: CLOCK_MONOTONIC, used only for pacing and timing statistics.
 *
 * Ownership: hil_runtime_new() builds everything from a config file; hil_runtime_destroy()
 * releases it all, including transports added to it, and accepts NULL.
 */
#ifndef ACHILLES_HIL_RUNTIME_H
#define ACHILLES_HIL_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "hil/command.h"
#include "hil/error.h"
#include "hil/stats.h"
#include "sensors/sensors.h"
#include "sim/sim.h"

typedef enum hil_mode {
  HIL_MODE_REALTIME = 0, /* steps at the physics rate on absolute monotonic deadlines */
  HIL_MODE_LOCKSTEP = 1, /* a step happens when every actuator has a new command, or on request */
  HIL_MODE_FAST = 2,     /* as fast as possible (or at `speed` × real time when speed > 0) */
} hil_mode;

typedef enum hil_overrun {
  HIL_OVERRUN_SKIP = 0,    /* after a stall, drop the missed ticks: simulation falls behind */
  HIL_OVERRUN_CATCHUP = 1, /* run the missed ticks back to back (at most max_catchup) */
} hil_overrun;

/* Physics rates accepted from a config or --rate (docs/runtime.md). */
#define HIL_RATE_MIN_HZ 1.0
#define HIL_RATE_MAX_HZ 100000.0

typedef struct hil_options {
  double rate_hz;            /* physics rate; the model's timestep is set to 1/rate_hz */
  hil_mode mode;
  double speed;              /* lockstep/fast: simulated seconds per wall second, 0 = unpaced */
  hil_overrun overrun;
  int max_catchup;           /* catch-up bound, ticks */
  double spin_s;             /* realtime: busy-wait this long before each deadline (0: sleep) */
  double duration_s;         /* stop after this much simulation time; 0 = run until stopped */
  uint64_t seed;             /* sensor noise seed */
  int has_seed;              /* seed given (else the sensors config's seed) */
  int realtime_priority;     /* --rt: ask for SCHED_FIFO, mlockall and a CPU */
  int cpu;                   /* CPU to pin to with --rt, -1 for any */
  int keep_awake;            /* with --rt and cpu: keep that CPU from idling (hil/cpu.h) */
  double status_period_s;    /* console status line and status message period, 0 = never */
  int quiet;                 /* no console status lines */
  double watchdog_timeout_s; /* 0 disables the command watchdog */
  hil_timeout_action on_timeout;
} hil_options;

/* Fills the defaults: 1 kHz, realtime, skip, 1 s status, 0.1 s watchdog to zero. */
void hil_options_default(hil_options *o);

/* Reads the "runtime" section of a robot file into o (keys as in docs/runtime.md). */
int hil_options_parse(hil_options *o, const char *config_path, char *err, size_t err_sz);

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
} hil_status;

typedef struct hil_runtime hil_runtime;
typedef struct hil_transport hil_transport;

/* Loads the robot, its actuators and sensors from config_path and applies o.
 * Returns NULL with a message in err on failure. */
hil_runtime *hil_runtime_new(const char *config_path, const hil_options *o, char *err,
                             size_t err_sz);
void hil_runtime_destroy(hil_runtime **rt);

/* Hands a transport to the runtime, which destroys it with itself (at once, when this fails:
 * HIL_EINVAL for too many transports, or what the transport's attach returned). */
int hil_runtime_add_transport(hil_runtime *rt, hil_transport *t);

/* Records every sample published, every command received (with its result and the transport it
 * came through) and every status to a log at path (format: docs/logs.md), flushed to the kernel
 * every 0.1 s of wall time so that a killed run loses at most that much. Call before
 * hil_runtime_run; the log is closed (with its end record) by hil_runtime_destroy. */
int hil_runtime_record(hil_runtime *rt, const char *path, char *err, size_t err_sz);

/* Runs the loop until stopped, the duration is reached, or a fatal error. On the way out the
 * commands go to zero and a last step publishes that state. Returns HIL_OK or an error. */
int hil_runtime_run(hil_runtime *rt);

/* Asks the loop to stop at the next tick; async-signal-safe. */
void hil_runtime_request_stop(hil_runtime *rt);

/* One tick without pacing: poll transports, apply commands, step, sense, publish. */
void hil_runtime_tick(hil_runtime *rt);

/* --- for transports --------------------------------------------------------------------------- */

const sim_model *hil_runtime_model(const hil_runtime *rt);
const sim_data *hil_runtime_data(const hil_runtime *rt);
uint64_t hil_runtime_steps(const hil_runtime *rt); /* physics steps since start (as status) */
sens_set *hil_runtime_sensors(hil_runtime *rt);
hil_commands *hil_runtime_commands(hil_runtime *rt);
const hil_options *hil_runtime_options(const hil_runtime *rt);
/* Loop time now, s (see the clocks above): the timestamp for a command received now. */
double hil_runtime_loop_time(const hil_runtime *rt);
void hil_runtime_status(const hil_runtime *rt, hil_status *out);
/* The same with the timing figures of the whole run instead of the last status period. */
void hil_runtime_status_total(const hil_runtime *rt, hil_status *out);

/* Control requests (the ZeroMQ control socket, serial STEP_REQUEST). */
void hil_runtime_pause(hil_runtime *rt);
int hil_runtime_paused(const hil_runtime *rt);
void hil_runtime_resume(hil_runtime *rt);
/* Lockstep: allow n more steps regardless of commands. */
void hil_runtime_request_steps(hil_runtime *rt, uint64_t n);
/* Back to the initial state: time 0, configured initial positions, commands cleared, sensors
 * reset with the run's seed. */
void hil_runtime_reset(hil_runtime *rt);
/* One snapshot slot of the simulation state (sensor state is not part of it). */
int hil_runtime_snapshot_save(hil_runtime *rt);
int hil_runtime_snapshot_restore(hil_runtime *rt);

const char *hil_mode_name(hil_mode mode);

#endif
