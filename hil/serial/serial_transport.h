/* hil/serial/serial_transport.h: the serial transport — a board (or host-built firmware) speaking the
 * binary protocol of hil/client/achilles_client.h over a serial line.
 *
 * Two ways to attach, one framing and decoding path:
 *   - pty (default): the transport creates a pseudo-terminal pair with POSIX calls, prints the
 *     slave path the firmware should open, and optionally points a stable symlink at it;
 *   - device: a named serial device (a board on USB) opened with libserialport at the configured
 *     baud rate, data bits, parity, stop bits and flow control.
 * In both, the link going away (the firmware closing the pty, a USB unplug) is survived: the
 * transport says so once on stderr, retries every reopen_interval_s and says when it is back.
 *
 * Mapping between the runtime and the messages (joint ids, sensor ids, modes, when frames are
 * sent): docs/serial-transport.md. Configuration: the "transports": {"serial": {...}} section
 * of the robot file, same document.
 *
 * Ownership: hil_serial_transport_new() returns a transport to hand to
 * hil_runtime_add_transport(); from then on the runtime owns and destroys it.
 */
#ifndef ACHILLES_HIL_SERIAL_TRANSPORT_H
#define ACHILLES_HIL_SERIAL_TRANSPORT_H

#include <stddef.h>

#include "hil/runtime/runtime.h"

#define HIL_SERIAL_PATH_MAX 256

typedef enum hil_serial_flow {
  HIL_SERIAL_FLOW_NONE = 0,
  HIL_SERIAL_FLOW_XONXOFF = 1,
  HIL_SERIAL_FLOW_RTSCTS = 2,
} hil_serial_flow;

typedef struct hil_serial_options {
  int use_pty;                    /* 1: create a pseudo-terminal pair; 0: open `port` */
  char port[HIL_SERIAL_PATH_MAX]; /* device mode: the device path (symlinks are followed) */
  char link[HIL_SERIAL_PATH_MAX]; /* pty mode: symlink to the slave, "" for none */
  int baud;                       /* device mode: bits per second */
  int data_bits;                  /* 5..8 */
  char parity;                    /* 'N', 'O' or 'E' */
  int stop_bits;                  /* 1 or 2 */
  hil_serial_flow flow;
  double reopen_interval_s; /* how often a lost link is retried */
  int quiet;                /* no sensor id table on stderr (link events are still said) */
  char label[24];           /* the link's name in its messages: "serial" (default), "servo bus" */
} hil_serial_options;

/* Defaults: pty, no link, 1 000 000 baud 8N1, no flow control, retry every 0.05 s. */
void hil_serial_options_default(hil_serial_options *o);

/* Reads the optional "transports": {"serial": {...}} section of a robot file into o; *present
 * is set to 1 when the section exists. Unknown keys are errors naming their JSON path; keys
 * other than "serial" at the "transports" level belong to other transports and are ignored.
 * Returns HIL_OK or HIL_ECONFIG with a message in err. */
int hil_serial_options_parse(hil_serial_options *o, int *present, const char *config_path,
                             char *err, size_t err_sz);

/* Creates the pty pair (printing the path to open) or opens the device. NULL with a message in
 * err on failure (a device that cannot be opened at start is an error, not a retry). */
hil_transport *hil_serial_transport_new(const hil_serial_options *o, char *err, size_t err_sz);

/* The path the firmware opens (pty slave) or the configured device; NULL when t is not a
 * serial transport. */
const char *hil_serial_transport_path(const hil_transport *t);

/* Counters of one serial link, for tests and tools (cumulative since creation). */
typedef struct hil_serial_counters {
  unsigned long frames_in;  /* frames decoded from the board */
  unsigned long frames_out; /* frames queued to the board */
  unsigned long rx_bad_crc;
  unsigned long rx_framing;    /* COBS errors, truncated, too long, bad length */
  unsigned long rx_rejected;   /* bad version, unknown type, bad payload */
  unsigned long rx_seq_gaps;   /* forward jumps in the board's sequence numbers */
  unsigned long rx_seq_lost;   /* board frames missing, summed over the gaps */
  unsigned long tx_dropped;    /* frames not sent because the board did not read */
  unsigned long errors_sent;   /* ERROR messages sent to the board */
  unsigned long not_connected; /* messages refused because no HELLO was accepted yet */
  unsigned long link_down;     /* times the link went away */
  unsigned long link_up;       /* times it came back */
  int connected;               /* a HELLO was accepted on the current link */
} hil_serial_counters;

/* Fills *out; HIL_EINVAL when t is not a serial transport. */
int hil_serial_transport_counters(const hil_transport *t, hil_serial_counters *out);

#endif
