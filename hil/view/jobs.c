/* hil/view/jobs.c: the jobs that travel between the view's two threads (a browser's request to
 * the loop, its reply back) and the bounded single-producer single-consumer queues that carry
 * them (view_internal.h). Both the loop side (view.c) and the server (requests.c) use these;
 * neither calls the other through here. */
#include "hil/view/view_internal.h"

#include <stdlib.h>

int view__queue_push(view_queue *q, view_job *j) {
  const unsigned head = atomic_load_explicit(&q->head, memory_order_relaxed);
  const unsigned tail = atomic_load_explicit(&q->tail, memory_order_acquire);
  if (head - tail >= VIEW_QUEUE) {
    return -1;
  }
  q->slot[head % VIEW_QUEUE] = j;
  atomic_store_explicit(&q->head, head + 1, memory_order_release);
  return 0;
}

view_job *view__queue_peek(view_queue *q) {
  const unsigned tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
  const unsigned head = atomic_load_explicit(&q->head, memory_order_acquire);
  return head == tail ? NULL : q->slot[tail % VIEW_QUEUE];
}

view_job *view__queue_pop(view_queue *q) {
  view_job *j = view__queue_peek(q);
  if (j) {
    const unsigned tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
    atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
  }
  return j;
}

void view__job_free(view_job *j) {
  if (j) {
    free(j->text);
    free(j->reply);
    free(j);
  }
}

void view__queue_drain(view_queue *q) {
  view_job *j;
  while ((j = view__queue_pop(q))) {
    view__job_free(j);
  }
}
