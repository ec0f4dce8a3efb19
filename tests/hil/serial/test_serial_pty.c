/* tests/hil/serial/test_serial_pty.c: the serial transport over real pseudo-terminals.
 *
 * The runtime is built from a config (the club arm with DC motors and noise-free encoders) and
 * driven tick by tick in this thread (fast mode: the loop clock is simulation time, so the
 * watchdog is deterministic); the test plays the board through the pty slave with the client
 * library. Reference runs receive the same commands through the runtime's intake directly, so
 * the serial path must reproduce the physics bit for bit.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hil/error.h"
#include "hil/runtime/runtime.h"
#include "hil/serial/serial_transport.h"
#include "hil/transport.h"
#include "support/pty_board.h"
#include "support/runtime.h"
#include "support/skip.h"
#include "support/tmp.h"
#include "support/wait.h"

#define ARM ACHILLES_SOURCE_DIR "/tests/hil/serial/club_arm_enc.json"
#define NJ 4 /* joints (= actuators, DC motors with duty input) of the arm */

static hil_runtime *new_runtime(hil_mode mode) {
  return ts_runtime(ARM, mode, 0);
}

static hil_command_counters intake(hil_runtime *rt) { return hil_runtime_commands(rt)->counters; }

static uint64_t now_ns(hil_runtime *rt) {
  return (uint64_t)llround(hil_runtime_data(rt)->time * 1e9);
}

/* the duty cycle of joint j at tick k: a different slow wave per joint */
static float duty(int k, int j) { return (float)(0.4 * sin(0.03 * k + j)); }

static void fill_command(ach_joint_command *c, int k) {
  for (int j = 0; j < NJ; j++) {
    c[j] = (ach_joint_command){.joint_id = (uint8_t)j, .mode = ACH_MODE_DUTY, .value = duty(k, j)};
  }
}

/* the same commands through the intake directly (what the serial path must reproduce) */
static void reference_tick(hil_runtime *rt, int k) {
  for (int j = 0; j < NJ; j++) {
    hil_commands_submit(hil_runtime_commands(rt), j, (double)duty(k, j), hil_runtime_loop_time(rt));
  }
  hil_runtime_tick(rt);
}

/* a board on a new pty of rt's, its HELLO answered: the transport */
static hil_transport *connect_board(hil_runtime *rt, board *b) {
  hil_transport *t = board_on_pty(b, rt);
  int acks = b->hello_acks;
  board_hello(b, "test");
  tick_after(rt, t, b);
  assert_true(board_wait_count(b, &b->hello_acks, acks + 1));
  assert_int_equal(b->ack.result, ACH_HELLO_OK);
  return t;
}

static void assert_same_state(hil_runtime *a, hil_runtime *b) {
  const sim_model *m = hil_runtime_model(a);
  const sim_data *da = hil_runtime_data(a), *db = hil_runtime_data(b);
  assert_true(da->time == db->time);
  assert_memory_equal(da->qpos, db->qpos, (size_t)m->nq * sizeof(double));
  assert_memory_equal(da->qvel, db->qvel, (size_t)m->nv * sizeof(double));
}

/* --- handshake -------------------------------------------------------------------------------- */

