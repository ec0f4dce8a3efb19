/* tools/bench/bench_grisu2.h: the removed Grisu2 number formatter, a baseline for bench_messages
 * only. */
#ifndef ACHILLES_TOOLS_BENCH_GRISU2_H
#define ACHILLES_TOOLS_BENCH_GRISU2_H

#define BENCH_GRISU2_MAX 32

/* The text hil/json_messages.c wrote before issue 17 (same layout; digits at times longer than
 * the shortest). Returns the length. */
int bench_grisu2_format(char out[BENCH_GRISU2_MAX], double v);

#endif
