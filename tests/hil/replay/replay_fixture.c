/* tests/hil/replay/replay_fixture.c: the replay suites' shared test log, player thread, SUB and
 * board (replay_fixture.h). */
#define _GNU_SOURCE /* cfmakeraw, sched_setaffinity */
#include "replay_fixture.h"

#include <setjmp.h>
#include <stdarg.h>

#include <cmocka.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <zmq.h>

#include "support/numbers.h"
#include "support/tmp.h"
#include "support/wait.h"

/* --- the test log ----------------------------------------------------------------------------- */

sens_sensor test_sensor[NSENS];

static void make_sensors(void) {
  static const char *const names[NSENS] = {"enc_a", "imu_b", "trq_c"};
  static const sens_type types[NSENS] = {SENS_ENCODER, SENS_IMU, SENS_TORQUE};
  static const char *const ch[NSENS][6] = {{"counts", "angle", "velocity"},
                                           {"gyro.x", "gyro.y", "gyro.z", "accel.x", "accel.y",
                                            "accel.z"},
                                           {"torque"}};
  static const int nch[NSENS] = {3, 6, 1};
  memset(test_sensor, 0, sizeof test_sensor);
  for (int i = 0; i < NSENS; i++) {
    sens_sensor *s = &test_sensor[i];
    snprintf(s->name, sizeof s->name, "%s", names[i]);
    s->type = types[i];
    s->nch = nch[i];
    s->rate_hz = 1000.0 / (i == 0 ? 1 : i == 1 ? 2 : 4);
    for (int c = 0; c < nch[i]; c++) {
      snprintf(s->channel[c], sizeof s->channel[c], "%s", ch[i][c]);
    }
    s->u.trq.joint = -1;
  }
}

int sample_of(int i, long k, sens_sample *smp) {
  const int every = i == 0 ? 1 : i == 1 ? 2 : 4;
  if (k % every) {
    return 0;
  }
  memset(smp, 0, sizeof *smp);
  smp->t = 0.001 * (double)k;
  smp->t_truth = smp->t - 0.001 * i;
  smp->seq = (uint64_t)(k / every);
  smp->valid = !(i == 1 && smp->seq == 1);
  for (int c = 0; c < test_sensor[i].nch; c++) {
    const double v = i == 0 && c == 0 ? (double)(k - 3) : 0.001 * (double)k + 0.1 * c + i;
    smp->meas[c] = smp->valid ? (i == 0 && c == 2 ? (double)k / 7.0 : v) : NAN;
    smp->truth[c] = (i == 0 && c == 2 ? (double)k / 7.0 : v) + 0.5;
  }
  return 1;
}

void replay_log_header(hil_log_header *h, const char *robot, double rate_hz,
                       const sens_sensor *sensors, int n) {
  memset(h, 0, sizeof *h);
  h->version = HIL_LOG_VERSION;
  snprintf(h->robot, sizeof h->robot, "%s", robot);
  h->rate_hz = rate_hz;
  h->nsensors = n;
  for (int i = 0; i < n; i++) {
    const sens_sensor *s = &sensors[i];
    hil_log_sensor_info *si = &h->sensor[i];
    snprintf(si->name, sizeof si->name, "%s", s->name);
    snprintf(si->type, sizeof si->type, "%s", sens_type_name(s->type));
    si->nch = s->nch;
    si->rate_hz = s->rate_hz;
    for (int c = 0; c < s->nch; c++) {
      snprintf(si->channel[c], sizeof si->channel[c], "%s", s->channel[c]);
      snprintf(si->unit[c], sizeof si->unit[c], "%s", hil_msg_unit(NULL, s, c));
    }
  }
  snprintf(h->started, sizeof h->started, "2026-11-29T00:00:00Z");
}

hil_log_writer *replay_log_open(const char *path, const hil_log_header *h) {
  char err[512];
  hil_log_writer *w = hil_log_open(path, h, err, sizeof err);
  if (!w) {
    fail_msg("%s: %s", path, err);
  }
  return w;
}

