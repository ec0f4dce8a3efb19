/* hil/scenario/run.c: one run of a scenario — the runtime and the firmware's transport, the
 * firmware process, the hook the loop calls (events before each step, checks after each state,
 * lockstep's release when the firmware is gone), and the result. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hil/clock.h"
#include "hil/error.h"
#include "sim/file_read.h"
#include "hil/record/log.h"
#include "hil/scenario/scenario_internal.h"
#include "hil/serial/serial_transport.h"
#include "hil/servo/servo_bus.h"
#include "hil/zmq/zmq_transport.h"
#include "sim/import/import.h"

extern char **environ;

static volatile sig_atomic_t interrupted; /* hil_scenario_interrupt */

void hil_scenario_interrupt(void) {
  interrupted = 1;
}

int hil_scenario_make_dirs(const char *path) {
  char p[SCN_PATH_MAX];
  snprintf(p, sizeof p, "%s", path);
  for (char *c = p + 1; *c; c++) {
    if (*c == '/') {
      *c = '\0';
      if (mkdir(p, 0755) != 0 && errno != EEXIST) {
        return -1;
      }
      *c = '/';
    }
  }
  return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* --- FNV-1a: the trajectory digest and the inputs digest -------------------------------------- */

static uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) {
    h = (h ^ p[i]) * 0x100000001b3ull;
  }
  return h;
}

#define FNV_START 0xcbf29ce484222325ull

static uint64_t fnv_file(uint64_t h, const char *path) {
  char why[16]; /* the one check of every reader: a FIFO here would block the run */
  FILE *f = path && path[0] ? sim_file_open(path, 0, 0, why, sizeof why) : NULL;
  if (!f) {
    return fnv(h, "(none)", 6);
  }
  unsigned char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
    h = fnv(h, buf, n);
  }
  sim_file_close(f);
  return h;
}

/* The program a command runs: a name without a slash from PATH; a relative path from the
 * scenario's folder (a command given on the command line: from the current folder). */
static void resolve_program(const hil_scenario *s, char *out, size_t out_sz) {
  const char *prog = s->argv[0];
  if (strchr(prog, '/')) {
    if (prog[0] == '/' || s->argv_from_cli) {
      snprintf(out, out_sz, "%s", prog);
    } else {
      snprintf(out, out_sz, "%s/%s", s->dir, prog);
    }
    return;
  }
  const char *path = getenv("PATH");
  snprintf(out, out_sz, "%s", prog);
  for (const char *p = path ? path : ""; *p;) {
    const size_t n = strcspn(p, ":");
    char candidate[SCN_PATH_MAX];
    snprintf(candidate, sizeof candidate, "%.*s/%s", (int)n, p, prog);
    if (n > 0 && access(candidate, X_OK) == 0) {
      snprintf(out, out_sz, "%s", candidate);
      return;
    }
    p += n + (p[n] == ':');
  }
}

uint64_t hil_scenario_inputs_digest(const hil_scenario *s) {
  uint64_t h = fnv(FNV_START, s->text, strlen(s->text));
  h = fnv_file(h, s->robot);
  h = fnv_file(h, s->servos);
  h = fnv_file(h, s->sensors_file);
  for (int i = 0; i < s->argc; i++) {
    h = fnv(h, s->argv[i], strlen(s->argv[i]) + 1);
  }
  if (s->argc > 0) {
    char prog[SCN_PATH_MAX];
    resolve_program(s, prog, sizeof prog);
    h = fnv_file(h, prog);
  }
  return fnv_file(h, s->replay);
}

/* --- placeholders ----------------------------------------------------------------------------- */

typedef struct places {
  char serial[256], servo_bus[256], pub[256], cmd[256], ctl[256], seed[32];
  const char *scenario_dir, *out_dir;
} places;

/* word with {serial}, {servo_bus}, {zmq.pub}, {zmq.cmd}, {zmq.ctl}, {scenario_dir}, {out_dir}
 * and {seed} replaced */
