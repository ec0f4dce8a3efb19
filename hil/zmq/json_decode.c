/* hil/zmq/json_decode.c: strict decoding of the ZeroMQ messages (samples for clients, commands,
 * control requests): exact JSON, known keys only, a message that names what was expected; see
 * json_messages.h and docs/messages.md. */
#include "hil/zmq/json_messages.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "hil/error.h"
#include "sim/json_read.h"

#define MAX_EXACT_INTEGER 9007199254740992.0 /* 2^53: larger integers do not survive a double */

/* --- decoding helpers ------------------------------------------------------------------------- */

static int fail(char *err, size_t err_sz, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t err_sz, int code, const char *fmt, ...) {
  if (err && err_sz > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_sz, fmt, ap);
    va_end(ap);
  }
  return code;
}

/* Parses exactly `len` bytes: no embedded NUL, nothing but white space after the value. */
static cJSON *parse_exact(const char *json, size_t len, char *err, size_t err_sz) {
  if (len == 0 || memchr(json, '\0', len)) {
    fail(err, err_sz, HIL_EMALFORMED, len ? "not JSON: contains a NUL byte" : "empty message");
    return NULL;
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
  if (!root) {
    const size_t at = end && end >= json && end <= json + len ? (size_t)(end - json) : 0;
    fail(err, err_sz, HIL_EMALFORMED, "not JSON (parse error at byte %zu)", at);
    return NULL;
  }
  for (const char *p = end; p && p < json + len; p++) {
    if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
      fail(err, err_sz, HIL_EMALFORMED, "not JSON: text after the value at byte %zu",
           (size_t)(p - json));
      cJSON_Delete(root);
      return NULL;
    }
  }
  return root;
}

/* Every member of obj is named in `allowed` (NULL-terminated). */
static int check_keys(const cJSON *obj, const char *where, const char *const *allowed, char *err,
                      size_t err_sz) {
  for (const cJSON *item = obj->child; item; item = item->next) {
    int known = 0;
    for (const char *const *k = allowed; *k && !known; k++) {
      known = strcmp(item->string, *k) == 0;
    }
    if (!known) {
      return fail(err, err_sz, HIL_EMALFORMED, "%s%s%s: unknown key", where, *where ? "." : "",
                  item->string);
    }
  }
  return HIL_OK;
}

/* "v": absent is accepted when optional; otherwise it must be HIL_MSG_VERSION. */
static int check_version(const cJSON *root, int required, char *err, size_t err_sz) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "v");
  if (!v && !required) {
    return HIL_OK;
  }
  if (!cJSON_IsNumber(v) || v->valuedouble != HIL_MSG_VERSION) {
    return fail(err, err_sz, HIL_EMALFORMED, "v: expected protocol version %d", HIL_MSG_VERSION);
  }
  return HIL_OK;
}

/* A string member shorter than cap; absent is an error when required. */
static int read_string(const cJSON *obj, const char *key, char *out, size_t cap, int required,
                       char *err, size_t err_sz) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!item) {
    return required ? fail(err, err_sz, HIL_EMALFORMED, "%s: missing (expected a string)", key)
                    : HIL_OK;
  }
  if (!cJSON_IsString(item) || !item->valuestring) {
    return fail(err, err_sz, HIL_EMALFORMED, "%s: expected a string", key);
  }
  if (strlen(item->valuestring) >= cap) {
    return fail(err, err_sz, HIL_EMALFORMED, "%s: longer than %zu characters", key, cap - 1);
  }
  snprintf(out, cap, "%s", item->valuestring);
  return HIL_OK;
}

/* A finite number member; absent is an error when required, else leaves *out. */
static int read_finite(const cJSON *obj, const char *key, double *out, int required, char *err,
                       size_t err_sz) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!item) {
    return required ? fail(err, err_sz, HIL_EMALFORMED, "%s: missing (expected a number)", key)
                    : HIL_OK;
  }
  if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble)) {
    return fail(err, err_sz, HIL_EMALFORMED, "%s: expected a finite number", key);
  }
  *out = item->valuedouble;
  return HIL_OK;
}

static int read_bool(const cJSON *obj, const char *key, int *out, char *err, size_t err_sz) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsBool(item)) {
    return fail(err, err_sz, HIL_EMALFORMED, "%s: expected true or false", key);
  }
  *out = cJSON_IsTrue(item);
  return HIL_OK;
}

