/* hil/serial/line_fault.h: the faults of a byte line (hil_link_fault in hil/transport.h) as the
 * serial port applies them to what it reads and writes. Set from one thread (the loop's), applied
 * on another (the servo bus's): the settings are atomics, the random stream belongs to the side
 * that applies them. Value object, no allocation. */
#ifndef ACHILLES_HIL_SERIAL_LINE_FAULT_H
#define ACHILLES_HIL_SERIAL_LINE_FAULT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "hil/transport.h"

typedef struct hil_line_fault {
  atomic_int cut;
  atomic_uint_fast64_t rate_bits;  /* corrupt_rate as the bits of a double */
  atomic_uint_fast64_t seed;
  atomic_int generation;           /* bumped by each set: the applying side reseeds */
  atomic_ulong corrupted, lost;
  int seen_generation;             /* applying side only */
  uint64_t rng;
} hil_line_fault;

/* All zero: a healthy line. */
void hil_line_fault_init(hil_line_fault *f);
void hil_line_fault_set(hil_line_fault *f, const hil_link_fault *to);
void hil_line_fault_counters(hil_line_fault *f, hil_link_counters *out);

/* 1 while the line is cut: the caller throws n bytes away (counted here). */
int hil_line_fault_swallow(hil_line_fault *f, size_t n);
/* Flips bits in buf[0..n) at the corruption rate (counted). */
void hil_line_fault_corrupt(hil_line_fault *f, uint8_t *buf, size_t n);
/* 1 when corruption is on (writers copy their bytes only then). */
int hil_line_fault_corrupting(hil_line_fault *f);

#endif
