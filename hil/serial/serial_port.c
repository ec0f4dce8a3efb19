/* hil/serial/serial_port.c: pseudo-terminal pairs (POSIX) and serial devices (libserialport), with the
 * link's up/down state and the retries. */
#define _GNU_SOURCE /* posix_openpt, grantpt, unlockpt, ptsname_r, cfmakeraw, realpath */
#include "hil/serial/serial_port.h"

#include <errno.h>
#include <fcntl.h>
#include <libserialport.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "hil/error.h"
#include "hil/serial/line_fault.h"

struct hil_serial_port {
  hil_serial_options opt;
  int pty;            /* 1: we own a pty master; 0: a libserialport device */
  int fd;             /* pty master, or the device's handle; -1 when closed */
  struct sp_port *sp; /* device mode, NULL while closed */
  int up;
  double retry_at;                    /* monotonic s: next check while down */
  char path[HIL_SERIAL_PATH_MAX];     /* pty slave, or the configured device */
  char resolved[HIL_SERIAL_PATH_MAX]; /* the device the path pointed at when opened */
  int made_link;                      /* the symlink opt.link is ours to remove */
  int watch;                          /* pty: inotify watch of the slave's opening, or -1 */
  hil_line_fault fault;               /* a cut or noisy line (hil/scenario) */
};

static const char *label(const hil_serial_port *p) {
  return p->opt.label[0] ? p->opt.label : "serial";
}

/* Empties the watch's queue: 1 when the slave was opened since the last call. */
static int drain_watch(hil_serial_port *p) {
  char buf[sizeof(struct inotify_event) * 8];
  int opened = 0;
  while (p->watch >= 0 && read(p->watch, buf, sizeof buf) > 0) {
    opened = 1;
  }
  return opened;
}

/* --- pseudo-terminal pairs -------------------------------------------------------------------- */

/* Points opt.link at the slave, replacing an older symlink (never another kind of file). */
static int make_link(hil_serial_port *p, char *err, size_t err_sz) {
  struct stat st;
  if (lstat(p->opt.link, &st) == 0) {
    if (!S_ISLNK(st.st_mode)) {
      snprintf(err, err_sz, "serial: link %s exists and is not a symlink; not replacing it",
               p->opt.link);
      return HIL_ESYSTEM;
    }
    unlink(p->opt.link); /* a stale link from an earlier run */
  }
  if (symlink(p->path, p->opt.link) != 0) {
    snprintf(err, err_sz, "serial: cannot make link %s -> %s: %s", p->opt.link, p->path,
             strerror(errno));
    return HIL_ESYSTEM;
  }
  p->made_link = 1;
  return HIL_OK;
}

/* Removes the symlink if it still points at our slave. */
static void remove_link(hil_serial_port *p) {
  char target[HIL_SERIAL_PATH_MAX];
  if (!p->made_link) {
    return;
  }
  ssize_t n = readlink(p->opt.link, target, sizeof target - 1);
  if (n > 0) {
    target[n] = '\0';
    if (strcmp(target, p->path) == 0) {
      unlink(p->opt.link);
    }
  }
  p->made_link = 0;
}

static int open_pty(hil_serial_port *p, char *err, size_t err_sz) {
  p->fd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (p->fd < 0) {
    snprintf(err, err_sz, "serial: posix_openpt: %s", strerror(errno));
    return HIL_ESYSTEM;
  }
  struct termios tio;
  if (grantpt(p->fd) != 0 || unlockpt(p->fd) != 0 || ptsname_r(p->fd, p->path, sizeof p->path) ||
      fcntl(p->fd, F_SETFL, fcntl(p->fd, F_GETFL) | O_NONBLOCK) != 0 ||
      tcgetattr(p->fd, &tio) != 0) {
    snprintf(err, err_sz, "serial: setting up the pseudo-terminal: %s", strerror(errno));
    return HIL_ESYSTEM;
  }
  /* raw on the slave side (termios calls on the master apply to the slave): no echo of our
   * frames back to us, no line editing, no CR/LF translation; it persists across reopens */
  cfmakeraw(&tio);
  if (tcsetattr(p->fd, TCSANOW, &tio) != 0) {
    snprintf(err, err_sz, "serial: raw mode on %s: %s", p->path, strerror(errno));
    return HIL_ESYSTEM;
  }
  snprintf(p->resolved, sizeof p->resolved, "%s", p->path);
  /* the master shows nothing until a slave has been opened and closed again, so a fresh pair
   * counts as up: the firmware may open it at any time */
  p->up = 1;
  /* the slave's opening wakes a link that is down (without it: the next retry) */
  p->watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (p->watch >= 0 && inotify_add_watch(p->watch, p->path, IN_OPEN) < 0) {
    close(p->watch);
    p->watch = -1;
  }
  return p->opt.link[0] ? make_link(p, err, err_sz) : HIL_OK;
}

