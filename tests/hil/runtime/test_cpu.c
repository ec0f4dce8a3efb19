/* tests/hil/test_cpu.c: hil/cpu.h — the keep-awake thread (on its CPU, at idle priority, gone
 * after stop), refusals as messages, and a ZeroMQ I/O thread placed only where the system allows
 * (libzmq aborts the process when its thread is refused a setting). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_ISSET */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "hil/runtime/cpu.h"
#include "support/skip.h"

/* Counts this process's threads whose name starts with `prefix` and whose policy is `policy`
 * (-1: any); the CPU each last ran on goes to *cpu. */
static int count_threads(const char *prefix, int policy, int *cpu) {
  DIR *d = opendir("/proc/self/task");
  assert_non_null(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') {
      continue;
    }
    char path[128], name[64] = "", stat[1024] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f || !fgets(name, sizeof name, f) || strncmp(name, prefix, strlen(prefix)) != 0) {
      if (f) {
        fclose(f);
      }
      continue;
    }
    fclose(f);
    pid_t tid = (pid_t)atoi(e->d_name);
    if (policy >= 0 && sched_getscheduler(tid) != policy) {
      continue;
    }
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    f = fopen(path, "r");
    if (f && fgets(stat, sizeof stat, f) && cpu) {
      /* field 39 (processor) counting from the one after the ")" that ends the name */
      char *p = strrchr(stat, ')');
      for (int field = 2; p && field < 39; field++) {
        p = strchr(p + 1, ' ');
      }
      *cpu = p ? atoi(p + 1) : -1;
    }
    if (f) {
      fclose(f);
    }
    n++;
  }
  closedir(d);
  return n;
}

static int first_allowed_cpu(void) {
  cpu_set_t set;
  assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (CPU_ISSET(c, &set)) {
      return c;
    }
  }
  return -1;
}

static void test_allowed(void **state) {
  (void)state;
  int cpu = first_allowed_cpu();
  assert_true(hil_cpu_allowed(cpu));
  assert_false(hil_cpu_allowed(-1));
  assert_false(hil_cpu_allowed(CPU_SETSIZE));
  assert_false(hil_cpu_allowed(1000)); /* no test machine has 1001 CPUs */
}

/* Waits (up to 5 s: a loaded machine may be slow to run a new thread) until `want` threads
 * match, and returns how many matched last. */
static int await_threads(const char *prefix, int policy, int want, int *cpu) {
  int n = count_threads(prefix, policy, cpu);
  for (int ms = 0; n != want && ms < 5000; ms++) {
    usleep(1000);
    n = count_threads(prefix, policy, cpu);
  }
  return n;
}

/* The spinner runs SCHED_IDLE on the CPU asked for, and stop joins it. */
static void test_awake_spins_idle_on_its_cpu(void **state) {
  (void)state;
  int cpu = first_allowed_cpu(), where = -1;
  char err[128];
  int before = count_threads("", SCHED_IDLE, NULL);
  hil_cpu_awake *a = hil_cpu_awake_start(cpu, err, sizeof err);
  if (!a) {
    fail_msg("%s", err);
  }
  assert_int_equal(await_threads("", SCHED_IDLE, before + 1, &where), before + 1);
  assert_int_equal(where, cpu);
  hil_cpu_awake_stop(&a);
  assert_null(a);
  assert_int_equal(count_threads("", SCHED_IDLE, NULL), before);
  hil_cpu_awake_stop(&a); /* NULL is fine */
  hil_cpu_awake_stop(NULL);
}

static void test_awake_refuses_unusable_cpu(void **state) {
  (void)state;
  char err[128] = "";
  assert_null(hil_cpu_awake_start(1000, err, sizeof err));
  assert_non_null(strstr(err, "CPU 1000 is not available"));
  assert_null(hil_cpu_awake_start(-3, err, sizeof err));
}

/* A context told to use an unusable CPU still makes its I/O thread (not on that CPU: the
 * process lives on), and a granted priority is the I/O thread's policy. */
static void test_zmq_io_thread_placement(void **state) {
  (void)state;
  void *ctx = zmq_ctx_new();
  hil_cpu_place_zmq_io(ctx, 1000, 0);
  void *s = zmq_socket(ctx, ZMQ_PUB); /* the I/O thread starts with the first socket */
  assert_non_null(s);
  zmq_close(s);
  zmq_ctx_term(ctx);

  if (!hil_cpu_fifo_allowed(10)) {
    TS_SKIP("SCHED_FIFO not granted (not privileged here): the I/O thread's policy is not checked");
  }
  int cpu = first_allowed_cpu(), where = -1;
  ctx = zmq_ctx_new();
  hil_cpu_place_zmq_io(ctx, cpu, 10);
  s = zmq_socket(ctx, ZMQ_PUB);
  assert_non_null(s);
  assert_int_equal(await_threads("ZMQbg/IO", SCHED_FIFO, 1, &where), 1);
  assert_int_equal(where, cpu);
  zmq_close(s);
  zmq_ctx_term(ctx);
  assert_int_equal(sched_getscheduler(0), SCHED_OTHER); /* the probe switched this thread back */
}

TS_MAIN(test_allowed, test_awake_spins_idle_on_its_cpu, test_awake_refuses_unusable_cpu,
        test_zmq_io_thread_placement)
