/* sensors/filter.c: first-order exact and second-order Butterworth low-pass filters. */
#include "sensors/filter.h"

#include <math.h>
#include <string.h>

static const double filter_pi = 3.14159265358979323846;

/* first order as a biquad: y = (1-a)·x + a·y[k-1] */
static void filter_design_first(sens_filter *f, double fc, double fs) {
  const double a = exp(-2.0 * filter_pi * fc / fs);
  f->b0 = 1.0 - a;
  f->b1 = 0.0;
  f->b2 = 0.0;
  f->a1 = -a;
  f->a2 = 0.0;
}

/* bilinear transform of 1/(s² + √2·s + 1) with s = (1/K)·(z-1)/(z+1), K = tan(π·fc/fs) */
static void filter_design_butter2(sens_filter *f, double fc, double fs) {
  const double k = tan(filter_pi * fc / fs);
  const double k2 = k * k;
  const double norm = 1.0 / (1.0 + sqrt(2.0) * k + k2);
  f->b0 = k2 * norm;
  f->b1 = 2.0 * f->b0;
  f->b2 = f->b0;
  f->a1 = 2.0 * (k2 - 1.0) * norm;
  f->a2 = (1.0 - sqrt(2.0) * k + k2) * norm;
}

void sens_filter_retune(sens_filter *f, sens_filter_type type, double cutoff_hz, double fs_hz) {
  f->type = type;
  f->cutoff_hz = cutoff_hz;
  if (type == SENS_FILTER_FIRST_ORDER) {
    filter_design_first(f, cutoff_hz, fs_hz);
  } else if (type == SENS_FILTER_BUTTERWORTH2) {
    filter_design_butter2(f, cutoff_hz, fs_hz);
  } else {
    f->b0 = 1.0;
    f->b1 = f->b2 = f->a1 = f->a2 = 0.0;
  }
}

void sens_filter_init(sens_filter *f, sens_filter_type type, double cutoff_hz, double fs_hz) {
  sens_filter_retune(f, type, cutoff_hz, fs_hz);
  sens_filter_reset(f);
}

void sens_filter_reset(sens_filter *f) {
  f->x1 = f->x2 = f->y1 = f->y2 = 0.0;
  f->primed = 0;
}

void sens_filter_prime(sens_filter *f, double x) {
  f->x1 = f->x2 = f->y1 = f->y2 = x;
  f->primed = 1;
}

const char *sens_filter_name(sens_filter_type type) {
  switch (type) {
  case SENS_FILTER_FIRST_ORDER:
    return "first_order";
  case SENS_FILTER_BUTTERWORTH2:
    return "butterworth2";
  default:
    return "none";
  }
}

int sens_filter_parse(const char *name) {
  static const sens_filter_type types[] = {SENS_FILTER_NONE, SENS_FILTER_FIRST_ORDER,
                                           SENS_FILTER_BUTTERWORTH2};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    if (strcmp(name, sens_filter_name(types[i])) == 0) {
      return (int)types[i];
    }
  }
  return -1;
}
