/* tools/cli/cmd_run.c: `achilles run`, the hardware-in-the-loop runtime (the main job). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "hil/error.h"
#include "hil/runtime/runtime.h"
#include "hil/serial/serial_transport.h"
#include "hil/servo/servo_bus.h"
#include "hil/servo/servo_file.h"
#include "hil/view/view.h"
#include "hil/zmq/zmq_transport.h"
#include "sim/import/import.h"
#include "sim/json_read.h"

typedef struct run_args {
  const char *config;
  hil_options opt;
  int no_zmq;
  const char *serial;   /* "pty" or a device path; NULL: as configured */
  const char *pty_link; /* stable symlink to the pty */
  const char *record;   /* log file (docs/logs.md) */
  double baud;
  const char *servo_bus;    /* "pty" or a device path; NULL: as configured */
  const char *bus_protocol; /* "dynamixel2" | "feetech"; NULL: the servos' */
  const char *servos;       /* servos file (docs/servo-bus.md), NULL: none */
  char servo_source[1100];  /* the name the robot with its servos is pinned under */
  double bus_baud;          /* 0: as configured */
  int view;             /* --view: serve the live view (docs/view.md) */
  hil_view_options view_opt;
} run_args;

/* Exit status of `achilles run` (docs/runtime.md): 0 after a run to its end or --help; 1 when
 * something outside the files failed (a port, a socket, the recording, the loop); 2 for any
 * error in the command line or the configuration files. */
enum { RUN_EXIT_FAILURE = 1, RUN_EXIT_CONFIG = 2 };

static hil_runtime *running; /* for the signal handler */

static void on_signal(int sig) {
  (void)sig;
  if (running) {
    hil_runtime_request_stop(running);
  }
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: achilles run CONFIG [options]\n\n"
          "Runs the robot described by CONFIG (robot JSON, MJCF or URDF) in real time:\n"
          "publishes its sensors and takes motor commands over ZeroMQ and/or a serial port (a\n"
          "real board or a pseudo-terminal).\n"
          "Stop with Ctrl-C (motors go to zero, ports close). Messages: docs/messages.md,\n"
          "docs/serial-protocol.md; runtime settings: docs/runtime.md.\n"
          "CONFIG may be - (or /dev/stdin, <(...)) to read it from standard input, once.\n"
          "Exit status: 0 at the end of the run, 1 when a port, socket or the recording fails,\n"
          "2 for an error in the command line or the configuration.\n\n"
          "options (override the config's \"runtime\" and \"transports\" sections):\n"
          "  --mode MODE          realtime (default) | lockstep | fast\n"
          "  --rate HZ            physics rate, 1 to 100000 (default 1000)\n"
          "  --speed X            lockstep/fast: at most X simulated s per wall s (0 = unpaced)\n"
          "  --duration S         stop after S s of simulation time (default: run until stopped)\n"
          "  --seed N             sensor noise seed\n"
          "  --overrun POLICY     skip (default) | catchup, after a late tick\n"
          "  --watchdog S         command timeout, s (0 disables; default 0.1)\n"
          "  --spin-us US         realtime: busy-wait the last US before each tick (sharper\n"
          "                       timing for CPU; default 0: sleep)\n"
          "  --rt                 ask for SCHED_FIFO (the loop and the ZeroMQ I/O thread) and\n"
          "                       locked memory\n"
          "  --cpu N              with --rt: pin the loop and the ZeroMQ I/O thread to CPU N\n"
          "  --keep-awake         with --rt --cpu N: keep CPU N from idling (a spinning thread at\n"
          "                       idle priority), so that messages never wait for a halted CPU\n"
          "                       on a virtual machine (docs/runtime.md, \"Sharp timing\")\n"
          "  --no-zmq             no ZeroMQ sockets\n"
          "  --serial pty|DEVICE  serial link: a new pseudo-terminal, or a device (e.g. /dev/ttyACM0)\n"
          "  --pty-link PATH      make PATH a symlink to the pseudo-terminal (the serial link's;\n"
          "                       the servo bus's when there is no --serial)\n"
          "  --baud N             device baud rate (default 1000000)\n"
          "  --servo-bus pty|DEVICE  the \"servo\" actuators answer as smart servos on this bus\n"
          "                       (docs/servo-bus.md)\n"
          "  --bus-protocol P     dynamixel2 | feetech (default: the servos' models')\n"
          "  --bus-baud N         servo bus baud rate (default 1000000)\n"
          "  --servos FILE        smart servos on CONFIG's joints (joint -> model, ID; any robot\n"
          "                       file; the bus starts with it; docs/servo-bus.md)\n"
          "  --sensors FILE       sensors file instead of CONFIG's \"sensors\" key (an MJCF or\n"
          "                       URDF CONFIG has sensors only this way; docs/import.md)\n"
          "  --record FILE        record every sample, command and status (docs/logs.md)\n"
          "  --on-record-error A  stop (default) | continue: when the recording fails (disk\n"
          "                       full, I/O error); said at once either way, exit status 1\n"
          "  --view [ADDR:PORT]   live view in a browser, and the Foxglove WebSocket protocol,\n"
          "                       on ADDR:PORT (default 127.0.0.1:8080; port 0: a free one);\n"
          "                       prints the URL (docs/view.md)\n"
          "  --view-rate HZ       display rate of the view (default 60)\n"
          "  --view-host NAME     a name the view answers to besides ADDR and localhost (the\n"
          "                       Host header; repeatable; others are refused: docs/view.md)\n"
          "  --status-period S    console status line period (default 1, 0 = never)\n"
          "  --quiet              no console status lines\n"
          "  -h, --help           this text\n");
}

