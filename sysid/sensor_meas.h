/* sysid/sensor_meas.h: the deterministic part of a sensors file's encoders, as the fit models
 * each joint's reading (sysid_meas, sysid.h; docs/sysid.md section 3).
 *
 * For joint j of a series, the first encoder of the set on that joint (the one an Achilles log's
 * reader takes, series_log.c) gives, from its angle chain (sensors/chain.h) and its wheel
 * (sensors/encoder_internal.h):
 *   latency = the delay it applies (delay_s: a whole number of its samples)
 *   scale   = 1 + scale_error
 *   offset  = offset + bias − origin (the wheel counts from origin)
 *   sigma   = √(white² + gauss_markov² + turn_on_bias² + step²/12)
 * Drift that wanders (Gauss–Markov, random walk) and the turn-on bias are not modelled: they enter
 * sigma (random walk leaves it: it has no steady state). A joint no encoder of the set reads
 * gets sysid_meas_default.
 */
#ifndef ACHILLES_SYSID_SENSOR_MEAS_H
#define ACHILLES_SYSID_SENSOR_MEAS_H

#include <stddef.h>

#include "sensors/sensors.h"
#include "sysid/series.h"
#include "sysid/sysid.h"

/* Fills meas[s->njoint]; sensor[j] (NULL to skip; SENS_NAME_MAX each) gets the encoder's name,
 * "" for a joint without one. set may be NULL (every joint default). Returns the number of
 * joints that an encoder reads. */
int sysid_meas_from_sensors(sysid_meas *meas, char (*sensor)[SENS_NAME_MAX],
                            const sysid_series *s, const sim_model *m, const sens_set *set);

#endif
