/* tests/fuzz/fuzz_config.c: a whole robot file as `achilles run` reads it — runtime section,
 * transports, model, actuators, sensors — then a few ticks of the runtime on what was accepted.
 * Bad input must give a message, never a crash, a leak or undefined behaviour. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hil/error.h"
#include "hil/runtime/runtime.h"
#include "hil/serial/serial_transport.h"
#include "hil/zmq/zmq_transport.h"
#include "sim/json_read.h"

#define NAME "fuzz-config.json" /* served from memory: no file is read */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[1024];
  if (sim_json_pin_text(NAME, (const char *)data, size) != 0) {
    return 0;
  }
  hil_options o;
  hil_options_default(&o);
  hil_zmq_options zo;
  hil_serial_options so;
  int present = 0;
  hil_serial_options_default(&so);
  if (hil_options_parse(&o, NAME, err, sizeof err) == HIL_OK &&
      hil_zmq_options_parse(&zo, NAME, err, sizeof err) == 0 &&
      hil_serial_options_parse(&so, &present, NAME, err, sizeof err) == 0) {
    o.mode = HIL_MODE_FAST;
    hil_runtime *rt = hil_runtime_new(NAME, &o, err, sizeof err);
    for (int i = 0; rt && i < 5; i++) {
      hil_runtime_tick(rt);
    }
    hil_runtime_destroy(&rt);
  }
  sim_json_unpin();
  return 0;
}
