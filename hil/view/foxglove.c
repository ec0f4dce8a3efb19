/* hil/view/foxglove.c: the messages of the Foxglove WebSocket protocol (foxglove.websocket.v1)
 * that the view's server sends: server info, channel advertisements with JSON Schemas, frame
 * transforms (the well-known foxglove.FrameTransforms schema) and status. The sample channels
 * carry the ZeroMQ sample messages unchanged (docs/messages.md, section 3). docs/view.md. */
#include "hil/view/view_internal.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hil/error.h"

#define STATUS_SCHEMA_MAX 8192

int view__fox_status_channel(const view_shared *sh) {
  return 2 * sh->nsensor + 1;
}

int view__fox_tf_channel(const view_shared *sh) {
  return 2 * sh->nsensor + 2;
}

int view__fox_robot_channel(const view_shared *sh) {
  return sh->m ? 2 * sh->nsensor + 3 : -1;
}

int view__fox_contacts_channel(const view_shared *sh) {
  return sh->m ? 2 * sh->nsensor + 4 : -1;
}

int view__fox_nchannels(const view_shared *sh) {
  return 2 * sh->nsensor + (sh->m ? 4 : 2);
}

int view__fox_server_info(char *out, size_t cap, const view_shared *sh) {
  char name[SIM_NAME_MAX + 16];
  const char *model = sh->m ? sh->m->name : sh->replay->robot;
  snprintf(name, sizeof name, "achilles %s", model);
  hil_jw w;
  hil_jw_init(&w, out, cap);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "op");
  hil_jw_string(&w, "serverInfo");
  hil_jw_key(&w, "name");
  hil_jw_string(&w, name);
  hil_jw_key(&w, "capabilities");
  hil_jw_begin_array(&w);
  hil_jw_string(&w, "clientPublish");
  hil_jw_string(&w, "time"); /* the simulation clock: pauses, steps, resets show in the apps */
  if (sh->m) {               /* a replay has no sensors to tune */
    hil_jw_string(&w, "parameters");
    hil_jw_string(&w, "parametersSubscribe");
  }
  hil_jw_end_array(&w);
  hil_jw_key(&w, "supportedEncodings");
  hil_jw_begin_array(&w);
  hil_jw_string(&w, "json");
  hil_jw_end_array(&w);
  hil_jw_key(&w, "metadata");
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "model");
  hil_jw_string(&w, model);
  hil_jw_end_object(&w);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}

/* The JSON Schema of one sensor's sample messages, as a string (the protocol carries schemas as
 * text): every key of docs/messages.md section 3, the channels named. A value is a number or
 * absent (a dropped sample: "valid" false; a non-finite value): Foxglove's and Lichtblick's
 * parseJsonSchema take one type per property, so ["number", "null"] would lose the channel. */
static void sample_schema(char *out, size_t cap, int nch,
                          const char (*channel)[SENS_CHANNEL_NAME_MAX]) {
  hil_jw w;
  hil_jw_init(&w, out, cap);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "type");
  hil_jw_string(&w, "object");
  hil_jw_key(&w, "properties");
  hil_jw_begin_object(&w);
  static const char *const keys[][2] = {
      {"v", "integer"},      {"sensor", "string"}, {"type", "string"},   {"truth", "boolean"},
      {"seq", "integer"},    {"t", "number"},      {"t_truth", "number"}, {"valid", "boolean"},
  };
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    hil_jw_key(&w, keys[i][0]);
    hil_jw_begin_object(&w);
    hil_jw_key(&w, "type");
    hil_jw_string(&w, keys[i][1]);
    hil_jw_end_object(&w);
  }
  for (int part = 0; part < 2; part++) { /* values: numbers (absent when null); units: text */
    hil_jw_key(&w, part == 0 ? "values" : "units");
    hil_jw_begin_object(&w);
    hil_jw_key(&w, "type");
    hil_jw_string(&w, "object");
    hil_jw_key(&w, "properties");
    hil_jw_begin_object(&w);
    for (int c = 0; c < nch; c++) {
      hil_jw_key(&w, channel[c]);
      hil_jw_begin_object(&w);
      hil_jw_key(&w, "type");
      hil_jw_string(&w, part == 0 ? "number" : "string");
      hil_jw_end_object(&w);
    }
    hil_jw_end_object(&w);
    hil_jw_end_object(&w);
  }
  hil_jw_end_object(&w);
  hil_jw_end_object(&w);
  hil_jw_finish(&w);
}

