/* tools/bench/bench_sensors.c: nanoseconds per encoder sample with every block enabled (scale,
 * offset, turn-on bias, Gauss–Markov drift, white noise, low-pass, quantization, counter,
 * velocity, index, latency, drops), for 100 encoders on the club arm sampled at the physics
 * rate; beside a trivial reference in the same process (a loop drawing one normal number).
 * Not a test: prints figures, asserts nothing. Usage: bench_sensors [ROBOT.json [N_ENCODERS]]
 * (default 100 encoders). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sensors/sensors.h"

#define BENCH_MAX_ENCODERS 1000
#define BENCH_UPDATES 20000
#define BENCH_REPEATS 15 /* best of: the minimum is the cost without interference */

static double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* one encoder object with every block of the chain switched on */
static cJSON *bench_encoder(int i, const sim_model *m) {
  char name[32];
  snprintf(name, sizeof name, "enc%d", i);
  cJSON *e = cJSON_CreateObject();
  cJSON_AddStringToObject(e, "name", name);
  cJSON_AddStringToObject(e, "type", "encoder");
  cJSON_AddStringToObject(e, "joint", m->joints[i % m->njnt].name);
  cJSON_AddNumberToObject(e, "counts_per_rev", 4096);
  cJSON_AddTrueToObject(e, "quadrature");
  cJSON_AddTrueToObject(e, "velocity");
  cJSON_AddTrueToObject(e, "index");
  cJSON_AddNumberToObject(e, "latency_s", 0.002);
  cJSON_AddNumberToObject(e, "drop_probability", 0.001);
  cJSON *noise = cJSON_AddObjectToObject(e, "noise");
  cJSON_AddNumberToObject(noise, "scale_error", 1e-4);
  cJSON_AddNumberToObject(noise, "offset", 1e-3);
  cJSON_AddNumberToObject(noise, "turn_on_bias_sigma", 1e-4);
  cJSON_AddNumberToObject(cJSON_AddObjectToObject(noise, "white"), "sigma", 1e-4);
  cJSON *gm = cJSON_AddObjectToObject(noise, "gauss_markov");
  cJSON_AddNumberToObject(gm, "sigma", 1e-4);
  cJSON_AddNumberToObject(gm, "tau_s", 2.0);
  cJSON *filter = cJSON_AddObjectToObject(e, "filter");
  cJSON_AddStringToObject(filter, "type", "first_order");
  cJSON_AddNumberToObject(filter, "cutoff_hz", 200);
  return e;
}

static sens_set *bench_set(const sim_model *m, int count) {
  cJSON *block = cJSON_CreateObject();
  cJSON_AddNumberToObject(block, "seed", 1);
  cJSON *list = cJSON_AddArrayToObject(block, "list");
  for (int i = 0; i < count; i++) {
    cJSON_AddItemToArray(list, bench_encoder(i, m));
  }
  char err[512];
  sens_set *set = NULL;
  if (sens_set_load_json(&set, m, block, "bench", err, sizeof err) != 0) {
    fprintf(stderr, "bench_sensors: %s\n", err);
  }
  cJSON_Delete(block);
  return set;
}

/* best of BENCH_REPEATS: ns per encoder sample */
static double bench_encoders(sens_set *set, const sim_model *m, sim_data *d, int count) {
  double best = 1e30;
  for (int r = 0; r < BENCH_REPEATS; r++) {
    const double t0 = bench_now();
    for (int k = 0; k < BENCH_UPDATES; k++) {
      d->nstep++; /* a new physics step each time; the state itself stays put */
      d->time += m->opt.timestep;
      d->qpos[0] += 1e-4; /* keep the counter moving */
      sens_set_update(set, m, d);
    }
    const double ns = (bench_now() - t0) * 1e9 / ((double)BENCH_UPDATES * count);
    best = ns < best ? ns : best;
  }
  return best;
}

/* the reference: one normal draw per iteration, same count */
static double bench_reference(double *sink, int count) {
  sens_rng rng;
  sens_rng_seed(&rng, 1, 2);
  double best = 1e30, acc = 0.0;
  const long n = (long)BENCH_UPDATES * count;
  for (int r = 0; r < BENCH_REPEATS; r++) {
    const double t0 = bench_now();
    for (long k = 0; k < n; k++) {
      acc += sens_rng_normal(&rng);
    }
    const double ns = (bench_now() - t0) * 1e9 / (double)n;
    best = ns < best ? ns : best;
  }
  *sink = acc;
  return best;
}

int main(int argc, char **argv) {
  const char *robot = argc > 1 ? argv[1] : "configs/club_arm.json";
  const int count = argc > 2 ? atoi(argv[2]) : 100;
  if (count < 1 || count > BENCH_MAX_ENCODERS) {
    fprintf(stderr, "bench_sensors: N_ENCODERS must be in [1, %d]\n", BENCH_MAX_ENCODERS);
    return 2;
  }
  char err[512];
  sim_model *m = sim_model_load_file(robot, err, sizeof err);
  if (!m) {
    fprintf(stderr, "bench_sensors: %s (run from the source tree or pass ROBOT.json)\n", err);
    return 1;
  }
  sim_data *d = sim_data_new(m);
  sens_set *set = d ? bench_set(m, count) : NULL;
  if (!set) {
    sim_data_free(d);
    sim_model_free(m);
    return 1;
  }
  sim_forward(m, d);
  double sink;
  const double ref = bench_reference(&sink, count);
  const double enc = bench_encoders(set, m, d, count);
  printf("%d encoders, one sample each, every block enabled: %6.1f ns per sample (target <= 50 ns)\n",
         count, enc);
  printf("reference, one normal draw:          %6.1f ns  (ratio %.1f)  [sink %g]\n", ref,
         enc / ref, sink);
  printf("100 encoders at 10 kHz at this cost: %.2f%% of one core\n", enc * 100.0 * 1e4 * 1e-9 * 100.0);
  sens_set_free(&set);
  sim_data_free(d);
  sim_model_free(m);
  return 0;
}