/* The slave is open again when the master no longer polls POLLHUP. */
static int pty_slave_open(const hil_serial_port *p) {
  struct pollfd pfd = {.fd = p->fd, .events = POLLIN, .revents = 0};
  return poll(&pfd, 1, 0) >= 0 && !(pfd.revents & (POLLHUP | POLLERR | POLLNVAL));
}

/* --- devices (libserialport) ------------------------------------------------------------------ */

static void sp_error(enum sp_return rc, const char *what, char *err, size_t err_sz,
                     const hil_serial_port *p) {
  if (rc == SP_ERR_FAIL) {
    char *msg = sp_last_error_message();
    snprintf(err, err_sz, "%s: %s", what, msg ? msg : "failed");
    sp_free_error_message(msg);
  } else if (rc == SP_ERR_ARG && strncmp(p->resolved, "/dev/pts/", 9) == 0) {
    snprintf(err, err_sz, "%s: libserialport cannot open pseudo-terminals (use mode \"pty\")",
             what);
  } else if (rc == SP_ERR_ARG) {
    snprintf(err, err_sz, "%s: not a serial port known to the system", what);
  } else {
    snprintf(err, err_sz, "%s: libserialport error %d", what, (int)rc);
  }
}

static void close_device(hil_serial_port *p) {
  if (p->sp) {
    sp_close(p->sp);
    sp_free_port(p->sp);
    p->sp = NULL;
  }
  p->fd = -1;
}

static enum sp_parity sp_parity_of(char parity) {
  return parity == 'O' ? SP_PARITY_ODD : parity == 'E' ? SP_PARITY_EVEN : SP_PARITY_NONE;
}

static enum sp_flowcontrol sp_flow_of(hil_serial_flow flow) {
  return flow == HIL_SERIAL_FLOW_XONXOFF  ? SP_FLOWCONTROL_XONXOFF
         : flow == HIL_SERIAL_FLOW_RTSCTS ? SP_FLOWCONTROL_RTSCTS
                                          : SP_FLOWCONTROL_NONE;
}

/* Applies the line settings to an open device; names the failing step. */
static enum sp_return configure_device(hil_serial_port *p, const char **step) {
  enum sp_return rc;
  if ((rc = sp_set_baudrate(p->sp, p->opt.baud)) != SP_OK) {
    *step = "setting the baud rate";
  } else if ((rc = sp_set_bits(p->sp, p->opt.data_bits)) != SP_OK) {
    *step = "setting the data bits";
  } else if ((rc = sp_set_parity(p->sp, sp_parity_of(p->opt.parity))) != SP_OK) {
    *step = "setting the parity";
  } else if ((rc = sp_set_stopbits(p->sp, p->opt.stop_bits)) != SP_OK) {
    *step = "setting the stop bits";
  } else if ((rc = sp_set_flowcontrol(p->sp, sp_flow_of(p->opt.flow))) != SP_OK) {
    *step = "setting the flow control";
  } else if ((rc = sp_get_port_handle(p->sp, &p->fd)) != SP_OK) {
    *step = "getting its file descriptor";
  }
  return rc;
}

