/* sensors/sensor_set.c: running a loaded sensor set: clocks, sampling, latency, drops,
 * live tuning and faults. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensors/encoder_internal.h"
#include "sensors/set_internal.h"

#define SET_EVENT_STREAM 15u
#define SET_TIME_EPS 1e-9 /* s: sample times closer than this to a physics time coincide */

/* --- identity and reset ---------------------------------------------------------------------- */

uint64_t sens__stream_base(const char *name) {
  /* FNV-1a of the name, then ×16 room for the chain index: streams follow names, not order */
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
    h = (h ^ *c) * 0x100000001b3ULL;
  }
  return h << 4;
}

void sens__sensor_reset(sens_sensor *s, uint64_t seed) {
  for (int k = 0; k < s->nchain; k++) {
    sens_chain_reset(&s->chain[k], seed, s->stream + (uint64_t)k);
  }
  sens_rng_seed(&s->events, seed, s->stream + SET_EVENT_STREAM);
  sens_delay_reset(&s->delay);
  s->seq = 0;
  s->next_n = 0;
  s->last_nstep = -1;
  s->have_held = 0;
  s->fresh = 0;
  memset(&s->sample, 0, sizeof s->sample);
  if (s->type == SENS_ENCODER) {
    s->u.enc.have_prev = 0;
    s->u.enc.have_true = 0;
  }
}

void sens_set_reset(sens_set *s, uint64_t seed) {
  s->seed = seed;
  for (int i = 0; i < s->n; i++) {
    sens__sensor_reset(&s->sensors[i], seed);
  }
}

uint64_t sens_set_seed(const sens_set *s) { return s->seed; }

void sens_set_free(sens_set **s) {
  if (!s || !*s) {
    return;
  }
  free((*s)->sensors);
  free((*s)->delay_storage);
  free(*s);
  *s = NULL;
}

/* --- accessors ------------------------------------------------------------------------------- */

int sens_set_count(const sens_set *s) { return s->n; }

const sens_sensor *sens_set_sensor(const sens_set *s, int i) {
  return (i >= 0 && i < s->n) ? &s->sensors[i] : NULL;
}

int sens_set_find(const sens_set *s, const char *name) {
  for (int i = 0; i < s->n; i++) {
    if (strcmp(s->sensors[i].name, name) == 0) {
      return i;
    }
  }
  return -1;
}

int sens_sensor_channel(const sens_sensor *s, const char *channel) {
  for (int c = 0; c < s->nch; c++) {
    if (strcmp(s->channel[c], channel) == 0) {
      return c;
    }
  }
  return -1;
}

void sens_set_torque_source(sens_set *s, const double *qfrc) { s->torque_src = qfrc; }

void sens_set_callback(sens_set *s, sens_sample_fn fn, void *user) {
  s->callback = fn;
  s->callback_user = user;
}

const char *sens_type_name(sens_type type) {
  switch (type) {
  case SENS_ENCODER:
    return "encoder";
  case SENS_IMU:
    return "imu";
  case SENS_TOUCH:
    return "touch";
  default:
    return "torque";
  }
}

/* --- sampling -------------------------------------------------------------------------------- */

/* The per-sample path has no calls on the way of an encoder: set_sample is written once and
 * inlined twice, into the divided encoder path, where `type` is a constant and the type switches
 * fold away (the common HIL case: encoders sampled every k-th physics step), and into
 * set_sample_any for everything else. */
SENS__ALWAYS_INLINE void set_truth(const sens_set *set, sens_sensor *s, sens_type type,
                                   const sim_model *m, const sim_data *d, double *truth) {
  switch (type) {
  case SENS_ENCODER:
    sens__encoder_truth(s, d, truth);
    break;
  case SENS_IMU:
    sens_imu_truth(s, m, d, truth);
    break;
  case SENS_TOUCH:
    sens_touch_truth(s, m, d, truth);
    break;
  default:
    sens_torque_truth(s, d, set->torque_src ? set->torque_src : d->qfrc_applied, truth);
    break;
  }
}