static char *expand(const char *word, const places *pl) {
  const char *names[] = {"{serial}",  "{servo_bus}",    "{zmq.pub}", "{zmq.cmd}",
                         "{zmq.ctl}", "{scenario_dir}", "{out_dir}", "{seed}"};
  const char *values[] = {pl->serial, pl->servo_bus,   pl->pub,    pl->cmd,
                          pl->ctl,    pl->scenario_dir, pl->out_dir, pl->seed};
  char out[4096] = "";
  for (const char *p = word; *p;) {
    int hit = -1;
    for (int i = 0; i < 8 && hit < 0; i++) {
      hit = strncmp(p, names[i], strlen(names[i])) == 0 ? i : -1;
    }
    size_t used = strlen(out);
    if (hit >= 0) {
      snprintf(out + used, sizeof out - used, "%s", values[hit]);
      p += strlen(names[hit]);
    } else {
      snprintf(out + used, sizeof out - used, "%c", *p++);
    }
  }
  return strdup(out);
}

/* --- building the run ------------------------------------------------------------------------- */

static int add(scn_run *r, hil_transport *t, const char *what, char *err, size_t err_sz) {
  const int rc = hil_runtime_add_transport(r->rt, t);
  if (rc != HIL_OK) {
    snprintf(err, err_sz, "%s: %s", what, hil_strerror(rc));
  }
  return rc;
}

static int add_link(scn_run *r, places *pl, char *err, size_t err_sz) {
  const hil_scenario *s = r->s;
  if (s->link == SCN_LINK_SERIAL) {
    hil_serial_options so;
    hil_serial_options_default(&so); /* a pty, whatever the robot file says for `run` */
    so.quiet = 1;
    hil_transport *t = hil_serial_transport_new(&so, err, err_sz);
    if (!t || add(r, t, "serial", err, err_sz) != HIL_OK) {
      return HIL_ESYSTEM;
    }
    r->link = t;
    snprintf(pl->serial, sizeof pl->serial, "%s", hil_serial_transport_path(t));
  } else if (s->link == SCN_LINK_SERVO_BUS) {
    servo_bus_options bo;
    int present = 0;
    servo_bus_options_default(&bo);
    if (servo_bus_options_parse(&bo, &present, s->load, err, err_sz) != HIL_OK) {
      return HIL_ECONFIG;
    }
    bo.use_pty = 1, bo.port[0] = '\0', bo.link[0] = '\0', bo.quiet = 1;
    hil_transport *t = servo_bus_new(&bo, s->load, err, err_sz);
    if (!t || add(r, t, "servo bus", err, err_sz) != HIL_OK) {
      return t ? HIL_ESYSTEM : HIL_ECONFIG;
    }
    r->link = t;
    snprintf(pl->servo_bus, sizeof pl->servo_bus, "%s", servo_bus_path(t));
  } else if (s->link == SCN_LINK_ZMQ) {
    hil_zmq_options zo;
    hil_zmq_options_default(&zo);
    snprintf(r->ipc_dir, sizeof r->ipc_dir, "/tmp/achilles-test-XXXXXX");
    if (!mkdtemp(r->ipc_dir)) {
      snprintf(err, err_sz, "zmq: cannot make a folder for the ipc:// endpoints: %s",
               strerror(errno));
      r->ipc_dir[0] = '\0';
      return HIL_ESYSTEM;
    }
    snprintf(zo.pub, sizeof zo.pub, "ipc://%s/pub", r->ipc_dir);
    snprintf(zo.cmd, sizeof zo.cmd, "ipc://%s/cmd", r->ipc_dir);
    snprintf(zo.ctl, sizeof zo.ctl, "ipc://%s/ctl", r->ipc_dir);
    hil_transport *t = hil_zmq_transport_new(&zo, err, err_sz);
    if (!t || add(r, t, "zmq", err, err_sz) != HIL_OK) {
      return HIL_ESYSTEM;
    }
    r->zmq = t;
    snprintf(pl->pub, sizeof pl->pub, "%s", zo.pub);
    snprintf(pl->cmd, sizeof pl->cmd, "%s", zo.cmd);
    snprintf(pl->ctl, sizeof pl->ctl, "%s", zo.ctl);
  }
  return HIL_OK;
}

