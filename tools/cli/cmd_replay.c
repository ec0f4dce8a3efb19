/* tools/cli/cmd_replay.c: `achilles replay`, a recorded log or a CSV file sent to firmware with its
 * original timing, on the wire formats of the live simulator (docs/replay.md). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cli.h"
#include "commands.h"
#include "hil/error.h"
#include "hil/record/replay.h"
#include "hil/view/view.h"

typedef struct replay_args {
  const char *file;
  hil_replay_select sel;
  hil_replay_options opt;
  int have_zmq, have_serial;
  int have_sides; /* --ctl, --no-ctl, --cmd or --no-cmd given */
  int rt;
  int view;       /* --view: the replay in the live view's page (docs/view.md) */
  hil_view_options view_opt;
} replay_args;

static hil_replay *playing; /* for the signal handler */

static void on_signal(int sig) {
  (void)sig;
  if (playing) {
    hil_replay_request_stop(playing);
  }
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: achilles replay FILE [options]\n\n"
          "Sends the sensor samples of FILE (a log recorded by `achilles run --record`, or a\n"
          "CSV file \"time,<sensor>.<channel>,...\") to firmware with their original timing,\n"
          "on the wire formats of the live simulator: ZeroMQ messages (docs/messages.md) or the\n"
          "serial protocol (docs/serial-transport.md). Progress and timing error on stderr every\n"
          "second.\n"
          "Details: docs/replay.md.\n\n"
          "options:\n"
          "  --rate R             speed factor (2 plays twice as fast; default 1)\n"
          "  --loop               start again after the end; t and seq keep counting up\n"
          "  --loops N            with --loop: stop after N passes (default: until stopped)\n"
          "  --from T, --to T     play only samples with T_from <= t <= T_to (s; both ends\n"
          "                       included, within 1/1000 of the physics period)\n"
          "  --max-gap S          a jump of t longer than S between two samples is damage\n"
          "                       (default 10)\n"
          "  --skip-gaps          play across such a jump without waiting for it\n"
          "  --topics PATTERNS    comma-separated topic prefixes or globs (\"enc/,imu/*\")\n"
          "  --zmq ENDPOINT       publish on a PUB bound to ENDPOINT\n"
          "                       (default tcp://127.0.0.1:5555, as the live simulator)\n"
          "  --allow-remote       accept an ENDPOINT that is not local\n"
          "  --truth              also publish truth/<topic> when the file has the truth\n"
          "  --no-wait            start at once instead of waiting for the first subscriber\n"
          "  --wait-hello         start after answering a controller's hello (with a subscriber\n"
          "                       to status connected): the way to replay to a controller\n"
          "  --ctl ENDPOINT       answer control requests (hello, status, latest) on a REP\n"
          "                       bound to ENDPOINT (default tcp://127.0.0.1:5557, as live)\n"
          "  --no-ctl             no control socket\n"
          "  --cmd ENDPOINT       read and discard motor commands on a PULL bound to ENDPOINT\n"
          "                       (default tcp://127.0.0.1:5556)\n"
          "  --no-cmd             no command socket\n"
          "  --serial pty|DEVICE  speak the serial protocol on a new pseudo-terminal or a device\n"
          "  --pty-link PATH      make PATH a symlink to the pseudo-terminal\n"
          "  --baud N             device baud rate (default 1000000)\n"
          "  --skip-damaged       go on past damaged records (default: stop at the first)\n"
          "  --spin-us US         busy-wait the last US before each deadline (default 500)\n"
          "  --overrun POLICY     after a stall: catchup (default) sends the late samples back\n"
          "                       to back to regain the original schedule; shift moves the\n"
          "                       rest of the schedule later, keeping the intervals\n"
          "  --rt                 ask for SCHED_FIFO (player and ZeroMQ I/O thread) and locked\n"
          "                       memory\n"
          "  --cpu N              pin the player and its ZeroMQ I/O thread to CPU N (run the\n"
          "                       subscriber on the same CPU for the sharpest timing)\n"
          "  --keep-awake         with --cpu: keep that CPU from idling while playing (a\n"
          "                       lowest-priority spinning thread; helps on virtual machines)\n"
          "  --view [ADDR:PORT]   watch the replay in a browser (plots, status; the Foxglove\n"
          "                       WebSocket protocol too) on ADDR:PORT (default\n"
          "                       127.0.0.1:8080; port 0: a free one); prints the URL; a\n"
          "                       replay that waits for a subscriber also starts when a\n"
          "                       browser connects (docs/view.md)\n"
          "  --view-rate HZ       display rate of the view (default 60)\n"
          "  --view-host NAME     a name the view answers to besides ADDR and localhost (the\n"
          "                       Host header; repeatable; others are refused: docs/view.md)\n"
          "  --status-period S    progress line and status message period (default 1, 0 = never)\n"
          "  --quiet              no progress lines (errors and the summary still print)\n"
          "  -h, --help           this text\n\n"
          "exit status: 0 played, 1 the file is damaged (what came before it was played) or a\n"
          "system error, 2 a usage error or nothing to play\n");
}

