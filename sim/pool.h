/* sim/pool.h: many independent worlds of one model, stepped together on worker threads, and the
 * observation vector (qpos, then qvel) that learning code reads from each.
 *
 * Each world is a sim_data of its own; a batch call steps every world, each on one thread at a
 * time, so a world's trajectory is bit for bit what sim_step gives it alone, whatever the number
 * of threads. The calling thread works too: a pool of one thread starts no thread.
 *
 *   sim_pool *p = sim_pool_new(m, 256, 2, err, sizeof err);
 *   sim_pool_set_ctrl(p, actions);          // [nworld · nu]
 *   sim_pool_step(p, 10);                   // 10 steps of every world
 *   sim_pool_observe(p, 0, obs);            // [nworld · sim_observation_size(m, 0)]
 *
 * Ownership: sim_pool_new allocates every world and thread; sim_pool_free(&p) joins the threads,
 * frees everything, sets p to NULL and accepts NULL. The model must outlive the pool. Stepping
 * allocates nothing. A pool is driven from one thread at a time.
 */
#ifndef ACHILLES_SIM_POOL_H
#define ACHILLES_SIM_POOL_H

#include <stddef.h>

#include "sim/sim.h"

#define SIM_POOL_MAX_THREADS 256

typedef struct sim_pool sim_pool;

/* nworld >= 1 worlds, all at the model's initial state; nthread in [1, SIM_POOL_MAX_THREADS]
 * (threads beyond the world count stay idle). NULL with a message on failure. */
sim_pool *sim_pool_new(const sim_model *m, int nworld, int nthread, char *err, size_t err_sz);
void sim_pool_free(sim_pool **p);

int sim_pool_size(const sim_pool *p);
/* World w's data, to read or set directly (between batch calls only). */
sim_data *sim_pool_data(sim_pool *p, int w);

/* ctrl[w·nu + i] becomes actuator i's command in world w. */
void sim_pool_set_ctrl(sim_pool *p, const double *ctrl);
/* nstep steps of every world, in parallel. */
void sim_pool_step(sim_pool *p, int nstep);
/* fn(ctx, m, w, data of world w) once for every world, in parallel (each world on one thread at a
 * time, as a step): a world's own work beyond stepping, such as its step Jacobians or a rollout
 * gradient (sim/deriv). fn may read ctx and write what belongs to world w only. */
typedef void (*sim_pool_fn)(void *ctx, const sim_model *m, int w, sim_data *d);
void sim_pool_run(sim_pool *p, sim_pool_fn fn, void *ctx);
/* out[w·size ...] = sim_observe of world w; size = sim_observation_size(m, qpos_skip). */
void sim_pool_observe(const sim_pool *p, int qpos_skip, double *out);
/* World w back to a saved state (sim_snapshot_save of any world of the same model). */
void sim_pool_reset(sim_pool *p, int w, const sim_snapshot *s);

/* The observation of one world: qpos[qpos_skip:] then qvel, as the seed's StateExtractor (the
 * skip drops root coordinates a policy should not see, e.g. the x of a walker). */
int sim_observation_size(const sim_model *m, int qpos_skip);
void sim_observe(const sim_model *m, const sim_data *d, int qpos_skip, double *out);

#endif
