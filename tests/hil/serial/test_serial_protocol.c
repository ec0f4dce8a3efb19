/* tests/hil/serial/test_serial_protocol.c: protocol 1.1 over real pseudo-terminals — the state
 * a board gets at t = 0 in lockstep, STATUS on every state change and ERROR 7 on a watchdog
 * trip, the receive limits (announced in HELLO_ACK, answered with ERROR), a HELLO whose
 * rx_max_payload is too small, DESCRIBE / SENSOR_INFO, and the console line after the firmware
 * closed. The test plays the board with the client library (tests/support/pty_board.h).
 */
#define _DEFAULT_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hil/error.h"
#include "hil/runtime/runtime.h"
#include "hil/serial/serial_transport.h"
#include "hil/transport.h"
#include "../client/client_test_util.h"
#include "support/pty_board.h"
#include "support/runtime.h"
#include "support/skip.h"
#include "support/wait.h"

#define ARM ACHILLES_SOURCE_DIR "/tests/hil/serial/club_arm_enc.json"
#define NJ 4     /* joints (DC motors with duty input) of the arm */
#define NIDS 8   /* four encoders, each "output": "both": counts and angle */

/* no periodic STATUS (ts_runtime): every STATUS seen here is one on change */
static hil_runtime *new_runtime(hil_mode mode, double duration_s) {
  return ts_runtime(ARM, mode, duration_s);
}

/* a board on a new pty of rt's, its HELLO answered: the transport */
static hil_transport *connect_board(hil_runtime *rt, board *b) {
  hil_transport *t = board_on_pty(b, rt);
  board_hello(b, "protocol");
  tick_after(rt, t, b);
  assert_true(board_wait_count(b, &b->hello_acks, 1));
  assert_int_equal(b->ack.result, ACH_HELLO_OK);
  return t;
}

static void fill_duty(ach_joint_command *c, float u) {
  for (int j = 0; j < NJ; j++) {
    c[j] = (ach_joint_command){.joint_id = (uint8_t)j, .mode = ACH_MODE_DUTY, .value = u};
  }
}

/* --- lockstep: the state at t = 0 ------------------------------------------------------------- */

/* A board that acts only on samples not flagged DROPPED or FAULT: with sensors that have no
 * latency, the samples right after HELLO_ACK carry the state at t = 0, so it commands at once
 * and the lockstep run advances to its end. */
static void test_lockstep_t0_samples_are_real(void **state) {
  (void)state;
  const int steps = 20;
  hil_runtime *rt = new_runtime(HIL_MODE_LOCKSTEP, steps * 1e-3);
  board b;
  board_on_pty(&b, rt);
  ts_loop loop;
  ts_loop_start(&loop, rt);
  board_hello(&b, "strict");
  int ok = board_wait_count(&b, &b.hello_acks, 1);
  for (int id = 0; ok && id < b.ack.n_sensors; id++) {
    ok = board_wait_sample(&b, id, 0);
  }
  int t0_good = ok;
  for (int id = 0; ok && id < b.ack.n_sensors; id++) {
    if (b.latest_time[id] != 1 || (b.latest[id].flags & (ACH_SAMPLE_DROPPED | ACH_SAMPLE_FAULT))) {
      t0_good = 0;
      print_error("sensor id %d at t = 0: flags 0x%x, frame time %llu ns\n", id,
                  b.latest[id].flags, (unsigned long long)b.latest_time[id] - 1);
    }
  }
  /* the strict board: a command for each frame time in which all its encoders were good */
  ach_joint_command c[NJ];
  fill_duty(c, 0.1f);
  uint64_t answered = 0;
  for (int i = 0; i < 3000 && !ts_loop_done(&loop); i++) {
    board_read(&b);
    uint64_t newest = b.latest_time[0];
    int good = newest > answered;
    for (int j = 0; j < NJ; j++) {
      const ach_sample *s = &b.latest[2 * j];
      good = good && b.latest_time[2 * j] == newest && !(s->flags & ACH_SAMPLE_DROPPED);
    }
    if (good) {
      board_command(&b, NJ, c);
      answered = newest;
    }
    ts_sleep(1e-3);
  }
  const int finished = ts_loop_stop(&loop);
  assert_true(ok);
  assert_true(t0_good);
  assert_true(finished); /* the run was never stuck waiting for a command */
  assert_int_equal(hil_runtime_steps(rt), steps);
  board_close(&b);
  hil_runtime_destroy(&rt);
}

/* The club arm's sensors all have a latency (one sample for the encoders): at t = 0 their
 * entries are DROPPED with value 0, and the board must answer anyway; one step later the base
 * encoder's entry is its real first measurement. */
