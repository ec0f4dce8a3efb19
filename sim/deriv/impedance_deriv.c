/* sim/deriv/impedance_deriv.c: the slope of the constraint impedance curve (sim/constraint.c's
 * sim_constraint_impedance), shared by the rows of limits and friction (constraint_deriv.c) and
 * of contacts (contact_deriv.c), which both stand on it.
 *
 * imp(pos) rises from dmin at pos = 0 to dmax at |pos| = width along a two-piece power curve
 * with midpoint mid and power p: y(x) = xᵖ/midᵖ⁻¹ up to mid, 1 − (1 − x)ᵖ/(1 − mid)ᵖ⁻¹ after,
 * x = |pos|/width, imp = dmin + (dmax − dmin)·y; so d imp/d pos = (dmax − dmin)·y'(x)·sign(pos)/
 * width, 0 outside 0 < x < 1 (flat there). */
#include "sim/deriv/internal.h"

#include <math.h>

#define CNSTR_MINVAL 1e-15 /* sim/constraint.c's */

/* d imp/d pos of sim_constraint_impedance (the same branches) */
double sim__impedance_slope(const double solimp[SIM_NIMP], double pos) {
  double dmin = solimp[0], dmax = solimp[1], width = solimp[2], mid = solimp[3], p = solimp[4];
  if (dmin == dmax || width <= CNSTR_MINVAL) {
    return 0;
  }
  double x = fabs(pos / width), dy;
  if (x >= 1 || x <= 0) {
    return 0;
  }
  if (p == 1) {
    dy = 1;
  } else if (x <= mid) {
    dy = p * pow(x, p - 1) / pow(mid, p - 1);
  } else {
    dy = p * pow(1 - x, p - 1) / pow(1 - mid, p - 1);
  }
  return (dmax - dmin) * dy * (pos < 0 ? -1.0 : 1.0) / width;
}
