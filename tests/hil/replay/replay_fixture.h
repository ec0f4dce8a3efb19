/* tests/hil/replay/replay_fixture.h: what the replay suites share — the test log, a replay played
 * by a thread to a SUB in the test's thread, a board on the serial side, and the suite folder.
 *
 * The test log: three sensors on a 1 kHz clock, t = k ms for k = 0 .. nsteps-1:
 *   enc_a   encoder, every step: counts = k - 3 (int), angle = 0.001·k + 0.1, velocity = k/7
 *   imu_b   imu, every 2nd step, sample 1 not valid (its delay line "filling")
 *   trq_c   torque, every 4th step
 * with truth = measured + 0.5, and known seq numbers (0, 1, 2, ... per sensor); a command to
 * motor_a every 10th step. Every socket and pty read has a timeout (RECV_TIMEOUT_MS), so a broken
 * replay fails instead of hanging. Group fixtures: replay_setup, replay_teardown. */
#ifndef ACHILLES_TESTS_HIL_REPLAY_FIXTURE_H
#define ACHILLES_TESTS_HIL_REPLAY_FIXTURE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "achilles_client.h"
#include "hil/record/log.h"
#include "hil/record/replay.h"
#include "hil/zmq/json_messages.h"
#include "sensors/sensors.h"

#define RECV_TIMEOUT_MS 10000 /* liveness guard only */
#define MAX_MSGS 8000
#define NSENS 3

/* --- the test log -------------------------------------------------------------------------- */

extern sens_sensor test_sensor[NSENS];
/* sensor i's sample at step k, or 0 when it does not sample at k */
int sample_of(int i, long k, sens_sample *smp);
/* A log header of version HIL_LOG_VERSION for robot at rate_hz with the n sensors (names, types,
 * channels, units and rates as they say), started at a fixed date; no actuators. */
void replay_log_header(hil_log_header *h, const char *robot, double rate_hz,
                       const sens_sensor *sensors, int n);
/* hil_log_open(path, h); fails the test with the writer's message when it cannot */
hil_log_writer *replay_log_open(const char *path, const hil_log_header *h);
/* the test log of nsteps steps at path */
void write_log(const char *path, long nsteps);
/* the test log of nsteps steps written as NAME in the suite folder, its path into path */
void write_log_as(char *path, size_t path_sz, const char *name, long nsteps);
/* A log NAME in the suite folder (its path into path) of the test's sensors with the header's
 * physics rate set to rate_hz and no samples yet: the caller writes its own records with put()
 * and closes it. */
hil_log_writer *custom_log(char *path, size_t path_sz, const char *name, double rate_hz);
/* a sample of sensor i (its values of step 0) at t, t_truth, with seq */
void put(hil_log_writer *w, int i, double t, double t_truth, uint64_t seq);
/* The test log of nsteps steps written as NAME in the suite folder (its path into path, when not
 * NULL) and loaded into s, with a topics pattern when not NULL ("enc/": the encoder alone). */
void load_test_log(hil_replay_schedule *s, char *path, size_t path_sz, const char *name,
                   long nsteps, const char *topics);
/* the message the live simulator would publish for sensor i at step k */
void expected(int i, long k, int truth, char *topic, char *body);

/* --- a replay in a thread, a SUB in this one --------------------------------------------------- */

typedef struct received {
  int n;
  char topic[MAX_MSGS][HIL_MSG_TOPIC_MAX];
  char body[MAX_MSGS][HIL_MSG_SAMPLE_MAX]; /* allocated once: no malloc while receiving */
  double at[MAX_MSGS]; /* monotonic s when the message was received */
  char final_status[2048];
} received;

/* what the last replay_zmq received (made by replay_setup) */
extern received *rx;

/* the options every test starts from: quiet, status every 0.2 s, control and command sockets
 * on ipc:// in the suite folder */
void options(hil_replay_options *o);
/* the same, returned */
hil_replay_options default_options(void);
/* The setup for sharp timing (docs/replay.md, section 3), as `achilles replay --rt --cpu N
 * --keep-awake`: the player, its I/O thread and (replay_zmq) the subscriber with its I/O thread
 * under SCHED_FIFO on one CPU, kept from idling. Used by the tests that look at the clock. */
void sharp(hil_replay_options *o);
/* hil_replay_load, failing the test with its message */
void load(hil_replay_schedule *s, const char *path, const hil_replay_select *sel);
/* Plays s with o over ipc:// and collects every sample message into rx until the final
 * status. */
void replay_zmq(const hil_replay_schedule *s, hil_replay_options *o, hil_replay_report *rep);
/* hil_replay_run on a new thread */
void replay_thread_start(pthread_t *th, hil_replay *r);
/* the number after "key": in a JSON body */
double json_number(const char *body, const char *key);
/* the median interval between consecutive received messages, s (a few stalls of a loaded
 * machine do not move it) */
double median_interval(void);
/* one request on a REQ socket, its reply in out (NUL-terminated) */
void request(void *req, const char *text, char *out, size_t out_sz);

/* --- the serial side ------------------------------------------------------------------------ */

typedef struct board {
  int fd;
  ach_decoder dec;
  uint16_t seq;
} board;

void board_send(board *b, const ach_message *m);
/* A NUL (it ends whatever came before), then HELLO as a 1.0 board named name with the
 * largest receive buffer. */
void board_hello(board *b, const char *name);
/* the next message from the replay, or fails after RECV_TIMEOUT_MS */
ach_message board_next(board *b);
/* board_hello, then the HELLO_ACK that must come next */
ach_hello_ack board_hello_acked(board *b, const char *name);
float as_float(uint32_t raw);
/* A replay of s with o on the serial output over a new pty (o says so on return), played by a
 * thread; b is the board's end, raw. */
hil_replay *serial_replay_start(const hil_replay_schedule *s, hil_replay_options *o, board *b,
                                pthread_t *th);

/* --- fixtures ------------------------------------------------------------------------------- */

/* the suite folder (in tmpfs where there is one: no writeback of the logs competes with a timed
 * test), the sensors, and rx */
int replay_setup(void **state);
int replay_teardown(void **state);

#endif
