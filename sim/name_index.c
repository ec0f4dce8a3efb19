/* sim/name_index.c: names to numbers by open addressing; see name_index.h. */
#include "sim/name_index.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a, 64 bits */
  for (; *s; s++) {
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  }
  return h;
}

int sim_name_index_init(sim_name_index *ix, size_t max) {
  memset(ix, 0, sizeof *ix);
  size_t cap = 16;
  while (cap < 2 * max + 2) {
    cap *= 2;
  }
  ix->key = calloc(cap, sizeof *ix->key);
  ix->value = calloc(cap, sizeof *ix->value);
  if (!ix->key || !ix->value) {
    sim_name_index_free(ix);
    return -1;
  }
  ix->cap = cap, ix->max = max;
  return 0;
}

void sim_name_index_free(sim_name_index *ix) {
  free(ix->key);
  free(ix->value);
  memset(ix, 0, sizeof *ix);
}

/* the slot holding name, or the empty one where it would go */
static size_t slot_of(const sim_name_index *ix, const char *name) {
  size_t i = (size_t)hash(name) & (ix->cap - 1);
  while (ix->key[i] && strcmp(ix->key[i], name) != 0) {
    i = (i + 1) & (ix->cap - 1);
  }
  return i;
}

int sim_name_index_add(sim_name_index *ix, const char *name, int value) {
  const size_t i = slot_of(ix, name);
  if (ix->key[i]) {
    return ix->value[i];
  }
  if (ix->n >= ix->max) {
    return -2;
  }
  ix->key[i] = name;
  ix->value[i] = value;
  ix->n++;
  return -1;
}

int sim_name_index_find(const sim_name_index *ix, const char *name) {
  if (!ix->cap) {
    return -1;
  }
  const size_t i = slot_of(ix, name);
  return ix->key[i] ? ix->value[i] : -1;
}
