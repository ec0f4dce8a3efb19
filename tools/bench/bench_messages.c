/* tools/bench/bench_messages.c: the cost of publishing sensor samples, and of the numbers in them.
 *
 * 1. One number: hil_num_format (Dragonbox, what the messages and the log use) beside the
 *    Grisu2 it replaced (tools/bench/bench_grisu2.c), double-conversion (when built with it) and
 *    snprintf("%.17g"), on the numbers of the robot's sample messages and on random doubles of
 *    every exponent.
 * 2. One sample message, the way the ZeroMQ transport encodes it (hil_msg_encode_sample_form:
 *    names, keys and units written once per sensor) and the general encoder it must match byte
 *    for byte (hil_msg_encode_sample), each with the library's and with Grisu2's numbers. The
 *    encoders are hil/json_writer.c and hil/zmq/json_messages.c compiled again
 *    (tools/bench/bench_messages_copy.c) with the formatter behind one switch, so both
 *    formatters pay the same indirect call.
 * 3. Where the texts of the two formatters differ, on 10^6 random doubles: the library's is
 *    never longer.
 * Samples come from the robot's own sensors after 1 s of simulation. Not a test: prints
 * figures and ratios, asserts nothing but that the encoders agree and the texts read back.
 * Usage: bench_messages [--quick] [ROBOT.json] (default configs/club_arm.json). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_grisu2.h"
#include "hil/error.h"
#include "hil/number_format.h"
#include "hil/zmq/json_messages.h"
#include "sensors/sensors.h"
#include "sim/data.h"
#include "sim/model.h"
#include "sim/sim.h"

#define BENCH_MAX_STREAMS 64
#define BENCH_ROUNDS 5000     /* messages of every stream per timed batch */
#define BENCH_REPEATS 9       /* best of: the minimum is the cost without interference */
#define BENCH_NUMBERS 400000  /* numbers per timed batch */
#define BENCH_RANDOM 4096     /* random doubles timed per pass */
#define BENCH_AGREE 1000000   /* random doubles compared between the two formatters */

/* --quick (for callgrind): a tenth of every batch, one repeat */
static int bench_scale = 1, bench_repeats = BENCH_REPEATS;

typedef struct captured {
  int n;
  const sens_sensor *sensor[BENCH_MAX_STREAMS];
  sens_sample sample[BENCH_MAX_STREAMS];
} captured;

static void capture(void *user, const sens_sensor *s, const sens_sample *smp) {
  captured *c = user;
  for (int i = 0; i < c->n; i++) {
    if (c->sensor[i] == s) {
      c->sample[i] = *smp; /* the newest */
      return;
    }
  }
  if (c->n < BENCH_MAX_STREAMS) {
    c->sensor[c->n] = s;
    c->sample[c->n++] = *smp;
  }
}

static double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static volatile int sink;

/* --- the formatters --------------------------------------------------------------------------- */

typedef int (*format_fn)(char *out, double v);

#ifdef BENCH_HAVE_DOUBLE_CONVERSION
int bench_dc_format(char out[32], double v); /* tools/bench/bench_double_conversion.cc */
#endif

static int format_snprintf(char *out, double v) {
  return snprintf(out, 32, "%.17g", v);
}

/* The encoders of bench_messages_copy.c call this instead of hil_num_format; the count tells
 * whether they still do (if the writer or the encoders move their number writing to another
 * file, the copy no longer covers it and the comparison would be void). */
int bench_num_format(char out[HIL_NUM_MAX], double v);
static format_fn bench_formatter = hil_num_format;
static long bench_num_calls;
int bench_num_format(char out[HIL_NUM_MAX], double v) {
  bench_num_calls++;
  return bench_formatter(out, v);
}

typedef struct formatter {
  const char *name;
  format_fn fn;
} formatter;

static const formatter formatters[] = {
    {"Dragonbox (hil_num_format)", hil_num_format},
    {"Grisu2 (removed, tools/bench/bench_grisu2.c)", bench_grisu2_format},
#ifdef BENCH_HAVE_DOUBLE_CONVERSION
    {"double-conversion ToShortest", bench_dc_format},
#endif
    {"snprintf %.17g", format_snprintf},
};
#define NFORMATTERS ((int)(sizeof formatters / sizeof formatters[0]))

