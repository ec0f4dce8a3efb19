/* hil/scenario/scenario.h: firmware tests with verdicts — a robot, its sensors and runtime, a
 * firmware to start, a timeline of events at simulated times and checks of what happened
 * (format: docs/testing-firmware.md).
 *
 * A run builds the runtime of the scenario's robot (lockstep by default, so that its verdict does
 * not depend on the machine's load), the transport the firmware speaks (a pty for the serial
 * protocol or the servo bus, ipc:// ZeroMQ sockets), starts the firmware as a process, and
 * installs a hook in the loop (hil_runtime_set_hook) that applies the events before the steps
 * they are due at and shows every state to the checks, which read the state the sensors read.
 * In lockstep the hook lets the loop step without commands when the firmware is gone (exited,
 * frozen or cut off by the timeline), so the rest of the timeline still plays.
 *
 * The result is a JSON object (docs/testing-firmware.md, "Result"): every check with its
 * measured value and verdict, the events as applied, the firmware's exit, the final state and a
 * digest of the trajectory, and the files of the run (the recording, the firmware's output),
 * named relative to the run's folder. In lockstep and fast modes it holds no wall-clock value,
 * so equal inputs give equal bytes.
 *
 * Ownership: hil_scenario_load allocates, hil_scenario_free releases (accepts NULL). A result
 * is a cJSON tree the caller deletes.
 */
#ifndef ACHILLES_HIL_SCENARIO_SCENARIO_H
#define ACHILLES_HIL_SCENARIO_SCENARIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

typedef struct hil_scenario hil_scenario;

/* Reads and checks a scenario file: every field, the robot and sensors it names, the names its
 * events and checks use, the models its parameter changes make. HIL_OK, or HIL_ECONFIG with a
 * message naming the file and the JSON path ("hold.json: checks[2].joint: unknown joint
 * \"elbw\" (joints: ...)"), or HIL_EIO when a file cannot be read. */
int hil_scenario_load(hil_scenario **out, const char *path, char *err, size_t err_sz);
void hil_scenario_free(hil_scenario **s);

/* A scenario file's JSON with "extends" resolved (merged over its base, whose own relative paths
 * are made absolute; relative paths left are the file's own): what a campaign changes per run
 * and writes back with "base_dir" set to the file's folder. NULL with a message. */
cJSON *hil_scenario_read(const char *path, char *err, size_t err_sz);

/* The firmware command from the command line (after `--`), in place of the scenario's. */
int hil_scenario_set_command(hil_scenario *s, int argc, char *const *argv, char *err,
                             size_t err_sz);

const char *hil_scenario_name(const hil_scenario *s);
/* The wall-clock limit of a run (s): "time_limit_s", else 10 s plus 20 times the duration
 * (lockstep, fast) or twice the duration (realtime). */
double hil_scenario_time_limit(const hil_scenario *s);

/* A digest of everything the run depends on: the scenario's text, the robot and sensors files,
 * the firmware command and the firmware program's bytes (found as the run would find it), a
 * replayed log. Equal digests: the same inputs (a campaign's --resume compares them). */
uint64_t hil_scenario_inputs_digest(const hil_scenario *s);

typedef struct hil_scenario_run_options {
  const char *out_dir; /* the run's folder (made when missing): result.json, run.log,
                          firmware.log, sensors.json */
  const char *id;      /* a campaign's run id, copied into the result (NULL: none) */
  int verbose;         /* the firmware's output also on stderr */
} hil_scenario_run_options;

/* Makes a folder and its parents (mkdir -p): a run's folder. 0, or -1 with errno. */
int hil_scenario_make_dirs(const char *path);

/* Runs the scenario. HIL_OK with *result (also written to OUT_DIR/result.json): the run happened,
 * whatever its verdict (a firmware that crashed or hung is a failed run). Another code with a
 * message when it could not run at all (the pty, a folder). */
int hil_scenario_run(const hil_scenario *s, const hil_scenario_run_options *o, cJSON **result,
                     char *err, size_t err_sz);

/* Ends every run of this process at its next tick (async-signal-safe: for a Ctrl-C handler);
 * their results say "interrupted": true and fail. */
void hil_scenario_interrupt(void);

/* A result's verdict: 1 when every check passed. */
int hil_scenario_result_passed(const cJSON *result);

/* The human summary of one result (one line per check). */
void hil_scenario_print_summary(FILE *out, const cJSON *result);

/* JUnit XML of results (one testsuite per result, one testcase per check; a failed check has a
 * <failure> whose message names the measured value and the bound), in the format GitHub's and
 * GitLab's test reporters read. 0, or -1 with a message. */
int hil_scenario_write_junit(const char *path, const cJSON *const *results, int n, char *err,
                             size_t err_sz);

#endif