/* the runtime, with the scenario's sensors and its changes of the model made before the start */
static int make_runtime(scn_run *r, const char *out_dir, char *err, size_t err_sz) {
  const hil_scenario *s = r->s;
  hil_options o = s->opt;
  char sensors[SCN_PATH_MAX];
  o.duration_s = s->duration_s;
  o.quiet = 1;
  o.status_period_s = 0; /* wall-clock statuses would reach the firmware at unknown steps */
  o.seed = s->seed, o.has_seed = s->has_seed;
  if (s->sensors_text) {
    snprintf(sensors, sizeof sensors, "%s/sensors.json", out_dir);
    FILE *f = fopen(sensors, "w");
    if (!f || fputs(s->sensors_text, f) < 0 || fclose(f) != 0) {
      snprintf(err, err_sz, "%s: cannot write: %s", sensors, strerror(errno));
      return HIL_EIO;
    }
    o.sensors_file = sensors;
  }
  r->rt = hil_runtime_new(s->load, &o, err, err_sz);
  if (!r->rt) {
    return HIL_ECONFIG;
  }
  if (s->nstart > 0) {
    const sim_import_options import = {0, NULL, NULL};
    sim_model *m = sim_import_load_file(s->load, &import, err, err_sz);
    for (int k = 0; m && k < s->nstart; k++) {
      if (scn_change_apply(m, &s->start[k], err, err_sz)) {
        sim_model_free(m);
        return HIL_ECONFIG;
      }
    }
    if (!m || hil_runtime_swap_model(r->rt, m, err, err_sz) != HIL_OK) {
      return HIL_ECONFIG;
    }
  }
  sens_set *set = hil_runtime_sensors(r->rt);
  for (int i = 0; set && i < sens_set_count(set) && i < 64; i++) {
    r->drop0[i] = sens_set_sensor(set, i)->drop_probability;
  }
  return HIL_OK;
}

/* the commands of a recorded log (accepted ones), for a "replay" firmware */
static int load_replay(scn_run *r, char *err, size_t err_sz) {
  hil_log_reader *lr = hil_log_reader_open(r->s->replay, err, err_sz);
  if (!lr) {
    return HIL_EIO;
  }
  int cap = 1024, rc;
  r->replay = malloc((size_t)cap * sizeof *r->replay);
  hil_log_record rec;
  while (r->replay && (rc = hil_log_next(lr, &rec, err, err_sz)) != 0) {
    if (rc < 0) {
      continue; /* a damaged record: the reader goes on with the next line */
    }
    if (rec.type != HIL_LOG_COMMAND || strncmp(rec.result, "rejected", 8) == 0) {
      continue;
    }
    const int a = hil_commands_find(hil_runtime_commands(r->rt), rec.actuator);
    if (a < 0) {
      continue;
    }
    if (r->nreplay == cap) {
      scn_command *more = realloc(r->replay, (size_t)(cap *= 2) * sizeof *more);
      if (!more) {
        break;
      }
      r->replay = more;
    }
    r->replay[r->nreplay++] = (scn_command){rec.t, a, rec.command};
  }
  hil_log_reader_close(&lr);
  return r->replay ? HIL_OK : HIL_ENOMEM;
}

/* environ with the link's paths added (ACHILLES_SERIAL, ACHILLES_SERVO_BUS, ACHILLES_ZMQ_*) */
static char **firmware_env(const places *pl, char extra[5][320]) {
  size_t n = 0;
  while (environ[n]) {
    n++;
  }
  char **env = calloc(n + 6, sizeof *env);
  if (!env) {
    return NULL;
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const char *e = environ[i];
    if (strncmp(e, "ACHILLES_SERIAL=", 16) && strncmp(e, "ACHILLES_SERVO_BUS=", 19) &&
        strncmp(e, "ACHILLES_ZMQ_", 13)) {
      env[k++] = environ[i];
    }
  }
  snprintf(extra[0], 320, "ACHILLES_SERIAL=%s", pl->serial);
  snprintf(extra[1], 320, "ACHILLES_SERVO_BUS=%s", pl->servo_bus);
  snprintf(extra[2], 320, "ACHILLES_ZMQ_PUB=%s", pl->pub);
  snprintf(extra[3], 320, "ACHILLES_ZMQ_CMD=%s", pl->cmd);
  snprintf(extra[4], 320, "ACHILLES_ZMQ_CTL=%s", pl->ctl);
  for (int i = 0; i < 5; i++) {
    env[k++] = extra[i];
  }
  return env;
}

