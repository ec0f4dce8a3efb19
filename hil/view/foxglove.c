/* hil/view/foxglove.c: the messages of the Foxglove WebSocket protocol (foxglove.websocket.v1)
 * that the view's server sends: server info, channel advertisements with JSON Schemas, frame
 * transforms (the well-known foxglove.FrameTransforms schema) and status. The sample channels
 * carry the ZeroMQ sample messages unchanged (docs/messages.md, section 3). docs/view.md. */
#include "hil/view/view_internal.h"

#include <stdio.h>
#include <string.h>

int view__fox_status_channel(const view_shared *sh) {
  return 2 * sh->nsensor + 1;
}

int view__fox_tf_channel(const view_shared *sh) {
  return 2 * sh->nsensor + 2;
}

int view__fox_nchannels(const view_shared *sh) {
  return 2 * sh->nsensor + 2;
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
 * text): every key of docs/messages.md section 3, the channels named. */
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
  for (int part = 0; part < 2; part++) { /* values: numbers (null when invalid); units: text */
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
      if (part == 0) {
        hil_jw_begin_array(&w);
        hil_jw_string(&w, "number");
        hil_jw_string(&w, "null");
        hil_jw_end_array(&w);
      } else {
        hil_jw_string(&w, "string");
      }
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
  channel(&w, view__fox_status_channel(sh), "status", "achilles.Status",
          "{\"type\":\"object\"}");
  channel(&w, view__fox_tf_channel(sh), "/tf", "foxglove.FrameTransforms", tf_schema);
  hil_jw_end_array(&w);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}

/* Every body's pose in the world frame ("world" → body name), at simulation time t. */
int view__fox_encode_tf(char *out, size_t cap, const view_shared *sh, const view_frame *f) {
  const sim_model *m = sh->m;
  const uint64_t ns = f->t > 0 ? (uint64_t)(f->t * 1e9 + 0.5) : 0;
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
