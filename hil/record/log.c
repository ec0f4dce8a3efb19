/* hil/record/log.c: the recording log (docs/logs.md): a line-based, checksummed, append-only format
 * that survives a crash, its reader, and the import of CSV logs as series. */
#include "hil/record/log.h"

#include "sim/file_read.h"
#include "sim/json_read.h" /* sim_json_utf8_valid_prefix */

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "hil/number_format.h"
#include "hil/zmq/json_messages.h"

/* --- CRC-32 ---------------------------------------------------------------------------------- */

/* CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) of every byte value: the table of
 * zlib's crc32, constant so that the writer and reader share no mutable state */
static const uint32_t crc_table[256] = {
    0x00000000u, 0x77073096u, 0xEE0E612Cu, 0x990951BAu, 0x076DC419u, 0x706AF48Fu,
    0xE963A535u, 0x9E6495A3u, 0x0EDB8832u, 0x79DCB8A4u, 0xE0D5E91Eu, 0x97D2D988u,
    0x09B64C2Bu, 0x7EB17CBDu, 0xE7B82D07u, 0x90BF1D91u, 0x1DB71064u, 0x6AB020F2u,
    0xF3B97148u, 0x84BE41DEu, 0x1ADAD47Du, 0x6DDDE4EBu, 0xF4D4B551u, 0x83D385C7u,
    0x136C9856u, 0x646BA8C0u, 0xFD62F97Au, 0x8A65C9ECu, 0x14015C4Fu, 0x63066CD9u,
    0xFA0F3D63u, 0x8D080DF5u, 0x3B6E20C8u, 0x4C69105Eu, 0xD56041E4u, 0xA2677172u,
    0x3C03E4D1u, 0x4B04D447u, 0xD20D85FDu, 0xA50AB56Bu, 0x35B5A8FAu, 0x42B2986Cu,
    0xDBBBC9D6u, 0xACBCF940u, 0x32D86CE3u, 0x45DF5C75u, 0xDCD60DCFu, 0xABD13D59u,
    0x26D930ACu, 0x51DE003Au, 0xC8D75180u, 0xBFD06116u, 0x21B4F4B5u, 0x56B3C423u,
    0xCFBA9599u, 0xB8BDA50Fu, 0x2802B89Eu, 0x5F058808u, 0xC60CD9B2u, 0xB10BE924u,
    0x2F6F7C87u, 0x58684C11u, 0xC1611DABu, 0xB6662D3Du, 0x76DC4190u, 0x01DB7106u,
    0x98D220BCu, 0xEFD5102Au, 0x71B18589u, 0x06B6B51Fu, 0x9FBFE4A5u, 0xE8B8D433u,
    0x7807C9A2u, 0x0F00F934u, 0x9609A88Eu, 0xE10E9818u, 0x7F6A0DBBu, 0x086D3D2Du,
    0x91646C97u, 0xE6635C01u, 0x6B6B51F4u, 0x1C6C6162u, 0x856530D8u, 0xF262004Eu,
    0x6C0695EDu, 0x1B01A57Bu, 0x8208F4C1u, 0xF50FC457u, 0x65B0D9C6u, 0x12B7E950u,
    0x8BBEB8EAu, 0xFCB9887Cu, 0x62DD1DDFu, 0x15DA2D49u, 0x8CD37CF3u, 0xFBD44C65u,
    0x4DB26158u, 0x3AB551CEu, 0xA3BC0074u, 0xD4BB30E2u, 0x4ADFA541u, 0x3DD895D7u,
    0xA4D1C46Du, 0xD3D6F4FBu, 0x4369E96Au, 0x346ED9FCu, 0xAD678846u, 0xDA60B8D0u,
    0x44042D73u, 0x33031DE5u, 0xAA0A4C5Fu, 0xDD0D7CC9u, 0x5005713Cu, 0x270241AAu,
    0xBE0B1010u, 0xC90C2086u, 0x5768B525u, 0x206F85B3u, 0xB966D409u, 0xCE61E49Fu,
    0x5EDEF90Eu, 0x29D9C998u, 0xB0D09822u, 0xC7D7A8B4u, 0x59B33D17u, 0x2EB40D81u,
    0xB7BD5C3Bu, 0xC0BA6CADu, 0xEDB88320u, 0x9ABFB3B6u, 0x03B6E20Cu, 0x74B1D29Au,
    0xEAD54739u, 0x9DD277AFu, 0x04DB2615u, 0x73DC1683u, 0xE3630B12u, 0x94643B84u,
    0x0D6D6A3Eu, 0x7A6A5AA8u, 0xE40ECF0Bu, 0x9309FF9Du, 0x0A00AE27u, 0x7D079EB1u,
    0xF00F9344u, 0x8708A3D2u, 0x1E01F268u, 0x6906C2FEu, 0xF762575Du, 0x806567CBu,
    0x196C3671u, 0x6E6B06E7u, 0xFED41B76u, 0x89D32BE0u, 0x10DA7A5Au, 0x67DD4ACCu,
    0xF9B9DF6Fu, 0x8EBEEFF9u, 0x17B7BE43u, 0x60B08ED5u, 0xD6D6A3E8u, 0xA1D1937Eu,
    0x38D8C2C4u, 0x4FDFF252u, 0xD1BB67F1u, 0xA6BC5767u, 0x3FB506DDu, 0x48B2364Bu,
    0xD80D2BDAu, 0xAF0A1B4Cu, 0x36034AF6u, 0x41047A60u, 0xDF60EFC3u, 0xA867DF55u,
    0x316E8EEFu, 0x4669BE79u, 0xCB61B38Cu, 0xBC66831Au, 0x256FD2A0u, 0x5268E236u,
    0xCC0C7795u, 0xBB0B4703u, 0x220216B9u, 0x5505262Fu, 0xC5BA3BBEu, 0xB2BD0B28u,
    0x2BB45A92u, 0x5CB36A04u, 0xC2D7FFA7u, 0xB5D0CF31u, 0x2CD99E8Bu, 0x5BDEAE1Du,
    0x9B64C2B0u, 0xEC63F226u, 0x756AA39Cu, 0x026D930Au, 0x9C0906A9u, 0xEB0E363Fu,
    0x72076785u, 0x05005713u, 0x95BF4A82u, 0xE2B87A14u, 0x7BB12BAEu, 0x0CB61B38u,
    0x92D28E9Bu, 0xE5D5BE0Du, 0x7CDCEFB7u, 0x0BDBDF21u, 0x86D3D2D4u, 0xF1D4E242u,
    0x68DDB3F8u, 0x1FDA836Eu, 0x81BE16CDu, 0xF6B9265Bu, 0x6FB077E1u, 0x18B74777u,
    0x88085AE6u, 0xFF0F6A70u, 0x66063BCAu, 0x11010B5Cu, 0x8F659EFFu, 0xF862AE69u,
    0x616BFFD3u, 0x166CCF45u, 0xA00AE278u, 0xD70DD2EEu, 0x4E048354u, 0x3903B3C2u,
    0xA7672661u, 0xD06016F7u, 0x4969474Du, 0x3E6E77DBu, 0xAED16A4Au, 0xD9D65ADCu,
    0x40DF0B66u, 0x37D83BF0u, 0xA9BCAE53u, 0xDEBB9EC5u, 0x47B2CF7Fu, 0x30B5FFE9u,
    0xBDBDF21Cu, 0xCABAC28Au, 0x53B39330u, 0x24B4A3A6u, 0xBAD03605u, 0xCDD70693u,
    0x54DE5729u, 0x23D967BFu, 0xB3667A2Eu, 0xC4614AB8u, 0x5D681B02u, 0x2A6F2B94u,
    0xB40BBE37u, 0xC30C8EA1u, 0x5A05DF1Bu, 0x2D02EF8Du,
};

