/* sensors/fit_value.c: a fit result's values, set with their standard deviation or noted with why
 * they are missing, and the comparison the medians sort with; used by every file of the fit. */
#include "sensors/fit_internal.h"

#include <stdarg.h>
#include <stdio.h>

void sens__fit_note(sens_fit_value *v, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v->note, sizeof v->note, fmt, ap);
  va_end(ap);
}

void sens__fit_set(sens_fit_value *v, double value, double sigma) {
  v->value = value;
  v->sigma = sigma;
  v->ok = 1;
}

int sens__cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
