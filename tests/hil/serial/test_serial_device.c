/* tests/hil/serial/test_serial_device.c: the transport's device mode — the libserialport path —
 * over a real pseudo-terminal.
 *
 * Debian's libserialport 0.1.1 cannot open a pty by itself (no /sys/class/tty entry, modem-line
 * ioctls refused); CTest runs this suite with LD_PRELOAD=libachilles_sp_shim.so (sp_shim.c),
 * which answers exactly those calls for ptys. Everything else — sp_get_port_by_name, sp_open,
 * the sp_set_* line settings, sp_nonblocking_read/write — is libserialport's own code on a real
 * tty. The test holds the pty master and plays the board; the transport opens the slave through
 * a symlink, as it would /dev/serial/by-id/... for a USB board.
 */
#define _GNU_SOURCE /* posix_openpt, ptsname_r, cfmakeraw */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hil/error.h"
#include "hil/runtime/runtime.h"
#include "hil/serial/serial_transport.h"
#include "hil/transport.h"
#include "support/pty_board.h"
#include "support/runtime.h"
#include "support/skip.h"
#include "support/tmp.h"
#include "support/wait.h"

#define ARM ACHILLES_SOURCE_DIR "/tests/hil/serial/club_arm_enc.json"
#define NJ 4

static hil_runtime *new_runtime(void) {
  return ts_runtime(ARM, HIL_MODE_FAST, 0);
}

static float duty(int k, int j) { return (float)(0.3 * cos(0.02 * k + 2 * j)); }

/* one tick of commands from the board, and the same into the reference's intake */
static void command_both(hil_runtime *rt, hil_transport *t, board *b, hil_runtime *ref, int k) {
  ach_joint_command c[NJ];
  for (int j = 0; j < NJ; j++) {
    c[j] = (ach_joint_command){.joint_id = (uint8_t)j, .mode = ACH_MODE_DUTY, .value = duty(k, j)};
    hil_commands_submit(hil_runtime_commands(ref), j, (double)duty(k, j),
                        hil_runtime_loop_time(ref));
  }
  board_command(b, NJ, c);
  tick_after(rt, t, b);
  hil_runtime_tick(ref);
}

static int tick_until(hil_runtime *rt, hil_runtime *ref, hil_transport *t,
                      int (*cond)(const hil_transport *)) {
  for (int i = 0; i < 3000 && !cond(t); i++) {
    hil_runtime_tick(rt);
    hil_runtime_tick(ref);
    ts_sleep(1e-3);
  }
  return cond(t);
}

static int is_down(const hil_transport *t) { return ts_serial_counters(t).link_down >= 1; }

static int is_back(const hil_transport *t) { return ts_serial_counters(t).link_up >= 1; }

static void hello(hil_runtime *rt, hil_transport *t, board *b, hil_runtime *ref) {
  int acks = b->hello_acks;
  board_hello(b, "usb-board");
  tick_after(rt, t, b);
  hil_runtime_tick(ref);
  assert_true(board_wait_count(b, &b->hello_acks, acks + 1));
  assert_int_equal(b->ack.result, ACH_HELLO_OK);
  assert_int_equal(b->ack.n_joints, NJ);
}

