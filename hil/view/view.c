/* hil/view/view.c: the view as a transport — the loop side. Copies the state into the triple
 * buffer at the display rate and carries out the browsers' requests between ticks; see view.h. */
#include "hil/clock.h"
#include "hil/view/view_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "hil/error.h"
#include "hil/zmq/zmq_transport.h"

#ifndef ACHILLES_VIEW_WWW
#define ACHILLES_VIEW_WWW "hil/view/www"
#endif

#define JOBS_PER_POLL 16 /* requests carried out per poll at most */

typedef struct view_transport {
  hil_transport base;
  view_shared sh;
  view_server *server;
  hil_transport *control; /* the ZeroMQ transport, or NULL */
  hil_runtime *rt;
  char url[HIL_VIEW_ADDRESS_MAX + 32];
  /* loop side: the newest sample of each sensor and the last status, copied into each frame */
  sens_sample *smp;
  int *has;
  hil_status status;
  uint64_t status_seq;
  char transports[VIEW_TRANSPORTS_MAX];
  double wall_origin, next_frame, period;
  int dirty;     /* the state changed since the last frame */
  uint64_t frames;
  double last_t; /* simulation time of the last step (a smaller one: a reset or restore) */
  double *param;  /* [nparam]: the sensors' parameters at the last reading */
  uint64_t params_seq;
} view_transport;

/* --- options ---------------------------------------------------------------------------------- */

void hil_view_options_default(hil_view_options *o) {
  memset(o, 0, sizeof *o);
  snprintf(o->address, sizeof o->address, "127.0.0.1");
  o->port = 8080;
  o->rate_hz = 60;
  o->window_s = 10;
  o->max_message_bytes = 65536;
  const char *www = getenv("ACHILLES_VIEW_WWW");
  snprintf(o->www, sizeof o->www, "%s", www && *www ? www : ACHILLES_VIEW_WWW);
  snprintf(o->three, sizeof o->three, "/usr/share/javascript/three");
  snprintf(o->chartjs, sizeof o->chartjs, "/usr/share/javascript/chart.js");
}

static int parse_port(const char *s, int *out) {
  char *end = NULL;
  errno = 0;
  const long v = strtol(s, &end, 10);
  if (!*s || *end || errno || v < 0 || v > 65535) {
    return -1;
  }
  *out = (int)v;
  return 0;
}

int hil_view_parse_address(hil_view_options *o, const char *text, char *err, size_t err_sz) {
  const char *colon = strrchr(text, ':');
  const char *port = colon ? colon + 1 : text;
  const size_t alen = colon ? (size_t)(colon - text) : 0;
  int p = 0;
  if (parse_port(port, &p) != 0) {
    snprintf(err, err_sz, "--view: expected ADDRESS:PORT with a port from 0 to 65535 (got \"%s\")",
             text);
    return HIL_EINVAL;
  }
  if (alen >= sizeof o->address) {
    snprintf(err, err_sz, "--view: address too long (\"%s\")", text);
    return HIL_EINVAL;
  }
  if (alen > 0) {
    memcpy(o->address, text, alen);
    o->address[alen] = '\0';
  }
  o->port = p;
  return HIL_OK;
}

/* --- frames ----------------------------------------------------------------------------------- */

static int frame_alloc(view_frame *f, const sim_model *m, int nsensor, int nparam) {
  f->qpos = calloc((size_t)(m->nq > 0 ? m->nq : 1), sizeof *f->qpos);
  f->xpos = calloc((size_t)m->nbody * 3, sizeof *f->xpos);
  f->xmat = calloc((size_t)m->nbody * 9, sizeof *f->xmat);
  f->smp = calloc((size_t)(nsensor > 0 ? nsensor : 1), sizeof *f->smp);
  f->has = calloc((size_t)(nsensor > 0 ? nsensor : 1), sizeof *f->has);
  f->param = calloc((size_t)(nparam > 0 ? nparam : 1), sizeof *f->param);
  return f->qpos && f->xpos && f->xmat && f->smp && f->has && f->param ? HIL_OK : HIL_ENOMEM;
}

static void frame_free(view_frame *f) {
  free(f->qpos);
  free(f->xpos);
  free(f->xmat);
  free(f->smp);
  free(f->has);
  free(f->param);
}

/* Contacts with their normal force: the sum of the pyramid edge forces of each contact (each
 * edge row is normal ± μ·tangent, so their normal components add up to the force), an elliptic
 * contact's first row, a frictionless contact's row. */
