/* hil/zmq/zmq_control.c: the control requests (docs/messages.md, section 7): what each does and
 * its reply, for the REP socket (zmq_transport.c) and for the view (hil_zmq_control_answer). */
#include "hil/zmq/zmq_control.h"
#include "hil/zmq/zmq_internal.h"

#include <stdio.h>
#include <string.h>

#include "hil/error.h"

static void jw_ok(hil_jw *w) {
  hil_jw_begin_object(w);
  hil_jw_key(w, "ok");
  hil_jw_bool(w, 1);
}

static const char *joint_type_name(sim_joint_type type) {
  return type == SIM_JOINT_HINGE ? "hinge" : type == SIM_JOINT_SLIDE ? "slide" : "fixed";
}

static const char *actuator_type_name(sim_actuator_type type) {
  switch (type) {
  case SIM_ACT_DC_MOTOR:
    return "dc_motor";
  case SIM_ACT_POSITION_SERVO:
    return "position_servo";
  case SIM_ACT_VELOCITY_SERVO:
    return "velocity_servo";
  case SIM_ACT_SMART_SERVO:
    return "servo";
  case SIM_ACT_MUSCLE:
    return "muscle";
  case SIM_ACT_MOTOR:
  default:
    return "motor";
  }
}

/* The members describing one sensor (hello, get_param without a path). */
static void jw_sensor_fields(hil_jw *w, const sim_model *m, const sens_sensor *s) {
  char topic[HIL_MSG_TOPIC_MAX];
  hil_msg_topic(topic, sizeof topic, s, 0);
  hil_msg_sensor_view v = {.name = s->name,
                           .type = sens_type_name(s->type),
                           .topic = topic,
                           .rate_hz = s->rate_hz,
                           .latency_s = s->delay_s,
                           .drop_probability = s->drop_probability,
                           .dead = s->dead,
                           .nch = s->nch};
  for (int i = 0; i < s->nch; i++) {
    v.channel[i] = s->channel[i];
    v.unit[i] = hil_msg_unit(m, s, i);
  }
  if (s->type == SENS_ENCODER) {
    v.joint = m->joints[s->u.enc.joint].name;
    v.counts_per_rev = s->u.enc.counts_per_rev;
    v.counts_per_turn = s->u.enc.counts_per_turn;
    v.resolution = s->u.enc.step;
  } else if (s->type == SENS_TORQUE) {
    v.joint = m->joints[s->u.trq.joint].name;
  } else if (s->type == SENS_IMU) {
    v.body = m->bodies[s->u.imu.body].name;
  } else if (s->type == SENS_TOUCH) {
    v.geom = m->geoms[s->u.tch.geom].name;
  }
  hil_msg_write_sensor_fields(w, &v);
}

static void jw_model(hil_jw *w, const sim_model *m) {
  hil_jw_key(w, "joints");
  hil_jw_begin_array(w);
  for (int j = 0; j < m->njnt; j++) {
    hil_jw_begin_object(w);
    hil_jw_key(w, "name");
    hil_jw_string(w, m->joints[j].name);
    hil_jw_key(w, "type");
    hil_jw_string(w, joint_type_name(m->joints[j].type));
    hil_jw_end_object(w);
  }
  hil_jw_end_array(w);
  hil_jw_key(w, "actuators");
  hil_jw_begin_array(w);
  for (int i = 0; i < m->nu; i++) {
    const sim_actuator *a = &m->actuators[i];
    hil_jw_begin_object(w);
    hil_jw_key(w, "name");
    hil_jw_string(w, a->name);
    hil_jw_key(w, a->joint >= 0 ? "joint" : "tendon"); /* an actuator pulls one or the other */
    hil_jw_string(w, a->joint >= 0 ? m->joints[a->joint].name : m->tendons[a->tendon].name);
    hil_jw_key(w, "type");
    hil_jw_string(w, actuator_type_name(a->type));
    hil_jw_key(w, "ctrlrange");
    hil_jw_begin_array(w);
    hil_jw_number(w, a->ctrlrange[0]); /* null when unlimited */
    hil_jw_number(w, a->ctrlrange[1]);
    hil_jw_end_array(w);
    hil_jw_end_object(w);
  }
  hil_jw_end_array(w);
}