static void test_handshake(void **state) {
  (void)state;
  hil_runtime *rt = new_runtime(HIL_MODE_FAST);
  board b;
  hil_transport *t = board_on_pty(&b, rt);
  /* before HELLO: no samples go out, and commands are refused with an ERROR */
  for (int k = 0; k < 3; k++) {
    hil_runtime_tick(rt);
  }
  ach_joint_command c[NJ];
  fill_command(c, 10);
  board_command(&b, NJ, c);
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.nerrors, 1));
  assert_int_equal(b.errors[0].code, ACH_ERRC_NOT_CONNECTED);
  assert_int_equal(b.sample_frames, 0);
  assert_int_equal(ts_serial_counters(t).not_connected, 1);
  assert_int_equal(intake(rt).accepted, 0);
  /* a board of another major version is answered and ignored */
  ach_message m;
  memset(&m, 0, sizeof m);
  m.type = ACH_MSG_HELLO;
  m.u.hello.version_major = ACH_PROTOCOL_VERSION_MAJOR + 1;
  m.u.hello.rx_max_payload = ACH_MAX_PAYLOAD;
  board_send(&b, &m);
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.hello_acks, 1));
  assert_int_equal(b.ack.result, ACH_HELLO_VERSION_MISMATCH);
  assert_int_equal(ts_serial_counters(t).connected, 0);
  /* HELLO: the answer describes this robot, and the current samples follow at once */
  board_hello(&b, "test");
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.hello_acks, 2));
  assert_int_equal(b.ack.result, ACH_HELLO_OK);
  assert_int_equal(b.ack.version_major, ACH_PROTOCOL_VERSION_MAJOR);
  assert_int_equal(b.ack.n_joints, hil_runtime_model(rt)->nu);
  assert_int_equal(b.ack.n_joints, NJ);
  assert_int_equal(b.ack.n_sensors, 2 * NJ); /* counts and angle of four encoders */
  assert_int_equal(b.ack.physics_rate_hz, 1000);
  assert_int_equal(ts_serial_counters(t).connected, 1);
  assert_true(board_wait_sample(&b, 2 * NJ - 1, now_ns(rt) - 1000000));
  /* from now on every tick's samples arrive */
  hil_runtime_tick(rt);
  assert_true(board_wait_sample(&b, 0, now_ns(rt)));
  assert_true(board_wait_sample(&b, 2 * NJ - 1, now_ns(rt)));
  board_close(&b);
  hil_runtime_destroy(&rt);
}

/* --- commands and samples --------------------------------------------------------------------- */

static void test_commands_move_the_arm_like_the_intake(void **state) {
  (void)state;
  hil_runtime *rt = new_runtime(HIL_MODE_FAST), *ref = new_runtime(HIL_MODE_FAST);
  board b;
  hil_transport *t = connect_board(rt, &b);
  hil_runtime_tick(ref); /* the handshake tick stepped once without commands */
  assert_same_state(rt, ref);
  const int ticks = 300;
  for (int k = 0; k < ticks; k++) {
    ach_joint_command c[NJ];
    fill_command(c, k);
    board_command(&b, NJ, c);
    tick_after(rt, t, &b);
    reference_tick(ref, k);
    assert_true(hil_runtime_data(rt)->ctrl[1] == (double)duty(k, 1));
  }
  assert_same_state(rt, ref);
  assert_int_equal(intake(rt).accepted, ticks * NJ);
  assert_int_equal(intake(rt).rejected_malformed + intake(rt).rejected_unknown, 0);
  /* the arm moved, and the board reads what the encoders measured */
  const sim_data *d = hil_runtime_data(rt);
  assert_true(fabs(d->qpos[0]) > 0.01);
  const sens_set *set = hil_runtime_sensors(rt);
  for (int j = 0; j < NJ; j++) {
    const sens_sensor *enc = sens_set_sensor(set, j);
    int id_counts = 2 * j + enc->u.enc.ch_counts, id_angle = 2 * j + enc->u.enc.ch_angle;
    assert_true(board_wait_sample(&b, id_counts, now_ns(rt)));
    assert_int_equal(b.latest[id_counts].kind, ACH_KIND_COUNTS);
    assert_int_equal(b.latest[id_counts].v.counts, (int32_t)enc->sample.meas[enc->u.enc.ch_counts]);
    assert_int_equal(b.latest[id_counts].sample_seq, (uint32_t)enc->sample.seq);
    assert_true(b.latest[id_angle].v.value == (float)enc->sample.meas[enc->u.enc.ch_angle]);
    /* noise-free encoder: the angle is the joint angle to one count */
    assert_true(fabs(b.latest[id_angle].v.value - d->qpos[j]) <= enc->u.enc.step);
  }
  board_close(&b);
  hil_runtime_destroy(&rt);
  hil_runtime_destroy(&ref);
}

