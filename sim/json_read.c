/* sim/json_read.c: validated reading of JSON configuration; see json_read.h. */
#include "sim/json_read.h"

#include "sim/file_read.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sim_json_fail(const sim_json_ctx *L, const char *path, const char *fmt, ...) {
  if (L->err && L->err_sz > 0) {
    int n = snprintf(L->err, L->err_sz, "%s: %s%s", L->source, path, path[0] ? ": " : "");
    if (n >= 0 && (size_t)n < L->err_sz) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(L->err + n, L->err_sz - (size_t)n, fmt, ap);
      va_end(ap);
    }
  }
  return -1;
}

void sim_json_path_join(char out[SIM_JSON_PATH_MAX], const char *path, const char *key) {
  snprintf(out, SIM_JSON_PATH_MAX, "%s%s%s", path, path[0] ? "." : "", key);
}

void sim_json_path_index(char out[SIM_JSON_PATH_MAX], const char *path, int index) {
  snprintf(out, SIM_JSON_PATH_MAX, "%s[%d]", path, index);
}

/* Every key of obj must be in `allowed` (NULL-terminated), so that typos are caught. */
int sim_json_check_keys(const sim_json_ctx *L, const cJSON *obj, const char *path,
                      const char *const *allowed) {
  for (const cJSON *item = obj->child; item; item = item->next) {
    int known = 0;
    for (const char *const *k = allowed; *k; k++) {
      known |= strcmp(item->string, *k) == 0;
    }
    if (!known) {
      char p[SIM_JSON_PATH_MAX], list[256] = "";
      sim_json_path_join(p, path, item->string);
      for (const char *const *k = allowed; *k; k++) {
        strncat(list, *k, sizeof list - strlen(list) - 3);
        if (k[1]) {
          strncat(list, ", ", sizeof list - strlen(list) - 1);
        }
      }
      return sim_json_fail(L, p, "unknown key (expected one of: %s)", list);
    }
  }
  return 0;
}

int sim_json_expect_object(const sim_json_ctx *L, const cJSON *item, const char *path) {
  return cJSON_IsObject(item) ? 0 : sim_json_fail(L, path, "expected an object");
}

int sim_json_number_value(const sim_json_ctx *L, const cJSON *item, const char *path, double *out) {
  if (!cJSON_IsNumber(item)) {
    return sim_json_fail(L, path, "expected a number");
  }
  if (!isfinite(item->valuedouble)) {
    return sim_json_fail(L, path, "must be finite (got %g)", item->valuedouble);
  }
  *out = item->valuedouble;
  return 0;
}

/* Reads obj[key] as a number; absent and optional leaves *out unchanged. */
int sim_json_read_number(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                       double *out, int required) {
  char p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, key);
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!item) {
    return required ? sim_json_fail(L, p, "missing (expected a number)") : 0;
  }
  return sim_json_number_value(L, item, p, out);
}

int sim_json_array_values(const sim_json_ctx *L, const cJSON *item, const char *path, double *out,
                        int n) {
  if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != n) {
    return sim_json_fail(L, path, "expected an array of %d numbers", n);
  }
  int i = 0;
  for (const cJSON *e = item->child; e; e = e->next, i++) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_index(p, path, i);
    if (sim_json_number_value(L, e, p, &out[i])) {
      return -1;
    }
  }
  return 0;
}

int sim_json_read_vector(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                       double *out, int n, int required) {
  char p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, key);
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!item) {
    return required ? sim_json_fail(L, p, "missing (expected an array of %d numbers)", n) : 0;
  }
  return sim_json_array_values(L, item, p, out, n);
}

int sim_json_read_string(const sim_json_ctx *L, const cJSON *obj, const char *path,
                         const char *key, char *out, size_t out_sz) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  char p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, key);
  if (!item) {
    return 0;
  }
  if (!cJSON_IsString(item) || item->valuestring[0] == '\0') {
    return sim_json_fail(L, p, "expected a non-empty string");
  }
  if (strlen(item->valuestring) >= out_sz) {
    return sim_json_fail(L, p, "longer than %zu characters", out_sz - 1);
  }
  snprintf(out, out_sz, "%s", item->valuestring);
  return 0;
}

int sim_json_read_int(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                      int lo, int hi, int *out) {
  double v = *out;
  if (sim_json_read_number(L, obj, path, key, &v, 0)) {
    return -1;
  }
  if (v != floor(v) || v < lo || v > hi) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_join(p, path, key);
    return sim_json_fail(L, p, "expected an integer from %d to %d (got %g)", lo, hi, v);
  }
  *out = (int)v;
  return 0;
}

