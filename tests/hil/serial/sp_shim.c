/* tests/hil/serial/sp_shim.c: TEST-ONLY interposition library (LD_PRELOAD) that lets Debian's
 * libserialport 0.1.1 open a pseudo-terminal slave, so the transport's device path runs against
 * a real pty in tests.
 *
 * libserialport 0.1.1 fails on a pty in exactly two places (read in its linux.c/serialport.c):
 *   1. sp_get_port_by_name → get_port_details: lstat("/sys/class/tty/<name>") (through the old
 *      glibc entry __lxstat) and readlink() of it; a pty ("pts/N") has no such entry;
 *   2. sp_open / sp_set_*: ioctl(TIOCMGET, TIOCMBIS, TIOCMBIC) on the modem lines, which a pty
 *      rejects with ENOTTY.
 * This shim answers those calls for ptys only, and only while the pty exists: lstat of
 * /sys/class/tty/pts/N says "symlink" when /dev/pts/N exists, readlink names a virtual tty
 * device, and the three modem-line ioctls succeed on a pty fd (keeping per-fd bits). Every other
 * call goes to the real function, so the rest of libserialport (open, termios, read, write,
 * flush) runs for real.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define SYS_PTS "/sys/class/tty/pts/"
#define MAX_FDS 1024

/* declared by glibc before 2.33; libserialport 0.1.1 is linked against it */
int __lxstat(int ver, const char *path, struct stat *buf);
int ioctl(int fd, unsigned long request, ...);
ssize_t readlink(const char *restrict path, char *restrict buf, size_t size);

static int modem_bits[MAX_FDS];

/* "/sys/class/tty/pts/N" for an existing /dev/pts/N: writes "/dev/pts/N" into dev */
static int sys_entry_of_pty(const char *path, char *dev, size_t dev_sz) {
  if (strncmp(path, SYS_PTS, strlen(SYS_PTS)) != 0) {
    return 0;
  }
  const char *n = path + strlen(SYS_PTS);
  if (*n == '\0' || strchr(n, '/')) {
    return 0;
  }
  snprintf(dev, dev_sz, "/dev/pts/%s", n);
  return access(dev, F_OK) == 0;
}

int __lxstat(int ver, const char *path, struct stat *buf) {
  char dev[64];
  (void)ver; /* _STAT_VER: struct stat is the one of this glibc on x86-64 and arm64 */
  if (sys_entry_of_pty(path, dev, sizeof dev)) {
    memset(buf, 0, sizeof *buf);
    buf->st_mode = S_IFLNK | 0777;
    return 0;
  }
  return lstat(path, buf);
}

ssize_t readlink(const char *restrict path, char *restrict buf, size_t size) {
  static ssize_t (*real)(const char *, char *, size_t);
  char dev[64];
  if (sys_entry_of_pty(path, dev, sizeof dev)) {
    int n = snprintf(buf, size, "../../devices/virtual/tty/%s", dev + strlen("/dev/"));
    return n < 0 ? -1 : (ssize_t)((size_t)n < size ? (size_t)n : size);
  }
  if (!real) {
    *(void **)&real = dlsym(RTLD_NEXT, "readlink");
  }
  return real(path, buf, size);
}

static int is_pty_slave(int fd) {
  char name[64];
  return fd >= 0 && fd < MAX_FDS && ttyname_r(fd, name, sizeof name) == 0 &&
         strncmp(name, "/dev/pts/", 9) == 0;
}

int ioctl(int fd, unsigned long request, ...) {
  static int (*real)(int, unsigned long, ...);
  va_list ap;
  va_start(ap, request);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  if (!real) {
    *(void **)&real = dlsym(RTLD_NEXT, "ioctl");
  }
  int rc = real(fd, request, arg);
  if (rc == 0 || (errno != ENOTTY && errno != EINVAL) || !arg || !is_pty_slave(fd)) {
    return rc;
  }
  int *bits = arg;
  switch (request) {
  case TIOCMGET:
    *bits = modem_bits[fd] | TIOCM_CTS | TIOCM_DSR | TIOCM_CAR;
    return 0;
  case TIOCMBIS:
    modem_bits[fd] |= *bits;
    return 0;
  case TIOCMBIC:
    modem_bits[fd] &= ~*bits;
    return 0;
  default:
    return rc;
  }
}