static uint64_t next_bits(uint64_t *state) { /* xorshift64* */
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 0x2545F4914F6CDD1DULL;
}

static double random_finite(uint64_t *s) {
  for (;;) {
    uint64_t u = next_bits(s);
    double v;
    memcpy(&v, &u, sizeof v);
    if (v == v && v - v == 0) {
      return v;
    }
  }
}

/* Best-of ns per number of every formatter on values[0..n), the formatters taking turns. */
static void time_numbers(double ns[], const double *values, int n) {
  const int passes = n > 0 ? BENCH_NUMBERS / bench_scale / n + 1 : 0;
  for (int f = 0; f < NFORMATTERS; f++) {
    ns[f] = 1e30;
  }
  for (int r = 0; r < bench_repeats; r++) {
    for (int f = 0; f < NFORMATTERS; f++) {
      char out[32];
      const int reps = formatters[f].fn == format_snprintf ? passes / 8 + 1 : passes;
      const double t0 = bench_now();
      for (int k = 0; k < reps; k++) {
        for (int i = 0; i < n; i++) {
          sink += formatters[f].fn(out, values[i]);
        }
      }
      const double dt = 1e9 * (bench_now() - t0) / ((double)reps * n);
      ns[f] = dt < ns[f] ? dt : ns[f];
    }
  }
}

static int significant_digits(const char *text) {
  int n = 0, lead = 1;
  for (const char *p = text; *p && *p != 'e'; p++) {
    if (*p >= '1' && *p <= '9') {
      lead = 0;
    }
    n += !lead && *p >= '0' && *p <= '9';
  }
  return n;
}

/* 1 when |v| lies exactly halfway between two decimals of nd significant digits (glibc prints the
 * exact binary value with %.760e: every double has at most 767 significant digits, and the
 * digits past 760 of a tie are zeros anyway). */
static int is_tie(double v, int nd) {
  static char exact[800];
  snprintf(exact, sizeof exact, "%.760e", v < 0 ? -v : v);
  int k = 0, tie = 0;
  for (const char *p = exact; *p && *p != 'e'; p++) {
    if (*p < '0' || *p > '9') {
      continue;
    }
    if (k == nd) {
      tie = *p == '5';
    } else if (k > nd && *p != '0') {
      return 0;
    }
    k++;
  }
  return tie;
}

/* Part 3: how the library's text differs from Grisu2's. Returns 0, or 1 when a text does not
 * read back (then the figures mean nothing). */
static int compare_texts(void) {
  uint64_t s = 42;
  long differ = 0, shorter = 0, same_length = 0, ties = 0, longer = 0;
  char example[2][32] = {"", ""};
  const long count = BENCH_AGREE / bench_scale;
  for (long i = 0; i < count; i++) {
    const double v = random_finite(&s);
    char a[HIL_NUM_MAX], b[BENCH_GRISU2_MAX];
    hil_num_format(a, v);
    bench_grisu2_format(b, v);
    if (strtod(a, NULL) != v || strtod(b, NULL) != v) {
      fprintf(stderr, "bench_messages: %.17g does not read back (\"%s\", \"%s\")\n", v, a, b);
      return 1;
    }
    if (strcmp(a, b) == 0) {
      continue;
    }
    differ++;
    const int da = significant_digits(a), db = significant_digits(b);
    shorter += da < db;
    same_length += da == db;
    ties += da == db && is_tie(v, da);
    longer += da > db;
    if (!example[0][0]) {
      memcpy(example[0], a, sizeof example[0]);
      memcpy(example[1], b, sizeof example[1]);
    }
  }
  printf("\ntexts of %d random doubles (all exponents): %ld differ from Grisu2's (%.3f %%): "
         "%ld shorter, %ld as long (other last digit; %ld of them ties, Grisu2's digit the odd "
         "one, the others farther from the value), %ld longer; e.g. %s for Grisu2's %s\n",
         (int)count, differ, 100.0 * (double)differ / (double)count, shorter, same_length, ties,
         longer, example[0], example[1]);
  return 0;
}

