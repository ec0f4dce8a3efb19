/* tests/sim/random_tree.h: random kinematic trees as robot-description JSON, for property tests.
 *
 * A tree is drawn from a seeded PRNG (splitmix64, owned by the caller), so a failing case is
 * reproduced from its seed alone. Bodies branch (each parent is drawn among the earlier bodies or
 * the world), joints are hinges, slides and a few fixed ones about random non-axis-aligned unit
 * axes, placements are random translations and unit quaternions, and inertial properties are
 * valid: mass > 0, any COM, and a full inertia tensor R·diag(I1,I2,I3)·Rᵀ whose principal moments
 * satisfy the triangle inequality (they come from positive second moments of a mass cloud).
 * Ownership: the caller provides the output buffer.
 */
#ifndef ACHILLES_TESTS_SIM_RANDOM_TREE_H
#define ACHILLES_TESTS_SIM_RANDOM_TREE_H

#include <stddef.h>
#include <stdint.h>

#define RT_MAX_BODIES 30

/* A splitmix64 stream: a plain value the caller owns. */
typedef struct rt_rng {
  uint64_t state;
} rt_rng;

void rt_rng_init(rt_rng *rng, uint64_t seed);
uint64_t rt_next(rt_rng *rng);
/* Uniform in [lo, hi). */
double rt_uniform(rt_rng *rng, double lo, double hi);
/* Uniform integer in [0, n), n > 0. */
int rt_int(rt_rng *rng, int n);

/* What to put in a tree. Zero-initialise, then set the fields wanted. */
typedef struct rt_spec {
  int nbody;            /* non-world bodies, 1..RT_MAX_BODIES */
  int passive;          /* 1: random damping, stiffness and spring reference */
  int armature;         /* 1: random armature */
  int gravity;          /* 1: gravity of 9.81 m/s² in a random direction; 0: none */
  int fixed;            /* 1: about 1 body in 8 gets a fixed joint (never the first) */
  int scale_body;       /* 1-based body whose mass is multiplied by scale_mass; 0: none */
  double scale_mass;    /* applied after all draws, so the rest of the tree is unchanged */
  /* The flags below draw more numbers only when set, so trees drawn without them are unchanged. */
  int ball;             /* 1: about 1 body in 5 (never the first) gets a ball joint (damping and
                           armature as the others, no spring) */
  int free_root;        /* 1: the first body hangs on a free joint */
  int actuators;        /* 1: about half the hinges and slides get an actuator: a motor, a
                           position or velocity servo, or a DC motor with or without inductance */
} rt_spec;

/* Writes the tree drawn from `seed` into buf as JSON text (NUL-terminated). Returns the length
 * the text needs, as snprintf does: the text is complete only if that is < bufsz. */
size_t rt_tree_json(char *buf, size_t bufsz, uint64_t seed, const rt_spec *spec);

#endif
