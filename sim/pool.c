/* sim/pool.c: worlds stepped in parallel. Workers wait for a new batch (a generation counter),
 * take worlds one at a time from a shared atomic counter, and report when none is left; the
 * caller takes worlds the same way and waits for the last worker. Both spin a few microseconds
 * before sleeping on a condition variable: batches of a few small worlds last less than a
 * sleeping thread takes to wake on a virtual machine. */
#include "sim/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_pool {
  const sim_model *m;
  int nworld, nthread;
  sim_data **worlds;
  pthread_t *threads; /* nthread - 1 workers */
  int started;        /* workers created */
  pthread_mutex_t lock;
  pthread_cond_t wake, done;
  atomic_ulong generation; /* a new batch when it changes (written under lock) */
  atomic_int busy;         /* workers still in the current batch */
  atomic_int quit;
  int nstep;
  sim_pool_fn fn;  /* sim_pool_run's work for each world (NULL: nstep steps) */
  void *fn_ctx;
  atomic_int next; /* the next world to take */
};

/* every world of the current batch that nobody has taken yet */
static void run_batch(sim_pool *p) {
  for (;;) {
    int w = atomic_fetch_add(&p->next, 1);
    if (w >= p->nworld) {
      return;
    }
    if (p->fn) {
      p->fn(p->fn_ctx, p->m, w, p->worlds[w]);
      continue;
    }
    for (int s = 0; s < p->nstep; s++) {
      sim_step(p->m, p->worlds[w]);
    }
  }
}