/* --- the messages ----------------------------------------------------------------------------- */

typedef struct bench {
  const sim_model *m;
  const captured *c;
  const hil_msg_sample_form *forms; /* [2 * c->n]: stream i is sensor i / 2, truth if odd */
} bench;

typedef int (*encode_fn)(const bench *b, int stream, char *out, size_t out_sz);

static int encode_general(const bench *b, int i, char *out, size_t out_sz) {
  return hil_msg_encode_sample(out, out_sz, b->m, b->c->sensor[i / 2], &b->c->sample[i / 2], i % 2);
}

static int encode_form(const bench *b, int i, char *out, size_t out_sz) {
  return hil_msg_encode_sample_form(out, out_sz, &b->forms[i], &b->c->sample[i / 2]);
}

/* ns per message over all streams (each sensor's sample and its truth), one timed batch. */
static double batch_per_message(const bench *b, encode_fn encode, format_fn numbers) {
  char out[HIL_MSG_SAMPLE_MAX];
  const int streams = 2 * b->c->n, rounds = BENCH_ROUNDS / bench_scale;
  bench_formatter = numbers;
  const double t0 = bench_now();
  for (int k = 0; k < rounds; k++) {
    for (int i = 0; i < streams; i++) {
      sink += encode(b, i, out, sizeof out);
    }
  }
  const double dt = 1e9 * (bench_now() - t0) / ((double)rounds * streams);
  bench_formatter = hil_num_format;
  return dt;
}

/* One function per encoder and formatter, never inlined, so that callgrind's inclusive count of
 * each is the instructions of its batches (callgrind_annotate --inclusive=yes). */
#define BENCH_BATCH(name, encoder, numbers)                                                      \
  static __attribute__((noinline)) double name(const bench *b) {                               \
    return batch_per_message(b, encoder, numbers);                                              \
  }
BENCH_BATCH(batch_form_dragonbox, encode_form, hil_num_format)
BENCH_BATCH(batch_form_grisu2, encode_form, bench_grisu2_format)
BENCH_BATCH(batch_general_dragonbox, encode_general, hil_num_format)
BENCH_BATCH(batch_general_grisu2, encode_general, bench_grisu2_format)

/* Best-of ns per message of both encoders with both formatters ([encoder][formatter]: form,
 * general; library, Grisu2), all four taking turns in every repeat. */
static void time_messages(double ns[2][2], const bench *b) {
  double (*const batch[2][2])(const bench *) = {{batch_form_dragonbox, batch_form_grisu2},
                                                {batch_general_dragonbox, batch_general_grisu2}};
  for (int e = 0; e < 2; e++) {
    ns[e][0] = ns[e][1] = 1e30;
  }
  for (int r = 0; r < bench_repeats; r++) {
    for (int e = 0; e < 2; e++) {
      for (int f = 0; f < 2; f++) {
        const double dt = batch[e][f](b);
        ns[e][f] = dt < ns[e][f] ? dt : ns[e][f];
      }
    }
  }
}

/* Every number of the captured messages: t, t_truth, the measured values and the truths. */
static int message_numbers(double *out, int cap, const captured *c) {
  int n = 0;
  for (int i = 0; i < c->n; i++) {
    const sens_sample *smp = &c->sample[i];
    const int nch = c->sensor[i]->nch;
    for (int k = -2; k < 2 * nch && n < cap; k++) {
      out[n++] = k == -2   ? smp->t
                 : k == -1 ? smp->t_truth
                 : k < nch ? smp->meas[k]
                           : smp->truth[k - nch];
    }
  }
  return n;
}