/* COBS-decodes an encoded frame, lets `spoil` change the raw bytes, encodes it again */
static size_t spoiled_frame(uint8_t *out, size_t out_sz, const uint8_t *wire, size_t n,
                            int truncate) {
  uint8_t raw[ACH_MAX_FRAME];
  int len = ach_cobs_decode(raw, sizeof raw, wire, n - 1); /* without the delimiter */
  assert_true(len > 8);
  if (truncate) {
    len /= 2;
  } else {
    raw[len - 1] ^= 0x5A; /* the CRC's high byte */
  }
  int m = ach_cobs_encode(out, out_sz, raw, (size_t)len);
  assert_true(m > 0);
  return (size_t)m;
}

/* a command that would slam every joint to full duty, corrupted so it must never apply */
static void send_spoiled(board *b, int truncate) {
  ach_message m;
  memset(&m, 0, sizeof m);
  m.type = ACH_MSG_MOTOR_COMMAND;
  m.u.motor_command.count = NJ;
  for (int j = 0; j < NJ; j++) {
    m.u.motor_command.joints[j] =
        (ach_joint_command){.joint_id = (uint8_t)j, .mode = ACH_MODE_DUTY, .value = 1.0f};
  }
  uint8_t wire[ACH_ENCODED_MAX(ACH_MAX_FRAME)], bad[ACH_ENCODED_MAX(ACH_MAX_FRAME)];
  int n = ach_encode(wire, sizeof wire, b->seq++, &m);
  assert_true(n > 0);
  board_send_raw(b, bad, spoiled_frame(bad, sizeof bad, wire, (size_t)n, truncate));
}

static void send_garbage(board *b, unsigned *rng) {
  uint8_t junk[61];
  for (size_t i = 0; i + 1 < sizeof junk; i++) {
    *rng = *rng * 1103515245u + 12345u;
    junk[i] = (uint8_t)(1 + (*rng >> 16) % 255); /* no delimiter inside */
  }
  junk[sizeof junk - 1] = 0x00;
  board_send_raw(b, junk, sizeof junk);
}

static void test_bad_input_is_counted_and_never_reaches_the_arm(void **state) {
  (void)state;
  hil_runtime *rt = new_runtime(HIL_MODE_FAST), *ref = new_runtime(HIL_MODE_FAST);
  board b, bref;
  hil_transport *t = connect_board(rt, &b), *tref = connect_board(ref, &bref);
  unsigned rng = 7;
  int garbage = 0, bad_crc = 0, truncated = 0, nans = 0;
  for (int k = 0; k < 200; k++) {
    ach_joint_command c[NJ];
    fill_command(c, k);
    board_command(&bref, NJ, c);
    tick_after(ref, tref, &bref);
    switch (k % 8) {
    case 1:
      send_garbage(&b, &rng), garbage++;
      break;
    case 3:
      send_spoiled(&b, 0), bad_crc++;
      break;
    case 5:
      send_spoiled(&b, 1), truncated++;
      break;
    case 7: {
      ach_joint_command nan_cmd = {.joint_id = 2, .mode = ACH_MODE_DUTY, .value = NAN};
      board_command(&b, 1, &nan_cmd), nans++;
      break;
    }
    default:
      break;
    }
    board_command(&b, NJ, c);
    tick_after(rt, t, &b);
  }
  /* the arm moved exactly as without the bad input */
  assert_same_state(rt, ref);
  /* every bad frame was counted once, in the transport and in the runtime's intake */
  hil_serial_counters sc = ts_serial_counters(t);
  assert_int_equal(sc.rx_bad_crc, bad_crc);
  assert_int_equal(sc.rx_bad_crc + sc.rx_framing + sc.rx_rejected, garbage + bad_crc + truncated);
  assert_true(sc.rx_framing >= (unsigned long)truncated);
  assert_int_equal(intake(rt).rejected_malformed, garbage + bad_crc + truncated);
  assert_int_equal(intake(rt).rejected_nonfinite, nans);
  assert_int_equal(intake(rt).accepted, intake(ref).accepted);
  /* the corrupted frames had sequence numbers: each one is a frame lost to the decoder */
  assert_int_equal(sc.rx_seq_lost, bad_crc + truncated);
  /* the NaN commands were answered */
  board_read(&b);
  int bad_value = 0;
  for (int i = 0; i < b.nerrors && i < BOARD_MAX_ERRORS; i++) {
    bad_value += b.errors[i].code == ACH_ERRC_BAD_VALUE;
  }
  assert_int_equal(bad_value, nans);
  /* and the reference saw none of it */
  assert_int_equal(intake(ref).rejected_malformed + intake(ref).rejected_nonfinite, 0);
  board_close(&b);
  board_close(&bref);
  hil_runtime_destroy(&rt);
  hil_runtime_destroy(&ref);
}

