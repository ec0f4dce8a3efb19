/* tests/flops/flop_real.hh: a double that counts the floating-point operations done with it.
 *
 * The counting build compiles a stage of sim/ as C++ after this header (see counted_stages.cc):
 * the standard headers are included first, so their declarations keep the real double, and
 * then `double` is defined as sim_flop_real. Its only member is the double itself, so arrays of
 * it have the layout of arrays of double: the counted stages run on a model and data made by
 * the ordinary C build. Every +, −, ×, ÷ (and each compound assignment) counts one flop, a
 * square root one, sin and cos one each (counted apart as well); negation, comparisons and
 * copies count nothing. For tests and benchmarks only: never part of the simulator. */
#ifndef ACHILLES_TESTS_FLOPS_FLOP_REAL_HH
#define ACHILLES_TESTS_FLOPS_FLOP_REAL_HH

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmath>

extern "C" {
extern long long sim_flop_count;       /* + − × ÷ and sqrt */
extern long long sim_flop_transcendental; /* sin, cos (not in sim_flop_count) */
}

struct sim_flop_real {
  double v;
  sim_flop_real() = default;
  sim_flop_real(double x) : v(x) {} /* NOLINT: implicit, as a literal converts to double */
  explicit operator double() const { return v; }
  explicit operator int() const { return (int)v; }
  explicit operator long() const { return (long)v; }
  sim_flop_real &operator+=(sim_flop_real o) { sim_flop_count++; v += o.v; return *this; }
  sim_flop_real &operator-=(sim_flop_real o) { sim_flop_count++; v -= o.v; return *this; }
  sim_flop_real &operator*=(sim_flop_real o) { sim_flop_count++; v *= o.v; return *this; }
  sim_flop_real &operator/=(sim_flop_real o) { sim_flop_count++; v /= o.v; return *this; }
  sim_flop_real operator-() const { return sim_flop_real(-v); }
  sim_flop_real operator+() const { return *this; }
};

static_assert(sizeof(sim_flop_real) == sizeof(double), "layout of double");
static_assert(alignof(sim_flop_real) == alignof(double), "layout of double");

typedef sim_flop_real sim_fr_;
#define SIM_FLOP_BINARY(op)                                                                    \
  static inline sim_fr_ operator op(sim_fr_ a, sim_fr_ b) {                                    \
    sim_flop_count++;                                                                          \
    return sim_fr_(a.v op b.v);                                                                \
  }                                                                                            \
  static inline sim_fr_ operator op(sim_fr_ a, double b) { return a op sim_fr_(b); }           \
  static inline sim_fr_ operator op(double a, sim_fr_ b) { return sim_fr_(a) op b; }           \
  static inline sim_fr_ operator op(sim_fr_ a, int b) { return a op sim_fr_(b); }              \
  static inline sim_fr_ operator op(int a, sim_fr_ b) { return sim_fr_(a) op b; }
SIM_FLOP_BINARY(+)
SIM_FLOP_BINARY(-)
SIM_FLOP_BINARY(*)
SIM_FLOP_BINARY(/)
#undef SIM_FLOP_BINARY

#define SIM_FLOP_COMPARE(op)                                                                   \
  static inline bool operator op(sim_fr_ a, sim_fr_ b) { return a.v op b.v; }                  \
  static inline bool operator op(sim_fr_ a, double b) { return a.v op b; }                     \
  static inline bool operator op(double a, sim_fr_ b) { return a op b.v; }                     \
  static inline bool operator op(sim_fr_ a, int b) { return a.v op b; }                        \
  static inline bool operator op(int a, sim_fr_ b) { return a op b.v; }
SIM_FLOP_COMPARE(<)
SIM_FLOP_COMPARE(<=)
SIM_FLOP_COMPARE(>)
SIM_FLOP_COMPARE(>=)
SIM_FLOP_COMPARE(==)
SIM_FLOP_COMPARE(!=)
#undef SIM_FLOP_COMPARE

static inline sim_fr_ sqrt(sim_fr_ a) { sim_flop_count++; return sim_fr_(std::sqrt(a.v)); }
static inline sim_fr_ sin(sim_fr_ a) { sim_flop_transcendental++; return sim_fr_(std::sin(a.v)); }
static inline sim_fr_ cos(sim_fr_ a) { sim_flop_transcendental++; return sim_fr_(std::cos(a.v)); }
static inline sim_fr_ fabs(sim_fr_ a) { return sim_fr_(std::fabs(a.v)); }
static inline bool isfinite(sim_fr_ a) { return std::isfinite(a.v); }
static inline bool isnan(sim_fr_ a) { return std::isnan(a.v); }
static inline sim_fr_ fmax(sim_fr_ a, sim_fr_ b) { return sim_fr_(std::fmax(a.v, b.v)); }
static inline sim_fr_ fmin(sim_fr_ a, sim_fr_ b) { return sim_fr_(std::fmin(a.v, b.v)); }

#define double sim_flop_real

#endif