static int start_firmware(scn_run *r, const places *pl, const char *log_path, char *err,
                          size_t err_sz) {
  const hil_scenario *s = r->s;
  char *argv[SCN_MAX_ARGS + 1] = {NULL}, prog[SCN_PATH_MAX], extra[5][320];
  resolve_program(s, prog, sizeof prog);
  argv[0] = strdup(prog);
  for (int i = 1; i < s->argc; i++) {
    argv[i] = expand(s->argv[i], pl);
  }
  char **env = firmware_env(pl, extra);
  int rc = env ? scn_process_start(&r->fw, argv, env, log_path, err, err_sz) : HIL_ENOMEM;
  free(env);
  for (int i = 0; i < s->argc; i++) {
    free(argv[i]);
  }
  return rc;
}

/* --- the hook --------------------------------------------------------------------------------- */

/* a line the firmware printed, at the simulation time the loop is at (the end, once it ended) */
static void on_output(void *user, const char *line) {
  scn_run *r = user;
  const double t = r->rt ? hil_runtime_data(r->rt)->time : r->end_time;
  for (int i = 0; i < r->s->nchecks; i++) {
    scn_check_output(&r->checks[i], line, t);
  }
}

/* the wall-clock limit: a firmware that hangs (or a lockstep that waits forever) ends the run */
static int over_time(scn_run *r) {
  if (interrupted) {
    r->interrupted = 1;
    hil_runtime_request_stop(r->rt);
    return 1;
  }
  if (!r->hung && hil_monotonic_s() - r->wall_start > r->s->time_limit_s) {
    r->hung = 1;
    hil_runtime_request_stop(r->rt);
  }
  return r->hung;
}

static void watch_firmware(scn_run *r) {
  if (r->fw.pid <= 0) {
    return;
  }
  scn_process_read(&r->fw, on_output, r);
  if (r->firmware_gone == 0 && scn_process_poll(&r->fw)) {
    r->firmware_gone = 1;
    r->exited_at = hil_runtime_data(r->rt)->time;
  }
}

static void before_step(void *user, hil_runtime *rt, sim_data *d) {
  scn_run *r = user;
  if (over_time(r)) {
    return;
  }
  watch_firmware(r);
  const double half = 0.5 * hil_runtime_model(rt)->opt.timestep;
  hil_commands *cmds = hil_runtime_commands(rt);
  while (r->next_replay < r->nreplay && r->replay[r->next_replay].t <= d->time + half) {
    const scn_command *c = &r->replay[r->next_replay++];
    hil_commands_submit(cmds, c->actuator, c->value, hil_runtime_loop_time(rt));
  }
  scn_events_due(r, d);
}

static void after_sense(void *user, hil_runtime *rt) {
  scn_run *r = user;
  const sim_model *m = hil_runtime_model(rt);
  const sim_data *d = hil_runtime_data(rt);
  r->last_state_wall = hil_monotonic_s();
  r->digest = fnv(r->digest, d->qpos, (size_t)m->nq * sizeof(double));
  r->digest = fnv(r->digest, d->qvel, (size_t)m->nv * sizeof(double));
  const hil_command_counters *counters = &hil_runtime_commands(rt)->counters;
  r->counters = *counters; /* as of the last state: what arrives after it is no step's */
  for (int i = 0; i < r->s->nchecks; i++) {
    scn_check_observe(&r->checks[i], m, d, counters, m->opt.timestep);
  }
}

/* Lockstep steps without commands when nobody can send them: no firmware program, its line cut,
 * it is frozen, or it is gone (noticed once, then one more input pass for what it wrote last);
 * and over a corrupting line when a step's commands did not come within SCN_CORRUPT_WAIT_S. */
static int release(void *user, hil_runtime *rt) {
  scn_run *r = user;
  if (over_time(r)) {
    return 0;
  }
  if (r->fw.pid <= 0 || r->cut || r->fw.frozen) {
    return 1;
  }
  if (r->corrupting) { /* an answer that came damaged, or none for a while: no answer is coming */
    const uint64_t malformed = hil_runtime_commands(rt)->counters.rejected_malformed;
    if (malformed > r->counters.rejected_malformed ||
        hil_monotonic_s() - r->last_state_wall > SCN_CORRUPT_WAIT_S) {
      return 1;
    }
  }
  const int noticed = r->firmware_gone;
  watch_firmware(r);
  if (r->firmware_gone && noticed) {
    r->firmware_gone = 2;
  }
  return r->firmware_gone == 2;
}

/* --- the result ------------------------------------------------------------------------------- */

static cJSON *numbers(const double *v, int n) {
  return cJSON_CreateDoubleArray(v, n);
}

