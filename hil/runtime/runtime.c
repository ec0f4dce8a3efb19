/* hil/runtime/runtime.c: building the runtime, one tick, and the control requests. Pacing is in loop.c. */
#include "hil/runtime/runtime_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/import/import.h"
#include "hil/error.h"
#include "hil/zmq/json_messages.h"
#include "hil/transport.h"

double hil__monotonic_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Counts a record the log lost (rc != 0) and tells the first loss at once, on stderr and (through
 * status_due) on the status stream; stops the run when the options say so. */
static void record_result(hil_runtime *rt, int rc, int sys_errno, const char *what) {
  if (rc == 0) {
    return;
  }
  if (rt->record_errors++ > 0) {
    return;
  }
  const int stop = rt->opt.on_record_error == HIL_RECORD_ERROR_STOP;
  fprintf(stderr,
          "[achilles] recording to %s failed at t=%.3f s: %s: %s; %s (--on-record-error %s)\n",
          rt->log_path, rt->data->time, what,
          sys_errno ? strerror(sys_errno) : "record too long for the log",
          stop ? "stopping the run" : "running on without recording", stop ? "stop" : "continue");
  rt->status_due = 1;
  if (stop) {
    rt->stop = 1;
  }
}

static void record_write_result(hil_runtime *rt, int rc) {
  record_result(rt, rc, rc ? hil_log_sys_errno(rt->log) : 0, "write");
}

static void on_sample(void *user, const sens_sensor *s, const sens_sample *smp) {
  hil_runtime *rt = user;
  rt->samples++;
  if (rt->log) {
    record_write_result(
        rt, hil_log_write_sample(rt->log, s, smp, hil__monotonic_now() - rt->start_wall));
  }
  for (int i = 0; i < rt->ntransports; i++) {
    hil_transport *t = rt->transports[i];
    if (t->ops->publish_sample) {
      t->ops->publish_sample(t, rt, s, smp);
    }
  }
}

static int load_sensors(hil_runtime *rt, const char *config_path, char *err, size_t err_sz) {
  int rc;
  if (rt->opt.sensors_file) {
    rc = sens_set_load_file(&rt->sensors, rt->model, rt->opt.sensors_file, err, err_sz);
  } else if (sim_import_detect(config_path) != SIM_IMPORT_JSON) {
    rc = SENS_ENOTFOUND; /* MJCF and URDF carry no sensors of ours */
  } else {
    rc = sens_set_load_robot(&rt->sensors, rt->model, config_path, err, err_sz);
  }
  if (rc == SENS_ENOTFOUND) {
    rt->sensors = NULL; /* a robot without sensors still runs */
    return HIL_OK;
  }
  if (rc != 0) {
    return HIL_ECONFIG;
  }
  if (rt->opt.has_seed) {
    sens_set_reset(rt->sensors, rt->opt.seed);
  }
  rt->seed = sens_set_seed(rt->sensors);
  /* torque sensors read what the actuators apply to their joints */
  sens_set_torque_source(rt->sensors, rt->data->qfrc_actuator);
  sens_set_callback(rt->sensors, on_sample, rt);
  return HIL_OK;
}

hil_runtime *hil_runtime_new(const char *config_path, const hil_options *o, char *err,
                             size_t err_sz) {
  if (!(o->rate_hz > 0) || !isfinite(o->rate_hz)) {
    snprintf(err, err_sz, "rate: must be a positive number of Hz (got %g)", o->rate_hz);
    return NULL;
  }
  hil_runtime *rt = calloc(1, sizeof *rt);
  if (!rt) {
    snprintf(err, err_sz, "out of memory");
    return NULL;
  }
  rt->opt = *o;
  const sim_import_options import = {0, NULL, NULL}; /* `achilles convert` lists the notes */
  rt->model = sim_import_load_file(config_path, &import, err, err_sz);
  if (!rt->model) {
    hil_runtime_destroy(&rt);
    return NULL;
  }
  rt->model->opt.timestep = 1.0 / o->rate_hz;
  rt->models[rt->nmodels++] = rt->model;
  rt->data = sim_data_new(rt->model);
  rt->snapshot = sim_snapshot_new(rt->model);
  if (!rt->data || !rt->snapshot ||
      hil_commands_init(&rt->commands, rt->model, o->watchdog_timeout_s, o->on_timeout)) {
    snprintf(err, err_sz, "out of memory");
    hil_runtime_destroy(&rt);
    return NULL;
  }
  if (load_sensors(rt, config_path, err, err_sz) != HIL_OK) {
    hil_runtime_destroy(&rt);
    return NULL;
  }
  rt->start_wall = hil__monotonic_now();
  hil_histogram_clear(&rt->late);
  hil_histogram_clear(&rt->compute);
  hil_histogram_clear(&rt->late_total);
  hil_histogram_clear(&rt->compute_total);
  hil_histogram_clear(&rt->input);
  hil_histogram_clear(&rt->input_total);
  rt->input_until = INFINITY;
  return rt;
}

