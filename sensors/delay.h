/* sensors/delay.h: a fixed delay of `length` samples on a vector of `width` doubles.
 *
 * Ownership: the caller provides the storage (length·width doubles, sized once from the config
 * when a sensor set is loaded) and keeps it alive as long as the delay line; nothing allocates.
 */
#ifndef ACHILLES_SENSORS_DELAY_H
#define ACHILLES_SENSORS_DELAY_H

typedef struct sens_delay {
  double *buf;  /* [length·width], caller-owned */
  int length;   /* delay in samples, >= 0 */
  int width;    /* doubles per sample */
  int head;     /* next slot to read and overwrite */
  int filled;   /* samples pushed, saturating at length */
} sens_delay;

/* Use storage buf of length·width doubles (buf may be NULL when length is 0). */
void sens_delay_init(sens_delay *d, double *buf, int length, int width);
void sens_delay_reset(sens_delay *d);
/* Pushes `in` and writes into `out` the vector pushed `length` calls earlier. in and out must
 * not overlap each other or the storage. Returns 1 when out holds such a vector, 0 while the
 * line is still filling (then out is left unchanged). */
int sens_delay_push(sens_delay *d, const double *restrict in, double *restrict out);

#endif