static void test_lockstep_t0_delayed_sensors_are_dropped(void **state) {
  (void)state;
  hil_runtime *rt = ts_runtime(ACHILLES_SOURCE_DIR "/configs/club_arm.json", HIL_MODE_LOCKSTEP,
                               0.002);
  board b;
  board_on_pty(&b, rt);
  ts_loop loop;
  ts_loop_start(&loop, rt);
  board_hello(&b, "patient");
  int ok = board_wait_count(&b, &b.hello_acks, 1) && board_wait_sample(&b, 0, 0);
  ach_sample at0 = b.latest[0];
  uint64_t at0_time = b.latest_time[0];
  ach_joint_command c[NJ];
  fill_duty(c, 0.0f);
  board_command(&b, NJ, c); /* the answer to t = 0, although every entry was DROPPED */
  ok = ok && board_wait_sample(&b, 0, 1000000);
  ach_sample at1 = b.latest[0];
  board_command(&b, NJ, c);
  for (int i = 0; i < 3000 && !ts_loop_done(&loop); i++) {
    ts_sleep(1e-3);
  }
  const int finished = ts_loop_stop(&loop);
  assert_true(ok);
  assert_int_equal(at0_time, 1); /* frame time 0 */
  assert_int_equal(at0.flags, ACH_SAMPLE_DROPPED);
  assert_int_equal(at0.v.counts, 0);
  assert_int_equal(at1.flags, 0);
  assert_int_equal(at1.sample_seq, 1);
  assert_int_equal(at1.age_ns, 1000000); /* the measurement of t = 0, one sample late */
  assert_true(finished);
  board_close(&b);
  hil_runtime_destroy(&rt);
}

/* --- STATUS on change, ERROR 7 on a trip ------------------------------------------------------ */

static int count_errors(const board *b, int code) {
  int n = 0;
  for (int i = 0; i < b->nerrors && i < BOARD_MAX_ERRORS; i++) {
    n += b->errors[i].code == code;
  }
  return n;
}

static void test_status_on_change_and_watchdog_error(void **state) {
  (void)state;
  hil_runtime *rt = new_runtime(HIL_MODE_FAST, 0);
  const double dt = hil_runtime_model(rt)->opt.timestep;
  const double timeout = hil_runtime_options(rt)->watchdog_timeout_s;
  board b;
  hil_transport *t = connect_board(rt, &b);
  /* right after HELLO_ACK: one STATUS, connected and running */
  assert_true(board_wait_count(&b, &b.statuses, 1));
  assert_int_equal(b.statuses, 1);
  assert_int_equal(b.status.state, ACH_STATE_CONNECTED | ACH_STATE_RUNNING);
  /* commands hold the watchdog; nothing changes, so no STATUS */
  ach_joint_command c[NJ];
  fill_duty(c, 0.2f);
  for (int k = 0; k < 20; k++) {
    board_command(&b, NJ, c);
    tick_after(rt, t, &b);
  }
  assert_int_equal(b.statuses, 1);
  /* silence: the tick after the trip brings ERROR 7 and a STATUS with WATCHDOG */
  uint64_t trips = hil_runtime_commands(rt)->counters.watchdog_trips;
  int ticks = 0;
  while (hil_runtime_commands(rt)->counters.watchdog_trips == trips && ticks < 3 * timeout / dt) {
    hil_runtime_tick(rt);
    board_read(&b); /* as a board does: unread sample frames would fill the simulator's
                       transmit buffer, which then drops whole frames (the STATUS among them) */
    ticks++;
  }
  assert_true(hil_runtime_commands(rt)->counters.watchdog_trips > trips);
  hil_runtime_tick(rt); /* its poll sees the trip */
  assert_true(board_wait_count(&b, &b.statuses, 2));
  assert_true(b.status.state & ACH_STATE_WATCHDOG);
  assert_int_equal(b.status.watchdog_trips, NJ);
  assert_int_equal(count_errors(&b, ACH_ERRC_WATCHDOG), 1); /* one per trip event, not per joint */
  assert_int_equal(b.errors[b.nerrors - 1].about_seq, 0xFFFF);
  /* control returns: WATCHDOG clears in the next STATUS */
  board_command(&b, NJ, c);
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.statuses, 3));
  assert_false(b.status.state & ACH_STATE_WATCHDOG);
  /* pausing and resuming are state changes too */
  hil_runtime_pause(rt);
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.statuses, 4));
  assert_int_equal(b.status.state & (ACH_STATE_PAUSED | ACH_STATE_RUNNING), ACH_STATE_PAUSED);
  hil_runtime_resume(rt);
  board_command(&b, NJ, c);
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.statuses, 5));
  assert_int_equal(b.status.state & (ACH_STATE_PAUSED | ACH_STATE_RUNNING), ACH_STATE_RUNNING);
  board_close(&b);
  hil_runtime_destroy(&rt);
}

