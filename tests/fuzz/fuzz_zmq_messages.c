/* tests/fuzz/fuzz_zmq_messages.c: ZeroMQ command and control messages, decoded and handled as
 * the transport does (hil_msg_submit_commands into the command intake; hil_msg_decode_control
 * then the control handlers with their JSON reply) on a real runtime (the club arm in lockstep),
 * which then ticks; and the sample decoder that clients use. The first byte picks the path.
 *
 * The control replies' file is included to reach their handler (execute); the transport's sockets
 * are bound once, on Unix sockets in /tmp, and never receive anything. */
#include "hil/zmq/zmq_control.c"
#include "hil/zmq/zmq_transport.h"

#include <stdlib.h>

#include "fuzz_support.h"
#include <unistd.h>

static hil_runtime *rt;
static zmq_transport *zt;

/* the three sockets on ipc:// endpoints of this process */
static hil_transport *zmq_ipc(char *err, size_t err_sz) {
  hil_zmq_options zo;
  hil_zmq_options_default(&zo);
  snprintf(zo.pub, sizeof zo.pub, "ipc:///tmp/achilles-fuzz-%d.pub", (int)getpid());
  snprintf(zo.cmd, sizeof zo.cmd, "ipc:///tmp/achilles-fuzz-%d.cmd", (int)getpid());
  snprintf(zo.ctl, sizeof zo.ctl, "ipc:///tmp/achilles-fuzz-%d.ctl", (int)getpid());
  return hil_zmq_transport_new(&zo, err, err_sz);
}

FUZZ_INITIALIZE_TRANSPORT(rt, zt, zmq_ipc, "fuzz_zmq_messages")

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) {
    return 0;
  }
  const char *json = (const char *)data + 1;
  const size_t len = size - 1;
  char err[512];
  switch (data[0] % 3) {
  case 0: {
    hil_msg_cmd_report rep;
    hil_msg_submit_commands(hil_runtime_commands(rt), json, len, hil_runtime_loop_time(rt), &rep,
                            err, sizeof err);
    break;
  }
  case 1: {
    hil_ctl_request r;
    hil_jw w;
    hil_jw_init(&w, zt->reply, REPLY_MAX);
    if (hil_msg_decode_control(&r, json, len, err, sizeof err) == HIL_OK &&
        !execute(zt, rt, &r, &w, err, sizeof err)) {
      hil_jw_finish(&w);
    } else {
      hil_msg_encode_error(zt->reply, REPLY_MAX, err);
    }
    if (hil_runtime_paused(rt)) {
      hil_runtime_resume(rt); /* keep ticking for the next inputs */
    }
    break;
  }
  default: {
    hil_msg_sample smp;
    hil_msg_decode_sample(&smp, json, len, err, sizeof err);
    break;
  }
  }
  hil_runtime_tick(rt);
  return 0;
}