static void add_firmware(cJSON *res, const scn_run *r, const scn_outcome *o) {
  const hil_scenario *s = r->s;
  static const char *const links[] = {"serial", "servo_bus", "zmq", "none"};
  cJSON *fw = cJSON_AddObjectToObject(res, "firmware");
  cJSON *cmd = cJSON_AddArrayToObject(fw, "command");
  for (int i = 0; i < s->argc; i++) {
    cJSON_AddItemToArray(cmd, cJSON_CreateString(s->argv[i]));
  }
  cJSON_AddStringToObject(fw, "link", s->replay[0] ? "replay" : links[s->link]);
  if (o->exited) {
    cJSON_AddNumberToObject(fw, "exit_code", o->exit_code);
    cJSON_AddNumberToObject(fw, "exited_at", o->exited_at);
  } else {
    cJSON_AddNullToObject(fw, "exit_code");
  }
  cJSON_AddBoolToObject(fw, "stopped_by_scenario", o->stopped_by_scenario);
}

static void add_timing(cJSON *res, const hil_status *st) {
  cJSON *t = cJSON_AddObjectToObject(res, "timing");
  cJSON_AddNumberToObject(t, "wall_s", st->wall_time);
  cJSON_AddNumberToObject(t, "late_p50_s", st->late_p50);
  cJSON_AddNumberToObject(t, "late_p99_s", st->late_p99);
  cJSON_AddNumberToObject(t, "late_max_s", st->late_max);
  cJSON_AddNumberToObject(t, "compute_p99_s", st->compute_p99);
  cJSON_AddNumberToObject(t, "overruns", (double)st->overruns);
  cJSON_AddNumberToObject(t, "skipped", (double)st->skipped);
}

static cJSON *make_result(scn_run *r, const hil_scenario_run_options *opt, const scn_outcome *o,
                          const hil_status *st, const double *q, const double *qd, int nq,
                          int nv) {
  const hil_scenario *s = r->s;
  char hex[24];
  cJSON *res = cJSON_CreateObject();
  cJSON_AddNumberToObject(res, "v", 1);
  cJSON_AddStringToObject(res, "scenario", s->name);
  if (opt->id) {
    cJSON_AddStringToObject(res, "id", opt->id);
  }
  cJSON_AddStringToObject(res, "robot", s->robot_name);
  cJSON_AddStringToObject(res, "mode", hil_mode_name(s->opt.mode));
  cJSON_AddNumberToObject(res, "rate_hz", s->opt.rate_hz);
  if (s->has_seed) {
    cJSON_AddNumberToObject(res, "seed", (double)s->seed);
  }
  cJSON_AddNumberToObject(res, "duration_s", s->duration_s);
  int failed = 0;
  cJSON *checks = cJSON_CreateArray();
  for (int i = 0; i < s->nchecks + 2; i++) {
    if (r->checks[i].name[0]) {
      failed += !r->checks[i].pass;
      cJSON_AddItemToArray(checks, scn_check_json(&r->checks[i]));
    }
  }
  failed += r->err[0] != 0 || r->interrupted;
  cJSON_AddStringToObject(res, "verdict", failed ? "fail" : "pass");
  if (r->interrupted) {
    cJSON_AddBoolToObject(res, "interrupted", 1);
  }
  cJSON_AddNumberToObject(res, "failed", failed);
  cJSON_AddItemToObject(res, "checks", checks);
  if (r->err[0]) {
    cJSON_AddStringToObject(res, "error", r->err);
  }
  cJSON_AddItemToObject(res, "events", r->applied);
  r->applied = NULL;
  add_firmware(res, r, o);
  cJSON_AddNumberToObject(res, "end_time", o->end_time);
  cJSON_AddNumberToObject(res, "steps", (double)st->steps);
  cJSON *c = cJSON_AddObjectToObject(res, "commands"); /* up to the last state (after_sense) */
  const hil_command_counters *k = &r->counters;
  cJSON_AddNumberToObject(c, "accepted", (double)k->accepted);
  cJSON_AddNumberToObject(c, "clamped", (double)k->clamped);
  cJSON_AddNumberToObject(c, "rejected", (double)(k->rejected_nonfinite + k->rejected_unknown +
                                                  k->rejected_malformed));
  cJSON_AddNumberToObject(c, "watchdog_trips", (double)k->watchdog_trips);
  if (r->has_link_counters) {
    cJSON *l = cJSON_AddObjectToObject(res, "link");
    cJSON_AddNumberToObject(l, "corrupted", (double)r->link_counters.corrupted);
    cJSON_AddNumberToObject(l, "lost", (double)r->link_counters.lost);
  }
  cJSON *fin = cJSON_AddObjectToObject(res, "final");
  cJSON_AddItemToObject(fin, "qpos", numbers(q, nq));
  cJSON_AddItemToObject(fin, "qvel", numbers(qd, nv));
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)r->digest);
  cJSON_AddStringToObject(res, "trajectory_digest", hex);
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)hil_scenario_inputs_digest(s));
  cJSON_AddStringToObject(res, "inputs_digest", hex);
  cJSON *files = cJSON_AddObjectToObject(res, "files");
  cJSON_AddStringToObject(files, "log", "run.log");
  if (r->fw.pid > 0) {
    cJSON_AddStringToObject(files, "firmware_output", "firmware.log");
  }
  if (s->opt.mode == HIL_MODE_REALTIME) {
    add_timing(res, st);
  }
  return res;
}