/* --- receive limits ------------------------------------------------------------------------- */

/* a raw frame of any payload, COBS-encoded, through the board */
static uint16_t send_raw_frame(board *b, uint8_t type, const uint8_t *payload, size_t n) {
  static uint8_t wire[1100];
  const uint16_t seq = b->seq++;
  const size_t len = make_frame(wire, sizeof wire, ACH_PROTOCOL_VERSION_MAJOR, type, seq,
                                (uint16_t)n, payload, n);
  assert_true(len > 0);
  board_send_raw(b, wire, len);
  return seq;
}

static void test_receive_limits_announced_and_answered(void **state) {
  (void)state;
  hil_runtime *rt = new_runtime(HIL_MODE_FAST, 0);
  board b;
  hil_transport *t = connect_board(rt, &b);
  /* the limits the simulator announces are the ones it enforces below */
  assert_int_equal(b.ack.version_minor, ACH_PROTOCOL_VERSION_MINOR);
  assert_int_equal(b.ack.rx_max_payload, 256);
  assert_int_equal(b.ack.max_joints, 16);
  /* a MOTOR_COMMAND of 40 entries: 245 bytes, within the payload limit, over the entry limit */
  uint8_t cmd[5 + 6 * 40];
  memset(cmd, 0, sizeof cmd);
  cmd[4] = 40;
  for (int i = 0; i < 40; i++) {
    cmd[5 + 6 * i] = (uint8_t)(i % NJ);
    cmd[6 + 6 * i] = ACH_MODE_DUTY;
  }
  uint16_t seq = send_raw_frame(&b, ACH_MSG_MOTOR_COMMAND, cmd, sizeof cmd);
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.nerrors, 1));
  assert_int_equal(b.errors[0].code, ACH_ERRC_BAD_PAYLOAD);
  assert_int_equal(b.errors[0].about_seq, seq);
  assert_non_null(strstr(b.errors[0].text, "40 entries"));
  /* 257 payload bytes: over the payload limit */
  uint8_t big[257];
  memset(big, 0x11, sizeof big);
  send_raw_frame(&b, ACH_MSG_HEARTBEAT, big, sizeof big);
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.nerrors, 2));
  assert_int_equal(b.errors[1].code, ACH_ERRC_TOO_LONG);
  assert_int_equal(b.errors[1].about_seq, 0xFFFF);
  /* 256 bytes is within the limit: a HEARTBEAT with appended bytes is answered, no ERROR */
  send_raw_frame(&b, ACH_MSG_HEARTBEAT, big, 256);
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.heartbeats, 1));
  assert_int_equal(b.nerrors, 2);
  /* a payload too short for its fields is answered too */
  send_raw_frame(&b, ACH_MSG_STEP_REQUEST, big, 3);
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.nerrors, 3));
  assert_int_equal(b.errors[2].code, ACH_ERRC_BAD_PAYLOAD);
  hil_serial_counters c = ts_serial_counters(t);
  assert_int_equal(c.rx_framing, 1);  /* the long frame */
  assert_int_equal(c.rx_rejected, 2); /* the two bad payloads */
  assert_int_equal(hil_runtime_commands(rt)->counters.accepted, 0);
  board_close(&b);
  hil_runtime_destroy(&rt);
}

/* rx_max_payload below what the simulator must send (STATUS 44, ERROR up to 69 bytes) is
 * refused in HELLO_ACK; the smallest accepted value is honoured by every frame. */
static void test_small_rx_max_payload(void **state) {
  (void)state;
  hil_runtime *rt = new_runtime(HIL_MODE_FAST, 0);
  board b;
  hil_transport *t = board_on_pty(&b, rt);
  const uint16_t refused[] = {0, 23, ACH_MIN_PAYLOAD - 1};
  for (int i = 0; i < 3; i++) {
    board_hello_with(&b, "protocol", refused[i]);
    tick_after(rt, t, &b);
    assert_true(board_wait_count(&b, &b.hello_acks, i + 1));
    assert_int_equal(b.ack.result, ACH_HELLO_REFUSED);
    assert_true(board_wait_count(&b, &b.nerrors, i + 1));
    assert_int_equal(b.errors[i].code, ACH_ERRC_UNSUPPORTED);
    assert_int_equal(ts_serial_counters(t).connected, 0);
  }
  for (int k = 0; k < 3; k++) {
    tick_after(rt, t, &b);
  }
  assert_int_equal(b.sample_frames, 0); /* nothing was sent to the refused board */
  board_hello_with(&b, "protocol", ACH_MIN_PAYLOAD);
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.hello_acks, 4));
  assert_int_equal(b.ack.result, ACH_HELLO_OK);
  for (int k = 0; k < 5; k++) {
    tick_after(rt, t, &b);
  }
  assert_true(board_wait_sample(&b, NIDS - 1, 0));
  assert_true(b.max_samples_payload > 0);
  assert_true(b.max_samples_payload <= ACH_MIN_PAYLOAD);
  board_close(&b);
  hil_runtime_destroy(&rt);
}