void hil_runtime_destroy(hil_runtime **prt) {
  hil_runtime *rt = prt ? *prt : NULL;
  if (!rt) {
    return;
  }
  for (int i = 0; i < rt->ntransports; i++) {
    rt->transports[i]->ops->destroy(rt->transports[i]);
  }
  hil__close_record(rt);
  sens_set_free(&rt->sensors);
  hil_commands_free(&rt->commands);
  sim_snapshot_free(rt->snapshot);
  sim_data_free(rt->data);
  for (int i = 0; i < rt->nmodels; i++) {
    sim_model_free(rt->models[i]);
  }
  if (rt->nmodels == 0) {
    sim_model_free(rt->model);
  }
  free(rt);
  *prt = NULL;
}

int hil_runtime_add_transport(hil_runtime *rt, hil_transport *t) {
  if (rt->ntransports >= HIL_MAX_TRANSPORTS) {
    t->ops->destroy(t);
    return HIL_EINVAL;
  }
  const int rc = t->ops->attach ? t->ops->attach(t, rt) : HIL_OK;
  if (rc != HIL_OK) {
    t->ops->destroy(t);
    return rc;
  }
  rt->transports[rt->ntransports++] = t;
  return HIL_OK;
}

/* Realtime: the end of this pass's budget; other modes read everything (lockstep steps on
 * commands; fast mode has no deadline to keep). */
static double input_deadline(const hil_runtime *rt, double begin) {
  if (rt->opt.mode != HIL_MODE_REALTIME || rt->opt.input_budget_s < 0) {
    return INFINITY;
  }
  const double budget = rt->opt.input_budget_s > 0
                            ? rt->opt.input_budget_s
                            : HIL_INPUT_BUDGET_PERIODS * rt->model->opt.timestep;
  return begin + budget;
}

/* CPU time of this thread, s: an input pass's work without the time the thread was preempted. */
static double thread_cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void hil__poll_transports(hil_runtime *rt) {
  hil__poll_transports_until(rt, INFINITY);
}

void hil__poll_transports_until(hil_runtime *rt, double until) {
  const int realtime = rt->opt.mode == HIL_MODE_REALTIME;
  const double begin = realtime ? thread_cpu_now() : 0;
  rt->input_until = fmin(input_deadline(rt, hil__monotonic_now()), until);
  for (int i = 0; i < rt->ntransports; i++) {
    hil_transport *t = rt->transports[i];
    if (t->ops->poll) {
      rt->polling = t->ops->name;
      t->ops->poll(t, rt);
    }
  }
  rt->polling = NULL;
  rt->input_until = INFINITY;
  if (realtime) {
    hil_histogram_add(&rt->input, thread_cpu_now() - begin);
  }
}

int hil_runtime_input_budget_left(const hil_runtime *rt) {
  return rt->input_until == INFINITY || hil__monotonic_now() < rt->input_until;
}

void hil_runtime_input_deferred(hil_runtime *rt) {
  rt->input_deferred++;
}

/* --- recording ------------------------------------------------------------------------------- */