static void reply_hello(zmq_transport *z, hil_runtime *rt, hil_jw *w) {
  const sim_model *m = hil_runtime_model(rt);
  sens_set *set = hil_runtime_sensors(rt);
  hil_status st;
  hil_runtime_status(rt, &st);
  jw_ok(w);
  hil_jw_key(w, "v");
  hil_jw_uint(w, HIL_MSG_VERSION);
  hil_jw_key(w, "model");
  hil_jw_string(w, m->name);
  hil_jw_key(w, "rate_hz");
  hil_jw_number(w, hil_runtime_options(rt)->rate_hz);
  hil_jw_key(w, "timestep");
  hil_jw_number(w, m->opt.timestep);
  hil_jw_key(w, "mode");
  hil_jw_string(w, hil_mode_name(st.mode));
  hil_jw_key(w, "t");
  hil_jw_number(w, st.sim_time);
  hil_jw_key(w, "steps");
  hil_jw_uint(w, st.steps);
  hil_jw_key(w, "paused");
  hil_jw_bool(w, st.paused);
  hil_jw_key(w, "truth");
  hil_jw_bool(w, z ? z->opt.truth : 0);
  if (set) {
    hil_jw_key(w, "seed");
    hil_jw_uint(w, sens_set_seed(set));
  }
  jw_model(w, m);
  hil_jw_key(w, "sensors");
  hil_jw_begin_array(w);
  for (int i = 0; set && i < sens_set_count(set); i++) {
    hil_jw_begin_object(w);
    jw_sensor_fields(w, m, sens_set_sensor(set, i));
    hil_jw_end_object(w);
  }
  hil_jw_end_array(w);
  hil_jw_key(w, "endpoints");
  hil_jw_begin_object(w);
  for (int i = 0; z && i < NSOCK; i++) {
    hil_jw_key(w, hil__zmq_socket_key[i]);
    hil_jw_string(w, z->endpoint[i]);
  }
  hil_jw_end_object(w);
  hil_jw_end_object(w);
  /* a status message on the stream: a client that sees it knows its subscription is live */
  if (z) {
    hil__zmq_publish_status(&z->base, rt, &st);
  }
}

static void reply_status(zmq_transport *z, hil_runtime *rt, hil_jw *w) {
  hil_status st;
  hil_runtime_status(rt, &st);
  jw_ok(w);
  hil_jw_key(w, "status");
  hil_jw_begin_object(w);
  hil_jw_key(w, "v");
  hil_jw_uint(w, HIL_MSG_VERSION);
  hil_msg_write_status_fields(w, &st);
  if (z) {
    hil_zmq_write_counters(w, &z->n);
  }
  hil_jw_end_object(w);
  hil_jw_end_object(w);
  if (z) {
    hil__zmq_publish_status(&z->base, rt, &st);
  }
}

/* {"ok":true,"t":T,"steps":N,"samples":{topic: sample message, ...}}: the newest message of
 * every stream, byte for byte as the PUB sent it (a stream without a sample since the start or
 * the last reset is left out). Answered between ticks, so it is the state after the last step:
 * what a subscriber that fell behind would want, at the cost of one round trip. */
static void reply_latest(zmq_transport *z, hil_runtime *rt, hil_jw *w) {
  hil_msg_begin_latest(w, hil_runtime_data(rt)->time, hil_runtime_steps(rt));
  for (int i = 0; z && i < z->streams.n; i++) {
    const streams *st = &z->streams;
    hil_msg_latest_sample(w, st->s[i].topic, st->s[i].json, st->s[i].len);
  }
  hil_msg_end_latest(w);
}

/* The value at `path` of sensor s: a sensor-level key, or a chain parameter ("noise.white.sigma";
 * an IMU's prefixed by its group, "gyro.noise.white.sigma"). Returns 0, or -1 when unknown. */