int sim_json_read_name(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                     char out[SIM_NAME_MAX], int required) {
  char p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, key);
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!item) {
    return required ? sim_json_fail(L, p, "missing (expected a name)") : 0;
  }
  if (!cJSON_IsString(item) || item->valuestring[0] == '\0') {
    return sim_json_fail(L, p, "expected a non-empty string");
  }
  if (strlen(item->valuestring) >= SIM_NAME_MAX) {
    return sim_json_fail(L, p, "longer than %d bytes", SIM_NAME_MAX - 1);
  }
  for (const unsigned char *c = (const unsigned char *)item->valuestring; *c; c++) {
    if (*c < 0x20 || *c == 0x7f) { /* names go into CSV headers and log lines */
      return sim_json_fail(L, p, "control character 0x%02x at byte %d", *c,
                           (int)(c - (const unsigned char *)item->valuestring));
    }
  }
  if (item->valuestring[sim_json_utf8_valid_prefix(item->valuestring)]) {
    return sim_json_fail(L, p, "not valid UTF-8 (at byte %zu)",
                         sim_json_utf8_valid_prefix(item->valuestring));
  }
  strcpy(out, item->valuestring);
  return 0;
}

int sim_json_check_min(const sim_json_ctx *L, const char *path, const char *key, double value,
                     double min, int strict) {
  if (strict ? value > min : value >= min) {
    return 0;
  }
  char p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, key);
  return sim_json_fail(L, p, "must be %s %g (got %g)", strict ? ">" : ">=", min, value);
}

int sim_json_check_max(const sim_json_ctx *L, const char *path, const char *key, double value,
                       double max) {
  if (value <= max) {
    return 0;
  }
  char p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, key);
  return sim_json_fail(L, p, "must be <= %g (got %g)", max, value);
}

int sim_json_normalize_unit(const sim_json_ctx *L, const char *path, const char *key, double *v,
                            int n) {
  double norm2 = 0;
  for (int i = 0; i < n; i++) {
    norm2 += v[i] * v[i];
  }
  if (fabs(sqrt(norm2) - 1) <= SIM_JSON_UNIT_TOL) {
    /* typed digits are rarely exactly unit; an unnormalised axis or quaternion makes rotation
     * matrices that are not orthonormal, and the error grows with every step (as in MuJoCo) */
    double norm = sqrt(norm2);
    for (int i = 0; i < n; i++) {
      v[i] /= norm;
    }
    return 0;
  }
  char p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, key);
  if (norm2 == 0) {
    return sim_json_fail(L, p, "must not be zero (expected a unit vector)");
  }
  return sim_json_fail(L, p, "must have unit length (norm is %.9g)", sqrt(norm2));
}

void sim_json_line_and_column(const char *text, const char *at, int *line, int *col) {
  *line = 1, *col = 1;
  for (const char *c = text; c < at && *c; c++) {
    if (*c == '\n') {
      (*line)++, *col = 1;
    } else {
      (*col)++;
    }
  }
}

/* --- reading a file once -------------------------------------------------------------------- */

/* The one file kept in memory by sim_json_pin_file: a pipe can be read only once, while the
 * runtime's sections (model, sensors, runtime, transports) are parsed by separate modules that
 * each name the file. */
static struct {
  char *path, *text;
  size_t size;
} pinned;

char *sim_json_read_file(const char *path, char *err, size_t err_sz) {
  if (pinned.path && strcmp(path, pinned.path) == 0) {
    char *copy = malloc(pinned.size + 1);
    if (!copy) {
      snprintf(err, err_sz, "%s: out of memory", path);
      return NULL;
    }
    memcpy(copy, pinned.text, pinned.size + 1);
    return copy;
  }
  size_t size = 0;
  char *text = sim_file_read(path, SIM_FILE_STDIN, SIM_JSON_FILE_MAX, &size, err, err_sz);
  const size_t len = text ? strlen(text) : 0;
  if (text && len != size) {
    free(text);
    snprintf(err, err_sz, "%s: byte %zu: a NUL byte (expected JSON text)", path, len);
    return NULL;
  }
  return text;
}

int sim_json_pin_text(const char *path, const char *text, size_t size) {
  sim_json_unpin();
  pinned.path = malloc(strlen(path) + 1);
  pinned.text = malloc(size + 1);
  if (!pinned.path || !pinned.text) {
    sim_json_unpin();
    return -1;
  }
  strcpy(pinned.path, path);
  memcpy(pinned.text, text, size);
  pinned.text[size] = '\0';
  pinned.size = strlen(pinned.text); /* text after a NUL is not JSON either way */
  return 0;
}

int sim_json_pin_file(const char *path, char *err, size_t err_sz) {
  sim_json_unpin();
  char *text = sim_json_read_file(path, err, err_sz);
  char *name = text ? malloc(strlen(path) + 1) : NULL;
  if (!name) {
    if (text) {
      snprintf(err, err_sz, "%s: out of memory", path);
    }
    free(text);
    return -1;
  }
  strcpy(name, path);
  pinned.path = name, pinned.text = text, pinned.size = strlen(text);
  return 0;
}

