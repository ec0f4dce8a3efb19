/* hil/servo/pty_latency.h: how late a pty delivers bytes to a reader that waits for them.
 *
 * A pty has no wire: bytes written on one side reach a reader blocked in poll() on the other
 * after the kernel's tty worker has moved them and the reader's thread has woken, tens of
 * microseconds on this kind of machine. The servo bus pays that twice per request (the request
 * reaches the bus late, the reply reaches the controller late), which at 1 Mbaud is 10 % of a
 * PING's round trip. The bus measures it once at start on a private pty pair and takes it out
 * of both directions, so the controller sees the wire's timing (docs/servo-bus.md). */
#ifndef ACHILLES_HIL_SERVO_PTY_LATENCY_H
#define ACHILLES_HIL_SERVO_PTY_LATENCY_H

/* The most a measurement is trusted with, s: a loaded machine's stalls are not the pty's. */
#define PTY_LATENCY_MAX_S 100e-6

/* Median one-way latency, s, over `samples` (at most 64) one-byte transfers from a writer
 * thread to a reader thread blocked in poll() on a fresh pty pair, clamped to
 * [0, PTY_LATENCY_MAX_S]. Takes a few milliseconds. Returns 0 when no pty can be made. */
double pty_latency_measure(int samples);

/* The figure pty_latency_measure makes of n samples (s; sorted in place): their median, clamped
 * to [0, PTY_LATENCY_MAX_S]; 0 for no samples. */
double pty_latency_summary(double *samples, int n);

#endif
