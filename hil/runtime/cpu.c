/* hil/runtime/cpu.c: the CPU keep-awake thread and thread placement (hil/cpu.h). */
#define _GNU_SOURCE /* pthread_attr_setaffinity_np, sched_getaffinity, CPU_SET */
#include "hil/runtime/cpu.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

struct hil_cpu_awake {
  pthread_t thread;
  atomic_int stop;
};

static void *spin(void *arg) {
  hil_cpu_awake *a = arg;
  struct sched_param idle = {.sched_priority = 0};
  pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle); /* attributes cannot ask for it */
  while (!atomic_load_explicit(&a->stop, memory_order_relaxed)) {
  }
  return NULL;
}

hil_cpu_awake *hil_cpu_awake_start(int cpu, char *err, size_t err_sz) {
  if (!hil_cpu_allowed(cpu)) {
    snprintf(err, err_sz, "keep-awake: CPU %d is not available to this process", cpu);
    return NULL;
  }
  hil_cpu_awake *a = calloc(1, sizeof *a);
  pthread_attr_t attr;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  struct sched_param normal = {.sched_priority = 0};
  /* born at normal priority on its CPU (never a real-time spinner, even briefly), then idle */
  int rc = a ? pthread_attr_init(&attr) : -1;
  if (rc == 0) {
    rc = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
    rc = rc ? rc : pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
    rc = rc ? rc : pthread_attr_setschedparam(&attr, &normal);
    rc = rc ? rc : pthread_attr_setaffinity_np(&attr, sizeof one, &one);
    rc = rc ? rc : pthread_create(&a->thread, &attr, spin, a);
    pthread_attr_destroy(&attr);
  }
  if (rc != 0) {
    snprintf(err, err_sz, "keep-awake: cannot start a thread on CPU %d: %s", cpu,
             a ? strerror(rc) : "out of memory");
    free(a);
    return NULL;
  }
  return a;
}

void hil_cpu_awake_stop(hil_cpu_awake **a) {
  if (!a || !*a) {
    return;
  }
  atomic_store(&(*a)->stop, 1);
  pthread_join((*a)->thread, NULL);
  free(*a);
  *a = NULL;
}

int hil_cpu_allowed(int cpu) {
  cpu_set_t set;
  return cpu >= 0 && cpu < CPU_SETSIZE && sched_getaffinity(0, sizeof set, &set) == 0 &&
         CPU_ISSET(cpu, &set);
}

int hil_cpu_fifo_allowed(int priority) {
  int policy;
  struct sched_param old, fifo = {.sched_priority = priority};
  if (pthread_getschedparam(pthread_self(), &policy, &old) != 0 ||
      pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo) != 0) {
    return 0;
  }
  pthread_setschedparam(pthread_self(), policy, &old);
  return 1;
}

void hil_cpu_place_zmq_io(void *zmq_ctx, int cpu, int priority) {
  if (priority > 0 && hil_cpu_fifo_allowed(priority)) {
    zmq_ctx_set(zmq_ctx, ZMQ_THREAD_SCHED_POLICY, SCHED_FIFO);
    zmq_ctx_set(zmq_ctx, ZMQ_THREAD_PRIORITY, priority);
  }
  if (cpu >= 0 && hil_cpu_allowed(cpu)) {
    zmq_ctx_set(zmq_ctx, ZMQ_THREAD_AFFINITY_CPU_ADD, cpu);
  }
}
