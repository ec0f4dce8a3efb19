/* tools/bench/soak.c: a long run of the realtime loop with a client, watched from outside.
 *
 * A child process runs the simulator (CONFIG in realtime mode, its ZeroMQ sockets on ipc://
 * endpoints in a temporary directory); this process is its controller: it subscribes to every
 * stream, sends one command message per period to every actuator, and asks for the status once
 * per interval. Each interval prints the simulator's resident memory, open descriptors and
 * threads (from /proc/PID/status and /proc/PID/fd: the child alone), its overruns and lateness
 * and its counters, and what the client received. A leak shows as a growing column.
 *
 *   soak CONFIG [--duration S] [--interval S] [--flood | --alternate S] [--input-budget-us US]
 *        [--status-period S] [--rt]
 *
 * --flood replaces the paced commands by a flood (as fast as ZeroMQ takes them), to watch the
 * input budget (docs/runtime.md); --input-budget-us -1 switches the budget off for comparison.
 * --alternate S switches the flood on and off every S seconds for the whole run and compares
 * the two conditions from the simulator's periodic status messages (each covers one status
 * period, 0.1 s by default in this mode): a period that lies wholly inside one condition, after
 * a settling period, counts for that condition. Interleaving the conditions this finely makes a
 * change of machine load (another process, the host of a VM) hit both alike, which separate
 * idle and flooded runs cannot promise. --hog makes the second condition a client that only
 * spins (its paced commands go on, no flood): the CPU a flood's sender takes, without the
 * messages, to tell what the messages cost the loop from what a busy neighbour costs it.
 * --rt runs the simulator as `achilles run --rt` does (SCHED_FIFO for its loop and I/O thread).
 * Exit status 0 when the run ended cleanly and nothing failed to send, 1 otherwise.
 */
#define _GNU_SOURCE /* mkdtemp */
#include <dirent.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include <cjson/cJSON.h>

#include "hil/error.h"
#include "hil/runtime/runtime.h"
#include "hil/zmq/zmq_transport.h"

typedef struct soak_args {
  const char *config;
  double duration_s, interval_s, input_budget_s, alternate_s, status_period_s;
  int flood, realtime_priority, hog;
} soak_args;

static volatile sig_atomic_t child_stop;
static hil_runtime *child_rt;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void on_term(int sig) {
  (void)sig;
  child_stop = 1;
  if (child_rt) {
    hil_runtime_request_stop(child_rt);
  }
}

/* The simulator: CONFIG in realtime with its zmq sockets at dir; returns the exit status. */
static int run_simulator(const soak_args *a, const char *dir) {
  char err[1024];
  hil_options o;
  hil_options_default(&o);
  if (hil_options_parse(&o, a->config, err, sizeof err) != HIL_OK) {
    fprintf(stderr, "soak: %s\n", err);
    return 1;
  }
  o.mode = HIL_MODE_REALTIME;
  o.quiet = 1;
  o.input_budget_s = a->input_budget_s;
  o.realtime_priority = a->realtime_priority;
  if (a->status_period_s > 0) {
    o.status_period_s = a->status_period_s;
  }
  hil_zmq_options zo;
  if (hil_zmq_options_parse(&zo, a->config, err, sizeof err) != HIL_OK) {
    fprintf(stderr, "soak: %s\n", err);
    return 1;
  }
  if (a->realtime_priority) { /* as `achilles run --rt`: the I/O thread just below the loop */
    zo.io_priority = HIL_RT_IO_PRIORITY;
  }
  snprintf(zo.pub, sizeof zo.pub, "ipc://%s/pub", dir);
  snprintf(zo.cmd, sizeof zo.cmd, "ipc://%s/cmd", dir);
  snprintf(zo.ctl, sizeof zo.ctl, "ipc://%s/ctl", dir);
  hil_runtime *rt = hil_runtime_new(a->config, &o, err, sizeof err);
  hil_transport *t = rt ? hil_zmq_transport_new(&zo, err, sizeof err) : NULL;
  if (!rt || !t || hil_runtime_add_transport(rt, t) != HIL_OK) {
    fprintf(stderr, "soak: simulator: %s\n", err);
    hil_runtime_destroy(&rt);
    return 1;
  }
  child_rt = rt;
  signal(SIGTERM, on_term);
  if (child_stop) {
    hil_runtime_request_stop(rt);
  }
  const int rc = hil_runtime_run(rt);
  child_rt = NULL;
  hil_runtime_destroy(&rt);
  return rc == HIL_OK ? 0 : 1;
}

