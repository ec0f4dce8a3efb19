/* tests/hil/servo/servo_client.c: the controller side of the servo bus tests, written from the
 * manuals alone (Protocol 2.0's CRC table, stuffing and status parser; Feetech's checksum), and
 * the simulator under test (a runtime on a thread with a servo bus). Nothing from hil/servo's
 * packet code is used, so that a bug there cannot hide in both sides. */
#define _GNU_SOURCE /* cfmakeraw */
#include "servo_client.h"

#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hil/error.h"
#include "support/runtime.h"
#include "support/wait.h"


/* --- the controller, from the e-manual -------------------------------------------------------- */

/* CRC-16 of Protocol 2.0 (polynomial 0x8005), table-driven as the e-manual's update_crc. */
static uint16_t crc_table[256];

void make_crc_table(void) {
  for (int i = 0; i < 256; i++) {
    uint16_t c = (uint16_t)(i << 8);
    for (int b = 0; b < 8; b++) {
      c = (uint16_t)((c & 0x8000) ? (c << 1) ^ 0x8005 : c << 1);
    }
    crc_table[i] = c;
  }
}

uint16_t manual_crc(const uint8_t *p, size_t n) {
  uint16_t crc = 0;
  for (size_t j = 0; j < n; j++) {
    crc = (uint16_t)((crc << 8) ^ crc_table[((crc >> 8) ^ p[j]) & 0xFF]);
  }
  return crc;
}

/* An instruction packet: header, ID, length, instruction, stuffed parameters, CRC. */
size_t build(uint8_t *out, uint8_t id, uint8_t inst, const uint8_t *params, size_t n) {
  size_t k = 0;
  out[k++] = 0xFF, out[k++] = 0xFF, out[k++] = 0xFD, out[k++] = 0x00, out[k++] = id;
  k += 2; /* length */
  out[k++] = inst;
  for (size_t i = 0; i < n; i++) {
    out[k++] = params[i];
    if (out[k - 1] == 0xFD && out[k - 2] == 0xFF && out[k - 3] == 0xFF) {
      out[k++] = 0xFD;
    }
  }
  const size_t len = k - 7 + 2;
  out[5] = (uint8_t)len, out[6] = (uint8_t)(len >> 8);
  const uint16_t crc = manual_crc(out, k);
  out[k++] = (uint8_t)crc, out[k++] = (uint8_t)(crc >> 8);
  return k;
}



void client_open(client *c, const char *path) {
  c->fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK);
  assert_true(c->fd >= 0);
  struct termios tio;
  assert_int_equal(tcgetattr(c->fd, &tio), 0);
  cfmakeraw(&tio);
  assert_int_equal(tcsetattr(c->fd, TCSANOW, &tio), 0);
  c->n = 0;
}

void send_bytes(client *c, const uint8_t *p, size_t n) {
  assert_int_equal(write(c->fd, p, n), (ssize_t)n);
}

void send_packet(client *c, uint8_t id, uint8_t inst, const uint8_t *params, size_t n) {
  uint8_t raw[600];
  send_bytes(c, raw, build(raw, id, inst, params, n));
}

/* Takes one status packet off the front of the buffer, if a whole one is there. */
int parse_status(client *c, status *s) {
  while (c->n >= 4 && memcmp(c->buf, "\xFF\xFF\xFD\x00", 4) != 0) {
    memmove(c->buf, c->buf + 1, --c->n);
  }
  if (c->n < 7) {
    return 0;
  }
  const size_t len = (size_t)c->buf[5] | ((size_t)c->buf[6] << 8), total = 7 + len;
  if (c->n < total) {
    return 0;
  }
  assert_true(total <= sizeof s->raw);
  const uint16_t crc = (uint16_t)(c->buf[total - 2] | (c->buf[total - 1] << 8));
  assert_int_equal(manual_crc(c->buf, total - 2), crc);
  assert_int_equal(c->buf[7], 0x55);
  s->id = c->buf[4];
  s->error = c->buf[8];
  s->ndata = 0;
  for (size_t i = 9; i < total - 2; i++) { /* unstuff */
    if (i >= 11 && c->buf[i] == 0xFD && c->buf[i - 1] == 0xFD && c->buf[i - 2] == 0xFF &&
        c->buf[i - 3] == 0xFF) {
      continue;
    }
    s->data[s->ndata++] = c->buf[i];
  }
  memcpy(s->raw, c->buf, total);
  s->raw_len = total;
  memmove(c->buf, c->buf + total, c->n - total);
  c->n -= total;
  return 1;
}