static int choice(const char *option, const char *arg, const char *const *names, int *out) {
  for (int i = 0; names[i]; i++) {
    if (strcmp(arg, names[i]) == 0) {
      *out = i;
      return 0;
    }
  }
  fprintf(stderr, "achilles run: %s: unknown value '%s'\n", option, arg);
  return -1;
}

static int number(const char *option, const char *arg, double min, double *out) {
  return cli_number_at_least("achilles run", option, arg, min, out);
}

/* Applies one command-line option to a (already config-filled) run_args. */
static int apply_option(run_args *a, int opt, const char *arg) {
  static const char *const modes[] = {"realtime", "lockstep", "fast", NULL};
  static const char *const policies[] = {"skip", "catchup", NULL};
  static const char *const record_actions[] = {"stop", "continue", NULL};
  static const char *const bus_protocols[] = {"dynamixel2", "feetech", NULL};
  double v = 0;
  int k = 0, rc = 0;
  switch (opt) {
  case 'm':
    rc = choice("--mode", arg, modes, &k);
    a->opt.mode = (hil_mode)k;
    return rc;
  case 'r':
    rc = number("--rate", arg, HIL_RATE_MIN_HZ, &a->opt.rate_hz);
    if (rc == 0 && a->opt.rate_hz > HIL_RATE_MAX_HZ) {
      fprintf(stderr, "achilles run: --rate: must be <= %g (got %s)\n", HIL_RATE_MAX_HZ, arg);
      rc = -1;
    }
    return rc;
  case 's':
    return number("--speed", arg, 0, &a->opt.speed);
  case 'd':
    return number("--duration", arg, 0, &a->opt.duration_s);
  case 'S':
    rc = number("--seed", arg, 0, &v);
    a->opt.seed = (uint64_t)v, a->opt.has_seed = 1;
    return rc;
  case 'o':
    rc = choice("--overrun", arg, policies, &k);
    a->opt.overrun = (hil_overrun)k;
    return rc;
  case 'w':
    return number("--watchdog", arg, 0, &a->opt.watchdog_timeout_s);
  case 'R':
    a->opt.realtime_priority = 1;
    return 0;
  case 'u':
    rc = number("--spin-us", arg, 0, &v);
    a->opt.spin_s = fmin(v, 1e6) * 1e-6;
    return rc;
  case 'c':
    rc = number("--cpu", arg, 0, &v);
    a->opt.cpu = (int)fmin(v, 1023);
    return rc;
  case 'K':
    a->opt.keep_awake = 1;
    return 0;
  case 'Z':
    a->no_zmq = 1;
    return 0;
  case 'p':
    a->serial = arg;
    return 0;
  case 'l':
    a->pty_link = arg;
    return 0;
  case 'b':
    return number("--baud", arg, 1, &a->baud);
  case 'P':
    return number("--status-period", arg, 0, &a->opt.status_period_s);
  case 'q':
    a->opt.quiet = 1;
    return 0;
  case 'F':
    a->record = arg;
    return 0;
  case 'X':
    a->opt.sensors_file = arg;
    return 0;
  case 0x100:
    a->servo_bus = arg;
    return 0;
  case 0x101:
    a->bus_protocol = arg;
    return choice("--bus-protocol", arg, bus_protocols, &k);
  case 0x102:
    return number("--bus-baud", arg, 1, &a->bus_baud);
  case 0x103:
    a->servos = arg;
    return 0;
  case 'V':
    return cli_view_option("achilles run", &a->view, &a->view_opt, arg);
  case 'v':
    return number("--view-rate", arg, 1e-3, &a->view_opt.rate_hz);
  case 0x110:
    return cli_view_host("achilles run", &a->view_opt, arg);
  case 'E':
    rc = choice("--on-record-error", arg, record_actions, &k);
    a->opt.on_record_error = (hil_record_error_action)k;
    return rc;
  default:
    return -1;
  }
}

