/* hil/servo/pty_latency.c: the pty's delivery latency, measured on a private pair (see the
 * header for why the bus wants it). */
#define _GNU_SOURCE /* posix_openpt, grantpt, unlockpt, ptsname_r, cfmakeraw */
#include "hil/servo/pty_latency.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "hil/clock.h"

#define MAX_SAMPLES 64

typedef struct probe {
  int reader_fd;
  int samples;
  _Atomic double sent; /* when the writer wrote the current byte */
  atomic_int received; /* bytes the reader has taken */
  double latency[MAX_SAMPLES];
} probe;

/* The reader: blocked in poll() as the bus thread is, it stamps each byte's arrival. */
static void *reader(void *arg) {
  probe *p = arg;
  for (int i = 0; i < p->samples; i++) {
    struct pollfd pfd = {p->reader_fd, POLLIN, 0};
    if (poll(&pfd, 1, 1000) <= 0) {
      break;
    }
    const double t = hil_monotonic_s();
    unsigned char byte;
    if (read(p->reader_fd, &byte, 1) != 1) {
      break;
    }
    p->latency[i] = t - atomic_load(&p->sent);
    atomic_store(&p->received, i + 1);
  }
  atomic_store(&p->received, p->samples + 1); /* done (or gave up) */
  return NULL;
}

static void pause_us(long us) {
  const struct timespec ts = {0, us * 1000};
  nanosleep(&ts, NULL);
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* A raw pty pair: master for the writer, slave for the reader (-1 on failure). */
static int open_pair(int *master, int *slave) {
  char name[128];
  *master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (*master < 0 || grantpt(*master) || unlockpt(*master) ||
      ptsname_r(*master, name, sizeof name)) {
    return -1;
  }
  *slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  struct termios t;
  if (*slave < 0 || tcgetattr(*slave, &t)) {
    return -1;
  }
  cfmakeraw(&t);
  return tcsetattr(*slave, TCSANOW, &t);
}

/* Writes one byte at a time, each after the reader has taken the one before and has had
 * time to block in poll() again; returns the samples taken. */
static int run_probe(probe *p, int master) {
  int taken = 0;
  for (int i = 0; i < p->samples; i++) {
    pause_us(300);
    const unsigned char byte = 0x55;
    atomic_store(&p->sent, hil_monotonic_s());
    if (write(master, &byte, 1) != 1) {
      break;
    }
    for (int spins = 0; atomic_load(&p->received) <= i && spins < 20000; spins++) {
      pause_us(50);
    }
    if (atomic_load(&p->received) <= i) {
      break;
    }
    taken = i + 1;
  }
  return taken;
}

double pty_latency_measure(int samples) {
  probe p = {.samples = samples < 1 ? 1 : samples > MAX_SAMPLES ? MAX_SAMPLES : samples};
  int master = -1, slave = -1, taken = 0;
  pthread_t thread;
  if (open_pair(&master, &slave) == 0) {
    p.reader_fd = slave;
    if (pthread_create(&thread, NULL, reader, &p) == 0) {
      taken = run_probe(&p, master);
      close(master), master = -1; /* wakes a reader still waiting */
      pthread_join(thread, NULL);
    }
  }
  if (master >= 0) {
    close(master);
  }
  if (slave >= 0) {
    close(slave);
  }
  return pty_latency_summary(p.latency, taken);
}

double pty_latency_summary(double *samples, int n) {
  if (n <= 0) {
    return 0;
  }
  qsort(samples, (size_t)n, sizeof *samples, by_value);
  const double median = samples[n / 2];
  return median < 0 ? 0 : median > PTY_LATENCY_MAX_S ? PTY_LATENCY_MAX_S : median;
}
