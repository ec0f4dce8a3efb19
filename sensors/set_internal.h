/* sensors/set_internal.h: the sensor set's layout, shared by sensor_config.c (which builds it)
 * and sensor_set.c (which runs it). Not part of the public API. */
#ifndef ACHILLES_SENSORS_SET_INTERNAL_H
#define ACHILLES_SENSORS_SET_INTERNAL_H

#include "sensors/sensors.h"

struct sens_set {
  int n;
  sens_sensor *sensors;    /* [n], one allocation */
  double *delay_storage;   /* every delay line, one allocation (may be NULL) */
  uint64_t seed;
  double physics_dt;       /* m->opt.timestep when loaded, s */
  const double *torque_src;
  sens_sample_fn callback;
  void *callback_user;
};

/* Stream id of chain `k` (k = 15: the event stream) of a sensor named `name`. */
uint64_t sens__stream_base(const char *name);

/* Resets one sensor for seed: chains, events, delay line, counters, clock. */
void sens__sensor_reset(sens_sensor *s, uint64_t seed);

#endif
