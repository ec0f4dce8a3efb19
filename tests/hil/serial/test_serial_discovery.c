/* tests/hil/serial/test_serial_discovery.c: what protocol 1.2 lets a board discover over the
 * line, and a lockstep board that does its discovery before it reads samples
 * (docs/serial-protocol.md, sections 6.9–6.12 and 8).
 *
 * Before 1.2 a board learnt the joints' names, command modes and ranges only from the robot file,
 * SENSOR_INFO lacked the latency the console prints, and the samples of t = 0 came once, right
 * after HELLO_ACK: a lockstep board that waited for DESCRIBE's answers before reading samples
 * never got any, and the run never advanced. The test plays the board over a pty and ticks the
 * runtime itself, on the club arm (four DC motors, encoders of 1 ms latency, an IMU of 2.5 ms). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hil/runtime/runtime.h"
#include "support/pty_board.h"
#include "support/runtime.h"
#include "support/skip.h"
#include "support/wait.h"

#define CLUB ACHILLES_SOURCE_DIR "/configs/club_arm.json"

/* what the board has read, in the order it came */
typedef struct peer {
  ach_decoder dec;
  int acks, statuses, sample_frames, errors, sensor_infos, joint_infos;
  ach_hello_ack ack;
  ach_status status;
  uint16_t last_error;
  uint64_t last_frame_time;
  ach_sensor_info sensor[64];
  ach_joint_info joint[16];
} peer;

/* one message the board read, recorded */
static void on_message(const ach_message *m, void *user) {
  peer *p = user;
  switch (m->type) {
  case ACH_MSG_HELLO_ACK:
    p->acks++, p->ack = m->u.hello_ack;
    break;
  case ACH_MSG_STATUS:
    p->statuses++, p->status = m->u.status;
    break;
  case ACH_MSG_SENSOR_SAMPLES:
    p->sample_frames++, p->last_frame_time = m->u.sensor_samples.sim_time_ns;
    break;
  case ACH_MSG_ERROR:
    p->errors++, p->last_error = m->u.error.code;
    break;
  case ACH_MSG_SENSOR_INFO:
    p->sensor[m->u.sensor_info.sensor_id % 64] = m->u.sensor_info, p->sensor_infos++;
    break;
  case ACH_MSG_JOINT_INFO:
    p->joint[m->u.joint_info.joint_id % 16] = m->u.joint_info, p->joint_infos++;
    break;
  default:
    break;
  }
}

static void drain(peer *p, int fd) { board_read_with(fd, &p->dec, on_message, p); }

/* ticks (paused: polls only) and reads until *counter reaches target; 1 when it did */
static int tick_until(hil_runtime *rt, hil_transport *t, board *b, peer *p, const int *counter,
                      int target) {
  const double give_up = ts_now() + 30;
  while (*counter < target && ts_now() < give_up) {
    ts_wait_readable(transport_fd(t), 0.02);
    hil_runtime_tick(rt);
    ts_wait_readable(b->fd, 0.02);
    drain(p, b->fd);
  }
  return *counter >= target;
}

/* the club arm in mode on a serial transport (into *t unless t is NULL) on a new pty, the board
 * b on that pty and an empty peer p reading it */
static hil_runtime *open_rig(hil_mode mode, hil_transport **t, board *b, peer *p) {
  hil_runtime *rt = ts_runtime(CLUB, mode, 0);
  hil_transport *serial = ts_serial_transport(rt, NULL);
  if (t) {
    *t = serial;
  }
  board_open_on(b, serial);
  memset(p, 0, sizeof *p);
  ach_decoder_init(&p->dec);
  return rt;
}

static void send_describe(board *b, uint8_t id, uint8_t what) {
  ach_message m = {.type = ACH_MSG_DESCRIBE};
  m.u.describe.sensor_id = id;
  m.u.describe.what = what;
  board_send(b, &m);
}

static void send_request(board *b, uint8_t what) {
  ach_message m = {.type = ACH_MSG_REQUEST};
  m.u.request.what = what;
  board_send(b, &m);
}

