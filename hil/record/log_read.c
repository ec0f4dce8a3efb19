/* hil/record/log_read.c: reading the recording log (docs/logs.md): every complete record before a
 * damaged one, with the record number and byte offset of the damage; see log.h. */
#include "hil/record/log_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sim/file_read.h"
#include "sim/json_read.h" /* sim_json_utf8_valid_prefix */

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
    const int h = hil__log_hexval(r->line[i]);
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
        hil__log_copy_name(s->channel[c], sizeof s->channel[c], a->valuestring) ||
        hil__log_copy_name(s->unit[c], sizeof s->unit[c], u->valuestring)) {
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
  if (!cJSON_IsNumber(v) || (v->valuedouble != 1 && v->valuedouble != HIL_LOG_VERSION)) {
    return "version (this reader reads versions 1 and 2)";
  }
  h->version = (int)v->valuedouble; /* 1: written before the servo records, read the same */
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
    if (!cJSON_IsString(a) || hil__log_copy_name(h->actuator[i], HIL_LOG_NAME_MAX, a->valuestring)) {
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
        hil__log_copy_name(rec->channel[rec->nch], SENS_CHANNEL_NAME_MAX, c->string)) {
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

/* a whole number from 0 to max (2^53 at most: exact in a double) */
static int get_count(uint64_t *out, const cJSON *obj, const char *key, double max) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || v->valuedouble > max ||
      v->valuedouble != floor(v->valuedouble)) {
    return -1;
  }
  *out = (uint64_t)v->valuedouble;
  return 0;
}

static const char *parse_servo(hil_log_record *rec, const cJSON *j) {
  uint64_t id;
  const cJSON *regs = cJSON_GetObjectItemCaseSensitive(j, "registers");
  if (get_count(&rec->step, j, "step", 9007199254740992.0)) {
    return "step (a whole number of physics steps)";
  }
  if (get_str(rec->actuator, sizeof rec->actuator, j, "actuator")) {
    return "actuator";
  }
  if (get_count(&id, j, "id", 252)) {
    return "id (a bus ID from 0 to 252)";
  }
  rec->servo_id = (int)id;
  if (!cJSON_IsObject(regs)) {
    return "registers (an object of field names and values)";
  }
  for (const cJSON *c = regs->child; c; c = c->next) {
    uint64_t v;
    if (rec->nreg >= HIL_LOG_MAX_REGISTERS ||
        hil__log_copy_name(rec->reg_name[rec->nreg], HIL_LOG_REGISTER_NAME_MAX, c->string) ||
        get_count(&v, regs, c->string, 4294967295.0)) {
      return "registers (each a field's name and its bytes as a whole number below 2^32)";
    }
    rec->reg_value[rec->nreg++] = (uint32_t)v;
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
  } else if (strcmp(type, "servo") == 0) {
    rec->type = HIL_LOG_SERVO;
    bad = parse_servo(rec, j);
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
  if ((rec->type == HIL_LOG_SAMPLE || rec->type == HIL_LOG_SERVO) && !isfinite(rec->t)) {
    return rd_fail(r, index, offset, HIL_LOG_EFORMAT, err, err_sz,
                   "t is not a number (a %s needs its simulation time)", type);
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
