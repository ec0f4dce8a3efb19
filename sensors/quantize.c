/* sensors/quantize.c */
#include "sensors/quantize.h"

#include <math.h>

static const double quant_two_pi = 6.28318530717958647692;

double sens_quantize(double x, double step) {
  return step > 0.0 ? step * sens_round(x / step) : x;
}

double sens_wrap_angle(double x) {
  const double half = 0.5 * quant_two_pi;
  double y = x - quant_two_pi * floor((x + half) / quant_two_pi);
  /* rounding can land exactly on +π; the interval is half-open */
  return y >= half ? y - quant_two_pi : y;
}