SENS__ALWAYS_INLINE void set_measure(sens_sensor *s, sens_type type, const double *truth,
                                     double *meas) {
  switch (type) {
  case SENS_ENCODER:
    sens__encoder_measure(s, truth, meas);
    break;
  case SENS_IMU:
    sens_imu_measure(s, truth, meas);
    break;
  case SENS_TOUCH:
    sens_touch_measure(s, truth, meas);
    break;
  default:
    sens_torque_measure(s, truth, meas);
    break;
  }
}

/* out->meas[c] = meas[c] + add and out->truth[c] = truth[c] for c < nch, unrolled (a loop's
 * control would cost more than these few copies) */
#define SET_PUBLISH_CHANNEL(c)                                                                    \
  case (c) + 1:                                                                                   \
    out->meas[c] = meas[c] + add;                                                                 \
    out->truth[c] = truth[c];                                                                     \
    __attribute__((fallthrough));
SENS__ALWAYS_INLINE void set_publish_channels(sens_sample *out, int nch, const double *meas,
                                              double add, const double *truth) {
  switch (nch) {
    SET_PUBLISH_CHANNEL(7)
    SET_PUBLISH_CHANNEL(6)
    SET_PUBLISH_CHANNEL(5)
    SET_PUBLISH_CHANNEL(4)
    SET_PUBLISH_CHANNEL(3)
    SET_PUBLISH_CHANNEL(2)
    SET_PUBLISH_CHANNEL(1)
    SET_PUBLISH_CHANNEL(0)
  default:
    break;
  }
}
#undef SET_PUBLISH_CHANNEL

/* publishes the line [valid, t_truth, meas...] that leaves the delay now, with the truth of now:
 * measurements of an invalid sample are NaN */
SENS__ALWAYS_INLINE void set_publish(sens_sensor *s, double t, const double *late,
                                     const double *truth) {
  sens_sample *out = &s->sample;
  out->t = t;
  out->t_truth = late[1];
  out->seq = s->seq++;
  out->valid = late[0] != 0.0;
  set_publish_channels(out, s->nch, late + 2, out->valid ? 0.0 : NAN, truth);
}

/* publishes a sample while the delay line is still filling: nothing to report yet */
static void set_publish_filling(sens_sensor *s, double t, double t_truth, const double *truth) {
  static const double none[SENS_MAX_CHANNELS];
  sens_sample *out = &s->sample;
  out->t = t;
  out->t_truth = t_truth - s->delay_s;
  out->seq = s->seq++;
  out->valid = 0;
  set_publish_channels(out, s->nch, none, NAN, truth);
}

/* A sample is valid only when what it measured is finite: a truth that is NaN or infinite (a
 * state gone non-finite, which the runtime stops on) must not reach firmware as a good reading,
 * as an encoder's count of a NaN angle would (it reads 0). An encoder's truth includes the
 * joint's angle itself (its count channel is always a number). */
SENS__ALWAYS_INLINE int set_finite(const sens_sensor *s, sens_type type, const double *truth,
                                   const double *meas) {
  int finite = type != SENS_ENCODER || isfinite(truth[SENS_MAX_CHANNELS]);
  for (int c = 0; c < s->nch; c++) {
    finite &= isfinite(truth[c]) && isfinite(meas[c]);
  }
  return finite;
}

/* one sample at time t from the truth of time t_truth: chains, drop, delay, publish.
 * A line of the delay is [valid, t_truth, meas...]: latency delays all three together. With a
 * latency the line leaving the delay (the slot at the head) is published first, then the new
 * line is measured straight into that slot (sens_delay_push without its two copies). */
