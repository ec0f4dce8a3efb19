/* tools/cli/gnuplot.c: the temporary directory, quoting and running of gnuplot that the plots
 * of the achilles commands share (gnuplot.h). */
#define _DEFAULT_SOURCE /* mkdtemp */
#include "gnuplot.h"

#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int gp_tempdir(char *dir, size_t dir_sz, const char *name, char *err, size_t err_sz) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, dir_sz, "%s/achilles-%s-XXXXXX", tmp && tmp[0] ? tmp : "/tmp", name);
  if (!mkdtemp(dir)) {
    snprintf(err, err_sz, "%s: %s", dir, strerror(errno));
    return -1;
  }
  return 0;
}

int gp_absolute(char *out, size_t out_sz, const char *path, char *err, size_t err_sz) {
  if (path[0] == '/') {
    snprintf(out, out_sz, "%s", path);
    return 0;
  }
  char cwd[768];
  if (!getcwd(cwd, sizeof cwd)) {
    snprintf(err, err_sz, "getcwd: %s", strerror(errno));
    return -1;
  }
  snprintf(out, out_sz, "%s/%s", cwd, path);
  return 0;
}

FILE *gp_open(const char *dir, const char *name, char *err, size_t err_sz) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (!f) {
    snprintf(err, err_sz, "%s: %s", path, strerror(errno));
  }
  return f;
}

int gp_close(FILE *f, char *err, size_t err_sz) {
  const int bad = ferror(f);
  if (fclose(f) != 0 || bad) {
    snprintf(err, err_sz, "cannot write the plot's data files");
    return -1;
  }
  return 0;
}

void gp_quote(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'') {
      fputc('\'', f);
    }
    fputc(*s, f);
  }
  fputc('\'', f);
}

int gp_run(const char *dir, char *err, size_t err_sz) {
  char script[512];
  snprintf(script, sizeof script, "%s/plot.gp", dir);
  char *argv[] = {"gnuplot", script, NULL};
  pid_t pid;
  const int rc = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
  if (rc != 0) {
    snprintf(err, err_sz, "cannot run gnuplot (%s): install it (Debian: apt-get install gnuplot-nox)",
             strerror(rc));
    return -1;
  }
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      snprintf(err, err_sz, "waitpid: %s", strerror(errno));
      return -1;
    }
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}
