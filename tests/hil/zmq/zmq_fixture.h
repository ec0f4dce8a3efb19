/* tests/hil/zmq/zmq_fixture.h: what the ZeroMQ transport's suites share — the test robot in a
 * temporary folder with its sockets on ipc:// endpoints there, the simulator loop on a thread
 * (hil_runtime_run), and the test thread as the controller: SUB for the streams, PUSH for
 * commands, REQ for control.
 *
 * The subscription handshake: a client subscribes, then sends "hello" until the status message
 * that every hello also publishes arrives; everything published before it is discarded.
 * Socket receives carry a timeout so a broken transport fails the test instead of hanging it.
 * Every wait for a condition also ends after WAIT_S seconds, in a failed assertion that names
 * what did not happen. A stream is read DRAIN_BATCH messages at a time between status requests,
 * so a loop that steps when it should not is seen at once. */
#ifndef ACHILLES_TESTS_HIL_ZMQ_FIXTURE_H
#define ACHILLES_TESTS_HIL_ZMQ_FIXTURE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "hil/runtime/runtime.h"
#include "hil/zmq/json_messages.h"
#include "hil/zmq/zmq_transport.h"
#include "support/runtime.h"
#include "support/skip.h"

#define RECV_TIMEOUT_MS 10000 /* liveness guard only: a healthy run answers in microseconds */
#define MAX_ATTEMPTS 2000
#define PAYLOAD_MAX 4096
#define WAIT_S 10.0
#define DRAIN_BATCH 256

/* now + WAIT_S, and whether that time is still ahead (ts_now: tests/support/wait.h) */
double wait_until(void);
int waiting(double until);

/* --- the test robot ----------------------------------------------------------------------------- */

/* Two links turning about vertical axes: gravity exerts no torque, so an arm without commands
 * stays exactly at rest. A torque motor on the shoulder, a position servo on the elbow; an
 * encoder on each joint (1 kHz and 500 Hz), a torque sensor and an IMU. */
#define NSENSORS 4
extern const char *const sensor_topics[NSENSORS];
extern const double sensor_rates[NSENSORS];

/* the folder and the robot file in it */
typedef struct tmpdir {
  char path[128];
  char robot[192];
} tmpdir;

/* Queues deep enough that the test never loses a message, whatever the machine's load: the
 * tests that pipeline many steps read every sample. (The default, 1000, drops when a reader
 * falls behind; test_slow_subscriber_sees_gaps checks that.) */
void tmpdir_make(tmpdir *d);
/* zmq_extra: more members of transports.zmq, e.g. ",\"sndhwm\":5" */
void tmpdir_make_with(tmpdir *d, const char *zmq_extra);
void tmpdir_remove(tmpdir *d);

/* --- the simulator in a thread ---------------------------------------------------------------- */

typedef struct server {
  hil_runtime *rt;
  ts_loop loop;
  char endpoint[3][HIL_ZMQ_ENDPOINT_MAX];
} server;

/* Builds the runtime from `config` (in `mode`, at rate_hz when > 0; quiet, the given seed) with
 * the zmq transport configured by the config's own transports.zmq section, and starts its loop. */
void server_start_in(server *s, const char *config, uint64_t seed, hil_mode mode, double rate_hz);
/* The same in lockstep at the config's rate. */
void server_start(server *s, const char *config, uint64_t seed);
void server_stop(server *s);

#define CLUB_ARM ACHILLES_SOURCE_DIR "/configs/club_arm.json"
/* The club arm in lockstep, its zmq sockets on ipc:// endpoints in d (its config names none);
 * the caller starts its loop (ts_loop_start(&s->loop, s->rt)). */
void club_arm_start(server *s, const tmpdir *d);

/* --- the client ------------------------------------------------------------------------------- */

typedef struct client {
  void *ctx, *sub, *push, *req;
} client;

void client_open(client *c, const server *s);
/* rcvhwm: the SUB's receive queue, messages (0: unlimited) */
void client_open_hwm(client *c, const server *s, int rcvhwm);
void client_close(client *c);

/* One control round trip; returns the parsed reply (the caller deletes it). */
cJSON *request(client *c, const char *text);
/* A request that must succeed. */
cJSON *request_ok(client *c, const char *text);
void request_ok_discard(client *c, const char *text);

typedef struct message {
  char topic[HIL_MSG_TOPIC_MAX];
  char payload[PAYLOAD_MAX];
  size_t len;
} message;

/* The next [topic, json] message from the streams. */
void receive(client *c, message *m);
/* Lets the loop thread run between status polls. */
void pause_briefly(void);
int has_input(void *sock, long timeout_ms);
/* st.a (or st.a.b), which must be a number */
double status_number(const cJSON *st, const char *a, const char *b);
/* Subscribe-then-hello until the status published by a hello arrives; drops what came before.
 * Returns the hello reply. */
cJSON *handshake(client *c);

/* Receives stream messages up to the status message that reports `steps` steps, calling fn for
 * every sample message before it. Reads while the loop runs: the PUB drops what a subscriber
 * leaves unread beyond its high-water mark. Status requests put status messages on the stream. */
typedef void (*sample_fn)(void *user, const message *m);
void collect_until(client *c, double steps, sample_fn fn, void *user);
/* Asks for status until the transport has read `n` command messages; returns the status. */
cJSON *wait_for_cmd_messages(client *c, double n);

void send_commands(client *c, double shoulder, double elbow);
void send_text(client *c, const char *text);
hil_msg_sample decode(const message *m);
double channel(const hil_msg_sample *s, const char *name);

/* --- what a run's streams show ----------------------------------------------------------------- */

typedef struct trace {
  double angle[4096]; /* shoulder truth angle per sample */
  double truth_torque[4096];
  int n, ntorque;
} trace;

/* a sample_fn collecting the shoulder's truth angle and torque; samples with seq 0 (the state at
 * t = 0, published again by a reset) are left out */
void on_trace(void *user, const message *m);
/* the shoulder's command at step k of the tests that drive the arm */
double shoulder_command(int k);

/* --- fixture: a server and a connected client per test ---------------------------------------- */

typedef struct fixture {
  tmpdir dir;
  server srv;
  client cli;
  cJSON *hello;
} fixture;

/* The test robot (zmq_extra: more members of transports.zmq, NULL: queues that never drop) served
 * by its loop in mode at rate_hz (0: the robot's rate) with the sensors' seed, and a client
 * connected to it (its SUB queue rcvhwm messages, 0: unlimited); no handshake yet. */
void fixture_start(fixture *f, const char *zmq_extra, uint64_t seed, hil_mode mode, double rate_hz,
                   int rcvhwm);
void fixture_stop(fixture *f);

/* cmocka per-test fixtures: a lockstep server of the test robot (seed 42), a client, the
 * handshake's hello reply */
int zmq_setup(void **state);
int zmq_teardown(void **state);

/* A suite's main: ZMQ_MAIN((standalone tests), (tests each given zmq_setup's fixture)). */
#define ZMQ_UNPAREN(...) __VA_ARGS__
#define ZMQ_SERVED(test) cmocka_unit_test_setup_teardown(test, zmq_setup, zmq_teardown)
#define ZMQ_MAIN(standalone, served)                                                               \
  int main(void) {                                                                                 \
    const struct CMUnitTest tests[] = {TS_EACH(cmocka_unit_test, ZMQ_UNPAREN standalone),          \
                                       TS_EACH(ZMQ_SERVED, ZMQ_UNPAREN served)};                   \
    return ts_run(tests);                                                                          \
  }

#endif
