/* tests/hil/serial/test_link_fault.c: a cut or noisy line on a serial port (hil_link_fault,
 * hil/serial/line_fault.c), over a real pseudo-terminal: the test holds the slave side. */
#define _DEFAULT_SOURCE /* cfmakeraw */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <cmocka.h>

#include "hil/serial/serial_port.h"
#include "support/skip.h"

typedef struct line {
  hil_serial_port *port;
  int slave;
} line;

static void open_line(line *l) {
  hil_serial_options o;
  hil_serial_options_default(&o);
  char err[256];
  l->port = hil_serial_port_new(&o, err, sizeof err);
  if (!l->port) {
    fail_msg("%s", err);
  }
  l->slave = open(hil_serial_port_path(l->port), O_RDWR | O_NOCTTY | O_NONBLOCK);
  assert_true(l->slave >= 0);
  struct termios tio;
  assert_int_equal(tcgetattr(l->slave, &tio), 0);
  cfmakeraw(&tio);
  assert_int_equal(tcsetattr(l->slave, TCSANOW, &tio), 0);
}

static void close_line(line *l) {
  close(l->slave);
  hil_serial_port_destroy(&l->port);
}

/* what the slave wrote, as the port reads it: at most n bytes, waiting up to 2 s for them */
static size_t port_read_all(line *l, uint8_t *buf, size_t n) {
  size_t got = 0;
  for (int idle = 0; got < n && idle < 200;) {
    long k = hil_serial_port_read(l->port, buf + got, n - got, 0);
    assert_true(k >= 0);
    if (k == 0) {
      struct pollfd p = {hil_serial_port_fd(l->port), POLLIN, 0};
      idle += poll(&p, 1, 10) == 0;
      continue;
    }
    got += (size_t)k;
  }
  return got;
}

/* the slave's bytes, waiting up to 0.2 s of silence */
static size_t slave_read_all(line *l, uint8_t *buf, size_t n) {
  size_t got = 0;
  for (;;) {
    struct pollfd p = {l->slave, POLLIN, 0};
    if (got >= n || poll(&p, 1, 200) <= 0) {
      return got;
    }
    ssize_t k = read(l->slave, buf + got, n - got);
    if (k > 0) {
      got += (size_t)k;
    }
  }
}

static void pattern(uint8_t *buf, size_t n, unsigned salt) {
  for (size_t i = 0; i < n; i++) {
    buf[i] = (uint8_t)(i * 7u + salt);
  }
}

/* bytes pushed by the slave in blocks the pty can hold, read back by the port */
static size_t through_port(line *l, const uint8_t *in, uint8_t *out, size_t n) {
  size_t done = 0;
  while (done < n) {
    const size_t k = n - done < 2048 ? n - done : 2048;
    assert_int_equal(write(l->slave, in + done, k), (ssize_t)k);
    assert_int_equal(port_read_all(l, out + done, k), k);
    done += k;
  }
  return done;
}

static void test_healthy_line(void **state) {
  (void)state;
  line l;
  open_line(&l);
  uint8_t a[3000], b[3000];
  pattern(a, sizeof a, 1);
  through_port(&l, a, b, sizeof a);
  assert_memory_equal(a, b, sizeof a);
  assert_int_equal(hil_serial_port_write(l.port, a, 1000, 0), 1000);
  assert_int_equal(slave_read_all(&l, b, sizeof b), 1000);
  assert_memory_equal(a, b, 1000);
  close_line(&l);
}

/* cut: the slave's bytes are read and lost (so it never blocks on a full line), the port's
 * writes are taken and lost; mended, the line carries bytes again */
static void test_cut_line(void **state) {
  (void)state;
  line l;
  open_line(&l);
  const hil_link_fault cut = {.cut = 1}, healthy = {0};
  hil_serial_port_link_fault(l.port, &cut, NULL);
  uint8_t a[3000], b[3000];
  pattern(a, sizeof a, 2);
  for (int round = 0; round < 20; round++) { /* 60 000 bytes: far more than a pty buffers */
    size_t put = 0;
    while (put < sizeof a) {
      ssize_t k = write(l.slave, a + put, sizeof a - put);
      if (k < 0 && errno == EAGAIN) {
        fail_msg("the slave blocked: the cut line did not drain the pty");
      }
      put += (size_t)k;
      assert_int_equal(hil_serial_port_read(l.port, b, 64, 0), 0); /* one small read drains all */
    }
  }
  assert_int_equal(hil_serial_port_write(l.port, a, 500, 0), 500);
  assert_int_equal(slave_read_all(&l, b, sizeof b), 0);
  hil_link_counters c;
  hil_serial_port_link_fault(l.port, NULL, &c);
  assert_int_equal(c.lost, 20 * sizeof a + 500);
  assert_int_equal(c.corrupted, 0);
  hil_serial_port_link_fault(l.port, &healthy, NULL);
  through_port(&l, a, b, sizeof a);
  assert_memory_equal(a, b, sizeof a);
  close_line(&l);
}

/* corrupt_rate 0.01: about 1 % of the bytes each way differ from what was sent, each in one
 * bit; the same seed corrupts the same bytes the same way */
static void test_corrupting_line(void **state) {
  (void)state;
  enum { N = 40000 };
  static uint8_t in[N], out1[N], out2[N], back[N];
  pattern(in, N, 3);
  for (int run = 0; run < 2; run++) {
    line l;
    open_line(&l);
    const hil_link_fault noisy = {.corrupt_rate = 0.01, .seed = 42};
    hil_serial_port_link_fault(l.port, &noisy, NULL);
    uint8_t *out = run ? out2 : out1;
    through_port(&l, in, out, N);
    size_t differ = 0;
    for (size_t i = 0; i < N; i++) {
      const unsigned x = (unsigned)(in[i] ^ out[i]);
      differ += x != 0;
      assert_true(x == 0 || (x & (x - 1)) == 0); /* one bit */
    }
    /* binomial(40000, 0.01): 400 ± 20; six sigma either way */
    assert_in_range(differ, 280, 520);
    hil_link_counters c;
    hil_serial_port_link_fault(l.port, NULL, &c);
    assert_int_equal(c.corrupted, differ);
    size_t sent = 0; /* the other way */
    while (sent < 2000) {
      long k = hil_serial_port_write(l.port, in + sent, 2000 - sent, 0);
      assert_true(k > 0);
      sent += (size_t)k;
    }
    assert_int_equal(slave_read_all(&l, back, sizeof back), 2000);
    size_t differ_out = 0;
    for (size_t i = 0; i < 2000; i++) {
      differ_out += in[i] != back[i];
    }
    assert_in_range(differ_out, 2, 60);
    close_line(&l);
  }
  assert_memory_equal(out1, out2, N);
}

TS_MAIN(test_healthy_line, test_cut_line, test_corrupting_line)