/* An integer in [lo, hi] (hi at most 2^53). */
static int read_integer(const cJSON *obj, const char *key, double lo, double hi, double *out,
                        char *err, size_t err_sz) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsNumber(item) || !(item->valuedouble >= lo && item->valuedouble <= hi) ||
      item->valuedouble != floor(item->valuedouble)) {
    return fail(err, err_sz, HIL_EMALFORMED, "%s: expected an integer from %.0f to %.0f", key, lo,
                hi);
  }
  *out = item->valuedouble;
  return HIL_OK;
}

/* --- sample decoding -------------------------------------------------------------------------- */

static int decode_channels(hil_msg_sample *out, const cJSON *values, const cJSON *units,
                           char *err, size_t err_sz) {
  if (!cJSON_IsObject(values) || !cJSON_IsObject(units)) {
    return fail(err, err_sz, HIL_EMALFORMED, "%s: expected an object",
                cJSON_IsObject(values) ? "units" : "values");
  }
  const cJSON *u = units->child;
  for (const cJSON *v = values->child; v; v = v->next, u = u->next) {
    if (out->n >= SENS_MAX_CHANNELS) {
      return fail(err, err_sz, HIL_EMALFORMED, "values: more than %d channels",
                  SENS_MAX_CHANNELS);
    }
    if (!u || strcmp(u->string, v->string) != 0) {
      return fail(err, err_sz, HIL_EMALFORMED, "units: expected \"%s\" in the order of values",
                  v->string);
    }
    if (!(cJSON_IsNumber(v) || cJSON_IsNull(v)) || !cJSON_IsString(u) ||
        strlen(v->string) >= SENS_CHANNEL_NAME_MAX || strlen(u->valuestring) >= HIL_MSG_UNIT_MAX) {
      return fail(err, err_sz, HIL_EMALFORMED, "values.%s: expected a number or null and a unit",
                  v->string);
    }
    const int i = out->n++;
    snprintf(out->channel[i], SENS_CHANNEL_NAME_MAX, "%s", v->string);
    snprintf(out->unit[i], HIL_MSG_UNIT_MAX, "%s", u->valuestring);
    out->value[i] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
  }
  return u ? fail(err, err_sz, HIL_EMALFORMED, "units.%s: no such value", u->string) : HIL_OK;
}

