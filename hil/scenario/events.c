/* hil/scenario/events.c: the timeline — what each event says (parsing) and what it does when
 * the loop reaches its time (before the step from that time). */
#define _DEFAULT_SOURCE /* fnmatch's FNM_ flags */
#include <fnmatch.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "hil/error.h"
#include "hil/scenario/scenario_internal.h"
#include "sim/import/import.h"

/* --- parsing ---------------------------------------------------------------------------------- */

static int parse_force(const sim_json_ctx *L, const cJSON *o, const char *path, scn_event *e) {
  static const char *const keys[] = {"body", "force", "torque", "duration_s", "comment", NULL};
  e->kind = SCN_EV_FORCE;
  e->duration_s = 0;
  if (sim_json_expect_object(L, o, path) || sim_json_check_keys(L, o, path, keys) ||
      sim_json_read_name(L, o, path, "body", e->name, 1) ||
      sim_json_read_vector(L, o, path, "force", e->wrench, 3, 0) ||
      sim_json_read_vector(L, o, path, "torque", e->wrench + 3, 3, 0) ||
      sim_json_read_number(L, o, path, "duration_s", &e->duration_s, 0) ||
      sim_json_check_min(L, path, "duration_s", e->duration_s, 0, 0)) {
    return -1;
  }
  if (!cJSON_GetObjectItemCaseSensitive(o, "force") &&
      !cJSON_GetObjectItemCaseSensitive(o, "torque")) {
    return sim_json_fail(L, path, "expected \"force\" and/or \"torque\" ([x, y, z], world axes)");
  }
  snprintf(e->label, sizeof e->label, "force [%g %g %g] N, torque [%g %g %g] N·m on %s%s",
           e->wrench[0], e->wrench[1], e->wrench[2], e->wrench[3], e->wrench[4], e->wrench[5],
           e->name, e->duration_s > 0 ? "" : " to the end");
  if (e->duration_s > 0) {
    snprintf(e->label + strlen(e->label), sizeof e->label - strlen(e->label), " for %g s",
             e->duration_s);
  }
  return 0;
}

/* "dropout", "stuck", "spike", "bias", "dead", "none" */
static int parse_sensor_fault(const sim_json_ctx *L, const cJSON *o, const char *path,
                              scn_event *e) {
  static const char *const keys[] = {"sensor", "fault", "probability", "size", "offset", "group",
                                     "comment", NULL};
  char fault[16] = "", p[SIM_JSON_PATH_MAX];
  e->kind = SCN_EV_SENSOR_FAULT;
  if (sim_json_expect_object(L, o, path) || sim_json_check_keys(L, o, path, keys) ||
      sim_json_read_name(L, o, path, "sensor", e->name, 1) ||
      sim_json_read_string(L, o, path, "fault", fault, sizeof fault) ||
      sim_json_read_string(L, o, path, "group", e->group, sizeof e->group) ||
      sim_json_read_number(L, o, path, "probability", &e->fault.probability, 0) ||
      sim_json_read_number(L, o, path, "size", &e->fault.size, 0) ||
      sim_json_read_number(L, o, path, "offset", &e->fault.offset, 0)) {
    return -1;
  }
  sim_json_path_join(p, path, "fault");
  if (strcmp(fault, "dropout") == 0) {
    e->dropout = 1;
  } else if (strcmp(fault, "bias") == 0) {
    e->fault.mode = SENS_FAULT_OFFSET;
  } else if (strcmp(fault, "offset") != 0 && sens_fault_parse(fault) >= 0) {
    e->fault.mode = (sens_fault_mode)sens_fault_parse(fault);
  } else {
    return sim_json_fail(L, p, "expected one of \"dropout\", \"stuck\", \"spike\", \"bias\", "
                               "\"dead\", \"none\"%s", fault[0] ? "" : " (missing)");
  }
  if ((e->dropout || e->fault.mode == SENS_FAULT_SPIKE) &&
      !(e->fault.probability >= 0 && e->fault.probability <= 1)) {
    sim_json_path_join(p, path, "probability");
    return sim_json_fail(L, p, "expected a probability in [0, 1] (got %g)", e->fault.probability);
  }
  snprintf(e->label, sizeof e->label, "sensor fault %s on %s", fault, e->name);
  return 0;
}