/* the implicit checks after the scenario's own: the time limit, and the firmware living on */
static void implicit_checks(scn_run *r, int expected_exit) {
  const hil_scenario *s = r->s;
  scn_check *limit = &r->checks[s->nchecks];
  memset(limit, 0, sizeof *limit);
  limit->kind = SCN_CK_TIME_LIMIT;
  snprintf(limit->name, sizeof limit->name, "ends within its time limit");
  snprintf(limit->unit, sizeof limit->unit, "s");
  limit->at = NAN;
  scn_check *alive = &r->checks[s->nchecks + 1];
  memset(alive, 0, sizeof *alive);
  if (r->fw.pid > 0 && !expected_exit) {
    alive->kind = SCN_CK_FIRMWARE_ALIVE;
    snprintf(alive->name, sizeof alive->name, "firmware runs to the end");
    snprintf(alive->unit, sizeof alive->unit, "s");
    alive->at = NAN;
  }
}

static void finish(scn_run *r, scn_outcome *o) {
  int expected_exit = 0;
  for (int i = 0; i < r->s->nchecks; i++) {
    expected_exit |= r->checks[i].kind == SCN_CK_EXIT_CODE;
  }
  o->expected_exit = expected_exit;
  implicit_checks(r, expected_exit);
  for (int i = 0; i < r->s->nchecks + 2; i++) {
    if (r->checks[i].name[0]) {
      scn_check_finish(&r->checks[i], o);
    }
  }
}

static int write_result(const char *path, const cJSON *res, char *err, size_t err_sz) {
  char *text = cJSON_Print(res);
  FILE *f = text ? fopen(path, "w") : NULL;
  const int ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
  if (f && fclose(f) != 0) {
    snprintf(err, err_sz, "%s: %s", path, strerror(errno));
    free(text);
    return HIL_EIO;
  }
  free(text);
  if (!ok) {
    snprintf(err, err_sz, "%s: cannot write: %s", path, strerror(errno));
    return HIL_EIO;
  }
  return HIL_OK;
}

/* --- the run ---------------------------------------------------------------------------------- */

static int setup(scn_run *r, const hil_scenario_run_options *o, places *pl, char *err,
                 size_t err_sz) {
  const hil_scenario *s = r->s;
  char path[SCN_PATH_MAX];
  int rc = make_runtime(r, o->out_dir, err, err_sz);
  if (rc == HIL_OK) {
    rc = add_link(r, pl, err, err_sz);
  }
  snprintf(path, sizeof path, "%s/run.log", o->out_dir);
  if (rc == HIL_OK && hil_runtime_record(r->rt, path, err, err_sz) != HIL_OK) {
    rc = HIL_EIO;
  }
  if (rc == HIL_OK) {
    rc = scn_events_prepare(r, err, err_sz);
  }
  if (rc == HIL_OK && s->replay[0]) {
    rc = load_replay(r, err, err_sz);
  }
  const sim_model *m = r->rt ? hil_runtime_model(r->rt) : NULL;
  for (int i = 0; rc == HIL_OK && i < s->nchecks; i++) {
    r->checks[i] = s->checks[i];
    if (scn_check_resolve(&r->checks[i], m, s->source, err, err_sz) != 0) {
      rc = HIL_ECONFIG;
    }
  }
  snprintf(path, sizeof path, "%s/firmware.log", o->out_dir);
  if (rc == HIL_OK && s->argc > 0) {
    rc = start_firmware(r, pl, path, err, err_sz);
  }
  return rc;
}

