/* tests/support/numbers.h: the small numeric helpers comparisons share.
 *
 * ts_uniform is xorshift64* from a caller-owned state: a fixed seed gives every run the same
 * states, and a failing state is reproduced from the seed alone. */
#ifndef ACHILLES_TESTS_SUPPORT_NUMBERS_H
#define ACHILLES_TESTS_SUPPORT_NUMBERS_H

#include <stddef.h>
#include <stdint.h>

/* Uniform in [lo, hi) from the xorshift64* state *s (any nonzero seed). */
double ts_uniform(uint64_t *s, double lo, double hi);
/* max |v[i]| and max |a[i] - b[i]| over n entries (0 for n = 0). */
double ts_max_abs(const double *v, int n);
double ts_max_diff(const double *a, const double *b, int n);
/* 1 when a and b are the same 64 bits (NaN payloads and the sign of zero count). */
int ts_same_bits(double a, double b);
/* qsort's comparator for doubles, ascending. */
int ts_cmp_double(const void *a, const void *b);
/* The q-quantile (0..1, nearest rank) of v's n values; sorts v in place. */
double ts_quantile(double *v, size_t n, double q);

/* Cholesky A = L·Lᵀ of the n×n row-major a into l (lower; the rest zero): 0, or -1 when a is
 * not positive definite. */
int ts_cholesky(int n, const double *a, double *l);
/* x = (L·Lᵀ)⁻¹ b with l from ts_cholesky (x may be b) */
void ts_cholesky_solve(int n, const double *l, const double *b, double *x);

#endif