static void on_command(void *user, int actuator, const char *name, double value, int result,
                       int clamped) {
  hil_runtime *rt = user;
  const char *who = actuator >= 0 ? rt->model->actuators[actuator].name : name ? name : "?";
  const int watchdog = result == HIL_COMMAND_WATCHDOG;
  const char *what = result == HIL_OK || watchdog ? (clamped ? "clamped" : "ok")
                     : result == HIL_EUNKNOWN    ? "rejected:unknown"
                                                 : "rejected:nonfinite";
  const char *source = watchdog ? "watchdog" : rt->polling ? rt->polling : "api";
  record_write_result(rt, hil_log_write_command(rt->log, rt->data->time,
                                                hil__monotonic_now() - rt->start_wall, source,
                                                who, value, what));
}

int hil_runtime_record(hil_runtime *rt, const char *path, char *err, size_t err_sz) {
  hil_log_header h;
  if (hil_log_header_init(&h, rt->model, rt->sensors) != 0) {
    snprintf(err, err_sz, "%s: too many sensors or actuators for the log header", path);
    return HIL_EINVAL;
  }
  h.seed = rt->seed;
  h.rate_hz = 1.0 / rt->model->opt.timestep;
  rt->log = hil_log_open(path, &h, err, err_sz);
  if (!rt->log) {
    return HIL_EIO;
  }
  snprintf(rt->log_path, sizeof rt->log_path, "%s", path);
  rt->commands.observer = on_command;
  rt->commands.observer_user = rt;
  rt->log_next_flush = hil__monotonic_now() + 0.1;
  return HIL_OK;
}

int hil_runtime_recording(const hil_runtime *rt) { return rt->log != NULL; }

void hil_runtime_record_servo(hil_runtime *rt, const char *actuator, int id, int n,
                              const char *const *names, const uint32_t *values) {
  if (rt->log) {
    record_write_result(rt, hil_log_write_servo(rt->log, rt->data->time, rt->steps,
                                                hil__monotonic_now() - rt->start_wall, actuator,
                                                id, n, names, values));
  }
}

void hil__record_status(hil_runtime *rt, const hil_status *st) {
  char json[4096];
  if (rt->log && hil_msg_encode_status(json, sizeof json, st) > 0) {
    record_write_result(rt, hil_log_write_status(rt->log, st->sim_time, st->wall_time, json));
  }
}

void hil__close_record(hil_runtime *rt) {
  if (rt->log) {
    const int rc = hil_log_close(&rt->log);
    record_result(rt, rc, errno, "close");
  }
}

/* Hands the log to the kernel every 0.1 s of wall time: a kill -9 loses at most that much. */
static void flush_log(hil_runtime *rt) {
  if (rt->log) {
    double now = hil__monotonic_now();
    if (now >= rt->log_next_flush) {
      const int rc = hil_log_flush(rt->log);
      record_result(rt, rc, rc ? hil_log_sys_errno(rt->log) : 0, "write");
      rt->log_next_flush = now + 0.1;
    }
  }
}

/* Samples the sensors at the current state (the state of the last step, or t = 0). */
void hil__sense(hil_runtime *rt) {
  if (rt->sensors) {
    sens_set_update(rt->sensors, rt->model, rt->data);
  }
  for (int i = 0; i < rt->ntransports; i++) { /* this state's samples are all out */
    hil_transport *t = rt->transports[i];
    if (t->ops->publish_step) {
      t->ops->publish_step(t, rt, rt->steps, rt->data->time);
    }
  }
  if (rt->hook.after_sense) {
    rt->hook.after_sense(rt->hook.user, rt);
  }
}

/* The last line of defence against a state that turned NaN or infinite (a model singular at a
 * pose it reached, an integration that blew up): it would stay so, and every sensor would read
 * garbage. The run stops there, naming the time and the first joint; nothing of that state is
 * sensed. 1 when stopped. */
