/* hil/view/view.h: the live view — a web server (libwebsockets) in a thread of its own that shows
 * the running arm in a browser (hil/view/www/: three.js and Chart.js from Debian) and speaks the
 * Foxglove WebSocket protocol (foxglove.websocket.v1) on the same port. Messages: docs/view.md.
 *
 * The view is a transport (hil/transport.h). The loop never waits for it: at the display rate
 * (default 60 Hz) the transport copies the state (body poses, joint positions, contacts, the
 * newest sample of every sensor, the last status) into a triple buffer that the server thread
 * reads without a lock; a browser that reads slowly misses frames, never ticks. Control
 * requests and motor commands from browsers travel the other way through a bounded lock-free
 * queue and are carried out on the loop thread by the ZeroMQ control handler
 * (hil_zmq_control_answer), so a browser and a ZeroMQ client see the same replies.
 *
 * Ownership: hil_view_new() binds the port and returns a transport; hand it to
 * hil_runtime_add_transport(), which starts the server thread (attach) and destroys it with the
 * runtime (the thread is stopped and joined, every connection closed).
 */
#ifndef ACHILLES_HIL_VIEW_H
#define ACHILLES_HIL_VIEW_H

#include <stddef.h>

#include "hil/record/replay.h"
#include "hil/transport.h"

#define HIL_VIEW_ADDRESS_MAX 64
#define HIL_VIEW_PATH_MAX 512
#define HIL_VIEW_HOSTS_MAX 8

typedef struct hil_view_options {
  char address[HIL_VIEW_ADDRESS_MAX]; /* interface address to listen on, "127.0.0.1" */
  int port;                           /* 8080; 0: a free port (hil_view_url tells which) */
  double rate_hz;                     /* display rate: frames a second at most, 60 */
  double window_s;                    /* seconds the page's plots show, 10 */
  size_t max_message_bytes;           /* larger WebSocket messages get an error reply, 65536 */
  char www[HIL_VIEW_PATH_MAX];        /* the page's files (index.html, view.js, view.css) */
  char three[HIL_VIEW_PATH_MAX];      /* Debian's libjs-three, /usr/share/javascript/three */
  char chartjs[HIL_VIEW_PATH_MAX];    /* Debian's libjs-chart.js, /usr/share/javascript/chart.js */
  /* Host names a request may name besides the address and localhost (hil_view_add_host): a
   * request whose Host header names another is refused before it is read (DNS rebinding) */
  char hosts[HIL_VIEW_HOSTS_MAX][HIL_VIEW_ADDRESS_MAX];
  int nhosts;
} hil_view_options;

/* Defaults: 127.0.0.1:8080, 60 Hz, 10 s plots, 64 KiB messages, the page from the source tree
 * (or $ACHILLES_VIEW_WWW), the libraries from their Debian install paths. */
void hil_view_options_default(hil_view_options *o);

/* Reads "ADDRESS:PORT" (or "PORT", ":PORT") into o. HIL_OK or HIL_EINVAL with a message. */
int hil_view_parse_address(hil_view_options *o, const char *text, char *err, size_t err_sz);

/* Adds a name the view answers to in the Host header (`--view-host NAME`: the machine's name
 * on the network, a name in /etc/hosts). HIL_OK, or HIL_EINVAL with a message (too many, too
 * long, empty, or holding a character a host name cannot have). */
int hil_view_add_host(hil_view_options *o, const char *name, char *err, size_t err_sz);

/* Binds the server (nothing is served until the transport is attached). `control` is the run's
 * ZeroMQ transport, whose control handler answers the browsers' requests, or NULL (then hello,
 * status and latest replies lack the ZeroMQ parts: hil_zmq_control_answer). NULL with a message
 * when the port cannot be bound or the page's files are missing. */
hil_transport *hil_view_new(const hil_view_options *o, hil_transport *control, char *err,
                            size_t err_sz);

/* "http://ADDRESS:PORT/" with the port bound. Owned by the transport. */
const char *hil_view_url(const hil_transport *t);

/* --- the view of a replay (`achilles replay FILE --view`) -----------------------------------------
 *
 * A replay has no runtime: the player (hil/record/replay.h) hands each instant it sent to the
 * view through its options' on_instant, on the playing thread; the view copies the samples of
 * that instant (a struct copy each) and, at the display rate, its figures into the triple buffer
 * and returns. The server thread encodes the samples with the replay's own encoder
 * (hil_replay_encode_json: the text of its ZeroMQ messages, truth included whenever the file has
 * it). A log holds no robot model: the page shows the plots and the status, no arm. Control
 * requests are answered by the server thread: status and latest from the newest frame, every
 * other one with an error (a replay cannot be paused or stepped). */

typedef struct hil_view_replay hil_view_replay;

/* Binds and starts serving at once. The schedule must outlive the view. NULL with a message. */
hil_view_replay *hil_view_replay_new(const hil_view_options *o, const hil_replay_schedule *s,
                                     char *err, size_t err_sz);
/* Sets o's on_instant, ready (a browser or Foxglove connected starts a replay that waits for a
 * subscriber) and user to this view. */
void hil_view_replay_hook(hil_view_replay *v, hil_replay_options *o);
/* After hil_replay_run returned, on its thread: the final figures ("finished": true). */
void hil_view_replay_finish(hil_view_replay *v, const hil_replay *r);
const char *hil_view_replay_url(const hil_view_replay *v);
/* Stops the server thread, closes every connection, frees; nulls *v; accepts NULL. */
void hil_view_replay_destroy(hil_view_replay **v);

#endif
