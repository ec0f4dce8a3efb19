/* tests/support/spawn.c: running and reaping programs (spawn.h). */
#include "support/spawn.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/wait.h"

static int shell_status(int status) {
  if (status == -1) {
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int ts_shell(const char *cmd, char *out, size_t out_sz) {
  FILE *p = popen(cmd, "r");
  if (!p) {
    return -1;
  }
  size_t n = 0;
  if (out && out_sz > 0) {
    n = fread(out, 1, out_sz - 1, p);
    out[n] = '\0';
  }
  char rest[4096]; /* what did not fit: read to the end, so the command is never blocked */
  while (fread(rest, 1, sizeof rest, p) > 0) {
  }
  return shell_status(pclose(p));
}

int ts_shellf(char *out, size_t out_sz, const char *fmt, ...) {
  char cmd[8192];
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof cmd) {
    fail_msg("command line longer than %zu bytes", sizeof cmd);
  }
  return ts_shell(cmd, out, out_sz);
}

static void redirect(const char *path, int flags, int to) {
  if (!path) {
    return;
  }
  const int fd = open(path, flags, 0644);
  if (fd < 0) {
    _exit(126);
  }
  dup2(fd, to);
  close(fd);
}

pid_t ts_spawn(char *const argv[], const char *in_path, const char *out_path,
               const char *err_path) {
  return ts_spawn_with(argv, in_path, out_path, err_path, NULL, NULL);
}

pid_t ts_spawn_with(char *const argv[], const char *in_path, const char *out_path,
                    const char *err_path, void (*in_child)(void *), void *arg) {
  const pid_t pid = fork();
  if (pid < 0) {
    fail_msg("fork for %s failed", argv[0]);
  }
  if (pid == 0) {
    redirect(in_path ? in_path : "/dev/null", O_RDONLY, 0);
    redirect(out_path, O_WRONLY | O_CREAT | O_TRUNC, 1);
    if (err_path && out_path && strcmp(err_path, out_path) == 0) {
      dup2(1, 2);
    } else {
      redirect(err_path, O_WRONLY | O_CREAT | O_TRUNC, 2);
    }
    if (in_child) {
      in_child(arg);
    }
    execv(argv[0], argv);
    _exit(127);
  }
  return pid;
}

int ts_exit_status(pid_t pid) {
  int status = 0;
  const pid_t got = waitpid(pid, &status, WNOHANG);
  return got == pid ? shell_status(status) : got < 0 ? -1 : TS_RUNNING;
}

int ts_reap(pid_t pid, double seconds) {
  const double until = ts_now() + seconds;
  int status = 0;
  for (;;) {
    const int rc = ts_exit_status(pid);
    if (rc != TS_RUNNING) {
      return rc;
    }
    if (ts_now() > until) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    ts_sleep(2e-3);
  }
}

int ts_wait_exit(pid_t pid, double seconds) {
  const int rc = ts_reap(pid, seconds);
  if (rc == -1) {
    fail_msg("process %d did not exit within %g s (killed)", (int)pid, seconds);
  }
  return rc;
}

int ts_stop(pid_t pid, int sig, double seconds) {
  kill(pid, sig);
  return ts_wait_exit(pid, seconds);
}

/* points fd at path (opened once for both when they name the same file); the old fd in *saved */
static void capture(int fd, const char *path, int shared, int *saved) {
  *saved = -1;
  if (!path) {
    return;
  }
  *saved = dup(fd);
  const int to = shared >= 0 ? shared : open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (*saved < 0 || to < 0) {
    fail_msg("cannot capture fd %d into %s", fd, path);
  }
  dup2(to, fd);
  if (shared < 0) {
    close(to);
  }
}

static void restore(int fd, int saved) {
  if (saved >= 0) {
    dup2(saved, fd);
    close(saved);
  }
}

int ts_call(int (*cmd_main)(int, char **), int argc, char **argv, const char *out_path,
            const char *err_path) {
  fflush(stdout);
  fflush(stderr);
  int saved_out, saved_err;
  capture(1, out_path, -1, &saved_out);
  const int same = out_path && err_path && strcmp(out_path, err_path) == 0;
  capture(2, err_path, same ? 1 : -1, &saved_err);
  const int rc = cmd_main(argc, argv);
  fflush(stdout);
  fflush(stderr);
  restore(1, saved_out);
  restore(2, saved_err);
  return rc;
}

int ts_python_has(const char *module) {
  return ts_shellf(NULL, 0, "/usr/bin/python3 -c 'import %s' >/dev/null 2>&1", module) == 0;
}