static int stop_if_nonfinite(hil_runtime *rt) {
  const int j = sim_state_nonfinite(rt->model, rt->data);
  if (j < 0) {
    return 0;
  }
  const sim_joint *jt = &rt->model->joints[j];
  fprintf(stderr, "[achilles] t=%.6f s: joint \"%s\": the state is not finite (q %g, qd %g): the "
                  "run stops (a model singular at this pose, or a step too large for it)\n",
          rt->data->time, jt->name, rt->data->qpos[jt->qposadr], rt->data->qvel[jt->dofadr]);
  rt->nonfinite = 1;
  rt->stop = 1;
  return 1;
}

void hil__step(hil_runtime *rt) {
  if (rt->hook.before_step) {
    rt->hook.before_step(rt->hook.user, rt, rt->data);
  }
  hil_commands_apply(&rt->commands, rt->data, hil_runtime_loop_time(rt));
  sim_step(rt->model, rt->data);
  sim_forward(rt->model, rt->data); /* derived values (sensors read them) match the new state */
  rt->steps++;
  if (stop_if_nonfinite(rt)) {
    return;
  }
  hil__sense(rt);
  flush_log(rt);
}

void hil_runtime_tick(hil_runtime *rt) {
  hil__poll_transports(rt);
  if (!rt->paused) {
    hil__step(rt);
  }
}

void hil_runtime_set_hook(hil_runtime *rt, const hil_hook *hook) {
  if (hook) {
    rt->hook = *hook;
  } else {
    memset(&rt->hook, 0, sizeof rt->hook);
  }
}

/* Every count that sizes data, sensors or transports' tables must match. */
static int same_layout(const sim_model *a, const sim_model *b) {
  return a->nbody == b->nbody && a->njnt == b->njnt && a->nq == b->nq && a->nv == b->nv &&
         a->nsite == b->nsite && a->nu == b->nu && a->ngeom == b->ngeom &&
         a->max_contacts == b->max_contacts && a->na == b->na && a->nefc_max == b->nefc_max &&
         a->nhull_vert == b->nhull_vert && a->nhull_graph == b->nhull_graph &&
         a->nexclude == b->nexclude;
}

int hil_runtime_swap_model(hil_runtime *rt, sim_model *m, char *err, size_t err_sz) {
  if (!m || rt->nmodels >= HIL_MAX_MODELS || !same_layout(rt->model, m)) {
    snprintf(err, err_sz, "%s", !m ? "no model"
                                : rt->nmodels >= HIL_MAX_MODELS
                                    ? "too many model changes in one run (at most 15)"
                                    : "the new model's layout (bodies, joints, dofs, actuators, "
                                      "geoms, constraint rows) differs from the running one");
    sim_model_free(m);
    return HIL_EINVAL;
  }
  m->opt.timestep = rt->model->opt.timestep;
  rt->models[rt->nmodels++] = m;
  rt->model = m;
  rt->commands.model = m;
  if (rt->steps == 0) { /* before the run: its initial state comes from the new model */
    sim_data_reset(m, rt->data);
  }
  return HIL_OK;
}

void hil_runtime_request_stop(hil_runtime *rt) {
  rt->stop = 1;
}

const sim_model *hil_runtime_model(const hil_runtime *rt) {
  return rt->model;
}
const sim_data *hil_runtime_data(const hil_runtime *rt) {
  return rt->data;
}
uint64_t hil_runtime_steps(const hil_runtime *rt) {
  return rt->steps;
}
sens_set *hil_runtime_sensors(hil_runtime *rt) {
  return rt->sensors;
}
hil_commands *hil_runtime_commands(hil_runtime *rt) {
  return &rt->commands;
}
const hil_options *hil_runtime_options(const hil_runtime *rt) {
  return &rt->opt;
}

hil_transport *hil_runtime_transport(const hil_runtime *rt, int i) {
  return i >= 0 && i < rt->ntransports ? rt->transports[i] : NULL;
}

double hil_runtime_loop_time(const hil_runtime *rt) {
  if (rt->opt.mode == HIL_MODE_REALTIME) {
    return hil__monotonic_now() - rt->start_wall;
  }
  return rt->data->time;
}

