/* tools/bench/latency_reference.c: the least a simulator could do, for tools/bench_latency to
 * measure beside `achilles run`.
 *
 * It speaks just enough of the latency probe's interface (configs/latency_probe.json) to answer
 * the benchmark: it takes commands as they arrive and at absolute 1/rate deadlines on the
 * monotonic clock publishes one torque sample carrying the last one, over ZeroMQ (PUB, PULL, REP
 * status with deadline_offset_s) and over the serial protocol on a pseudo-terminal it creates.
 * It waits the way `achilles run` does (ppoll on its inputs until the deadline). No physics, no
 * validation, no JSON parsing worth the name: what is left is the cost of this machine's
 * sleeps, wake-ups, sockets and pty, which no simulator built on them can go below.
 */
#define _GNU_SOURCE /* posix_openpt, ptsname_r, cfmakeraw, sched_setaffinity */
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
#include <sys/mman.h>
#include <sys/prctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "achilles_client.h"
#include "hil/runtime/cpu.h"

#define LATE_WINDOW 1000 /* ticks of lateness kept for the status reply */

typedef struct responder {
  void *pub, *pull, *rep;
  int pty;                  /* master side, or -1 */
  ach_decoder dec;
  uint16_t tx_seq;
  int connected;            /* a board said HELLO on the pty */
  double period, next;      /* s; next deadline, monotonic s */
  uint64_t tick;            /* the next tick steps from sim time tick·period */
  double zmq_torque, serial_torque;
  double late[LATE_WINDOW];
  int nlate;
} responder;

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
  (void)sig;
  stop = 1;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* --- ZeroMQ ------------------------------------------------------------------------------ */

static void drain_commands(responder *r) {
  char buf[1024];
  int len;
  while ((len = zmq_recv(r->pull, buf, sizeof buf - 1, ZMQ_DONTWAIT)) >= 0) {
    buf[len < (int)sizeof buf ? len : (int)sizeof buf - 1] = '\0';
    const char *v = strstr(buf, "\"motor\":");
    if (v) {
      r->zmq_torque = strtod(v + 8, NULL);
    }
  }
}

static void answer_control(responder *r) {
  char buf[512];
  if (zmq_recv(r->rep, buf, sizeof buf, ZMQ_DONTWAIT) < 0) {
    return;
  }
  double sorted[LATE_WINDOW];
  int n = r->nlate < LATE_WINDOW ? r->nlate : LATE_WINDOW;
  memcpy(sorted, r->late, (size_t)n * sizeof *sorted);
  qsort(sorted, (size_t)n, sizeof *sorted, compare_doubles);
  double p50 = n ? sorted[n / 2] : 0, p99 = n ? sorted[(int)ceil(0.99 * n) - 1] : 0;
  int len = snprintf(buf, sizeof buf,
                     "{\"ok\":true,\"status\":{\"t\":%.9g,\"deadline_offset_s\":%.17g,"
                     "\"late_s\":{\"p50\":%.9g,\"p99\":%.9g}}}",
                     (double)r->tick * r->period, r->next - (double)r->tick * r->period, p50, p99);
  zmq_send(r->rep, buf, (size_t)len, 0);
}

static void publish_zmq(responder *r, double t) {
  char buf[256];
  int len = snprintf(buf, sizeof buf,
                     "{\"v\":1,\"sensor\":\"probe\",\"t\":%.17g,\"values\":{\"torque\":%.17g}}", t,
                     r->zmq_torque);
  zmq_send(r->pub, "trq/probe", 9, ZMQ_SNDMORE | ZMQ_DONTWAIT);
  zmq_send(r->pub, buf, (size_t)len, ZMQ_DONTWAIT);
}

/* --- serial over the pty -------------------------------------------------------------------- */

static int open_pty(const char *link) {
  int fd = posix_openpt(O_RDWR | O_NOCTTY);
  char path[128];
  if (fd < 0 || grantpt(fd) || unlockpt(fd) || ptsname_r(fd, path, sizeof path)) {
    return -1;
  }
  int slave = open(path, O_RDWR | O_NOCTTY); /* raw mode is a property of the slave */
  struct termios tio;
  if (slave < 0 || tcgetattr(slave, &tio)) {
    return -1;
  }
  cfmakeraw(&tio);
  tcsetattr(slave, TCSANOW, &tio);
  close(slave);
  fcntl(fd, F_SETFL, O_NONBLOCK);
  unlink(link);
  return symlink(path, link) == 0 ? fd : -1;
}

static void send_frame(responder *r, const uint8_t *frame, int n) {
  if (n > 0 && write(r->pty, frame, (size_t)n) != n) {
    r->connected = 0; /* the benchmark reads everything; a short write means it left */
  }
}