int main(int argc, char **argv) {
  if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
    printf("usage: bench_messages [--quick] [ROBOT.json]\n\n"
           "Nanoseconds per number (the library, the Grisu2 it replaced, snprintf) and per\n"
           "sensor sample message (the transport's form encoder and the general encoder, each\n"
           "with both formatters), on the robot's sensors after 1 s of simulation.\n"
           "Default robot: %s/configs/club_arm.json. --quick: a tenth of the work, one\n"
           "repeat (for valgrind --tool=callgrind).\n",
           ACHILLES_SOURCE_DIR);
    return 0;
  }
  int arg = 1;
  if (argc > arg && strcmp(argv[arg], "--quick") == 0) {
    bench_scale = 10;
    bench_repeats = 1;
    arg++;
  }
  const char *path = argc > arg ? argv[arg] : ACHILLES_SOURCE_DIR "/configs/club_arm.json";
  char err[1024];
  sim_model *m = sim_model_load_file(path, err, sizeof err);
  sens_set *set = NULL;
  if (!m || sens_set_load_robot(&set, m, path, err, sizeof err) != 0) {
    fprintf(stderr, "bench_messages: %s\n", err);
    sim_model_free(m);
    return 1;
  }
  sim_data *d = sim_data_new(m);
  static captured c;
  sens_set_callback(set, capture, &c);
  for (int k = 0; k < 1000; k++) { /* 1 s: moving joints, settled filters */
    sim_step(m, d);
    sim_forward(m, d);
    sens_set_update(set, m, d);
  }
  static hil_msg_sample_form forms[2 * BENCH_MAX_STREAMS];
  const bench b = {m, &c, forms};
  for (int i = 0; i < 2 * c.n; i++) {
    char x[HIL_MSG_SAMPLE_MAX], y[HIL_MSG_SAMPLE_MAX];
    hil_msg_sample_form_init(&forms[i], m, c.sensor[i / 2], i % 2);
    bench_num_calls = 0;
    const int nx = encode_general(&b, i, x, sizeof x), ny = encode_form(&b, i, y, sizeof y);
    if (nx < 0 || nx != ny || memcmp(x, y, (size_t)nx) != 0) {
      fprintf(stderr, "bench_messages: the encoders disagree on %s\n", c.sensor[i / 2]->name);
      return 1;
    }
    if (bench_num_calls != 2 * (2 + c.sensor[i / 2]->nch)) { /* t, t_truth, values; twice */
      fprintf(stderr, "bench_messages: the encoders formatted %ld numbers through "
                      "bench_num_format, expected %d: update tools/bench/bench_messages_copy.c\n",
              bench_num_calls, 2 * (2 + c.sensor[i / 2]->nch));
      return 1;
    }
  }

  static double values[BENCH_MAX_STREAMS * (2 + 2 * SENS_MAX_CHANNELS)], randoms[BENCH_RANDOM];
  const int nvalues = message_numbers(values, (int)(sizeof values / sizeof values[0]), &c);
  uint64_t s = 7;
  for (int i = 0; i < BENCH_RANDOM; i++) {
    randoms[i] = random_finite(&s);
  }
  double ns_values[NFORMATTERS], ns_random[NFORMATTERS], ns_msg[2][2];
  time_numbers(ns_values, values, nvalues);
  time_numbers(ns_random, randoms, BENCH_RANDOM);
  time_messages(ns_msg, &b);

  printf("%s: %d sensors, %d messages (samples and truths) with %d numbers; best of %d batches"
         " of %d rounds\n",
         path, c.n, 2 * c.n, nvalues, bench_repeats, BENCH_ROUNDS / bench_scale);
  printf("\n| formatter | ns per number, message values | ns per number, random doubles |\n"
         "|---|---:|---:|\n");
  for (int f = 0; f < NFORMATTERS; f++) {
    printf("| %s | %.1f | %.1f |\n", formatters[f].name, ns_values[f], ns_random[f]);
  }
  printf("\n| encoder | ns per message, Dragonbox | ns per message, Grisu2 | Dragonbox / Grisu2 |\n"
         "|---|---:|---:|---:|\n");
  const char *const names[2] = {"form (hil_msg_encode_sample_form, the transport's)",
                                "general (hil_msg_encode_sample)"};
  for (int e = 0; e < 2; e++) {
    printf("| %s | %.0f | %.0f | %.2f |\n", names[e], ns_msg[e][0], ns_msg[e][1],
           ns_msg[e][0] / ns_msg[e][1]);
  }
  printf("form / general (Dragonbox): %.2f\n", ns_msg[0][0] / ns_msg[1][0]);
  const int rc = compare_texts();
  sens_set_free(&set);
  sim_data_free(d);
  sim_model_free(m);
  return rc;
}
