/* sensors/fault.c */
#include "sensors/fault.h"

#include <string.h>

double sens_fault_add(const sens_fault *f, sens_rng *events) {
  if (f->mode == SENS_FAULT_OFFSET) {
    return f->offset;
  }
  if (f->mode != SENS_FAULT_SPIKE) {
    return 0.0;
  }
  /* one 64-bit draw decides both the event (top 53 bits) and the sign (lowest bit) */
  const uint64_t u = sens_rng_next(events);
  if ((double)(u >> 11) * 0x1.0p-53 >= f->probability) {
    return 0.0;
  }
  return (u & 1u) ? f->size : -f->size;
}

static const char *const fault_names[] = {"none", "stuck", "spike", "offset", "dead"};

const char *sens_fault_name(sens_fault_mode mode) {
  if ((int)mode < 0 || (size_t)mode >= sizeof fault_names / sizeof fault_names[0]) {
    return "none";
  }
  return fault_names[mode];
}

int sens_fault_parse(const char *name) {
  for (size_t i = 0; i < sizeof fault_names / sizeof fault_names[0]; i++) {
    if (strcmp(name, fault_names[i]) == 0) {
      return (int)i;
    }
  }
  return -1;
}