static void on_serial_message(responder *r, const ach_message *m) {
  uint8_t frame[ACH_ENCODED_MAX(ACH_MAX_FRAME)];
  if (m->type == ACH_MSG_HELLO) {
    ach_hello_ack ack = {ACH_PROTOCOL_VERSION_MAJOR, ACH_PROTOCOL_VERSION_MINOR, ACH_HELLO_OK, 1,
                         1, (uint32_t)lround(1.0 / r->period),
                         (uint64_t)llround(1e9 * (double)r->tick * r->period), ACH_MAX_PAYLOAD,
                         ACH_MAX_JOINTS};
    send_frame(r, frame, ach_encode_hello_ack(frame, sizeof frame, r->tx_seq++, &ack));
    r->connected = 1;
  } else if (m->type == ACH_MSG_MOTOR_COMMAND && m->u.motor_command.count > 0) {
    r->serial_torque = m->u.motor_command.joints[0].value;
  }
}

static void drain_pty(responder *r) {
  uint8_t buf[256];
  long n;
  while (r->pty >= 0 && (n = read(r->pty, buf, sizeof buf)) > 0) {
    for (long i = 0; i < n; i++) {
      const ach_message *m = ach_decoder_feed(&r->dec, buf[i]);
      if (m) {
        on_serial_message(r, m);
      }
    }
  }
}

static void publish_serial(responder *r, double t) {
  if (!r->connected) {
    return;
  }
  ach_sensor_samples s = {(uint64_t)llround(1e9 * t), 1, {{0}}};
  s.samples[0].kind = ACH_KIND_VALUE;
  s.samples[0].sample_seq = (uint32_t)r->tick;
  s.samples[0].v.value = (float)r->serial_torque;
  uint8_t frame[ACH_ENCODED_MAX(ACH_MAX_FRAME)];
  send_frame(r, frame, ach_encode_sensor_samples(frame, sizeof frame, r->tx_seq++, &s));
}

/* --- the loop ---------------------------------------------------------------------------- */

static void drain_all(responder *r) {
  drain_commands(r);
  drain_pty(r);
  answer_control(r);
}

/* Waits for the deadline taking input as it arrives, as `achilles run` does (hil/loop.c), so
 * that at the deadline only publishing is left. Returns whether input is waiting now. */
static int wait_deadline(responder *r, struct pollfd *fds, int nfds) {
  for (int i = 0; i < nfds; i++) {
    fds[i].fd = fds[i].fd < 0 ? ~fds[i].fd : fds[i].fd; /* watch every input again */
  }
  for (int early = 0; !stop;) {
    double left = r->next - now_s();
    if (left <= 0) {
      break;
    }
    struct timespec ts = {(time_t)floor(left), (long)((left - floor(left)) * 1e9)};
    if (ppoll(fds, early < 8 ? (nfds_t)nfds : 0, &ts, NULL) > 0) {
      for (int i = 0; i < nfds; i++) { /* a pty nobody has open reports a hang-up: ignore it */
        if ((fds[i].revents & POLLHUP) && !(fds[i].revents & POLLIN)) {
          fds[i].fd = ~fds[i].fd;
        }
      }
      drain_all(r);
      early++;
    }
  }
  struct timespec zero = {0, 0};
  return ppoll(fds, (nfds_t)nfds, &zero, NULL) > 0;
}

static void run(responder *r) {
  struct pollfd fds[3];
  int nfds = 0;
  void *socks[2] = {r->pull, r->rep};
  for (int i = 0; i < 2; i++) {
    int fd;
    size_t sz = sizeof fd;
    if (zmq_getsockopt(socks[i], ZMQ_FD, &fd, &sz) == 0) {
      fds[nfds++] = (struct pollfd){fd, POLLIN, 0};
    }
  }
  fds[nfds++] = (struct pollfd){r->pty, POLLIN, 0};
  r->next = now_s();
  while (!stop) {
    int pending = wait_deadline(r, fds, nfds);
    r->late[r->nlate++ % LATE_WINDOW] = now_s() - r->next;
    if (pending) {
      drain_all(r);
    }
    r->tick++;
    double t = (double)r->tick * r->period;
    publish_zmq(r, t);
    publish_serial(r, t);
    drain_all(r); /* what came while publishing */
    r->next += r->period;
    if (now_s() > r->next) { /* skip what a stall cost, as achilles run does by default */
      r->next += floor((now_s() - r->next) / r->period) * r->period;
    }
  }
}