/* The JSON Schema of foxglove.FrameTransforms (timestamps as {sec, nsec}). */
static const char tf_schema[] =
    "{\"type\":\"object\",\"properties\":{\"transforms\":{\"type\":\"array\",\"items\":{"
    "\"type\":\"object\",\"properties\":{"
    "\"timestamp\":{\"type\":\"object\",\"properties\":{\"sec\":{\"type\":\"integer\"},"
    "\"nsec\":{\"type\":\"integer\"}}},"
    "\"parent_frame_id\":{\"type\":\"string\"},\"child_frame_id\":{\"type\":\"string\"},"
    "\"translation\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"number\"},"
    "\"y\":{\"type\":\"number\"},\"z\":{\"type\":\"number\"}}},"
    "\"rotation\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"number\"},"
    "\"y\":{\"type\":\"number\"},\"z\":{\"type\":\"number\"},\"w\":{\"type\":\"number\"}}}}}}}}";

static void channel(hil_jw *w, int id, const char *topic, const char *schema_name,
                    const char *schema) {
  hil_jw_begin_object(w);
  hil_jw_key(w, "id");
  hil_jw_uint(w, (uint64_t)id);
  hil_jw_key(w, "topic");
  hil_jw_string(w, topic);
  hil_jw_key(w, "encoding");
  hil_jw_string(w, "json");
  hil_jw_key(w, "schemaName");
  hil_jw_string(w, schema_name);
  hil_jw_key(w, "schema");
  hil_jw_string(w, schema);
  hil_jw_key(w, "schemaEncoding");
  hil_jw_string(w, "jsonschema");
  hil_jw_end_object(w);
}

/* The JSON Schema of a parsed JSON value, as the value shows it (objects with their properties,
 * arrays with their first item's schema, numbers as "number"). */
static void schema_of(hil_jw *w, const cJSON *v) {
  hil_jw_begin_object(w);
  hil_jw_key(w, "type");
  if (cJSON_IsObject(v)) {
    hil_jw_string(w, "object");
    hil_jw_key(w, "properties");
    hil_jw_begin_object(w);
    const cJSON *e;
    cJSON_ArrayForEach(e, v) {
      hil_jw_key(w, e->string);
      schema_of(w, e);
    }
    hil_jw_end_object(w);
  } else if (cJSON_IsArray(v)) {
    hil_jw_string(w, "array");
    hil_jw_key(w, "items");
    schema_of(w, v->child);
  } else {
    hil_jw_string(w, cJSON_IsBool(v) ? "boolean" : cJSON_IsNumber(v) ? "number" : "string");
  }
  hil_jw_end_object(w);
}

/* The status channel's schema, read off a status message the server writes (section 3 of
 * docs/view.md; its members are docs/messages.md's status object), so that it names every key
 * the messages have. */
static int status_schema(char *out, size_t cap, const view_shared *sh) {
  static view_frame zero;
  snprintf(zero.transports, sizeof zero.transports, "a transport"); /* one line: its type */
  char *msg = malloc(STATUS_SCHEMA_MAX);
  const int n = msg ? view__encode_status(msg, STATUS_SCHEMA_MAX, sh, &zero) : -1;
  cJSON *root = n > 0 ? cJSON_ParseWithLength(msg, (size_t)n) : NULL;
  free(msg);
  if (!root) {
    return HIL_ENOMEM;
  }
  hil_jw w;
  hil_jw_init(&w, out, cap);
  schema_of(&w, root);
  cJSON_Delete(root);
  return hil_jw_finish(&w);
}

size_t view__fox_advertise_size(const view_shared *sh) {
  return 32768 + (size_t)(2 * sh->nsensor) * (4096 + 512) + 2 * strlen(view__scene_schema);
}

int view__fox_advertise(char *out, size_t cap, const view_shared *sh) {
  hil_jw w;
  hil_jw_init(&w, out, cap);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "op");
  hil_jw_string(&w, "advertise");
  hil_jw_key(&w, "channels");
  hil_jw_begin_array(&w);
  char schema[4096], name[64];

  for (int k = 0; k < 2 * sh->nsensor; k++) {
    if (sh->replay && !sh->replay->sensor[k % sh->nsensor].selected) {
      continue; /* not in the replay: never sent */
    }
    if (sh->replay) { /* a replay's sensors, as the log's header describes them */
      const hil_replay_sensor *s = &sh->replay->sensor[k % sh->nsensor];
      sample_schema(schema, sizeof schema, s->nch, s->channel);
      snprintf(name, sizeof name, "achilles.%sSample", s->type);
      channel(&w, k + 1, sh->topics[k], name, schema);
      continue;
    }
    const sens_sensor *s = sens_set_sensor(sh->sensors, k % sh->nsensor);
    sample_schema(schema, sizeof schema, s->nch, s->channel);
    snprintf(name, sizeof name, "achilles.%sSample", sens_type_name(s->type));
    channel(&w, k + 1, sh->topics[k], name, schema);
  }
  char *status = malloc(STATUS_SCHEMA_MAX);
  if (!status || status_schema(status, STATUS_SCHEMA_MAX, sh) < 0) {
    free(status);
    return HIL_ENOMEM;
  }
  channel(&w, view__fox_status_channel(sh), "status", "achilles.Status", status);
  free(status);
  channel(&w, view__fox_tf_channel(sh), "/tf", "foxglove.FrameTransforms", tf_schema);
  if (sh->m) {
    channel(&w, view__fox_robot_channel(sh), "/robot", "foxglove.SceneUpdate",
            view__scene_schema);
    channel(&w, view__fox_contacts_channel(sh), "/contacts", "foxglove.SceneUpdate",
            view__scene_schema);
  }
  hil_jw_end_array(&w);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}

