/* hil/zmq/json_messages.c: JSON encoding of the ZeroMQ messages (samples, their forms, the latest
 * reply, status, commands, errors); see json_messages.h and docs/messages.md. Decoding:
 * json_decode.c. */
#include "hil/zmq/json_messages.h"

#include <math.h>
#include <string.h>

#include "hil/error.h"
#include "hil/number_format.h"

/* --- sensor samples --------------------------------------------------------------------------- */

const char *hil_msg_topic_prefix(sens_type type) {
  switch (type) {
  case SENS_ENCODER:
    return "enc";
  case SENS_IMU:
    return "imu";
  case SENS_TOUCH:
    return "tch";
  case SENS_TORQUE:
  default:
    return "trq";
  }
}

const char *hil_msg_unit(const sim_model *m, const sens_sensor *s, int ch) {
  const char *name = s->channel[ch];
  switch (s->type) {
  case SENS_ENCODER:
    if (strcmp(name, "counts") == 0) {
      return "count";
    }
    if (strcmp(name, "angle") == 0) {
      return "rad";
    }
    return strcmp(name, "velocity") == 0 ? "rad/s" : "flag";
  case SENS_IMU:
    return strncmp(name, "gyro", 4) == 0 ? "rad/s" : "m/s^2";
  case SENS_TOUCH:
    return "N";
  case SENS_TORQUE:
  default:
    if (strcmp(name, "current") == 0) {
      return "A";
    }
    if (m && s->u.trq.joint >= 0 && s->u.trq.joint < m->njnt &&
        m->joints[s->u.trq.joint].type == SIM_JOINT_SLIDE) {
      return "N";
    }
    return "N*m";
  }
}

/* Built by copying (it runs for every message published: snprintf was a tenth of the cost). */
int hil_msg_topic(char *out, size_t out_sz, const sens_sensor *s, int truth) {
  const char *const parts[4] = {truth ? "truth/" : "", hil_msg_topic_prefix(s->type), "/",
                                s->name};
  size_t n = 0;
  for (int i = 0; i < 4; i++) {
    const size_t len = strlen(parts[i]);
    if (n + len >= out_sz) {
      if (out_sz > 0) {
        out[0] = '\0';
      }
      return HIL_EINVAL;
    }
    memcpy(out + n, parts[i], len);
    n += len;
  }
  out[n] = '\0';
  return (int)n;
}

int hil_msg_encode_sample_view(char *out, size_t out_sz, const hil_msg_sample_view *v) {
  hil_jw w;
  hil_jw_init(&w, out, out_sz);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "v");
  hil_jw_uint(&w, HIL_MSG_VERSION);
  hil_jw_key(&w, "sensor");
  hil_jw_string(&w, v->sensor);
  hil_jw_key(&w, "type");
  hil_jw_string(&w, v->type);
  hil_jw_key(&w, "truth");
  hil_jw_bool(&w, v->truth);
  hil_jw_key(&w, "seq");
  hil_jw_uint(&w, v->seq);
  hil_jw_key(&w, "t");
  hil_jw_number(&w, v->t);
  hil_jw_key(&w, "t_truth");
  hil_jw_number(&w, v->truth ? v->t : v->t_truth);
  hil_jw_key(&w, "valid");
  hil_jw_bool(&w, v->truth ? 1 : v->valid);
  hil_jw_key(&w, "values");
  hil_jw_begin_object(&w);
  for (int i = 0; i < v->nch; i++) {
    hil_jw_key(&w, v->channel[i]);
    hil_jw_number(&w, v->values[i]);
  }
  hil_jw_end_object(&w);
  hil_jw_key(&w, "units");
  hil_jw_begin_object(&w);
  for (int i = 0; i < v->nch; i++) {
    hil_jw_key(&w, v->channel[i]);
    hil_jw_string(&w, v->unit[i]);
  }
  hil_jw_end_object(&w);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}

void hil_msg_write_sensor_fields(hil_jw *w, const hil_msg_sensor_view *v) {
  hil_jw_key(w, "name");
  hil_jw_string(w, v->name);
  hil_jw_key(w, "type");
  hil_jw_string(w, v->type);
  hil_jw_key(w, "topic");
  hil_jw_string(w, v->topic);
  hil_jw_key(w, "rate_hz");
  hil_jw_number(w, v->rate_hz);
  hil_jw_key(w, "latency_s");
  hil_jw_number(w, v->latency_s);
  hil_jw_key(w, "drop_probability");
  hil_jw_number(w, v->drop_probability);
  hil_jw_key(w, "dead");
  hil_jw_bool(w, v->dead);
  hil_jw_key(w, "channels");
  hil_jw_begin_array(w);
  for (int i = 0; i < v->nch; i++) {
    hil_jw_string(w, v->channel[i]);
  }
  hil_jw_end_array(w);
  hil_jw_key(w, "units");
  hil_jw_begin_array(w);
  for (int i = 0; i < v->nch; i++) {
    hil_jw_string(w, v->unit[i]);
  }
  hil_jw_end_array(w);
  if (v->joint) {
    hil_jw_key(w, "joint");
    hil_jw_string(w, v->joint);
  }
  if (v->body) {
    hil_jw_key(w, "body");
    hil_jw_string(w, v->body);
  }
  if (v->geom) {
    hil_jw_key(w, "geom");
    hil_jw_string(w, v->geom);
  }
  if (v->counts_per_turn > 0) {
    hil_jw_key(w, "counts_per_rev");
    hil_jw_uint(w, (uint64_t)v->counts_per_rev);
    hil_jw_key(w, "counts_per_turn");
    hil_jw_uint(w, (uint64_t)v->counts_per_turn);
    hil_jw_key(w, "resolution");
    hil_jw_number(w, v->resolution);
  }
}

