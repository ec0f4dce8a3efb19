/* hil/runtime/loop.c: pacing the runtime — realtime deadlines, lockstep, fast — and its statistics. */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include "hil/runtime/runtime_internal.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>

#include "hil/runtime/cpu.h"
#include "hil/error.h"
#include "hil/transport.h"

#define MAX_POLLITEMS 32
#define IDLE_WAIT_MS 20 /* how long a paused or waiting loop sleeps between checks */
#define MAX_EARLY_POLLS 8 /* realtime: polls for arriving input between two ticks */

/* Sleeps until the absolute monotonic time `t` (s); returns early when a stop is requested. */
static void sleep_until(const hil_runtime *rt, double t) {
  struct timespec ts;
  ts.tv_sec = (time_t)floor(t);
  ts.tv_nsec = (long)((t - floor(t)) * 1e9);
  while (!rt->stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

/* What the transports offer to wake the loop (sockets or descriptors), at most MAX_POLLITEMS. */
static int collect_pollitems(hil_runtime *rt, zmq_pollitem_t *items) {
  int n = 0;
  for (int i = 0; i < rt->ntransports && n < MAX_POLLITEMS; i++) {
    hil_transport *t = rt->transports[i];
    if (t->ops->pollitems) {
      n += t->ops->pollitems(t, items + n, MAX_POLLITEMS - n);
    }
  }
  return n;
}

/* The same as file descriptors, ZeroMQ sockets through their ZMQ_FD (readable when the socket
 * may have input; reading the socket dry resets it, which every transport's poll does). */
static int input_fds(hil_runtime *rt, struct pollfd *fds, int max) {
  zmq_pollitem_t items[MAX_POLLITEMS];
  int n = collect_pollitems(rt, items), k = 0;
  for (int i = 0; i < n && k < max; i++) {
    int fd = items[i].fd;
    size_t sz = sizeof fd;
    if (items[i].socket && zmq_getsockopt(items[i].socket, ZMQ_FD, &fd, &sz) != 0) {
      continue;
    }
    fds[k++] = (struct pollfd){.fd = fd, .events = POLLIN, .revents = 0};
  }
  return k;
}

static struct timespec relative_timespec(double s) {
  s = s > 0 ? s : 0;
  return (struct timespec){(time_t)floor(s), (long)((s - floor(s)) * 1e9)};
}

/* Realtime wait: until the deadline (until `spin_s` before it, then polling the clock), taking
 * input as it arrives. Commands are then stamped when they arrive, control requests are answered
 * at once, and the tick at the deadline has little left to do before the step: the command that
 * arrived a moment before its tick reaches the sensors sooner. At most MAX_EARLY_POLLS polls and
 * an eighth of the period spent polling, so that an fd that stays readable cannot make the loop
 * spin and a flood of messages cannot make it late (the tick's own polls still read it).
 * Leaves the descriptors it watched last in fds[MAX_POLLITEMS] and returns their count. */
static int wait_deadline(hil_runtime *rt, double deadline, struct pollfd *fds) {
  int nfds = input_fds(rt, fds, MAX_POLLITEMS), early = 0;
  const double wake_at = deadline - (rt->opt.spin_s > 0 ? rt->opt.spin_s : 0);
  const double budget = rt->model->opt.timestep / 8;
  double spent = 0;
  while (!rt->stop) {
    double now = hil__monotonic_now(), left = wake_at - now;
    if (left <= 0) {
      break;
    }
    struct timespec ts = relative_timespec(left);
    const int watch = early < MAX_EARLY_POLLS && spent < budget;
    if (ppoll(fds, watch ? (nfds_t)nfds : 0, &ts, NULL) > 0) {
      double begin = hil__monotonic_now();
      hil__poll_transports_until(rt, wake_at); /* a pass must not make the tick late */
      spent += hil__monotonic_now() - begin;
      early++;
      nfds = input_fds(rt, fds, MAX_POLLITEMS); /* a poll may have closed or reopened a port */
    }
  }
  while (!rt->stop && hil__monotonic_now() < deadline) {
  }
  return nfds;
}

/* Whether input arrived since the last poll (one non-blocking look at the descriptors that
 * wait_deadline watched). */
static int input_pending(struct pollfd *fds, int nfds) {
  struct timespec zero = {0, 0};
  return nfds > 0 && ppoll(fds, (nfds_t)nfds, &zero, NULL) != 0;
}

/* Waits up to timeout_ms for input on any transport (lockstep, pauses). */
static void wait_for_input(hil_runtime *rt, long timeout_ms) {
  zmq_pollitem_t items[MAX_POLLITEMS];
  int n = collect_pollitems(rt, items);
  if (n > 0) {
    zmq_poll(items, n, timeout_ms);
  } else {
    sleep_until(rt, hil__monotonic_now() + 1e-3 * (double)timeout_ms);
  }
}

/* --- status ---------------------------------------------------------------------------------- */

static void print_status(hil_runtime *rt, const hil_status *st, const char *prefix) {
  char transports[512] = "", record[256] = "";
  if (st->record_errors > 0) {
    snprintf(record, sizeof record, " | record errors %llu",
             (unsigned long long)st->record_errors);
  }
  if (st->constraint_rows > 0) {
    snprintf(record + strlen(record), sizeof record - strlen(record),
             " | contacts %d (%.3g N), stops %d, constraints %d active of %d (%d iterations)",
             st->contacts, st->normal_force, st->stops, st->constraint_active,
             st->constraint_rows, st->solver_iterations);
  }
  if (st->input_deferred > 0) {
    snprintf(record + strlen(record), sizeof record - strlen(record),
             " | input deferred %llu (pass p99 %.0f us)", (unsigned long long)st->input_deferred,
             1e6 * st->input_p99);
  }
  for (int i = 0; i < rt->ntransports; i++) {
    hil_transport *t = rt->transports[i];
    if (t->ops->describe) {
      size_t used = strlen(transports);
      snprintf(transports + used, sizeof transports - used, " | ");
      used = strlen(transports);
      t->ops->describe(t, transports + used, sizeof transports - used);
    }
  }
  fprintf(stderr,
          "%s t=%.3f s wall=%.1f s steps=%llu %s%s | late p50/p99/max %.0f/%.0f/%.0f us"
          " | compute p50/p99 %.1f/%.1f us | overruns %llu skipped %llu | cmds %llu ok"
          " %llu clamped %llu rejected %llu trips%s%s\n",
          prefix, st->sim_time, st->wall_time, (unsigned long long)st->steps,
          hil_mode_name(st->mode), st->paused ? " (paused)" : "", 1e6 * st->late_p50,
          1e6 * st->late_p99, 1e6 * st->late_max, 1e6 * st->compute_p50, 1e6 * st->compute_p99,
          (unsigned long long)st->overruns, (unsigned long long)st->skipped,
          (unsigned long long)st->commands.accepted, (unsigned long long)st->commands.clamped,
          (unsigned long long)(st->commands.rejected_nonfinite + st->commands.rejected_unknown +
                               st->commands.rejected_malformed),
          (unsigned long long)st->commands.watchdog_trips, record, transports);
}

static void report_status(hil_runtime *rt, const char *prefix, int whole_run) {
  hil_status st;
  if (whole_run) {
    hil_runtime_status_total(rt, &st);
  } else {
    hil_runtime_status(rt, &st);
  }
  for (int i = 0; i < rt->ntransports; i++) {
    hil_transport *t = rt->transports[i];
    if (t->ops->publish_status) {
      t->ops->publish_status(t, rt, &st);
    }
  }
  hil__record_status(rt, &st);
  if (!rt->opt.quiet) {
    print_status(rt, &st, prefix);
  }
}

/* Status once per period of wall time; the timing histograms cover one period each. */
static void maybe_report(hil_runtime *rt, double *next_report) {
  if (rt->status_due) { /* an error to tell: at once, outside the period */
    rt->status_due = 0;
    report_status(rt, "[achilles]", 0);
  }
  if (rt->opt.status_period_s <= 0) {
    return;
  }
  double now = hil__monotonic_now();
  if (now < *next_report) {
    return;
  }
  report_status(rt, "[achilles]", 0);
  hil_histogram_merge(&rt->late_total, &rt->late);
  hil_histogram_merge(&rt->compute_total, &rt->compute);
  hil_histogram_merge(&rt->input_total, &rt->input);
  hil_histogram_clear(&rt->late);
  hil_histogram_clear(&rt->compute);
  hil_histogram_clear(&rt->input);
  *next_report = now + rt->opt.status_period_s;
}

static int duration_reached(const hil_runtime *rt) {
  return rt->opt.duration_s > 0 &&
         rt->data->time >= rt->opt.duration_s - 0.5 * rt->model->opt.timestep;
}

/* One timed step: compute time goes to the histogram. */
static void timed_step(hil_runtime *rt) {
  double begin = hil__monotonic_now();
  hil__step(rt);
  hil_histogram_add(&rt->compute, hil__monotonic_now() - begin);
}

/* --- realtime ---------------------------------------------------------------------------------- */

/* Deadlines are absolute (start + k·period), so sleep jitter never accumulates into drift. */
static void run_realtime(hil_runtime *rt) {
  const double period = rt->model->opt.timestep;
  double next = hil__monotonic_now(), next_report = next + rt->opt.status_period_s;
  while (!rt->stop && !duration_reached(rt)) {
    struct pollfd fds[MAX_POLLITEMS];
    const int nfds = wait_deadline(rt, next, fds);
    double wake = hil__monotonic_now();
    hil_histogram_add(&rt->late, wake - next);
    rt->deadline_offset = next - rt->data->time;
    if (input_pending(fds, nfds)) { /* what arrived in the last moment still counts for this tick */
      hil__poll_transports(rt);
    }
    if (!rt->paused) {
      hil__step(rt);
    }
    double now = hil__monotonic_now();
    hil_histogram_add(&rt->compute, now - wake); /* the whole tick: intake, step, publishing */
    hil__poll_transports(rt); /* off the critical path: what came during the tick, link upkeep */
    next += period;
    if (rt->resynchronize) {
      next = now + period;
      rt->resynchronize = 0;
    } else if (now > next) {
      rt->overruns++;
      double behind = floor((now - next) / period); /* whole ticks already missed */
      double allowed = rt->opt.overrun == HIL_OVERRUN_CATCHUP ? rt->opt.max_catchup : 0;
      if (behind > allowed) {
        next += (behind - allowed) * period;
        rt->skipped += (uint64_t)(behind - allowed);
      }
    }
    maybe_report(rt, &next_report);
  }
}

/* --- lockstep and fast -------------------------------------------------------------------- */

/* With speed > 0, simulated time may run at most `speed` times as fast as wall time. */
static void pace(hil_runtime *rt, double wall_origin, double sim_origin) {
  if (rt->opt.speed > 0) {
    sleep_until(rt, wall_origin + (rt->data->time - sim_origin) / rt->opt.speed);
  }
}

static int lockstep_may_step(hil_runtime *rt) {
  if (rt->paused) {
    return 0;
  }
  if (rt->pending_steps > 0) {
    rt->pending_steps--;
    return 1;
  }
  if (rt->hook.lockstep_release && rt->hook.lockstep_release(rt->hook.user, rt)) {
    return 1;
  }
  return hil_commands_all_fresh(&rt->commands);
}

static void run_lockstep(hil_runtime *rt) {
  double next_report = hil__monotonic_now() + rt->opt.status_period_s;
  double wall_origin = hil__monotonic_now(), sim_origin = rt->data->time;
  while (!rt->stop && !duration_reached(rt)) {
    wait_for_input(rt, IDLE_WAIT_MS);
    if (rt->paused) { /* a pause is not banked: the pace starts again at the resume */
      wall_origin = hil__monotonic_now(), sim_origin = rt->data->time;
    }
    hil__poll_transports(rt);
    while (!rt->stop && !duration_reached(rt) && lockstep_may_step(rt)) {
      timed_step(rt);
      pace(rt, wall_origin, sim_origin);
      hil__poll_transports(rt);
      maybe_report(rt, &next_report); /* a long step grant still reports by wall time */
    }
    maybe_report(rt, &next_report);
  }
}

static void run_fast(hil_runtime *rt) {
  double next_report = hil__monotonic_now() + rt->opt.status_period_s;
  double wall_origin = hil__monotonic_now(), sim_origin = rt->data->time;
  while (!rt->stop && !duration_reached(rt)) {
    hil__poll_transports(rt);
    if (rt->paused) { /* as in lockstep: the pace starts again at the resume */
      wait_for_input(rt, IDLE_WAIT_MS);
      wall_origin = hil__monotonic_now(), sim_origin = rt->data->time;
    } else {
      timed_step(rt);
      pace(rt, wall_origin, sim_origin);
    }
    maybe_report(rt, &next_report);
  }
}

/* --- real-time scheduling -------------------------------------------------------------------- */

/* Asks for SCHED_FIFO, locked memory, a CPU and (--keep-awake) a spinner on it; says once what
 * the system granted and what it refused. Returns the spinner or NULL. */
static hil_cpu_awake *request_realtime(const hil_runtime *rt) {
  char granted[160] = "";
  struct sched_param param = {.sched_priority = HIL_RT_LOOP_PRIORITY};
  if (sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
    fprintf(stderr, "[achilles] --rt: SCHED_FIFO refused (%s); running with normal priority\n",
            strerror(errno));
  } else {
    strcat(granted, " SCHED_FIFO 80,");
  }
  if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
    fprintf(stderr, "[achilles] --rt: mlockall refused (%s); memory may page\n", strerror(errno));
  } else {
    strcat(granted, " memory locked,");
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (rt->opt.cpu >= 0 && rt->opt.cpu < CPU_SETSIZE) {
    CPU_SET(rt->opt.cpu, &set);
  }
  if (rt->opt.cpu >= 0 && sched_setaffinity(0, sizeof set, &set) != 0) {
    fprintf(stderr, "[achilles] --rt: CPU %d refused (%s); running on any CPU\n", rt->opt.cpu,
            strerror(errno));
  } else if (rt->opt.cpu >= 0) {
    snprintf(granted + strlen(granted), sizeof granted - strlen(granted), " on CPU %d,",
             rt->opt.cpu);
  }
  hil_cpu_awake *awake = NULL;
  if (rt->opt.keep_awake && rt->opt.cpu >= 0) {
    char err[128];
    awake = hil_cpu_awake_start(rt->opt.cpu, err, sizeof err);
    if (!awake) {
      fprintf(stderr, "[achilles] %s; running on\n", err);
    } else {
      strcat(granted, " kept awake,");
    }
  }
  if (granted[0]) {
    granted[strlen(granted) - 1] = '\0';
    fprintf(stderr, "[achilles] --rt:%s\n", granted);
  }
  return awake;
}

/* Motors to zero (the state a snapshot or a later step would carry on from), then the final
 * status: into the log, which is then closed, and out (with what the close said). No extra
 * step: a run of --duration S ends at simulation time S. */
static void shut_down(hil_runtime *rt) {
  hil_commands_clear(&rt->commands);
  hil_commands_apply(&rt->commands, rt->data, hil_runtime_loop_time(rt));
  hil_status st;
  hil_runtime_status_total(rt, &st);
  hil__record_status(rt, &st);
  hil__close_record(rt);
  report_status(rt, "[achilles] whole run:", 1);
}

int hil_runtime_run(hil_runtime *rt) {
  hil_cpu_awake *awake = rt->opt.realtime_priority ? request_realtime(rt) : NULL;
  /* the default 50 µs timer slack would be most of a tick's wake-up lateness (docs/runtime.md) */
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  rt->start_wall = hil__monotonic_now();
  hil__sense(rt); /* the state at t = 0 */
  switch (rt->opt.mode) {
  case HIL_MODE_LOCKSTEP:
    run_lockstep(rt);
    break;
  case HIL_MODE_FAST:
    run_fast(rt);
    break;
  case HIL_MODE_REALTIME:
  default:
    run_realtime(rt);
    break;
  }
  shut_down(rt);
  hil_cpu_awake_stop(&awake);
  return rt->nonfinite ? HIL_ENONFINITE : rt->record_errors > 0 ? HIL_EIO : HIL_OK;
}