static const struct option long_options[] = {
    {"mode", required_argument, NULL, 'm'},    {"rate", required_argument, NULL, 'r'},
    {"speed", required_argument, NULL, 's'},   {"duration", required_argument, NULL, 'd'},
    {"seed", required_argument, NULL, 'S'},    {"overrun", required_argument, NULL, 'o'},
    {"watchdog", required_argument, NULL, 'w'}, {"rt", no_argument, NULL, 'R'},
    {"spin-us", required_argument, NULL, 'u'},
    {"cpu", required_argument, NULL, 'c'},     {"keep-awake", no_argument, NULL, 'K'},
    {"no-zmq", no_argument, NULL, 'Z'},
    {"serial", required_argument, NULL, 'p'},  {"pty-link", required_argument, NULL, 'l'},
    {"baud", required_argument, NULL, 'b'},    {"status-period", required_argument, NULL, 'P'},
    {"quiet", no_argument, NULL, 'q'},         {"help", no_argument, NULL, 'h'},
    {"record", required_argument, NULL, 'F'},
    {"on-record-error", required_argument, NULL, 'E'},
    {"sensors", required_argument, NULL, 'X'},
    {"servo-bus", required_argument, NULL, 0x100},
    {"bus-protocol", required_argument, NULL, 0x101},
    {"bus-baud", required_argument, NULL, 0x102},
    {"servos", required_argument, NULL, 0x103},
    {"view", optional_argument, NULL, 'V'},
    {"view-rate", required_argument, NULL, 'v'},
    {"view-host", required_argument, NULL, 0x110},
    {NULL, 0, NULL, 0}};

/* Two passes: find CONFIG and --help first, read the config's runtime section, then let the
 * command line override it. Returns 0 to run, 1 after --help, -1 on a usage error. */
static void print_note(void *ctx, const char *message) {
  (void)ctx;
  fprintf(stderr, "achilles run: note: %s\n", message);
}

/* An MJCF or URDF robot: what its importer ignored or changed and the bodies overlapping at
 * rest (docs/import.md), once at start, as `achilles convert` and `achilles sim` print them (the
 * runtime and the servos file load it again without notes). An error is left to that load,
 * which says it. */
