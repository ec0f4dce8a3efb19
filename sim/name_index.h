/* sim/name_index.h: names to numbers in constant time, for loaders that look names up while
 * they build (a body's parent, a URDF joint's links): a linear search there made loading a
 * model of n bodies cost n² comparisons.
 *
 * Open addressing over a table of at least twice the names it holds (FNV-1a hash). The keys are
 * not copied: the caller keeps each name alive and unchanged while the index is used.
 * Ownership: sim_name_index_init allocates the table, sim_name_index_free releases it. */
#ifndef ACHILLES_SIM_NAME_INDEX_H
#define ACHILLES_SIM_NAME_INDEX_H

#include <stddef.h>

typedef struct sim_name_index {
  const char **key; /* [cap], NULL for an empty slot */
  int *value;       /* [cap] */
  size_t cap, n, max;
} sim_name_index;

/* Room for up to max names; -1 when out of memory. */
int sim_name_index_init(sim_name_index *ix, size_t max);
void sim_name_index_free(sim_name_index *ix);

/* Adds name → value: -1 when added, the value already held when the name is there (nothing is
 * changed then), -2 when the index already holds max names. */
int sim_name_index_add(sim_name_index *ix, const char *name, int value);

/* The value of name, -1 when absent. */
int sim_name_index_find(const sim_name_index *ix, const char *name);

#endif