uint32_t hil_crc32(uint32_t crc, const void *data, size_t n) {
  const unsigned char *p = data;
  crc = ~crc;
  for (size_t i = 0; i < n; i++) {
    crc = crc_table[(crc ^ p[i]) & 0xFFu] ^ (crc >> 8);
  }
  return ~crc;
}

/* --- header ---------------------------------------------------------------------------------- */

static int copy_name(char *dst, size_t dst_sz, const char *src) {
  const size_t n = strlen(src);
  if (n >= dst_sz) {
    return HIL_LOG_EARG;
  }
  memcpy(dst, src, n + 1);
  return 0;
}

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
  copy_name(h->robot, sizeof h->robot, m->name);
  h->rate_hz = 1.0 / m->opt.timestep;
  iso_now(h->started);
  if (m->nu > HIL_LOG_MAX_ACTUATORS) {
    return HIL_LOG_EARG;
  }
  h->nactuators = m->nu;
  for (int i = 0; i < m->nu; i++) {
    copy_name(h->actuator[i], HIL_LOG_NAME_MAX, m->actuators[i].name);
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
    copy_name(si->name, sizeof si->name, s->name);
    copy_name(si->type, sizeof si->type, sens_type_name(s->type));
    si->rate_hz = s->rate_hz;
    si->nch = s->nch;
    for (int c = 0; c < s->nch; c++) {
      copy_name(si->channel[c], sizeof si->channel[c], s->channel[c]);
      copy_name(si->unit[c], sizeof si->unit[c], hil_msg_unit(m, s, c));
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

/* --- reader ---------------------------------------------------------------------------------- */

struct hil_log_reader {
  FILE *f;
  char path[256];
  char *line;
  size_t cap;
  long long index;   /* records read (lines) */
  long long offset;  /* byte offset of the next line */
  int saw_end;
  int done;
  cJSON *json;       /* the last parsed record */
  char *text;        /* its JSON text (for status and end records) */
  hil_log_header header;
};

static int rd_fail(const hil_log_reader *r, long long index, long long offset, int code,
                   char *err, size_t err_sz, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

static int rd_fail(const hil_log_reader *r, long long index, long long offset, int code,
                   char *err, size_t err_sz, const char *fmt, ...) {
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(err, err_sz, "%s: record %lld at byte %lld: %s", r->path, index, offset, what);
  return code;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  return -1;
}

/* reads the next line, checks framing and checksum and parses its JSON into r->json.
 * 1: a record; 0: end of file; < 0: error. */
static int rd_line(hil_log_reader *r, long long *index, long long *offset, char *err,
                   size_t err_sz) {
  cJSON_Delete(r->json);
  r->json = NULL;
  if (r->done) {
    return 0;
  }
  errno = 0;
  const ssize_t n = getline(&r->line, &r->cap, r->f);
  *index = ++r->index;
  *offset = r->offset;
  if (n < 0) {
    r->done = 1;
    if (ferror(r->f)) {
      return rd_fail(r, *index, *offset, HIL_LOG_EIO, err, err_sz, "read error: %s",
                     strerror(errno));
    }
    r->index--;
    return 0;
  }
  r->offset += n;
  if (r->line[n - 1] != '\n') {
    r->done = 1;
    return rd_fail(r, *index, *offset, HIL_LOG_ETRUNC, err, err_sz,
                   "truncated record (%lld bytes, no end of line): the log was cut here",
                   (long long)n);
  }
  if (n > HIL_LOG_LINE_MAX + 10) {
    return rd_fail(r, *index, *offset, HIL_LOG_EFORMAT, err, err_sz,
                   "record too long (%lld bytes)", (long long)n);
  }
  uint32_t stored = 0;
  int ok = n >= 11 && r->line[8] == ' ';
  for (int i = 0; ok && i < 8; i++) {
    const int h = hexval(r->line[i]);
    ok = h >= 0;
    stored = (stored << 4) | (uint32_t)(h < 0 ? 0 : h);
  }
  if (!ok) {
    return rd_fail(r, *index, *offset, HIL_LOG_EFORMAT, err, err_sz,
                   "expected 8 lowercase hex digits of CRC-32, a space and a JSON object");
  }
  r->line[n - 1] = '\0';
  const char *text = r->line + 9;
  const size_t len = (size_t)n - 10;
  const uint32_t crc = hil_crc32(0, text, len);
  if (crc != stored) {
    return rd_fail(r, *index, *offset, HIL_LOG_ECRC, err, err_sz,
                   "CRC mismatch (stored %08x, computed %08x)", (unsigned)stored,
                   (unsigned)crc);
  }
  const size_t utf8_ok = sim_json_utf8_valid_prefix(text);
  if (utf8_ok < len && strlen(text) == len) { /* names reach JSON that readers must decode */
    return rd_fail(r, *index, *offset, HIL_LOG_EFORMAT, err, err_sz,
                   "the checksum matches but the text is not valid UTF-8 (byte %zu of the JSON text)",
                   utf8_ok);
  }
  r->json = strlen(text) == len ? cJSON_ParseWithOpts(text, NULL, 1) : NULL;
  if (!cJSON_IsObject(r->json)) {
    return rd_fail(r, *index, *offset, HIL_LOG_EFORMAT, err, err_sz,
                   "the checksum matches but the text is not a JSON object");
  }
  r->text = r->line + 9;
  return 1;
}

static double num_or_nan(const cJSON *item) {
  return cJSON_IsNumber(item) ? item->valuedouble : NAN;
}

static int get_str(char *out, size_t out_sz, const cJSON *obj, const char *key) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsString(s) || strlen(s->valuestring) >= out_sz) {
    return -1;
  }
  memcpy(out, s->valuestring, strlen(s->valuestring) + 1);
  return 0;
}

static int get_num(double *out, const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  *out = num_or_nan(v);
  return cJSON_IsNumber(v) || cJSON_IsNull(v) ? 0 : -1;
}

static int parse_sensor_info(hil_log_sensor_info *s, const cJSON *o) {
  const cJSON *ch = cJSON_GetObjectItemCaseSensitive(o, "channels");
  const cJSON *un = cJSON_GetObjectItemCaseSensitive(o, "units");
  if (!cJSON_IsObject(o) || get_str(s->name, sizeof s->name, o, "name") ||
      get_str(s->type, sizeof s->type, o, "type") || get_num(&s->rate_hz, o, "rate_hz") ||
      !cJSON_IsArray(ch) || !cJSON_IsArray(un) ||
      cJSON_GetArraySize(ch) != cJSON_GetArraySize(un) ||
      cJSON_GetArraySize(ch) > SENS_MAX_CHANNELS) {
    return -1;
  }
  s->nch = cJSON_GetArraySize(ch);
  for (int c = 0; c < s->nch; c++) {
    const cJSON *a = cJSON_GetArrayItem(ch, c), *u = cJSON_GetArrayItem(un, c);
    if (!cJSON_IsString(a) || !cJSON_IsString(u) ||
        copy_name(s->channel[c], sizeof s->channel[c], a->valuestring) ||
        copy_name(s->unit[c], sizeof s->unit[c], u->valuestring)) {
      return -1;
    }
  }
  return 0;
}

/* the header record's fields; returns the name of the bad key, NULL when all are good */
static const char *parse_header(hil_log_header *h, const cJSON *j) {
  char format[32], type[16];
  memset(h, 0, sizeof *h);
  if (get_str(type, sizeof type, j, "type") || strcmp(type, "header") != 0) {
    return "type (the first record must be the header)";
  }
  if (get_str(format, sizeof format, j, "format") || strcmp(format, "achilles-log") != 0) {
    return "format (expected \"achilles-log\")";
  }
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "version");
  if (!cJSON_IsNumber(v) || v->valuedouble != HIL_LOG_VERSION) {
    return "version (this reader reads version 1)";
  }
  h->version = HIL_LOG_VERSION;
  const cJSON *seed = cJSON_GetObjectItemCaseSensitive(j, "seed");
  if (get_str(h->robot, sizeof h->robot, j, "robot")) {
    return "robot";
  }
  if (get_num(&h->rate_hz, j, "rate_hz")) {
    return "rate_hz";
  }
  if (!cJSON_IsNumber(seed) || seed->valuedouble < 0) {
    return "seed";
  }
  h->seed = (uint64_t)seed->valuedouble;
  const cJSON *sensors = cJSON_GetObjectItemCaseSensitive(j, "sensors");
  if (!cJSON_IsArray(sensors) || cJSON_GetArraySize(sensors) > HIL_LOG_MAX_SENSORS) {
    return "sensors";
  }
  h->nsensors = cJSON_GetArraySize(sensors);
  for (int i = 0; i < h->nsensors; i++) {
    if (parse_sensor_info(&h->sensor[i], cJSON_GetArrayItem(sensors, i))) {
      return "sensors[]";
    }
  }
  const cJSON *act = cJSON_GetObjectItemCaseSensitive(j, "actuators");
  if (!cJSON_IsArray(act) || cJSON_GetArraySize(act) > HIL_LOG_MAX_ACTUATORS) {
    return "actuators";
  }
  h->nactuators = cJSON_GetArraySize(act);
  for (int i = 0; i < h->nactuators; i++) {
    const cJSON *a = cJSON_GetArrayItem(act, i);
    if (!cJSON_IsString(a) || copy_name(h->actuator[i], HIL_LOG_NAME_MAX, a->valuestring)) {
      return "actuators[]";
    }
  }
  if (get_str(h->started, sizeof h->started, j, "started")) {
    return "started";
  }
  return NULL;
}