void sim_json_unpin(void) {
  free(pinned.path);
  free(pinned.text);
  pinned.path = pinned.text = NULL;
  pinned.size = 0;
}

/* --- text checks ----------------------------------------------------------------------------- */

/* Length of the valid UTF-8 prefix of s (RFC 3629: shortest forms, no surrogates, <= U+10FFFF). */
size_t sim_json_utf8_valid_prefix(const char *s) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0;
  while (u[i]) {
    const unsigned c = u[i];
    int n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2
          : (c & 0xF8) == 0xF0 ? 3 : -1;
    if (n < 0 || (n == 1 && c < 0xC2) || (n == 3 && c > 0xF4)) {
      return i;
    }
    for (int k = 1; k <= n; k++) {
      if ((u[i + k] & 0xC0) != 0x80) {
        return i;
      }
    }
    const unsigned c1 = n ? u[i + 1] : 0;
    if ((n == 2 && c == 0xE0 && c1 < 0xA0) || (n == 2 && c == 0xED && c1 >= 0xA0) ||
        (n == 3 && c == 0xF0 && c1 < 0x90) || (n == 3 && c == 0xF4 && c1 >= 0x90)) {
      return i; /* overlong, surrogate or beyond U+10FFFF */
    }
    i += (size_t)n + 1;
  }
  return i;
}

static int check_string(const sim_json_ctx *L, const char *path, const char *s, const char *what) {
  const size_t at = sim_json_utf8_valid_prefix(s);
  if (s[at]) {
    return sim_json_fail(L, path, "%s is not valid UTF-8 (at byte %zu)", what, at);
  }
  return 0;
}

int sim_json_check_text(const sim_json_ctx *L, const cJSON *item, const char *path) {
  if (cJSON_IsString(item) && check_string(L, path, item->valuestring, "the string")) {
    return -1;
  }
  int i = 0;
  for (const cJSON *c = item->child; c; c = c->next, i++) {
    char p[SIM_JSON_PATH_MAX];
    if (cJSON_IsObject(item)) {
      sim_json_path_index(p, path, i); /* the key itself may not be printable */
      if (check_string(L, p, c->string, "the key of member")) {
        return -1;
      }
      sim_json_path_join(p, path, c->string);
    } else {
      sim_json_path_index(p, path, i);
    }
    if (sim_json_check_text(L, c, p)) {
      return -1;
    }
  }
  return 0;
}

cJSON *sim_json_parse_text(const char *text, const char *source, char *err, size_t err_sz) {
  const sim_json_ctx L = {source, err, err_sz};
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(text, &end, 0);
  const char *rest = end ? end : text;
  while (root && (*rest == ' ' || *rest == '\t' || *rest == '\n' || *rest == '\r')) {
    rest++;
  }
  if (!root || *rest) {
    int line, col;
    sim_json_line_and_column(text, rest, &line, &col);
    char where[64];
    snprintf(where, sizeof where, "line %d, column %d", line, col);
    sim_json_fail(&L, where, "%s", root ? "invalid JSON (text after the value)" : "invalid JSON");
    cJSON_Delete(root);
    return NULL;
  }
  if (sim_json_check_text(&L, root, "")) {
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

cJSON *sim_json_parse_file(const char *path, char *err, size_t err_sz) {
  char *text = sim_json_read_file(path, err, err_sz);
  if (!text) {
    return NULL;
  }
  cJSON *root = sim_json_parse_text(text, path, err, err_sz);
  free(text);
  return root;
}

/* --- soft-constraint parameters ------------------------------------------------------------- */

/* MuJoCo's defaults: a critically damped 20 ms spring, impedance 0.9 → 0.95 over 1 mm */
static const double default_solref[SIM_NREF] = {0.02, 1};
static const double default_solimp[SIM_NIMP] = {0.9, 0.95, 0.001, 0.5, 2};

/* solref: [timeconst, dampratio] (both > 0) or direct [-stiffness, -damping] (both <= 0). Any
 * two finite numbers are taken, as MuJoCo takes them: a pair mixing the two forms is replaced by
 * the default [0.02, 1] where it is used (a contact mixes its two geoms' first), in
 * sim/constraint.c, as MuJoCo does. */
int sim_json_read_solref(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                       double ref[SIM_NREF]) {
  memcpy(ref, default_solref, sizeof default_solref);
  return sim_json_read_vector(L, obj, path, key, ref, SIM_NREF, 0);
}

/* solimp: [dmin, dmax, width, midpoint, power], any five finite numbers as MuJoCo takes them:
 * where they are used (after a contact mixes its two geoms'), dmin, dmax and midpoint are
 * clamped to [0.0001, 0.9999], width to >= 0 and power to >= 1 (sim/constraint.c) */
int sim_json_read_solimp(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                       double imp[SIM_NIMP]) {
  memcpy(imp, default_solimp, sizeof default_solimp);
  return sim_json_read_vector(L, obj, path, key, imp, SIM_NIMP, 0);
}
