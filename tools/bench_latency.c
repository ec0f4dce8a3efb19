/* tools/bench_latency.c: command-to-sensor latency of a running `achilles run`, over ZeroMQ
 * loopback and over a pseudo-terminal, measured from outside as a controller sees it.
 *
 * The simulator runs configs/latency_probe.json in real time: a torque motor whose force a
 * noise-free torque sensor (no latency, no filter) reads back. Each trial sends a new command
 * at a random phase of the physics period and waits for the first sample that carries exactly
 * that force. The target (issue 4): one physics period plus under 100 µs.
 */
#define _DEFAULT_SOURCE /* cfmakeraw, mkdtemp */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "achilles_client.h"

#define MAX_TRIALS 100000
#define TRIAL_TIMEOUT_S 0.2

typedef struct bench_args {
  const char *binary, *config;
  int trials;
  double rate_hz;
  const char *spin_us; /* passed to achilles run --spin-us */
  int rt;              /* both the simulator and this client with SCHED_FIFO */
} bench_args;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
  nanosleep(&ts, NULL);
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double quantile(const double *sorted, int n, double q) {
  return n ? sorted[(int)ceil(q * n) - 1] : NAN;
}

static void report(const char *name, double *lat, int n, int missed, double period) {
  qsort(lat, (size_t)n, sizeof *lat, compare_doubles);
  double target = period + 100e-6;
  int within = 0;
  while (within < n && lat[within] <= target) {
    within++;
  }
  printf("| %s | %d | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.1f %% |\n", name, n, missed,
         1e6 * quantile(lat, n, 0.5), 1e6 * quantile(lat, n, 0.9), 1e6 * quantile(lat, n, 0.99),
         1e6 * (n ? lat[n - 1] : NAN), 1e6 * target, n ? 100.0 * within / n : 0.0);
}

/* --- ZeroMQ ---------------------------------------------------------------------------------- */

/* The torque value of a sample message, or NAN: the probe's JSON has "values":{"torque":X}. */
static double torque_of(const char *json) {
  const char *v = strstr(json, "\"torque\":");
  return v ? strtod(v + 9, NULL) : NAN;
}

static int zmq_trials(const bench_args *a, double *lat, int *missed) {
  void *ctx = zmq_ctx_new(), *sub = zmq_socket(ctx, ZMQ_SUB), *push = zmq_socket(ctx, ZMQ_PUSH);
  int zero = 0, n = 0;
  zmq_setsockopt(sub, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(push, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "trq/probe", 9);
  if (zmq_connect(sub, "tcp://127.0.0.1:5565") || zmq_connect(push, "tcp://127.0.0.1:5566")) {
    fprintf(stderr, "bench_latency: zmq connect: %s\n", zmq_strerror(zmq_errno()));
    return -1;
  }
  sleep_s(0.3); /* past the slow-joiner window */
  char buf[4096], cmd[128];
  for (int k = 0; k < a->trials; k++) {
    double value = (k % 2) ? 0.5 : -0.5;
    sleep_s((double)rand() / RAND_MAX / a->rate_hz); /* a random phase of the period */
    snprintf(cmd, sizeof cmd, "{\"v\":1,\"commands\":{\"motor\":%g}}", value);
    double t0 = now_s(), t1 = -1;
    zmq_send(push, cmd, strlen(cmd), 0);
    while (now_s() - t0 < TRIAL_TIMEOUT_S) {
      zmq_pollitem_t item = {sub, 0, ZMQ_POLLIN, 0};
      if (zmq_poll(&item, 1, 10) <= 0) {
        continue;
      }
      zmq_recv(sub, buf, sizeof buf - 1, 0); /* topic */
      int len = zmq_recv(sub, buf, sizeof buf - 1, 0);
      buf[len < 0 ? 0 : (len < (int)sizeof buf ? len : (int)sizeof buf - 1)] = '\0';
      if (torque_of(buf) == value) {
        t1 = now_s();
        break;
      }
    }
    if (t1 < 0) {
      (*missed)++;
    } else {
      lat[n++] = t1 - t0;
    }
  }
  zmq_close(sub);
  zmq_close(push);
  zmq_ctx_term(ctx);
  return n;
}

/* --- serial over the pty ----------------------------------------------------------------------- */

static int open_pty(const char *path) {
  int fd = open(path, O_RDWR | O_NOCTTY);
  if (fd < 0) {
    return -1;
  }
  struct termios tio;
  tcgetattr(fd, &tio);
  cfmakeraw(&tio);
  tcsetattr(fd, TCSANOW, &tio);
  tcflush(fd, TCIOFLUSH);
  return fd;
}

/* Feeds bytes until a message of `type` arrives or the deadline passes. */
static const ach_message *read_message(int fd, ach_decoder *dec, int type, double deadline) {
  uint8_t byte;
  while (now_s() < deadline) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 5) <= 0 || read(fd, &byte, 1) != 1) {
      continue;
    }
    const ach_message *m = ach_decoder_feed(dec, byte);
    if (m && m->type == type) {
      return m;
    }
  }
  return NULL;
}

