/* sensors/rng.h: the random numbers behind every noise block.
 *
 * Generator: xoshiro256++ (Blackman & Vigna, "Scrambled linear pseudorandom number generators",
 * ACM TOMS 2021): 256 bits of state, period 2^256 - 1, passes BigCrush and PractRand, about
 * 1 ns per 64-bit output. Seeding: the four state words are successive outputs of SplitMix64
 * (Steele, Lea & Flood 2014), as the authors recommend; SplitMix64 never yields an all-zero state
 * in practice and decorrelates nearby seeds.
 *
 * Streams: sens_rng_seed(r, seed, stream) first hashes (seed, stream) into one 64-bit key with
 * SplitMix64, then fills the state from that key. Each sensor channel gets its own stream id, so
 * adding a sensor, enabling a fault or changing one sensor's parameters never changes the numbers
 * another channel draws. Two streams could only collide if their keys were equal (probability
 * ~2^-64 per pair).
 *
 * Normal sampler: the ziggurat method (Marsaglia & Tsang 2000) with 256 layers, in the form of
 * Doornik (2005) that takes the layer index and the abscissa from disjoint bits of one 64-bit
 * draw (avoiding the correlation flaw of the original), with Marsaglia's exact tail algorithm.
 * It is an exact rejection sampler (the only approximation is the rounding of the tables) and
 * costs one 64-bit draw, a table look-up and a comparison in ~99% of calls: several times
 * faster than transformation methods, which matters at 100 encoders × 10 kHz. Marsaglia's polar
 * method (Marsaglia & Bray 1964; exact, no table) is kept as sens_rng_normal_polar, as an
 * independent reference for the tests.
 *
 * Value object: the caller owns a sens_rng; no allocation.
 */
#ifndef ACHILLES_SENSORS_RNG_H
#define ACHILLES_SENSORS_RNG_H

#include <stdint.h>

typedef struct sens_rng {
  uint64_t s[4];   /* xoshiro256++ state */
  double spare;    /* second normal of the last polar pair */
  int has_spare;   /* 1 when `spare` has not been returned yet */
} sens_rng;

/* One SplitMix64 step: advances *state by the golden-ratio increment and returns the mixed
 * output. */
uint64_t sens_splitmix64(uint64_t *state);

/* Seeds r for (seed, stream); see the header comment. */
void sens_rng_seed(sens_rng *r, uint64_t seed, uint64_t stream);

/* Sets the raw xoshiro state (for reference test vectors); s must not be all zero. */
void sens_rng_set_state(sens_rng *r, const uint64_t s[4]);

/* Next 64-bit output of xoshiro256++ (inline: it is on every sensor's per-sample path). */
static inline uint64_t sens_rng_next(sens_rng *r) {
  uint64_t *s = r->s;
  const uint64_t sum = s[0] + s[3];
  const uint64_t result = ((sum << 23) | (sum >> 41)) + s[0]; /* rotl(s0 + s3, 23) + s0 */
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = (s[3] << 45) | (s[3] >> 19); /* rotl(s3, 45) */
  return result;
}

/* Uniform double in [0, 1) with 53 random bits: k·2^-53 for k < 2^53, equally likely (the
 * signed conversion is exact and a single instruction). */
static inline double sens_rng_uniform(sens_rng *r) {
  return (double)(int64_t)(sens_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Standard normal N(0, 1), ziggurat. */
double sens_rng_normal(sens_rng *r);

/* Standard normal N(0, 1), Marsaglia polar method (uses r->spare). */
double sens_rng_normal_polar(sens_rng *r);

#endif
