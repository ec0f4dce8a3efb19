/* tests/hil/test_number_format.c: the number text of the messages and the log
 * (hil/number_format.cc): the documented layout on chosen values, and 10^7 doubles of every kind
 * (random bit patterns over all exponents, subnormals, integers, simulation times, powers of
 * ten and of two with their neighbours, ±0) that must be valid JSON, read back bit for bit
 * through strtod, have no shorter text that would (checked on the two candidates with one digit
 * less that bracket the value), and be the closest to the value of the texts as short (checked
 * against glibc's exactly rounded printf). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hil/number_format.h"
#include "support/numbers.h"
#include "support/sanitizer.h"
#include "support/skip.h"

/* doubles drawn at random, beside the systematic ones (a million under the sanitizer: the same
 * code paths, a tenth of the repetitions) */
#define RANDOM_COUNT TS_FULL_OR(10000000, 10)

static double from_bits(uint64_t u) {
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

/* xorshift64*: reproducible random bit patterns */
static uint64_t next_bits(uint64_t *state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 0x2545F4914F6CDD1DULL;
}

/* --- reading the text back -------------------------------------------------------------------- */

/* A number text taken apart: significant digits (no leading zeros) d1.d2d3... × 10^exp10. */
typedef struct parsed {
  char digits[32];
  int nd, exp10;
  int exponent_form; /* written as d.ddde±XX */
} parsed;

static int is_digit(char c) {
  return c >= '0' && c <= '9';
}

/* Checks the JSON number grammar, -?(0|[1-9][0-9]*)(\.[0-9]+)?(e[+-][0-9]{2,3})?, the way this
 * formatter writes it, and takes the text apart. Returns 0 and a reason when it does not fit. */
static int parse_number(parsed *out, const char *text, const char **why) {
  const char *p = text + (*text == '-');
  memset(out, 0, sizeof *out);
  int point = -1, count = 0; /* digits before the point, digits seen */
  if (!is_digit(*p) || (p[0] == '0' && is_digit(p[1]))) {
    *why = "integer part: a leading zero or no digit";
    return 0;
  }
  int lead = 0; /* zeros before the first significant digit */
  for (; is_digit(*p) || (*p == '.' && point < 0); p++) {
    if (*p == '.') {
      point = count;
      if (!is_digit(p[1])) {
        *why = "no digit after the decimal point";
        return 0;
      }
      continue;
    }
    if (out->nd == 0 && *p == '0') {
      lead++;
    } else if (out->nd < (int)sizeof out->digits - 1) {
      out->digits[out->nd++] = *p;
    }
    count++;
  }
  if (point < 0) {
    point = count;
  }
  while (out->nd > 1 && out->digits[out->nd - 1] == '0') { /* 1200 has two significant digits */
    out->nd--;
  }
  out->exp10 = point - lead - 1;
  if (*p == 'e') {
    out->exponent_form = 1;
    if ((p[1] != '+' && p[1] != '-') || !is_digit(p[2]) || !is_digit(p[3]) ||
        (p[4] && (!is_digit(p[4]) || p[5]))) {
      *why = "exponent: expected e+XX, e-XX or three digits";
      return 0;
    }
    out->exp10 += atoi(p + 1);
  } else if (*p) {
    *why = "characters after the number";
    return 0;
  }
  if (out->nd == 0) { /* zero */
    out->digits[out->nd++] = '0';
    out->exp10 = 0;
  }
  out->digits[out->nd] = '\0';
  return 1;
}

/* The decimal s × 10^exp10 read as a double. */
static double read_decimal(uint64_t s, int exp10) {
  char text[48];
  snprintf(text, sizeof text, "%llue%d", (unsigned long long)s, exp10);
  return strtod(text, NULL);
}

/* With one digit less, the decimals that bracket v are T·10^k and (T+1)·10^k, T = the digits
 * without the last (nonzero) one: v lies strictly between them, so if neither reads back as v
 * no shorter text does. Returns 1 when one of them does (the text was not the shortest). */
static int shorter_exists(const parsed *p, double v) {
  if (p->nd < 2) {
    return 0;
  }
  uint64_t t = 0;
  for (int i = 0; i < p->nd - 1; i++) {
    t = 10 * t + (uint64_t)(p->digits[i] - '0');
  }
  const int k = p->exp10 - (p->nd - 2); /* place of T's last digit */
  const double a = fabs(v);
  return read_decimal(t, k) == a || read_decimal(t + 1, k) == a;
}

/* Of the texts with as many digits, the closest to v that reads back: glibc's printf rounds
 * exactly, so "%.{nd-1}e" is the closest of them all; when it reads back as v, it must be the
 * text. Returns 1 when it is not. */
static int closer_exists(const parsed *p, double v) {
  char ref[48];
  snprintf(ref, sizeof ref, "%.*e", p->nd - 1, fabs(v));
  if (strtod(ref, NULL) != fabs(v)) {
    return 0; /* the closest lies outside v's rounding interval (next to a power of two) */
  }
  char digits[32];
  int nd = 0;
  const char *e = ref;
  for (; *e && *e != 'e'; e++) {
    if (is_digit(*e) && nd < (int)sizeof digits - 1) {
      digits[nd++] = *e;
    }
  }
  digits[nd] = '\0';
  return strcmp(digits, p->digits) != 0 || atoi(e + 1) != p->exp10;
}

/* Everything one number must satisfy; fails naming the value and its text. check: 0, 1 also
 * the shortest, 2 also the closest. */
static void check_number(double v, int check) {
  char text[HIL_NUM_MAX];
  const int n = hil_num_format(text, v);
  if (n != (int)strlen(text) || n > 24) {
    fail_msg("%a: returned length %d for \"%s\" (at most 24)", v, n, text);
  }
  parsed p;
  const char *why = "";
  if (!parse_number(&p, text, &why)) {
    fail_msg("%a printed as \"%s\": not a JSON number (%s)", v, text, why);
  }
  if (!ts_same_bits(strtod(text, NULL), v)) {
    fail_msg("%a printed as \"%s\" does not read back", v, text);
  }
  const int prec = p.nd < 15 ? 15 : p.nd; /* the layout of "%.{max(15, digits)}g" */
  if (v != 0.0 && p.exponent_form != (p.exp10 < -4 || p.exp10 >= prec)) {
    fail_msg("%a printed as \"%s\": %s notation for 10^%d with %d digits", v, text,
             p.exponent_form ? "exponent" : "fixed", p.exp10, p.nd);
  }
  if (check >= 1 && shorter_exists(&p, v)) {
    fail_msg("%a printed as \"%s\": a text with %d digits reads back too", v, text, p.nd - 1);
  }
  if (check >= 2 && v != 0.0 && closer_exists(&p, v)) {
    fail_msg("%a printed as \"%s\": the correctly rounded text of as many digits reads back",
             v, text);
  }
}

/* --- the layout on chosen values -------------------------------------------------------------- */

static void expect_text(double v, const char *expected) {
  char text[HIL_NUM_MAX];
  hil_num_format(text, v);
  if (strcmp(text, expected) != 0) {
    fail_msg("%a: expected \"%s\", got \"%s\"", v, expected, text);
  }
}

static void test_documented_layout(void **state) {
  (void)state;
  expect_text(0.1, "0.1");                                 /* no noise digits */
  expect_text(0.1 + 0.2, "0.30000000000000004");           /* 17 needed */
  expect_text(1234.0, "1234");                             /* counts print as integers */
  expect_text(-1234.0, "-1234");
  expect_text(0.0, "0");
  expect_text(-0.0, "-0");
  expect_text(0.001, "0.001");
  expect_text(0.0001, "0.0001");                           /* fixed down to 1e-4 */
  expect_text(1.5e-4, "0.00015");
  expect_text(1e-5, "1e-05");                              /* below: exponent, two digits */
  expect_text(-2.5e-7, "-2.5e-07");
  expect_text(999999999999999.0, "999999999999999");       /* 15 digits, fixed */
  expect_text(1e15, "1e+15");                              /* 10^15 with one digit: exponent */
  expect_text(9007199254740992.0, "9007199254740992");     /* 2^53: 16 digits, fixed */
  expect_text(123456789012345680.0, "1.2345678901234568e+17");
  expect_text(123456789012.5, "123456789012.5");
  expect_text(1e22, "1e+22");
  expect_text(1e100, "1e+100");                            /* three exponent digits */
  expect_text(5e-324, "5e-324");                           /* the smallest subnormal */
  expect_text(DBL_MIN, "2.2250738585072014e-308");
  expect_text(-DBL_MAX, "-1.7976931348623157e+308");
  expect_text(NAN, "null");                                /* JSON has no NaN or infinity */
  expect_text(-NAN, "null");
  expect_text(INFINITY, "null");
  expect_text(-INFINITY, "null");
}

/* The check itself must catch what it is there to catch. */
static void test_checks_can_fail(void **state) {
  (void)state;
  parsed p;
  const char *why = "";
  const char *const bad[] = {"01", "1.", ".5", "1e5", "1e+5", "1.5x", "+1", "-", "1.2.3", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    if (parse_number(&p, bad[i], &why)) {
      fail_msg("\"%s\" passed as a JSON number in this layout", bad[i]);
    }
  }
  assert_true(parse_number(&p, "0.30000000000000004", &why));
  assert_true(shorter_exists(&p, 0.3));                  /* "0.3" would do for 0.3 */
  assert_false(shorter_exists(&p, 0.1 + 0.2));
  const double v = -1.3303614477467815e+303; /* exactly -1.33036144774678145003...e+303 */
  assert_true(parse_number(&p, "-1.3303614477467814e+303", &why)); /* Grisu2's text */
  assert_true(closer_exists(&p, v));
  assert_true(parse_number(&p, "-1.3303614477467815e+303", &why));
  assert_false(closer_exists(&p, v));
  assert_true(parse_number(&p, "1.0000000000000002e-05", &why));
  assert_int_equal(p.nd, 17);
  assert_int_equal(p.exp10, -5);
  assert_true(parse_number(&p, "-0.00120", &why));
  assert_int_equal(p.nd, 2);
  assert_int_equal(p.exp10, -3);
}

/* --- 10^7 doubles ----------------------------------------------------------------------------- */

/* Powers of ten and of two over the whole range, each with its neighbours (the asymmetric
 * rounding interval at a power of two is where shortest-digit algorithms go wrong), ±0, the
 * extremes. Returns how many were checked. */
static long check_systematic(void) {
  long count = 0;
  for (int e = -323; e <= 308; e++) {
    char text[16];
    snprintf(text, sizeof text, "1e%d", e);
    const double p10 = strtod(text, NULL);
    const double around[] = {p10, nextafter(p10, 0.0), nextafter(p10, INFINITY)};
    for (int i = 0; i < 3; i++) {
      check_number(around[i], 2);
      check_number(-around[i], 2);
      count += 2;
    }
  }
  for (uint64_t biased = 1; biased < 2047; biased++) {
    const double p2 = from_bits(biased << 52);
    const double around[] = {p2, nextafter(p2, 0.0), nextafter(p2, INFINITY)};
    for (int i = 0; i < 3; i++) {
      check_number(around[i], 2);
      count++;
    }
  }
  const double extremes[] = {0.0, -0.0, DBL_MIN, DBL_MAX, -DBL_MAX, DBL_TRUE_MIN, -DBL_TRUE_MIN,
                             nextafter(DBL_MIN, 0.0), 9007199254740993.0};
  for (size_t i = 0; i < sizeof extremes / sizeof extremes[0]; i++) {
    check_number(extremes[i], 2);
    count++;
  }
  return count;
}

/* The i-th random double: a rotation of kinds, so that every kind is spread over the run. */
static double random_double(uint64_t *s, long i) {
  const uint64_t bits = next_bits(s);
  switch (i % 8) {
  case 0: /* subnormals: exponent field 0 */
    return from_bits((bits & 0x800FFFFFFFFFFFFFULL) | 1);
  case 1: /* integers of every size, up to 2^63 */
    return (double)(int64_t)(bits >> (bits & 63));
  case 2: /* times k·dt and small measurements, as in sample messages */
    return (double)(bits >> 44) * 1e-3;
  case 3:
    return ((double)(bits >> 11) * 0x1p-53 - 0.5) * 20.0;
  default: { /* any finite bit pattern: every exponent equally likely */
    const double v = from_bits(bits);
    return isfinite(v) ? v : from_bits(bits & 0xBFFFFFFFFFFFFFFFULL);
  }
  }
}

static void test_ten_million_round_trip(void **state) {
  (void)state;
  long count = check_systematic();
  uint64_t s = 0x9E3779B97F4A7C15ULL;
  for (long i = 0; i < RANDOM_COUNT; i++) {
    /* the shortest check on a quarter, the closest on a sixteenth: time */
    check_number(random_double(&s, i), i % 16 == 0 ? 2 : i % 4 == 0);
    count++;
  }
  print_message("%ld doubles round-trip, %ld of them checked for the shortest text, %d of those "
                "for the closest\n",
                count, RANDOM_COUNT / 4 + count - RANDOM_COUNT, RANDOM_COUNT / 16);
  assert_true(count > RANDOM_COUNT);
}

/* A JSON reader other than strtod gets the same value: cJSON, on a sample of the kinds. */
static void test_cjson_reads_back(void **state) {
  (void)state;
  uint64_t s = 12345;
  for (long i = 0; i < 100000; i++) {
    const double v = random_double(&s, i);
    char text[HIL_NUM_MAX];
    hil_num_format(text, v);
    cJSON *j = cJSON_Parse(text);
    assert_non_null(j);
    if (!cJSON_IsNumber(j) || !ts_same_bits(j->valuedouble, v)) {
      fail_msg("%a printed as \"%s\" does not read back through cJSON", v, text);
    }
    cJSON_Delete(j);
  }
}

TS_MAIN(test_documented_layout, test_checks_can_fail, test_cjson_reads_back,
        test_ten_million_round_trip)