static int number(const char *option, const char *arg, double min, double *out) {
  return cli_number_at_least("achilles replay", option, arg, min, out);
}

static int copy_arg(const char *option, const char *arg, char *out, size_t out_sz) {
  if (strlen(arg) >= out_sz || !arg[0]) {
    fprintf(stderr, "achilles replay: %s: expected 1 to %zu characters\n", option, out_sz - 1);
    return -1;
  }
  snprintf(out, out_sz, "%s", arg);
  return 0;
}

static int apply_option(replay_args *a, int opt, const char *arg) {
  double v = 0;
  int rc = 0;
  switch (opt) {
  case 'r':
    rc = number("--rate", arg, -INFINITY, &a->opt.rate);
    if (rc == 0 && !(a->opt.rate > 0)) { /* one bound, one message */
      fprintf(stderr, "achilles replay: --rate: must be > 0 (got %s)\n", arg);
      rc = -1;
    }
    return rc;
  case 'L':
    a->opt.loop = 1;
    return 0;
  case 'N':
    rc = number("--loops", arg, 1, &v);
    if (rc == 0 && (v != floor(v) || v > 1e15)) {
      fprintf(stderr, "achilles replay: --loops: expected a whole number (got %s)\n", arg);
      rc = -1;
    }
    a->opt.loops = (long long)v;
    a->opt.loop = 1;
    return rc;
  case 'f':
    a->sel.has_from = 1;
    return number("--from", arg, -INFINITY, &a->sel.from);
  case 't':
    a->sel.has_to = 1;
    return number("--to", arg, -INFINITY, &a->sel.to);
  case 'T':
    return copy_arg("--topics", arg, a->sel.topics, sizeof a->sel.topics);
  case 'z':
    a->have_zmq = 1;
    a->opt.output = HIL_REPLAY_ZMQ;
    return copy_arg("--zmq", arg, a->opt.zmq_endpoint, sizeof a->opt.zmq_endpoint);
  case 'A':
    a->opt.allow_remote = 1;
    return 0;
  case 'U':
    a->opt.truth = 1;
    return 0;
  case 'W':
    a->opt.wait_subscriber = 0;
    return 0;
  case 'H':
    a->opt.wait_hello = 1;
    return 0;
  case 'g':
    return number("--max-gap", arg, 1e-9, &a->sel.max_gap_s);
  case 'G':
    a->sel.skip_gaps = 1;
    return 0;
  case 'x':
    a->have_sides = 1;
    a->opt.ctl_required = 1;
    return copy_arg("--ctl", arg, a->opt.ctl_endpoint, sizeof a->opt.ctl_endpoint);
  case 'X':
    a->have_sides = 1;
    a->opt.ctl_endpoint[0] = '\0';
    return 0;
  case 'y':
    a->have_sides = 1;
    a->opt.cmd_required = 1;
    return copy_arg("--cmd", arg, a->opt.cmd_endpoint, sizeof a->opt.cmd_endpoint);
  case 'Y':
    a->have_sides = 1;
    a->opt.cmd_endpoint[0] = '\0';
    return 0;
  case 'p':
    a->have_serial = 1;
    a->opt.output = HIL_REPLAY_SERIAL;
    a->opt.serial.use_pty = strcmp(arg, "pty") == 0;
    return a->opt.serial.use_pty ? 0 : copy_arg("--serial", arg, a->opt.serial.port,
                                                sizeof a->opt.serial.port);
  case 'l':
    return copy_arg("--pty-link", arg, a->opt.serial.link, sizeof a->opt.serial.link);
  case 'b':
    rc = number("--baud", arg, 1, &v);
    a->opt.serial.baud = (int)fmin(v, 1e8);
    return rc;
  case 'D':
    a->sel.skip_damaged = 1;
    return 0;
  case 'u':
    rc = number("--spin-us", arg, 0, &v);
    a->opt.spin_s = fmin(v, 1e6) * 1e-6;
    return rc;
  case 'c':
    rc = number("--cpu", arg, 0, &v);
    a->opt.cpu = (int)fmin(v, 1023);
    return rc;
  case 'C':
    if (strcmp(arg, "catchup") != 0 && strcmp(arg, "shift") != 0) {
      fprintf(stderr, "achilles replay: --overrun: expected catchup or shift (got '%s')\n", arg);
      return -1;
    }
    a->opt.shift = strcmp(arg, "shift") == 0;
    return 0;
  case 'K':
    a->opt.keep_awake = 1;
    return 0;
  case 'R':
    a->rt = 1;
    a->opt.rt_priority = 80;
    return 0;
  case 'P':
    return number("--status-period", arg, 0, &a->opt.status_period_s);
  case 'V':
    return cli_view_option("achilles replay", &a->view, &a->view_opt, arg);
  case 'v':
    return number("--view-rate", arg, 1e-3, &a->view_opt.rate_hz);
  case 0x110:
    return cli_view_host("achilles replay", &a->view_opt, arg);
  case 'q':
    a->opt.progress = NULL;
    return 0;
  default:
    fprintf(stderr, "Run 'achilles replay --help' for usage.\n");
    return -1;
  }
}

