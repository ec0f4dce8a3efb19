/* hil/serial/line_fault.c: a cut or noisy byte line (line_fault.h). */
#include "hil/serial/line_fault.h"

#include <string.h>

static double rate_of(hil_line_fault *f) {
  uint64_t bits = atomic_load(&f->rate_bits);
  double rate;
  memcpy(&rate, &bits, sizeof rate);
  return rate;
}

/* splitmix64: the line's own stream, never shared with the sensors' */
static uint64_t next(hil_line_fault *f) {
  uint64_t z = (f->rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void hil_line_fault_init(hil_line_fault *f) {
  memset(f, 0, sizeof *f);
}

void hil_line_fault_set(hil_line_fault *f, const hil_link_fault *to) {
  const double rate = to->corrupt_rate > 0 ? (to->corrupt_rate < 1 ? to->corrupt_rate : 1) : 0;
  uint64_t bits;
  memcpy(&bits, &rate, sizeof bits);
  atomic_store(&f->rate_bits, bits);
  atomic_store(&f->seed, to->seed);
  atomic_store(&f->cut, to->cut != 0);
  atomic_fetch_add(&f->generation, 1);
}

void hil_line_fault_counters(hil_line_fault *f, hil_link_counters *out) {
  out->corrupted = atomic_load(&f->corrupted);
  out->lost = atomic_load(&f->lost);
}

int hil_line_fault_swallow(hil_line_fault *f, size_t n) {
  if (!atomic_load(&f->cut)) {
    return 0;
  }
  atomic_fetch_add(&f->lost, (unsigned long)n);
  return 1;
}

int hil_line_fault_corrupting(hil_line_fault *f) {
  return rate_of(f) > 0;
}

void hil_line_fault_corrupt(hil_line_fault *f, uint8_t *buf, size_t n) {
  const double rate = rate_of(f);
  if (!(rate > 0)) {
    return;
  }
  const int generation = atomic_load(&f->generation);
  if (generation != f->seen_generation) { /* a new setting: its stream from its seed */
    f->seen_generation = generation;
    f->rng = atomic_load(&f->seed);
  }
  for (size_t i = 0; i < n; i++) {
    const uint64_t u = next(f);
    if ((double)(u >> 11) * 0x1.0p-53 < rate) {
      buf[i] ^= (uint8_t)(1u << (u & 7u));
      atomic_fetch_add(&f->corrupted, 1);
    }
  }
}
