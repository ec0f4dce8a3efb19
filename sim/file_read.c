/* sim/file_read.c: opening a file to read, regular files only; see file_read.h. */
#include "sim/file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sim_file_is_stdin_name(const char *path) {
  return strcmp(path, "-") == 0 || strcmp(path, "/dev/stdin") == 0 ||
         strncmp(path, "/dev/fd/", 8) == 0;
}

static const char *file_kind(mode_t mode) {
  return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a named pipe"
       : S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device"
       : S_ISSOCK(mode) ? "a socket" : "not a regular file";
}

static FILE *refuse(const char *path, mode_t mode, int flags, char *err, size_t err_sz) {
  snprintf(err, err_sz, "%s: is %s, not a regular file%s", path, file_kind(mode),
           (flags & SIM_FILE_STDIN) ? " (standard input is read when named -)" : "");
  return NULL;
}

static FILE *cannot_open(const char *path, char *err, size_t err_sz) {
  snprintf(err, err_sz, "%s: cannot open: %s", path, strerror(errno));
  return NULL;
}

/* standard input named on purpose: /dev/stdin and /dev/fd/N are opened as they are (a pipe
 * or a terminal, read as the user asked); a directory is still refused */
static FILE *open_stdin_name(const char *path, const struct stat *st, char *err, size_t err_sz) {
  if (S_ISDIR(st->st_mode)) {
    return refuse(path, st->st_mode, SIM_FILE_STDIN, err, err_sz);
  }
  FILE *f = fopen(path, "rb");
  return f ? f : cannot_open(path, err, err_sz);
}

FILE *sim_file_open(const char *path, int flags, size_t max_bytes, char *err, size_t err_sz) {
  const int stdin_ok = (flags & SIM_FILE_STDIN) != 0;
  if (stdin_ok && strcmp(path, "-") == 0) {
    return stdin;
  }
  struct stat st;
  if (stat(path, &st) != 0) {
    return cannot_open(path, err, err_sz);
  }
  if (stdin_ok && sim_file_is_stdin_name(path)) {
    return open_stdin_name(path, &st, err, err_sz);
  }
  if (!S_ISREG(st.st_mode)) {
    return refuse(path, st.st_mode, flags, err, err_sz);
  }
  /* non-blocking, then the kind once more on the descriptor: what was a file a moment ago may
   * be a FIFO now, and opening a FIFO without a writer blocks */
  const int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    return cannot_open(path, err, err_sz);
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return refuse(path, st.st_mode, flags, err, err_sz);
  }
  if (max_bytes && (unsigned long long)st.st_size > max_bytes) {
    close(fd);
    snprintf(err, err_sz, "%s: %lld bytes, more than the limit of %zu bytes", path,
             (long long)st.st_size, max_bytes);
    return NULL;
  }
  (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return cannot_open(path, err, err_sz);
  }
  return f;
}

void sim_file_close(FILE *f) {
  if (f && f != stdin) {
    fclose(f);
  }
}

/* Reads at most max_bytes (one more tells that the stream is longer). */
static char *read_all(FILE *f, const char *path, size_t max_bytes, size_t *size_out, char *err,
                      size_t err_sz) {
  char *text = NULL;
  size_t size = 0, cap = 0;
  for (;;) {
    if (size + 4096 + 1 > cap) {
      cap = 2 * cap + 8192;
      char *grown = realloc(text, cap);
      if (!grown) {
        free(text);
        snprintf(err, err_sz, "%s: out of memory", path);
        return NULL;
      }
      text = grown;
    }
    const size_t got = fread(text + size, 1, 4096, f);
    size += got;
    if (max_bytes && size > max_bytes) {
      free(text);
      snprintf(err, err_sz, "%s: more than the limit of %zu bytes", path, max_bytes);
      return NULL;
    }
    if (got < 4096) {
      break;
    }
  }
  if (ferror(f)) {
    free(text);
    snprintf(err, err_sz, "%s: read error: %s", path, strerror(errno));
    return NULL;
  }
  text[size] = '\0';
  *size_out = size;
  return text;
}

char *sim_file_read(const char *path, int flags, size_t max_bytes, size_t *size, char *err,
                    size_t err_sz) {
  FILE *f = sim_file_open(path, flags, max_bytes, err, err_sz);
  if (!f) {
    return NULL;
  }
  char *text = read_all(f, path, max_bytes, size, err, err_sz);
  sim_file_close(f);
  return text;
}