static const struct option long_options[] = {
    {"rate", required_argument, NULL, 'r'},     {"loop", no_argument, NULL, 'L'},
    {"loops", required_argument, NULL, 'N'},    {"from", required_argument, NULL, 'f'},
    {"to", required_argument, NULL, 't'},       {"topics", required_argument, NULL, 'T'},
    {"zmq", required_argument, NULL, 'z'},      {"allow-remote", no_argument, NULL, 'A'},
    {"truth", no_argument, NULL, 'U'},          {"no-wait", no_argument, NULL, 'W'},
    {"serial", required_argument, NULL, 'p'},   {"pty-link", required_argument, NULL, 'l'},
    {"baud", required_argument, NULL, 'b'},     {"skip-damaged", no_argument, NULL, 'D'},
    {"spin-us", required_argument, NULL, 'u'},  {"rt", no_argument, NULL, 'R'},
    {"cpu", required_argument, NULL, 'c'},      {"overrun", required_argument, NULL, 'C'},
    {"keep-awake", no_argument, NULL, 'K'},     {"ctl", required_argument, NULL, 'x'},
    {"no-ctl", no_argument, NULL, 'X'},         {"cmd", required_argument, NULL, 'y'},
    {"no-cmd", no_argument, NULL, 'Y'},         {"wait-hello", no_argument, NULL, 'H'},
    {"max-gap", required_argument, NULL, 'g'},  {"skip-gaps", no_argument, NULL, 'G'},
    {"status-period", required_argument, NULL, 'P'}, {"quiet", no_argument, NULL, 'q'},
    {"view", optional_argument, NULL, 'V'},     {"view-rate", required_argument, NULL, 'v'},
    {"view-host", required_argument, NULL, 0x110},
    {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};

/* 0 to play, 1 after --help, -1 on a usage error */
static int parse_args(replay_args *a, int argc, char **argv) {
  memset(a, 0, sizeof *a);
  hil_replay_options_default(&a->opt);
  hil_view_options_default(&a->view_opt);
  a->opt.progress = stderr;
  int opt;
  optind = 1;
  opterr = 1;
  while ((opt = getopt_long(argc, argv, "hq", long_options, NULL)) != -1) {
    if (opt == 'h') {
      usage(stdout);
      return 1;
    }
    if (apply_option(a, opt, optarg)) {
      return -1;
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "achilles replay: expected exactly one FILE (a log or a CSV file)\n");
    return -1;
  }
  a->file = argv[optind];
  if (a->have_zmq && a->have_serial) {
    fprintf(stderr, "achilles replay: --zmq and --serial exclude each other\n");
    return -1;
  }
  if (a->opt.wait_hello && (a->have_serial || !a->opt.ctl_endpoint[0] ||
                            !a->opt.wait_subscriber)) {
    fprintf(stderr, "achilles replay: --wait-hello needs ZeroMQ output with a control socket, "
                    "not --serial, --no-ctl or --no-wait\n");
    return -1;
  }
  if (a->have_sides && a->have_serial) {
    fprintf(stderr, "achilles replay: --ctl, --no-ctl, --cmd and --no-cmd need ZeroMQ output, "
                    "not --serial\n");
    return -1;
  }
  if (a->sel.has_from && a->sel.has_to && a->sel.from > a->sel.to) {
    fprintf(stderr, "achilles replay: --from %g is after --to %g\n", a->sel.from, a->sel.to);
    return -1;
  }
  if (a->opt.keep_awake && a->opt.cpu < 0) {
    fprintf(stderr, "achilles replay: --keep-awake needs --cpu N\n");
    return -1;
  }
  if (a->opt.serial.link[0] && !(a->have_serial && a->opt.serial.use_pty)) {
    fprintf(stderr, "achilles replay: --pty-link needs --serial pty\n");
    return -1;
  }
  return 0;
}

static void print_plan(const replay_args *a, const hil_replay_schedule *s) {
  int selected = 0;
  for (int i = 0; i < s->nsensors; i++) {
    selected += s->sensor[i].selected;
  }
  fprintf(stderr,
          "replay: %s: %s, %d sensors (%d selected), %zu samples from t = %.6g to %.6g s, "
          "rate %g%s\n",
          a->file, s->is_csv ? "CSV" : "log", s->nsensors, selected, s->n, s->t_first, s->t_last,
          a->opt.rate, a->opt.loop ? ", looping" : "");
}

static int replay_main(int argc, char **argv);

int achilles_cmd_replay(int argc, char **argv) {
  char joined[HIL_VIEW_ADDRESS_MAX + 32];
  char **args = cli_join_view_address(&argc, argv, joined, sizeof joined);
  if (!args) {
    fprintf(stderr, "achilles replay: out of memory\n");
    return 1;
  }
  const int rc = replay_main(argc, args);
  free(args);
  return rc;
}

static int replay_main(int argc, char **argv) {
  replay_args a;
  const int parsed = parse_args(&a, argc, argv);
  if (parsed != 0) {
    return parsed > 0 ? 0 : 2;
  }
  char err[1024];
  hil_replay_schedule s;
  if (hil_replay_load(&s, a.file, &a.sel, err, sizeof err) != 0) {
    fprintf(stderr, "achilles replay: %s\n", err);
    return 1;
  }
  if (s.damage[0]) {
    fprintf(stderr, "%s\n", s.damage);
    fprintf(stderr, "replay: %s\n", s.stopped ? "playing what comes before it (--skip-damaged "
                                                "to go on past damaged records)"
                                              : "skipping damaged records");
  }
  if (s.incomplete) {
    fprintf(stderr, "replay: warning: %s has no end record: the recording was not closed "
            "(a killed or crashed recorder); playing what it holds\n", a.file);
  }
  if (s.gap_note[0]) {
    fprintf(stderr, "%s\nreplay: %zu gap%s longer than %g s played across (--skip-gaps)\n",
            s.gap_note, (size_t)s.gaps_met, s.gaps_met == 1 ? "" : "s",
            a.sel.max_gap_s > 0 ? a.sel.max_gap_s : HIL_REPLAY_MAX_GAP_S);
  }
  if (s.n == 0) {
    fprintf(stderr, "achilles replay: %s: no samples to play (%lld sample records read%s)\n",
            a.file, s.samples_read,
            a.sel.has_from || a.sel.has_to || a.sel.topics[0] ? ", none in the window and topics"
                                                              : "");
    hil_replay_free(&s);
    return s.stopped ? 1 : 2;
  }
  if (a.opt.progress) {
    print_plan(&a, &s);
  }
  hil_view_replay *view = NULL;
  if (a.view) { /* before the player: it takes the view's hooks with its options */
    view = hil_view_replay_new(&a.view_opt, &s, err, sizeof err);
    if (!view) {
      fprintf(stderr, "achilles replay: %s\n", err);
      hil_replay_free(&s);
      return 1;
    }
    hil_view_replay_hook(view, &a.opt);
    fprintf(stderr, "replay: view: open %s in a browser (Foxglove: ws://%s)\n",
            hil_view_replay_url(view), hil_view_replay_url(view) + strlen("http://"));
  }
  hil_replay *r = hil_replay_new(&s, &a.opt, err, sizeof err);
  if (!r) {
    fprintf(stderr, "achilles replay: %s\n", err);
    hil_view_replay_destroy(&view);
    hil_replay_free(&s);
    return strstr(err, "not a local endpoint") ? 2 : 1;
  }
  if (a.opt.output == HIL_REPLAY_SERIAL && a.opt.serial.link[0]) {
    fprintf(stderr, "replay: firmware should open %s (link %s)\n", hil_replay_where(r),
            a.opt.serial.link);
  } else if (a.opt.output == HIL_REPLAY_ZMQ) {
    fprintf(stderr, "replay: publishing on %s\n", hil_replay_where(r));
    if (a.opt.progress && hil_replay_ctl_where(r)[0]) {
      fprintf(stderr, "replay: control requests on %s (hello, status and latest answered)\n",
              hil_replay_ctl_where(r));
    }
    if (a.opt.progress && hil_replay_cmd_where(r)[0]) {
      fprintf(stderr, "replay: commands on %s read and discarded\n", hil_replay_cmd_where(r));
    }
  }
  if (a.rt && mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
    fprintf(stderr, "replay: --rt: memory not locked (needs root or CAP_IPC_LOCK)\n");
  }
  playing = r;
  cli_on_stop_signals(on_signal);
  FILE *progress = a.opt.progress;
  const int rc = hil_replay_run(r);
  playing = NULL;
  if (view) {
    hil_view_replay_finish(view, r);
  }
  hil_replay_report rep;
  hil_replay_get_report(r, &rep);
  hil_replay_destroy(&r);
  if (!progress) { /* --quiet: the summary still prints */
    fprintf(stderr,
            "replay: %llu samples in %llu messages, %lld pass%s, timing error p50 %.0f us p99 "
            "%.0f us max %.0f us\n",
            (unsigned long long)rep.played, (unsigned long long)rep.messages, rep.passes,
            rep.passes == 1 ? "" : "es",
            rep.err_p50 * 1e6, rep.err_p99 * 1e6, rep.err_max * 1e6);
  }
  if (rep.ctl_requests || rep.cmd_messages) {
    fprintf(stderr,
            "replay: %llu control requests answered (%llu with an error), %llu command messages "
            "received and discarded\n",
            (unsigned long long)rep.ctl_requests, (unsigned long long)rep.ctl_errors,
            (unsigned long long)rep.cmd_messages);
  }
  if (rep.motor_commands) {
    fprintf(stderr, "replay: %llu MOTOR_COMMAND frames received and ignored\n",
            (unsigned long long)rep.motor_commands);
  }
  if (s.incomplete) {
    fprintf(stderr, "replay: warning: the recording has no end record (incomplete)\n");
  }
  if (s.stopped) {
    fprintf(stderr, "replay: stopped at the damaged record: %s\n", s.damage);
  } else if (s.damage[0]) {
    fprintf(stderr, "replay: skipped %lld damaged record%s; the first: %s\n", s.damaged,
            s.damaged == 1 ? "" : "s", s.damage);
  }
  const int damaged = s.stopped;
  hil_view_replay_destroy(&view); /* before the schedule it reads */
  hil_replay_free(&s);
  if (rc != HIL_OK) {
    fprintf(stderr, "achilles replay: %s\n", hil_strerror(rc));
    return 1;
  }
  return damaged ? 1 : 0;
}