FILE *hil_log_open_input(const char *path, char *err, size_t err_sz) {
  return sim_file_open(path, 0, 0, err, err_sz); /* the one check of every reader */
}

hil_log_reader *hil_log_reader_open(const char *path, char *err, size_t err_sz) {
  hil_log_reader *r = calloc(1, sizeof *r);
  if (!r) {
    snprintf(err, err_sz, "%s: out of memory", path);
    return NULL;
  }
  snprintf(r->path, sizeof r->path, "%s", path);
  r->f = hil_log_open_input(path, err, err_sz);
  if (!r->f) {
    free(r);
    return NULL;
  }
  long long index, offset;
  const int rc = rd_line(r, &index, &offset, err, err_sz);
  const char *bad = NULL;
  if (rc == 0) {
    rd_fail(r, 1, 0, HIL_LOG_EFORMAT, err, err_sz, "empty file: no header record");
  } else if (rc > 0 && (bad = parse_header(&r->header, r->json)) != NULL) {
    rd_fail(r, index, offset, HIL_LOG_EFORMAT, err, err_sz, "header: bad or missing key %s",
            bad);
  }
  if (rc <= 0 || bad) {
    hil_log_reader_close(&r);
    return NULL;
  }
  return r;
}

const hil_log_header *hil_log_reader_header(const hil_log_reader *r) { return &r->header; }
int hil_log_reader_saw_end(const hil_log_reader *r) { return r->saw_end; }

