/* hil/client/achilles_client_internal.h: what the client library's encoder and decoder share.
 * Internal: firmware includes achilles_client.h only, and compiles achilles_client.c,
 * achilles_encode.c and achilles_decode.c. */
#ifndef ACHILLES_CLIENT_INTERNAL_H
#define ACHILLES_CLIENT_INTERNAL_H

#include <stddef.h>

#include "achilles_client.h"

/* ---- payload sizes ------------------------------------------------------------------------ */

#define HELLO_SIZE (4 + 2 + ACH_NAME_LEN)
#define HELLO_ACK_SIZE 20      /* 17 frozen bytes of 1.0, then the receive limits of 1.1 */
#define HEARTBEAT_SIZE 16
#define STATUS_SIZE (8 + 4 + 8 * 4)
#define ERROR_FIXED_SIZE 5
#define STEP_REQUEST_SIZE 4
#define DESCRIBE_SIZE 1           /* 1.1; 1.2 appends `what` when it is not sensors */
#define SENSOR_INFO_FIXED_SIZE 18 /* id, kind, type, joint, cpr u32, rate f32, two lengths, and
                                     (1.2) latency u32 after the name */
#define JOINT_INFO_FIXED_SIZE 13  /* id, mode, type, two f32, two lengths */
#define REQUEST_SIZE 1

/* length of a string in a char array of cap bytes, cap if not terminated */
static inline size_t bounded_len(const char *s, size_t cap) {
  size_t n = 0;
  while (n < cap && s[n] != '\0') {
    n++;
  }
  return n;
}

/* count <= max, as a function: with max 255 a direct u8 comparison is always true and warns */
static inline int count_fits(unsigned count, unsigned max) {
  return count <= max;
}

#endif
