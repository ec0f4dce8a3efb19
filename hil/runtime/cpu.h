/* hil/runtime/cpu.h: where the real-time threads run — one CPU kept from idling, and placing a ZeroMQ
 * context's I/O thread — for sharp timing on virtual machines.
 *
 * On a VM, a message that has to wake a halted virtual CPU waits for the hypervisor, typically
 * 50-150 µs. A thread that spins on the CPU at SCHED_IDLE priority keeps it running: it yields to
 * any other runnable thread at once, so it costs only that CPU's idle time (and host CPU).
 * Put the loop, its ZeroMQ I/O thread and a controller on the same host on that CPU
 * (docs/runtime.md, "Sharp timing"). */
#ifndef ACHILLES_HIL_CPU_H
#define ACHILLES_HIL_CPU_H

#include <stddef.h>

typedef struct hil_cpu_awake hil_cpu_awake;

/* Starts the spinning thread on `cpu`. NULL with a message in err when the CPU is not one this
 * process may use or the system refuses the thread or its policy. */
hil_cpu_awake *hil_cpu_awake_start(int cpu, char *err, size_t err_sz);

/* Stops and joins the thread; accepts NULL and sets *a to NULL. */
void hil_cpu_awake_stop(hil_cpu_awake **a);

/* 1 when this process may run on `cpu` (it is in the affinity mask). */
int hil_cpu_allowed(int cpu);

/* 1 when this thread may switch to SCHED_FIFO at `priority` (it tries and switches back). */
int hil_cpu_fifo_allowed(int priority);

/* Before the first socket of a ZeroMQ context: its I/O thread at SCHED_FIFO `priority` (when > 0)
 * and on `cpu` (when >= 0), each only if the system grants it, because libzmq aborts when its
 * thread is refused a setting. */
void hil_cpu_place_zmq_io(void *zmq_ctx, int cpu, int priority);

#endif