static void test_bad_joint_and_mode_are_refused(void **state) {
  (void)state;
  hil_runtime *rt = new_runtime(HIL_MODE_FAST);
  board b;
  hil_transport *t = connect_board(rt, &b);
  ach_joint_command c[2] = {
      {.joint_id = NJ, .mode = ACH_MODE_DUTY, .value = 0.5f},  /* no such actuator */
      {.joint_id = 1, .mode = ACH_MODE_TORQUE, .value = 0.5f}, /* a DC motor takes duty */
  };
  board_command(&b, 1, &c[0]);
  board_command(&b, 1, &c[1]);
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.nerrors, 2));
  assert_int_equal(b.errors[0].code, ACH_ERRC_BAD_JOINT);
  assert_int_equal(b.errors[1].code, ACH_ERRC_BAD_MODE);
  assert_int_equal(intake(rt).rejected_unknown, 2);
  assert_int_equal(intake(rt).accepted, 0);
  for (int j = 0; j < NJ; j++) {
    assert_true(hil_runtime_data(rt)->ctrl[j] == 0.0);
  }
  board_close(&b);
  hil_runtime_destroy(&rt);
}

static void test_sequence_gaps_are_counted_and_reported(void **state) {
  (void)state;
  hil_runtime *rt = new_runtime(HIL_MODE_FAST);
  board b;
  hil_transport *t = connect_board(rt, &b);
  ach_joint_command c[NJ];
  fill_command(c, 0);
  board_command(&b, NJ, c);
  b.seq = (uint16_t)(b.seq + 2); /* two frames "lost" on the way */
  board_command(&b, NJ, c);
  b.seq = (uint16_t)(b.seq + 5);
  board_command(&b, NJ, c);
  tick_after(rt, t, &b);
  hil_serial_counters sc = ts_serial_counters(t);
  assert_int_equal(sc.rx_seq_gaps, 2);
  assert_int_equal(sc.rx_seq_lost, 7);
  assert_int_equal(intake(rt).accepted, 3 * NJ); /* the frames that did arrive all count */
  /* the STATUS message tells the board */
  hil_status st;
  hil_runtime_status(rt, &st);
  t->ops->publish_status(t, rt, &st);
  assert_true(board_wait_count(&b, &b.statuses, 1));
  assert_int_equal(b.status.rx_seq_lost, 7);
  assert_int_equal(b.status.rx_frames_ok, 4);
  assert_true(b.status.state & ACH_STATE_CONNECTED);
  assert_true(b.status.state & ACH_STATE_RUNNING);
  board_close(&b);
  hil_runtime_destroy(&rt);
}

static void test_heartbeat_is_echoed(void **state) {
  (void)state;
  hil_runtime *rt = new_runtime(HIL_MODE_FAST);
  board b;
  hil_transport *t = connect_board(rt, &b);
  ach_message m;
  memset(&m, 0, sizeof m);
  m.type = ACH_MSG_HEARTBEAT;
  m.u.heartbeat.time_ns = 123456789;
  board_send(&b, &m);
  uint64_t sim_ns = now_ns(rt);
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.heartbeats, 1));
  assert_int_equal(b.heartbeat.echo_ns, 123456789);
  assert_int_equal(b.heartbeat.time_ns, sim_ns); /* answered before the tick's step */
  board_close(&b);
  hil_runtime_destroy(&rt);
}