/* Opens and configures the device; on failure everything is closed again. */
static int open_device(hil_serial_port *p, char *err, size_t err_sz) {
  char real[PATH_MAX];
  /* libserialport finds ports by their /dev name: follow symlinks (/dev/serial/by-id/...) */
  if (!realpath(p->opt.port, real)) {
    snprintf(err, err_sz, "serial: %s: %s", p->opt.port, strerror(errno));
    return HIL_EIO;
  }
  snprintf(p->resolved, sizeof p->resolved, "%s", real);
  const char *step = "looking it up";
  enum sp_return rc = sp_get_port_by_name(real, &p->sp);
  if (rc == SP_OK) {
    step = "opening it";
    rc = sp_open(p->sp, SP_MODE_READ_WRITE);
    if (rc != SP_OK) {
      sp_free_port(p->sp); /* not open: nothing to close */
      p->sp = NULL;
    }
  }
  if (rc == SP_OK && (rc = configure_device(p, &step)) == SP_OK) {
    sp_flush(p->sp, SP_BUF_BOTH); /* what a previous session left is not for us */
    p->up = 1;
    return HIL_OK;
  }
  char what[HIL_SERIAL_PATH_MAX + 64];
  snprintf(what, sizeof what, "serial: %s (%s): %s", p->opt.port, real, step);
  sp_error(rc, what, err, err_sz, p);
  close_device(p);
  return HIL_EIO;
}