static int parse_values(hil_log_record *rec, const cJSON *values, const cJSON *truth) {
  rec->nch = 0;
  for (const cJSON *c = values ? values->child : NULL; c; c = c->next) {
    if (rec->nch >= SENS_MAX_CHANNELS || !(cJSON_IsNumber(c) || cJSON_IsNull(c)) ||
        copy_name(rec->channel[rec->nch], SENS_CHANNEL_NAME_MAX, c->string)) {
      return -1;
    }
    rec->value[rec->nch] = num_or_nan(c);
    rec->truth[rec->nch] = num_or_nan(cJSON_GetObjectItemCaseSensitive(truth, c->string));
    rec->nch++;
  }
  return 0;
}

static const char *parse_sample(hil_log_record *rec, const cJSON *j) {
  const cJSON *seq = cJSON_GetObjectItemCaseSensitive(j, "seq");
  const cJSON *valid = cJSON_GetObjectItemCaseSensitive(j, "valid");
  const cJSON *values = cJSON_GetObjectItemCaseSensitive(j, "values");
  const cJSON *truth = cJSON_GetObjectItemCaseSensitive(j, "truth");
  if (get_str(rec->sensor, sizeof rec->sensor, j, "sensor")) {
    return "sensor";
  }
  if (get_str(rec->topic, sizeof rec->topic, j, "topic")) {
    return "topic";
  }
  if (!cJSON_IsNumber(seq) || seq->valuedouble < 0) {
    return "seq";
  }
  rec->seq = (uint64_t)seq->valuedouble;
  if (get_num(&rec->t_truth, j, "t_truth")) {
    return "t_truth";
  }
  if (!cJSON_IsBool(valid)) {
    return "valid";
  }
  rec->valid = cJSON_IsTrue(valid);
  if (!cJSON_IsObject(values) || (truth && !cJSON_IsObject(truth)) ||
      parse_values(rec, values, truth)) {
    return "values";
  }
  return NULL;
}