/* --- watchdog --------------------------------------------------------------------------------- */

static void test_watchdog_zeroes_silent_board_and_control_resumes(void **state) {
  (void)state;
  hil_runtime *rt = new_runtime(HIL_MODE_FAST);
  const double timeout = hil_runtime_options(rt)->watchdog_timeout_s;
  const double dt = hil_runtime_model(rt)->opt.timestep;
  assert_true(timeout > 0);
  board b;
  hil_transport *t = connect_board(rt, &b);
  ach_joint_command c[NJ];
  for (int j = 0; j < NJ; j++) {
    c[j] = (ach_joint_command){.joint_id = (uint8_t)j, .mode = ACH_MODE_DUTY, .value = 0.25f};
  }
  double last = 0;
  for (int k = 0; k < 50; k++) {
    board_command(&b, NJ, c);
    last = hil_runtime_loop_time(rt); /* the time the command is received at */
    tick_after(rt, t, &b);
  }
  assert_true(hil_runtime_data(rt)->ctrl[0] == 0.25);
  /* the board goes silent: the command holds up to the timeout, and is zero one step after */
  double zeroed_at = -1;
  int ticks = (int)ceil(3 * timeout / dt);
  for (int k = 0; k < ticks; k++) {
    double now = hil_runtime_loop_time(rt); /* the clock the step's watchdog reads */
    hil_runtime_tick(rt);
    board_read(&b);
    double u = hil_runtime_data(rt)->ctrl[0];
    if (now - last <= timeout - 0.5 * dt) {
      assert_true(u == 0.25);
    } else if (u == 0.0 && zeroed_at < 0) {
      zeroed_at = now;
    }
  }
  assert_true(zeroed_at > 0);
  assert_true(zeroed_at - last <= timeout + 1.5 * dt);
  for (int j = 0; j < NJ; j++) {
    assert_true(hil_runtime_data(rt)->ctrl[j] == 0.0);
  }
  assert_int_equal(intake(rt).watchdog_trips, NJ);
  hil_status st;
  hil_runtime_status(rt, &st);
  t->ops->publish_status(t, rt, &st);
  assert_true(board_wait_count(&b, &b.statuses, 1));
  assert_true(b.status.state & ACH_STATE_WATCHDOG);
  assert_int_equal(b.status.watchdog_trips, NJ);
  /* commands again: control is back at the next step */
  board_command(&b, NJ, c);
  tick_after(rt, t, &b);
  for (int j = 0; j < NJ; j++) {
    assert_true(hil_runtime_data(rt)->ctrl[j] == 0.25);
  }
  hil_runtime_status(rt, &st);
  t->ops->publish_status(t, rt, &st);
  assert_true(board_wait_count(&b, &b.statuses, 2));
  assert_false(b.status.state & ACH_STATE_WATCHDOG);
  board_close(&b);
  hil_runtime_destroy(&rt);
}

/* --- the firmware closes and reopens the pty -------------------------------------------------- */

/* ticks until cond(t) or about 3 s passed (the port retries every 5 ms of wall time) */
static int tick_until(hil_runtime *rt, hil_transport *t, int (*cond)(const hil_transport *)) {
  for (int i = 0; i < 3000; i++) {
    if (cond(t)) {
      return 1;
    }
    hil_runtime_tick(rt);
    ts_sleep(1e-3);
  }
  return cond(t);
}

static int is_down(const hil_transport *t) { return ts_serial_counters(t).link_down >= 1; }

static int is_back(const hil_transport *t) { return ts_serial_counters(t).link_up >= 1; }

