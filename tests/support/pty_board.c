/* tests/support/pty_board.c: the board a test plays (pty_board.h). */
#define _GNU_SOURCE /* cfmakeraw, posix_openpt, ptsname_r */
#include "support/pty_board.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "hil/serial/serial_transport.h"
#include "support/wait.h"

void ts_pty_open(ts_pty *p) {
  p->master = posix_openpt(O_RDWR | O_NOCTTY);
  if (p->master < 0 || grantpt(p->master) != 0 || unlockpt(p->master) != 0 ||
      ptsname_r(p->master, p->slave, sizeof p->slave) != 0 ||
      fcntl(p->master, F_SETFL, fcntl(p->master, F_GETFL) | O_NONBLOCK) != 0) {
    fail_msg("cannot open a pseudo-terminal: %s", strerror(errno));
  }
}

void ts_pty_link(const char *link, const char *target) {
  unlink(link);
  if (symlink(target, link) != 0) {
    fail_msg("symlink %s -> %s: %s", link, target, strerror(errno));
  }
}

static void reset(board *b, int fd) {
  memset(b, 0, sizeof *b);
  b->fd = fd;
  ach_decoder_init(&b->dec);
}

int board_open(board *b, const char *path) {
  int fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    return -1;
  }
  struct termios tio;
  if (tcgetattr(fd, &tio) == 0) {
    cfmakeraw(&tio);
    tcsetattr(fd, TCSANOW, &tio);
  }
  reset(b, fd);
  b->own_fd = 1;
  return 0;
}

void board_open_on(board *b, hil_transport *t) {
  if (board_open(b, hil_serial_transport_path(t)) != 0) {
    fail_msg("cannot open %s as the board", hil_serial_transport_path(t));
  }
}

void board_attach(board *b, int fd) { reset(b, fd); }

void board_close(board *b) {
  if (b->own_fd && b->fd >= 0) {
    close(b->fd);
  }
  b->fd = -1;
}

void board_send_raw(board *b, const uint8_t *bytes, size_t n) {
  size_t done = 0;
  double give_up = ts_now() + BOARD_WAIT_S;
  while (done < n && ts_now() < give_up) {
    ssize_t put = write(b->fd, bytes + done, n - done);
    if (put > 0) {
      done += (size_t)put;
    } else {
      struct pollfd p = {.fd = b->fd, .events = POLLOUT, .revents = 0};
      poll(&p, 1, 10);
    }
  }
  b->unread += done;
}

void board_send(board *b, const ach_message *m) {
  uint8_t frame[ACH_ENCODED_MAX(ACH_MAX_FRAME)];
  int n = ach_encode(frame, sizeof frame, b->seq++, m);
  if (n > 0) {
    board_send_raw(b, frame, (size_t)n);
  }
}

void board_hello_with(board *b, const char *name, uint16_t rx_max_payload) {
  ach_message m = {.type = ACH_MSG_HELLO,
                   .u.hello = {.version_major = ACH_PROTOCOL_VERSION_MAJOR,
                               .version_minor = ACH_PROTOCOL_VERSION_MINOR,
                               .rx_max_payload = rx_max_payload}};
  snprintf(m.u.hello.name, sizeof m.u.hello.name, "%s", name);
  board_send(b, &m);
}

void board_hello(board *b, const char *name) {
  board_hello_with(b, name, ACH_MAX_PAYLOAD);
}

void board_command(board *b, int n, const ach_joint_command *joints) {
  ach_message m;
  memset(&m, 0, sizeof m);
  m.type = ACH_MSG_MOTOR_COMMAND;
  m.u.motor_command.count = (uint8_t)n;
  memcpy(m.u.motor_command.joints, joints, (size_t)n * sizeof *joints);
  board_send(b, &m);
}