/* Every body's pose in the world frame ("world" → body name), at simulation time t. */
int view__fox_encode_tf(char *out, size_t cap, const view_shared *sh, const view_frame *f) {
  const sim_model *m = sh->m;
  const uint64_t ns = view__ns(f->t);
  hil_jw w;
  hil_jw_init(&w, out, cap);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "transforms");
  hil_jw_begin_array(&w);
  for (int b = 1; m && b < m->nbody; b++) { /* a replay: no bodies */
    double q[4];
    view__mat_quat(q, f->xmat + 9 * b);
    const double *p = f->xpos + 3 * b;
    hil_jw_begin_object(&w);
    hil_jw_key(&w, "timestamp");
    hil_jw_begin_object(&w);
    hil_jw_key(&w, "sec");
    hil_jw_uint(&w, ns / 1000000000u);
    hil_jw_key(&w, "nsec");
    hil_jw_uint(&w, ns % 1000000000u);
    hil_jw_end_object(&w);
    hil_jw_key(&w, "parent_frame_id");
    hil_jw_string(&w, "world");
    hil_jw_key(&w, "child_frame_id");
    hil_jw_string(&w, m->bodies[b].name);
    hil_jw_key(&w, "translation");
    hil_jw_begin_object(&w);
    static const char *const xyz[3] = {"x", "y", "z"};
    for (int i = 0; i < 3; i++) {
      hil_jw_key(&w, xyz[i]);
      hil_jw_number(&w, p[i]);
    }
    hil_jw_end_object(&w);
    hil_jw_key(&w, "rotation");
    hil_jw_begin_object(&w);
    for (int i = 0; i < 3; i++) {
      hil_jw_key(&w, xyz[i]);
      hil_jw_number(&w, q[i + 1]);
    }
    hil_jw_key(&w, "w");
    hil_jw_number(&w, q[0]);
    hil_jw_end_object(&w);
    hil_jw_end_object(&w);
  }
  hil_jw_end_array(&w);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}

/* Leaves out the "values" entries that are null (the text as hil_msg_encode_sample_view writes
 * it: compact, the values object after "valid", numbers or null in it). In place; the new
 * length. */
static int drop_null_values(char *s, int len) {
  static const char key[] = "\"values\":{";
  char *valid = strstr(s, "\"valid\":");
  char *p = valid ? strstr(valid, key) : NULL;
  if (!p) {
    return len;
  }
  char *out = p + sizeof key - 1, *q = out;
  while (*q == '"' || *q == ',') {
    q += *q == ',';
    char *entry = q++;
    while (*q && *q != '"') { /* the key, escapes included */
      q += *q == '\\' && q[1] ? 2 : 1;
    }
    if (*q != '"' || q[1] != ':') {
      return len; /* not the expected shape: leave it as it is */
    }
    char *value = q + 2;
    q = value + strcspn(value, ",}");
    if (q - value == 4 && memcmp(value, "null", 4) == 0) {
      continue;
    }
    if (out != p + sizeof key - 1) {
      *out++ = ',';
    }
    memmove(out, entry, (size_t)(q - entry));
    out += q - entry;
  }
  const size_t rest = (size_t)len - (size_t)(q - s);
  memmove(out, q, rest + 1);
  return (int)((size_t)(out - s) + rest);
}

int view__fox_encode_sample(char *out, size_t cap, const view_shared *sh, const view_frame *f,
                            int k) {
  const int n = view__encode_stream(out, cap, sh, f, k);
  return n > 0 ? drop_null_values(out, n) : n;
}

int view__fox_status_message(char *out, size_t cap, int level, const char *message) {
  hil_jw w;
  hil_jw_init(&w, out, cap);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "op");
  hil_jw_string(&w, "status");
  hil_jw_key(&w, "level");
  hil_jw_uint(&w, (uint64_t)level);
  hil_jw_key(&w, "message");
  hil_jw_string(&w, message);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}
