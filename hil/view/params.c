/* hil/view/params.c: the sensors' live-tunable parameters as Foxglove parameters (docs/view.md
 * section 4). Every numeric parameter that set_param changes while running is one, named
 * "<sensor>.<path>" ("enc_shoulder.noise.white.sigma", "imu.gyro.noise.bias"): the noise,
 * filter, resolution (not an encoder's: its counts per turn are fixed) and fault fields of each
 * chain group (docs/sensors.md) and drop_probability. Values change through sens_set_param, as
 * the control request set_param changes them, so the checks and messages are the same; reads go
 * straight to the running chain's parameters. All of it runs on the loop thread. */
#include "hil/view/view_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hil/error.h"

/* --- the list ------------------------------------------------------------------------------------ */

static int first_chain(const sens_sensor *s, int group) {
  for (int k = 0; k < s->nchain; k++) {
    if (group < 0 || s->group_of_chain[k] == group) {
      return k;
    }
  }
  return -1;
}

static void add(view_param *list, int *n, const sens_sensor *s, int sensor, const char *prefix,
                const char *path, int chain, long offset) {
  view_param *p = &list[(*n)++];
  snprintf(p->path, sizeof p->path, "%s%s%s", prefix, *prefix ? "." : "", path);
  snprintf(p->name, sizeof p->name, "%s.%s", s->name, p->path);
  p->sensor = sensor;
  p->chain = chain;
  p->offset = offset;
}

/* the parameters of one sensor: each chain field of each group (an IMU's "gyro", "accel"; the
 * others' one group unnamed), then drop_probability */
static void sensor_params(view_param *list, int *n, const sens_sensor *s, int sensor) {
  const int ngroup = s->type == SENS_IMU ? 2 : 1;
  for (int g = 0; g < ngroup; g++) {
    const int group = s->type == SENS_IMU ? g : -1;
    const int k = first_chain(s, group);
    if (k < 0) {
      continue;
    }
    for (int i = 0; sens_chain_field_path(i); i++) {
      const char *path = sens_chain_field_path(i);
      if (s->type == SENS_ENCODER && strcmp(path, "resolution") == 0) {
        continue; /* an encoder's counts per turn: fixed while running */
      }
      sens_chain_params copy = s->chain[k].p;
      const long off = (long)((char *)sens_chain_field(&copy, path) - (char *)&copy);
      add(list, n, s, sensor, group >= 0 ? s->group[group] : "", path, k, off);
    }
  }
  add(list, n, s, sensor, "", "drop_probability", -1, -1);
}

int view__params_build(view_shared *sh) {
  int fields = 0;
  while (sens_chain_field_path(fields)) {
    fields++;
  }
  const int cap = sh->nsensor * (2 * fields + 1);
  sh->params = calloc((size_t)(cap > 0 ? cap : 1), sizeof *sh->params);
  if (!sh->params) {
    return HIL_ENOMEM;
  }
  sh->nparam = 0;
  for (int i = 0; i < sh->nsensor; i++) {
    sensor_params(sh->params, &sh->nparam, sens_set_sensor(sh->sensors, i), i);
  }
  return HIL_OK;
}

static double param_value(const view_shared *sh, const view_param *p) {
  const sens_sensor *s = sens_set_sensor(sh->sensors, p->sensor);
  if (p->offset < 0) {
    return s->drop_probability;
  }
  double v;
  memcpy(&v, (const char *)&s->chain[p->chain].p + p->offset, sizeof v);
  return v;
}

void view__params_read(const view_shared *sh, double *out) {
  for (int i = 0; i < sh->nparam; i++) {
    out[i] = param_value(sh, &sh->params[i]);
  }
}

static int find(const view_shared *sh, const char *name) {
  for (int i = 0; i < sh->nparam; i++) {
    if (strcmp(sh->params[i].name, name) == 0) {
      return i;
    }
  }
  return -1;
}

/* --- messages ------------------------------------------------------------------------------------ */

int view__params_values(char *out, size_t cap, const view_shared *sh, const int *idx, int n,
                        const double *val, const char *id) {
  hil_jw w;
  hil_jw_init(&w, out, cap);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "op");
  hil_jw_string(&w, "parameterValues");
  hil_jw_key(&w, "parameters");
  hil_jw_begin_array(&w);
  for (int k = 0; k < n; k++) {
    hil_jw_begin_object(&w);
    hil_jw_key(&w, "name");
    hil_jw_string(&w, sh->params[idx[k]].name);
    hil_jw_key(&w, "value");
    hil_jw_number(&w, val[idx[k]]);
    hil_jw_key(&w, "type"); /* so that a client sends 0 back as a float, not an integer */
    hil_jw_string(&w, "float64");
    hil_jw_end_object(&w);
  }
  hil_jw_end_array(&w);
  if (id) {
    hil_jw_key(&w, "id");
    hil_jw_string(&w, id);
  }
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}