static void test_joints_latency_and_requests(void **state) {
  (void)state;
  hil_transport *t;
  board b;
  static peer p;
  hil_runtime *rt = open_rig(HIL_MODE_FAST, &t, &b, &p);
  hil_runtime_pause(rt); /* polls only: the state stays at t = 0 */
  board_hello(&b, "discovery");
  assert_true(tick_until(rt, t, &b, &p, &p.acks, 1));
  assert_int_equal(p.ack.version_minor, 2);
  /* the joints: one JOINT_INFO per actuator, in id order */
  send_describe(&b, ACH_DESCRIBE_ALL, ACH_DESCRIBE_JOINTS);
  assert_true(tick_until(rt, t, &b, &p, &p.joint_infos, 4));
  static const char *const joints[4] = {"base_yaw", "shoulder", "elbow", "wrist_roll"};
  static const char *const motors[4] = {"base_motor", "shoulder_motor", "elbow_motor",
                                        "wrist_motor"};
  for (int j = 0; j < 4; j++) {
    const ach_joint_info *ji = &p.joint[j];
    print_message("joint %d: %s (%s), mode %u, type %u, command in [%g, %g]\n", ji->joint_id,
                  ji->name, ji->actuator, ji->mode, ji->joint_type, ji->ctrl_min, ji->ctrl_max);
    assert_int_equal(ji->joint_id, j);
    assert_string_equal(ji->name, joints[j]);
    assert_string_equal(ji->actuator, motors[j]);
    assert_int_equal(ji->mode, ACH_MODE_DUTY); /* the club arm's DC motors take duty */
    assert_int_equal(ji->joint_type, ACH_JOINT_ROTARY);
    assert_true(ji->ctrl_min == -1.0f && ji->ctrl_max == 1.0f);
  }
  send_describe(&b, 4, ACH_DESCRIBE_JOINTS); /* no such joint */
  assert_true(tick_until(rt, t, &b, &p, &p.errors, 1));
  assert_int_equal(p.last_error, ACH_ERRC_BAD_JOINT);
  /* the sensors: the latency applied, and an encoder's counts per revolution on every channel */
  send_describe(&b, ACH_DESCRIBE_ALL, ACH_DESCRIBE_SENSORS);
  assert_true(tick_until(rt, t, &b, &p, &p.sensor_infos, 19));
  for (int id = 0; id < 4; id++) { /* enc_base_yaw: counts, angle, velocity, index */
    assert_int_equal(p.sensor[id].latency_ns, 1000000);
    assert_int_equal(p.sensor[id].counts_per_rev, 8192);
  }
  assert_int_equal(p.sensor[12].sensor_type, ACH_SENSOR_IMU);
  assert_int_equal(p.sensor[12].latency_ns, 2500000);
  assert_int_equal(p.sensor[12].counts_per_rev, 0);
  /* REQUEST: a STATUS at once, the samples again, stamped with the time now */
  const int statuses = p.statuses, frames = p.sample_frames;
  send_request(&b, ACH_REQUEST_STATUS);
  assert_true(tick_until(rt, t, &b, &p, &p.statuses, statuses + 1));
  send_request(&b, ACH_REQUEST_SAMPLES);
  assert_true(tick_until(rt, t, &b, &p, &p.sample_frames, frames + 1));
  assert_int_equal(p.last_frame_time, 0);
  const int errors = p.errors;
  send_request(&b, 7);
  assert_true(tick_until(rt, t, &b, &p, &p.errors, errors + 1));
  assert_int_equal(p.last_error, ACH_ERRC_UNSUPPORTED);
  board_close(&b);
  hil_runtime_destroy(&rt);
}

/* reads (the loop runs on its own thread) until *counter reaches target; 1 when it did */
static int read_until(board *b, peer *p, const int *counter, int target) {
  const double give_up = ts_now() + 30;
  while (*counter < target && ts_now() < give_up) {
    ts_wait_readable(b->fd, 0.05);
    drain(p, b->fd);
  }
  return *counter >= target;
}

/* Lockstep, the loop on its own thread: the board ignores everything until its discovery is
 * done, then asks for the samples and answers them; the run advances. */
static void test_lockstep_discovery_first(void **state) {
  (void)state;
  board b;
  static peer p;
  hil_runtime *rt = open_rig(HIL_MODE_LOCKSTEP, NULL, &b, &p);
  ts_loop loop;
  ts_loop_start(&loop, rt);
  board_hello(&b, "discovery-first");
  assert_true(read_until(&b, &p, &p.acks, 1));
  send_describe(&b, ACH_DESCRIBE_ALL, ACH_DESCRIBE_SENSORS);
  assert_true(read_until(&b, &p, &p.sensor_infos, 19));
  /* the burst of t = 0 went by before the answers: this board read none of it, and waits */
  ts_sleep(0.2);
  assert_int_equal(hil_runtime_steps(rt), 0); /* lockstep: nothing moves without commands */
  const int frames = p.sample_frames;
  send_request(&b, ACH_REQUEST_SAMPLES);
  assert_true(read_until(&b, &p, &p.sample_frames, frames + 1));
  assert_int_equal(p.last_frame_time, 0);
  /* now it answers every new instant with a command for all joints */
  ach_joint_command c[4];
  for (int j = 0; j < 4; j++) {
    c[j] = (ach_joint_command){(uint8_t)j, ACH_MODE_DUTY, 0.1f};
  }
  for (uint64_t step = 1; step <= 5; step++) {
    board_command(&b, 4, c);
    assert_true(ts_loop_wait_steps(&loop, step, 30));
    drain(&p, b.fd);
  }
  ts_loop_stop(&loop);
  print_message("lockstep, discovery first: %llu steps after REQUEST(SAMPLES)\n",
                (unsigned long long)hil_runtime_steps(rt));
  assert_true(hil_runtime_steps(rt) >= 5);
  board_close(&b);
  hil_runtime_destroy(&rt);
}

TS_MAIN(test_joints_latency_and_requests, test_lockstep_discovery_first)