static int parse_sensor_param(const sim_json_ctx *L, const cJSON *o, const char *path,
                              scn_event *e) {
  static const char *const keys[] = {"sensor", "param", "value", "comment", NULL};
  e->kind = SCN_EV_SENSOR_PARAM;
  if (sim_json_expect_object(L, o, path) || sim_json_check_keys(L, o, path, keys) ||
      sim_json_read_name(L, o, path, "sensor", e->name, 1) ||
      sim_json_read_string(L, o, path, "param", e->param, sizeof e->param) ||
      sim_json_read_number(L, o, path, "value", &e->value, 1)) {
    return -1;
  }
  if (!e->param[0]) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_join(p, path, "param");
    return sim_json_fail(L, p, "missing (a parameter path such as \"noise.white.sigma\")");
  }
  snprintf(e->label, sizeof e->label, "%s.%s = %g", e->name, e->param, e->value);
  return 0;
}

static int parse_link(const sim_json_ctx *L, const cJSON *o, const char *path, scn_event *e) {
  static const char *const keys[] = {"cut", "corrupt_rate", "seed", "comment", NULL};
  double seed = 1;
  e->kind = SCN_EV_LINK;
  if (sim_json_expect_object(L, o, path) || sim_json_check_keys(L, o, path, keys) ||
      sim_json_read_number(L, o, path, "corrupt_rate", &e->link.corrupt_rate, 0) ||
      sim_json_check_min(L, path, "corrupt_rate", e->link.corrupt_rate, 0, 0) ||
      sim_json_check_max(L, path, "corrupt_rate", e->link.corrupt_rate, 1) ||
      sim_json_read_number(L, o, path, "seed", &seed, 0) ||
      sim_json_check_min(L, path, "seed", seed, 0, 0)) {
    return -1;
  }
  const cJSON *cut = cJSON_GetObjectItemCaseSensitive(o, "cut");
  if (cut && !cJSON_IsBool(cut)) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_join(p, path, "cut");
    return sim_json_fail(L, p, "expected true or false");
  }
  e->link.cut = cJSON_IsTrue(cut);
  e->link.seed = (uint64_t)seed;
  snprintf(e->label, sizeof e->label, "%s",
           e->link.cut ? "the firmware's line cut"
           : e->link.corrupt_rate > 0 ? "the firmware's line corrupting bytes"
                                      : "the firmware's line mended");
  if (!e->link.cut && e->link.corrupt_rate > 0) {
    snprintf(e->label + strlen(e->label), sizeof e->label - strlen(e->label), " at %g",
             e->link.corrupt_rate);
  }
  return 0;
}

static int parse_signal(const sim_json_ctx *L, const cJSON *item, const char *path, scn_event *e) {
  static const char *const names[] = {"kill", "term", "int", "stop", "cont", NULL};
  static const int signals[] = {SIGKILL, SIGTERM, SIGINT, SIGSTOP, SIGCONT};
  for (int i = 0; names[i] && cJSON_IsString(item); i++) {
    if (strcmp(item->valuestring, names[i]) == 0) {
      e->kind = SCN_EV_SIGNAL;
      e->signal = signals[i];
      snprintf(e->label, sizeof e->label, "SIG%s to the firmware",
               i == 0 ? "KILL" : i == 1 ? "TERM" : i == 2 ? "INT" : i == 3 ? "STOP" : "CONT");
      return 0;
    }
  }
  return sim_json_fail(L, path, "expected one of \"kill\", \"term\", \"int\", \"stop\" (freeze), "
                                "\"cont\" (thaw)");
}