static int bind_all(responder *r, void *ctx, const char *const ep[3]) {
  r->pub = zmq_socket(ctx, ZMQ_PUB);
  r->pull = zmq_socket(ctx, ZMQ_PULL);
  r->rep = zmq_socket(ctx, ZMQ_REP);
  int zero = 0;
  void *socks[3] = {r->pub, r->pull, r->rep};
  for (int i = 0; i < 3; i++) {
    zmq_setsockopt(socks[i], ZMQ_LINGER, &zero, sizeof zero);
    if (zmq_bind(socks[i], ep[i]) != 0) {
      fprintf(stderr, "latency_reference: bind %s: %s\n", ep[i], zmq_strerror(zmq_errno()));
      return -1;
    }
  }
  return 0;
}

/* --rt, --cpu, --keep-awake as `achilles run` has them (docs/runtime.md, "Sharp timing"). */
typedef struct placement {
  int rt, cpu, keep_awake;
} placement;

static void place(const placement *p) {
  struct sched_param fifo = {.sched_priority = 80};
  if (p->rt &&
      (sched_setscheduler(0, SCHED_FIFO, &fifo) != 0 || mlockall(MCL_CURRENT | MCL_FUTURE))) {
    fprintf(stderr, "latency_reference: --rt: %s; running on\n", strerror(errno));
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  if (p->cpu >= 0 && p->cpu < CPU_SETSIZE) {
    CPU_SET(p->cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
      fprintf(stderr, "latency_reference: --cpu %d: %s; running on\n", p->cpu, strerror(errno));
    }
  }
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: latency_reference --pty-link PATH [--rate HZ] [--pub EP] [--cmd EP] [--ctl EP]\n"
          "                         [--rt] [--cpu N] [--keep-awake]\n\n"
          "A do-nothing responder for tools/bench_latency: it takes commands as they arrive\n"
          "and at each tick (default 1000 Hz, absolute deadlines) publishes one torque sample\n"
          "carrying the last one, on ZeroMQ (topic trq/probe; defaults tcp://127.0.0.1:5565\n"
          "PUB, :5566 PULL, :5567 REP answering any request with {\"ok\":true,\"status\":\n"
          "{...}}) and in the serial protocol on a pseudo-terminal linked at PATH. It measures\n"
          "the floor this machine puts under any simulator's command-to-sensor latency.\n"
          "--rt, --cpu N and --keep-awake place its threads as `achilles run` does with the\n"
          "same options. Stops on SIGINT/SIGTERM.\n");
}

int main(int argc, char **argv) {
  const char *ep[3] = {"tcp://127.0.0.1:5565", "tcp://127.0.0.1:5566", "tcp://127.0.0.1:5567"};
  const char *link = NULL;
  double rate_hz = 1000;
  placement pl = {0, -1, 0};
  static const struct option options[] = {
      {"rt", no_argument, NULL, 'R'}, {"cpu", required_argument, NULL, 'u'},
      {"keep-awake", no_argument, NULL, 'K'},
      {"pty-link", required_argument, NULL, 'l'}, {"rate", required_argument, NULL, 'r'},
      {"pub", required_argument, NULL, 'p'},      {"cmd", required_argument, NULL, 'c'},
      {"ctl", required_argument, NULL, 't'},      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  for (int opt; (opt = getopt_long(argc, argv, "h", options, NULL)) != -1;) {
    switch (opt) {
    case 'l': link = optarg; break;
    case 'r': rate_hz = atof(optarg); break;
    case 'p': ep[0] = optarg; break;
    case 'c': ep[1] = optarg; break;
    case 't': ep[2] = optarg; break;
    case 'R': pl.rt = 1; break;
    case 'u': pl.cpu = atoi(optarg); break;
    case 'K': pl.keep_awake = 1; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (!link || !(rate_hz > 0)) {
    usage(stderr);
    return 2;
  }
  static responder r;
  r.period = 1.0 / rate_hz;
  ach_decoder_init(&r.dec);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); /* as achilles run does */
  place(&pl);
  char why[128];
  hil_cpu_awake *awake = pl.keep_awake ? hil_cpu_awake_start(pl.cpu, why, sizeof why) : NULL;
  if (pl.keep_awake && !awake) {
    fprintf(stderr, "latency_reference: %s\n", why);
  }
  void *ctx = zmq_ctx_new();
  hil_cpu_place_zmq_io(ctx, pl.rt ? pl.cpu : -1, pl.rt ? 80 : 0);
  r.pty = open_pty(link);
  if (r.pty < 0) {
    fprintf(stderr, "latency_reference: cannot make a pty linked at %s: %s\n", link,
            strerror(errno));
    return 1;
  }
  int status = bind_all(&r, ctx, ep) ? 1 : 0;
  if (status == 0) {
    run(&r);
  }
  zmq_close(r.pub);
  zmq_close(r.pull);
  zmq_close(r.rep);
  zmq_ctx_term(ctx);
  close(r.pty);
  unlink(link);
  hil_cpu_awake_stop(&awake);
  return status;
}
