/* hil/clock.h: monotonic wall time in seconds (CLOCK_MONOTONIC), the clock every pacing and
 * timing figure of hil/ reads (hil/runtime/runtime.h names the clocks). */
#ifndef ACHILLES_HIL_CLOCK_H
#define ACHILLES_HIL_CLOCK_H

/* CLOCK_MONOTONIC now, s */
double hil_monotonic_s(void);

#endif