static void on_message(const ach_message *m, void *user) {
  board *b = user;
  switch (m->type) {
  case ACH_MSG_HELLO_ACK:
    b->ack = m->u.hello_ack;
    b->hello_acks++;
    break;
  case ACH_MSG_ERROR:
    if (b->nerrors < BOARD_MAX_ERRORS) {
      b->errors[b->nerrors] = m->u.error;
    }
    b->nerrors++;
    break;
  case ACH_MSG_STATUS:
    b->status = m->u.status;
    b->statuses++;
    break;
  case ACH_MSG_HEARTBEAT:
    b->heartbeat = m->u.heartbeat;
    b->heartbeats++;
    break;
  case ACH_MSG_SENSOR_SAMPLES:
    b->sample_frames++;
    if (m->payload_len > b->max_samples_payload) {
      b->max_samples_payload = m->payload_len;
    }
    for (int i = 0; i < m->u.sensor_samples.count; i++) {
      const ach_sample *s = &m->u.sensor_samples.samples[i];
      b->latest[s->sensor_id] = *s;
      b->latest_time[s->sensor_id] = m->u.sensor_samples.sim_time_ns + 1;
    }
    break;
  case ACH_MSG_SENSOR_INFO:
    b->info[m->u.sensor_info.sensor_id] = m->u.sensor_info;
    b->infos++;
    break;
  default:
    break;
  }
}

void board_read_with(int fd, ach_decoder *dec, ach_message_fn fn, void *user) {
  uint8_t buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) {
      return;
    }
    ach_decoder_push(dec, buf, (size_t)n, fn, user);
  }
}

void board_read(board *b) { board_read_with(b->fd, &b->dec, on_message, b); }

/* reads until done(b) or the bound passes */
static int wait_for(board *b, int (*done)(const board *, const void *), const void *arg) {
  double give_up = ts_now() + BOARD_WAIT_S;
  for (;;) {
    board_read(b);
    if (done(b, arg)) {
      return 1;
    }
    if (ts_now() > give_up) {
      return 0;
    }
    struct pollfd p = {.fd = b->fd, .events = POLLIN, .revents = 0};
    poll(&p, 1, 5);
  }
}

typedef struct count_arg {
  const int *counter;
  int target;
} count_arg;

static int count_reached(const board *b, const void *arg) {
  const count_arg *c = arg;
  (void)b;
  return *c->counter >= c->target;
}

int board_wait_count(board *b, const int *counter, int target) {
  count_arg c = {counter, target};
  return wait_for(b, count_reached, &c);
}

typedef struct sample_arg {
  int id;
  uint64_t t_ns;
} sample_arg;

static int sample_reached(const board *b, const void *arg) {
  const sample_arg *s = arg;
  return b->latest_time[s->id] >= s->t_ns + 1;
}

int board_wait_sample(board *b, int id, uint64_t t_ns) {
  sample_arg s = {id, t_ns};
  return wait_for(b, sample_reached, &s);
}

int transport_fd(hil_transport *t) {
  zmq_pollitem_t item;
  return t->ops->pollitems(t, &item, 1) == 1 ? item.fd : -1;
}

void tick_after(hil_runtime *rt, hil_transport *t, board *b) {
  int fd = transport_fd(t);
  double give_up = ts_now() + BOARD_WAIT_S;
  while (fd >= 0 && b->unread > 0 && ts_now() < give_up) {
    int waiting = 0;
    if (ioctl(fd, FIONREAD, &waiting) != 0 || (size_t)waiting >= b->unread) {
      break;
    }
    ts_sleep(1e-4);
  }
  b->unread = 0;
  hil_runtime_tick(rt);
  board_read(b); /* a board reads all the time: the simulator's frames never pile up */
}

hil_transport *ts_serial_transport(hil_runtime *rt, const char *link) {
  hil_serial_options so;
  hil_serial_options_default(&so);
  so.quiet = 1;
  so.reopen_interval_s = 0.005;
  if (link) {
    snprintf(so.link, sizeof so.link, "%s", link);
  }
  char err[512];
  hil_transport *t = hil_serial_transport_new(&so, err, sizeof err);
  if (!t) {
    fail_msg("%s", err);
  }
  if (hil_runtime_add_transport(rt, t) != HIL_OK) {
    fail_msg("the serial transport could not be added");
  }
  return t;
}

hil_transport *board_on_pty(board *b, hil_runtime *rt) {
  hil_transport *t = ts_serial_transport(rt, NULL);
  board_open_on(b, t);
  return t;
}

hil_serial_counters ts_serial_counters(const hil_transport *t) {
  hil_serial_counters c;
  if (hil_serial_transport_counters(t, &c) != HIL_OK) {
    fail_msg("not a serial transport");
  }
  return c;
}
