// tools/bench/bench_double_conversion.cc: Google's double-conversion (libdouble-conversion-dev)
// set up as close to hil/number_format.h's text as its options allow, a baseline for
// bench_messages only (no product links it): the library that was measured and not chosen for
// issue 17.
#include <cmath>
#include <cstring>

#include <double-conversion/double-to-string.h>

extern "C" int bench_dc_format(char out[32], double v);

extern "C" int bench_dc_format(char out[32], double v) {
  if (!std::isfinite(v)) {
    std::memcpy(out, "null", 5);
    return 4;
  }
  // shortest digits; fixed notation for 10^-4 <= |v| < 10^15, exponents of two digits or more
  using double_conversion::DoubleToStringConverter;
  static const DoubleToStringConverter conv(DoubleToStringConverter::EMIT_POSITIVE_EXPONENT_SIGN,
                                            "null", "null", 'e', -4, 15, 0, 0, 2);
  double_conversion::StringBuilder b(out, 32);
  conv.ToShortest(v, &b);
  const int n = b.position();
  b.Finalize();
  return n;
}
