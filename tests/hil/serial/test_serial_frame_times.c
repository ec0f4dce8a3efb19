/* tests/hil/serial/test_serial_frame_times.c: SENSOR_SAMPLES frames carry the simulation time of
 * the step that sent them (docs/serial-protocol.md, section 6.3), so their times never go back
 * and a new time is a new step — the burst after HELLO_ACK included.
 *
 * The club arm has an 800 Hz IMU on its own clock beside 1 kHz encoders: a frame used to carry
 * the IMU sample's own time (1.25 ms) after the encoders' frame of the step (2 ms), and the burst
 * after HELLO_ACK each sensor's last sample time, so a board that takes a new frame time for a
 * new instant commanded two or three times per step. When each measurement was taken is still
 * exact: frame time − age. The test plays the board over a pty and ticks the runtime itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hil/runtime/runtime.h"
#include "support/pty_board.h"
#include "support/runtime.h"
#include "support/skip.h"
#include "support/wait.h"

#define CLUB ACHILLES_SOURCE_DIR "/configs/club_arm.json"
#define FRAMES_MAX 4096

typedef struct seen {
  ach_decoder dec;
  int acks, nframes, after_ack; /* frames before the first tick after HELLO_ACK: the burst */
  uint64_t ack_time;
  uint64_t time[FRAMES_MAX];
  uint64_t oldest_measurement[FRAMES_MAX]; /* the frame's smallest time − age */
} seen;

/* one message the board read: the HELLO_ACK's time, each frame's time and oldest measurement */
static void on_message(const ach_message *m, void *user) {
  seen *s = user;
  if (m->type == ACH_MSG_HELLO_ACK) {
    s->acks++;
    s->ack_time = m->u.hello_ack.sim_time_ns;
  } else if (m->type == ACH_MSG_SENSOR_SAMPLES && s->nframes < FRAMES_MAX) {
    const ach_sensor_samples *f = &m->u.sensor_samples;
    uint64_t oldest = f->sim_time_ns;
    for (int e = 0; e < f->count; e++) {
      const uint64_t at = f->sim_time_ns - f->samples[e].age_ns;
      oldest = at < oldest ? at : oldest;
    }
    s->oldest_measurement[s->nframes] = oldest;
    s->time[s->nframes++] = f->sim_time_ns;
  }
}

/* everything waiting on the board's side of the pty, decoded in order */
static void drain(seen *s, int fd) { board_read_with(fd, &s->dec, on_message, s); }

static void test_frame_times_follow_the_steps(void **state) {
  (void)state;
  hil_runtime *rt = ts_runtime(CLUB, HIL_MODE_FAST, 0);
  board b;
  hil_transport *t = board_on_pty(&b, rt);
  static seen s;
  memset(&s, 0, sizeof s);
  ach_decoder_init(&s.dec);
  /* 21 steps first (t = 21 ms: the IMU's last sample is of 20 ms), then HELLO */
  for (int k = 0; k < 21; k++) {
    hil_runtime_tick(rt);
  }
  board_hello(&b, "frame-times");
  hil_runtime_pause(rt); /* ticks only read and answer until the burst is in */
  const double give_up = ts_now() + 30;
  while (s.acks == 0 && ts_now() < give_up) {
    ts_wait_readable(transport_fd(t), 0.1);
    hil_runtime_tick(rt);
    ts_wait_readable(b.fd, 0.1);
    drain(&s, b.fd);
  }
  assert_int_equal(s.acks, 1);
  ts_sleep(0.05); /* the rest of the burst, if the pty split it */
  drain(&s, b.fd);
  s.after_ack = s.nframes;
  hil_runtime_resume(rt);
  for (int k = 0; k < 40; k++) {
    hil_runtime_tick(rt);
    ts_wait_readable(b.fd, 0.05);
    drain(&s, b.fd);
  }
  int back = 0, burst_off = 0;
  for (int i = 0; i < s.nframes; i++) {
    back += i > 0 && s.time[i] < s.time[i - 1];
    burst_off += i < s.after_ack && s.time[i] != s.ack_time;
    assert_true(s.oldest_measurement[i] <= s.time[i]);
  }
  print_message("%d frames (%d in the burst after HELLO_ACK at %.3f ms): %d went back in time, "
                "%d of the burst off the answer's time\n",
                s.nframes, s.after_ack, 1e-6 * (double)s.ack_time, back, burst_off);
  assert_true(s.after_ack > 0 && s.nframes > s.after_ack + 40);
  assert_int_equal(back, 0);
  assert_int_equal(burst_off, 0);
  /* the steps' times: 1 ms apart, each a step after the burst's */
  uint64_t last = s.ack_time;
  int steps = 0;
  for (int i = s.after_ack; i < s.nframes; i++) {
    if (s.time[i] != last) {
      assert_true(s.time[i] - last == 1000000);
      last = s.time[i];
      steps++;
    }
  }
  assert_int_equal(steps, 40);
  board_close(&b);
  hil_runtime_destroy(&rt);
}

TS_MAIN(test_frame_times_follow_the_steps)