void write_log(const char *path, long nsteps) {
  hil_log_header h;
  replay_log_header(&h, "replay_arm", 1000, test_sensor, NSENS);
  h.seed = 3;
  h.nactuators = 2;
  snprintf(h.actuator[0], HIL_LOG_NAME_MAX, "motor_a");
  snprintf(h.actuator[1], HIL_LOG_NAME_MAX, "motor_b");
  hil_log_writer *w = replay_log_open(path, &h);
  for (long k = 0; k < nsteps; k++) {
    sens_sample smp;
    for (int i = 0; i < NSENS; i++) {
      if (sample_of(i, k, &smp)) {
        assert_int_equal(hil_log_write_sample(w, &test_sensor[i], &smp, 0.001 * (double)k), 0);
      }
    }
    if (k % 10 == 0) {
      assert_int_equal(hil_log_write_command(w, 0.001 * (double)k, 0.001 * (double)k, "zmq",
                                             "motor_a", 0.25, "ok"),
                       0);
    }
  }
  assert_int_equal(hil_log_close(&w), 0);
}

void write_log_as(char *path, size_t path_sz, const char *name, long nsteps) {
  ts_tmp_path(path, path_sz, name);
  write_log(path, nsteps);
}

hil_log_writer *custom_log(char *path, size_t path_sz, const char *name, double rate_hz) {
  write_log_as(path, path_sz, name, 0);
  char err[512];
  hil_log_reader *rd = hil_log_reader_open(path, err, sizeof err);
  assert_non_null(rd);
  hil_log_header h = *hil_log_reader_header(rd);
  hil_log_reader_close(&rd);
  h.rate_hz = rate_hz;
  hil_log_writer *w = replay_log_open(path, &h);
  return w;
}

void put(hil_log_writer *w, int i, double t, double t_truth, uint64_t seq) {
  sens_sample smp;
  assert_true(sample_of(i, 0, &smp));
  smp.t = t;
  smp.t_truth = t_truth;
  smp.seq = seq;
  assert_int_equal(hil_log_write_sample(w, &test_sensor[i], &smp, 0), 0);
}

void expected(int i, long k, int truth, char *topic, char *body) {
  sens_sample smp;
  assert_true(sample_of(i, k, &smp));
  assert_true(hil_msg_topic(topic, HIL_MSG_TOPIC_MAX, &test_sensor[i], truth) > 0);
  assert_true(hil_msg_encode_sample(body, HIL_MSG_SAMPLE_MAX, NULL, &test_sensor[i], &smp,
                                    truth) > 0);
}

void load_test_log(hil_replay_schedule *s, char *path, size_t path_sz, const char *name,
                   long nsteps, const char *topics) {
  char own[256];
  if (!path) {
    path = own;
    path_sz = sizeof own;
  }
  write_log_as(path, path_sz, name, nsteps);
  hil_replay_select sel = {0};
  if (topics) {
    snprintf(sel.topics, sizeof sel.topics, "%s", topics);
  }
  load(s, path, &sel);
}

/* --- a replay in a thread, a SUB in this one -------------------------------------------------- */

received *rx;

static void *run_thread(void *arg) {
  hil_replay_run(arg);
  return NULL;
}

static void free_received(void) {
  rx->n = 0;
  rx->final_status[0] = '\0';
}

/* >= 0: the CPU of the subscriber and its I/O thread */
static int sub_cpu = -1;

