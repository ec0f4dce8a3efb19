/* hil/record/log_write.c: writing the recording log (docs/logs.md): the header from a model and
 * its sensors, then samples, commands, servo and status records, checksummed one per line,
 * buffered and appended so that a crash loses only what came after the last flush; see log.h. */
#include "hil/record/log_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hil/number_format.h"
#include "hil/zmq/json_messages.h"

static void iso_now(char out[40]) {
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  strftime(out, 40, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int hil_log_header_init(hil_log_header *h, const sim_model *m, const sens_set *set) {
  memset(h, 0, sizeof *h);
  h->version = HIL_LOG_VERSION;
  hil__log_copy_name(h->robot, sizeof h->robot, m->name);
  h->rate_hz = 1.0 / m->opt.timestep;
  iso_now(h->started);
  if (m->nu > HIL_LOG_MAX_ACTUATORS) {
    return HIL_LOG_EARG;
  }
  h->nactuators = m->nu;
  for (int i = 0; i < m->nu; i++) {
    hil__log_copy_name(h->actuator[i], HIL_LOG_NAME_MAX, m->actuators[i].name);
  }
  if (!set) {
    return 0;
  }
  h->seed = sens_set_seed(set);
  if (sens_set_count(set) > HIL_LOG_MAX_SENSORS) {
    return HIL_LOG_EARG;
  }
  h->nsensors = sens_set_count(set);
  for (int i = 0; i < h->nsensors; i++) {
    const sens_sensor *s = sens_set_sensor(set, i);
    hil_log_sensor_info *si = &h->sensor[i];
    hil__log_copy_name(si->name, sizeof si->name, s->name);
    hil__log_copy_name(si->type, sizeof si->type, sens_type_name(s->type));
    si->rate_hz = s->rate_hz;
    si->nch = s->nch;
    for (int c = 0; c < s->nch; c++) {
      hil__log_copy_name(si->channel[c], sizeof si->channel[c], s->channel[c]);
      hil__log_copy_name(si->unit[c], sizeof si->unit[c], hil_msg_unit(m, s, c));
    }
  }
  return 0;
}

/* --- writer ---------------------------------------------------------------------------------- */

struct hil_log_writer {
  int fd;
  int error;            /* first error, sticky */
  int sys_errno;        /* errno of the system call that failed first, 0 if none */
  long long records;
  double last_t, last_wall;
  size_t len;           /* bytes in buf */
  size_t llen;          /* bytes in line */
  int overflow;         /* the record did not fit in line */
  char buf[HIL_LOG_BUFFER_BYTES];
  char line[HIL_LOG_LINE_MAX];
};

static void ln_raw(hil_log_writer *w, const char *s, size_t n) {
  if (w->llen + n >= sizeof w->line) {
    w->overflow = 1;
    return;
  }
  memcpy(w->line + w->llen, s, n);
  w->llen += n;
}

static void ln_str(hil_log_writer *w, const char *s) { ln_raw(w, s, strlen(s)); }

/* a JSON string literal: quotes, backslashes and control characters escaped */
static void ln_jstr(hil_log_writer *w, const char *s) {
  ln_raw(w, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    char esc[8];
    if (*p == '"' || *p == '\\') {
      esc[0] = '\\';
      esc[1] = (char)*p;
      ln_raw(w, esc, 2);
    } else if (*p < 0x20) {
      snprintf(esc, sizeof esc, "\\u%04x", *p);
      ln_raw(w, esc, 6);
    } else {
      ln_raw(w, (const char *)p, 1);
    }
  }
  ln_raw(w, "\"", 1);
}

static void ln_num(hil_log_writer *w, double v) {
  char num[HIL_NUM_MAX];
  const int n = hil_num_format(num, v);
  ln_raw(w, num, (size_t)n);
}

static void ln_u64(hil_log_writer *w, uint64_t v) {
  char num[32];
  const int n = snprintf(num, sizeof num, "%llu", (unsigned long long)v);
  ln_raw(w, num, (size_t)n);
}

/* "key": with a leading comma unless first */
static void ln_key(hil_log_writer *w, const char *key, int first) {
  if (!first) {
    ln_raw(w, ",", 1);
  }
  ln_jstr(w, key);
  ln_raw(w, ":", 1);
}

static void ln_begin(hil_log_writer *w, const char *type) {
  w->llen = 0;
  w->overflow = 0;
  ln_str(w, "{\"type\":");
  ln_jstr(w, type);
}

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    const ssize_t k = write(fd, p, n);
    if (k < 0) {
      if (errno == EINTR) {
        continue;
      }
      return HIL_LOG_EIO;
    }
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

int hil_log_flush(hil_log_writer *w) {
  if (!w) {
    return HIL_LOG_EARG;
  }
  if (w->len > 0 && w->error == 0) {
    w->error = write_all(w->fd, w->buf, w->len);
    w->sys_errno = w->error ? errno : 0;
  }
  w->len = 0;
  return w->error;
}

/* closes the record in line, checksums it and appends it to the buffer */
static int ln_end(hil_log_writer *w) {
  ln_raw(w, "}", 1);
  if (w->overflow) {
    return HIL_LOG_EARG; /* this record is lost; the log stays valid */
  }
  const size_t need = 9 + w->llen + 1;
  if (w->len + need > sizeof w->buf && hil_log_flush(w) != 0) {
    return w->error;
  }
  char crc[10];
  snprintf(crc, sizeof crc, "%08x ", (unsigned)hil_crc32(0, w->line, w->llen));
  memcpy(w->buf + w->len, crc, 9);
  memcpy(w->buf + w->len + 9, w->line, w->llen);
  w->buf[w->len + 9 + w->llen] = '\n';
  w->len += need;
  w->records++;
  return w->error;
}

static void ln_header(hil_log_writer *w, const hil_log_header *h) {
  ln_begin(w, "header");
  ln_str(w, ",\"format\":\"achilles-log\",\"version\":");
  ln_u64(w, HIL_LOG_VERSION);
  ln_key(w, "robot", 0);
  ln_jstr(w, h->robot);
  ln_key(w, "rate_hz", 0);
  ln_num(w, h->rate_hz);
  ln_key(w, "seed", 0);
  ln_u64(w, h->seed);
  ln_key(w, "sensors", 0);
  ln_raw(w, "[", 1);
  for (int i = 0; i < h->nsensors; i++) {
    const hil_log_sensor_info *s = &h->sensor[i];
    ln_str(w, i ? ",{" : "{");
    ln_key(w, "name", 1);
    ln_jstr(w, s->name);
    ln_key(w, "type", 0);
    ln_jstr(w, s->type);
    ln_key(w, "channels", 0);
    for (int c = 0; c < s->nch; c++) {
      ln_str(w, c ? "," : "[");
      ln_jstr(w, s->channel[c]);
    }
    ln_str(w, s->nch ? "]" : "[]");
    ln_key(w, "units", 0);
    for (int c = 0; c < s->nch; c++) {
      ln_str(w, c ? "," : "[");
      ln_jstr(w, s->unit[c]);
    }
    ln_str(w, s->nch ? "]" : "[]");
    ln_key(w, "rate_hz", 0);
    ln_num(w, s->rate_hz);
    ln_raw(w, "}", 1);
  }
  ln_str(w, "],\"actuators\":[");
  for (int i = 0; i < h->nactuators; i++) {
    if (i) {
      ln_raw(w, ",", 1);
    }
    ln_jstr(w, h->actuator[i]);
  }
  ln_str(w, "],\"started\":");
  ln_jstr(w, h->started);
}

hil_log_writer *hil_log_open(const char *path, const hil_log_header *h, char *err,
                             size_t err_sz) {
  if (h->nsensors < 0 || h->nsensors > HIL_LOG_MAX_SENSORS || h->nactuators < 0 ||
      h->nactuators > HIL_LOG_MAX_ACTUATORS) {
    snprintf(err, err_sz, "%s: header: bad sensor or actuator count", path);
    return NULL;
  }
  hil_log_writer *w = calloc(1, sizeof *w);
  if (!w) {
    snprintf(err, err_sz, "%s: out of memory", path);
    return NULL;
  }
  w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (w->fd < 0) {
    snprintf(err, err_sz, "%s: %s", path, strerror(errno));
    free(w);
    return NULL;
  }
  w->last_t = NAN;
  w->last_wall = NAN;
  ln_header(w, h);
  if (ln_end(w) != 0 || hil_log_flush(w) != 0) {
    snprintf(err, err_sz, "%s: cannot write the header (%s)", path,
             w->overflow ? "longer than HIL_LOG_LINE_MAX" : strerror(errno));
    close(w->fd);
    free(w);
    return NULL;
  }
  return w;
}

static void ln_times(hil_log_writer *w, double t, double wall) {
  ln_key(w, "t", 0);
  ln_num(w, t);
  ln_key(w, "wall", 0);
  ln_num(w, wall);
  w->last_t = t;
  w->last_wall = wall;
}

int hil_log_write_sample(hil_log_writer *w, const sens_sensor *s, const sens_sample *smp,
                         double wall) {
  char topic[HIL_LOG_NAME_MAX + 16];
  if (hil_msg_topic(topic, sizeof topic, s, 0) < 0) {
    return HIL_LOG_EARG;
  }
  ln_begin(w, "sample");
  ln_key(w, "sensor", 0);
  ln_jstr(w, s->name);
  ln_key(w, "topic", 0);
  ln_jstr(w, topic);
  ln_key(w, "seq", 0);
  ln_u64(w, smp->seq);
  ln_key(w, "t", 0);
  ln_num(w, smp->t);
  ln_key(w, "t_truth", 0);
  ln_num(w, smp->t_truth);
  ln_key(w, "wall", 0);
  ln_num(w, wall);
  w->last_t = smp->t;
  w->last_wall = wall;
  ln_str(w, smp->valid ? ",\"valid\":true" : ",\"valid\":false");
  ln_key(w, "values", 0);
  for (int c = 0; c < s->nch; c++) {
    ln_str(w, c ? "," : "{");
    ln_jstr(w, s->channel[c]);
    ln_raw(w, ":", 1);
    ln_num(w, smp->valid ? smp->meas[c] : NAN);
  }
  ln_str(w, s->nch ? "}" : "{}");
  ln_key(w, "truth", 0);
  for (int c = 0; c < s->nch; c++) {
    ln_str(w, c ? "," : "{");
    ln_jstr(w, s->channel[c]);
    ln_raw(w, ":", 1);
    ln_num(w, smp->truth[c]);
  }
  ln_str(w, s->nch ? "}" : "{}");
  return ln_end(w);
}

int hil_log_write_command(hil_log_writer *w, double t, double wall, const char *source,
                          const char *actuator, double value, const char *result) {
  ln_begin(w, "command");
  ln_times(w, t, wall);
  ln_key(w, "source", 0);
  ln_jstr(w, source);
  ln_key(w, "actuator", 0);
  ln_jstr(w, actuator);
  ln_key(w, "value", 0);
  ln_num(w, value);
  ln_key(w, "result", 0);
  ln_jstr(w, result);
  return ln_end(w);
}

int hil_log_write_servo(hil_log_writer *w, double t, uint64_t step, double wall,
                        const char *actuator, int id, int n, const char *const *names,
                        const uint32_t *values) {
  if (n < 0 || n > HIL_LOG_MAX_REGISTERS) {
    return HIL_LOG_EARG;
  }
  for (int i = 0; i < n; i++) {
    if (strlen(names[i]) >= HIL_LOG_REGISTER_NAME_MAX) {
      return HIL_LOG_EARG;
    }
  }
  ln_begin(w, "servo");
  ln_times(w, t, wall);
  ln_key(w, "step", 0);
  ln_u64(w, step);
  ln_key(w, "actuator", 0);
  ln_jstr(w, actuator);
  ln_key(w, "id", 0);
  ln_u64(w, (uint64_t)(id < 0 ? 0 : id));
  ln_key(w, "registers", 0);
  for (int i = 0; i < n; i++) {
    ln_str(w, i ? "," : "{");
    ln_jstr(w, names[i]);
    ln_raw(w, ":", 1);
    ln_u64(w, values[i]);
  }
  ln_str(w, n ? "}" : "{}");
  return ln_end(w);
}

int hil_log_write_status(hil_log_writer *w, double t, double wall, const char *status_json) {
  if (status_json[0] != '{' || strchr(status_json, '\n') || strchr(status_json, '\r')) {
    return HIL_LOG_EARG;
  }
  ln_begin(w, "status");
  ln_times(w, t, wall);
  ln_key(w, "status", 0);
  ln_str(w, status_json);
  return ln_end(w);
}

long long hil_log_records(const hil_log_writer *w) { return w->records; }
int hil_log_error(const hil_log_writer *w) { return w->error; }
int hil_log_sys_errno(const hil_log_writer *w) { return w->sys_errno; }

int hil_log_close(hil_log_writer **pw) {
  if (!pw || !*pw) {
    return 0;
  }
  hil_log_writer *w = *pw;
  ln_begin(w, "end");
  ln_times(w, w->last_t, w->last_wall);
  ln_key(w, "records", 0);
  ln_u64(w, (uint64_t)(w->records + 1));
  ln_end(w);
  hil_log_flush(w);
  if (fsync(w->fd) != 0 && w->error == 0 && errno != EINVAL) {
    w->error = HIL_LOG_EIO;
    w->sys_errno = errno;
  }
  if (close(w->fd) != 0 && w->error == 0) {
    w->error = HIL_LOG_EIO;
    w->sys_errno = errno;
  }
  const int rc = w->error, sys_errno = w->sys_errno;
  free(w);
  *pw = NULL;
  errno = sys_errno; /* why the first failure failed, for the caller's message */
  return rc;
}