static int sensor_param(const sens_sensor *s, const char *path, double *out) {
  const struct {
    const char *path;
    double value;
  } sensor_level[] = {
      {"drop_probability", s->drop_probability},
      {"rate_hz", s->rate_hz},
      {"latency_s", s->delay_s},
  };
  for (size_t i = 0; i < sizeof sensor_level / sizeof sensor_level[0]; i++) {
    if (strcmp(path, sensor_level[i].path) == 0) {
      *out = sensor_level[i].value;
      return 0;
    }
  }
  if (s->type == SENS_ENCODER && strcmp(path, "resolution") == 0) {
    *out = s->u.enc.step; /* one count */
    return 0;
  }
  int chain = s->nchain > 0 ? 0 : -1;
  const char *rel = path;
  const char *dot = strchr(path, '.');
  if (s->type == SENS_IMU) {
    chain = -1;
    for (int k = 0; dot && k < s->nchain && chain < 0; k++) {
      const char *g = s->group[s->group_of_chain[k]];
      if (strlen(g) == (size_t)(dot - path) && strncmp(path, g, strlen(g)) == 0) {
        chain = k;
        rel = dot + 1;
      }
    }
  }
  if (chain < 0) {
    return -1;
  }
  sens_chain_params p = s->chain[chain].p; /* sens_chain_field wants a mutable struct */
  const double *field = sens_chain_field(&p, rel);
  if (!field) {
    return -1;
  }
  *out = *field;
  return 0;
}

static void jw_param_reply(hil_jw *w, const char *sensor, const char *path, double value) {
  jw_ok(w);
  hil_jw_key(w, "sensor");
  hil_jw_string(w, sensor);
  hil_jw_key(w, "path");
  hil_jw_string(w, path);
  hil_jw_key(w, "value");
  hil_jw_number(w, value);
  hil_jw_end_object(w);
}

/* Returns NULL with a reply written, or the error message to reply with. */
static const char *reply_get_param(hil_runtime *rt, const hil_ctl_request *r, hil_jw *w,
                                   char *err, size_t err_sz) {
  sens_set *set = hil_runtime_sensors(rt);
  const int i = set ? sens_set_find(set, r->sensor) : -1;
  if (i < 0) {
    snprintf(err, err_sz, "sensor \"%s\": no such sensor", r->sensor);
    return err;
  }
  const sens_sensor *s = sens_set_sensor(set, i);
  if (!r->path[0]) {
    jw_ok(w);
    hil_jw_key(w, "sensor");
    hil_jw_begin_object(w);
    jw_sensor_fields(w, hil_runtime_model(rt), s);
    hil_jw_end_object(w);
    hil_jw_end_object(w);
    return NULL;
  }
  double value = 0;
  if (sensor_param(s, r->path, &value) != 0) {
    snprintf(err, err_sz, "%s.%s: no such parameter", s->name, r->path);
    return err;
  }
  jw_param_reply(w, s->name, r->path, value);
  return NULL;
}

static const char *reply_set_param(hil_runtime *rt, const hil_ctl_request *r, hil_jw *w,
                                   char *err, size_t err_sz) {
  sens_set *set = hil_runtime_sensors(rt);
  if (!set) {
    snprintf(err, err_sz, "sensor \"%s\": no such sensor", r->sensor);
    return err;
  }
  if (sens_set_param(set, r->sensor, r->path, r->value, err, err_sz) != 0) {
    return err;
  }
  double now = r->value;
  sensor_param(sens_set_sensor(set, sens_set_find(set, r->sensor)), r->path, &now);
  jw_param_reply(w, r->sensor, r->path, now);
  return NULL;
}

static const char *reply_fault(hil_runtime *rt, const hil_ctl_request *r, hil_jw *w, char *err,
                               size_t err_sz) {
  sens_set *set = hil_runtime_sensors(rt);
  if (!set) {
    snprintf(err, err_sz, "sensor \"%s\": no such sensor", r->sensor);
    return err;
  }
  if (sens_set_fault(set, r->sensor, r->group[0] ? r->group : NULL, &r->fault, err, err_sz)) {
    return err;
  }
  jw_ok(w);
  hil_jw_key(w, "sensor");
  hil_jw_string(w, r->sensor);
  hil_jw_key(w, "mode");
  hil_jw_string(w, sens_fault_name(r->fault.mode));
  hil_jw_end_object(w);
  return NULL;
}