static void copy_contacts(view_frame *f, const sim_data *d) {
  f->ncon = d->ncon < VIEW_MAX_CONTACTS ? d->ncon : VIEW_MAX_CONTACTS;
  for (int c = 0; c < f->ncon; c++) {
    memcpy(f->con[c], d->con_pos + 3 * c, 3 * sizeof(double));
    memcpy(f->con[c] + 3, d->con_frame + 9 * c, 3 * sizeof(double));
    f->con[c][6] = 0;
  }
  for (int r = 0; r < d->nefc; r++) {
    const int c = d->efc_id[r];
    const int t = d->efc_type[r];
    if (c >= 0 && c < f->ncon &&
        (t == SIM_CNSTR_CONTACT_PYRAMIDAL || t == SIM_CNSTR_CONTACT_FRICTIONLESS ||
         (t == SIM_CNSTR_CONTACT_ELLIPTIC && r == d->con_efc[c]))) {
      f->con[c][6] += d->efc_force[r];
    }
  }
}

static double coarse_now_s(void);

/* Fills the back frame from the loop's state and swaps it in. */
static void publish_frame(view_transport *v) {
  const double now = hil_monotonic_s();
  view_frames *fr = &v->sh.frames;
  view_frame *f = &fr->f[fr->back];
  const sim_model *m = v->sh.m;
  const sim_data *d = hil_runtime_data(v->rt);
  f->seq = ++v->frames;
  f->t = d->time;
  f->wall = now - v->wall_origin;
  f->steps = hil_runtime_steps(v->rt);
  f->paused = hil_runtime_paused(v->rt);
  memcpy(f->qpos, d->qpos, (size_t)m->nq * sizeof(double));
  memcpy(f->xpos, d->xpos, (size_t)m->nbody * 3 * sizeof(double));
  memcpy(f->xmat, d->xmat, (size_t)m->nbody * 9 * sizeof(double));
  copy_contacts(f, d);
  memcpy(f->smp, v->smp, (size_t)v->sh.nsensor * sizeof *f->smp);
  memcpy(f->has, v->has, (size_t)v->sh.nsensor * sizeof *f->has);
  if (f->status_seq != v->status_seq) {
    f->status = v->status;
    memcpy(f->transports, v->transports, sizeof f->transports);
    f->status_seq = v->status_seq;
  }
  if (f->params_seq != v->params_seq) {
    memcpy(f->param, v->param, (size_t)v->sh.nparam * sizeof *f->param);
    f->params_seq = v->params_seq;
  }
  fr->back = atomic_exchange(&fr->middle, fr->back | VIEW_FRESH) & 3;
  v->dirty = 0;
  /* on a grid of periods (the coarse clock's steps would otherwise round every period up) */
  const double c = coarse_now_s();
  v->next_frame = v->next_frame + v->period > c ? v->next_frame + v->period : c + v->period;
  view__server_wake(v->server);
}

/* The coarse clock (a tick of the kernel, 1–4 ms) is fine for a 60 Hz display and costs a
 * fifth of the precise one: this runs at every tick. */
static double coarse_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void maybe_publish(view_transport *v) {
  if (!v->dirty) {
    return;
  }
  const double now = coarse_now_s();
  if (now >= v->next_frame) {
    publish_frame(v);
  }
}

/* --- transport ops ---------------------------------------------------------------------------- */

static void vt_publish_sample(hil_transport *t, hil_runtime *rt, const sens_sensor *s,
                              const sens_sample *smp) {
  view_transport *v = (view_transport *)t;
  (void)rt;
  const ptrdiff_t i = s - sens_set_sensor(v->sh.sensors, 0);
  if (i < 0 || i >= v->sh.nsensor) {
    return;
  }
  v->smp[i] = *smp; /* a whole-struct copy: cheaper than copying the channels in use */
  v->has[i] = 1;
}

static void vt_publish_step(hil_transport *t, hil_runtime *rt, uint64_t steps, double sim_time) {
  view_transport *v = (view_transport *)t;
  (void)rt, (void)steps;
  if (sim_time < v->last_t) { /* a reset or restore: samples of the lost future are not shown */
    for (int i = 0; i < v->sh.nsensor; i++) {
      v->has[i] = v->has[i] && v->smp[i].t <= sim_time;
    }
  }
  v->last_t = sim_time;
  v->dirty = 1;
  maybe_publish(v);
}

/* The parameters a Foxglove client may subscribe to: read at each status (a change made
 * through ZeroMQ shows within a status period) and after each request the view carried out. */
static void read_params(view_transport *v) {
  view__params_read(&v->sh, v->param);
  v->params_seq++;
}