/* --- the watcher --------------------------------------------------------------------------- */

typedef struct proc_figures {
  double rss_mb;
  int threads, fds;
} proc_figures;

static proc_figures read_proc(pid_t pid) {
  proc_figures p = {0, 0, 0};
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  while (f && fgets(line, sizeof line, f)) {
    long kb = 0;
    if (sscanf(line, "VmRSS: %ld kB", &kb) == 1) {
      p.rss_mb = (double)kb / 1024.0;
    }
    sscanf(line, "Threads: %d", &p.threads);
  }
  if (f) {
    fclose(f);
  }
  snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
  DIR *d = opendir(path);
  for (struct dirent *e; d && (e = readdir(d));) {
    p.fds += e->d_name[0] != '.';
  }
  if (d) {
    closedir(d);
  }
  return p;
}

/* One periodic status message as the watcher saw it (--alternate). */
typedef struct period {
  double arrived;        /* the watcher's clock, s */
  double late_p50, late_p99, steps, overruns;
} period;

#define MAX_PERIODS 200000

typedef struct client {
  void *ctx, *sub, *push, *req;
  long received, markers;
  char names[32][64];
  int nact;
  period *periods; /* --alternate: every periodic status, in order of arrival */
  int nperiods;
} client;

static void *connect_socket(client *c, int type, const char *dir, const char *name) {
  char ep[300];
  snprintf(ep, sizeof ep, "ipc://%s/%s", dir, name);
  void *s = zmq_socket(c->ctx, type);
  const int linger = 0, timeout = 2000, hwm = 100000;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
  zmq_setsockopt(s, ZMQ_RCVHWM, &hwm, sizeof hwm);
  if (type == ZMQ_SUB) {
    zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0);
  }
  if (type == ZMQ_REQ) {
    const int on = 1;
    zmq_setsockopt(s, ZMQ_REQ_RELAXED, &on, sizeof on);
    zmq_setsockopt(s, ZMQ_REQ_CORRELATE, &on, sizeof on);
  }
  zmq_connect(s, ep);
  return s;
}

/* One control round trip; NULL when the simulator does not answer. */
static cJSON *request(client *c, const char *text) {
  char buf[1 << 16];
  if (zmq_send(c->req, text, strlen(text), 0) < 0) {
    return NULL;
  }
  const int n = zmq_recv(c->req, buf, sizeof buf - 1, 0);
  if (n < 0) {
    return NULL;
  }
  buf[n < (int)sizeof buf - 1 ? n : (int)sizeof buf - 1] = '\0';
  return cJSON_Parse(buf);
}

/* hello until it answers; keeps the actuator names. */
static int hello(client *c, double give_up_at) {
  while (now_s() < give_up_at) {
    cJSON *h = request(c, "{\"cmd\":\"hello\"}");
    if (!h) {
      continue; /* the REQ is relaxed: it may ask again */
    }
    const cJSON *a;
    cJSON_ArrayForEach(a, cJSON_GetObjectItem(h, "actuators")) {
      const cJSON *n = cJSON_GetObjectItem(a, "name");
      if (c->nact < 32 && cJSON_IsString(n)) {
        snprintf(c->names[c->nact++], sizeof c->names[0], "%s", n->valuestring);
      }
    }
    cJSON_Delete(h);
    return 0;
  }
  return -1;
}

