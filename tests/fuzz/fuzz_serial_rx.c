/* tests/fuzz/fuzz_serial_rx.c: bytes from a board, as the simulator's serial transport receives
 * them — COBS framing, CRC, message parsing, then HELLO, commands, heartbeats, step requests
 * and errors acting on a real runtime (the club arm in lockstep), which then ticks.
 *
 * The transport's file is included to reach its receive path without a board on the other end
 * of the pseudo-terminal (the style of nanopb's tests). */
#include "hil/serial/serial_transport.c"

#include <stdlib.h>

#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static hil_runtime *rt;
static serial_transport *st;

/* at exit: the transports close (socket files and pty links go away) */
static void fuzz_teardown(void) {
  hil_runtime_destroy(&rt);
}

static void fuzz_setup(void) {
  char err[1024];
  rt = fuzz_runtime(err, sizeof err);
  hil_serial_options so;
  hil_serial_options_default(&so);
  so.use_pty = 1;
  hil_transport *t = rt ? hil_serial_transport_new(&so, err, sizeof err) : NULL;
  fuzz_add_transport(rt, t, "fuzz_serial_rx", err);
  st = (serial_transport *)t;
  atexit(fuzz_teardown);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!rt) {
    fuzz_setup();
  }
  st->rt = rt;
  ensure_table(st, rt);
  ach_decoder_push(&st->dec, data, size, on_message, st);
  count_rejected_frames(st);
  st->tx_len = 0; /* no board reads the replies: drop them rather than fill the pty */
  hil_runtime_tick(rt);
  return 0;
}
