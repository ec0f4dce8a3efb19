/* hil/transport.h: the interface every transport (ZeroMQ, serial) implements.
 *
 * A transport is a struct whose first member is `hil_transport`; the runtime calls it through
 * the ops table. The runtime never blocks inside a transport: poll() reads whatever input is
 * waiting and returns; publish_*() queue or send without waiting (a slow reader loses old
 * samples, never stalls the loop).
 */
#ifndef ACHILLES_HIL_TRANSPORT_H
#define ACHILLES_HIL_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <zmq.h>

#include "hil/runtime/runtime.h"

/* A fault on a byte line (the serial link, the servo bus), switched by hil/scenario:
 *   cut:          the cable pulled out: what the other side writes is read and thrown away, what
 *                 the simulator writes is taken and lost; neither side is told (a real
 *                 adapter's wire says nothing either);
 *   corrupt_rate: otherwise each byte crossing the line, either way, has one of its eight bits
 *                 flipped with this probability, drawn from a stream seeded with `seed`.
 * All zero: a healthy line. */
typedef struct hil_link_fault {
  int cut;
  double corrupt_rate;
  uint64_t seed;
} hil_link_fault;

/* What a line fault did so far. */
typedef struct hil_link_counters {
  unsigned long corrupted; /* bytes with a flipped bit */
  unsigned long lost;      /* bytes thrown away while cut */
} hil_link_counters;

typedef struct hil_transport_ops {
  const char *name;
  /* Called once by hil_runtime_add_transport(), when the model and sensors are known: the
   * place to allocate what depends on them (nothing is allocated in a tick). May be NULL.
   * Returns HIL_OK or an error code (the runtime then destroys the transport). */
  int (*attach)(hil_transport *t, hil_runtime *rt);
  /* Items (sockets or file descriptors) whose input should wake a waiting loop; writes at most
   * max and returns how many. May be NULL. The realtime loop waits on them between ticks and
   * calls poll() when one is readable, so an item must stop being readable once poll() has read
   * everything (a hung-up descriptor must not be offered). */
  int (*pollitems)(hil_transport *t, zmq_pollitem_t *items, int max);
  /* Reads every pending message: submits commands, answers control requests. Never blocks. */
  void (*poll)(hil_transport *t, hil_runtime *rt);
  /* One sensor sample, just taken. */
  void (*publish_sample)(hil_transport *t, hil_runtime *rt, const sens_sensor *s,
                         const sens_sample *smp);
  /* Every sample of the state at simulation time t (after `steps` physics steps) has been
   * published: sent after the samples of each step, of the state at t = 0 and after a reset.
   * May be NULL. */
  void (*publish_step)(hil_transport *t, hil_runtime *rt, uint64_t steps, double sim_time);
  /* The periodic status (also sent once at exit). */
  void (*publish_status)(hil_transport *t, hil_runtime *rt, const hil_status *st);
  /* A short fragment for the console status line, e.g. "pty /dev/pts/3: 1200 frames". */
  void (*describe)(hil_transport *t, char *out, size_t out_sz);
  void (*destroy)(hil_transport *t);
  /* A byte line's fault (above): sets it when f is not NULL, and fills *out when out is not
   * NULL; may be called from the loop thread while the transport's own thread runs. NULL for
   * transports without a byte line (ZeroMQ, the view). */
  void (*link_fault)(hil_transport *t, const hil_link_fault *f, hil_link_counters *out);
} hil_transport_ops;

struct hil_transport {
  const hil_transport_ops *ops;
};

#endif