/* A device is gone when poll reports a hang-up or an error, or it reads end-of-file. */
static int device_gone(const hil_serial_port *p, int *readable) {
  struct pollfd pfd = {.fd = p->fd, .events = POLLIN, .revents = 0};
  if (poll(&pfd, 1, 0) < 0) {
    *readable = 0;
    return errno != EINTR;
  }
  *readable = (pfd.revents & POLLIN) != 0;
  return (pfd.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0 && !*readable;
}

/* --- common ----------------------------------------------------------------------------------- */

/* The link went away: say so once, offer no fd, retry later. */
static long went_down(hil_serial_port *p, const char *why, double now) {
  p->up = 0;
  p->retry_at = now + p->opt.reopen_interval_s;
  if (p->pty) {
    fprintf(stderr, "%s: firmware closed %s; waiting for it to open it again\n", label(p),
            p->path);
  } else {
    fprintf(stderr, "%s: %s lost (%s); retrying every %g s\n", label(p), p->opt.port, why,
            p->opt.reopen_interval_s);
    close_device(p);
  }
  return HIL_EIO;
}

hil_serial_port *hil_serial_port_new(const hil_serial_options *o, char *err, size_t err_sz) {
  hil_serial_port *p = calloc(1, sizeof *p);
  if (!p) {
    snprintf(err, err_sz, "out of memory");
    return NULL;
  }
  p->opt = *o;
  p->fd = -1;
  p->watch = -1;
  p->pty = o->use_pty;
  int rc;
  if (p->pty) {
    rc = open_pty(p, err, err_sz);
  } else {
    snprintf(p->path, sizeof p->path, "%s", o->port);
    rc = open_device(p, err, err_sz);
  }
  if (rc != HIL_OK) {
    hil_serial_port_destroy(&p);
  }
  return p;
}

void hil_serial_port_destroy(hil_serial_port **pp) {
  hil_serial_port *p = pp ? *pp : NULL;
  if (!p) {
    return;
  }
  if (p->pty) {
    remove_link(p);
    if (p->fd >= 0) {
      close(p->fd);
    }
    if (p->watch >= 0) {
      close(p->watch);
    }
  } else {
    close_device(p);
  }
  free(p);
  *pp = NULL;
}

const char *hil_serial_port_path(const hil_serial_port *p) { return p->path; }
const char *hil_serial_port_resolved(const hil_serial_port *p) { return p->resolved; }
int hil_serial_port_is_pty(const hil_serial_port *p) { return p->pty; }
int hil_serial_port_is_up(const hil_serial_port *p) { return p->up; }
int hil_serial_port_fd(const hil_serial_port *p) { return p->up ? p->fd : -1; }

int hil_serial_port_wakeup_fd(const hil_serial_port *p) {
  return !p->up && p->pty ? p->watch : -1;
}

int hil_serial_port_service(hil_serial_port *p, double now) {
  /* a pty is looked at on every call (one poll): the firmware may have opened the slave again
   * before its closing was noticed, and the watch only wakes a caller that waits */
  if (p->pty) {
    drain_watch(p);
  }
  if (p->up || (now < p->retry_at && !p->pty)) {
    return 0;
  }
  p->retry_at = now + p->opt.reopen_interval_s;
  if (p->pty) {
    if (!pty_slave_open(p)) {
      return 0;
    }
    fprintf(stderr, "%s: %s open again\n", label(p), p->path);
  } else {
    char err[512];
    if (open_device(p, err, sizeof err) != HIL_OK) {
      return 0; /* still away: said when it went, not again */
    }
    fprintf(stderr, "%s: %s is back (%s)\n", label(p), p->opt.port, p->resolved);
  }
  p->up = 1;
  return 1;
}

static long raw_read(hil_serial_port *p, uint8_t *buf, size_t n, double now) {
  if (!p->up) {
    return 0;
  }
  if (p->pty) {
    ssize_t got = read(p->fd, buf, n);
    if (got >= 0) {
      return (long)got;
    }
    if (errno == EAGAIN || errno == EINTR) {
      return 0;
    }
    return went_down(p, strerror(errno), now); /* EIO: the slave was closed */
  }
  int readable = 0;
  if (device_gone(p, &readable)) {
    return went_down(p, "hang-up", now);
  }
  if (!readable) {
    return 0;
  }
  int got = sp_nonblocking_read(p->sp, buf, n);
  if (got < 0) {
    char why[256];
    sp_error((enum sp_return)got, "read", why, sizeof why, p);
    return went_down(p, why, now);
  }
  if (got == 0) {
    return went_down(p, "end of file", now); /* readable but nothing: the device is gone */
  }
  return got;
}

static long raw_write(hil_serial_port *p, const uint8_t *buf, size_t n, double now) {
  if (!p->up) {
    return 0;
  }
  if (p->pty) {
    ssize_t put = write(p->fd, buf, n);
    if (put >= 0) {
      return (long)put;
    }
    return (errno == EAGAIN || errno == EINTR) ? 0 : went_down(p, strerror(errno), now);
  }
  int put = sp_nonblocking_write(p->sp, buf, n);
  if (put < 0) {
    char why[256];
    sp_error((enum sp_return)put, "write", why, sizeof why, p);
    return went_down(p, why, now);
  }
  return put;
}

/* --- line faults ------------------------------------------------------------------------------ */

long hil_serial_port_read(hil_serial_port *p, uint8_t *buf, size_t n, double now) {
  long got = raw_read(p, buf, n, now);
  /* cut: everything waiting is read and lost, so the other side never blocks on a full line */
  while (got > 0 && hil_line_fault_swallow(&p->fault, (size_t)got)) {
    got = raw_read(p, buf, n, now);
  }
  if (got > 0) {
    hil_line_fault_corrupt(&p->fault, buf, (size_t)got);
  }
  return got;
}

long hil_serial_port_write(hil_serial_port *p, const uint8_t *buf, size_t n, double now) {
  if (p->up && hil_line_fault_swallow(&p->fault, n)) {
    return (long)n;
  }
  if (!hil_line_fault_corrupting(&p->fault)) {
    return raw_write(p, buf, n, now);
  }
  uint8_t copy[1024]; /* corrupted on the way out; a longer write goes in parts, as any may */
  const size_t k = n < sizeof copy ? n : sizeof copy;
  memcpy(copy, buf, k);
  hil_line_fault_corrupt(&p->fault, copy, k);
  return raw_write(p, copy, k, now);
}

void hil_serial_port_link_fault(hil_serial_port *p, const hil_link_fault *f,
                                hil_link_counters *out) {
  if (f) {
    hil_line_fault_set(&p->fault, f);
  }
  if (out) {
    hil_line_fault_counters(&p->fault, out);
  }
}
