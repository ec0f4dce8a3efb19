/* sim/sincos.h: the sine and cosine of one angle together, inline (internal header).
 *
 * Every hinge of every evaluation needs both; libm's sincos costs a call (and the caller's
 * registers around it) plus its general range reduction. Here, for |x| < 2^20:
 *   - n = x·2/π rounded to the nearest integer, r = x − n·π/2 by Cody and Waite's method with
 *     π/2 split into two 33-bit parts and a 53-bit tail: x − n·p1 and n·p2 are exact, their
 *     difference is kept as a double-double (r + rr) by an exact two-sum;
 *   - sin and cos of r ∈ [−π/4, π/4] from their Taylor series, up to r¹⁷ and r¹⁸ (the first
 *     term left out is below 2⁻⁶⁰ of the result), cos with 1 − r²/2 summed so that its
 *     rounding error is recovered, and rr's first-order effect added;
 *   - the quadrant n mod 4 swaps and negates them.
 * tests/sim/test_spatial.c checks both against long double sinl and cosl within 1 ulp on
 * millions of arguments, among them the doubles nearest to multiples of π/2. Larger, infinite
 * or NaN arguments go to libm. Assumes round-to-nearest and no -ffast-math (the reduction adds
 * and subtracts 1.5·2⁵² to round). */
#ifndef ACHILLES_SIM_SINCOS_H
#define ACHILLES_SIM_SINCOS_H

#include <math.h>

static inline void sim_sincos(double x, double *sin_out, double *cos_out) {
  if (!(fabs(x) < 0x1p20)) {
    *sin_out = sin(x);
    *cos_out = cos(x);
    return;
  }
  const double shift = 0x1.8p52; /* x·2/π + shift rounds to an integer in the last bit */
  const double n = (x * 0x1.45f306dc9c883p-1 + shift) - shift;
  const double p1 = 0x1.921fb54400000p+0, p2 = 0x1.0b4611a600000p-34,
               p3 = 0x1.3198a2e037073p-69; /* π/2 = p1 + p2 + p3 + O(2⁻¹²²) */
  const double t = x - n * p1, u = n * p2; /* both exact (|n| < 2^20, Sterbenz) */
  const double hi = t - u, bb = hi - t;
  const double lo = ((t - (hi - bb)) - (u + bb)) - n * p3; /* two-sum error, then the tail */
  const double r = hi + lo, rr = lo - (r - hi);
  const double z = r * r;
  const double ps =
      z * (-0x1.5555555555555p-3 +
           z * (0x1.1111111111111p-7 +
                z * (-0x1.a01a01a01a01ap-13 +
                     z * (0x1.71de3a556c734p-19 +
                          z * (-0x1.ae64567f544e4p-26 +
                               z * (0x1.6124613a86d09p-33 +
                                    z * (-0x1.ae7f3e733b81fp-41 + z * 0x1.952c77030ad4ap-49)))))));
  const double pc =
      z * z *
      (0x1.5555555555555p-5 +
       z * (-0x1.6c16c16c16c17p-10 +
            z * (0x1.a01a01a01a01ap-16 +
                 z * (-0x1.27e4fb7789f5cp-22 +
                      z * (0x1.1eed8eff8d898p-29 +
                           z * (-0x1.93974a8c07c9dp-37 +
                                z * (0x1.ae7f3e733b81fp-45 + z * -0x1.6827863b97d97p-53)))))));
  const double hz = 0.5 * z, w = 1 - hz;
  const double s = r + (r * ps + rr * (1 - hz));      /* sin(r + rr) */
  const double c = w + (((1 - w) - hz) + (pc - r * rr)); /* cos(r + rr) */
  switch ((int)n & 3) {
  case 0:
    *sin_out = s, *cos_out = c;
    break;
  case 1:
    *sin_out = c, *cos_out = -s;
    break;
  case 2:
    *sin_out = -s, *cos_out = -c;
    break;
  default:
    *sin_out = -c, *cos_out = s;
    break;
  }
}

#endif
