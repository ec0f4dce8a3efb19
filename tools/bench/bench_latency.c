/* tools/bench/bench_latency.c: command-to-sensor latency of a running `achilles run`, over ZeroMQ
 * loopback and over a pseudo-terminal, measured from outside as a controller sees it.
 *
 * The simulator runs configs/latency_probe.json in real time: a torque motor whose force a
 * noise-free torque sensor (no latency, no filter) reads back. Each trial sends a new command
 * at a random phase of the physics period and waits for the first sample that carries exactly
 * that force. The target (issue 4): one physics period plus under 100 µs.
 *
 * A command that arrives at a random phase waits up to one period for the next tick: that wait is
 * the design, the rest is overhead. The simulator's status gives `deadline_offset_s` (when each
 * tick was due on this host's monotonic clock), so every trial is split into the wait for the
 * tick that applied the command and the time from that tick's deadline to the sample in the
 * client's hands: wake-up lateness, the step, encoding, the transport and the client's own wake.
 */
#define _GNU_SOURCE /* cfmakeraw, mkdtemp, sched_setaffinity */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
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

#include <cjson/cJSON.h>

#include "achilles_client.h"
#include "hil/runtime/cpu.h"

#define MAX_TRIALS 100000
#define TRIAL_TIMEOUT_S 0.2

typedef struct bench_args {
  const char *binary, *config, *reference;
  int trials, rounds;
  double rate_hz;
  const char *spin_us; /* passed to achilles run --spin-us */
  int rt;              /* both the simulator and this client with SCHED_FIFO */
  int cpu;             /* >= 0: everything on this CPU, kept awake (implies rt) */
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

/* One trial: when the command left, when its sample arrived (monotonic s), and where the tick
 * that applied it was due. */
typedef struct trial {
  double sent, received, deadline;
} trial;

typedef struct trials {
  trial *t;
  int n, missed;
  double late_p50, late_p99; /* the simulator's own wake-up lateness over the last second */
} trials;

static void sort_print(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, compare_doubles);
  printf(" %.0f | %.0f | %.0f | %.0f |", 1e6 * quantile(v, n, 0.5), 1e6 * quantile(v, n, 0.9),
         1e6 * quantile(v, n, 0.99), 1e6 * (n ? v[n - 1] : NAN));
}

/* The time after the applying tick's deadline of each trial, sorted, into out[tr->n]; returns
 * how many. A trial whose wait falls outside [0, period] was not lined up (ticks skipped
 * between the sample and the status query) and is left out. */
static int after_deadline(const trials *tr, double period, double *out) {
  int n = 0;
  for (int i = 0; i < tr->n; i++) {
    const trial *t = &tr->t[i];
    double wait = t->deadline - t->sent;
    if (wait > -period && wait <= period + 1e-6) {
      out[n++] = t->received - fmax(t->sent, t->deadline);
    }
  }
  qsort(out, (size_t)n, sizeof *out, compare_doubles);
  return n;
}

/* Total latency, then the part after the applying tick's deadline. */
static void report(const char *name, const trials *tr, double period) {
  double *total = malloc((size_t)(tr->n + 1) * sizeof *total);
  double *after = malloc((size_t)(tr->n + 1) * sizeof *after);
  int within = 0;
  for (int i = 0; i < tr->n; i++) {
    total[i] = tr->t[i].received - tr->t[i].sent;
    within += total[i] <= period + 100e-6;
  }
  printf("| %s | %d | %d |", name, tr->n, tr->missed);
  sort_print(total, tr->n);
  printf(" %.1f %% |", tr->n ? 100.0 * within / tr->n : 0.0);
  sort_print(after, after_deadline(tr, period, after));
  printf(" %.0f / %.0f |\n", 1e6 * tr->late_p50, 1e6 * tr->late_p99);
  free(total);
  free(after);
}

/* --- the simulator's clock -------------------------------------------------------------------- */

typedef struct control {
  void *req;
} control;