static void fill_status(const hil_runtime *rt, hil_status *out, const hil_histogram *late,
                        const hil_histogram *compute, const hil_histogram *input) {
  memset(out, 0, sizeof *out);
  out->sim_time = rt->data->time;
  out->wall_time = hil__monotonic_now() - rt->start_wall;
  out->steps = rt->steps;
  out->mode = rt->opt.mode;
  out->paused = rt->paused;
  out->overruns = rt->overruns;
  out->skipped = rt->skipped;
  out->late_p50 = hil_histogram_quantile(late, 0.5);
  out->late_p99 = hil_histogram_quantile(late, 0.99);
  out->late_max = late->max;
  out->compute_p50 = hil_histogram_quantile(compute, 0.5);
  out->compute_p99 = hil_histogram_quantile(compute, 0.99);
  out->compute_max = compute->max;
  out->input_p50 = hil_histogram_quantile(input, 0.5);
  out->input_p99 = hil_histogram_quantile(input, 0.99);
  out->input_max = input->max;
  out->deadline_offset = rt->opt.mode == HIL_MODE_REALTIME ? rt->deadline_offset : 0;
  out->commands = rt->commands.counters;
  out->samples_published = rt->samples;
  out->record_errors = rt->record_errors;
  out->input_deferred = rt->input_deferred;
  out->contacts = rt->data->ncon;
  out->constraint_rows = rt->data->nefc;
  out->constraint_active = rt->data->solver.nactive;
  out->solver_iterations = rt->data->solver.iterations;
  for (int i = rt->data->nf; i < rt->data->nefc; i++) {
    out->stops += rt->data->efc_type[i] == SIM_CNSTR_LIMIT_JOINT &&
                  rt->data->efc_state[i] != SIM_CSTATE_SATISFIED;
  }
  for (int c = 0; c < rt->data->ncon; c++) {
    double f[3];
    sim_contact_force(rt->model, rt->data, c, f);
    out->normal_force += f[0];
  }
}

void hil_runtime_status(const hil_runtime *rt, hil_status *out) {
  fill_status(rt, out, &rt->late, &rt->compute, &rt->input);
}

/* The totals hold every period already closed; add the open one. */
void hil_runtime_status_total(const hil_runtime *rt, hil_status *out) {
  hil_histogram *late = malloc(sizeof *late), *compute = malloc(sizeof *compute),
                *input = malloc(sizeof *input);
  if (!late || !compute || !input) {
    free(late);
    free(compute);
    free(input);
    hil_runtime_status(rt, out);
    return;
  }
  *late = rt->late_total;
  *compute = rt->compute_total;
  *input = rt->input_total;
  hil_histogram_merge(late, &rt->late);
  hil_histogram_merge(compute, &rt->compute);
  hil_histogram_merge(input, &rt->input);
  fill_status(rt, out, late, compute, input);
  out->whole_run = 1;
  free(late);
  free(compute);
  free(input);
}

void hil_runtime_pause(hil_runtime *rt) {
  rt->paused = 1;
}

int hil_runtime_paused(const hil_runtime *rt) {
  return rt->paused;
}

void hil_runtime_resume(hil_runtime *rt) {
  rt->paused = 0;
  rt->resynchronize = 1; /* realtime: do not try to catch up the paused time */
}

void hil_runtime_request_steps(hil_runtime *rt, uint64_t n) {
  rt->pending_steps += n;
}

void hil_runtime_reset(hil_runtime *rt) {
  sim_data_reset(rt->model, rt->data);
  hil_commands_clear(&rt->commands);
  if (rt->sensors) {
    sens_set_reset(rt->sensors, rt->seed);
  }
  rt->pending_steps = 0;
  rt->resynchronize = 1;
  hil__sense(rt);
}

int hil_runtime_snapshot_save(hil_runtime *rt) {
  sim_snapshot_save(rt->model, rt->data, rt->snapshot);
  rt->have_snapshot = 1;
  return HIL_OK;
}

int hil_runtime_snapshot_restore(hil_runtime *rt) {
  if (!rt->have_snapshot) {
    return HIL_ESTATE;
  }
  sim_snapshot_restore(rt->model, rt->data, rt->snapshot);
  rt->resynchronize = 1;
  return HIL_OK;
}