static int send_frame(int fd, const uint8_t *frame, int len) {
  return len > 0 && write(fd, frame, (size_t)len) == len ? 0 : -1;
}

static int serial_hello(int fd, ach_decoder *dec, uint16_t *seq) {
  uint8_t tx[ACH_ENCODED_MAX(ACH_MAX_FRAME)], delimiter = 0;
  ach_hello hello = {ACH_PROTOCOL_VERSION_MAJOR, ACH_PROTOCOL_VERSION_MINOR, 0, ACH_MAX_PAYLOAD,
                     "bench"};
  if (write(fd, &delimiter, 1) != 1 ||
      send_frame(fd, tx, ach_encode_hello(tx, sizeof tx, (*seq)++, &hello))) {
    return -1;
  }
  return read_message(fd, dec, ACH_MSG_HELLO_ACK, now_s() + 2.0) ? 0 : -1;
}

static int serial_trials(const bench_args *a, const char *link, double *lat, int *missed) {
  int fd = open_pty(link), n = 0;
  static ach_decoder dec;
  uint16_t seq = 0;
  ach_decoder_init(&dec);
  if (fd < 0 || serial_hello(fd, &dec, &seq)) {
    fprintf(stderr, "bench_latency: no HELLO_ACK on %s\n", link);
    return -1;
  }
  uint8_t tx[ACH_ENCODED_MAX(ACH_MAX_FRAME)];
  for (int k = 0; k < a->trials; k++) {
    float value = (k % 2) ? 0.25f : -0.25f;
    ach_motor_command mc = {0, 1, {{0, ACH_MODE_TORQUE, value}}};
    sleep_s((double)rand() / RAND_MAX / a->rate_hz);
    tcflush(fd, TCIFLUSH); /* only samples taken after the command count */
    ach_decoder_init(&dec);
    double t0 = now_s(), t1 = -1;
    send_frame(fd, tx, ach_encode_motor_command(tx, sizeof tx, seq++, &mc));
    while (t1 < 0 && now_s() - t0 < TRIAL_TIMEOUT_S) {
      const ach_message *m = read_message(fd, &dec, ACH_MSG_SENSOR_SAMPLES, t0 + TRIAL_TIMEOUT_S);
      for (int i = 0; m && i < m->u.sensor_samples.count; i++) {
        const ach_sample *s = &m->u.sensor_samples.samples[i];
        if (s->sensor_id == 0 && s->kind == ACH_KIND_VALUE && s->v.value == value) {
          t1 = now_s();
        }
      }
    }
    if (t1 < 0) {
      (*missed)++;
    } else {
      lat[n++] = t1 - t0;
    }
  }
  close(fd);
  return n;
}

/* --- the simulator process ------------------------------------------------------------------ */