/* Asks the control socket for status; fills the deadline offset and the lateness figures. */
static int query_status(control *c, double *offset, double *late_p50, double *late_p99) {
  char buf[4096];
  static const char request[] = "{\"cmd\":\"status\"}";
  if (zmq_send(c->req, request, sizeof request - 1, 0) < 0) {
    return -1;
  }
  int len = zmq_recv(c->req, buf, sizeof buf - 1, 0);
  if (len < 0) {
    return -1;
  }
  buf[len < (int)sizeof buf ? len : (int)sizeof buf - 1] = '\0';
  cJSON *root = cJSON_Parse(buf);
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(root, "status");
  const cJSON *off = cJSON_GetObjectItemCaseSensitive(st, "deadline_offset_s");
  const cJSON *late = cJSON_GetObjectItemCaseSensitive(st, "late_s");
  int ok = cJSON_IsNumber(off);
  if (ok) {
    *offset = off->valuedouble;
    if (late_p50 && late_p99) {
      *late_p50 = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(late, "p50"));
      *late_p99 = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(late, "p99"));
    }
  }
  cJSON_Delete(root);
  return ok ? 0 : -1;
}

/* Files a finished trial: the sample stamped t_sample came from the tick that stepped from
 * t_sample - period, due at that time plus the offset the simulator reports now. */
static void record(trials *tr, control *c, double sent, double received, double t_sample,
                   double period) {
  double offset = NAN;
  if (received < 0) {
    tr->missed++;
    return;
  }
  query_status(c, &offset, NULL, NULL);
  tr->t[tr->n++] = (trial){sent, received, t_sample - period + offset};
}

/* --- ZeroMQ ---------------------------------------------------------------------------------- */

/* A number field of a sample message, or NAN: the probe's JSON has "t":T and
 * "values":{"torque":X}. */
static double field_of(const char *json, const char *key) {
  const char *v = strstr(json, key);
  return v ? strtod(v + strlen(key), NULL) : NAN;
}

static int zmq_trials(const bench_args *a, int count, void *ctx, control *c, trials *tr) {
  void *sub = zmq_socket(ctx, ZMQ_SUB), *push = zmq_socket(ctx, ZMQ_PUSH);
  int zero = 0;
  zmq_setsockopt(sub, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(push, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "trq/probe", 9);
  if (zmq_connect(sub, "tcp://127.0.0.1:5565") || zmq_connect(push, "tcp://127.0.0.1:5566")) {
    fprintf(stderr, "bench_latency: zmq connect: %s\n", zmq_strerror(zmq_errno()));
    return -1;
  }
  sleep_s(0.3); /* past the slow-joiner window */
  char buf[4096], cmd[128];
  for (int k = 0; k < count; k++) {
    double value = (k % 2) ? 0.5 : -0.5, t_sample = NAN;
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
      if (field_of(buf, "\"torque\":") == value) {
        t1 = now_s();
        t_sample = field_of(buf, "\"t\":");
        break;
      }
    }
    record(tr, c, t0, t1, t_sample, 1.0 / a->rate_hz);
  }
  query_status(c, &(double){0}, &tr->late_p50, &tr->late_p99);
  zmq_close(sub);
  zmq_close(push);
  return 0;
}

/* --- serial over the pty ------------------------------------------------------------------- */

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

/* The client's end of the pty: reads what is there in one call (byte-at-a-time reads would
 * add a system call per byte to every figure), decodes from the buffer. */
typedef struct pty_reader {
  int fd;
  ach_decoder dec;
  uint8_t buf[512];
  int pos, len;
} pty_reader;

/* Forgets everything received so far: only what comes after counts. */
static void reader_reset(pty_reader *r) {
  tcflush(r->fd, TCIFLUSH);
  ach_decoder_init(&r->dec);
  r->pos = r->len = 0;
}

/* Decodes until a message of `type` arrives or the deadline passes. */
static const ach_message *read_message(pty_reader *r, int type, double deadline) {
  for (;;) {
    while (r->pos < r->len) {
      const ach_message *m = ach_decoder_feed(&r->dec, r->buf[r->pos++]);
      if (m && m->type == type) {
        return m;
      }
    }
    if (now_s() >= deadline) {
      return NULL;
    }
    struct pollfd p = {r->fd, POLLIN, 0};
    long n = poll(&p, 1, 5) > 0 ? read(r->fd, r->buf, sizeof r->buf) : 0;
    r->pos = 0;
    r->len = n > 0 ? (int)n : 0;
  }
}

static int send_frame(int fd, const uint8_t *frame, int len) {
  return len > 0 && write(fd, frame, (size_t)len) == len ? 0 : -1;
}

