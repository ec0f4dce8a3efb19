/* hil/runtime/runtime.h: the hardware-in-the-loop runtime — one simulated robot, its sensors, the
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

#include "hil/runtime/command.h"
#include "hil/error.h"
#include "hil/runtime/stats.h"
#include "hil/runtime/status.h"
#include "sensors/sensors.h"
#include "sim/sim.h"


typedef enum hil_overrun {
  HIL_OVERRUN_SKIP = 0,    /* after a stall, drop the missed ticks: simulation falls behind */
  HIL_OVERRUN_CATCHUP = 1, /* run the missed ticks back to back (at most max_catchup) */
} hil_overrun;

/* What a run does when its recording fails (a write, flush or close error: a full disk, a file
 * size limit, an I/O error). Either way the failure is said on stderr at once, counted in the
 * status (record_errors), and hil_runtime_run returns HIL_EIO. */
typedef enum hil_record_error_action {
  HIL_RECORD_ERROR_STOP = 0,     /* stop the run (motors to zero, final status) */
  HIL_RECORD_ERROR_CONTINUE = 1, /* run on without recording */
} hil_record_error_action;

/* Physics rates accepted from a config or --rate (docs/runtime.md). */
#define HIL_RATE_MIN_HZ 1.0
#define HIL_RATE_MAX_HZ 100000.0

/* --rt: the loop's SCHED_FIFO priority, and its ZeroMQ I/O thread's one below it: above every
 * ordinary thread, yet a burst of messages on the I/O thread can never hold the loop back (at
 * equal FIFO priority a thread that is running keeps its CPU until it blocks). */
#define HIL_RT_LOOP_PRIORITY 80
#define HIL_RT_IO_PRIORITY 79

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
  hil_record_error_action on_record_error;
  /* realtime: the most one pass over the transports' input may take (s); 0 = the default,
   * HIL_INPUT_BUDGET_PERIODS of the period; negative = no bound (for comparisons only) */
  double input_budget_s;
  /* a sensors file (docs/sensors.md) instead of the robot file's "sensors" key; NULL: that key.
   * An MJCF or URDF robot has sensors only through it. */
  const char *sensors_file;
} hil_options;

/* Realtime: one input pass (before a step, after it, or between ticks) takes at most this many
 * periods by default; a tick has at most two passes plus the between-tick polls (also bounded
 * to 1/8 period), so input can never take more than 3/8 of a period. */
#define HIL_INPUT_BUDGET_PERIODS 0.125

/* Fills the defaults: 1 kHz, realtime, skip, 1 s status, 0.1 s watchdog to zero. */
void hil_options_default(hil_options *o);

/* Reads the "runtime" section of a robot file into o (keys as in docs/runtime.md). */
int hil_options_parse(hil_options *o, const char *config_path, char *err, size_t err_sz);


typedef struct hil_runtime hil_runtime;
typedef struct hil_transport hil_transport;

/* Loads the robot (robot JSON, MJCF or URDF: sim/import), its actuators and sensors from
 * config_path and applies o.
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
 * hil_runtime_run, which closes the log (with its end record) on its way out; a log still open
 * is closed by hil_runtime_destroy. */
int hil_runtime_record(hil_runtime *rt, const char *path, char *err, size_t err_sz);

/* Runs the loop until stopped, the duration is reached, or a fatal error. On the way out the
 * commands go to zero, the final status is published and the log (if any) is closed with its
 * end record. Returns HIL_OK, HIL_ENONFINITE when the state turned NaN or infinite (the run
 * stopped at that step, said on stderr with the time and the first joint; sim_state_nonfinite),
 * or HIL_EIO when the recording lost records (see hil_record_error_action). */
int hil_runtime_run(hil_runtime *rt);

/* Asks the loop to stop at the next tick; async-signal-safe. */
void hil_runtime_request_stop(hil_runtime *rt);

/* One tick without pacing: poll transports, apply commands, step, sense, publish. */
void hil_runtime_tick(hil_runtime *rt);

/* --- a hook inside the loop (hil/scenario: events at simulated times, checks) ----------------- */