int hil_msg_decode_sample(hil_msg_sample *out, const char *json, size_t len, char *err,
                          size_t err_sz) {
  static const char *const keys[] = {"v",       "sensor", "type",   "truth", "seq", "t",
                                     "t_truth", "valid",  "values", "units", NULL};
  memset(out, 0, sizeof *out);
  cJSON *root = parse_exact(json, len, err, err_sz);
  if (!root) {
    return HIL_EMALFORMED;
  }
  double seq = 0;
  int rc = cJSON_IsObject(root) ? HIL_OK
                                : fail(err, err_sz, HIL_EMALFORMED, "expected a JSON object");
  if (rc == HIL_OK) {
    for (const char *const *k = keys; *k && rc == HIL_OK; k++) {
      if (!cJSON_GetObjectItemCaseSensitive(root, *k)) {
        rc = fail(err, err_sz, HIL_EMALFORMED, "%s: missing", *k);
      }
    }
  }
  if (rc == HIL_OK) { /* keys added by a later minor revision are ignored (docs/messages.md) */
    rc = check_version(root, 1, err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = read_string(root, "sensor", out->sensor, sizeof out->sensor, 1, err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = read_string(root, "type", out->type, sizeof out->type, 1, err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = read_bool(root, "truth", &out->truth, err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = read_bool(root, "valid", &out->valid, err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = read_integer(root, "seq", 0, MAX_EXACT_INTEGER, &seq, err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = read_finite(root, "t", &out->t, 1, err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = read_finite(root, "t_truth", &out->t_truth, 1, err, err_sz);
  }
  if (rc == HIL_OK) {
    out->seq = (uint64_t)seq;
    rc = decode_channels(out, cJSON_GetObjectItemCaseSensitive(root, "values"),
                         cJSON_GetObjectItemCaseSensitive(root, "units"), err, err_sz);
  }
  cJSON_Delete(root);
  return rc;
}

/* --- commands --------------------------------------------------------------------------------- */

/* The message around the entries: object, version, keys, "t", "commands". */
static int check_command_envelope(const cJSON *root, hil_msg_cmd_report *rep, char *err,
                                  size_t err_sz) {
  static const char *const keys[] = {"v", "t", "commands", NULL};
  if (!cJSON_IsObject(root)) {
    return fail(err, err_sz, HIL_EMALFORMED, "expected a JSON object");
  }
  int rc = check_keys(root, "", keys, err, err_sz);
  if (rc == HIL_OK) {
    rc = check_version(root, 1, err, err_sz);
  }
  if (rc == HIL_OK && cJSON_GetObjectItemCaseSensitive(root, "t")) {
    rc = read_finite(root, "t", &rep->t, 0, err, err_sz);
    rep->has_t = rc == HIL_OK;
  }
  if (rc == HIL_OK && !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "commands"))) {
    rc = fail(err, err_sz, HIL_EMALFORMED, "commands: missing or not an object");
  }
  return rc;
}

/* 1 when s is well-formed UTF-8 (RFC 3629), by the robot loader's own check */
static int utf8_valid(const char *s) { return s[sim_json_utf8_valid_prefix(s)] == '\0'; }

int hil_msg_submit_commands(hil_commands *c, const char *json, size_t len, double now,
                            hil_msg_cmd_report *rep, char *err, size_t err_sz) {
  hil_msg_cmd_report local;
  rep = rep ? rep : &local;
  memset(rep, 0, sizeof *rep);
  if (err && err_sz > 0) {
    err[0] = '\0';
  }
  cJSON *root = parse_exact(json, len, err, err_sz);
  if (!root || check_command_envelope(root, rep, err, err_sz) != HIL_OK) {
    hil_commands_count_malformed(c);
    cJSON_Delete(root);
    return HIL_EMALFORMED;
  }
  const cJSON *cmds = cJSON_GetObjectItemCaseSensitive(root, "commands");
  for (const cJSON *e = cmds->child; e; e = e->next) {
    rep->entries++;
    int rc;
    if (!utf8_valid(e->string)) { /* no actuator has such a name: the sender's encoding is broken */
      hil_commands_count_malformed(c);
      rc = HIL_EMALFORMED;
    } else if (cJSON_IsNumber(e) || cJSON_IsNull(e) || cJSON_IsString(e)) {
      /* null and strings ("NaN", "inf") stand for values JSON cannot carry: non-finite */
      const double value = cJSON_IsNumber(e) ? e->valuedouble : NAN;
      rc = hil_commands_submit_named(c, e->string, value, now);
    } else {
      hil_commands_count_malformed(c);
      rc = HIL_EMALFORMED;
    }
    if (rc == HIL_OK) {
      rep->accepted++;
      continue;
    }
    if (rep->rejected++ == 0 && err && err_sz > 0) {
      fail(err, err_sz, rc, "commands.%s: %s", utf8_valid(e->string) ? e->string : "?",
           !utf8_valid(e->string)      ? "name is not valid UTF-8"
           : rc == HIL_EMALFORMED ? "expected a number"
                                  : hil_strerror(rc));
    }
  }
  cJSON_Delete(root);
  return HIL_OK;
}

/* --- control requests ------------------------------------------------------------------------- */

const char *hil_ctl_op_name(hil_ctl_op op) {
  static const char *const names[] = {
#define HIL_X_NAME(name, text) text,
      HIL_CTL_OPS(HIL_X_NAME)
#undef HIL_X_NAME
  };
  return (int)op >= 0 && (int)op < HIL_CTL_COUNT ? names[(int)op] : "unknown";
}

/* Keys each operation accepts besides "cmd" and "v". */
static const char *const *control_keys(hil_ctl_op op) {
  static const char *const none[] = {"cmd", "v", NULL};
  static const char *const step[] = {"cmd", "v", "n", NULL};
  static const char *const get[] = {"cmd", "v", "sensor", "path", NULL};
  static const char *const set[] = {"cmd", "v", "sensor", "path", "value", NULL};
  static const char *const fault[] = {"cmd",  "v",           "sensor", "group",
                                      "mode", "probability", "size",   "offset", NULL};
  switch (op) {
  case HIL_CTL_STEP:
    return step;
  case HIL_CTL_GET_PARAM:
    return get;
  case HIL_CTL_SET_PARAM:
    return set;
  case HIL_CTL_FAULT:
    return fault;
  default:
    return none;
  }
}

static int decode_fault(hil_ctl_request *out, const cJSON *root, char *err, size_t err_sz) {
  char mode[16] = "";
  int rc = read_string(root, "mode", mode, sizeof mode, 1, err, err_sz);
  if (rc == HIL_OK && sens_fault_parse(mode) < 0) {
    rc = fail(err, err_sz, HIL_EMALFORMED,
              "mode: expected \"none\", \"stuck\", \"spike\", \"offset\" or \"dead\"");
  }
  if (rc != HIL_OK) {
    return rc;
  }
  out->fault.mode = (sens_fault_mode)sens_fault_parse(mode);
  if (read_string(root, "group", out->group, sizeof out->group, 0, err, err_sz) ||
      read_finite(root, "probability", &out->fault.probability, 0, err, err_sz) ||
      read_finite(root, "size", &out->fault.size, 0, err, err_sz) ||
      read_finite(root, "offset", &out->fault.offset, 0, err, err_sz)) {
    return HIL_EMALFORMED;
  }
  return HIL_OK;
}

/* The arguments of op, after "cmd" was recognised and the keys checked. */
static int decode_arguments(hil_ctl_request *out, const cJSON *root, char *err, size_t err_sz) {
  double n = 1;
  switch (out->op) {
  case HIL_CTL_STEP:
    if (cJSON_GetObjectItemCaseSensitive(root, "n") &&
        read_integer(root, "n", 1, (double)HIL_CTL_STEP_MAX, &n, err, err_sz)) {
      return HIL_EMALFORMED;
    }
    out->n = (uint64_t)n;
    return HIL_OK;
  case HIL_CTL_GET_PARAM:
    return read_string(root, "sensor", out->sensor, sizeof out->sensor, 1, err, err_sz) ||
                   read_string(root, "path", out->path, sizeof out->path, 0, err, err_sz)
               ? HIL_EMALFORMED
               : HIL_OK;
  case HIL_CTL_SET_PARAM:
    return read_string(root, "sensor", out->sensor, sizeof out->sensor, 1, err, err_sz) ||
                   read_string(root, "path", out->path, sizeof out->path, 1, err, err_sz) ||
                   read_finite(root, "value", &out->value, 1, err, err_sz)
               ? HIL_EMALFORMED
               : HIL_OK;
  case HIL_CTL_FAULT:
    return read_string(root, "sensor", out->sensor, sizeof out->sensor, 1, err, err_sz)
               ? HIL_EMALFORMED
               : decode_fault(out, root, err, err_sz);
  default:
    return HIL_OK;
  }
}

int hil_msg_decode_control(hil_ctl_request *out, const char *json, size_t len, char *err,
                           size_t err_sz) {
  memset(out, 0, sizeof *out);
  out->n = 1;
  out->fault.mode = SENS_FAULT_NONE;
  cJSON *root = parse_exact(json, len, err, err_sz);
  if (!root) {
    return HIL_EMALFORMED;
  }
  int rc = HIL_OK;
  const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(root, "cmd");
  if (!cJSON_IsObject(root)) {
    rc = fail(err, err_sz, HIL_EMALFORMED, "expected a JSON object");
  } else if (!cJSON_IsString(cmd) || !cmd->valuestring) {
    rc = fail(err, err_sz, HIL_EMALFORMED, "cmd: missing (expected a string)");
  } else {
    int op = 0;
    while (op < HIL_CTL_COUNT && strcmp(cmd->valuestring, hil_ctl_op_name((hil_ctl_op)op)) != 0) {
      op++;
    }
    out->op = (hil_ctl_op)op;
    if (op == HIL_CTL_COUNT) {
      rc = fail(err, err_sz, HIL_EMALFORMED, "cmd: unknown request \"%.40s\"", cmd->valuestring);
    }
  }
  if (rc == HIL_OK) {
    rc = check_keys(root, hil_ctl_op_name(out->op), control_keys(out->op), err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = check_version(root, 0, err, err_sz);
  }
  if (rc == HIL_OK) {
    rc = decode_arguments(out, root, err, err_sz);
  }
  cJSON_Delete(root);
  return rc;
}
