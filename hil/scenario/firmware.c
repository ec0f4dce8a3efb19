/* hil/scenario/firmware.c: the firmware under test as a process — started with its standard
 * input on a pipe and its output (stdout and stderr, in the order it wrote them) on another,
 * watched without ever blocking the loop, and stopped at the end. */
#define _DEFAULT_SOURCE /* kill, SIGSTOP, pipe2-free setup */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hil/clock.h"
#include "hil/error.h"
#include "hil/scenario/scenario_internal.h"

static void close_fd(int *fd) {
  if (*fd >= 0) {
    close(*fd);
    *fd = -1;
  }
}

int scn_process_start(scn_process *p, char *const *argv, char *const *env, const char *log_path,
                      char *err, size_t err_sz) {
  memset(p, 0, sizeof *p);
  p->in_fd = p->out_fd = -1;
  int in[2] = {-1, -1}, out[2] = {-1, -1};
  if (pipe(in) != 0 || pipe(out) != 0) {
    snprintf(err, err_sz, "firmware: pipe: %s", strerror(errno));
    close_fd(&in[0]), close_fd(&in[1]), close_fd(&out[0]), close_fd(&out[1]);
    return HIL_ESYSTEM;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, out[1], 2);
  posix_spawn_file_actions_addclose(&fa, in[1]);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);  /* the firmware starts with nothing blocked */
  posix_spawnattr_setsigdefault(&attr, &all); /* and default handlers (SIGPIPE included) */
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const int rc = posix_spawnp(&p->pid, argv[0], &fa, &attr, argv, env);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close_fd(&in[0]), close_fd(&out[1]);
  if (rc != 0) {
    snprintf(err, err_sz, "firmware: cannot start %s: %s", argv[0], strerror(rc));
    close_fd(&in[1]), close_fd(&out[0]);
    p->pid = 0;
    return HIL_ESYSTEM;
  }
  p->in_fd = in[1];
  p->out_fd = out[0];
  fcntl(p->in_fd, F_SETFL, O_NONBLOCK);
  fcntl(p->out_fd, F_SETFL, O_NONBLOCK);
  fcntl(p->in_fd, F_SETFD, FD_CLOEXEC);
  fcntl(p->out_fd, F_SETFD, FD_CLOEXEC);
  p->log = log_path ? fopen(log_path, "w") : NULL;
  return HIL_OK;
}

/* whole lines of what was read; a line longer than the buffer is cut */
static void split_lines(scn_process *p, const char *buf, size_t n,
                        void (*on_line)(void *user, const char *line), void *user) {
  for (size_t i = 0; i < n; i++) {
    if (buf[i] == '\n' || p->npartial == sizeof p->partial - 1) {
      p->partial[p->npartial] = '\0';
      if (on_line) {
        on_line(user, p->partial);
      }
      p->npartial = 0;
    } else {
      p->partial[p->npartial++] = buf[i];
    }
  }
}

void scn_process_read(scn_process *p, void (*on_line)(void *user, const char *line), void *user) {
  char buf[4096];
  while (p->out_fd >= 0) {
    ssize_t n = read(p->out_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return; /* EAGAIN: nothing more now */
    }
    if (n == 0) { /* every writer gone: the last line, if it had no newline */
      if (p->npartial > 0) {
        split_lines(p, "\n", 1, on_line, user);
      }
      close_fd(&p->out_fd);
      return;
    }
    if (p->log) {
      fwrite(buf, 1, (size_t)n, p->log);
    }
    split_lines(p, buf, (size_t)n, on_line, user);
  }
}

int scn_process_poll(scn_process *p) {
  if (p->pid <= 0 || p->exited) {
    return p->exited;
  }
  int status;
  pid_t got = waitpid(p->pid, &status, WNOHANG);
  if (got == p->pid) {
    p->exited = 1;
    p->status = status;
  }
  return p->exited;
}

int scn_process_write(scn_process *p, const char *text) {
  if (p->in_fd < 0 || p->exited) {
    return -1;
  }
  size_t n = strlen(text);
  while (n > 0) { /* a line or two: the pipe holds them; a stuck reader loses the rest */
    ssize_t put = write(p->in_fd, text, n);
    if (put < 0 && errno == EINTR) {
      continue;
    }
    if (put <= 0) {
      return -1;
    }
    text += put;
    n -= (size_t)put;
  }
  return 0;
}

/* A deadly signal is waited for, so that the loop goes on from a known state: the firmware
 * answers nothing after the step it was killed at. */
int scn_process_signal(scn_process *p, int sig) {
  if (p->pid <= 0 || p->exited) {
    return -1;
  }
  if (kill(p->pid, sig) != 0) {
    return -1;
  }
  if (sig == SIGSTOP) {
    p->frozen = 1;
  } else if (sig == SIGCONT) {
    p->frozen = 0;
  } else {
    p->killed = 1;
    if (p->frozen) {
      kill(p->pid, SIGCONT); /* a frozen process would never act on TERM or INT */
      p->frozen = 0;
    }
  }
  if (sig == SIGKILL) {
    int status;
    if (waitpid(p->pid, &status, 0) == p->pid) {
      p->exited = 1;
      p->status = status;
    }
  }
  return 0;
}

void scn_process_stop(scn_process *p, double timeout_s,
                      void (*on_line)(void *user, const char *line), void *user) {
  if (p->pid <= 0) {
    return;
  }
  close_fd(&p->in_fd); /* standard input ends: some firmware exits on that */
  if (p->frozen) {
    kill(p->pid, SIGCONT);
    p->frozen = 0;
  }
  const double start = hil_monotonic_s();
  int stage = 0; /* 0: waiting, 1: SIGTERM sent, 2: SIGKILL sent */
  while (!scn_process_poll(p)) {
    scn_process_read(p, on_line, user);
    const double waited = hil_monotonic_s() - start;
    if (stage == 0 && waited > timeout_s) {
      kill(p->pid, SIGTERM);
      stage = 1;
    } else if (stage == 1 && waited > timeout_s + 1.0) {
      kill(p->pid, SIGKILL);
      stage = 2;
    }
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
  scn_process_read(p, on_line, user); /* what it wrote before it went */
}

int scn_process_exit_code(const scn_process *p) {
  if (!p->exited) {
    return -1;
  }
  if (WIFEXITED(p->status)) {
    return WEXITSTATUS(p->status);
  }
  return WIFSIGNALED(p->status) ? 128 + WTERMSIG(p->status) : -1;
}

void scn_process_close(scn_process *p) {
  close_fd(&p->in_fd);
  close_fd(&p->out_fd);
  if (p->log) {
    fclose(p->log);
    p->log = NULL;
  }
}