/* Called on the loop thread; each member may be NULL, and each may call hil_runtime_request_stop.
 *   before_step:       before every step from simulation time d->time, after the commands were
 *                      taken in and before they are applied: an event at t acts on the step from
 *                      t. d is the runtime's data, writable (xfrc_applied, qfrc_applied).
 *   after_sense:       after the samples of every state (t = 0, each step, a reset) were taken
 *                      and published: the state the sensors read is in hil_runtime_data().
 *   lockstep_release:  lockstep only, asked each time the loop looks whether it may step
 *                      (after each step and after each input pass, at least every 20 ms of
 *                      wall time while it waits): 1 lets it step without a full command set
 *                      (the firmware is gone, frozen or cut off by a link fault). */
typedef struct hil_hook {
  void (*before_step)(void *user, hil_runtime *rt, sim_data *d);
  void (*after_sense)(void *user, hil_runtime *rt);
  int (*lockstep_release)(void *user, hil_runtime *rt);
  void *user;
} hil_hook;

/* Installs a copy of *hook (NULL removes it). */
void hil_runtime_set_hook(hil_runtime *rt, const hil_hook *hook);

/* Models a run may swap in (hil_runtime_swap_model), the first one included. */
#define HIL_MAX_MODELS 16

/* A change of the robot's parameters (friction up 50 %, a heavier link) without writing to a
 * model that other threads may read (the view's thread reads names and geometry): m is a second
 * model, loaded from the same description and changed before it is handed over, that the loop
 * steps from now on. The runtime takes ownership of m (also on failure, when it frees it) and
 * keeps the models it replaced alive until hil_runtime_destroy, so a pointer taken earlier stays
 * valid. m must have the layout of the current model (every count equal: HIL_EINVAL otherwise);
 * it gets the run's timestep. Before the first step the state is reset from m (its initial
 * positions count); later the state carries on. Call on the loop thread (from the hook) or
 * before hil_runtime_run. HIL_EINVAL after HIL_MAX_MODELS - 1 swaps. */
int hil_runtime_swap_model(hil_runtime *rt, sim_model *m, char *err, size_t err_sz);

/* --- for transports --------------------------------------------------------------------------- */

const sim_model *hil_runtime_model(const hil_runtime *rt);
const sim_data *hil_runtime_data(const hil_runtime *rt);
uint64_t hil_runtime_steps(const hil_runtime *rt); /* physics steps since start (as status) */
sens_set *hil_runtime_sensors(hil_runtime *rt);
hil_commands *hil_runtime_commands(hil_runtime *rt);
const hil_options *hil_runtime_options(const hil_runtime *rt);
/* Recording (hil_runtime_record), for a transport's publish_step on the loop thread: 1 while
 * a log is open; hil_runtime_record_servo writes a servo record (docs/logs.md) of the fields
 * servo `actuator` (bus ID id) took at the current step and simulation time (nothing when not
 * recording; a failed write counts as the other records' do). */
int hil_runtime_recording(const hil_runtime *rt);
void hil_runtime_record_servo(hil_runtime *rt, const char *actuator, int id, int n,
                              const char *const *names, const uint32_t *values);
/* Loop time now, s (see the clocks above): the timestamp for a command received now. */
double hil_runtime_loop_time(const hil_runtime *rt);
void hil_runtime_status(const hil_runtime *rt, hil_status *out);
/* The same with the timing figures of the whole run instead of the last status period. */
void hil_runtime_status_total(const hil_runtime *rt, hil_status *out);

/* The input budget, for transports: 1 while the current input pass may go on reading. In
 * realtime mode a pass ends HIL_INPUT_BUDGET_PERIODS of a period after it began (or after
 * options.input_budget_s); a transport handles at least one message a pass, then asks this
 * before each next one and leaves the rest where it waits (socket queue, kernel buffer) for the
 * next pass, calling hil_runtime_input_deferred once. Always 1 in lockstep and fast modes. */
int hil_runtime_input_budget_left(const hil_runtime *rt);
void hil_runtime_input_deferred(hil_runtime *rt);

/* The i-th transport added (0-based), NULL past the last: a front end that shows the others'
 * counters (the web view) reads their describe() lines through it, on the loop thread. */
hil_transport *hil_runtime_transport(const hil_runtime *rt, int i);

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


#endif