/* Waits until parse takes a whole packet off the buffer; 0 when none came within wait_s. */
static int receive_with(client *c, status *s, double wait_s, int (*parse)(client *, status *)) {
  const double until = ts_now() + wait_s;
  for (;;) {
    if (parse(c, s)) {
      return 1;
    }
    const double left = until - ts_now();
    if (left <= 0) {
      return 0;
    }
    struct pollfd p = {c->fd, POLLIN, 0};
    if (poll(&p, 1, (int)(left * 1000) + 1) > 0) {
      const ssize_t got = read(c->fd, c->buf + c->n, sizeof c->buf - c->n);
      c->n += got > 0 ? (size_t)got : 0;
    }
  }
}

/* The next packet, from `id`, or the test fails naming what was waited for. */
static status expect_with(client *c, uint8_t id, const char *what,
                          int (*parse)(client *, status *)) {
  status s = {0};
  if (!receive_with(c, &s, REPLY_WAIT_S, parse)) {
    fail_msg("no reply from ID %u after %s", id, what);
  }
  if (s.id != id) {
    fail_msg("%s: reply from ID %u, expected %u", what, s.id, id);
  }
  return s;
}

int receive(client *c, status *s, double wait_s) {
  return receive_with(c, s, wait_s, parse_status);
}

status expect_status(client *c, uint8_t id, const char *what) {
  return expect_with(c, id, what, parse_status);
}

uint32_t le(const uint8_t *p, int n) {
  uint32_t v = 0;
  for (int i = 0; i < n; i++) {
    v |= (uint32_t)p[i] << (8 * i);
  }
  return v;
}

/* one byte at address, from a servo whose status carries the alert bit */
uint32_t read_field_alert(client *c, uint8_t id, uint16_t address) {
  uint8_t p[4] = {(uint8_t)address, (uint8_t)(address >> 8), 1, 0};
  send_packet(c, id, 0x02, p, 4);
  status s = expect_status(c, id, "READ");
  assert_int_equal(s.error, 0x80);
  return s.data[0];
}