/* What one request asks, checked; the first problem into err ("" when none). */
typedef struct param_request {
  int *idx, n;
  const char *id;
} param_request;

static void note(char *err, size_t err_sz, const char *fmt, const char *what) {
  if (!err[0]) {
    snprintf(err, err_sz, fmt, what);
  }
}

/* getParameters: the names asked (all when none) */
static void get_request(param_request *q, const view_shared *sh, const cJSON *names, char *err,
                        size_t err_sz) {
  if (names && !cJSON_IsArray(names)) {
    note(err, err_sz, "getParameters: %s", "\"parameterNames\" must be an array of names");
    return;
  }
  if (cJSON_GetArraySize(names) == 0) {
    for (int i = 0; i < sh->nparam; i++) {
      q->idx[q->n++] = i;
    }
    return;
  }
  const cJSON *e;
  cJSON_ArrayForEach(e, names) {
    const int i = cJSON_IsString(e) ? find(sh, e->valuestring) : -1;
    if (i < 0) {
      note(err, err_sz, "getParameters: no parameter \"%s\"",
           cJSON_IsString(e) ? e->valuestring : "(not a string)");
    } else if (q->n < sh->nparam) {
      q->idx[q->n++] = i;
    }
  }
}

/* setParameters: each entry applied through sens_set_param (its checks, its messages) */
static void set_request(param_request *q, view_shared *sh, sens_set *set, const cJSON *params,
                        char *err, size_t err_sz) {
  if (!cJSON_IsArray(params)) {
    note(err, err_sz, "setParameters: %s", "\"parameters\" must be an array of {name, value}");
    return;
  }
  const cJSON *e;
  cJSON_ArrayForEach(e, params) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(e, "value");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(e, "type");
    const int i = cJSON_IsString(name) ? find(sh, name->valuestring) : -1;
    if (i < 0) {
      note(err, err_sz, "setParameters: no parameter \"%s\"",
           cJSON_IsString(name) ? name->valuestring : "(no name)");
      continue;
    }
    if (!cJSON_IsNumber(value) || !isfinite(value->valuedouble) ||
        (type && !(cJSON_IsString(type) && strcmp(type->valuestring, "float64") == 0))) {
      note(err, err_sz, "setParameters: %s: the value must be a finite number (type float64; a "
                        "sensor parameter cannot be unset)", name->valuestring);
      continue;
    }
    const view_param *p = &sh->params[i];
    char why[512] = "";
    if (sens_set_param(set, sens_set_sensor(set, p->sensor)->name, p->path, value->valuedouble,
                       why, sizeof why) != 0) {
      note(err, err_sz, "setParameters: %s", why);
    }
    if (q->n < sh->nparam) {
      q->idx[q->n++] = i;
    }
  }
}

int view__params_answer(char *out, size_t cap, view_shared *sh, sens_set *sensors,
                        const char *text, size_t len) {
  char err[640] = "";
  cJSON *root = cJSON_ParseWithLength(text, len);
  const cJSON *op = cJSON_GetObjectItemCaseSensitive(root, "op");
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
  param_request q = {calloc((size_t)(sh->nparam > 0 ? sh->nparam : 1), sizeof(int)), 0,
                     cJSON_IsString(id) ? id->valuestring : NULL};
  if (!q.idx || !cJSON_IsString(op)) {
    snprintf(err, sizeof err, "%s", q.idx ? "not a parameter request" : "out of memory");
  } else if (strcmp(op->valuestring, "getParameters") == 0) {
    get_request(&q, sh, cJSON_GetObjectItemCaseSensitive(root, "parameterNames"), err,
                sizeof err);
  } else {
    set_request(&q, sh, sensors, cJSON_GetObjectItemCaseSensitive(root, "parameters"), err,
                sizeof err);
  }
  /* the values asked or set, then (NUL-separated) a status message with the first problem */
  int n = 0;
  if (q.n > 0 || (!err[0] && q.idx)) {
    double *val = calloc((size_t)(sh->nparam > 0 ? sh->nparam : 1), sizeof *val);
    if (val) {
      view__params_read(sh, val);
      n = view__params_values(out, cap, sh, q.idx, q.n, val, q.id);
      n = n < 0 ? 0 : n + 1; /* keep the NUL: the separator */
    }
    free(val);
  }
  if (err[0] && (size_t)n < cap) {
    const int m = view__fox_status_message(out + n, cap - (size_t)n, 2, err);
    n = m > 0 ? n + m + 1 : n;
  }
  free(q.idx);
  cJSON_Delete(root);
  return n;
}