static int parse_zmq(const sim_json_ctx *L, const cJSON *o, const char *path, scn_event *e) {
  static const char *const keys[] = {"endpoint", "message", "socket", "comment", NULL};
  char socket[8] = "push", p[SIM_JSON_PATH_MAX];
  e->kind = SCN_EV_ZMQ;
  if (sim_json_expect_object(L, o, path) || sim_json_check_keys(L, o, path, keys) ||
      sim_json_read_string(L, o, path, "endpoint", e->endpoint, sizeof e->endpoint) ||
      sim_json_read_string(L, o, path, "socket", socket, sizeof socket)) {
    return -1;
  }
  if (!e->endpoint[0]) {
    sim_json_path_join(p, path, "endpoint");
    return sim_json_fail(L, p, "missing (where the firmware listens, e.g. \"ipc:///tmp/fw\")");
  }
  if (strcmp(socket, "push") != 0 && strcmp(socket, "pub") != 0) {
    sim_json_path_join(p, path, "socket");
    return sim_json_fail(L, p, "expected \"push\" (connects) or \"pub\" (binds)");
  }
  e->zmq_pub = strcmp(socket, "pub") == 0;
  const cJSON *msg = cJSON_GetObjectItemCaseSensitive(o, "message");
  sim_json_path_join(p, path, "message");
  if (!msg) {
    return sim_json_fail(L, p, "missing (a string, or JSON sent as its text)");
  }
  char *text = cJSON_IsString(msg) ? NULL : cJSON_PrintUnformatted(msg);
  const char *body = text ? text : msg->valuestring;
  const int fits = body && strlen(body) < sizeof e->text;
  if (fits) {
    snprintf(e->text, sizeof e->text, "%s", body);
  }
  free(text);
  if (!fits) {
    return sim_json_fail(L, p, "at most %zu bytes", sizeof e->text - 1);
  }
  snprintf(e->label, sizeof e->label, "ZeroMQ message to %s", e->endpoint);
  return 0;
}

static int parse_firmware(const sim_json_ctx *L, const cJSON *o, const char *path, scn_event *e) {
  static const char *const keys[] = {"stdin", "signal", "zmq", "comment", NULL};
  char p[SIM_JSON_PATH_MAX];
  if (sim_json_expect_object(L, o, path) || sim_json_check_keys(L, o, path, keys)) {
    return -1;
  }
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(o, "stdin");
  const cJSON *sig = cJSON_GetObjectItemCaseSensitive(o, "signal");
  const cJSON *zmq = cJSON_GetObjectItemCaseSensitive(o, "zmq");
  if (!!in + !!sig + !!zmq != 1) {
    return sim_json_fail(L, path, "expected one of \"stdin\", \"signal\", \"zmq\"");
  }
  if (sig) {
    sim_json_path_join(p, path, "signal");
    return parse_signal(L, sig, p, e);
  }
  if (zmq) {
    sim_json_path_join(p, path, "zmq");
    return parse_zmq(L, zmq, p, e);
  }
  sim_json_path_join(p, path, "stdin");
  if (!cJSON_IsString(in) || strlen(in->valuestring) + 2 > sizeof e->text) {
    return sim_json_fail(L, p, "expected a line of text (at most %zu bytes)", sizeof e->text - 2);
  }
  e->kind = SCN_EV_STDIN;
  snprintf(e->text, sizeof e->text, "%s%s", in->valuestring,
           in->valuestring[0] && in->valuestring[strlen(in->valuestring) - 1] == '\n' ? "" : "\n");
  snprintf(e->label, sizeof e->label, "stdin: %.*s", (int)strcspn(in->valuestring, "\n"),
           in->valuestring);
  return 0;
}

int scn_event_parse(const sim_json_ctx *L, const cJSON *obj, const char *path, scn_event *e) {
  static const char *const keys[] = {"t", "force", "sensor_fault", "sensor_param", "link",
                                     "model", "firmware", "comment", NULL};
  static const char *const actions[] = {"force", "sensor_fault", "sensor_param", "link", "model",
                                        "firmware"};
  char p[SIM_JSON_PATH_MAX];
  memset(e, 0, sizeof *e);
  snprintf(e->path, sizeof e->path, "%s", path);
  if (sim_json_expect_object(L, obj, path) || sim_json_check_keys(L, obj, path, keys) ||
      sim_json_read_number(L, obj, path, "t", &e->t, 1) ||
      sim_json_check_min(L, path, "t", e->t, 0, 0)) {
    return -1;
  }
  int found = -1, count = 0;
  for (int i = 0; i < 6; i++) {
    if (cJSON_GetObjectItemCaseSensitive(obj, actions[i])) {
      found = i, count++;
    }
  }
  if (count != 1) {
    return sim_json_fail(L, path, "expected one action besides \"t\": \"force\", "
                                  "\"sensor_fault\", \"sensor_param\", \"link\", \"model\" or "
                                  "\"firmware\"");
  }
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, actions[found]);
  sim_json_path_join(p, path, actions[found]);
  switch (found) {
  case 0:
    return parse_force(L, a, p, e);
  case 1:
    return parse_sensor_fault(L, a, p, e);
  case 2:
    return parse_sensor_param(L, a, p, e);
  case 3:
    return parse_link(L, a, p, e);
  case 4:
    e->kind = SCN_EV_MODEL;
    if (scn_change_parse(L, a, p, 0, &e->change)) {
      return -1;
    }
    snprintf(e->label, sizeof e->label, "%s of %s %s %s %g", e->change.field,
             e->change.target == SCN_TARGET_JOINT ? "joint"
             : e->change.target == SCN_TARGET_BODY ? "body" : "geom",
             e->change.pattern, e->change.has_scale ? "scaled by" : "set to",
             e->change.has_scale ? e->change.scale : e->change.value[0]);
    return 0;
  default:
    return parse_firmware(L, a, p, e);
  }
}