/* The status with the other transports' console fragments (their counters). */
static void vt_publish_status(hil_transport *t, hil_runtime *rt, const hil_status *st) {
  view_transport *v = (view_transport *)t;
  read_params(v);
  v->status = *st;
  v->status_seq++;
  size_t len = 0;
  v->transports[0] = '\0';
  for (int i = 0; hil_runtime_transport(rt, i); i++) {
    hil_transport *o = hil_runtime_transport(rt, i);
    if (o == t || !o->ops->describe || len + 2 >= sizeof v->transports) {
      continue;
    }
    if (len > 0) {
      v->transports[len++] = '\n';
    }
    o->ops->describe(o, v->transports + len, sizeof v->transports - len);
    len += strlen(v->transports + len);
  }
  v->dirty = 1;
  maybe_publish(v);
}

/* A command message from a Foxglove client: taken as ZeroMQ takes one; a message refused as a
 * whole (level 2) or with refused entries (level 1) gets a status message saying why. */
static void run_commands(hil_runtime *rt, view_job *j) {
  hil_msg_cmd_report rep;
  char err[512] = "";
  const int rc = hil_msg_submit_commands(hil_runtime_commands(rt), j->text, j->len,
                                         hil_runtime_loop_time(rt), &rep, err, sizeof err);
  if (rc == HIL_OK && rep.rejected == 0) {
    return;
  }
  char msg[560];
  snprintf(msg, sizeof msg, "commands: %s%s", rc == HIL_OK ? "entry refused: " : "",
           err[0] ? err : "refused");
  const int n = view__fox_status_message(j->reply, VIEW_COMMAND_ERROR_MAX, rc == HIL_OK ? 1 : 2,
                                         msg);
  j->reply_len = n > 0 ? n : 0;
}

/* Carries out one job on the loop thread. Returns 0, or -1 to leave it queued (lockstep
 * already holds a full command set: the next set waits for the next step). */
static int run_job(view_transport *v, hil_runtime *rt, view_job *j) {
  if (j->kind == VIEW_JOB_COMMANDS) {
    hil_commands *c = hil_runtime_commands(rt);
    if (hil_runtime_options(rt)->mode == HIL_MODE_LOCKSTEP && hil_commands_all_fresh(c) &&
        !hil_runtime_paused(rt)) {
      return -1;
    }
    run_commands(rt, j);
    return 0;
  }
  j->reply_len = j->kind == VIEW_JOB_PARAMS
                     ? view__params_answer(j->reply, VIEW_REPLY_MAX, &v->sh,
                                           hil_runtime_sensors(rt), j->text, j->len)
                     : hil_zmq_control_answer(v->control, rt, j->text, j->len, j->reply,
                                              VIEW_REPLY_MAX);
  return 0;
}

static void vt_poll(hil_transport *t, hil_runtime *rt) {
  view_transport *v = (view_transport *)t;
  uint64_t n;
  if (atomic_load_explicit(&v->sh.signalled, memory_order_relaxed) &&
      atomic_exchange(&v->sh.signalled, 0) && read(v->sh.wake_fd, &n, sizeof n) < 0) {
    n = 0; /* EAGAIN: a signal for a job already taken; the queue is read anyway */
  }
  int replied = 0;
  for (int i = 0; i < JOBS_PER_POLL; i++) {
    if (i > 0 && !hil_runtime_input_budget_left(rt)) {
      if (view__queue_peek(&v->sh.requests)) {
        hil_runtime_input_deferred(rt);
        uint64_t one = 1; /* come back next pass */
        atomic_store(&v->sh.signalled, 1);
        (void)!write(v->sh.wake_fd, &one, sizeof one);
      }
      break;
    }
    view_job *j = view__queue_peek(&v->sh.requests);
    if (!j || run_job(v, rt, j) != 0) {
      break;
    }
    view__queue_pop(&v->sh.requests);
    if (j->kind == VIEW_JOB_COMMANDS && j->reply_len == 0) {
      view__job_free(j);
    } else if (view__queue_push(&v->sh.replies, j) != 0) {
      /* cannot happen for requests (the server admits no more than the queue holds); a refused
         command's status message is lost when the replies pile up */
      view__job_free(j);
    } else {
      replied = j->kind != VIEW_JOB_COMMANDS;
    }
  }
  if (replied) {
    read_params(v); /* a set_param or setParameters: subscribers hear of it at once */
    v->dirty = 1;   /* a request may have changed the state: show it at once */
    publish_frame(v);
  } else {
    maybe_publish(v);
  }
}

static int vt_pollitems(hil_transport *t, zmq_pollitem_t *items, int max) {
  view_transport *v = (view_transport *)t;
  if (max < 1) {
    return 0;
  }
  items[0] = (zmq_pollitem_t){.socket = NULL, .fd = v->sh.wake_fd, .events = ZMQ_POLLIN};
  return 1;
}