static void print_import_notes(const char *config) {
  if (sim_import_detect(config) == SIM_IMPORT_JSON) {
    return;
  }
  char err[1024];
  const sim_import_options o = {0, print_note, NULL};
  sim_model_free(sim_import_load_file(config, &o, err, sizeof err));
}

static int parse_args(run_args *a, int argc, char **argv) {
  memset(a, 0, sizeof *a);
  hil_options_default(&a->opt);
  hil_view_options_default(&a->view_opt);
  int opt;
  optind = 1;
  opterr = 1;
  while ((opt = getopt_long(argc, argv, "hq", long_options, NULL)) != -1) {
    if (opt == 'h') {
      usage(stdout);
      return 1;
    }
    if (opt == '?') {
      fprintf(stderr, "Run 'achilles run --help' for usage.\n");
      return -1;
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "achilles run: expected exactly one CONFIG file\n");
    return -1;
  }
  a->config = argv[optind];
  char err[1024];
  /* read once: every section below names the file, and a pipe (<(...), -) reads only once */
  if (sim_json_pin_file(a->config, err, sizeof err) != 0 ||
      hil_options_parse(&a->opt, a->config, err, sizeof err) != HIL_OK) {
    fprintf(stderr, "achilles run: %s\n", err);
    return -1;
  }
  optind = 1;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, "hq", long_options, NULL)) != -1) {
    if (apply_option(a, opt, optarg)) {
      return -1;
    }
  }
  if (!a->opt.quiet) {
    print_import_notes(a->config);
  }
  /* the robot with its servos, pinned: every section below reads it */
  if (a->servos && servo_file_pin(a->servo_source, sizeof a->servo_source, a->config, a->servos,
                                  err, sizeof err) != 0) {
    fprintf(stderr, "achilles run: %s\n", err);
    return -1;
  }
  a->config = a->servos ? a->servo_source : a->config;
  if (a->opt.keep_awake && (!a->opt.realtime_priority || a->opt.cpu < 0)) {
    fprintf(stderr, "achilles run: --keep-awake needs --rt and --cpu N\n");
    return -1;
  }
  return 0;
}

/* Hands t to the runtime (which destroys it on failure); says why it failed. */
static int add_transport(hil_runtime *rt, hil_transport *t, const char *what) {
  const int rc = hil_runtime_add_transport(rt, t);
  if (rc != HIL_OK) {
    fprintf(stderr, "achilles run: %s: %s\n", what, hil_strerror(rc));
    return RUN_EXIT_FAILURE;
  }
  return 0;
}

static int add_zmq(hil_runtime *rt, const run_args *a, hil_transport **out) {
  hil_zmq_options zo;
  char err[1024];
  if (hil_zmq_options_parse(&zo, a->config, err, sizeof err) != 0) {
    fprintf(stderr, "achilles run: %s\n", err);
    return RUN_EXIT_CONFIG;
  }
  if (!zo.enabled) {
    return 0;
  }
  if (a->opt.realtime_priority) { /* the I/O thread carries every message: just below the loop */
    zo.io_priority = HIL_RT_IO_PRIORITY;
    zo.io_cpu = a->opt.cpu;
  }
  hil_transport *t = hil_zmq_transport_new(&zo, err, sizeof err);
  if (!t) {
    fprintf(stderr, "achilles run: zmq: %s\n", err);
    return RUN_EXIT_FAILURE;
  }
  fprintf(stderr, "[achilles] zmq: sensors on %s, commands on %s, control on %s\n",
          hil_zmq_transport_endpoint(t, HIL_ZMQ_PUB), hil_zmq_transport_endpoint(t, HIL_ZMQ_CMD),
          hil_zmq_transport_endpoint(t, HIL_ZMQ_CTL));
  const int rc = add_transport(rt, t, "zmq");
  *out = rc == 0 ? t : NULL;
  return rc;
}