static const char *parse_command(hil_log_record *rec, const cJSON *j) {
  if (get_str(rec->source, sizeof rec->source, j, "source")) {
    return "source";
  }
  if (get_str(rec->actuator, sizeof rec->actuator, j, "actuator")) {
    return "actuator";
  }
  if (get_num(&rec->command, j, "value")) {
    return "value";
  }
  if (get_str(rec->result, sizeof rec->result, j, "result")) {
    return "result";
  }
  return NULL;
}

int hil_log_next(hil_log_reader *r, hil_log_record *rec, char *err, size_t err_sz) {
  long long index, offset;
  const int rc = rd_line(r, &index, &offset, err, err_sz);
  if (rc <= 0) {
    return rc;
  }
  memset(rec, 0, sizeof *rec);
  rec->index = index;
  rec->offset = offset;
  char type[16];
  const cJSON *j = r->json;
  const char *bad = NULL;
  if (get_str(type, sizeof type, j, "type")) {
    bad = "type";
  } else if (get_num(&rec->t, j, "t")) {
    bad = "t";
  } else if (get_num(&rec->wall, j, "wall")) {
    bad = "wall";
  } else if (strcmp(type, "sample") == 0) {
    rec->type = HIL_LOG_SAMPLE;
    bad = parse_sample(rec, j);
  } else if (strcmp(type, "command") == 0) {
    rec->type = HIL_LOG_COMMAND;
    bad = parse_command(rec, j);
  } else if (strcmp(type, "status") == 0) {
    rec->type = HIL_LOG_STATUS;
  } else if (strcmp(type, "end") == 0) {
    rec->type = HIL_LOG_END;
    r->saw_end = 1;
  } else {
    return rd_fail(r, index, offset, HIL_LOG_EFORMAT, err, err_sz, "unknown record type \"%s\"",
                   type);
  }
  if (bad) {
    return rd_fail(r, index, offset, HIL_LOG_EFORMAT, err, err_sz, "bad or missing key %s",
                   bad);
  }
  if (rec->type == HIL_LOG_SAMPLE && !isfinite(rec->t)) { /* a sample is at a time */
    return rd_fail(r, index, offset, HIL_LOG_EFORMAT, err, err_sz,
                   "t is not a number (a sample needs its simulation time)");
  }
  rec->json = r->text;
  return 1;
}