static int vt_attach(hil_transport *t, hil_runtime *rt) {
  view_transport *v = (view_transport *)t;
  view_shared *sh = &v->sh;
  v->rt = rt;
  sh->m = hil_runtime_model(rt);
  sh->sensors = hil_runtime_sensors(rt);
  sh->nsensor = sh->sensors ? sens_set_count(sh->sensors) : 0;
  const int n = sh->nsensor > 0 ? sh->nsensor : 1;
  if (view__params_build(sh) != HIL_OK || view__scene_build(sh) != HIL_OK) {
    return HIL_ENOMEM;
  }
  v->param = calloc((size_t)(sh->nparam > 0 ? sh->nparam : 1), sizeof *v->param);
  sh->forms = calloc((size_t)(2 * n), sizeof *sh->forms);
  sh->topics = calloc((size_t)(2 * n), sizeof *sh->topics);
  v->smp = calloc((size_t)n, sizeof *v->smp);
  v->has = calloc((size_t)n, sizeof *v->has);
  if (!sh->forms || !sh->topics || !v->smp || !v->has || !v->param) {
    return HIL_ENOMEM;
  }
  for (int k = 0; k < 2 * sh->nsensor; k++) {
    const sens_sensor *s = sens_set_sensor(sh->sensors, k % sh->nsensor);
    const int truth = k >= sh->nsensor;
    if (hil_msg_topic(sh->topics[k], sizeof sh->topics[k], s, truth) < 0 ||
        hil_msg_sample_form_init(&sh->forms[k], sh->m, s, truth) != HIL_OK) {
      return HIL_ENOMEM;
    }
  }
  for (int i = 0; i < 3; i++) {
    if (frame_alloc(&sh->frames.f[i], sh->m, sh->nsensor, sh->nparam) != HIL_OK) {
      return HIL_ENOMEM;
    }
  }
  sh->frames.back = 0;
  atomic_store(&sh->frames.middle, 1);
  sh->frames.front = 2;
  if (view__build_model(sh) != HIL_OK) {
    return HIL_ENOMEM;
  }
  const double now = hil_monotonic_s();
  v->wall_origin = hil_runtime_options(rt)->mode == HIL_MODE_REALTIME
                       ? now - hil_runtime_loop_time(rt)
                       : now;
  v->period = 1.0 / v->sh.opt.rate_hz;
  v->dirty = 1;
  read_params(v);
  return view__server_start(v->server);
}

static void vt_describe(hil_transport *t, char *out, size_t out_sz) {
  const view_transport *v = (const view_transport *)t;
  snprintf(out, out_sz, "view %s: %llu frames", v->url, (unsigned long long)v->frames);
}

static void vt_destroy(hil_transport *t) {
  view_transport *v = (view_transport *)t;
  if (!v) {
    return;
  }
  view__server_destroy(v->server); /* joins the thread: nothing reads the shared part after */
  view__queue_drain(&v->sh.requests);
  view__queue_drain(&v->sh.replies);
  for (int i = 0; i < 3; i++) {
    frame_free(&v->sh.frames.f[i]);
  }
  view__scene_free(&v->sh);
  free(v->sh.params);
  free(v->param);
  if (v->sh.wake_fd >= 0) {
    close(v->sh.wake_fd);
  }
  free(v->sh.forms);
  free(v->sh.topics);
  free(v->sh.model_json);
  free(v->smp);
  free(v->has);
  free(v);
}

static const hil_transport_ops view_ops = {
    .name = "view",
    .attach = vt_attach,
    .pollitems = vt_pollitems,
    .poll = vt_poll,
    .publish_sample = vt_publish_sample,
    .publish_step = vt_publish_step,
    .publish_status = vt_publish_status,
    .describe = vt_describe,
    .destroy = vt_destroy,
};

hil_transport *hil_view_new(const hil_view_options *o, hil_transport *control, char *err,
                            size_t err_sz) {
  if (!(o->rate_hz > 0) || !isfinite(o->rate_hz)) {
    snprintf(err, err_sz, "view: display rate must be a positive number of Hz (got %g)",
             o->rate_hz);
    return NULL;
  }
  view_transport *v = calloc(1, sizeof *v);
  if (!v) {
    snprintf(err, err_sz, "view: out of memory");
    return NULL;
  }
  v->base.ops = &view_ops;
  v->sh.opt = *o;
  v->control = control;
  v->sh.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (v->sh.wake_fd < 0) {
    snprintf(err, err_sz, "view: eventfd: %s", strerror(errno));
    vt_destroy(&v->base);
    return NULL;
  }
  v->server = view__server_new(&v->sh, err, err_sz);
  if (!v->server) {
    vt_destroy(&v->base);
    return NULL;
  }
  snprintf(v->url, sizeof v->url, "http://%s:%d/", o->address, view__server_port(v->server));
  return &v->base;
}

const char *hil_view_url(const hil_transport *t) {
  return ((const view_transport *)t)->url;
}