static void send_commands(client *c, double t) {
  char msg[2048];
  int len = snprintf(msg, sizeof msg, "{\"v\":1,\"commands\":{");
  for (int i = 0; i < c->nact && len < (int)sizeof msg - 100; i++) {
    len += snprintf(msg + len, sizeof msg - (size_t)len, "%s\"%s\":%.6f", i ? "," : "",
                    c->names[i], 0.05 * sin(t + i));
  }
  len += snprintf(msg + len, sizeof msg - (size_t)len, "}}");
  zmq_send(c->push, msg, (size_t)len, ZMQ_DONTWAIT);
}

static double num(const cJSON *o, const char *a, const char *b) {
  const cJSON *x = cJSON_GetObjectItem(o, a);
  x = b ? cJSON_GetObjectItem(x, b) : x;
  return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

/* Keeps a periodic status message's figures (--alternate). */
static void keep_period(client *c, const char *body, int len) {
  cJSON *st = cJSON_ParseWithLength(body, (size_t)len);
  if (st && cJSON_IsFalse(cJSON_GetObjectItem(st, "whole_run")) && c->nperiods < MAX_PERIODS) {
    const cJSON *late = cJSON_GetObjectItem(st, "late_s");
    c->periods[c->nperiods++] = (period){now_s(), num(late, "p50", NULL), num(late, "p99", NULL),
                                         num(st, "steps", NULL), num(st, "overruns", NULL)};
  }
  cJSON_Delete(st);
}

static void drain(client *c) {
  char topic[128], body[4096];
  for (;;) {
    const int n = zmq_recv(c->sub, topic, sizeof topic - 1, ZMQ_DONTWAIT);
    if (n < 0) {
      return;
    }
    const int len = zmq_recv(c->sub, body, sizeof body, 0);
    c->received++;
    c->markers += n == 4 && memcmp(topic, "step", 4) == 0;
    if (c->periods && n == 6 && memcmp(topic, "status", 6) == 0 && len > 0 &&
        len <= (int)sizeof body) {
      keep_period(c, body, len);
    }
  }
}

/* One line: the process's figures, the status, what the client saw. Returns send_failed. */
static double print_interval(client *c, pid_t pid, double elapsed) {
  const proc_figures p = read_proc(pid);
  cJSON *r = request(c, "{\"cmd\":\"status\"}");
  const cJSON *st = r ? cJSON_GetObjectItem(r, "status") : NULL;
  if (!st) {
    printf("%7.1f s  no status (the simulator does not answer)\n", elapsed);
    cJSON_Delete(r);
    return NAN;
  }
  const double steps = num(st, "steps", NULL), overruns = num(st, "overruns", NULL);
  const cJSON *late = cJSON_GetObjectItem(st, "late_s");
  printf("%7.1f s  rss %.1f MB  fds %d  threads %d | steps %.0f overruns %.0f (%.2f %%) skipped"
         " %.0f late p50/p99/max %.0f/%.0f/%.0f us | cmds %.0f ok, %.0f rejected, %.0f trips,"
         " input deferred %.0f | samples %.0f, zmq sent %.0f failed %.0f | client got %ld"
         " (%ld step markers)\n",
         elapsed, p.rss_mb, p.fds, p.threads, steps, overruns, 100 * overruns / fmax(steps, 1),
         num(st, "skipped", NULL), 1e6 * num(late, "p50", NULL), 1e6 * num(late, "p99", NULL),
         1e6 * num(late, "max", NULL), num(st, "commands", "accepted"),
         num(st, "commands", "rejected_malformed") + num(st, "commands", "rejected_unknown") +
             num(st, "commands", "rejected_nonfinite"),
         num(st, "commands", "watchdog_trips"), num(st, "input_deferred", NULL),
         num(st, "samples_published", NULL), num(st, "zmq", "sent"),
         num(st, "zmq", "send_failed"), c->received, c->markers);
  fflush(stdout);
  const double failed = num(st, "zmq", "send_failed");
  cJSON_Delete(r);
  return failed;
}

static int compare_doubles(const void *x, const void *y) {
  const double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static double median(double *v, int n) {
  if (n == 0) {
    return NAN;
  }
  qsort(v, (size_t)n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The flood is on in the odd segments of --alternate. */
static int segment_of(const soak_args *a, double since_start) {
  return (int)floor(since_start / a->alternate_s);
}

/* --alternate: per condition, the median over its periods of the periods' late p50 and p99,
 * and its overruns; then the ratios. A period counts when it lies inside one segment and began
 * at least `settle` after the segment did (what the other condition left queued is gone). */
static void print_alternation(const soak_args *a, const client *c, double start) {
  const double settle = 0.05;
  double *v = malloc(sizeof *v * 4 * (size_t)(c->nperiods + 1));
  if (!v) {
    return;
  }
  double *p50[2] = {v, v + c->nperiods}, *p99[2] = {v + 2 * c->nperiods, v + 3 * c->nperiods};
  int n[2] = {0, 0};
  double steps[2] = {0, 0}, overruns[2] = {0, 0};
  for (int i = 1; i < c->nperiods; i++) {
    const period *was = &c->periods[i - 1], *p = &c->periods[i];
    const int seg = segment_of(a, was->arrived - start);
    if (seg != segment_of(a, p->arrived - start) ||
        was->arrived - start < seg * a->alternate_s + settle || isnan(p->late_p50)) {
      continue;
    }
    const int flooded = seg % 2;
    p50[flooded][n[flooded]] = p->late_p50;
    p99[flooded][n[flooded]++] = p->late_p99;
    steps[flooded] += p->steps - was->steps;
    overruns[flooded] += p->overruns - was->overruns;
  }
  double fig[2][2];
  for (int k = 0; k < 2; k++) {
    fig[k][0] = median(p50[k], n[k]), fig[k][1] = median(p99[k], n[k]);
  }
  const char *other = a->hog ? "spinning" : "flooded";
  printf("alternate: idle %d periods, late p50/p99 (medians over periods) %.0f/%.0f us, overruns"
         " %.2f %%; %s %d periods, %.0f/%.0f us, overruns %.2f %%; %s/idle p50 %.2f, p99 %.2f\n",
         n[0], 1e6 * fig[0][0], 1e6 * fig[0][1], 100 * overruns[0] / fmax(steps[0], 1), other,
         n[1], 1e6 * fig[1][0], 1e6 * fig[1][1], 100 * overruns[1] / fmax(steps[1], 1), other,
         fig[1][0] / fig[0][0], fig[1][1] / fig[0][1]);
  fflush(stdout);
  free(v);
}

static int watch(const soak_args *a, pid_t pid, const char *dir) {
  client c;
  memset(&c, 0, sizeof c);
  c.ctx = zmq_ctx_new();
  c.sub = connect_socket(&c, ZMQ_SUB, dir, "pub");
  c.push = connect_socket(&c, ZMQ_PUSH, dir, "cmd");
  c.req = connect_socket(&c, ZMQ_REQ, dir, "ctl");
  const double start = now_s();
  int rc = hello(&c, start + 10) == 0 ? 0 : 1;
  if (a->alternate_s > 0 && !(c.periods = malloc(sizeof *c.periods * MAX_PERIODS))) {
    rc = 1;
  }
  double next_cmd = now_s(), next_print = now_s() + a->interval_s, failed = 0;
  while (rc == 0 && now_s() - start < a->duration_s) {
    drain(&c);
    const double now = now_s();
    const int busy = a->alternate_s > 0 ? segment_of(a, now - start) % 2 : a->flood;
    const int flood = busy && !a->hog; /* --hog: as busy, but only the paced commands */
    if (flood || now >= next_cmd) {
      send_commands(&c, now - start);
      next_cmd = flood ? now : next_cmd + 1e-3;
    }
    if (now >= next_print && !c.periods) { /* a status request would publish a status too */
      failed = print_interval(&c, pid, now - start);
      rc = isnan(failed) || failed > 0 ? 1 : 0;
      next_print += a->interval_s;
    }
    if (!busy) {
      zmq_pollitem_t item = {c.sub, 0, ZMQ_POLLIN, 0};
      zmq_poll(&item, 1, 1);
    }
  }
  if (rc == 0 && c.periods) {
    print_alternation(a, &c, start);
  }
  free(c.periods);
  c.periods = NULL;
  if (rc == 0) { /* the end of the run */
    failed = print_interval(&c, pid, now_s() - start);
    rc = isnan(failed) || failed > 0 ? 1 : 0;
  }
  zmq_close(c.sub);
  zmq_close(c.push);
  zmq_close(c.req);
  zmq_ctx_term(c.ctx);
  return rc;
}

static int parse_args(soak_args *a, int argc, char **argv) {
  static const struct option opts[] = {{"duration", required_argument, NULL, 'd'},
                                       {"interval", required_argument, NULL, 'i'},
                                       {"flood", no_argument, NULL, 'f'},
                                       {"alternate", required_argument, NULL, 'a'},
                                       {"status-period", required_argument, NULL, 's'},
                                       {"hog", no_argument, NULL, 'g'},
                                       {"input-budget-us", required_argument, NULL, 'b'},
                                       {"rt", no_argument, NULL, 'r'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  *a = (soak_args){.duration_s = 600, .interval_s = 10};
  int opt;
  while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (opt) {
    case 'd':
      a->duration_s = atof(optarg);
      break;
    case 'i':
      a->interval_s = atof(optarg);
      break;
    case 'f':
      a->flood = 1;
      break;
    case 'a':
      a->alternate_s = atof(optarg);
      break;
    case 's':
      a->status_period_s = atof(optarg);
      break;
    case 'g':
      a->hog = 1;
      break;
    case 'b':
      a->input_budget_s = atof(optarg) * 1e-6;
      break;
    case 'r':
      a->realtime_priority = 1;
      break;
    case 'h':
      return 1;
    default:
      return -1;
    }
  }
  if (optind != argc - 1 || !(a->duration_s > 0) || !(a->interval_s > 0) ||
      !(a->alternate_s >= 0) || (a->alternate_s > 0 && a->flood) || !(a->status_period_s >= 0) ||
      (a->hog && !(a->alternate_s > 0))) {
    return -1;
  }
  if (a->alternate_s > 0 && a->status_period_s == 0) {
    a->status_period_s = 0.1;
  }
  a->config = argv[optind];
  return 0;
}

int main(int argc, char **argv) {
  soak_args a;
  const int parsed = parse_args(&a, argc, argv);
  if (parsed != 0) {
    fprintf(parsed > 0 ? stdout : stderr, "usage: soak CONFIG [--duration S (600)] [--interval S (10)]"
                    " [--flood | --alternate S [--hog]] [--status-period S (config; 0.1 with"
                    " --alternate)] [--input-budget-us US (-1: off)] [--rt]\n");
    return parsed > 0 ? 0 : 2;
  }
  char dir[] = "/tmp/achilles-soak-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("soak: mkdtemp");
    return 1;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    _exit(run_simulator(&a, dir));
  }
  if (a.alternate_s > 0) {
    printf("soak: %s, simulator pid %d, %.0f s, %s on and off every %g s\n", a.config, (int)pid,
           a.duration_s, a.hog ? "a spinning client (no flood)" : "command flood", a.alternate_s);
  } else {
    printf("soak: %s, simulator pid %d, %.0f s, a line every %.0f s%s\n", a.config, (int)pid,
           a.duration_s, a.interval_s, a.flood ? ", command flood" : "");
  }
  int rc = pid > 0 ? watch(&a, pid, dir) : 1;
  int status = 0;
  if (pid > 0) {
    kill(pid, SIGTERM);
    waitpid(pid, &status, 0);
  }
  const int child_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  printf("soak: simulator %s\n", child_ok ? "exited cleanly" : "failed");
  char path[64];
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, (const char *[]){"pub", "cmd", "ctl"}[i]);
    unlink(path);
  }
  rmdir(dir);
  return rc == 0 && child_ok ? 0 : 1;
}