static int serial_hello(pty_reader *r, uint16_t *seq) {
  uint8_t tx[ACH_ENCODED_MAX(ACH_MAX_FRAME)], delimiter = 0;
  ach_hello hello = {ACH_PROTOCOL_VERSION_MAJOR, ACH_PROTOCOL_VERSION_MINOR, 0, ACH_MAX_PAYLOAD,
                     "bench"};
  if (write(r->fd, &delimiter, 1) != 1 ||
      send_frame(r->fd, tx, ach_encode_hello(tx, sizeof tx, (*seq)++, &hello))) {
    return -1;
  }
  return read_message(r, ACH_MSG_HELLO_ACK, now_s() + 2.0) ? 0 : -1;
}

static int serial_trials(const bench_args *a, int count, const char *link, control *c,
                         trials *tr) {
  static pty_reader r;
  r.fd = open_pty(link);
  uint16_t seq = 0;
  ach_decoder_init(&r.dec);
  r.pos = r.len = 0;
  if (r.fd < 0 || serial_hello(&r, &seq)) {
    fprintf(stderr, "bench_latency: no HELLO_ACK on %s\n", link);
    return -1;
  }
  uint8_t tx[ACH_ENCODED_MAX(ACH_MAX_FRAME)];
  for (int k = 0; k < count; k++) {
    float value = (k % 2) ? 0.25f : -0.25f;
    ach_motor_command mc = {0, 1, {{0, ACH_MODE_TORQUE, value}}};
    sleep_s((double)rand() / RAND_MAX / a->rate_hz);
    reader_reset(&r); /* only samples taken after the command count */
    double t0 = now_s(), t1 = -1, t_sample = NAN;
    send_frame(r.fd, tx, ach_encode_motor_command(tx, sizeof tx, seq++, &mc));
    while (t1 < 0 && now_s() - t0 < TRIAL_TIMEOUT_S) {
      const ach_message *m = read_message(&r, ACH_MSG_SENSOR_SAMPLES, t0 + TRIAL_TIMEOUT_S);
      for (int i = 0; m && i < m->u.sensor_samples.count; i++) {
        const ach_sample *s = &m->u.sensor_samples.samples[i];
        if (s->sensor_id == 0 && s->kind == ACH_KIND_VALUE && s->v.value == value) {
          t1 = now_s();
          t_sample = 1e-9 * (double)m->u.sensor_samples.sim_time_ns;
        }
      }
    }
    record(tr, c, t0, t1, t_sample, 1.0 / a->rate_hz);
  }
  query_status(c, &(double){0}, &tr->late_p50, &tr->late_p99);
  close(r.fd);
  return 0;
}

/* --- the simulator process ------------------------------------------------------------------ */

/* Starts `achilles run` (reference = 0) or the do-nothing responder (reference = 1) and waits
 * for its pty link. */
