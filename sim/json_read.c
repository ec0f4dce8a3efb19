/* sim/json_read.c: validated reading of JSON configuration; see json_read.h. */
#include "sim/json_read.h"

#include <errno.h>
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
    return sim_json_fail(L, p, "longer than %d characters", SIM_NAME_MAX - 1);
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

char *sim_json_read_file(const char *path, char *err, size_t err_sz) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, err_sz, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  char *text = NULL;
  size_t size = 0, cap = 0;
  for (;;) {
    if (size + 4096 + 1 > cap) {
      cap = 2 * cap + 8192;
      char *grown = realloc(text, cap);
      if (!grown) {
        free(text);
        fclose(f);
        snprintf(err, err_sz, "%s: out of memory", path);
        return NULL;
      }
      text = grown;
    }
    size_t got = fread(text + size, 1, 4096, f);
    size += got;
    if (got < 4096) {
      break;
    }
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(text);
    snprintf(err, err_sz, "%s: read error", path);
    return NULL;
  }
  text[size] = '\0';
  return text;
}


cJSON *sim_json_parse_file(const char *path, char *err, size_t err_sz) {
  char *text = sim_json_read_file(path, err, err_sz);
  if (!text) {
    return NULL;
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
  if (!root) {
    int line, col;
    sim_json_line_and_column(text, end ? end : text, &line, &col);
    snprintf(err, err_sz, "%s: line %d, column %d: invalid JSON", path, line, col);
  }
  free(text);
  return root;
}
