// hil/number_format.cc: shortest round-trip number text; see number_format.h.
//
// The one C++ unit of the runtime: Dragonbox (libdragonbox-dev, header-only use of
// jkj::dragonbox::to_decimal) finds the digits; the layout below is ours, so the text keeps the
// conventions of docs/messages.md. Chosen over double-conversion by measurement: 2.5 to 5
// times faster per number here (docs/benchmarks.md, bench_messages), where double-conversion
// was slower on the messages' numbers than the Grisu2 both were to replace.
#include "hil/number_format.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include <dragonbox/dragonbox.h>

namespace {

// "00".."99": the digits of a 17-digit significand in 9 divisions instead of 17
constexpr char kPairs[201] = "00010203040506070809"
                             "10111213141516171819"
                             "20212223242526272829"
                             "30313233343536373839"
                             "40414243444546474849"
                             "50515253545556575859"
                             "60616263646566676869"
                             "70717273747576777879"
                             "80818283848586878889"
                             "90919293949596979899";

// The decimal digits of s > 0 into digits[0..n), most significant first; returns n.
int num_digits(char digits[20], uint64_t s) {
  char tmp[20];
  char *p = tmp + sizeof tmp;
  while (s >= 100) {
    const unsigned pair = static_cast<unsigned>(s % 100) * 2;
    s /= 100;
    p -= 2;
    std::memcpy(p, kPairs + pair, 2);
  }
  if (s >= 10) {
    p -= 2;
    std::memcpy(p, kPairs + s * 2, 2);
  } else {
    *--p = static_cast<char>('0' + s);
  }
  const int n = static_cast<int>(tmp + sizeof tmp - p);
  std::memcpy(digits, p, static_cast<size_t>(n));
  return n;
}

// e±XX, at least two exponent digits (as C's %g writes them)
char *num_exponent(char *o, int exp10) {
  *o++ = 'e';
  *o++ = exp10 < 0 ? '-' : '+';
  unsigned e = static_cast<unsigned>(exp10 < 0 ? -exp10 : exp10);
  if (e >= 100) {
    *o++ = static_cast<char>('0' + e / 100);
    e %= 100;
  }
  std::memcpy(o, kPairs + e * 2, 2);
  return o + 2;
}

// The nd significant digits d.ddd × 10^exp10 (no trailing zeros) laid out as "%.{p}g" would:
// fixed notation for -4 <= exp10 < p, else d.ddde±XX.
char *num_layout(char *o, const char *digits, int nd, int p, int exp10) {
  if (exp10 < -4 || exp10 >= p) {
    *o++ = digits[0];
    if (nd > 1) {
      *o++ = '.';
      std::memcpy(o, digits + 1, static_cast<size_t>(nd - 1));
      o += nd - 1;
    }
    return num_exponent(o, exp10);
  }
  if (exp10 < 0) { // 0.000ddd
    *o++ = '0';
    *o++ = '.';
    for (int i = -1; i > exp10; i--) {
      *o++ = '0';
    }
    std::memcpy(o, digits, static_cast<size_t>(nd));
    return o + nd;
  }
  for (int i = 0; i <= exp10; i++) { // the integer part, zeros past the last digit
    *o++ = i < nd ? digits[i] : '0';
  }
  if (nd > exp10 + 1) {
    *o++ = '.';
    std::memcpy(o, digits + exp10 + 1, static_cast<size_t>(nd - exp10 - 1));
    o += nd - exp10 - 1;
  }
  return o;
}

} // namespace

extern "C" int hil_num_format(char out[HIL_NUM_MAX], double v) {
  if (!std::isfinite(v)) {
    std::memcpy(out, "null", 5);
    return 4;
  }
  char *o = out;
  if (std::signbit(v)) {
    *o++ = '-';
  }
  if (v == 0.0) { // Dragonbox asks for a nonzero value
    *o++ = '0';
  } else {
    // the shortest digits, the closest to v of those, trailing zeros removed
    const auto dec = jkj::dragonbox::to_decimal(v, jkj::dragonbox::policy::sign::ignore,
                                                jkj::dragonbox::policy::trailing_zero::remove);
    char digits[20];
    const int nd = num_digits(digits, dec.significand);
    o = num_layout(o, digits, nd, nd < 15 ? 15 : nd, dec.exponent + nd - 1);
  }
  *o = '\0';
  return static_cast<int>(o - out);
}