/* The view of sensor s's sample smp (smp NULL: only the fixed parts, for a form). */
static hil_msg_sample_view sample_view(const sim_model *m, const sens_sensor *s,
                                       const sens_sample *smp, int truth) {
  hil_msg_sample_view v = {.sensor = s->name,
                           .type = sens_type_name(s->type),
                           .truth = truth,
                           .nch = s->nch};
  if (smp) {
    v.seq = smp->seq;
    v.t = smp->t;
    v.t_truth = smp->t_truth;
    v.valid = smp->valid;
    v.values = truth ? smp->truth : smp->meas;
  }
  for (int i = 0; i < s->nch; i++) {
    v.channel[i] = s->channel[i];
    v.unit[i] = hil_msg_unit(m, s, i);
  }
  return v;
}

int hil_msg_encode_sample(char *out, size_t out_sz, const sim_model *m, const sens_sensor *s,
                          const sens_sample *smp, int truth) {
  const hil_msg_sample_view v = sample_view(m, s, smp, truth);
  return hil_msg_encode_sample_view(out, out_sz, &v);
}

/* --- sample forms ----------------------------------------------------------------------------- */

/* The form holds, escaped as hil_msg_encode_sample_view escapes them, the parts of the message
 * that never change: the head up to "seq":, each key of the values object, and the tail from the
 * end of the values object. Only the numbers are formatted per sample. */
int hil_msg_sample_form_init(hil_msg_sample_form *f, const sim_model *m, const sens_sensor *s,
                             int truth) {
  const hil_msg_sample_view v = sample_view(m, s, NULL, truth);
  f->nch = v.nch;
  f->truth = truth;
  hil_jw w;
  hil_jw_init(&w, f->text, sizeof f->text);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "v");
  hil_jw_uint(&w, HIL_MSG_VERSION);
  hil_jw_key(&w, "sensor");
  hil_jw_string(&w, v.sensor);
  hil_jw_key(&w, "type");
  hil_jw_string(&w, v.type);
  hil_jw_key(&w, "truth");
  hil_jw_bool(&w, v.truth);
  hil_jw_key(&w, "seq");
  f->head_end = (uint16_t)w.len;
  for (int i = 0; i < v.nch; i++) {
    hil_jw_quoted_between(&w, i ? "," : "", v.channel[i], ":");
    f->key_end[i] = (uint16_t)w.len;
  }
  hil_jw_puts(&w, "},\"units\":{");
  for (int i = 0; i < v.nch; i++) {
    hil_jw_quoted_between(&w, i ? "," : "", v.channel[i], ":");
    hil_jw_quoted_between(&w, "", v.unit[i], "");
  }
  hil_jw_puts(&w, "}}");
  f->tail_end = (uint16_t)w.len;
  return hil_jw_finish(&w) < 0 ? HIL_ENOMEM : HIL_OK;
}

static void jw_put_number(hil_jw *w, double v) {
  char num[HIL_NUM_MAX];
  hil_jw_put(w, num, (size_t)hil_num_format(num, v));
}

int hil_msg_encode_sample_form(char *out, size_t out_sz, const hil_msg_sample_form *f,
                               const sens_sample *smp) {
  hil_jw w;
  hil_jw_init(&w, out, out_sz);
  hil_jw_put(&w, f->text, f->head_end);
  w.after_key = 1; /* the value of "seq" */
  hil_jw_uint(&w, smp->seq);
  hil_jw_puts(&w, ",\"t\":");
  jw_put_number(&w, smp->t);
  hil_jw_puts(&w, ",\"t_truth\":");
  jw_put_number(&w, f->truth ? smp->t : smp->t_truth);
  hil_jw_puts(&w, f->truth || smp->valid ? ",\"valid\":true,\"values\":{"
                                     : ",\"valid\":false,\"values\":{");
  const double *values = f->truth ? smp->truth : smp->meas;
  size_t from = f->head_end;
  for (int i = 0; i < f->nch; i++) {
    hil_jw_put(&w, f->text + from, f->key_end[i] - from);
    jw_put_number(&w, values[i]);
    from = f->key_end[i];
  }
  hil_jw_put(&w, f->text + from, f->tail_end - from);
  return hil_jw_finish(&w);
}

/* --- the latest reply ------------------------------------------------------------------------ */