/* The view answers browsers' control requests with the ZeroMQ transport's handler (zmq may be
 * NULL: hil_zmq_control_answer). */
static int add_view(hil_runtime *rt, const run_args *a, hil_transport *zmq) {
  char err[1024];
  hil_transport *t = hil_view_new(&a->view_opt, zmq, err, sizeof err);
  if (!t) {
    fprintf(stderr, "achilles run: %s\n", err);
    return RUN_EXIT_FAILURE;
  }
  char url[128];
  snprintf(url, sizeof url, "%s", hil_view_url(t));
  const int rc = add_transport(rt, t, "view");
  if (rc == 0) {
    fprintf(stderr, "[achilles] view: open %s in a browser (Foxglove: ws://%s)\n", url,
            url + strlen("http://"));
  }
  return rc;
}

static int add_serial(hil_runtime *rt, const run_args *a) {
  hil_serial_options so;
  char err[1024];
  int present = 0;
  hil_serial_options_default(&so);
  if (hil_serial_options_parse(&so, &present, a->config, err, sizeof err) != 0) {
    fprintf(stderr, "achilles run: %s\n", err);
    return RUN_EXIT_CONFIG;
  }
  if (a->serial) {
    present = 1;
    so.use_pty = strcmp(a->serial, "pty") == 0;
    if (!so.use_pty) {
      snprintf(so.port, sizeof so.port, "%s", a->serial);
    }
  }
  if (a->pty_link) {
    snprintf(so.link, sizeof so.link, "%s", a->pty_link);
  }
  if (a->baud > 0) {
    so.baud = (int)a->baud;
  }
  if (!present) {
    return 0;
  }
  hil_transport *t = hil_serial_transport_new(&so, err, sizeof err);
  if (!t) {
    /* the serial port's messages already start with "serial:" */
    fprintf(stderr, "achilles run: %s%s\n", strncmp(err, "serial", 6) == 0 ? "" : "serial: ", err);
    return RUN_EXIT_FAILURE;
  }
  return add_transport(rt, t, "serial");
}

/* A serial link runs: --serial, or a "transports.serial" section. */
static int has_serial_link(const run_args *a) {
  hil_serial_options so;
  char err[1024];
  int present = 0;
  hil_serial_options_default(&so);
  return a->serial || (hil_serial_options_parse(&so, &present, a->config, err, sizeof err) == 0 &&
                       present);
}

/* The servo bus: with --servo-bus or a "transports.servo_bus" section. */
static int add_servo_bus(hil_runtime *rt, const run_args *a) {
  servo_bus_options bo;
  char err[1024];
  int present = 0;
  servo_bus_options_default(&bo);
  if (servo_bus_options_parse(&bo, &present, a->config, err, sizeof err) != HIL_OK) {
    fprintf(stderr, "achilles run: %s\n", err);
    return RUN_EXIT_CONFIG;
  }
  if (!present && !a->servo_bus) {
    if (servo_bus_config_has_servos(a->config)) {
      fprintf(stderr, "[achilles] %s has servo actuators but no servo bus (--servo-bus): "
                      "they hold no torque\n", a->config);
    }
    return 0;
  }
  if (a->servo_bus) {
    bo.use_pty = strcmp(a->servo_bus, "pty") == 0;
    snprintf(bo.port, sizeof bo.port, "%s", bo.use_pty ? "" : a->servo_bus);
  }
  if (a->bus_protocol) {
    bo.has_protocol = 1;
    bo.protocol = strcmp(a->bus_protocol, "feetech") == 0 ? SERVO_PROTOCOL_FEETECH
                                                          : SERVO_PROTOCOL_DYNAMIXEL2;
  }
  if (a->bus_baud > 0) {
    bo.baud = (long)a->bus_baud;
  }
  if (a->pty_link && !has_serial_link(a)) { /* else --pty-link is the serial link's */
    snprintf(bo.link, sizeof bo.link, "%s", a->pty_link);
  }
  hil_transport *t = servo_bus_new(&bo, a->config, err, sizeof err);
  if (!t) {
    fprintf(stderr, "achilles run: %s\n", err);
    return strncmp(err, "servo bus: port", 15) == 0 ? RUN_EXIT_FAILURE : RUN_EXIT_CONFIG;
  }
  return add_transport(rt, t, "servo bus");
}

