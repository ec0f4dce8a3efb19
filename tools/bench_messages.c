/* tools/bench_messages.c: nanoseconds to encode one sensor sample message, the way the ZeroMQ
 * transport does (hil_msg_encode_sample_form: names, keys and units written once per sensor)
 * beside the general encoder it must match byte for byte (hil_msg_encode_sample, which writes
 * and escapes every part each time), on the samples of a robot's own sensors after 1 s of
 * simulation. Not a test: prints figures and ratios, asserts nothing but that both encoders
 * agree. Usage: bench_messages [ROBOT.json] (default configs/club_arm.json). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "hil/error.h"
#include "hil/zmq/json_messages.h"
#include "sensors/sensors.h"
#include "sim/data.h"
#include "sim/model.h"
#include "sim/sim.h"

#define BENCH_MAX_STREAMS 64
#define BENCH_ROUNDS 20000
#define BENCH_REPEATS 9 /* best of: the minimum is the cost without interference */

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

/* Best-of time per message over all streams (each sensor's sample and its truth). */
static double time_per_message(const bench *b, encode_fn encode) {
  char out[HIL_MSG_SAMPLE_MAX];
  const int streams = 2 * b->c->n;
  double best = 1e30;
  for (int r = 0; r < BENCH_REPEATS; r++) {
    const double t0 = bench_now();
    for (int k = 0; k < BENCH_ROUNDS; k++) {
      for (int i = 0; i < streams; i++) {
        sink += encode(b, i, out, sizeof out);
      }
    }
    const double dt = (bench_now() - t0) / ((double)BENCH_ROUNDS * streams);
    best = dt < best ? dt : best;
  }
  return best;
}

int main(int argc, char **argv) {
  if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
    printf("usage: bench_messages [ROBOT.json]\n\n"
           "Nanoseconds per sensor sample message: the transport's form encoder beside the\n"
           "general encoder (same bytes), on the robot's sensors after 1 s of simulation.\n"
           "Default robot: %s/configs/club_arm.json.\n",
           ACHILLES_SOURCE_DIR);
    return 0;
  }
  const char *path = argc > 1 ? argv[1] : ACHILLES_SOURCE_DIR "/configs/club_arm.json";
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
    const int nx = encode_general(&b, i, x, sizeof x), ny = encode_form(&b, i, y, sizeof y);
    if (nx < 0 || nx != ny || memcmp(x, y, (size_t)nx) != 0) {
      fprintf(stderr, "bench_messages: the encoders disagree on %s\n", c.sensor[i / 2]->name);
      return 1;
    }
  }
  const double general = time_per_message(&b, encode_general);
  const double form = time_per_message(&b, encode_form);
  printf("%s: %d sensors, %d messages (samples and truths), best of %d x %d rounds\n", path, c.n,
         2 * c.n, BENCH_REPEATS, BENCH_ROUNDS);
  printf("| encoder | ns per message |\n|---|---:|\n");
  printf("| general (hil_msg_encode_sample) | %.0f |\n", 1e9 * general);
  printf("| form (hil_msg_encode_sample_form) | %.0f |\n", 1e9 * form);
  printf("form / general: %.2f\n", form / general);
  sens_set_free(&set);
  sim_data_free(d);
  sim_model_free(m);
  return 0;
}