void hil_log_reader_close(hil_log_reader **pr) {
  if (!pr || !*pr) {
    return;
  }
  hil_log_reader *r = *pr;
  cJSON_Delete(r->json);
  if (r->f) {
    fclose(r->f);
  }
  free(r->line);
  free(r);
  *pr = NULL;
}

/* --- series ---------------------------------------------------------------------------------- */

static int series_push(hil_series *s, size_t *cap, double t, double v, double truth,
                       int with_truth) {
  if (s->n == *cap) {
    const size_t ncap = *cap ? 2 * *cap : 4096;
    double *nt = realloc(s->t, ncap * sizeof *nt);
    if (nt) {
      s->t = nt;
    }
    double *nv = realloc(s->v, ncap * sizeof *nv);
    if (nv) {
      s->v = nv;
    }
    double *ntr = with_truth ? realloc(s->truth, ncap * sizeof *ntr) : NULL;
    if (ntr) {
      s->truth = ntr;
    }
    if (!nt || !nv || (with_truth && !ntr)) {
      return HIL_LOG_EIO;
    }
    *cap = ncap;
  }
  s->t[s->n] = t;
  s->v[s->n] = v;
  if (with_truth) {
    s->truth[s->n] = truth;
  }
  s->n++;
  return 0;
}

/* 1 when the header lists the record's sensor with the record's channels, in order */
static int series_matches_header(const hil_log_header *h, const hil_log_record *rec) {
  for (int i = 0; i < h->nsensors; i++) {
    if (strcmp(h->sensor[i].name, rec->sensor) != 0) {
      continue;
    }
    if (h->sensor[i].nch != rec->nch) {
      return 0;
    }
    for (int c = 0; c < rec->nch; c++) {
      if (strcmp(h->sensor[i].channel[c], rec->channel[c]) != 0) {
        return 0;
      }
    }
    return 1;
  }
  return 0;
}

