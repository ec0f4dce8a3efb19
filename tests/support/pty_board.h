/* tests/support/pty_board.h: the test plays the board — a serial peer built on
 * hil/client/achilles_client.h over a real file descriptor (a pty slave or master) — plus the
 * helpers that keep a tick-driven runtime and the board in step without sleeping blindly.
 *
 *   hil_transport *t = ts_serial_transport(rt, NULL);     the simulator's side, on a new pty
 *   board b;
 *   board_open(&b, hil_serial_transport_path(t));         the board's side
 *   board_hello(&b, "name");
 *   assert_true(board_wait_count(&b, &b.hello_acks, 1));
 *
 * Every wait is bounded (BOARD_WAIT_S) and only guards against a hang: no assertion depends on
 * how long anything took. Link achilles_test_pty (with achilles_hil and achilles_client).
 */
#ifndef ACHILLES_TESTS_SUPPORT_PTY_BOARD_H
#define ACHILLES_TESTS_SUPPORT_PTY_BOARD_H

#include <stddef.h>
#include <stdint.h>

#include "achilles_client.h"
#include "hil/runtime/runtime.h"
#include "hil/serial/serial_transport.h"
#include "hil/transport.h"

/* A pseudo-terminal the test holds by its master (non-blocking); slave is the path a
 * transport or a link opens. */
typedef struct ts_pty {
  int master;
  char slave[128];
} ts_pty;
void ts_pty_open(ts_pty *p);
/* Points link at target (replacing an old link), as udev names a USB board by id. */
void ts_pty_link(const char *link, const char *target);

#define BOARD_WAIT_S 3.0 /* the bound of one board wait: a few seconds, a guard only */
#define BOARD_MAX_IDS 256
#define BOARD_MAX_ERRORS 64

typedef struct board {
  int fd;
  int own_fd; /* board_close() closes fd */
  ach_decoder dec;
  uint16_t seq;  /* next sequence number to send */
  size_t unread; /* bytes sent that the simulator has not read yet */
  /* what arrived */
  int hello_acks;
  ach_hello_ack ack;
  int nerrors;
  ach_error errors[BOARD_MAX_ERRORS];
  int statuses;
  ach_status status;
  int heartbeats;
  ach_heartbeat heartbeat;
  unsigned long sample_frames;
  ach_sample latest[BOARD_MAX_IDS];    /* latest entry of each sensor id */
  uint64_t latest_time[BOARD_MAX_IDS]; /* frame time of that entry, ns + 1 (0: never) */
  int max_samples_payload;             /* longest SENSOR_SAMPLES payload received, bytes */
  int infos;                           /* SENSOR_INFO messages received */
  ach_sensor_info info[BOARD_MAX_IDS]; /* the latest of each sensor id */
} board;

/* Opens a pty slave (or any tty path) raw and non-blocking. Returns 0 or -1. */
int board_open(board *b, const char *path);
/* Opens the pty of a serial transport (ts_serial_transport) as the board; fails the test when it
 * cannot. */
void board_open_on(board *b, hil_transport *t);
/* Uses an fd the caller opened (e.g. a pty master); board_close() leaves it open. */
void board_attach(board *b, int fd);
void board_close(board *b);

void board_send(board *b, const ach_message *m);
void board_send_raw(board *b, const uint8_t *bytes, size_t n);
/* HELLO of this protocol version with the largest receive buffer (or rx_max_payload) */
void board_hello(board *b, const char *name);
void board_hello_with(board *b, const char *name, uint16_t rx_max_payload);
void board_command(board *b, int n, const ach_joint_command *joints);

/* Reads and decodes whatever is waiting, without blocking. */
void board_read(board *b);
/* The same for a test that keeps its own record of what arrived: whatever is waiting on fd, fed
 * to dec, fn(message, user) called for each message in order. */
void board_read_with(int fd, ach_decoder *dec, ach_message_fn fn, void *user);
/* Reads until *counter >= target or BOARD_WAIT_S passed; returns 1 when reached. */
int board_wait_count(board *b, const int *counter, int target);
/* Reads until a frame of time >= t_ns carried an entry for sensor id `id`. */
int board_wait_sample(board *b, int id, uint64_t t_ns);

/* The transport's fd (its pollitem) or -1 while the link is down. */
int transport_fd(hil_transport *t);
/* Waits until the simulator side can read the bytes the board sent, ticks once, and reads
 * what has arrived (without waiting for it). */
void tick_after(hil_runtime *rt, hil_transport *t, board *b);

/* A quiet serial transport added to rt, reopening a closed link after 5 ms: on a new pty when
 * link is NULL, else with its slave linked at link. Fails the test when it cannot. */
hil_transport *ts_serial_transport(hil_runtime *rt, const char *link);
/* The board's usual start: a serial transport on a new pty added to rt (as
 * ts_serial_transport(rt, NULL)) and b opened on its pty; the transport. */
hil_transport *board_on_pty(board *b, hil_runtime *rt);
/* The serial transport's counters. */
hil_serial_counters ts_serial_counters(const hil_transport *t);

#endif