static pid_t start_simulator(const bench_args *a, const char *link) {
  char rate[32];
  snprintf(rate, sizeof rate, "%g", a->rate_hz);
  pid_t pid = fork();
  if (pid == 0) {
    execl(a->binary, a->binary, "run", a->config, "--rate", rate, "--serial", "pty",
          "--pty-link", link, "--quiet", "--spin-us", a->spin_us, a->rt ? "--rt" : "--quiet",
          (char *)NULL);
    fprintf(stderr, "bench_latency: cannot run %s: %s\n", a->binary, strerror(errno));
    _exit(127);
  }
  for (double t0 = now_s(); now_s() - t0 < 5.0; sleep_s(0.01)) {
    struct stat st;
    if (stat(link, &st) == 0) {
      return pid;
    }
  }
  kill(pid, SIGTERM);
  waitpid(pid, NULL, 0);
  return -1;
}

static void usage(FILE *out) {
  fprintf(out, "usage: bench_latency [--binary PATH] [--config PATH] [--trials N] [--rate HZ]\n"
               "                     [--spin-us US] [--rt]\n\n"
               "Starts `achilles run` on the latency probe robot in real time and measures, as a\n"
               "controller sees it, the time from sending a motor command to receiving the first\n"
               "sensor sample that reflects it: over ZeroMQ (tcp loopback) and over the serial\n"
               "protocol on a pseudo-terminal. Prints p50/p99/max and the target, one physics\n"
               "period + 100 us. Defaults: build/tools/achilles, configs/latency_probe.json,\n"
               "500 trials, 1000 Hz, --spin-us 0 (passed to achilles run). --rt runs the\n"
               "simulator with --rt and this client with SCHED_FIFO 70. Run from the\n"
               "repository root.\n");
}

int main(int argc, char **argv) {
  bench_args a = {"build/tools/achilles", "configs/latency_probe.json", 500, 1000, "0", 0};
  static const struct option options[] = {{"binary", required_argument, NULL, 'b'},
                                          {"config", required_argument, NULL, 'c'},
                                          {"trials", required_argument, NULL, 'n'},
                                          {"rate", required_argument, NULL, 'r'},
                                          {"spin-us", required_argument, NULL, 's'},
                                          {"rt", no_argument, NULL, 'R'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  for (int opt; (opt = getopt_long(argc, argv, "h", options, NULL)) != -1;) {
    switch (opt) {
    case 'b': a.binary = optarg; break;
    case 'c': a.config = optarg; break;
    case 'n': a.trials = atoi(optarg); break;
    case 'r': a.rate_hz = atof(optarg); break;
    case 's': a.spin_us = optarg; break;
    case 'R': a.rt = 1; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (a.trials < 1 || a.trials > MAX_TRIALS || !(a.rate_hz > 0)) {
    fprintf(stderr, "bench_latency: --trials must be 1..%d and --rate > 0\n", MAX_TRIALS);
    return 2;
  }
  if (a.rt) { /* the client too: a controller that wakes late measures its own lateness */
    struct sched_param param = {.sched_priority = 70};
    if (sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
      fprintf(stderr, "bench_latency: --rt: SCHED_FIFO refused (%s)\n", strerror(errno));
    }
  }
  char dir[] = "/tmp/achilles-latency-XXXXXX", link[64];
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  snprintf(link, sizeof link, "%s/pty", dir);
  pid_t sim = start_simulator(&a, link);
  if (sim < 0) {
    fprintf(stderr, "bench_latency: the simulator did not create %s\n", link);
    return 1;
  }
  double *lat = malloc((size_t)a.trials * sizeof *lat);
  int missed = 0, n;
  srand(1);
  printf("# command-to-sensor latency, %d trials each, physics at %g Hz (period %.0f us), "
         "spin %s us, %s\n\n", a.trials, a.rate_hz, 1e6 / a.rate_hz, a.spin_us,
         a.rt ? "SCHED_FIFO" : "normal priority");
  printf("| transport | trials | missed | p50 us | p90 us | p99 us | max us | target us "
         "| within target |\n");
  printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  n = zmq_trials(&a, lat, &missed);
  report("ZeroMQ tcp loopback", lat, n < 0 ? 0 : n, missed, 1.0 / a.rate_hz);
  missed = 0;
  n = serial_trials(&a, link, lat, &missed);
  report("serial over pty", lat, n < 0 ? 0 : n, missed, 1.0 / a.rate_hz);
  kill(sim, SIGINT);
  waitpid(sim, NULL, 0);
  rmdir(dir);
  free(lat);
  return 0;
}