void replay_zmq(const hil_replay_schedule *s, hil_replay_options *o, hil_replay_report *rep) {
  free_received();
  ts_tmp_ipc(o->zmq_endpoint, sizeof o->zmq_endpoint, "pub");
  o->output = HIL_REPLAY_ZMQ;
  o->wait_subscriber = 1;
  char err[512];
  hil_replay *r = hil_replay_new(s, o, err, sizeof err);
  if (!r) {
    fail_msg("hil_replay_new: %s", err);
  }
  void *ctx = zmq_ctx_new();
  int policy = SCHED_OTHER;
  struct sched_param old_sp, sp = {.sched_priority = o->rt_priority};
  const int rt = o->rt_priority > 0 &&
                 pthread_getschedparam(pthread_self(), &policy, &old_sp) == 0 &&
                 pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
  if (rt) { /* the subscriber at the player's priority, its I/O thread too */
    zmq_ctx_set(ctx, ZMQ_THREAD_SCHED_POLICY, SCHED_FIFO);
    zmq_ctx_set(ctx, ZMQ_THREAD_PRIORITY, o->rt_priority);
  }
  cpu_set_t old_cpus;
  const int pinned = sub_cpu >= 0 && sched_getaffinity(0, sizeof old_cpus, &old_cpus) == 0;
  if (pinned) { /* the subscriber and its I/O thread on the player's CPU */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sub_cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
    zmq_ctx_set(ctx, ZMQ_THREAD_AFFINITY_CPU_ADD, sub_cpu);
  }
  void *sub = zmq_socket(ctx, ZMQ_SUB);
  const int timeout = RECV_TIMEOUT_MS, big = 100000;
  zmq_setsockopt(sub, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
  zmq_setsockopt(sub, ZMQ_RCVHWM, &big, sizeof big);
  zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0);
  assert_int_equal(zmq_connect(sub, hil_replay_where(r)), 0);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, run_thread, r), 0);
  for (;;) {
    char topic[HIL_MSG_TOPIC_MAX + 1], body[HIL_MSG_SAMPLE_MAX];
    const int tl = zmq_recv(sub, topic, sizeof topic - 1, 0);
    const double at = ts_now();
    if (tl < 0) {
      fail_msg("no message within %d ms (received %d)", RECV_TIMEOUT_MS, rx->n);
    }
    assert_true(tl < HIL_MSG_TOPIC_MAX);
    topic[tl] = '\0';
    const int bl = zmq_recv(sub, body, sizeof body - 1, 0);
    assert_true(bl >= 0 && bl < (int)sizeof body);
    body[bl] = '\0';
    if (strcmp(topic, "status") == 0) {
      if (strstr(body, "\"finished\":true")) {
        snprintf(rx->final_status, sizeof rx->final_status, "%s", body);
        break;
      }
      continue;
    }
    assert_true(rx->n < MAX_MSGS);
    memcpy(rx->topic[rx->n], topic, (size_t)tl + 1);
    memcpy(rx->body[rx->n], body, (size_t)bl + 1);
    rx->at[rx->n] = at;
    rx->n++;
  }
  pthread_join(th, NULL);
  hil_replay_get_report(r, rep);
  hil_replay_destroy(&r);
  zmq_close(sub);
  zmq_ctx_term(ctx);
  if (rt) {
    pthread_setschedparam(pthread_self(), policy, &old_sp);
  }
  if (pinned) {
    sched_setaffinity(0, sizeof old_cpus, &old_cpus);
  }
}

/* the highest-numbered CPU this process may run on */
static int last_cpu(void) {
  cpu_set_t set;
  int cpu = 0;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int i = 0; i < CPU_SETSIZE; i++) {
      cpu = CPU_ISSET(i, &set) ? i : cpu;
    }
  }
  return cpu;
}

void sharp(hil_replay_options *o) {
  o->rt_priority = 80;
  o->cpu = sub_cpu = last_cpu();
  o->keep_awake = 1;
}

void options(hil_replay_options *o) {
  hil_replay_options_default(o);
  sub_cpu = -1;
  o->status_period_s = 0.2;
  o->progress = NULL;
  /* the control and command sockets in the temporary directory, not on the TCP defaults */
  ts_tmp_ipc(o->ctl_endpoint, sizeof o->ctl_endpoint, "ctl");
  ts_tmp_ipc(o->cmd_endpoint, sizeof o->cmd_endpoint, "cmd");
  o->ctl_required = o->cmd_required = 1;
}

hil_replay_options default_options(void) {
  hil_replay_options o;
  options(&o);
  return o;
}

void load(hil_replay_schedule *s, const char *path, const hil_replay_select *sel) {
  char err[512];
  if (hil_replay_load(s, path, sel, err, sizeof err) != 0) {
    fail_msg("hil_replay_load: %s", err);
  }
}

double json_number(const char *body, const char *key) {
  char k[64];
  snprintf(k, sizeof k, "\"%s\":", key);
  const char *p = strstr(body, k);
  assert_non_null(p);
  return strtod(p + strlen(k), NULL);
}