static void test_close_and_reopen_recovers(void **state) {
  (void)state;
  char dir[64], link[128];
  ts_tmpdir(dir, sizeof dir, "serial");
  snprintf(link, sizeof link, "%s/arm", dir);
  hil_runtime *rt = new_runtime(HIL_MODE_FAST);
  hil_transport *t = ts_serial_transport(rt, link);
  /* the link points at the slave */
  char target[256];
  ssize_t n = readlink(link, target, sizeof target - 1);
  assert_true(n > 0);
  target[n] = '\0';
  assert_string_equal(target, hil_serial_transport_path(t));
  board b;
  assert_int_equal(board_open(&b, link), 0);
  board_hello(&b, "first");
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.hello_acks, 1));
  ach_joint_command c[NJ];
  fill_command(c, 20);
  board_command(&b, NJ, c);
  tick_after(rt, t, &b);
  assert_int_equal(intake(rt).accepted, NJ);
  /* unplugged: the runtime notices, stops offering the fd and keeps stepping */
  board_close(&b);
  assert_true(tick_until(rt, t, is_down));
  assert_int_equal(transport_fd(t), -1);
  assert_int_equal(ts_serial_counters(t).connected, 0);
  uint64_t steps_before = (uint64_t)llround(hil_runtime_data(rt)->time * 1000);
  for (int k = 0; k < 10; k++) {
    hil_runtime_tick(rt);
  }
  assert_true((uint64_t)llround(hil_runtime_data(rt)->time * 1000) == steps_before + 10);
  /* plugged in again through the same link: HELLO, commands and samples work again */
  assert_int_equal(board_open(&b, link), 0);
  assert_true(tick_until(rt, t, is_back));
  assert_true(transport_fd(t) >= 0);
  board_hello(&b, "second");
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.hello_acks, 1));
  assert_int_equal(b.ack.result, ACH_HELLO_OK);
  fill_command(c, 40);
  board_command(&b, NJ, c);
  tick_after(rt, t, &b);
  assert_int_equal(intake(rt).accepted, 2 * NJ);
  assert_true(hil_runtime_data(rt)->ctrl[0] == (double)duty(40, 0));
  assert_true(board_wait_sample(&b, 0, now_ns(rt)));
  assert_int_equal(ts_serial_counters(t).link_down, 1);
  assert_int_equal(ts_serial_counters(t).link_up, 1);
  board_close(&b);
  /* the link goes with the runtime */
  hil_runtime_destroy(&rt);
  struct stat st;
  assert_int_equal(lstat(link, &st), -1);
  assert_int_equal(errno, ENOENT);
  rmdir(dir);
}

static void test_link_replaces_stale_symlink_not_files(void **state) {
  (void)state;
  char dir[64], link[128];
  ts_tmpdir(dir, sizeof dir, "serial");
  snprintf(link, sizeof link, "%s/arm", dir);
  assert_int_equal(symlink("/dev/pts/nonexistent", link), 0);
  hil_runtime *rt = new_runtime(HIL_MODE_FAST);
  hil_transport *t = ts_serial_transport(rt, link);
  char target[256];
  ssize_t n = readlink(link, target, sizeof target - 1);
  assert_true(n > 0);
  target[n] = '\0';
  assert_string_equal(target, hil_serial_transport_path(t));
  hil_runtime_destroy(&rt);
  /* a regular file is not ours to replace */
  ts_write_file(link, "");
  hil_serial_options so;
  hil_serial_options_default(&so);
  snprintf(so.link, sizeof so.link, "%s", link);
  char err[512] = "";
  assert_null(hil_serial_transport_new(&so, err, sizeof err));
  assert_non_null(strstr(err, "not a symlink"));
  assert_int_equal(ts_rmtree(dir), 0);
}

/* Debian's libserialport cannot open a pty by itself (the reason pty mode exists): device mode
 * on a pty says so instead of failing obscurely. (test_serial_device runs that path through the
 * test-only shim.) */