/* --- DESCRIBE ----------------------------------------------------------------------------- */

static void test_describe_names_every_id(void **state) {
  (void)state;
  hil_runtime *rt = new_runtime(HIL_MODE_FAST, 0);
  board b;
  hil_transport *t = connect_board(rt, &b);
  assert_int_equal(b.ack.n_sensors, NIDS);
  ach_message m;
  memset(&m, 0, sizeof m);
  m.type = ACH_MSG_DESCRIBE;
  m.u.describe.sensor_id = ACH_DESCRIBE_ALL;
  board_send(&b, &m);
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.infos, NIDS));
  /* what tests/hil/serial/club_arm_enc.json says: encoders of 4096 lines, quadrature (16384
   * counts per turn), 1000 Hz, on joints base_yaw, shoulder, elbow, wrist_roll, which the
   * actuators 0..3 drive; channels counts and angle ("output": "both") */
  static const char *const sensors[NJ] = {"enc_base_yaw", "enc_shoulder", "enc_elbow",
                                          "enc_wrist_roll"};
  static const char *const channels[2] = {"counts", "angle"};
  static const char *const units[2] = {"count", "rad"};
  for (int id = 0; id < NIDS; id++) {
    const ach_sensor_info *in = &b.info[id];
    char name[64];
    snprintf(name, sizeof name, "%s.%s", sensors[id / 2], channels[id % 2]);
    assert_int_equal(in->sensor_id, id);
    assert_string_equal(in->name, name);
    assert_string_equal(in->units, units[id % 2]);
    assert_int_equal(in->kind, id % 2 == 0 ? ACH_KIND_COUNTS : ACH_KIND_VALUE);
    assert_int_equal(in->sensor_type, ACH_SENSOR_ENCODER);
    assert_int_equal(in->joint, id / 2);
    assert_int_equal(in->counts_per_rev, 16384);
    assert_true(in->rate_hz == 1000.0f);
  }
  /* one id, and an id that does not exist */
  m.u.describe.sensor_id = 6;
  board_send(&b, &m);
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.infos, NIDS + 1));
  assert_string_equal(b.info[6].name, "enc_wrist_roll.counts");
  m.u.describe.sensor_id = NIDS;
  board_send(&b, &m);
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.nerrors, 1));
  assert_int_equal(b.errors[0].code, ACH_ERRC_BAD_SENSOR);
  assert_int_equal(b.infos, NIDS + 1);
  board_close(&b);
  hil_runtime_destroy(&rt);
}

/* --- the console line after the firmware closed ---------------------------------------------- */

static void test_console_line_keeps_counters_after_close(void **state) {
  (void)state;
  hil_runtime *rt = new_runtime(HIL_MODE_FAST, 0);
  board b;
  hil_transport *t = connect_board(rt, &b);
  ach_joint_command c[NJ];
  fill_duty(c, 0.1f);
  for (int k = 0; k < 5; k++) {
    board_command(&b, NJ, c);
    tick_after(rt, t, &b);
  }
  board_close(&b);
  for (int k = 0; k < 2000 && transport_fd(t) >= 0; k++) {
    hil_runtime_tick(rt);
    ts_sleep(1e-4);
  }
  assert_int_equal(transport_fd(t), -1); /* the close was seen */
  hil_serial_counters sc = ts_serial_counters(t);
  assert_int_equal(sc.frames_in, 6); /* HELLO and five commands */
  char line[512], expect[160];
  t->ops->describe(t, line, sizeof line);
  snprintf(expect, sizeof expect, "link down, 6 in %lu out, bad crc 0 framing 0 rejected 0", 
           sc.frames_out);
  if (!strstr(line, expect)) {
    fail_msg("console fragment \"%s\" lacks \"%s\"", line, expect);
  }
  assert_true(sc.frames_out > 5);
  hil_runtime_destroy(&rt);
}

TS_MAIN(test_lockstep_t0_samples_are_real, test_lockstep_t0_delayed_sensors_are_dropped,
        test_status_on_change_and_watchdog_error, test_receive_limits_announced_and_answered,
        test_small_rx_max_payload, test_describe_names_every_id,
        test_console_line_keeps_counters_after_close)