int write_field(client *c, uint8_t id, uint16_t address, uint32_t v, int size) {
  uint8_t p[6] = {(uint8_t)address, (uint8_t)(address >> 8), (uint8_t)v, (uint8_t)(v >> 8),
                  (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  send_packet(c, id, 0x03, p, 2 + (size_t)size);
  return expect_status(c, id, "WRITE").error;
}

uint32_t read_field(client *c, uint8_t id, uint16_t address, int size) {
  uint8_t p[4] = {(uint8_t)address, (uint8_t)(address >> 8), (uint8_t)size, 0};
  send_packet(c, id, 0x02, p, 4);
  status s = expect_status(c, id, "READ");
  assert_int_equal(s.error, 0);
  assert_int_equal(s.ndata, size);
  return le(s.data, size);
}

/* --- the simulator ---------------------------------------------------------------------------- */


void start_with(fixture *f, const char *config, long baud, int run) {
  f->rt = ts_runtime(config, HIL_MODE_REALTIME, 0);
  servo_bus_options bo;
  servo_bus_options_default(&bo);
  bo.quiet = 1;
  bo.baud = baud;
  char err[1024];
  f->bus = servo_bus_new(&bo, config, err, sizeof err);
  if (!f->bus) {
    fail_msg("%s", err);
  }
  assert_int_equal(hil_runtime_add_transport(f->rt, f->bus), HIL_OK);
  client_open(&f->c, servo_bus_path(f->bus));
  f->running = run;
  if (run) {
    ts_loop_start(&f->loop, f->rt);
    /* the servos' present fields hold the table's defaults until their loop's first step */
    if (!ts_loop_wait_steps(&f->loop, 2, TS_DEADLINE_S)) {
      fail_msg("the runtime did not step within %g s", TS_DEADLINE_S);
    }
  }
}

void stop(fixture *f) {
  if (f->running) {
    ts_loop_stop(&f->loop);
  }
  close(f->c.fd);
  hil_runtime_destroy(&f->rt);
}

servo_bus_counters counters(const fixture *f) {
  servo_bus_counters c;
  assert_int_equal(servo_bus_counters_get(f->bus, &c), HIL_OK);
  return c;
}

/* FF FF ID LEN INST PARAMS CHK, LEN = params + 2, CHK = ~(ID + LEN + INST + params) */
void ft_send(client *c, uint8_t id, uint8_t inst, const uint8_t *params, size_t n) {
  uint8_t raw[300];
  raw[0] = 0xFF, raw[1] = 0xFF, raw[2] = id, raw[3] = (uint8_t)(n + 2), raw[4] = inst;
  unsigned sum = id + raw[3] + inst;
  for (size_t i = 0; i < n; i++) {
    raw[5 + i] = params[i];
    sum += params[i];
  }
  raw[5 + n] = (uint8_t)~sum;
  send_bytes(c, raw, n + 6);
}

/* Takes one reply (FF FF ID LEN ERR DATA CHK) off the front of the buffer, if a whole one is. */
static int ft_parse(client *c, status *s) {
  while (c->n >= 2 && (c->buf[0] != 0xFF || c->buf[1] != 0xFF)) {
    memmove(c->buf, c->buf + 1, --c->n);
  }
  if (c->n < 4 || c->n < 4u + c->buf[3]) {
    return 0;
  }
  const size_t total = 4u + c->buf[3];
  unsigned sum = 0;
  for (size_t i = 2; i < total - 1; i++) {
    sum += c->buf[i];
  }
  assert_int_equal((uint8_t)~sum, c->buf[total - 1]);
  s->id = c->buf[2], s->error = c->buf[4];
  s->ndata = total - 6;
  memcpy(s->data, c->buf + 5, s->ndata);
  memcpy(s->raw, c->buf, total);
  s->raw_len = total;
  memmove(c->buf, c->buf + total, c->n - total);
  c->n -= total;
  return 1;
}

int ft_receive(client *c, status *s, double wait_s) {
  return receive_with(c, s, wait_s, ft_parse);
}

status ft_expect(client *c, uint8_t id, const char *what) {
  return expect_with(c, id, what, ft_parse);
}

uint32_t ft_read(client *c, uint8_t id, uint8_t address, uint8_t n) {
  const uint8_t p[2] = {address, n};
  ft_send(c, id, 0x02, p, 2);
  const status s = ft_expect(c, id, "READ");
  assert_int_equal(s.ndata, n);
  return le(s.data, n);
}

void ft_write(client *c, uint8_t id, uint8_t address, uint32_t v, int size) {
  const uint8_t p[3] = {address, (uint8_t)v, (uint8_t)(v >> 8)};
  ft_send(c, id, 0x03, p, 1 + (size_t)size);
  ft_expect(c, id, "WRITE");
}

double median(double *t, int n) {
  for (int i = 1; i < n; i++) { /* insertion sort */
    for (int k = i; k > 0 && t[k] < t[k - 1]; k--) {
      const double x = t[k];
      t[k] = t[k - 1], t[k - 1] = x;
    }
  }
  return t[n / 2];
}
