/* tests/hil/replay/test_replay_serial.c: a replay over a pseudo-terminal to a board played by
 * the test: HELLO_ACK with the log's figures, one SENSOR_SAMPLES frame per instant with the
 * log's values, DESCRIBE answered from the file's sensors, and how times are rounded on the
 * wire. The test log is replay_fixture.h's. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "replay_fixture.h"
#include "support/skip.h"
#include "support/tmp.h"

static void test_serial_pty(void **state) {
  (void)state;
  const long nsteps = 20;
  hil_replay_schedule s;
  load_test_log(&s, NULL, 0, "serial.log", nsteps, NULL);
  hil_replay_options o = default_options();
  board b = {0};
  pthread_t th;
  hil_replay *r = serial_replay_start(&s, &o, &b, &th);

  /* HELLO -> HELLO_ACK with the log's figures */
  const ach_hello_ack ack = board_hello_acked(&b, "test_board");
  assert_int_equal(ack.result, ACH_HELLO_OK);
  assert_int_equal(ack.n_joints, 2);
  assert_int_equal(ack.n_sensors, 3 + 6 + 1);
  assert_int_equal(ack.physics_rate_hz, 1000);
  assert_int_equal(ack.sim_time_ns, 0);

  /* a motor command is counted and ignored */
  ach_message m;
  memset(&m, 0, sizeof m);
  m.type = ACH_MSG_MOTOR_COMMAND;
  m.u.motor_command.count = 1;
  m.u.motor_command.joints[0].value = 0.5f;
  board_send(&b, &m);

  /* one SENSOR_SAMPLES frame per instant, with the log's values */
  uint32_t last_good[10] = {0};
  for (long k = 0; k < nsteps; k++) {
    ach_message f = board_next(&b);
    while (f.type == ACH_MSG_STATUS) {
      f = board_next(&b);
    }
    assert_int_equal(f.type, ACH_MSG_SENSOR_SAMPLES);
    const ach_sensor_samples *ss = &f.u.sensor_samples;
    assert_int_equal(ss->sim_time_ns, (uint64_t)llround(0.001 * (double)k * 1e9));
    int e = 0;
    for (int i = 0; i < NSENS; i++) {
      sens_sample smp;
      if (!sample_of(i, k, &smp)) {
        continue;
      }
      const int first = i == 0 ? 0 : i == 1 ? 3 : 9;
      for (int c = 0; c < test_sensor[i].nch; c++, e++) {
        assert_true(e < ss->count);
        const ach_sample *a = &ss->samples[e];
        assert_int_equal(a->sensor_id, first + c);
        assert_int_equal(a->sample_seq, smp.seq);
        assert_int_equal(a->age_ns, (uint32_t)llround((smp.t - smp.t_truth) * 1e9));
        if (i == 0 && c == 0) {
          assert_int_equal(a->kind, ACH_KIND_COUNTS);
          assert_int_equal(a->v.counts, (int32_t)(k - 3));
        } else {
          assert_int_equal(a->kind, ACH_KIND_VALUE);
        }
        if (smp.valid) {
          assert_int_equal(a->flags, 0);
          if (a->kind == ACH_KIND_VALUE) {
            assert_true(a->v.value == (float)smp.meas[c]);
          }
          last_good[first + c] = a->v.raw;
        } else { /* the last good value, flagged */
          assert_int_equal(a->flags, ACH_SAMPLE_DROPPED);
          assert_int_equal(a->v.raw, last_good[first + c]);
          assert_true(as_float(a->v.raw) == (float)(0.1 * c + 1)); /* imu sample 0's value */
        }
      }
    }
    assert_int_equal(ss->count, e);
  }
  pthread_join(th, NULL);
  hil_replay_report rep;
  hil_replay_get_report(r, &rep);
  assert_int_equal(rep.motor_commands, 1);
  assert_int_equal(rep.instants, nsteps);
  assert_int_equal(rep.messages, 1 /* ack */ + nsteps + 1 /* final status */);
  close(b.fd);
  hil_replay_destroy(&r);
  hil_replay_free(&s);
}

/* A 1.1 board talks to a replay as to the live simulator: HELLO_ACK announces the receive
 * limits, DESCRIBE is answered with one SENSOR_INFO per id from the file's sensors (a bad id with
 * ERROR 6), and a board whose receive buffer is too small is refused. */
static ach_message board_next_not_samples(board *b) {
  ach_message f = board_next(b);
  while (f.type == ACH_MSG_SENSOR_SAMPLES || f.type == ACH_MSG_STATUS) {
    f = board_next(b);
  }
  return f;
}

