/* tests/support/numbers.c: numeric helpers (numbers.h). */
#include "support/numbers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double ts_uniform(uint64_t *s, double lo, double hi) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  const uint64_t r = *s * 2685821657736338717ull;
  return lo + (hi - lo) * (double)(r >> 11) * (1.0 / 9007199254740992.0);
}

double ts_max_abs(const double *v, int n) {
  double r = 0;
  for (int i = 0; i < n; i++) {
    r = fmax(r, fabs(v[i]));
  }
  return r;
}

double ts_max_diff(const double *a, const double *b, int n) {
  double r = 0;
  for (int i = 0; i < n; i++) {
    r = fmax(r, fabs(a[i] - b[i]));
  }
  return r;
}

int ts_same_bits(double a, double b) {
  return memcmp(&a, &b, sizeof a) == 0;
}

int ts_cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double ts_quantile(double *v, size_t n, double q) {
  if (n == 0) {
    return NAN;
  }
  qsort(v, n, sizeof *v, ts_cmp_double);
  const size_t k = (size_t)(q * (double)(n - 1));
  return v[k < n ? k : n - 1];
}

int ts_cholesky(int n, const double *a, double *l) {
  memset(l, 0, sizeof(double) * (size_t)(n * n));
  for (int j = 0; j < n; j++) {
    double s = a[j * n + j];
    for (int k = 0; k < j; k++) s -= l[j * n + k] * l[j * n + k];
    if (!(s > 0)) return -1;
    l[j * n + j] = sqrt(s);
    for (int i = j + 1; i < n; i++) {
      double t = a[i * n + j];
      for (int k = 0; k < j; k++) t -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = t / l[j * n + j];
    }
  }
  return 0;
}

void ts_cholesky_solve(int n, const double *l, const double *b, double *x) {
  for (int i = 0; i < n; i++) {
    double s = b[i];
    for (int k = 0; k < i; k++) s -= l[i * n + k] * x[k];
    x[i] = s / l[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    double s = x[i];
    for (int k = i + 1; k < n; k++) s -= l[k * n + i] * x[k];
    x[i] = s / l[i * n + i];
  }
}