SENS__ALWAYS_INLINE void set_sample(sens_set *set, sens_sensor *s, sens_type type, double t,
                                    double t_truth, const double *truth) {
  double now[2 + SENS_MAX_CHANNELS];
  double *line = now;
  sens_delay *dl = &s->delay;
  if (dl->length > 0) {
    line = dl->buf + (size_t)dl->head * (size_t)dl->width;
    if (dl->filled == dl->length) {
      set_publish(s, t, line, truth);
    } else {
      set_publish_filling(s, t, t_truth, truth);
      dl->filled++;
    }
    dl->head = dl->head + 1 == dl->length ? 0 : dl->head + 1;
  }
  /* measure: the chains, then the drop decision from the event stream */
  set_measure(s, type, truth, line + 2);
  int valid = !s->dead && set_finite(s, type, truth, line + 2);
  if (s->drop_probability > 0.0 && sens_rng_uniform(&s->events) < s->drop_probability) {
    valid = 0;
  }
  line[0] = valid;
  line[1] = t_truth;
  if (dl->length == 0) {
    set_publish(s, t, line, truth);
  }
  s->fresh++;
  if (set->callback) {
    set->callback(set->callback_user, s, &s->sample);
  }
}

/* set_sample for a sensor of any type */
static void set_sample_any(sens_set *set, sens_sensor *s, double t, double t_truth,
                           const double *truth) {
  set_sample(set, s, s->type, t, t_truth, truth);
}

/* rate divides the physics rate: every divisor-th step */
static void set_update_divided(sens_set *set, sens_sensor *s, const sim_model *m,
                               const sim_data *d) {
  if (d->nstep == s->last_nstep || (s->divisor > 1 && d->nstep % s->divisor != 0)) {
    return;
  }
  s->last_nstep = d->nstep;
  double truth[SENS_TRUTH_SLOTS];
  if (s->type == SENS_ENCODER) {
    set_truth(set, s, SENS_ENCODER, m, d, truth);
    set_sample(set, s, SENS_ENCODER, d->time, d->time, truth);
  } else {
    set_truth(set, s, s->type, m, d, truth);
    set_sample_any(set, s, d->time, d->time, truth);
  }
}

/* own clock at n/rate, sample-and-hold of the last physics state at or before each sample */
static void set_update_held(sens_set *set, sens_sensor *s, const sim_model *m,
                            const sim_data *d) {
  double truth[SENS_TRUTH_SLOTS];
  set_truth(set, s, s->type, m, d, truth);
  for (;;) {
    const double t = (double)s->next_n / s->rate_hz;
    if (t > d->time + SET_TIME_EPS) {
      break;
    }
    if (t < d->time - SET_TIME_EPS && s->have_held) {
      set_sample_any(set, s, t, s->held_time, s->held_truth);
    } else {
      set_sample_any(set, s, t, d->time, truth);
    }
    s->next_n++;
  }
  memcpy(s->held_truth, truth, sizeof truth);
  s->held_time = d->time;
  s->have_held = 1;
}

int sens_set_update(sens_set *set, const sim_model *m, const sim_data *d) {
  int total = 0;
  for (int i = 0; i < set->n; i++) {
    sens_sensor *s = &set->sensors[i];
    s->fresh = 0;
    if (s->divisor > 0) {
      set_update_divided(set, s, m, d);
    } else {
      set_update_held(set, s, m, d);
    }
    total += s->fresh;
  }
  return total;
}

/* --- live tuning ----------------------------------------------------------------------------- */

static sens_sensor *set_lookup(sens_set *set, const char *name, char *err, size_t err_sz) {
  const int i = sens_set_find(set, name);
  if (i < 0) {
    sens_fail(err, err_sz, SENS_ENOTFOUND, "sensor \"%s\": no such sensor", name);
    return NULL;
  }
  return &set->sensors[i];
}

/* chains of a group: "gyro" → chains 0..2; "" → every chain */
static int set_group_index(const sens_sensor *s, const char *group) {
  for (int g = 0; g < 2; g++) {
    if (s->group[g][0] && strcmp(s->group[g], group) == 0) {
      return g;
    }
  }
  return -1;
}

static int set_param_sensor_level(sens_sensor *s, const char *path, double value, char *err,
                                  size_t err_sz) {
  if (strcmp(path, "drop_probability") == 0) {
    if (!(value >= 0.0 && value <= 1.0)) {
      return sens_fail(err, err_sz, SENS_EINVAL, "%s.drop_probability: must be in [0, 1] (got %g)",
                       s->name, value);
    }
    s->drop_probability = value;
    return 0;
  }
  return sens_fail(err, err_sz, SENS_ENOTFOUND,
                   "%s.%s: not a parameter that can change while running", s->name, path);
}