static void print_banner(hil_runtime *rt, const run_args *a) {
  const sim_model *m = hil_runtime_model(rt);
  sens_set *s = hil_runtime_sensors(rt);
  fprintf(stderr, "[achilles] %s: %d joints, %d actuators, %d sensors; %s at %g Hz", m->name,
          m->nv, m->nu, s ? sens_set_count(s) : 0, hil_mode_name(a->opt.mode), a->opt.rate_hz);
  if (a->opt.duration_s > 0) {
    fprintf(stderr, " for %g s", a->opt.duration_s);
  }
  fprintf(stderr, "\n");
}

/* Builds the runtime and its transports from the pinned config; 0 or an exit status. */
static int start(hil_runtime **out, const run_args *a) {
  char err[1024];
  hil_runtime *rt = hil_runtime_new(a->config, &a->opt, err, sizeof err);
  if (!rt) { /* the model or the sensors are invalid (or memory ran out while loading) */
    fprintf(stderr, "achilles run: %s\n", err);
    return RUN_EXIT_CONFIG;
  }
  hil_transport *zmq = NULL;
  int rc = a->no_zmq ? 0 : add_zmq(rt, a, &zmq);
  if (rc == 0) {
    rc = add_serial(rt, a);
  }
  if (rc == 0 && a->view) {
    rc = add_view(rt, a, zmq);
  }
  if (rc == 0) {
    rc = add_servo_bus(rt, a);
  }
  if (rc != 0) {
    hil_runtime_destroy(&rt);
  }
  *out = rt;
  return rc;
}

static int run_main(int argc, char **argv) {
  run_args a;
  const int parsed = parse_args(&a, argc, argv);
  hil_runtime *rt = NULL;
  char err[1024];
  const int started = parsed == 0 ? start(&rt, &a) : 0;
  sim_json_unpin();
  if (parsed != 0 || started != 0) {
    return parsed > 0 ? 0 : parsed < 0 ? RUN_EXIT_CONFIG : started;
  }
  if (a.record) {
    if (hil_runtime_record(rt, a.record, err, sizeof err) != HIL_OK) {
      fprintf(stderr, "achilles run: --record: %s\n", err);
      hil_runtime_destroy(&rt);
      return RUN_EXIT_FAILURE;
    }
    fprintf(stderr, "[achilles] recording to %s\n", a.record);
  }
  print_banner(rt, &a);
  running = rt;
  cli_on_stop_signals(on_signal);
  int rc = hil_runtime_run(rt);
  running = NULL;
  hil_runtime_destroy(&rt);
  if (rc == HIL_EIO && a.record) {
    fprintf(stderr, "achilles run: --record %s: records were lost (said above)\n", a.record);
    return 1;
  }
  if (rc == HIL_ENONFINITE) {
    fprintf(stderr, "achilles run: the simulation stopped: its state turned non-finite (said "
                    "above)\n");
    return RUN_EXIT_FAILURE;
  }
  if (rc != HIL_OK) {
    fprintf(stderr, "achilles run: %s\n", hil_strerror(rc));
    return RUN_EXIT_FAILURE;
  }
  return 0;
}

int achilles_cmd_run(int argc, char **argv) {
  char joined[HIL_VIEW_ADDRESS_MAX + 32];
  char **args = cli_join_view_address(&argc, argv, joined, sizeof joined);
  if (!args) {
    fprintf(stderr, "achilles run: out of memory\n");
    return RUN_EXIT_FAILURE;
  }
  const int rc = run_main(argc, args);
  free(args);
  return rc;
}
