/* hil/view/replay_view.c: the view of a replay — the player's side. The player calls on_instant
 * after each instant it sent; this copies the instant's samples and, at the display rate, the
 * replay's figures into the triple buffer the server thread reads (view.h). Nothing here waits
 * or allocates while playing. */
#include "hil/view/view_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hil/error.h"

#define STATUS_S 0.25 /* s between two status messages of a replay */

struct hil_view_replay {
  view_shared sh;
  view_server *server;
  char url[HIL_VIEW_ADDRESS_MAX + 32];
  hil_replay_sample *smp; /* [nsensor]: the newest sample of each sensor */
  int *has;
  double period, next_frame, next_status;
  uint64_t frames, statuses;
};

/* the coarse clock (1–4 ms steps) suffices for a 60 Hz display and is the cheapest to read */
static double coarse_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The replay's figures in the live status layout (as the player's own status message). */
static void fill_status(hil_status *st, const hil_replay_report *rep) {
  memset(st, 0, sizeof *st);
  st->sim_time = rep->t;
  st->wall_time = rep->wall;
  st->steps = rep->steps;
  st->mode = HIL_MODE_REALTIME;
  st->overruns = rep->late_1ms;
  st->late_p50 = rep->err_p50;
  st->late_p99 = rep->err_p99;
  st->late_max = rep->err_max;
  st->whole_run = 1; /* the report's quantiles cover the whole replay */
  st->samples_published = rep->played;
}

static void publish(hil_view_replay *v, const hil_replay *r, int finished) {
  view_frames *fr = &v->sh.frames;
  view_frame *f = &fr->f[fr->back];
  const int n = v->sh.nsensor;
  hil_replay_get_report(r, &f->rep);
  f->seq = ++v->frames;
  f->t = f->rep.t;
  f->wall = f->rep.wall;
  f->steps = f->rep.steps;
  f->paused = 0;
  f->ncon = 0;
  memcpy(f->rsmp, v->smp, (size_t)n * sizeof *f->rsmp);
  memcpy(f->has, v->has, (size_t)n * sizeof *f->has);
  for (int i = 0; i < n; i++) { /* what the Foxglove subscriptions compare to see a new sample */
    f->smp[i].seq = v->smp[i].seq;
    f->smp[i].t = v->smp[i].t;
  }
  const double c = coarse_now_s();
  if (finished || c >= v->next_status || f->status_seq != v->statuses) {
    /* a new status 4 times a second (the page's figures, not a stream to plot); a frame that
       missed the last one catches up */
    if (finished || c >= v->next_status) {
      v->statuses++;
      v->next_status = c + STATUS_S;
    }
    fill_status(&f->status, &f->rep);
    f->status_seq = v->statuses;
  }
  f->finished = finished;
  snprintf(f->transports, sizeof f->transports, "replay %s: %llu messages sent, %llu failed",
           hil_replay_where(r), (unsigned long long)f->rep.messages,
           (unsigned long long)f->rep.send_failed);
  fr->back = atomic_exchange(&fr->middle, fr->back | VIEW_FRESH) & 3;
  v->next_frame = v->next_frame + v->period > c ? v->next_frame + v->period : c + v->period;
  view__server_wake(v->server);
}

static void on_instant(void *user, const hil_replay *r, size_t i, size_t j, long long pass) {
  hil_view_replay *v = user;
  const hil_replay_schedule *s = v->sh.replay;
  for (size_t k = i; k < j; k++) {
    const int sn = s->entry[k].sensor;
    hil_replay_sample_at(&v->smp[sn], s, k, pass);
    v->has[sn] = 1;
  }
  if (coarse_now_s() >= v->next_frame) {
    publish(v, r, 0);
  }
}

static int ready(void *user) {
  const hil_view_replay *v = user;
  return atomic_load(&v->sh.viewers) > 0;
}

void hil_view_replay_hook(hil_view_replay *v, hil_replay_options *o) {
  o->on_instant = on_instant;
  o->ready = ready;
  o->user = v;
}

void hil_view_replay_finish(hil_view_replay *v, const hil_replay *r) {
  publish(v, r, 1);
}

const char *hil_view_replay_url(const hil_view_replay *v) { return v->url; }

static int alloc_frames(hil_view_replay *v) {
  const size_t n = (size_t)(v->sh.nsensor > 0 ? v->sh.nsensor : 1);
  for (int i = 0; i < 3; i++) {
    view_frame *f = &v->sh.frames.f[i];
    f->smp = calloc(n, sizeof *f->smp);
    f->has = calloc(n, sizeof *f->has);
    f->rsmp = calloc(n, sizeof *f->rsmp);
    if (!f->smp || !f->has || !f->rsmp) {
      return HIL_ENOMEM;
    }
  }
  v->sh.frames.back = 0;
  atomic_store(&v->sh.frames.middle, 1);
  v->sh.frames.front = 2;
  v->smp = calloc(n, sizeof *v->smp);
  v->has = calloc(n, sizeof *v->has);
  v->sh.topics = calloc(2 * n, sizeof *v->sh.topics);
  return v->smp && v->has && v->sh.topics ? HIL_OK : HIL_ENOMEM;
}

static int topics(hil_view_replay *v) {
  const int n = v->sh.nsensor;
  for (int k = 0; k < 2 * n; k++) {
    if (hil_replay_topic(v->sh.topics[k], sizeof v->sh.topics[k], &v->sh.replay->sensor[k % n],
                         k >= n) < 0) {
      return HIL_EINVAL;
    }
  }
  return HIL_OK;
}

hil_view_replay *hil_view_replay_new(const hil_view_options *o, const hil_replay_schedule *s,
                                     char *err, size_t err_sz) {
  if (!(o->rate_hz > 0) || !isfinite(o->rate_hz)) {
    snprintf(err, err_sz, "view: display rate must be a positive number of Hz (got %g)",
             o->rate_hz);
    return NULL;
  }
  hil_view_replay *v = calloc(1, sizeof *v);
  if (!v) {
    snprintf(err, err_sz, "view: out of memory");
    return NULL;
  }
  v->sh.opt = *o;
  v->sh.replay = s;
  v->sh.nsensor = s->nsensors;
  v->sh.wake_fd = -1; /* no loop to wake: the server answers requests itself */
  v->period = 1.0 / o->rate_hz;
  if (alloc_frames(v) != HIL_OK || topics(v) != HIL_OK || view__build_model(&v->sh) != HIL_OK) {
    snprintf(err, err_sz, "view: out of memory");
    hil_view_replay_destroy(&v);
    return NULL;
  }
  v->server = view__server_new(&v->sh, err, err_sz);
  if (!v->server || view__server_start(v->server) != HIL_OK) {
    if (v->server) {
      snprintf(err, err_sz, "view: cannot start the server thread");
    }
    hil_view_replay_destroy(&v);
    return NULL;
  }
  snprintf(v->url, sizeof v->url, "http://%s:%d/", o->address, view__server_port(v->server));
  return v;
}

void hil_view_replay_destroy(hil_view_replay **pv) {
  hil_view_replay *v = pv ? *pv : NULL;
  if (!v) {
    return;
  }
  view__server_destroy(v->server); /* joins the thread: nothing reads the shared part after */
  view__queue_drain(&v->sh.replies);
  for (int i = 0; i < 3; i++) {
    free(v->sh.frames.f[i].smp);
    free(v->sh.frames.f[i].has);
    free(v->sh.frames.f[i].rsmp);
  }
  free(v->sh.topics);
  free(v->sh.model_json);
  free(v->smp);
  free(v->has);
  free(v);
  *pv = NULL;
}
