/* tests/support/tmp.c: temporary folders and files (tmp.h). */
#define _GNU_SOURCE /* program_invocation_short_name, nftw's FTW_PHYS */
#include "support/tmp.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void make_under(char *out, size_t out_sz, const char *root, const char *tag) {
  const int n = snprintf(out, out_sz, "%s/achilles-%s-XXXXXX", root, tag);
  if (n < 0 || (size_t)n >= out_sz) {
    fail_msg("temporary folder name for '%s' does not fit in %zu bytes", tag, out_sz);
  }
  if (!mkdtemp(out)) {
    fail_msg("mkdtemp %s: %s", out, strerror(errno));
  }
}

void ts_tmpdir(char *out, size_t out_sz, const char *tag) {
  make_under(out, out_sz, "/tmp", tag);
}

void ts_tmpdir_shm(char *out, size_t out_sz, const char *tag) {
  make_under(out, out_sz, access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", tag);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

int ts_rmtree(const char *path) {
  if (!path || !path[0]) {
    return 0;
  }
  /* depth first (children before their folder), never following links */
  return nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0 || errno == ENOENT ? 0 : -1;
}

static char suite_dir[256];

static int suite_under(const char *root) {
  const int n = snprintf(suite_dir, sizeof suite_dir, "%s/achilles-%s-XXXXXX", root,
                         program_invocation_short_name);
  return n > 0 && (size_t)n < sizeof suite_dir && mkdtemp(suite_dir) ? 0 : -1;
}

int ts_tmp_setup(void **state) {
  (void)state;
  return suite_under("/tmp");
}

int ts_tmp_setup_shm(void **state) {
  (void)state;
  return suite_under(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
}

int ts_tmp_teardown(void **state) {
  (void)state;
  const int rc = ts_rmtree(suite_dir);
  suite_dir[0] = '\0';
  return rc;
}

const char *ts_tmp_dir(void) {
  if (!suite_dir[0]) {
    fail_msg("no suite folder: the suite's group setup must call ts_tmp_setup");
  }
  return suite_dir;
}

void ts_path(char *out, size_t out_sz, const char *dir, const char *name) {
  const int n = snprintf(out, out_sz, "%s/%s", dir, name);
  if (n < 0 || (size_t)n >= out_sz) {
    fail_msg("path %s/%s does not fit in %zu bytes", dir, name, out_sz);
  }
}

void ts_tmp_path(char *out, size_t out_sz, const char *name) {
  ts_path(out, out_sz, ts_tmp_dir(), name);
}

void ts_tmp_ipc(char *out, size_t out_sz, const char *name) {
  char path[512];
  ts_tmp_path(path, sizeof path, name);
  if (snprintf(out, out_sz, "ipc://%s", path) >= (int)out_sz) {
    fail_msg("ipc://%s does not fit in %zu bytes", path, out_sz);
  }
}

void ts_write_bytes(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    fail_msg("cannot write %s: %s", path, strerror(errno));
  }
  const size_t wrote = fwrite(data, 1, n, f);
  if (fclose(f) != 0 || wrote != n) {
    fail_msg("writing %s: %zu of %zu bytes", path, wrote, n);
  }
}

void ts_write_file(const char *path, const char *text) {
  ts_write_bytes(path, text, strlen(text));
}

void ts_write_temp(char *tmpl, const char *text) {
  const int fd = mkstemp(tmpl);
  if (fd < 0) {
    fail_msg("mkstemp %s: %s", tmpl, strerror(errno));
  }
  close(fd);
  ts_write_file(tmpl, text);
}

char *ts_read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    return NULL;
  }
  size_t cap = 4096, len = 0;
  char *text = malloc(cap);
  while (text) {
    len += fread(text + len, 1, cap - 1 - len, f);
    if (len < cap - 1) {
      break;
    }
    char *bigger = realloc(text, cap * 2);
    if (!bigger) {
      free(text);
      text = NULL;
      break;
    }
    text = bigger;
    cap *= 2;
  }
  const int failed = ferror(f);
  fclose(f);
  if (!text || failed) {
    free(text);
    return NULL;
  }
  text[len] = '\0';
  if (n) {
    *n = len;
  }
  return text;
}

char *ts_slurp(const char *path) {
  static char text[1 << 20];
  FILE *f = fopen(path, "rb");
  const size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
  text[n] = '\0';
  if (f) {
    fclose(f);
  }
  return text;
}

int ts_count_lines(const char *text) {
  int n = 0;
  for (const char *c = text; *c; c++) {
    n += *c == '\n';
  }
  return n;
}

int ts_file_lines(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fail_msg("cannot read %s", path);
  }
  int n = 0, c;
  while ((c = fgetc(f)) != EOF) {
    n += c == '\n';
  }
  fclose(f);
  return n;
}

long ts_line_offset(const char *path, int line) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fail_msg("cannot read %s", path);
  }
  long off = 0;
  int at = 1, c;
  while (at < line && (c = fgetc(f)) != EOF) {
    off++;
    at += c == '\n';
  }
  fclose(f);
  return off;
}