void hil_msg_begin_latest(hil_jw *w, double t, uint64_t steps) {
  hil_jw_begin_object(w);
  hil_jw_key(w, "ok");
  hil_jw_bool(w, 1);
  hil_jw_key(w, "t");
  hil_jw_number(w, t);
  hil_jw_key(w, "steps");
  hil_jw_uint(w, steps);
  hil_jw_key(w, "samples");
  hil_jw_begin_object(w);
}

void hil_msg_latest_sample(hil_jw *w, const char *topic, const char *json, int len) {
  if (len > 0) {
    hil_jw_key(w, topic);
    hil_jw_raw(w, json, (size_t)len);
  }
}

void hil_msg_end_latest(hil_jw *w) {
  hil_jw_end_object(w);
  hil_jw_end_object(w);
}

/* --- status ----------------------------------------------------------------------------------- */

static void jw_quantiles(hil_jw *w, const char *key, double p50, double p99, double max) {
  hil_jw_key(w, key);
  hil_jw_begin_object(w);
  hil_jw_key(w, "p50");
  hil_jw_number(w, p50);
  hil_jw_key(w, "p99");
  hil_jw_number(w, p99);
  hil_jw_key(w, "max");
  hil_jw_number(w, max);
  hil_jw_end_object(w);
}

static void jw_counter(hil_jw *w, const char *key, uint64_t v) {
  hil_jw_key(w, key);
  hil_jw_uint(w, v);
}

void hil_msg_write_status_fields(hil_jw *w, const hil_status *st) {
  hil_jw_key(w, "t");
  hil_jw_number(w, st->sim_time);
  hil_jw_key(w, "wall_time");
  hil_jw_number(w, st->wall_time);
  jw_counter(w, "steps", st->steps);
  hil_jw_key(w, "mode");
  hil_jw_string(w, hil_mode_name(st->mode));
  hil_jw_key(w, "paused");
  hil_jw_bool(w, st->paused);
  jw_counter(w, "overruns", st->overruns);
  jw_counter(w, "skipped", st->skipped);
  hil_jw_key(w, "whole_run");
  hil_jw_bool(w, st->whole_run);
  jw_quantiles(w, "late_s", st->late_p50, st->late_p99, st->late_max);
  jw_quantiles(w, "compute_s", st->compute_p50, st->compute_p99, st->compute_max);
  hil_jw_key(w, "deadline_offset_s");
  hil_jw_number(w, st->deadline_offset);
  hil_jw_key(w, "commands");
  hil_jw_begin_object(w);
  jw_counter(w, "accepted", st->commands.accepted);
  jw_counter(w, "clamped", st->commands.clamped);
  jw_counter(w, "rejected_nonfinite", st->commands.rejected_nonfinite);
  jw_counter(w, "rejected_unknown", st->commands.rejected_unknown);
  jw_counter(w, "rejected_malformed", st->commands.rejected_malformed);
  jw_counter(w, "watchdog_trips", st->commands.watchdog_trips);
  hil_jw_end_object(w);
  jw_counter(w, "record_errors", st->record_errors);
  jw_counter(w, "input_deferred", st->input_deferred);
  jw_quantiles(w, "input_s", st->input_p50, st->input_p99, st->input_max);
  hil_jw_key(w, "constraints");
  hil_jw_begin_object(w);
  jw_counter(w, "contacts", (uint64_t)st->contacts);
  jw_counter(w, "rows", (uint64_t)st->constraint_rows);
  jw_counter(w, "active", (uint64_t)st->constraint_active);
  jw_counter(w, "iterations", (uint64_t)st->solver_iterations);
  jw_counter(w, "stops", (uint64_t)st->stops);
  hil_jw_key(w, "normal_force");
  hil_jw_number(w, st->normal_force);
  hil_jw_end_object(w);
  jw_counter(w, "samples_published", st->samples_published);
}

int hil_msg_encode_status(char *out, size_t out_sz, const hil_status *st) {
  hil_jw w;
  hil_jw_init(&w, out, out_sz);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "v");
  hil_jw_uint(&w, HIL_MSG_VERSION);
  hil_msg_write_status_fields(&w, st);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}

int hil_msg_encode_commands(char *out, size_t out_sz, const char *const *names,
                            const double *values, int n, double t) {
  hil_jw w;
  hil_jw_init(&w, out, out_sz);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "v");
  hil_jw_uint(&w, HIL_MSG_VERSION);
  if (!isnan(t)) {
    hil_jw_key(&w, "t");
    hil_jw_number(&w, t);
  }
  hil_jw_key(&w, "commands");
  hil_jw_begin_object(&w);
  for (int i = 0; i < n; i++) {
    hil_jw_key(&w, names[i]);
    hil_jw_number(&w, values[i]);
  }
  hil_jw_end_object(&w);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}

int hil_msg_encode_error(char *out, size_t out_sz, const char *message) {
  hil_jw w;
  hil_jw_init(&w, out, out_sz);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "ok");
  hil_jw_bool(&w, 0);
  hil_jw_key(&w, "error");
  hil_jw_string(&w, message);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}