static void test_device_mode_on_a_pty_explains_the_limit(void **state) {
  (void)state;
  hil_runtime *rt = new_runtime(HIL_MODE_FAST);
  hil_transport *t = ts_serial_transport(rt, NULL);
  hil_serial_options so;
  hil_serial_options_default(&so);
  so.use_pty = 0;
  snprintf(so.port, sizeof so.port, "%s", hil_serial_transport_path(t));
  char err[512] = "";
  hil_transport *dev = hil_serial_transport_new(&so, err, sizeof err);
  if (dev) { /* a libserialport that can open ptys: nothing to explain */
    dev->ops->destroy(dev);
    hil_runtime_destroy(&rt);
    TS_SKIP("this libserialport opens pseudo-terminals: nothing to explain");
  }
  assert_non_null(strstr(err, "cannot open pseudo-terminals"));
  hil_runtime_destroy(&rt);
}

/* --- lockstep: the board drives time with STEP_REQUEST ---------------------------------------- */

static void test_step_request_advances_lockstep(void **state) {
  (void)state;
  /* a run of 1000 steps: only the lockstep logic can hold it at the five requested */
  hil_runtime *rt = ts_runtime(ARM, HIL_MODE_LOCKSTEP, 1.0);
  board b;
  board_on_pty(&b, rt);
  ts_loop loop;
  ts_loop_start(&loop, rt);
  board_hello(&b, "stepper");
  assert_true(board_wait_count(&b, &b.hello_acks, 1));
  ach_message m;
  memset(&m, 0, sizeof m);
  m.type = ACH_MSG_STEP_REQUEST;
  m.u.step_request.steps = 5;
  board_send(&b, &m);
  /* the five steps, then a moment in which a sixth would have come (the run holds) */
  ts_loop_wait_steps(&loop, 5, TS_DEADLINE_S);
  for (int i = 0; i < 100 && !ts_loop_done(&loop); i++) { /* time for a sixth step to show */
    board_read(&b);
    ts_sleep(1e-3);
  }
  const int ended = ts_loop_stop(&loop);
  hil_status st;
  hil_runtime_status(rt, &st);
  if (st.steps != 5 || ended) {
    fail_msg("STEP_REQUEST(5) in lockstep: %llu steps, the run %s (expected exactly 5 steps of "
             "the 1000 the duration allows)",
             (unsigned long long)st.steps, ended ? "ended by itself" : "was stopped");
  }
  assert_int_equal(intake(rt).accepted, 0);
  board_close(&b);
  hil_runtime_destroy(&rt);
}

/* STEP_REQUEST outside lockstep: refused with ERROR UNSUPPORTED, and the tick steps once as any
 * tick of a fast run does, not the 50 steps requested. */
static void test_step_request_refused_outside_lockstep(void **state) {
  (void)state;
  hil_runtime *rt = new_runtime(HIL_MODE_FAST);
  board b;
  hil_transport *t = connect_board(rt, &b);
  const uint64_t before = hil_runtime_steps(rt);
  ach_message m;
  memset(&m, 0, sizeof m);
  m.type = ACH_MSG_STEP_REQUEST;
  m.u.step_request.steps = 50;
  board_send(&b, &m);
  tick_after(rt, t, &b);
  assert_true(board_wait_count(&b, &b.nerrors, 1));
  assert_int_equal(b.errors[0].code, ACH_ERRC_UNSUPPORTED);
  assert_int_equal(hil_runtime_steps(rt) - before, 1);
  board_close(&b);
  hil_runtime_destroy(&rt);
}

TS_MAIN(test_handshake, test_commands_move_the_arm_like_the_intake,
        test_bad_input_is_counted_and_never_reaches_the_arm, test_bad_joint_and_mode_are_refused,
        test_sequence_gaps_are_counted_and_reported, test_heartbeat_is_echoed,
        test_watchdog_zeroes_silent_board_and_control_resumes, test_close_and_reopen_recovers,
        test_link_replaces_stale_symlink_not_files, test_device_mode_on_a_pty_explains_the_limit,
        test_step_request_advances_lockstep, test_step_request_refused_outside_lockstep)