/* --- before the loop ------------------------------------------------------------------------- */

/* Model events: each the model before it with its change, loaded and changed now (a change
 * never touches the model the loop steps). */
static int prepare_models(scn_run *r, char *err, size_t err_sz) {
  const hil_scenario *s = r->s;
  const sim_import_options import = {0, NULL, NULL};
  for (int i = 0; i < s->nevents; i++) {
    if (s->events[i].kind != SCN_EV_MODEL) {
      continue;
    }
    sim_model *m = sim_import_load_file(s->load, &import, err, err_sz);
    if (!m) {
      return HIL_ECONFIG;
    }
    r->models[i] = m;
    for (int k = 0; k < s->nstart; k++) {
      if (scn_change_apply(m, &s->start[k], err, err_sz)) {
        return HIL_ECONFIG;
      }
    }
    for (int k = 0; k <= i; k++) {
      if (s->events[k].kind == SCN_EV_MODEL &&
          scn_change_apply(m, &s->events[k].change, err, err_sz)) {
        return HIL_ECONFIG;
      }
    }
  }
  return HIL_OK;
}

static int prepare_sockets(scn_run *r, char *err, size_t err_sz) {
  const hil_scenario *s = r->s;
  for (int i = 0; i < s->nevents; i++) {
    const scn_event *e = &s->events[i];
    if (e->kind != SCN_EV_ZMQ) {
      continue;
    }
    if (!r->zmq_ctx && !(r->zmq_ctx = zmq_ctx_new())) {
      snprintf(err, err_sz, "zmq: cannot create a context");
      return HIL_ESYSTEM;
    }
    void *sock = zmq_socket(r->zmq_ctx, e->zmq_pub ? ZMQ_PUB : ZMQ_PUSH);
    const int linger = 200;
    if (sock) {
      zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    }
    if (!sock || (e->zmq_pub ? zmq_bind(sock, e->endpoint) : zmq_connect(sock, e->endpoint))) {
      snprintf(err, err_sz, "%s.firmware.zmq: %s %s: %s", e->path,
               e->zmq_pub ? "bind" : "connect", e->endpoint, zmq_strerror(zmq_errno()));
      if (sock) {
        zmq_close(sock);
      }
      return HIL_ESYSTEM;
    }
    r->zmq_socket[i] = sock;
  }
  return HIL_OK;
}

int scn_events_prepare(scn_run *r, char *err, size_t err_sz) {
  int rc = prepare_models(r, err, err_sz);
  return rc == HIL_OK ? prepare_sockets(r, err, err_sz) : rc;
}

void scn_events_release(scn_run *r) {
  for (int i = 0; i < SCN_MAX_EVENTS; i++) {
    sim_model_free(r->models[i]);
    r->models[i] = NULL;
    if (r->zmq_socket[i]) {
      zmq_close(r->zmq_socket[i]);
      r->zmq_socket[i] = NULL;
    }
  }
  if (r->zmq_ctx) {
    zmq_ctx_term(r->zmq_ctx);
    r->zmq_ctx = NULL;
  }
}

/* --- in the loop ------------------------------------------------------------------------------ */

