/* tests/tools/scenario_support.c: see scenario_support.h. */
#define _XOPEN_SOURCE 700 /* nftw */
#define _DEFAULT_SOURCE   /* mkdtemp, setenv */
#include "scenario_support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void st_tmpdir(char *out, size_t out_sz, const char *tag) {
  snprintf(out, out_sz, "/tmp/achilles-%s-XXXXXX", tag);
  assert_non_null(mkdtemp(out));
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

void st_rmdir(const char *dir) {
  if (dir && dir[0]) {
    nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
  }
}

void st_write(char *out, size_t out_sz, const char *dir, const char *name, const char *text) {
  snprintf(out, out_sz, "%s/%s", dir, name);
  FILE *f = fopen(out, "w");
  assert_non_null(f);
  assert_true(fputs(text, f) >= 0);
  assert_int_equal(fclose(f), 0);
}

const char *st_slurp(const char *path) {
  static char text[1 << 21];
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
  text[n] = '\0';
  if (f) {
    fclose(f);
  }
  return text;
}

pid_t st_spawn(char *const argv[], const char *out_path, const char *err_path) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    setpgid(0, 0);
    char path[4096];
    snprintf(path, sizeof path, "%s:%s", PD_FIRMWARE_DIR, getenv("PATH") ? getenv("PATH") : "");
    setenv("PATH", path, 1);
    int out = open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path ? err_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    execv(argv[0], argv);
    _exit(127);
  }
  setpgid(pid, pid);
  return pid;
}

int st_wait(pid_t pid, double timeout_s) {
  int status = 0;
  for (double waited = 0;; waited += 0.01) {
    pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) {
      break;
    }
    if (waited > timeout_s) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      fail_msg("%s did not end within %g s", "the command", timeout_s);
    }
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int st_run(char *const argv[], const char *out_path, const char *err_path, double timeout_s) {
  return st_wait(st_spawn(argv, out_path, err_path), timeout_s);
}

cJSON *st_result(const char *dir) {
  char path[1024];
  snprintf(path, sizeof path, "%s/result.json", dir);
  cJSON *r = cJSON_Parse(st_slurp(path));
  if (!r) {
    fail_msg("%s: missing or not JSON", path);
  }
  return r;
}

const char *st_failed_checks(const cJSON *result) {
  static char out[2048];
  out[0] = '\0';
  const cJSON *checks = cJSON_GetObjectItemCaseSensitive(result, "checks");
  for (int i = 0; i < cJSON_GetArraySize(checks); i++) {
    const cJSON *c = cJSON_GetArrayItem(checks, i);
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "pass"))) {
      snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", out[0] ? "|" : "",
               st_string(c, "name"));
    }
  }
  return out;
}

const char *st_string(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

void st_need(const char *tool, const char *why) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
  if (system(cmd) == 0) {
    return;
  }
  const char *ci = getenv("CI");
  if (ci && strcmp(ci, "true") == 0) {
    fail_msg("%s is missing under CI=true (tools/bootstrap.sh installs it): %s", tool, why);
  }
  print_message("%s not found: %s; skipped\n", tool, why);
  skip();
}