/* ok with the simulation time and one flag. */
static void reply_time(hil_runtime *rt, hil_jw *w, const char *key, uint64_t value) {
  hil_status st;
  hil_runtime_status(rt, &st);
  jw_ok(w);
  hil_jw_key(w, "t");
  hil_jw_number(w, st.sim_time);
  hil_jw_key(w, "steps");
  hil_jw_uint(w, st.steps);
  hil_jw_key(w, "paused");
  hil_jw_bool(w, st.paused);
  if (key) {
    hil_jw_key(w, key);
    hil_jw_uint(w, value);
  }
  hil_jw_end_object(w);
}

/* Carries out one request; returns NULL after writing the reply, or an error message. */
static const char *execute(zmq_transport *z, hil_runtime *rt, const hil_ctl_request *r,
                           hil_jw *w, char *err, size_t err_sz) {
  switch (r->op) {
  case HIL_CTL_HELLO:
    reply_hello(z, rt, w);
    return NULL;
  case HIL_CTL_STATUS:
    reply_status(z, rt, w);
    return NULL;
  case HIL_CTL_LATEST:
    reply_latest(z, rt, w);
    return NULL;
  case HIL_CTL_PAUSE:
    hil_runtime_pause(rt);
    break;
  case HIL_CTL_RESUME:
    hil_runtime_resume(rt);
    break;
  case HIL_CTL_STEP:
    if (hil_runtime_options(rt)->mode != HIL_MODE_LOCKSTEP) {
      snprintf(err, err_sz, "step: only in lockstep mode (running %s)",
               hil_mode_name(hil_runtime_options(rt)->mode));
      return err;
    }
    hil_runtime_request_steps(rt, r->n);
    reply_time(rt, w, "granted", r->n);
    return NULL;
  case HIL_CTL_RESET:
    hil_runtime_reset(rt);
    break;
  case HIL_CTL_SNAPSHOT_SAVE:
    hil_runtime_snapshot_save(rt);
    break;
  case HIL_CTL_SNAPSHOT_RESTORE:
    if (hil_runtime_snapshot_restore(rt) != HIL_OK) {
      snprintf(err, err_sz, "snapshot_restore: no snapshot saved");
      return err;
    }
    break;
  case HIL_CTL_GET_PARAM:
    return reply_get_param(rt, r, w, err, err_sz);
  case HIL_CTL_SET_PARAM:
    return reply_set_param(rt, r, w, err, err_sz);
  case HIL_CTL_FAULT:
    return reply_fault(rt, r, w, err, err_sz);
  default:
    snprintf(err, err_sz, "cmd: no handler for \"%s\"", hil_ctl_op_name(r->op));
    return err;
  }
  reply_time(rt, w, NULL, 0);
  return NULL;
}

/* Decodes and carries out one request into out: the reply, or an error reply. Returns the
 * length and sets *failed. z may be NULL (see hil_zmq_control_answer). */
int hil__zmq_respond(zmq_transport *z, hil_runtime *rt, const char *req, size_t len, char *out,
                     size_t out_sz, int *failed) {
  char err[512];
  const char *failure = NULL;
  hil_ctl_request r;
  hil_jw w;
  hil_jw_init(&w, out, out_sz);
  if (hil_msg_decode_control(&r, req, len, err, sizeof err) != HIL_OK) {
    failure = err;
  } else {
    failure = execute(z, rt, &r, &w, err, sizeof err);
  }
  int n = failure ? -1 : hil_jw_finish(&w);
  if (!failure && n < 0) {
    failure = "reply too large";
  }
  *failed = failure != NULL;
  if (failure) {
    n = hil_msg_encode_error(out, out_sz, failure);
  }
  return n > 0 ? n : 0;
}

/* See zmq_transport.h. */
int hil_zmq_control_answer(hil_transport *t, hil_runtime *rt, const char *req, size_t len,
                           char *out, size_t out_sz) {
  int failed = 0;
  return hil__zmq_respond((zmq_transport *)t, rt, req, len, out, out_sz, &failed);
}