void scn_forces_apply(scn_run *r, sim_data *d) {
  if (r->nforces == 0) {
    return;
  }
  const sim_model *m = hil_runtime_model(r->rt);
  for (int i = 0; i < r->nforces; i++) { /* every body a force ever touched: from zero */
    memset(d->xfrc_applied + 6 * r->forces[i].body, 0, 6 * sizeof(double));
  }
  const double half = 0.5 * m->opt.timestep;
  for (int i = 0; i < r->nforces; i++) {
    const scn_force *f = &r->forces[i];
    if (d->time < f->until - half) {
      for (int k = 0; k < 6; k++) {
        d->xfrc_applied[6 * f->body + k] += f->wrench[k];
      }
    }
  }
}

/* sensors whose names match the event's pattern get its fault or parameter */
static void apply_sensor(scn_run *r, const scn_event *e) {
  sens_set *set = hil_runtime_sensors(r->rt);
  char err[256];
  for (int i = 0; set && i < sens_set_count(set); i++) {
    const char *name = sens_set_sensor(set, i)->name;
    if (fnmatch(e->name, name, 0) != 0) {
      continue;
    }
    int rc = 0;
    if (e->kind == SCN_EV_SENSOR_PARAM) {
      rc = sens_set_param(set, name, e->param, e->value, err, sizeof err);
    } else if (e->dropout) {
      rc = sens_set_param(set, name, "drop_probability", e->fault.probability, err, sizeof err);
    } else {
      rc = sens_set_fault(set, name, e->group[0] ? e->group : NULL, &e->fault, err, sizeof err);
      if (rc == 0 && e->fault.mode == SENS_FAULT_NONE && i < 64) { /* "none" ends a dropout */
        rc = sens_set_param(set, name, "drop_probability", r->drop0[i], err, sizeof err);
      }
    }
    if (rc != 0 && !r->err[0]) { /* checked at load: cannot happen with a valid scenario */
      snprintf(r->err, sizeof r->err, "%s: %s", e->path, err);
    }
  }
}

static void apply_link(scn_run *r, const scn_event *e) {
  r->cut = e->link.cut;
  r->corrupting = !e->link.cut && e->link.corrupt_rate > 0;
  if (r->link && r->link->ops->link_fault) {
    r->link->ops->link_fault(r->link, &e->link, NULL);
  }
}

static void apply_model(scn_run *r, int i, const scn_event *e) {
  char err[256];
  if (hil_runtime_swap_model(r->rt, r->models[i], err, sizeof err) != HIL_OK && !r->err[0]) {
    snprintf(r->err, sizeof r->err, "%s: %s", e->path, err);
  }
  r->models[i] = NULL; /* the runtime's now (also when refused: it freed it) */
}

static void apply_firmware(scn_run *r, int i, const scn_event *e) {
  if (e->kind == SCN_EV_STDIN) {
    scn_process_write(&r->fw, e->text);
  } else if (e->kind == SCN_EV_SIGNAL) {
    scn_process_signal(&r->fw, e->signal);
  } else if (r->zmq_socket[i]) {
    zmq_send(r->zmq_socket[i], e->text, strlen(e->text), ZMQ_DONTWAIT);
  }
}

static void apply(scn_run *r, int i, sim_data *d) {
  const scn_event *e = &r->s->events[i];
  switch (e->kind) {
  case SCN_EV_FORCE: {
    scn_force *f = &r->forces[r->nforces++];
    f->body = sim_model_body(hil_runtime_model(r->rt), e->name);
    memcpy(f->wrench, e->wrench, sizeof f->wrench);
    f->until = e->duration_s > 0 ? d->time + e->duration_s : INFINITY;
    break;
  }
  case SCN_EV_SENSOR_FAULT:
  case SCN_EV_SENSOR_PARAM:
    apply_sensor(r, e);
    break;
  case SCN_EV_LINK:
    apply_link(r, e);
    break;
  case SCN_EV_MODEL:
    apply_model(r, i, e);
    break;
  default:
    apply_firmware(r, i, e);
    break;
  }
  cJSON *entry = cJSON_CreateObject();
  cJSON_AddNumberToObject(entry, "t", d->time);
  cJSON_AddStringToObject(entry, "event", e->label);
  cJSON_AddItemToArray(r->applied, entry);
}

void scn_events_due(scn_run *r, sim_data *d) {
  const double half = 0.5 * hil_runtime_model(r->rt)->opt.timestep;
  while (r->next_event < r->s->nevents && r->s->events[r->next_event].t <= d->time + half) {
    apply(r, r->next_event++, d);
  }
  scn_forces_apply(r, d);
}
