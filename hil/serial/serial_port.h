/* hil/serial/serial_port.h: the byte-level device layer under the serial transport.
 *
 * A port is either the master side of a pseudo-terminal pair this layer creates (POSIX calls:
 * posix_openpt, grantpt, unlockpt, raw mode), or a serial device opened with libserialport.
 * Either way it reads and writes without blocking and follows the link's state:
 *   - up: the fd is worth waiting on (hil_serial_port_fd() >= 0);
 *   - down: the firmware closed the pty slave (the master reads EIO and polls POLLHUP), or the
 *     device failed or vanished (USB unplug). The port says so once on stderr, offers no fd, and
 *     hil_serial_port_service() checks again: for a pty on every call, whether the slave is
 *     open again (hil_serial_port_wakeup_fd wakes a caller that waits for it); for a device
 *     every reopen_interval_s, whether it can be reopened. It says when it is back. Messages
 *     start with the options' label ("serial", "servo bus").
 * The simulator keeps no slave fd open, so the firmware closing the pty is visible, exactly like
 * a board unplugged from USB.
 *
 * Ownership: hil_serial_port_new() allocates; hil_serial_port_destroy() closes the port,
 * removes the symlink it made, frees, nulls the pointer and accepts NULL.
 */
#ifndef ACHILLES_HIL_SERIAL_PORT_H
#define ACHILLES_HIL_SERIAL_PORT_H

#include <stddef.h>
#include <stdint.h>

#include "hil/serial/serial_transport.h"
#include "hil/transport.h"

typedef struct hil_serial_port hil_serial_port;

/* Creates the pty pair (and its symlink) or opens the device now. NULL with a message in err. */
hil_serial_port *hil_serial_port_new(const hil_serial_options *o, char *err, size_t err_sz);
void hil_serial_port_destroy(hil_serial_port **p);

/* The pty slave path, or the device path as configured. */
const char *hil_serial_port_path(const hil_serial_port *p);
/* The device the configured path resolved to when last opened (device mode), else the path. */
const char *hil_serial_port_resolved(const hil_serial_port *p);
int hil_serial_port_is_pty(const hil_serial_port *p);
int hil_serial_port_is_up(const hil_serial_port *p);
/* The file descriptor to wait on while the link is up, -1 while it is down. */
int hil_serial_port_fd(const hil_serial_port *p);

/* While a pty is down: a descriptor that becomes readable when the firmware opens the slave
 * again (an inotify watch), so that a caller waiting on it sees the link back at once; -1 when
 * up or a device (devices are retried every reopen_interval_s). */
int hil_serial_port_wakeup_fd(const hil_serial_port *p);

/* While down (a device: once the retry interval has passed; now: monotonic s), checks whether
 * the link is back. Returns 1 when it just came back up, else 0. */
int hil_serial_port_service(hil_serial_port *p, double now);

/* Reads what is waiting, without blocking: > 0 bytes read, 0 nothing, HIL_EIO the link just
 * went down (it will be retried). Reading a port that is down returns 0. */
long hil_serial_port_read(hil_serial_port *p, uint8_t *buf, size_t n, double now);

/* Writes without blocking: the bytes the system took (maybe fewer than n, maybe 0), or HIL_EIO
 * when the link just went down. Writing to a port that is down returns 0. */
long hil_serial_port_write(hil_serial_port *p, const uint8_t *buf, size_t n, double now);

/* The line's fault (hil_link_fault, hil/transport.h): set when f is not NULL, counters into *out
 * when out is not NULL. Applied to everything read and written from then on. */
void hil_serial_port_link_fault(hil_serial_port *p, const hil_link_fault *f,
                                hil_link_counters *out);

#endif
