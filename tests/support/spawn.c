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
    redirect(err_path, O_WRONLY | O_CREAT | O_TRUNC, 2);
    if (in_child) {
      in_child(arg);
    }
    execv(argv[0], argv);
    _exit(127);
  }
  return pid;
}

int ts_reap(pid_t pid, double seconds) {
  const double until = ts_now() + seconds;
  int status = 0;
  for (;;) {
    const pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) {
      return shell_status(status);
    }
    if (got < 0) {
      return -1;
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

int ts_python_has(const char *module) {
  return ts_shellf(NULL, 0, "/usr/bin/python3 -c 'import %s' >/dev/null 2>&1", module) == 0;
}