/* apply `value` at chain path `rel` to every chain of group g (-1: all) */
static int set_param_chains(sens_sensor *s, int g, const char *rel, const char *full,
                            double value, char *err, size_t err_sz) {
  int touched = 0;
  for (int k = 0; k < s->nchain; k++) {
    if (g >= 0 && s->group_of_chain[k] != g) {
      continue;
    }
    sens_chain_params p = s->chain[k].p;
    double *field = sens_chain_field(&p, rel);
    if (!field || (s->type == SENS_ENCODER && strcmp(rel, "resolution") == 0)) {
      return set_param_sensor_level(s, full, value, err, err_sz);
    }
    *field = value;
    char where[SENS_NAME_MAX + SENS_CHANNEL_NAME_MAX + 2];
    snprintf(where, sizeof where, "%s%s%s", s->name, g >= 0 ? "." : "", g >= 0 ? s->group[g] : "");
    const int rc = sens_chain_check(&p, s->rate_hz, where, err, err_sz);
    if (rc != 0) {
      return rc;
    }
    sens_chain_retune(&s->chain[k], &p);
    touched++;
  }
  return touched ? 0 : sens_fail(err, err_sz, SENS_ENOTFOUND, "%s.%s: no such parameter",
                                 s->name, full);
}

int sens_set_param(sens_set *set, const char *sensor, const char *path, double value, char *err,
                   size_t err_sz) {
  sens_sensor *s = set_lookup(set, sensor, err, err_sz);
  if (!s) {
    return SENS_ENOTFOUND;
  }
  const char *dot = strchr(path, '.');
  if (dot && (size_t)(dot - path) < SENS_CHANNEL_NAME_MAX) {
    char head[SENS_CHANNEL_NAME_MAX];
    memcpy(head, path, (size_t)(dot - path));
    head[dot - path] = '\0';
    const int g = set_group_index(s, head);
    if (g >= 0 && s->type == SENS_IMU) {
      return set_param_chains(s, g, dot + 1, path, value, err, err_sz);
    }
  }
  if (s->type == SENS_IMU && sens_chain_field(&s->chain[0].p, path)) {
    return sens_fail(err, err_sz, SENS_EINVAL, "%s.%s: name the group: gyro.%s or accel.%s",
                     s->name, path, path, path);
  }
  return set_param_chains(s, -1, path, path, value, err, err_sz);
}

int sens_set_fault(sens_set *set, const char *sensor, const char *group, const sens_fault *f,
                   char *err, size_t err_sz) {
  sens_sensor *s = set_lookup(set, sensor, err, err_sz);
  if (!s) {
    return SENS_ENOTFOUND;
  }
  const int g = group ? set_group_index(s, group) : -1;
  if (group && g < 0) {
    return sens_fail(err, err_sz, SENS_ENOTFOUND, "%s: no channel group \"%s\"", s->name, group);
  }
  if (!(f->probability >= 0.0 && f->probability <= 1.0) || !isfinite(f->size) ||
      !isfinite(f->offset)) {
    return sens_fail(err, err_sz, SENS_EINVAL,
                     "%s: fault needs probability in [0, 1] and finite size and offset", s->name);
  }
  if (f->mode == SENS_FAULT_DEAD) {
    s->dead = 1;
    return 0;
  }
  if (f->mode == SENS_FAULT_NONE) {
    s->dead = 0;
  }
  for (int k = 0; k < s->nchain; k++) {
    if (g < 0 || s->group_of_chain[k] == g) {
      sens_chain_set_fault(&s->chain[k], f);
    }
  }
  return 0;
}

int sens_set_reset_sensor(sens_set *set, const char *sensor, char *err, size_t err_sz) {
  sens_sensor *s = set_lookup(set, sensor, err, err_sz);
  if (!s) {
    return SENS_ENOTFOUND;
  }
  sens__sensor_reset(s, set->seed);
  return 0;
}