static int series_from_log(hil_series *s, const char *path, const char *sensor,
                           const char *channel, char *err, size_t err_sz) {
  hil_log_reader *r = hil_log_reader_open(path, err, err_sz);
  if (!r) {
    return HIL_LOG_EFORMAT;
  }
  const hil_log_header *h = &r->header;
  int ch = -1;
  for (int i = 0; i < h->nsensors && ch < 0; i++) {
    if (strcmp(h->sensor[i].name, sensor) != 0) {
      continue;
    }
    for (int c = 0; c < h->sensor[i].nch; c++) {
      if (strcmp(h->sensor[i].channel[c], channel) == 0) {
        ch = c;
        snprintf(s->unit, sizeof s->unit, "%s", h->sensor[i].unit[c]);
        snprintf(s->type, sizeof s->type, "%s", h->sensor[i].type);
        s->rate_hz = h->sensor[i].rate_hz;
      }
    }
  }
  if (ch < 0) {
    /* name what there is */
    char list[256] = "";
    int si = -1;
    for (int i = 0; i < h->nsensors; i++) {
      si = strcmp(h->sensor[i].name, sensor) == 0 ? i : si;
    }
    const int n = si >= 0 ? h->sensor[si].nch : h->nsensors;
    for (int i = 0; i < n; i++) {
      const size_t used = strlen(list);
      snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
               si >= 0 ? h->sensor[si].channel[i] : h->sensor[i].name);
    }
    if (si >= 0) {
      snprintf(err, err_sz, "%s: sensor \"%s\" has no channel \"%s\" (channels: %s)", path,
               sensor, channel, list);
    } else {
      snprintf(err, err_sz, "%s: the header lists no sensor \"%s\" (sensors: %s)", path, sensor,
               n ? list : "none");
    }
    hil_log_reader_close(&r);
    return HIL_LOG_ENOTFOUND;
  }
  hil_log_record *rec = malloc(sizeof *rec);
  size_t cap = 0;
  int rc = rec ? 0 : HIL_LOG_EIO;
  char msg[512];
  while (rc == 0) {
    const int k = hil_log_next(r, rec, msg, sizeof msg);
    if (k == 0) {
      break;
    }
    if (k < 0) {
      if (s->skipped++ == 0) {
        snprintf(s->warning, sizeof s->warning, "%s", msg);
      }
      if (k == HIL_LOG_EIO) {
        rc = k;
        snprintf(err, err_sz, "%s", msg);
      }
      continue;
    }
    if (rec->type == HIL_LOG_SAMPLE && !series_matches_header(h, rec)) {
      /* what replay calls damage is counted here too, not skipped in silence */
      snprintf(msg, sizeof msg, "%s: record %lld at byte %lld: sample of \"%s\" does not match "
               "the header's sensors and channels", path, rec->index, rec->offset, rec->sensor);
      if (s->skipped++ == 0) {
        snprintf(s->warning, sizeof s->warning, "%s", msg);
      }
      continue;
    }
    if (rec->type != HIL_LOG_SAMPLE || strcmp(rec->sensor, sensor) != 0 || !rec->valid ||
        ch >= rec->nch || !isfinite(rec->value[ch])) {
      continue;
    }
    rc = series_push(s, &cap, rec->t, rec->value[ch], rec->truth[ch], 1);
    if (rc) {
      snprintf(err, err_sz, "%s: out of memory", path);
    }
  }
  s->end_missing = !hil_log_reader_saw_end(r);
  free(rec);
  hil_log_reader_close(&r);
  return rc;
}

int hil_csv_split(char *line, char **field, int max) {
  int n = 0;
  char *p = line;
  for (;;) {
    char *comma = strchr(p, ',');
    if (comma) {
      *comma = '\0';
    }
    while (*p == ' ' || *p == '\t') {
      p++;
    }
    char *e = p + strlen(p);
    while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n')) {
      *--e = '\0';
    }
    if (n < max) {
      field[n] = p;
    }
    n++;
    if (!comma) {
      return n;
    }
    p = comma + 1;
  }
}

#define CSV_MAX_COLUMNS 1024

/* "" → NaN (missing), else a finite number; -1 when the cell is not a number */
static int csv_cell(const char *cell, double *out) {
  if (!cell[0]) {
    *out = NAN;
    return 0;
  }
  char *end;
  errno = 0;
  *out = strtod(cell, &end);
  return (*end != '\0' || errno == ERANGE || !isfinite(*out)) ? -1 : 0;
}

typedef struct csv_cols {
  int time, value, truth, n;
} csv_cols;

static int csv_header(csv_cols *c, char **field, char *line, const char *path, const char *want,
                      char *err, size_t err_sz) {
  c->n = hil_csv_split(line, field, CSV_MAX_COLUMNS);
  c->time = c->value = c->truth = -1;
  if (c->n > CSV_MAX_COLUMNS) {
    snprintf(err, err_sz, "%s: line 1: more than %d columns", path, CSV_MAX_COLUMNS);
    return HIL_LOG_EFORMAT;
  }
  if (strcmp(field[0], "time") != 0) {
    snprintf(err, err_sz, "%s: line 1: the first column must be \"time\" (got \"%s\")", path,
             field[0]);
    return HIL_LOG_EFORMAT;
  }
  const size_t wl = strlen(want);
  for (int i = 0; i < c->n; i++) {
    const size_t utf8_ok = sim_json_utf8_valid_prefix(field[i]);
    if (field[i][utf8_ok]) {
      snprintf(err, err_sz, "%s: line 1: column %d: name is not valid UTF-8 (at byte %zu)", path,
               i + 1, utf8_ok);
      return HIL_LOG_EFORMAT;
    }
    if (!field[i][0]) {
      snprintf(err, err_sz, "%s: line 1: column %d has no name", path, i + 1);
      return HIL_LOG_EFORMAT;
    }
    for (int k = 0; k < i; k++) {
      if (strcmp(field[k], field[i]) == 0) {
        snprintf(err, err_sz, "%s: line 1: column \"%s\" appears twice (columns %d and %d)",
                 path, field[i], k + 1, i + 1);
        return HIL_LOG_EFORMAT;
      }
    }
    if (strncmp(field[i], want, wl) == 0) {
      const char *rest = field[i] + wl;
      if (!rest[0] || strcmp(rest, ".meas") == 0) {
        c->value = i;
      } else if (strcmp(rest, ".true") == 0) {
        c->truth = i;
      }
    }
  }
  c->time = 0;
  if (c->value < 0) {
    snprintf(err, err_sz, "%s: line 1: no column \"%s\" (or \"%s.meas\")", path, want, want);
    return HIL_LOG_ENOTFOUND;
  }
  return 0;
}