double median_interval(void) {
  static double d[MAX_MSGS];
  for (int m = 1; m < rx->n; m++) {
    d[m - 1] = rx->at[m] - rx->at[m - 1];
  }
  qsort(d, (size_t)(rx->n - 1), sizeof *d, ts_cmp_double);
  return d[(rx->n - 1) / 2];
}

void request(void *req, const char *text, char *out, size_t out_sz) {
  assert_int_equal(zmq_send(req, text, strlen(text), 0), (int)strlen(text));
  const int n = zmq_recv(req, out, out_sz - 1, 0);
  if (n < 0) {
    fail_msg("no reply to %s within %d ms", text, RECV_TIMEOUT_MS);
  }
  assert_true(n < (int)out_sz - 1);
  out[n] = '\0';
}

void replay_thread_start(pthread_t *th, hil_replay *r) {
  assert_int_equal(pthread_create(th, NULL, run_thread, r), 0);
}

/* --- the serial side -------------------------------------------------------------------------- */

void board_send(board *b, const ach_message *m) {
  uint8_t frame[ACH_ENCODED_MAX(ACH_MAX_FRAME)];
  const int n = ach_encode(frame, sizeof frame, b->seq++, m);
  assert_true(n > 0);
  assert_int_equal(write(b->fd, frame, (size_t)n), n);
}

void board_hello(board *b, const char *name) {
  ach_message m = {.type = ACH_MSG_HELLO,
                   .u.hello = {.version_major = ACH_PROTOCOL_VERSION_MAJOR,
                               .rx_max_payload = ACH_MAX_PAYLOAD}};
  snprintf(m.u.hello.name, sizeof m.u.hello.name, "%s", name);
  const uint8_t zero = 0;
  assert_int_equal(write(b->fd, &zero, 1), 1);
  board_send(b, &m);
}

ach_message board_next(board *b) {
  const double until = ts_now() + RECV_TIMEOUT_MS / 1000.0;
  while (ts_now() < until) {
    struct pollfd p = {.fd = b->fd, .events = POLLIN, .revents = 0};
    poll(&p, 1, 100);
    uint8_t byte;
    while (read(b->fd, &byte, 1) == 1) {
      const ach_message *m = ach_decoder_feed(&b->dec, byte);
      if (m) {
        return *m;
      }
    }
  }
  fail_msg("no frame from the replay within %d ms", RECV_TIMEOUT_MS);
  ach_message none;
  memset(&none, 0, sizeof none);
  return none;
}

ach_hello_ack board_hello_acked(board *b, const char *name) {
  board_hello(b, name);
  ach_message ack = board_next(b);
  assert_int_equal(ack.type, ACH_MSG_HELLO_ACK);
  return ack.u.hello_ack;
}

float as_float(uint32_t raw) {
  float f;
  memcpy(&f, &raw, sizeof f);
  return f;
}

hil_replay *serial_replay_start(const hil_replay_schedule *s, hil_replay_options *o, board *b,
                                pthread_t *th) {
  o->output = HIL_REPLAY_SERIAL;
  o->serial.use_pty = 1;
  char err[512];
  hil_replay *r = hil_replay_new(s, o, err, sizeof err);
  if (!r) {
    fail_msg("hil_replay_new: %s", err);
  }
  b->fd = open(hil_replay_where(r), O_RDWR | O_NOCTTY | O_NONBLOCK);
  assert_true(b->fd >= 0);
  struct termios tio;
  tcgetattr(b->fd, &tio);
  cfmakeraw(&tio);
  tcsetattr(b->fd, TCSANOW, &tio);
  ach_decoder_init(&b->dec);
  replay_thread_start(th, r);
  return r;
}

/* --- fixtures --------------------------------------------------------------------------------- */

int replay_setup(void **state) {
  if (ts_tmp_setup_shm(state) != 0) {
    return -1;
  }
  make_sensors();
  rx = calloc(1, sizeof *rx);
  if (rx) {
    memset(rx, 1, sizeof *rx); /* touched now, not while receiving */
    rx->n = 0;
  }
  return rx ? 0 : -1;
}

int replay_teardown(void **state) {
  free_received();
  free(rx);
  return ts_tmp_teardown(state);
}
