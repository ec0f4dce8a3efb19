/* sensors/delay.c: ring buffer of vectors. */
#include "sensors/delay.h"

#include <stddef.h>


void sens_delay_init(sens_delay *d, double *buf, int length, int width) {
  d->buf = buf;
  d->length = length;
  d->width = width;
  sens_delay_reset(d);
}

void sens_delay_reset(sens_delay *d) {
  d->head = 0;
  d->filled = 0;
}

int sens_delay_push(sens_delay *d, const double *restrict in, double *restrict out) {
  const int w = d->width;
  if (d->length == 0) {
    for (int k = 0; k < w; k++) {
      out[k] = in[k];
    }
    return 1;
  }
  double *restrict slot = d->buf + (size_t)d->head * (size_t)w;
  const int ready = d->filled == d->length;
  if (ready) {
    for (int k = 0; k < w; k++) {
      out[k] = slot[k];
    }
  } else {
    d->filled++;
  }
  for (int k = 0; k < w; k++) {
    slot[k] = in[k];
  }
  d->head = d->head + 1 == d->length ? 0 : d->head + 1;
  return ready;
}