static void test_serial_describe(void **state) {
  (void)state;
  hil_replay_schedule s;
  load_test_log(&s, NULL, 0, "describe.log", 400, NULL);
  hil_replay_options o = default_options();
  o.loop = 1; /* plays until stopped: the answers never race the end of the file */
  o.loops = 0;
  board b = {0};
  pthread_t th;
  hil_replay *r = serial_replay_start(&s, &o, &b, &th);
  const uint8_t zero = 0;
  assert_int_equal(write(b.fd, &zero, 1), 1);

  ach_message m;
  memset(&m, 0, sizeof m);
  m.type = ACH_MSG_HELLO; /* a receive buffer too small for STATUS and ERROR */
  m.u.hello.version_major = ACH_PROTOCOL_VERSION_MAJOR;
  m.u.hello.rx_max_payload = ACH_MIN_PAYLOAD - 1;
  board_send(&b, &m);
  ach_message f = board_next_not_samples(&b);
  assert_int_equal(f.type, ACH_MSG_HELLO_ACK);
  assert_int_equal(f.u.hello_ack.result, ACH_HELLO_REFUSED);
  f = board_next_not_samples(&b);
  assert_int_equal(f.type, ACH_MSG_ERROR);
  assert_int_equal(f.u.error.code, ACH_ERRC_UNSUPPORTED);

  m.u.hello.rx_max_payload = ACH_MAX_PAYLOAD;
  board_send(&b, &m);
  f = board_next_not_samples(&b);
  assert_int_equal(f.type, ACH_MSG_HELLO_ACK);
  assert_int_equal(f.u.hello_ack.result, ACH_HELLO_OK);
  assert_int_equal(f.u.hello_ack.rx_max_payload, ACH_MAX_PAYLOAD);
  assert_int_equal(f.u.hello_ack.max_joints, ACH_MAX_JOINTS);

  memset(&m, 0, sizeof m);
  m.type = ACH_MSG_DESCRIBE;
  m.u.describe.sensor_id = ACH_DESCRIBE_ALL;
  board_send(&b, &m);
  static const char *const want_name[10] = {
      "enc_a.counts",  "enc_a.angle",   "enc_a.velocity", "imu_b.gyro.x", "imu_b.gyro.y",
      "imu_b.gyro.z",  "imu_b.accel.x", "imu_b.accel.y",  "imu_b.accel.z", "trq_c.torque"};
  static const char *const want_units[10] = {"count", "rad",   "rad/s", "rad/s", "rad/s",
                                             "rad/s", "m/s^2", "m/s^2", "m/s^2", "N*m"};
  for (int id = 0; id < 10; id++) {
    f = board_next_not_samples(&b);
    assert_int_equal(f.type, ACH_MSG_SENSOR_INFO);
    const ach_sensor_info *si = &f.u.sensor_info;
    assert_int_equal(si->sensor_id, id);
    assert_string_equal(si->name, want_name[id]);
    assert_string_equal(si->units, want_units[id]);
    assert_int_equal(si->kind, id == 0 ? ACH_KIND_COUNTS : ACH_KIND_VALUE);
    assert_int_equal(si->sensor_type, id < 3 ? ACH_SENSOR_ENCODER
                                      : id < 9 ? ACH_SENSOR_IMU
                                               : ACH_SENSOR_TORQUE);
    assert_int_equal(si->joint, ACH_NO_JOINT);
    assert_true(si->rate_hz == (id < 3 ? 1000.0f : id < 9 ? 500.0f : 250.0f));
  }
  m.u.describe.sensor_id = 10; /* one past the last id */
  board_send(&b, &m);
  f = board_next_not_samples(&b);
  assert_int_equal(f.type, ACH_MSG_ERROR);
  assert_int_equal(f.u.error.code, ACH_ERRC_BAD_SENSOR);
  hil_replay_request_stop(r);
  pthread_join(th, NULL);
  hil_replay_destroy(&r);
  hil_replay_free(&s);
  close(b.fd);
}

/* Issue 18, item 8: how times are rounded on the serial wire (docs/replay.md, section 2):
 * sim_time_ns = t·10⁹ rounded to the nearest ns (0 for t <= 0), age_ns = (t − t_truth)·10⁹
 * rounded to the nearest ns, 0 when t_truth is not before t, saturated at 2³² − 1 ns
 * (4.29 s). */
static void test_serial_time_rounding(void **state) {
  (void)state;
  char path[128];
  hil_log_writer *w = custom_log(path, sizeof path, "rounding.log", 1000);
  const double t[4] = {0.1 + 0.2, 0.30000000000000004 + 0.0000000015, 0.4, 0.5};
  const double t_truth[4] = {0.1 + 0.2 - 0.0025, t[1] - 2.5e-10, 0.4 + 0.001, 0.5 - 5.0};
  const uint64_t want_time[4] = {300000000, 300000002, 400000000, 500000000};
  const uint32_t want_age[4] = {2500000, 0, 0, UINT32_MAX};
  for (int k = 0; k < 4; k++) {
    put(w, 2, t[k], t_truth[k], (uint64_t)k);
  }
  assert_int_equal(hil_log_close(&w), 0);
  hil_replay_select sel = {0};
  hil_replay_schedule s;
  load(&s, path, &sel);
  assert_int_equal(s.n, 4);
  hil_replay_options o = default_options();
  board b = {0};
  pthread_t th;
  hil_replay *r = serial_replay_start(&s, &o, &b, &th);
  assert_int_equal(board_hello_acked(&b, "").sim_time_ns, want_time[0]);
  for (int k = 0; k < 4; k++) {
    ach_message f = board_next(&b);
    while (f.type == ACH_MSG_STATUS) {
      f = board_next(&b);
    }
    assert_int_equal(f.type, ACH_MSG_SENSOR_SAMPLES);
    print_message("t %.17g: sim_time_ns %llu, age_ns %u\n", t[k],
                  (unsigned long long)f.u.sensor_samples.sim_time_ns,
                  f.u.sensor_samples.samples[0].age_ns);
    assert_int_equal(f.u.sensor_samples.sim_time_ns, want_time[k]);
    assert_int_equal(f.u.sensor_samples.samples[0].age_ns, want_age[k]);
  }
  pthread_join(th, NULL);
  close(b.fd);
  hil_replay_destroy(&r);
  hil_replay_free(&s);
}

TS_MAIN_WITH(replay_setup, replay_teardown, test_serial_pty, test_serial_describe,
                                            test_serial_time_rounding)