#define SPIN 20000 /* polls before sleeping: some tens of microseconds */

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static void *worker(void *arg) {
  sim_pool *p = arg;
  unsigned long seen = 0;
  for (;;) {
    for (int i = 0; i < SPIN && atomic_load(&p->generation) == seen && !atomic_load(&p->quit);
         i++) {
      relax();
    }
    pthread_mutex_lock(&p->lock);
    while (atomic_load(&p->generation) == seen && !atomic_load(&p->quit)) {
      pthread_cond_wait(&p->wake, &p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    if (atomic_load(&p->quit)) {
      break;
    }
    seen = atomic_load(&p->generation);
    run_batch(p);
    if (atomic_fetch_sub(&p->busy, 1) == 1) { /* the last one out tells the caller */
      pthread_mutex_lock(&p->lock);
      pthread_cond_signal(&p->done);
      pthread_mutex_unlock(&p->lock);
    }
  }
  return NULL;
}

static int fail(char *err, size_t err_sz, const char *msg) {
  snprintf(err, err_sz, "sim_pool: %s", msg);
  return -1;
}

static int make_worlds(sim_pool *p, char *err, size_t err_sz) {
  p->worlds = calloc((size_t)p->nworld, sizeof *p->worlds);
  if (!p->worlds) {
    return fail(err, err_sz, "out of memory");
  }
  for (int w = 0; w < p->nworld; w++) {
    if (!(p->worlds[w] = sim_data_new(p->m))) {
      return fail(err, err_sz, "out of memory");
    }
  }
  return 0;
}

static int start_threads(sim_pool *p, char *err, size_t err_sz) {
  if (pthread_mutex_init(&p->lock, NULL) != 0 || pthread_cond_init(&p->wake, NULL) != 0 ||
      pthread_cond_init(&p->done, NULL) != 0) {
    return fail(err, err_sz, "cannot create the pool's lock");
  }
  p->threads = calloc((size_t)p->nthread, sizeof *p->threads);
  if (!p->threads) {
    return fail(err, err_sz, "out of memory");
  }
  for (int t = 0; t < p->nthread - 1; t++) {
    if (pthread_create(&p->threads[t], NULL, worker, p) != 0) {
      return fail(err, err_sz, "cannot start a worker thread");
    }
    p->started++;
  }
  return 0;
}

sim_pool *sim_pool_new(const sim_model *m, int nworld, int nthread, char *err, size_t err_sz) {
  if (nworld < 1 || nthread < 1 || nthread > SIM_POOL_MAX_THREADS) {
    snprintf(err, err_sz, "sim_pool: need at least one world and 1 to %d threads (got %d, %d)",
             SIM_POOL_MAX_THREADS, nworld, nthread);
    return NULL;
  }
  sim_pool *p = calloc(1, sizeof *p);
  if (!p) {
    fail(err, err_sz, "out of memory");
    return NULL;
  }
  p->m = m;
  p->nworld = nworld;
  p->nthread = nthread;
  atomic_init(&p->next, 0);
  atomic_init(&p->generation, 0);
  atomic_init(&p->busy, 0);
  atomic_init(&p->quit, 0);
  if (make_worlds(p, err, err_sz) != 0 || start_threads(p, err, err_sz) != 0) {
    sim_pool_free(&p);
    return NULL;
  }
  return p;
}

void sim_pool_free(sim_pool **pp) {
  sim_pool *p = pp ? *pp : NULL;
  if (!p) {
    return;
  }
  if (p->threads) {
    pthread_mutex_lock(&p->lock);
    atomic_store(&p->quit, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int t = 0; t < p->started; t++) {
      pthread_join(p->threads[t], NULL);
    }
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p->threads);
  }
  for (int w = 0; p->worlds && w < p->nworld; w++) {
    sim_data_free(p->worlds[w]);
  }
  free(p->worlds);
  free(p);
  *pp = NULL;
}

int sim_pool_size(const sim_pool *p) { return p->nworld; }

sim_data *sim_pool_data(sim_pool *p, int w) { return w >= 0 && w < p->nworld ? p->worlds[w] : NULL; }

void sim_pool_set_ctrl(sim_pool *p, const double *ctrl) {
  const int nu = p->m->nu;
  for (int w = 0; w < p->nworld && nu > 0; w++) {
    memcpy(p->worlds[w]->ctrl, ctrl + (size_t)w * (size_t)nu, (size_t)nu * sizeof *ctrl);
  }
}

/* every world once through run_batch, on the workers and the calling thread */
static void run_all(sim_pool *p) {
  atomic_store(&p->next, 0);
  int workers = p->started < p->nworld - 1 ? p->started : p->nworld - 1;
  if (workers > 0) {
    /* every worker wakes; idle ones find no world and report at once */
    atomic_store(&p->busy, p->started);
    pthread_mutex_lock(&p->lock);
    atomic_fetch_add(&p->generation, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
  }
  run_batch(p);
  if (workers > 0) {
    for (int i = 0; i < SPIN && atomic_load(&p->busy) > 0; i++) {
      relax();
    }
    pthread_mutex_lock(&p->lock);
    while (atomic_load(&p->busy) > 0) {
      pthread_cond_wait(&p->done, &p->lock);
    }
    pthread_mutex_unlock(&p->lock);
  }
}

void sim_pool_step(sim_pool *p, int nstep) {
  if (nstep <= 0) {
    return;
  }
  p->nstep = nstep;
  p->fn = NULL;
  run_all(p);
}

void sim_pool_run(sim_pool *p, sim_pool_fn fn, void *ctx) {
  p->fn = fn;
  p->fn_ctx = ctx;
  run_all(p);
  p->fn = NULL;
}

int sim_observation_size(const sim_model *m, int qpos_skip) {
  int skip = qpos_skip < 0 ? 0 : qpos_skip > m->nq ? m->nq : qpos_skip;
  return m->nq - skip + m->nv;
}

void sim_observe(const sim_model *m, const sim_data *d, int qpos_skip, double *out) {
  int skip = qpos_skip < 0 ? 0 : qpos_skip > m->nq ? m->nq : qpos_skip;
  memcpy(out, d->qpos + skip, (size_t)(m->nq - skip) * sizeof *out);
  memcpy(out + (m->nq - skip), d->qvel, (size_t)m->nv * sizeof *out);
}

void sim_pool_observe(const sim_pool *p, int qpos_skip, double *out) {
  const int size = sim_observation_size(p->m, qpos_skip);
  for (int w = 0; w < p->nworld; w++) {
    sim_observe(p->m, p->worlds[w], qpos_skip, out + (size_t)w * (size_t)size);
  }
}

void sim_pool_reset(sim_pool *p, int w, const sim_snapshot *s) {
  if (w >= 0 && w < p->nworld) {
    sim_snapshot_restore(p->m, p->worlds[w], s);
  }
}
