/* hil/number_format.h: doubles as JSON number text, for the ZeroMQ messages (hil/json_messages.c)
 * and the recording log (hil/log.c); docs/messages.md, section 2, is the contract.
 *
 * The digits are the shortest that read back to exactly the same double, and of those the
 * closest to it (Dragonbox, from Debian's libdragonbox-dev: number_format.cc is the one C++ unit
 * of the runtime, behind this C interface). They are laid out as C's "%.{p}g" would, with
 * p = max(15, digits): fixed notation for 1e-4 <= |v| < 10^p, so integers below 1e15 have no
 * fraction and no exponent; otherwise d.ddde±XX with at least two exponent digits. -0 is "-0".
 * JSON has no NaN or infinity: a non-finite value is written as null.
 *
 * No allocation, no locale, no global state: safe from any thread and at the sensor rate.
 */
#ifndef ACHILLES_HIL_NUMBER_FORMAT_H
#define ACHILLES_HIL_NUMBER_FORMAT_H

#ifdef __cplusplus
extern "C" {
#endif

/* The longest text has 24 characters ("-2.2250738585072014e-308"); 32 leaves room for the NUL. */
#define HIL_NUM_MAX 32

/* Writes v (NUL-terminated) into out and returns the length. */
int hil_num_format(char out[HIL_NUM_MAX], double v);

#ifdef __cplusplus
}
#endif

#endif
