/* hil/record/player.c: the player: sends a schedule (schedule.c) with its original timing on the
 * live wire formats, ZeroMQ JSON (replay_zmq.c) or the serial protocol (replay_serial.c); see
 * replay.h and docs/replay.md. */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include "hil/record/replay_internal.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zmq.h>

#include "hil/clock.h"
#include "hil/error.h"
#include "hil/runtime/cpu.h"

static void sleep_until(double t) {
  struct timespec ts;
  ts.tv_sec = (time_t)t;
  ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

void hil_replay_options_default(hil_replay_options *o) {
  memset(o, 0, sizeof *o);
  o->rate = 1.0;
  o->output = HIL_REPLAY_ZMQ;
  snprintf(o->zmq_endpoint, sizeof o->zmq_endpoint, "tcp://127.0.0.1:5555");
  o->sndhwm = 1000;
  o->wait_subscriber = 1;
  snprintf(o->ctl_endpoint, sizeof o->ctl_endpoint, "tcp://127.0.0.1:5557");
  snprintf(o->cmd_endpoint, sizeof o->cmd_endpoint, "tcp://127.0.0.1:5556");
  hil_serial_options_default(&o->serial);
  o->spin_s = 500e-6;
  o->shift_after_s = 0.5e-3;
  o->cpu = -1;
  o->lead_s = 2e-3;
  o->status_period_s = 1.0;
}

/* --- creation --------------------------------------------------------------------------------- */

/* Whether this process may use SCHED_FIFO at prio: tried on the calling thread, then undone
 * (libzmq aborts when it cannot give its I/O thread the policy it was asked for). */
static int realtime_allowed(int prio) {
  int policy;
  struct sched_param old, sp = {.sched_priority = prio};
  if (pthread_getschedparam(pthread_self(), &policy, &old) != 0 ||
      pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0) {
    return 0;
  }
  pthread_setschedparam(pthread_self(), policy, &old);
  return 1;
}

hil_replay *hil_replay_new(const hil_replay_schedule *s, const hil_replay_options *o, char *err,
                           size_t err_sz) {
  if (!(o->rate > 0) || !isfinite(o->rate)) {
    snprintf(err, err_sz, "--rate: must be a positive number");
    return NULL;
  }
  hil_replay *r = calloc(1, sizeof *r);
  if (!r) {
    snprintf(err, err_sz, "out of memory");
    return NULL;
  }
  r->s = s;
  r->o = *o;
  r->rep.t = s->t_first;
  r->rt = o->rt_priority > 0 && realtime_allowed(o->rt_priority);
  if (o->rt_priority > 0 && !r->rt && o->progress) {
    fprintf(o->progress, "replay: SCHED_FIFO not granted (needs root or CAP_SYS_NICE); playing "
                         "without it\n");
  }
  hil_histogram_clear(&r->all);
  hil_histogram_clear(&r->period);
  int rc;
  if (o->output == HIL_REPLAY_ZMQ) {
    rc = hil__replay_zmq_open(r, err, err_sz);
  } else {
    r->o.serial.quiet = 1;
    r->port = hil_serial_port_new(&r->o.serial, err, err_sz);
    rc = r->port ? HIL_OK : HIL_ESYSTEM;
    if (r->port) {
      snprintf(r->where, sizeof r->where, "%s", hil_serial_port_path(r->port));
      ach_decoder_init(&r->dec);
      hil__replay_serial_table(r);
      r->per_frame = ACH_MAX_SENSORS_PER_FRAME;
    }
  }
  if (rc == HIL_OK && o->output == HIL_REPLAY_ZMQ && o->wait_hello && !r->ctl) {
    snprintf(err, err_sz, "--wait-hello: no control socket to hear a hello on (--ctl)");
    rc = HIL_ECONFIG;
  }
  if (rc != HIL_OK) {
    hil_replay_destroy(&r);
  }
  return r;
}

void hil_replay_destroy(hil_replay **pr) {
  if (!pr || !*pr) {
    return;
  }
  hil_replay *r = *pr;
  if (r->pub) {
    zmq_close(r->pub);
  }
  if (r->ctl) {
    zmq_close(r->ctl);
  }
  if (r->cmd) {
    zmq_close(r->cmd);
  }
  if (r->ctx) {
    zmq_ctx_term(r->ctx);
  }
  if (r->port) {
    hil__replay_serial_flush(r);
    hil_serial_port_destroy(&r->port);
  }
  free(r->group);
  free(r->newest);
  free(r->reply);
  free(r);
  *pr = NULL;
}

const char *hil_replay_where(const hil_replay *r) { return r->where; }
const char *hil_replay_ctl_where(const hil_replay *r) { return r->ctl_where; }
const char *hil_replay_cmd_where(const hil_replay *r) { return r->cmd_where; }
void hil_replay_request_stop(hil_replay *r) { r->stop = 1; }

void hil_replay_get_report(const hil_replay *r, hil_replay_report *out) {
  *out = r->rep;
  out->steps = hil__replay_played_steps(r);
  out->err_p50 = hil_histogram_quantile(&r->all, 0.5);
  out->err_p99 = hil_histogram_quantile(&r->all, 0.99);
  out->err_max = r->all.count ? r->all.max : 0;
}

/* --- playing ---------------------------------------------------------------------------------- */

static void service_input(hil_replay *r) {
  if (r->pub) {
    hil__replay_zmq_drain(r);
  } else {
    hil__replay_serial_service(r);
  }
}

/* ZeroMQ: the first subscription, or (wait_hello) a hello answered while a subscriber to status
 * is connected; serial: an accepted HELLO. 0, or -1 when stopped. */
static int wait_for_peer(hil_replay *r) {
  const int hello = r->pub && r->o.wait_hello && r->ctl;
  if (r->pub && !r->o.wait_subscriber && !hello) {
    return 0;
  }
  if (r->o.progress && hello) {
    fprintf(r->o.progress, "replay: waiting for a controller's hello on %s (with a subscriber to "
            "status on %s)\n", r->ctl_where, r->where);
  } else if (r->o.progress) {
    fprintf(r->o.progress, r->pub ? "replay: waiting for a subscriber on %s\n"
                                  : "replay: waiting for HELLO on %s (firmware should open it)\n",
            r->where);
  }
  while (!r->stop) {
    if (r->pub) {
      zmq_pollitem_t it[3] = {{.socket = r->pub, .fd = 0, .events = ZMQ_POLLIN, .revents = 0}};
      int n = 1;
      void *const side[2] = {r->ctl, r->cmd};
      for (int k = 0; k < 2; k++) {
        if (side[k]) {
          it[n++] = (zmq_pollitem_t){.socket = side[k], .fd = 0, .events = ZMQ_POLLIN,
                                     .revents = 0};
        }
      }
      zmq_poll(it, n, (long)(SERVICE_S * 1000));
      const int subscribed = hil__replay_zmq_drain(r); /* first: a hello sees the subscriptions so far */
      hil__replay_zmq_service_sides(r);                /* a controller's hello is answered while waiting */
      if (hello ? r->hello_start : subscribed || (r->o.ready && r->o.ready(r->o.user))) {
        return 0;
      }
      continue;
    }
    hil__replay_serial_service(r);
    if (r->connected) {
      return 0;
    }
    const int fd = hil_serial_port_fd(r->port);
    struct pollfd pfd = {.fd = fd, .events = POLLIN, .revents = 0};
    if (fd < 0 || poll(&pfd, 1, (int)(SERVICE_S * 1000)) < 0 || (pfd.revents & POLLHUP)) {
      sleep_until(hil_monotonic_s() + 0.01);
    }
  }
  return -1;
}

/* The control and command sockets while playing: non-blocking, at most every SIDE_S, and only
 * once the player has slept since its last send (on a shared CPU, work right after a send delays
 * the I/O thread that delivers it), unless that has not happened for SERVICE_S (catching up). */
static void service_sides(hil_replay *r, double now, int slept) {
  if ((r->ctl || r->cmd) && now >= r->next_side && (slept || now >= r->next_side + SERVICE_S)) {
    r->next_side = now + SIDE_S;
    hil__replay_zmq_service_sides(r);
  }
}

/* sleeps until spin_s before the deadline (looking at the input every SERVICE_S), then spins */
static void wait_deadline(hil_replay *r, double deadline) {
  for (int slept = 0;; slept = 1) {
    service_input(r);
    const double now = hil_monotonic_s(), wake = deadline - r->o.spin_s;
    if (r->pub) {
      service_sides(r, now, slept);
    }
    if (now >= wake || r->stop) {
      break;
    }
    sleep_until(fmin(wake, now + SERVICE_S));
  }
  while (!r->stop && hil_monotonic_s() < deadline) {
    sched_yield(); /* threads of the same priority on this CPU (the I/O thread) still run */
  }
}

static void format_s(char *out, size_t n, double s) {
  if (s < 1e-3) {
    snprintf(out, n, "%.0f us", s * 1e6);
  } else if (s < 1.0) {
    snprintf(out, n, "%.2f ms", s * 1e3);
  } else {
    snprintf(out, n, "%.3f s", s);
  }
}

static void print_progress(hil_replay *r, const char *what, const hil_histogram *h) {
  if (!r->o.progress) {
    return;
  }
  char p50[32], p99[32], mx[32];
  format_s(p50, sizeof p50, hil_histogram_quantile(h, 0.5));
  format_s(p99, sizeof p99, hil_histogram_quantile(h, 0.99));
  format_s(mx, sizeof mx, h->count ? h->max : 0);
  const uint64_t total = (uint64_t)r->s->n;
  char behind[64] = "";
  if (r->rep.shifts) {
    snprintf(behind, sizeof behind, ", %.2f ms behind after %llu stalls", r->rep.behind * 1e3,
             (unsigned long long)r->rep.shifts);
  }
  fprintf(r->o.progress,
          "replay: %s %llu/%llu samples (pass %lld), t %.3f s, wall %.3f s, timing error p50 %s "
          "p99 %s max %s, %llu late > 1 ms%s\n",
          what, (unsigned long long)(total ? r->rep.played - (uint64_t)(r->rep.passes - 1) * total
                                           : 0),
          (unsigned long long)total, r->rep.passes, r->rep.t, r->rep.wall, p50, p99, mx,
          (unsigned long long)r->rep.late_1ms, behind);
}

static void periodic(hil_replay *r, double now) {
  if (r->o.status_period_s <= 0 || now < r->next_status) {
    return;
  }
  r->next_status += r->o.status_period_s;
  if (r->next_status < now) {
    r->next_status = now + r->o.status_period_s;
  }
  print_progress(r, "played", &r->period);
  if (r->pub) {
    hil__replay_zmq_status(r, 0);
  } else {
    hil__replay_serial_status(r);
  }
  hil_histogram_clear(&r->period);
}

/* encodes every sample of the instant [i, j) ahead of its deadline */
static void prepare(hil_replay *r, size_t i, size_t j, long long pass) {
  hil_replay_sample smp;
  r->ngroup = 0;
  for (size_t k = i; k < j && r->pub; k++) {
    hil_replay_sample_at(&smp, r->s, k, pass);
    hil__replay_zmq_add(r, &smp, 0, 0);
    if (r->o.truth && smp.has_truth) {
      hil__replay_zmq_add(r, &smp, 1, 0);
    }
  }
  if (r->pub) {
    return;
  }
  r->nstage = 1;
  r->stage[0].count = 0;
  r->stage[0].sim_time_ns =
      hil_serial_time_ns(r->s->entry[i].t + (double)pass * hil_replay_pass_length(r->s));
  for (size_t k = i; k < j; k++) {
    hil_replay_sample_at(&smp, r->s, k, pass);
    hil__replay_serial_add(r, &smp);
  }
}

/* sends what prepare() encoded, and the messages that did not fit in the group */
static void send_instant(hil_replay *r, size_t i, size_t j, long long pass) {
  if (!r->pub) {
    if (r->connected) {
      hil__replay_serial_send_stage(r);
    } else {
      r->rep.send_failed += (uint64_t)r->nstage; /* the board went away: said on stderr */
    }
    return;
  }
  for (int k = 0; k < r->ngroup; k++) {
    hil__replay_zmq_send_msg(r, &r->group[k]);
  }
  /* an instant with more messages than the group holds: the rest encoded now, in order */
  int m = 0;
  hil_replay_sample smp;
  for (size_t k = i; k < j; k++) {
    const int truth = r->o.truth && r->s->entry[k].has_truth;
    if (m + 1 + truth > GROUP_MAX) {
      hil_replay_sample_at(&smp, r->s, k, pass);
      if (m >= GROUP_MAX) {
        hil__replay_zmq_add(r, &smp, 0, 1);
      }
      if (truth && m + 1 >= GROUP_MAX) {
        hil__replay_zmq_add(r, &smp, 1, 1);
      }
    }
    m += 1 + truth;
  }
}

/* Instant [i, j) of pass `pass`. Its due time is that of its t, less the gaps played across
 * (hil_replay_due_offset); one earlier than the latest t (a sensor on its own clock) is due with
 * the latest, so it goes out right after it and its timing error is measured from there. */
static void play_instant(hil_replay *r, size_t i, size_t j, long long pass, double *deadline) {
  const hil_replay_schedule *s = r->s;
  const double t = s->entry[i].t + (double)pass * hil_replay_pass_length(s);
  const double due = r->start + r->rep.behind + hil_replay_due_offset(s, i, pass) / r->o.rate;
  *deadline = fmax(*deadline, due);
  prepare(r, i, j, pass);
  wait_deadline(r, *deadline);
  if (r->stop) {
    return;
  }
  send_instant(r, i, j, pass);
  const double now = hil_monotonic_s(), late = fmax(now - *deadline, 0.0);
  hil_histogram_add(&r->all, late);
  hil_histogram_add(&r->period, late);
  r->rep.late_1ms += late > 1e-3;
  if (r->o.shift && late > r->o.shift_after_s) { /* the rest keeps its intervals */
    r->rep.behind += late;
    r->rep.shifts++;
    *deadline += late;
  }
  r->rep.instants++;
  r->rep.played += (uint64_t)(j - i);
  r->rep.t = fmax(r->rep.t, t);
  r->rep.wall = now - r->start;
  periodic(r, now);
  if (r->o.on_instant) {
    r->o.on_instant(r->o.user, r, i, j, pass);
  }
}

/* the passes, then the final status and the summary */
static void play(hil_replay *r) {
  const hil_replay_schedule *s = r->s;
  r->start = hil_monotonic_s() + r->o.lead_s;
  r->next_status = r->start + r->o.status_period_s;
  double deadline = r->start;
  for (long long pass = 0; !r->stop; pass++) {
    r->rep.passes = pass + 1;
    for (size_t i = 0; i < s->n && !r->stop;) {
      size_t j = i + 1;
      while (j < s->n && s->entry[j].t == s->entry[i].t) {
        j++;
      }
      play_instant(r, i, j, pass, &deadline);
      i = j;
    }
    if (!r->o.loop || (r->o.loops > 0 && pass + 1 >= r->o.loops)) {
      break;
    }
  }
  r->rep.stopped = r->stop != 0;
  if (r->pub) {
    hil__replay_zmq_status(r, 1);
  } else {
    hil__replay_serial_status(r);
    hil__replay_serial_flush(r);
  }
  print_progress(r, r->rep.stopped ? "stopped after" : "done:", &r->all);
}

int hil_replay_run(hil_replay *r) {
  if (r->s->n == 0) {
    return HIL_EINVAL;
  }
  if (r->port && r->o.progress) {
    fprintf(r->o.progress, "replay: sensor ids on %s:\n", r->where);
    hil__replay_serial_print_table(r, r->o.progress);
  }
  int policy = SCHED_OTHER;
  struct sched_param old, sp = {.sched_priority = r->o.rt_priority};
  const int rt = r->rt && pthread_getschedparam(pthread_self(), &policy, &old) == 0 &&
                 pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
  r->rep.realtime = rt;
  cpu_set_t old_cpus;
  const int pinned = r->o.cpu >= 0 && r->o.cpu < CPU_SETSIZE &&
                     sched_getaffinity(0, sizeof old_cpus, &old_cpus) == 0;
  if (pinned) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(r->o.cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
  }
  char why[128];
  hil_cpu_awake *awake =
      pinned && r->o.keep_awake ? hil_cpu_awake_start(r->o.cpu, why, sizeof why) : NULL;
  if (pinned && r->o.keep_awake && !awake && r->o.progress) {
    fprintf(r->o.progress, "replay: %s; playing on\n", why);
  }
  if (wait_for_peer(r) == 0) {
    play(r);
  } else if (r->o.progress) {
    fprintf(r->o.progress, "replay: stopped before the first sample\n");
  }
  r->rep.stopped = r->stop != 0;
  hil_cpu_awake_stop(&awake);
  if (rt) {
    pthread_setschedparam(pthread_self(), policy, &old);
  }
  if (pinned) {
    sched_setaffinity(0, sizeof old_cpus, &old_cpus);
  }
  return HIL_OK;
}