static pid_t start_responder(const bench_args *a, int reference, const char *link) {
  char rate[32];
  snprintf(rate, sizeof rate, "%g", a->rate_hz);
  unlink(link);
  char cpu[16];
  snprintf(cpu, sizeof cpu, "%d", a->cpu);
  const char *argv[24];
  int n = 0;
  if (reference) {
    argv[n++] = a->reference;
  } else {
    const char *run[] = {a->binary, "run", a->config, "--serial", "pty", "--quiet",
                         "--spin-us", a->spin_us};
    memcpy(argv, run, sizeof run);
    n = (int)(sizeof run / sizeof *run);
  }
  const char *common[] = {"--pty-link", link, "--rate", rate};
  memcpy(argv + n, common, sizeof common);
  n += (int)(sizeof common / sizeof *common);
  if (a->rt) {
    argv[n++] = "--rt";
  }
  if (a->cpu >= 0) {
    argv[n++] = "--cpu", argv[n++] = cpu, argv[n++] = "--keep-awake";
  }
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid == 0) {
    execv(argv[0], (char *const *)argv);
    fprintf(stderr, "bench_latency: cannot run %s: %s\n", reference ? a->reference : a->binary,
            strerror(errno));
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

/* One round against one responder: ZeroMQ trials, then serial trials. */
static int measure(const bench_args *a, int reference, const char *link, int count,
                   trials *zmq_tr, trials *serial_tr) {
  pid_t pid = start_responder(a, reference, link);
  if (pid < 0) {
    fprintf(stderr, "bench_latency: %s did not create %s\n",
            reference ? a->reference : a->binary, link);
    return -1;
  }
  void *ctx = zmq_ctx_new();
  hil_cpu_place_zmq_io(ctx, a->cpu, a->rt ? 70 : 0); /* its own I/O thread beside the client */
  control c = {zmq_socket(ctx, ZMQ_REQ)};
  int zero = 0, timeout_ms = 2000;
  zmq_setsockopt(c.req, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(c.req, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
  zmq_connect(c.req, "tcp://127.0.0.1:5567");
  int status =
      zmq_trials(a, count, ctx, &c, zmq_tr) || serial_trials(a, count, link, &c, serial_tr);
  zmq_close(c.req);
  zmq_ctx_term(ctx);
  kill(pid, SIGINT);
  waitpid(pid, NULL, 0);
  return status ? -1 : 0;
}

/* One line of achilles/reference ratios of the time after the deadline. */
static void print_ratios(const char *name, const trials *ours, const trials *ref, double period) {
  double *a = malloc((size_t)(ours->n + 1) * sizeof *a);
  double *b = malloc((size_t)(ref->n + 1) * sizeof *b);
  const int na = after_deadline(ours, period, a), nb = after_deadline(ref, period, b);
  printf("%s, achilles/reference after the deadline: p50 %.2f, p90 %.2f, p99 %.2f\n", name,
         quantile(a, na, 0.5) / quantile(b, nb, 0.5), quantile(a, na, 0.9) / quantile(b, nb, 0.9),
         quantile(a, na, 0.99) / quantile(b, nb, 0.99));
  free(a);
  free(b);
}

static void usage(FILE *out) {
  fprintf(out, "usage: bench_latency [--binary PATH] [--reference PATH] [--config PATH]\n"
               "                     [--trials N] [--rounds N] [--rate HZ] [--spin-us US] [--rt]\n"
               "                     [--cpu N]\n\n"
               "Measures, as a controller sees it, the time from sending a motor command to\n"
               "holding the first sensor sample that reflects it, over ZeroMQ (tcp loopback) and\n"
               "over the serial protocol on a pseudo-terminal: against `achilles run` on the\n"
               "latency probe robot in real time, and in alternating rounds against\n"
               "latency_reference, a responder that does nothing but sleep to each deadline, read\n"
               "and publish (the floor this machine sets). Each trial is split into the wait for\n"
               "the tick that applied the command (up to one period by design) and the time after\n"
               "that tick's deadline. Prints p50/p90/p99/max, the share within the target (one\n"
               "physics period + 100 us) and achilles/reference ratios.\n\n"
               "Defaults: achilles and latency_reference beside this program,\n"
               "configs/latency_probe.json of the source tree, 1500 trials per responder and\n"
               "transport in 5 rounds,\n"
               "1000 Hz, --spin-us 0 (passed to achilles run). --rt runs both responders with\n"
               "--rt and this client with SCHED_FIFO 70. --cpu N (implies --rt) puts everything\n"
               "on CPU N: the responders with --rt --cpu N --keep-awake, this client and its\n"
               "ZeroMQ I/O thread pinned there (docs/runtime.md, \"Sharp timing\"). Uses ports\n"
               "5565-5567.\n");
}

/* out = the directory of this program + "/" + name (name alone if that cannot be read). */
static void beside_this_program(char *out, size_t out_sz, const char *name) {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  char *slash = n > 0 ? (self[n] = '\0', strrchr(self, '/')) : NULL;
  if (!slash) {
    snprintf(out, out_sz, "%s", name);
    return;
  }
  *slash = '\0';
  snprintf(out, out_sz, "%s/%s", self, name);
}

int main(int argc, char **argv) {
  static char achilles[PATH_MAX + 16], reference[PATH_MAX + 32];
  beside_this_program(achilles, sizeof achilles, "achilles");
  beside_this_program(reference, sizeof reference, "latency_reference");
  bench_args a = {achilles, ACHILLES_SOURCE_DIR "/configs/latency_probe.json", reference, 1500,
                  5, 1000, "0", 0, -1};
  static const struct option options[] = {{"binary", required_argument, NULL, 'b'},
                                          {"reference", required_argument, NULL, 'f'},
                                          {"config", required_argument, NULL, 'c'},
                                          {"trials", required_argument, NULL, 'n'},
                                          {"rounds", required_argument, NULL, 'k'},
                                          {"rate", required_argument, NULL, 'r'},
                                          {"spin-us", required_argument, NULL, 's'},
                                          {"rt", no_argument, NULL, 'R'},
                                          {"cpu", required_argument, NULL, 'u'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  for (int opt; (opt = getopt_long(argc, argv, "h", options, NULL)) != -1;) {
    switch (opt) {
    case 'b': a.binary = optarg; break;
    case 'f': a.reference = optarg; break;
    case 'c': a.config = optarg; break;
    case 'n': a.trials = atoi(optarg); break;
    case 'k': a.rounds = atoi(optarg); break;
    case 'r': a.rate_hz = atof(optarg); break;
    case 's': a.spin_us = optarg; break;
    case 'R': a.rt = 1; break;
    case 'u': a.cpu = atoi(optarg), a.rt = 1; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (a.trials < 1 || a.trials > MAX_TRIALS || a.rounds < 1 || a.rounds > a.trials ||
      !(a.rate_hz > 0)) {
    fprintf(stderr, "bench_latency: --trials must be 1..%d, --rounds 1..trials, --rate > 0\n",
            MAX_TRIALS);
    return 2;
  }
  if (a.rt) { /* the client too: a controller that wakes late measures its own lateness */
    struct sched_param param = {.sched_priority = 70};
    if (sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
      fprintf(stderr, "bench_latency: --rt: SCHED_FIFO refused (%s)\n", strerror(errno));
    }
  }
  if (a.cpu >= 0) { /* the responders pin themselves; the client joins them */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(a.cpu, &one);
    if (!hil_cpu_allowed(a.cpu) || sched_setaffinity(0, sizeof one, &one) != 0) {
      fprintf(stderr, "bench_latency: --cpu %d: not available\n", a.cpu);
      return 2;
    }
  }
  char dir[] = "/tmp/achilles-latency-XXXXXX", link[64];
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  snprintf(link, sizeof link, "%s/pty", dir);
  /* [responder][transport]: 0 achilles, 1 reference; 0 ZeroMQ, 1 serial */
  trials tr[2][2];
  for (int i = 0; i < 4; i++) {
    tr[i / 2][i % 2] = (trials){malloc((size_t)a.trials * sizeof(trial)), 0, 0, NAN, NAN};
  }
  srand(1);
  int failed = 0;
  for (int round = 0; round < a.rounds && !failed; round++) {
    int count = a.trials / a.rounds + (round < a.trials % a.rounds);
    for (int who = 0; who < 2 && !failed; who++) {
      fprintf(stderr, "bench_latency: round %d/%d, %s\n", round + 1, a.rounds,
              who ? "reference" : "achilles run");
      failed = measure(&a, who, link, count, &tr[who][0], &tr[who][1]) != 0;
    }
  }
  rmdir(dir);
  double period = 1.0 / a.rate_hz;
  printf("# command-to-sensor latency, %d trials per row in %d rounds, physics at %g Hz "
         "(period %.0f us), spin %s us, %s\n\n", a.trials, a.rounds, a.rate_hz, 1e6 * period,
         a.spin_us, a.rt ? "SCHED_FIFO" : "normal priority");
  printf("total: from sending a command to holding the first sample that reflects it; target one "
         "period + 100 us = %.0f us.\nafter deadline: from the deadline of the tick that applied "
         "the command (or from sending, if later) to holding the sample.\nlate: the responder's "
         "own wake-up lateness over its last second (last round).\n\n", 1e6 * period + 100);
  printf("| responder | transport | trials | missed | total p50 | p90 | p99 | max | within target "
         "| after deadline p50 | p90 | p99 | max | late p50 / p99 |\n");
  printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  static const char *const who_name[2] = {"achilles run", "reference"};
  static const char *const transport_name[2] = {"ZeroMQ tcp loopback", "serial over pty"};
  for (int t = 0; t < 2; t++) {
    for (int who = 0; who < 2; who++) {
      printf("| %s ", who_name[who]);
      report(transport_name[t], &tr[who][t], period);
    }
  }
  printf("\n");
  for (int t = 0; t < 2; t++) {
    print_ratios(transport_name[t], &tr[0][t], &tr[1][t], period);
  }
  for (int i = 0; i < 4; i++) {
    failed |= tr[i / 2][i % 2].n == 0; /* a responder that never answered is a failure */
    free(tr[i / 2][i % 2].t);
  }
  return failed;
}