static void test_device_mode_over_libserialport_survives_unplug(void **state) {
  (void)state;
  const char *preload = getenv("LD_PRELOAD");
  if (!preload || !strstr(preload, "sp_shim")) {
    TS_SKIP("needs LD_PRELOAD=libachilles_sp_shim.so (ctest sets it)");
  }
  char dir[64], link[128];
  ts_tmpdir(dir, sizeof dir, "serial-device");
  snprintf(link, sizeof link, "%s/usb-board", dir);
  ts_pty p;
  ts_pty_open(&p);
  ts_pty_link(link, p.slave);

  hil_runtime *rt = new_runtime(), *ref = new_runtime();
  hil_serial_options so;
  hil_serial_options_default(&so);
  so.use_pty = 0;
  snprintf(so.port, sizeof so.port, "%s", link);
  so.baud = 460800;
  so.reopen_interval_s = 0.005;
  so.quiet = 1;
  char err[512] = "";
  hil_transport *t = hil_serial_transport_new(&so, err, sizeof err);
  if (!t) {
    fail_msg("%s", err);
  }
  assert_int_equal(hil_runtime_add_transport(rt, t), HIL_OK);
  assert_string_equal(hil_serial_transport_path(t), link);
  /* libserialport applied the line settings to the tty: 460800 baud, 8N1, no flow control */
  struct termios tio;
  assert_int_equal(tcgetattr(p.master, &tio), 0);
  assert_true(cfgetospeed(&tio) == B460800);
  assert_int_equal(tio.c_cflag & CSIZE, CS8);
  assert_int_equal(tio.c_cflag & (PARENB | CSTOPB | CRTSCTS), 0);
  assert_int_equal(tio.c_iflag & (IXON | IXOFF), 0);

  board b;
  board_attach(&b, p.master);
  hello(rt, t, &b, ref);
  for (int k = 0; k < 100; k++) {
    command_both(rt, t, &b, ref, k);
  }
  const sim_data *d = hil_runtime_data(rt);
  assert_memory_equal(d->qpos, hil_runtime_data(ref)->qpos, sizeof(double) * NJ);
  assert_true(fabs(d->qpos[0]) > 1e-3);
  assert_true(board_wait_sample(&b, 0, (uint64_t)llround(d->time * 1e9)));
  assert_int_equal(hil_runtime_commands(rt)->counters.accepted, 100 * NJ);

  /* unplug: the device and its by-id name vanish (closing the master removes /dev/pts/N; the
   * link goes first, as udev removes /dev/serial/by-id/..., so that a pty another program opens
   * meanwhile under the same number is not taken for the board) */
  unlink(link);
  close(p.master);
  assert_true(tick_until(rt, ref, t, is_down));
  assert_int_equal(transport_fd(t), -1);
  for (int k = 0; k < 20; k++) { /* retries fail quietly while it is away */
    hil_runtime_tick(rt);
    hil_runtime_tick(ref);
    ts_sleep(1e-3);
  }
  assert_int_equal(ts_serial_counters(t).link_up, 0);

  /* plug in again: a new tty behind the same name */
  ts_pty_open(&p);
  ts_pty_link(link, p.slave);
  assert_true(tick_until(rt, ref, t, is_back));
  board_attach(&b, p.master);
  hello(rt, t, &b, ref);
  for (int k = 100; k < 150; k++) {
    command_both(rt, t, &b, ref, k);
  }
  assert_memory_equal(d->qpos, hil_runtime_data(ref)->qpos, sizeof(double) * NJ);
  assert_true(board_wait_sample(&b, 0, (uint64_t)llround(d->time * 1e9)));
  assert_int_equal(hil_runtime_commands(rt)->counters.accepted, 150 * NJ);
  assert_int_equal(ts_serial_counters(t).link_down, 1);
  assert_int_equal(ts_serial_counters(t).link_up, 1);

  hil_runtime_destroy(&rt);
  hil_runtime_destroy(&ref);
  close(p.master);
  unlink(link);
  rmdir(dir);
}

/* a device that is not there at start is an error that names it, not a silent retry */
static void test_missing_device_is_an_error(void **state) {
  (void)state;
  hil_serial_options so;
  hil_serial_options_default(&so);
  so.use_pty = 0;
  snprintf(so.port, sizeof so.port, "/dev/achilles-no-such-board");
  char err[512] = "";
  assert_null(hil_serial_transport_new(&so, err, sizeof err));
  assert_non_null(strstr(err, "/dev/achilles-no-such-board"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_device_mode_over_libserialport_survives_unplug),
      cmocka_unit_test(test_missing_device_is_an_error),
  };
  return ts_run(tests);
}
