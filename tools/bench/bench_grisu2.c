/* tools/bench/bench_grisu2.c: the Grisu2 formatter that hil/json_messages.c carried until issue 17,
 * kept only as bench_messages' baseline (no product links it): the library that replaced it is
 * measured against it, side by side. The text below is the removed code, renamed. */
#include "bench_grisu2.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Writes the nd significant digits d.ddd × 10^exp10 the way "%.{p}g" does: fixed notation for
 * -4 <= exp10 < p, else d.ddde±XX; trailing zeros dropped. */
static int format_g(char *out, int negative, const char *digits, int nd, int p, int exp10) {
  while (nd > 1 && digits[nd - 1] == '0') {
    nd--;
  }
  char *o = out;
  if (negative) {
    *o++ = '-';
  }
  if (exp10 < -4 || exp10 >= p) {
    *o++ = digits[0];
    if (nd > 1) {
      *o++ = '.';
      memcpy(o, digits + 1, (size_t)(nd - 1));
      o += nd - 1;
    }
    o += snprintf(o, 8, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
  } else if (exp10 < 0) {
    *o++ = '0';
    *o++ = '.';
    for (int i = -1; i > exp10; i--) {
      *o++ = '0';
    }
    memcpy(o, digits, (size_t)nd);
    o += nd;
  } else {
    for (int i = 0; i <= exp10; i++) {
      *o++ = i < nd ? digits[i] : '0';
    }
    if (nd > exp10 + 1) {
      *o++ = '.';
      memcpy(o, digits + exp10 + 1, (size_t)(nd - exp10 - 1));
      o += nd - exp10 - 1;
    }
  }
  *o = '\0';
  return (int)(o - out);
}

/* --- shortest round-trip digits: Grisu2 ----------------------------------------------------------
 * F. Loitsch, "Printing floating-point numbers quickly and accurately with integers", PLDI 2010,
 * with the structure of RapidJSON's dtoa (M. Yip, MIT licence). The digits always read back to the same double; in rare
 * cases (about 0.1 %) a digit or two longer than the shortest. 64-bit integer arithmetic only,
 * no allocation; about 12 times faster than snprintf("%.17g") + strtod here (50 vs 640 ns). */

typedef struct diy_fp {
  uint64_t f; /* significand */
  int e;      /* binary exponent: value = f·2^e */
} diy_fp;

#define DP_SIGNIFICAND_MASK 0x000FFFFFFFFFFFFFULL
#define DP_HIDDEN_BIT 0x0010000000000000ULL
#define DP_EXPONENT_BIAS (0x3FF + 52)

/* 10^k for k = -348, -340, ..., 340: 64-bit significands rounded to nearest, and exponents
 * (generated exactly with Python fractions). */
static const uint64_t cached_powers_f[87] = {
    0xfa8fd5a0081c0288ULL, 0xbaaee17fa23ebf76ULL, 0x8b16fb203055ac76ULL,
    0xcf42894a5dce35eaULL, 0x9a6bb0aa55653b2dULL, 0xe61acf033d1a45dfULL,
    0xab70fe17c79ac6caULL, 0xff77b1fcbebcdc4fULL, 0xbe5691ef416bd60cULL,
    0x8dd01fad907ffc3cULL, 0xd3515c2831559a83ULL, 0x9d71ac8fada6c9b5ULL,
    0xea9c227723ee8bcbULL, 0xaecc49914078536dULL, 0x823c12795db6ce57ULL,
    0xc21094364dfb5637ULL, 0x9096ea6f3848984fULL, 0xd77485cb25823ac7ULL,
    0xa086cfcd97bf97f4ULL, 0xef340a98172aace5ULL, 0xb23867fb2a35b28eULL,
    0x84c8d4dfd2c63f3bULL, 0xc5dd44271ad3cdbaULL, 0x936b9fcebb25c996ULL,
    0xdbac6c247d62a584ULL, 0xa3ab66580d5fdaf6ULL, 0xf3e2f893dec3f126ULL,
    0xb5b5ada8aaff80b8ULL, 0x87625f056c7c4a8bULL, 0xc9bcff6034c13053ULL,
    0x964e858c91ba2655ULL, 0xdff9772470297ebdULL, 0xa6dfbd9fb8e5b88fULL,
    0xf8a95fcf88747d94ULL, 0xb94470938fa89bcfULL, 0x8a08f0f8bf0f156bULL,
    0xcdb02555653131b6ULL, 0x993fe2c6d07b7facULL, 0xe45c10c42a2b3b06ULL,
    0xaa242499697392d3ULL, 0xfd87b5f28300ca0eULL, 0xbce5086492111aebULL,
    0x8cbccc096f5088ccULL, 0xd1b71758e219652cULL, 0x9c40000000000000ULL,
    0xe8d4a51000000000ULL, 0xad78ebc5ac620000ULL, 0x813f3978f8940984ULL,
    0xc097ce7bc90715b3ULL, 0x8f7e32ce7bea5c70ULL, 0xd5d238a4abe98068ULL,
    0x9f4f2726179a2245ULL, 0xed63a231d4c4fb27ULL, 0xb0de65388cc8ada8ULL,
    0x83c7088e1aab65dbULL, 0xc45d1df942711d9aULL, 0x924d692ca61be758ULL,
    0xda01ee641a708deaULL, 0xa26da3999aef774aULL, 0xf209787bb47d6b85ULL,
    0xb454e4a179dd1877ULL, 0x865b86925b9bc5c2ULL, 0xc83553c5c8965d3dULL,
    0x952ab45cfa97a0b3ULL, 0xde469fbd99a05fe3ULL, 0xa59bc234db398c25ULL,
    0xf6c69a72a3989f5cULL, 0xb7dcbf5354e9beceULL, 0x88fcf317f22241e2ULL,
    0xcc20ce9bd35c78a5ULL, 0x98165af37b2153dfULL, 0xe2a0b5dc971f303aULL,
    0xa8d9d1535ce3b396ULL, 0xfb9b7cd9a4a7443cULL, 0xbb764c4ca7a44410ULL,
    0x8bab8eefb6409c1aULL, 0xd01fef10a657842cULL, 0x9b10a4e5e9913129ULL,
    0xe7109bfba19c0c9dULL, 0xac2820d9623bf429ULL, 0x80444b5e7aa7cf85ULL,
    0xbf21e44003acdd2dULL, 0x8e679c2f5e44ff8fULL, 0xd433179d9c8cb841ULL,
    0x9e19db92b4e31ba9ULL, 0xeb96bf6ebadf77d9ULL, 0xaf87023b9bf0ee6bULL,
};
static const int16_t cached_powers_e[87] = {
    -1220, -1193, -1166, -1140, -1113, -1087, -1060, -1034, -1007, -980, -954, -927,
    -901, -874, -847, -821, -794, -768, -741, -715, -688, -661, -635, -608,
    -582, -555, -529, -502, -475, -449, -422, -396, -369, -343, -316, -289,
    -263, -236, -210, -183, -157, -130, -103, -77, -50, -24, 3, 30,
    56, 83, 109, 136, 162, 189, 216, 242, 269, 295, 322, 348,
    375, 402, 428, 455, 481, 508, 534, 561, 588, 614, 641, 667,
    694, 720, 747, 774, 800, 827, 853, 880, 907, 933, 960, 986,
    1013, 1039, 1066,
};

static diy_fp diy_from_double(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  const int biased_e = (int)((u >> 52) & 0x7FF);
  const uint64_t significand = u & DP_SIGNIFICAND_MASK;
  diy_fp r;
  if (biased_e != 0) {
    r.f = significand + DP_HIDDEN_BIT;
    r.e = biased_e - DP_EXPONENT_BIAS;
  } else { /* subnormal */
    r.f = significand;
    r.e = 1 - DP_EXPONENT_BIAS;
  }
  return r;
}

/* the upper 64 bits of the 128-bit product, rounded */
static diy_fp diy_multiply(diy_fp x, diy_fp y) {
  const uint64_t m32 = 0xFFFFFFFFULL;
  const uint64_t a = x.f >> 32, b = x.f & m32, c = y.f >> 32, d = y.f & m32;
  const uint64_t ac = a * c, bc = b * c, ad = a * d, bd = b * d;
  uint64_t tmp = (bd >> 32) + (ad & m32) + (bc & m32);
  tmp += 1ULL << 31;
  const diy_fp r = {ac + (ad >> 32) + (bc >> 32) + (tmp >> 32), x.e + y.e + 64};
  return r;
}

static diy_fp diy_normalize(diy_fp x) {
  while (!(x.f & (1ULL << 63))) {
    x.f <<= 1;
    x.e--;
  }
  return x;
}

/* The boundaries m- and m+ of v's rounding interval, normalized to a common exponent. */
static void diy_boundaries(diy_fp v, diy_fp *minus, diy_fp *plus) {
  diy_fp pl = {(v.f << 1) + 1, v.e - 1};
  pl = diy_normalize(pl);
  diy_fp mi;
  if (v.f == DP_HIDDEN_BIT) {
    mi.f = (v.f << 2) - 1;
    mi.e = v.e - 2;
  } else {
    mi.f = (v.f << 1) - 1;
    mi.e = v.e - 1;
  }
  mi.f <<= mi.e - pl.e;
  mi.e = pl.e;
  *plus = pl;
  *minus = mi;
}

static diy_fp cached_power(int e, int *k10) {
  const double dk = (-61 - e) * 0.30102999566398114 + 347; /* positive: ceil by truncation */
  int k = (int)dk;
  if (k != dk) {
    k++;
  }
  const unsigned index = (unsigned)((k >> 3) + 1);
  *k10 = -(-348 + (int)(index << 3));
  const diy_fp r = {cached_powers_f[index], cached_powers_e[index]};
  return r;
}

static void grisu_round(char *buffer, int len, uint64_t delta, uint64_t rest, uint64_t ten_kappa,
                        uint64_t wp_w) {
  while (rest < wp_w && delta - rest >= ten_kappa &&
         (rest + ten_kappa < wp_w || wp_w - rest > rest + ten_kappa - wp_w)) {
    buffer[len - 1]--;
    rest += ten_kappa;
  }
}

static int count_digits32(uint32_t n) {
  int d = 1;
  while (n >= 10) {
    n /= 10;
    d++;
  }
  return d;
}

static const uint64_t pow10_u64[20] = {1ULL,
                                       10ULL,
                                       100ULL,
                                       1000ULL,
                                       10000ULL,
                                       100000ULL,
                                       1000000ULL,
                                       10000000ULL,
                                       100000000ULL,
                                       1000000000ULL,
                                       10000000000ULL,
                                       100000000000ULL,
                                       1000000000000ULL,
                                       10000000000000ULL,
                                       100000000000000ULL,
                                       1000000000000000ULL,
                                       10000000000000000ULL,
                                       100000000000000000ULL,
                                       1000000000000000000ULL,
                                       10000000000000000000ULL};

static void digit_gen(diy_fp w, diy_fp mp, uint64_t delta, char *buffer, int *len, int *k10) {
  const diy_fp one = {1ULL << -mp.e, mp.e};
  const uint64_t wp_w = mp.f - w.f;
  uint32_t p1 = (uint32_t)(mp.f >> -one.e);
  uint64_t p2 = mp.f & (one.f - 1);
  int kappa = count_digits32(p1);
  *len = 0;
  while (kappa > 0) {
    const uint32_t div = (uint32_t)pow10_u64[kappa - 1];
    const uint32_t d = p1 / div;
    p1 %= div;
    if (d || *len) {
      buffer[(*len)++] = (char)('0' + d);
    }
    kappa--;
    const uint64_t tmp = ((uint64_t)p1 << -one.e) + p2;
    if (tmp <= delta) {
      *k10 += kappa;
      grisu_round(buffer, *len, delta, tmp, pow10_u64[kappa] << -one.e, wp_w);
      return;
    }
  }
  for (;;) {
    p2 *= 10;
    delta *= 10;
    const char d = (char)(p2 >> -one.e);
    if (d || *len) {
      buffer[(*len)++] = (char)('0' + d);
    }
    p2 &= one.f - 1;
    kappa--;
    if (p2 < delta) {
      *k10 += kappa;
      const int index = -kappa;
      grisu_round(buffer, *len, delta, p2, one.f, wp_w * (index < 20 ? pow10_u64[index] : 0));
      return;
    }
  }
}

/* Digits of v > 0 (finite) into buffer[0..*len) with v ≈ digits·10^*k10. */
static void grisu2(double v, char buffer[24], int *len, int *k10) {
  const diy_fp f = diy_from_double(v);
  diy_fp w_m, w_p;
  diy_boundaries(f, &w_m, &w_p);
  const diy_fp c_mk = cached_power(w_p.e, k10);
  const diy_fp w = diy_multiply(diy_normalize(f), c_mk);
  diy_fp wp = diy_multiply(w_p, c_mk), wm = diy_multiply(w_m, c_mk);
  wm.f++;
  wp.f--;
  digit_gen(w, wp, wp.f - wm.f, buffer, len, k10);
}

int bench_grisu2_format(char out[BENCH_GRISU2_MAX], double v) {
  if (!isfinite(v)) {
    memcpy(out, "null", 5);
    return 4;
  }
  if (v == 0.0) {
    return snprintf(out, BENCH_GRISU2_MAX, signbit(v) ? "-0" : "0");
  }
  char digits[24];
  int len = 0, k10 = 0;
  grisu2(fabs(v), digits, &len, &k10);
  /* like "%.{p}g" with p = max(15, digits): fixed notation unless the exponent is < -4 or >= p */
  return format_g(out, v < 0, digits, len, len < 15 ? 15 : len, k10 + len - 1);
}
