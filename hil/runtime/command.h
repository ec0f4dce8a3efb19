/* hil/runtime/command.h: motor command intake — validation, clamping, watchdog.
 *
 * Every command from a board or a program passes through here before it can reach the
 * physics. A command names an actuator (or a joint driven by exactly one actuator) and carries
 * one value in the actuator's units (docs/robot-format.md). Rules, applied in this order:
 *   - unknown actuator or joint: rejected, counted in rejected_unknown;
 *   - NaN or infinity: rejected, counted in rejected_nonfinite; the previous command stays;
 *   - outside the actuator's ctrlrange: clamped to the range, accepted, counted in clamped.
 * The watchdog: an actuator whose last accepted command is older than timeout_s (on the loop's
 * clock: monotonic wall time in realtime mode, simulation time in lockstep and fast modes) has
 * its command set to zero (or held, if configured); each transition into that state counts one
 * trip. A new command restores control at once.
 *
 * Ownership: hil_commands_init() allocates the per-actuator table, hil_commands_free() releases
 * it. The struct is a value the caller owns.
 */
#ifndef ACHILLES_HIL_COMMAND_H
#define ACHILLES_HIL_COMMAND_H

#include <stdint.h>

#include "sim/sim.h"

typedef enum hil_timeout_action {
  HIL_TIMEOUT_ZERO = 0, /* command goes to zero: motors go limp (DC motors: duty 0) */
  HIL_TIMEOUT_HOLD = 1, /* the last command stays */
} hil_timeout_action;

typedef struct hil_command_counters {
  uint64_t accepted;           /* commands accepted (clamped ones included) */
  uint64_t clamped;            /* accepted after clamping to ctrlrange */
  uint64_t rejected_nonfinite; /* NaN or infinite values */
  uint64_t rejected_unknown;   /* unknown actuator or joint */
  uint64_t rejected_malformed; /* messages that could not be decoded (counted by transports) */
  uint64_t watchdog_trips;     /* transitions into the timed-out state */
} hil_command_counters;

typedef struct hil_command_slot {
  double value;       /* last accepted command, clamped */
  int fresh;          /* a command arrived since the last hil_commands_apply */
  double received_at; /* loop clock, s; -inf before the first command */
  int timed_out;      /* the watchdog holds this actuator */
} hil_command_slot;

/* Called for every command submitted, accepted or not: the actuator index (-1 when unknown),
 * the name it was addressed by (NULL when submitted by index), the value as received, and the
 * result (HIL_OK, HIL_EUNKNOWN, HIL_ENONFINITE; clamped = 1 when the value was clamped). Also
 * called with result HIL_COMMAND_WATCHDOG and value 0 when the watchdog sets an actuator's
 * command to zero (on_timeout ZERO), so that a recording holds every input the physics got
 * (docs/logs.md: a command record of source "watchdog"). */
#define HIL_COMMAND_WATCHDOG 1
typedef void (*hil_command_observer)(void *user, int actuator, const char *name, double value,
                                     int result, int clamped);

typedef struct hil_commands {
  const sim_model *model;
  int count;                   /* = model->nu */
  hil_command_slot *slots;     /* [count] */
  double timeout_s;            /* watchdog timeout; 0 disables the watchdog */
  hil_timeout_action on_timeout;
  uint64_t received_since_apply; /* accepted commands since the last hil_commands_apply */
  hil_command_counters counters;
  hil_command_observer observer; /* optional (recording) */
  void *observer_user;
} hil_commands;

/* Allocates the table for m's actuators. Returns HIL_OK or HIL_ENOMEM. */
int hil_commands_init(hil_commands *c, const sim_model *m, double timeout_s,
                      hil_timeout_action on_timeout);
void hil_commands_free(hil_commands *c);

/* Index of the actuator named `name`, or of the only actuator driving the joint `name`;
 * -1 when neither exists (or the joint has several actuators). */
int hil_commands_find(const hil_commands *c, const char *name);

/* Validates and stores one command received at loop time `now` (s).
 * Returns HIL_OK (possibly clamped), HIL_EUNKNOWN or HIL_ENONFINITE; counters are updated. */
int hil_commands_submit(hil_commands *c, int actuator, double value, double now);
int hil_commands_submit_named(hil_commands *c, const char *name, double value, double now);

/* Counts a message a transport could not decode. */
void hil_commands_count_malformed(hil_commands *c);

/* Writes the commands into d->ctrl at loop time `now`, applying the watchdog. */
void hil_commands_apply(hil_commands *c, sim_data *d, double now);

/* 1 when every actuator has received a command since the last apply (lockstep's step rule);
 * 0 when there are no actuators. */
int hil_commands_all_fresh(const hil_commands *c);

/* Forgets every command (all zero, watchdog re-armed as if nothing was ever received). */
void hil_commands_clear(hil_commands *c);

#endif
