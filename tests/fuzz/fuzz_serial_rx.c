/* tests/fuzz/fuzz_serial_rx.c: bytes from a board, as the simulator's serial transport receives
 * them — COBS framing, CRC, message parsing, then HELLO, commands, heartbeats, step requests
 * and errors acting on a real runtime (the club arm in lockstep), which then ticks.
 *
 * The transport's file is included to reach its receive path without a board on the other end
 * of the pseudo-terminal (the style of nanopb's tests). */
#include "hil/serial/serial_transport.c"

#include <stdlib.h>

#include "fuzz_support.h"

static hil_runtime *rt;
static serial_transport *st;

/* the simulator's side of a pty, as `achilles run --serial pty` opens it */
static hil_transport *serial_pty(char *err, size_t err_sz) {
  hil_serial_options so;
  hil_serial_options_default(&so);
  so.use_pty = 1;
  return hil_serial_transport_new(&so, err, err_sz);
}

FUZZ_INITIALIZE_TRANSPORT(rt, st, serial_pty, "fuzz_serial_rx")

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  st->rt = rt;
  ensure_table(st, rt);
  ach_decoder_push(&st->dec, data, size, on_message, st);
  count_rejected_frames(st);
  st->tx_len = 0; /* no board reads the replies: drop them rather than fill the pty */
  hil_runtime_tick(rt);
  return 0;
}
