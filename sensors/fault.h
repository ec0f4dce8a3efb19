/* sensors/fault.h: injected faults that firmware must survive, switchable at run time.
 *
 *  - SENS_FAULT_STUCK   the output freezes at the last value produced before the switch.
 *  - SENS_FAULT_SPIKE   each sample, with `probability`, adds ±`size` (unit, random sign).
 *  - SENS_FAULT_OFFSET  a sudden constant jump of `offset` (unit) from the switch on.
 *  - SENS_FAULT_DEAD    the sensor produces no output: samples keep their sequence numbers and
 *                       are marked invalid.
 * Spikes and offsets are added before quantization (so outputs stay on the sensor's grid);
 * stuck acts after it. Value object, no allocation.
 */
#ifndef ACHILLES_SENSORS_FAULT_H
#define ACHILLES_SENSORS_FAULT_H

#include "sensors/rng.h"

typedef enum sens_fault_mode {
  SENS_FAULT_NONE = 0,
  SENS_FAULT_STUCK = 1,
  SENS_FAULT_SPIKE = 2,
  SENS_FAULT_OFFSET = 3,
  SENS_FAULT_DEAD = 4,
} sens_fault_mode;

typedef struct sens_fault {
  sens_fault_mode mode;
  double probability; /* spike probability per sample, [0, 1] */
  double size;        /* spike magnitude, unit */
  double offset;      /* offset jump, unit */
} sens_fault;

/* Spike or offset contribution for one sample (0 for other modes). Draws from `events` only in
 * spike mode, so switching faults never disturbs the noise streams. */
double sens_fault_add(const sens_fault *f, sens_rng *events);

/* "none", "stuck", "spike", "offset", "dead"; sens_fault_parse returns -1 for other names. */
const char *sens_fault_name(sens_fault_mode mode);
int sens_fault_parse(const char *name);

#endif