static int series_from_csv(hil_series *s, FILE *f, const char *path, const char *sensor,
                           const char *channel, char *err, size_t err_sz) {
  char want[2 * HIL_LOG_NAME_MAX];
  snprintf(want, sizeof want, "%s.%s", sensor, channel);
  char *line = NULL;
  size_t lcap = 0, cap = 0;
  csv_cols c;
  int rc = 0;
  long long lineno = 1;
  double t_prev = -INFINITY;
  if (getline(&line, &lcap, f) < 0) {
    snprintf(err, err_sz, "%s: empty file (expected a header line \"time,...\")", path);
    free(line);
    return HIL_LOG_EFORMAT;
  }
  char **field = malloc(CSV_MAX_COLUMNS * sizeof *field);
  rc = field ? csv_header(&c, field, line, path, want, err, err_sz) : HIL_LOG_EIO;
  while (rc == 0 && getline(&line, &lcap, f) >= 0) {
    lineno++;
    if (line[0] == '\n' || (line[0] == '\r' && line[1] == '\n')) {
      continue; /* blank line */
    }
    const int n = hil_csv_split(line, field, CSV_MAX_COLUMNS);
    if (n != c.n) {
      snprintf(err, err_sz, "%s: line %lld: expected %d fields as in the header, got %d", path,
               lineno, c.n, n);
      rc = HIL_LOG_EFORMAT;
      break;
    }
    double t, v, tr = NAN;
    const int bad_t = csv_cell(field[c.time], &t) || isnan(t);
    const int bad_v = csv_cell(field[c.value], &v);
    const int bad_tr = c.truth >= 0 && csv_cell(field[c.truth], &tr);
    if (bad_t || bad_v || bad_tr) {
      const int col = bad_t ? c.time : bad_v ? c.value : c.truth;
      snprintf(err, err_sz, "%s: line %lld, column %d: expected a number%s (got \"%s\")", path,
               lineno, col + 1, bad_t ? " (time may not be blank)" : " or a blank",
               field[col]);
      rc = HIL_LOG_EFORMAT;
      break;
    }
    if (t < t_prev) { /* docs/logs.md: time increases */
      snprintf(err, err_sz, "%s: line %lld: time %.9g goes back (the row before has %.9g)",
               path, lineno, t, t_prev);
      rc = HIL_LOG_EFORMAT;
      break;
    }
    t_prev = t;
    if (!isnan(v)) {
      rc = series_push(s, &cap, t, v, tr, c.truth >= 0);
    }
  }
  free(field);
  free(line);
  return rc;
}

int hil_series_load(hil_series *s, const char *path, const char *sensor, const char *channel,
                    char *err, size_t err_sz) {
  memset(s, 0, sizeof *s);
  FILE *f = hil_log_open_input(path, err, err_sz);
  if (!f) {
    return HIL_LOG_EIO;
  }
  char head[10] = {0};
  const size_t got = fread(head, 1, sizeof head, f);
  int is_log = got == sizeof head && head[8] == ' ' && head[9] == '{';
  for (int i = 0; is_log && i < 8; i++) {
    is_log = hexval(head[i]) >= 0;
  }
  int rc;
  if (is_log) {
    fclose(f);
    rc = series_from_log(s, path, sensor, channel, err, err_sz);
  } else {
    rewind(f);
    rc = series_from_csv(s, f, path, sensor, channel, err, err_sz);
    fclose(f);
  }
  if (rc != 0) {
    hil_series_free(s);
  }
  return rc;
}

void hil_series_free(hil_series *s) {
  free(s->t);
  free(s->v);
  free(s->truth);
  s->t = s->v = s->truth = NULL;
  s->n = 0;
}