static void teardown(scn_run *r) {
  scn_events_release(r);
  hil_runtime_destroy(&r->rt);
  scn_process_stop(&r->fw, r->s->stop_timeout_s, NULL, NULL);
  scn_process_close(&r->fw);
  if (r->ipc_dir[0]) {
    const char *names[] = {"pub", "cmd", "ctl"};
    for (int i = 0; i < 3; i++) {
      char p[200];
      snprintf(p, sizeof p, "%s/%s", r->ipc_dir, names[i]);
      unlink(p);
    }
    rmdir(r->ipc_dir);
  }
  free(r->replay);
  cJSON_Delete(r->applied);
}

int hil_scenario_run(const hil_scenario *s, const hil_scenario_run_options *o, cJSON **result,
                     char *err, size_t err_sz) {
  *result = NULL;
  if (hil_scenario_make_dirs(o->out_dir) != 0) {
    snprintf(err, err_sz, "%s: cannot make the folder: %s", o->out_dir, strerror(errno));
    return HIL_EIO;
  }
  if (s->servos[0] && scn_pin_robot((hil_scenario *)s, err, err_sz) != 0) {
    return HIL_ECONFIG; /* another scenario may have pinned its robot since this one loaded */
  }
  scn_run *r = calloc(1, sizeof *r);
  if (!r) {
    snprintf(err, err_sz, "out of memory");
    return HIL_ENOMEM;
  }
  r->s = s;
  r->digest = FNV_START;
  r->fw.in_fd = r->fw.out_fd = -1;
  r->applied = cJSON_CreateArray();
  places pl = {.scenario_dir = s->dir, .out_dir = o->out_dir};
  snprintf(pl.seed, sizeof pl.seed, "%llu", (unsigned long long)s->seed);
  int rc = setup(r, o, &pl, err, err_sz);
  if (rc != HIL_OK) {
    teardown(r);
    free(r);
    return rc;
  }
  const hil_hook hook = {before_step, after_sense, release, r};
  hil_runtime_set_hook(r->rt, &hook);
  r->wall_start = hil_monotonic_s();
  hil_runtime_run(r->rt);
  /* what the run leaves: the state, the counters, the firmware's fate */
  watch_firmware(r);
  scn_outcome out = {0};
  hil_status st;
  hil_runtime_status_total(r->rt, &st);
  const sim_model *m = hil_runtime_model(r->rt);
  const int nq = m->nq, nv = m->nv;
  double *q = malloc(sizeof(double) * (size_t)(nq + nv + 1));
  memcpy(q, hil_runtime_data(r->rt)->qpos, (size_t)nq * sizeof(double));
  memcpy(q + nq, hil_runtime_data(r->rt)->qvel, (size_t)nv * sizeof(double));
  out.end_time = hil_runtime_data(r->rt)->time;
  out.hung = r->hung;
  out.time_limit_s = s->time_limit_s;
  out.trips = st.commands.watchdog_trips;
  out.overruns = st.overruns;
  const int exited_during = r->fw.exited;
  out.exited_at = exited_during ? r->exited_at : out.end_time;
  r->end_time = out.end_time;
  if (r->link && r->link->ops->link_fault) { /* the link goes with the runtime */
    r->link->ops->link_fault(r->link, NULL, &r->link_counters);
    r->has_link_counters = 1;
  }
  r->link = r->zmq = NULL;
  hil_runtime_destroy(&r->rt); /* its ports close: a serial firmware sees the end */
  if (r->fw.pid > 0) {
    scn_process_stop(&r->fw, s->stop_timeout_s, on_output, r);
  }
  out.firmware = r->fw.pid > 0;
  out.exited = r->fw.exited;
  out.exit_code = scn_process_exit_code(&r->fw);
  out.stopped_by_scenario = r->fw.killed;
  finish(r, &out);
  *result = make_result(r, o, &out, &st, q, q + nq, nq, nv);
  free(q);
  teardown(r);
  free(r);
  char path[SCN_PATH_MAX];
  snprintf(path, sizeof path, "%s/result.json", o->out_dir);
  return write_result(path, *result, err, err_sz);
}
