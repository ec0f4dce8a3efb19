/* hil/zmq/zmq_publish.c: the ZeroMQ transport's PUB socket: one stream per sensor (and per truth),
 * each message encoded from its form and kept as the stream's newest (the `latest` reply), the
 * end-of-step marker and the status (docs/messages.md, sections 2 to 4). */
#include "hil/zmq/zmq_internal.h"

#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "hil/error.h"

static void send_two(zmq_transport *z, const char *topic, const char *body, size_t len) {
  void *pub = z->sock[HIL_ZMQ_PUB];
  if (zmq_send(pub, topic, strlen(topic), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
      zmq_send(pub, body, len, ZMQ_DONTWAIT) < 0) {
    z->n.send_failed++;
    return;
  }
  z->n.sent++;
}

static stream *stream_of(zmq_transport *z, const sens_sensor *s, int truth) {
  streams *st = &z->streams;
  const ptrdiff_t i = s - st->first;
  if (!st->s || i < 0 || i >= st->nsensor) {
    return NULL;
  }
  return &st->s[truth ? st->nsensor + i : i];
}

/* Keeps `latest` from offering samples of before a reset (or a restore to an earlier time):
 * at the end of a step that went back in time, a sample later than that step is from the lost
 * future. Judged per step, not per sample: a sensor on its own clock (an 800 Hz IMU) publishes
 * samples from inside the step, earlier than the step's other samples. */
static void forget_the_future(streams *st, double t) {
  if (t < st->t) {
    for (int i = 0; i < st->n; i++) {
      if (st->s[i].t > t) {
        st->s[i].len = 0;
      }
    }
  }
  st->t = t;
}

/* Samples come only from the sensors attach sized the streams for (the runtime adds a transport
 * through attach); a sensor outside them would count as a failed send. */
static void publish_one(zmq_transport *z, const sens_sensor *s, const sens_sample *smp,
                        int truth) {
  stream *st = stream_of(z, s, truth);
  const int len =
      st ? hil_msg_encode_sample_form(st->json, sizeof st->json, &st->form, smp) : HIL_EINVAL;
  if (len < 0) {
    z->n.send_failed++;
    return;
  }
  st->len = len;
  st->t = smp->t;
  send_two(z, st->topic, st->json, (size_t)len);
  z->step_samples++;
}

/* The end-of-step marker, topic "step": {"v":1,"step":N,"t":T,"samples":K} after the K sample
 * messages (truth ones included) of the state at simulation time T, N steps since start. */
void hil__zmq_publish_step(hil_transport *t, hil_runtime *rt, uint64_t steps, double sim_time) {
  zmq_transport *z = (zmq_transport *)t;
  (void)rt;
  forget_the_future(&z->streams, sim_time);
  char json[160];
  hil_jw w;
  hil_jw_init(&w, json, sizeof json);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "v");
  hil_jw_uint(&w, HIL_MSG_VERSION);
  hil_jw_key(&w, "step");
  hil_jw_uint(&w, steps);
  hil_jw_key(&w, "t");
  hil_jw_number(&w, sim_time);
  hil_jw_key(&w, "samples");
  hil_jw_uint(&w, z->step_samples);
  hil_jw_end_object(&w);
  const int len = hil_jw_finish(&w);
  z->step_samples = 0;
  if (len < 0) {
    z->n.send_failed++;
    return;
  }
  send_two(z, "step", json, (size_t)len);
}

void hil__zmq_publish_sample(hil_transport *t, hil_runtime *rt, const sens_sensor *s,
                             const sens_sample *smp) {
  zmq_transport *z = (zmq_transport *)t;
  (void)rt;
  publish_one(z, s, smp, 0);
  if (z->opt.truth) {
    publish_one(z, s, smp, 1);
  }
}

/* One stream per sensor (and per truth stream) with its topic and message form. */
int hil__zmq_attach(hil_transport *t, hil_runtime *rt) {
  zmq_transport *z = (zmq_transport *)t;
  streams *st = &z->streams;
  const sens_set *set = hil_runtime_sensors(rt);
  if (!set || sens_set_count(set) == 0) {
    return HIL_OK;
  }
  st->nsensor = sens_set_count(set);
  st->first = sens_set_sensor(set, 0);
  st->n = z->opt.truth ? 2 * st->nsensor : st->nsensor;
  st->s = calloc((size_t)st->n, sizeof *st->s);
  if (!st->s) {
    return HIL_ENOMEM;
  }
  for (int i = 0; i < st->n; i++) {
    const sens_sensor *s = sens_set_sensor(set, i % st->nsensor);
    const int truth = i >= st->nsensor;
    if (hil_msg_topic(st->s[i].topic, sizeof st->s[i].topic, s, truth) < 0 ||
        hil_msg_sample_form_init(&st->s[i].form, hil_runtime_model(rt), s, truth) != HIL_OK) {
      return HIL_ENOMEM;
    }
  }
  return HIL_OK;
}

void hil__zmq_publish_status(hil_transport *t, hil_runtime *rt, const hil_status *st) {
  zmq_transport *z = (zmq_transport *)t;
  (void)rt;
  hil_jw w;
  hil_jw_init(&w, z->status, sizeof z->status);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "v");
  hil_jw_uint(&w, HIL_MSG_VERSION);
  hil_msg_write_status_fields(&w, st);
  hil_zmq_write_counters(&w, &z->n);
  hil_jw_end_object(&w);
  const int len = hil_jw_finish(&w);
  if (len < 0) {
    z->n.send_failed++;
    return;
  }
  send_two(z, "status", z->status, (size_t)len);
}
