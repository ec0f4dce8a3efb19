/* hil/scenario/parse.c: reading a scenario file and checking it against its robot and sensors,
 * so that a scenario that cannot run is refused before anything starts, with its field named. */
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hil/error.h"
#include "hil/scenario/scenario_internal.h"
#include "hil/servo/servo_file.h"
#include "sensors/sensors.h"
#include "sim/import/import.h"

/* --- paths ------------------------------------------------------------------------------------ */

static void dir_of(char *out, size_t out_sz, const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) {
    snprintf(out, out_sz, ".");
  } else if (slash == path) {
    snprintf(out, out_sz, "/");
  } else {
    snprintf(out, out_sz, "%.*s", (int)(slash - path), path);
  }
}

/* rel against dir (an absolute rel stays) */
static void join(char *out, size_t out_sz, const char *dir, const char *rel) {
  if (rel[0] == '/') {
    snprintf(out, out_sz, "%s", rel);
  } else {
    snprintf(out, out_sz, "%s/%s", dir, rel);
  }
}

/* the robot with the servos file on its joints, pinned under the name the loaders read */
int scn_pin_robot(hil_scenario *s, char *err, size_t err_sz) {
  char msg[1024];
  if (servo_file_pin(s->load, sizeof s->load, s->robot, s->servos, msg, sizeof msg) != 0) {
    snprintf(err, err_sz, "%s: servos: %s", s->source, msg);
    return -1;
  }
  return 0;
}

/* --- sections --------------------------------------------------------------------------------- */

static int read_choice(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                       const char *const *names, int *out) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  char p[SIM_JSON_PATH_MAX], list[160] = "";
  if (!item) {
    return 0;
  }
  for (int i = 0; names[i]; i++) {
    if (cJSON_IsString(item) && strcmp(item->valuestring, names[i]) == 0) {
      *out = i;
      return 0;
    }
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", i ? ", " : "",
             names[i]);
  }
  sim_json_path_join(p, path, key);
  return sim_json_fail(L, p, "expected one of %s", list);
}

/* "runtime": the robot's own section with these over it; lockstep unless the scenario says */
static int parse_runtime(const sim_json_ctx *L, const cJSON *rt, hil_scenario *s) {
  static const char *const keys[] = {"mode", "rate_hz", "speed", "overrun", "watchdog",
                                     "comment", NULL};
  static const char *const wkeys[] = {"timeout_s", "on_timeout", "comment", NULL};
  static const char *const modes[] = {"realtime", "lockstep", "fast", NULL};
  static const char *const policies[] = {"skip", "catchup", NULL};
  static const char *const actions[] = {"zero", "hold", NULL};
  int mode = HIL_MODE_LOCKSTEP, policy = (int)s->opt.overrun, action = (int)s->opt.on_timeout;
  s->opt.mode = HIL_MODE_LOCKSTEP;
  if (!rt) {
    return 0;
  }
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(rt, "watchdog");
  if (sim_json_expect_object(L, rt, "runtime") || sim_json_check_keys(L, rt, "runtime", keys) ||
      read_choice(L, rt, "runtime", "mode", modes, &mode) ||
      sim_json_read_number(L, rt, "runtime", "rate_hz", &s->opt.rate_hz, 0) ||
      sim_json_check_min(L, "runtime", "rate_hz", s->opt.rate_hz, HIL_RATE_MIN_HZ, 0) ||
      sim_json_check_max(L, "runtime", "rate_hz", s->opt.rate_hz, HIL_RATE_MAX_HZ) ||
      sim_json_read_number(L, rt, "runtime", "speed", &s->opt.speed, 0) ||
      sim_json_check_min(L, "runtime", "speed", s->opt.speed, 0, 0) ||
      read_choice(L, rt, "runtime", "overrun", policies, &policy) ||
      (w && (sim_json_expect_object(L, w, "runtime.watchdog") ||
             sim_json_check_keys(L, w, "runtime.watchdog", wkeys) ||
             sim_json_read_number(L, w, "runtime.watchdog", "timeout_s",
                                  &s->opt.watchdog_timeout_s, 0) ||
             sim_json_check_min(L, "runtime.watchdog", "timeout_s", s->opt.watchdog_timeout_s, 0,
                                0) ||
             read_choice(L, w, "runtime.watchdog", "on_timeout", actions, &action)))) {
    return -1;
  }
  s->opt.mode = (hil_mode)mode;
  s->opt.overrun = (hil_overrun)policy;
  s->opt.on_timeout = (hil_timeout_action)action;
  return 0;
}

static int parse_firmware(const sim_json_ctx *L, const cJSON *fw, hil_scenario *s) {
  static const char *const keys[] = {"command", "link", "replay", "stop_timeout_s", "comment",
                                     NULL};
  static const char *const links[] = {"serial", "servo_bus", "zmq", "none", NULL};
  char p[SIM_JSON_PATH_MAX], replay[SCN_PATH_MAX] = "";
  s->link = SCN_LINK_NONE;
  s->stop_timeout_s = 1.0;
  if (!fw) {
    return 0;
  }
  const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(fw, "command");
  int link = cmd ? SCN_LINK_SERIAL : SCN_LINK_NONE;
  if (sim_json_expect_object(L, fw, "firmware") || sim_json_check_keys(L, fw, "firmware", keys) ||
      read_choice(L, fw, "firmware", "link", links, &link) ||
      sim_json_read_string(L, fw, "firmware", "replay", replay, sizeof replay) ||
      sim_json_read_number(L, fw, "firmware", "stop_timeout_s", &s->stop_timeout_s, 0) ||
      sim_json_check_min(L, "firmware", "stop_timeout_s", s->stop_timeout_s, 0, 0)) {
    return -1;
  }
  s->link = (scn_link)link;
  if (replay[0]) {
    if (cmd) {
      return sim_json_fail(L, "firmware", "either \"command\" (a program) or \"replay\" (a "
                                          "recorded log's commands), not both");
    }
    join(s->replay, sizeof s->replay, s->dir, replay);
    s->link = SCN_LINK_NONE;
    return 0;
  }
  if (!cmd) {
    if (s->link != SCN_LINK_NONE) {
      return sim_json_fail(L, "firmware.command", "missing (the program and its arguments)");
    }
    return 0;
  }
  sim_json_path_join(p, "firmware", "command");
  const int n = cJSON_GetArraySize(cmd);
  if (!cJSON_IsArray(cmd) || n < 1 || n > SCN_MAX_ARGS) {
    return sim_json_fail(L, p, "expected an array of 1 to %d strings", SCN_MAX_ARGS);
  }
  for (int i = 0; i < n; i++) {
    const cJSON *a = cJSON_GetArrayItem(cmd, i);
    if (!cJSON_IsString(a) || (i == 0 && !a->valuestring[0])) {
      char q[SIM_JSON_PATH_MAX];
      sim_json_path_index(q, p, i);
      return sim_json_fail(L, q, "expected a%s string", i == 0 ? " non-empty" : "");
    }
    s->argv[i] = strdup(a->valuestring);
    if (!s->argv[i]) {
      return sim_json_fail(L, p, "out of memory");
    }
    s->argc = i + 1;
  }
  if (s->link == SCN_LINK_NONE) {
    return sim_json_fail(L, "firmware.link", "\"none\" with a command: name the link the "
                                             "firmware talks over (serial, servo_bus, zmq)");
  }
  return 0;
}

/* the sensors block of the scenario or the robot, with "sensor_overrides" applied */
static cJSON *sensors_block(const sim_json_ctx *L, const cJSON *root, hil_scenario *s) {
  char err2[512], p[SCN_PATH_MAX];
  const cJSON *file = cJSON_GetObjectItemCaseSensitive(root, "sensors");
  if (file) {
    if (!cJSON_IsString(file)) {
      sim_json_fail(L, "sensors", "expected a file name (docs/sensors.md)");
      return NULL;
    }
    join(s->sensors_file, sizeof s->sensors_file, s->dir, file->valuestring);
    cJSON *block = sim_json_parse_file(s->sensors_file, L->err, L->err_sz);
    return block;
  }
  if (sim_import_detect(s->load) != SIM_IMPORT_JSON) {
    return cJSON_CreateNull(); /* an MJCF or URDF robot has sensors only through "sensors" */
  }
  cJSON *robot = sim_json_parse_file(s->load, L->err, L->err_sz);
  if (!robot) {
    return NULL;
  }
  cJSON *block = cJSON_DetachItemFromObjectCaseSensitive(robot, "sensors");
  cJSON_Delete(robot);
  if (cJSON_IsString(block)) {
    char dir[SCN_PATH_MAX];
    dir_of(dir, sizeof dir, s->load);
    join(p, sizeof p, dir, block->valuestring);
    snprintf(s->sensors_file, sizeof s->sensors_file, "%s", p);
    cJSON_Delete(block);
    block = sim_json_parse_file(p, err2, sizeof err2);
    if (!block) {
      snprintf(L->err, L->err_sz, "%s", err2);
    }
  }
  return block ? block : cJSON_CreateNull();
}

/* sets key (dotted: "noise.white.sigma") inside obj to a copy of value */
static int set_dotted(cJSON *obj, const char *key, const cJSON *value) {
  char part[64];
  const char *dot = strchr(key, '.');
  if (!dot) {
    cJSON *copy = cJSON_Duplicate(value, 1);
    if (cJSON_GetObjectItemCaseSensitive(obj, key)) {
      cJSON_ReplaceItemInObjectCaseSensitive(obj, key, copy);
    } else {
      cJSON_AddItemToObject(obj, key, copy);
    }
    return 0;
  }
  if ((size_t)(dot - key) >= sizeof part) {
    return -1;
  }
  snprintf(part, sizeof part, "%.*s", (int)(dot - key), key);
  cJSON *inner = cJSON_GetObjectItemCaseSensitive(obj, part);
  if (!inner) {
    inner = cJSON_AddObjectToObject(obj, part);
  }
  return cJSON_IsObject(inner) ? set_dotted(inner, dot + 1, value) : -1;
}

static int apply_overrides(const sim_json_ctx *L, const cJSON *list, cJSON *block) {
  static const char *const keys[] = {"sensor", "set", "comment", NULL};
  char p[SIM_JSON_PATH_MAX], name[SIM_NAME_MAX];
  if (!cJSON_IsArray(list)) {
    return sim_json_fail(L, "sensor_overrides", "expected an array of {\"sensor\", \"set\"}");
  }
  cJSON *sensors = cJSON_GetObjectItemCaseSensitive(block, "list");
  for (int i = 0; i < cJSON_GetArraySize(list); i++) {
    const cJSON *o = cJSON_GetArrayItem(list, i);
    sim_json_path_index(p, "sensor_overrides", i);
    if (sim_json_expect_object(L, o, p) || sim_json_check_keys(L, o, p, keys) ||
        sim_json_read_name(L, o, p, "sensor", name, 1)) {
      return -1;
    }
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(o, "set");
    if (!cJSON_IsObject(set)) {
      char q[SIM_JSON_PATH_MAX];
      sim_json_path_join(q, p, "set");
      return sim_json_fail(L, q, "expected an object of keys (dotted: \"noise.white.sigma\")");
    }
    int hits = 0;
    for (int k = 0; k < cJSON_GetArraySize(sensors); k++) {
      cJSON *sensor = cJSON_GetArrayItem(sensors, k);
      const cJSON *sname = cJSON_GetObjectItemCaseSensitive(sensor, "name");
      if (!cJSON_IsString(sname) || fnmatch(name, sname->valuestring, 0) != 0) {
        continue;
      }
      hits++;
      for (const cJSON *kv = set->child; kv; kv = kv->next) {
        if (set_dotted(sensor, kv->string, kv) != 0) {
          char q[SIM_JSON_PATH_MAX];
          sim_json_path_join(q, p, "set");
          return sim_json_fail(L, q, "\"%s\": not a key inside sensor %s", kv->string,
                               sname->valuestring);
        }
      }
    }
    if (hits == 0) {
      char q[SIM_JSON_PATH_MAX];
      sim_json_path_join(q, p, "sensor");
      return sim_json_fail(L, q, "no sensor matches \"%s\"", name);
    }
  }
  return 0;
}

/* Loads the sensors (for the names events and checks use) and keeps the block's text when the
 * scenario changed or chose it. *set is NULL for a robot without sensors. */
static int load_sensors(const sim_json_ctx *L, const cJSON *root, hil_scenario *s,
                        const sim_model *m, sens_set **set) {
  *set = NULL;
  cJSON *block = sensors_block(L, root, s);
  if (!block) {
    return -1;
  }
  const cJSON *overrides = cJSON_GetObjectItemCaseSensitive(root, "sensor_overrides");
  int rc = 0;
  if (cJSON_IsNull(block)) {
    rc = overrides ? sim_json_fail(L, "sensor_overrides", "the robot has no sensors") : 0;
  } else if (overrides && apply_overrides(L, overrides, block)) {
    rc = -1;
  } else {
    char msg[512], source[SCN_PATH_MAX + 32];
    snprintf(source, sizeof source, "%s", s->sensors_file[0] ? s->sensors_file : s->robot);
    if (sens_set_load_json(set, m, block, source, msg, sizeof msg) != 0) {
      rc = overrides ? sim_json_fail(L, "sensor_overrides", "the sensors with these changes: %s",
                                     msg)
                     : (snprintf(L->err, L->err_sz, "%s", msg), -1);
    } else if (overrides || cJSON_GetObjectItemCaseSensitive(root, "sensors")) {
      s->sensors_text = cJSON_Print(block);
    }
  }
  cJSON_Delete(block);
  return rc;
}

/* --- checking names against the robot --------------------------------------------------------- */

static int sensor_matches(const sens_set *set, const char *pattern) {
  for (int i = 0; set && i < sens_set_count(set); i++) {
    if (fnmatch(pattern, sens_set_sensor(set, i)->name, 0) == 0) {
      return 1;
    }
  }
  return 0;
}

/* what each event names exists, and what it sets is accepted (tried on a copy of the sensors) */
static int check_event(const sim_json_ctx *L, hil_scenario *s, const scn_event *e,
                       const sim_model *m, sens_set *set) {
  char p[SIM_JSON_PATH_MAX], msg[256];
  if (e->kind == SCN_EV_FORCE && sim_model_body(m, e->name) <= 0) {
    sim_json_path_join(p, e->path, "force.body");
    return sim_json_fail(L, p, "unknown body \"%s\" of %s", e->name, m->name);
  }
  if (e->kind == SCN_EV_SENSOR_FAULT || e->kind == SCN_EV_SENSOR_PARAM) {
    sim_json_path_join(p, e->path,
                       e->kind == SCN_EV_SENSOR_FAULT ? "sensor_fault" : "sensor_param");
    if (!sensor_matches(set, e->name)) {
      return sim_json_fail(L, p, "no sensor matches \"%s\"", e->name);
    }
    for (int i = 0; i < sens_set_count(set); i++) {
      const char *name = sens_set_sensor(set, i)->name;
      int rc = 0;
      if (fnmatch(e->name, name, 0) != 0) {
        continue;
      }
      if (e->kind == SCN_EV_SENSOR_PARAM) {
        rc = sens_set_param(set, name, e->param, e->value, msg, sizeof msg);
      } else if (!e->dropout) {
        rc = sens_set_fault(set, name, e->group[0] ? e->group : NULL, &e->fault, msg, sizeof msg);
      }
      if (rc != 0) {
        return sim_json_fail(L, p, "%s", msg);
      }
    }
  }
  if ((e->kind == SCN_EV_STDIN || e->kind == SCN_EV_SIGNAL) && s->argc == 0) {
    sim_json_path_join(p, e->path, "firmware");
    return sim_json_fail(L, p, "the scenario starts no firmware program");
  }
  if (e->kind == SCN_EV_LINK && s->link != SCN_LINK_SERIAL && s->link != SCN_LINK_SERVO_BUS) {
    sim_json_path_join(p, e->path, "link");
    return sim_json_fail(L, p, "the firmware's link is not a serial line or servo bus");
  }
  return 0;
}

/* the start changes and then each model event's, on one copy: every change must apply */
static int check_models(const sim_json_ctx *L, hil_scenario *s) {
  const sim_import_options import = {0, NULL, NULL};
  sim_model *m = sim_import_load_file(s->load, &import, L->err, L->err_sz);
  int rc = m ? 0 : -1;
  for (int k = 0; rc == 0 && k < s->nstart; k++) {
    rc = scn_change_apply(m, &s->start[k], L->err, L->err_sz);
  }
  for (int i = 0; rc == 0 && i < s->nevents; i++) {
    if (s->events[i].kind == SCN_EV_MODEL) {
      rc = scn_change_apply(m, &s->events[i].change, L->err, L->err_sz);
    }
  }
  if (rc != 0 && m) { /* the change's path is in the message; name the file too */
    char msg[512];
    snprintf(msg, sizeof msg, "%s", L->err);
    snprintf(L->err, L->err_sz, "%s: %s", L->source, msg);
  }
  sim_model_free(m);
  return rc;
}

static int check_names(const sim_json_ctx *L, const cJSON *root, hil_scenario *s) {
  const sim_import_options import = {0, NULL, NULL};
  sim_model *m = sim_import_load_file(s->load, &import, L->err, L->err_sz);
  if (!m) {
    return -1;
  }
  snprintf(s->robot_name, sizeof s->robot_name, "%s", m->name);
  sens_set *set = NULL;
  int rc = load_sensors(L, root, s, m, &set);
  for (int i = 0; rc == 0 && i < s->nevents; i++) {
    rc = check_event(L, s, &s->events[i], m, set);
  }
  for (int i = 0; rc == 0 && i < s->nchecks; i++) {
    scn_check *c = &s->checks[i];
    rc = scn_check_resolve(c, m, L->source, L->err, L->err_sz);
    if (rc == 0 && (c->kind == SCN_CK_OUTPUT || c->kind == SCN_CK_EXIT_CODE) && s->argc == 0) {
      rc = sim_json_fail(L, c->path, "the scenario starts no firmware program");
    }
  }
  sens_set_free(&set);
  sim_model_free(m);
  return rc == 0 ? check_models(L, s) : rc;
}

/* --- the whole file --------------------------------------------------------------------------- */

static int parse_list(const sim_json_ctx *L, const cJSON *root, const char *key, int max,
                      int *n, int (*one)(const sim_json_ctx *, const cJSON *, const char *, void *),
                      void *array, size_t size) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, key);
  *n = 0;
  if (!list) {
    return 0;
  }
  if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) > max) {
    return sim_json_fail(L, key, "expected an array of at most %d entries", max);
  }
  for (int i = 0; i < cJSON_GetArraySize(list); i++) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_index(p, key, i);
    if (one(L, cJSON_GetArrayItem(list, i), p, (char *)array + (size_t)i * size)) {
      return -1;
    }
    (*n)++;
  }
  return 0;
}

static int one_event(const sim_json_ctx *L, const cJSON *o, const char *p, void *out) {
  return scn_event_parse(L, o, p, out);
}
static int one_check(const sim_json_ctx *L, const cJSON *o, const char *p, void *out) {
  return scn_check_parse(L, o, p, out);
}
static int one_change(const sim_json_ctx *L, const cJSON *o, const char *p, void *out) {
  return scn_change_parse(L, o, p, 1, out);
}

/* events in time order; equal times keep the file's order */
static void sort_events(hil_scenario *s) {
  for (int i = 1; i < s->nevents; i++) {
    scn_event e = s->events[i];
    int k = i;
    for (; k > 0 && s->events[k - 1].t > e.t; k--) {
      s->events[k] = s->events[k - 1];
    }
    s->events[k] = e;
  }
}

int scn_parse(hil_scenario *s, const cJSON *root, char *err, size_t err_sz) {
  static const char *const keys[] = {"name", "description", "robot", "servos", "sensors", "seed",
                                     "duration_s", "time_limit_s", "runtime", "sensor_overrides",
                                     "model_overrides", "firmware", "timeline", "checks",
                                     "base_dir", "extends", "comment", NULL};
  const sim_json_ctx L = {s->source, err, err_sz};
  char robot[SCN_PATH_MAX] = "", base[SCN_PATH_MAX] = "";
  double seed = -1, limit = 0;
  if (sim_json_expect_object(&L, root, "") || sim_json_check_keys(&L, root, "", keys) ||
      sim_json_read_string(&L, root, "", "name", s->name, sizeof s->name) ||
      sim_json_read_string(&L, root, "", "description", s->description, sizeof s->description) ||
      sim_json_read_string(&L, root, "", "base_dir", base, sizeof base) ||
      sim_json_read_string(&L, root, "", "robot", robot, sizeof robot) ||
      sim_json_read_number(&L, root, "", "seed", &seed, 0) ||
      sim_json_read_number(&L, root, "", "duration_s", &s->duration_s, 1) ||
      sim_json_check_min(&L, "", "duration_s", s->duration_s, 0, 1) ||
      sim_json_read_number(&L, root, "", "time_limit_s", &limit, 0) ||
      sim_json_check_min(&L, "", "time_limit_s", limit, 0, 0)) {
    return -1;
  }
  if (base[0]) { /* a campaign's copy of a scenario keeps the original's folder */
    snprintf(s->dir, sizeof s->dir, "%s", base);
  }
  if (!robot[0]) {
    return sim_json_fail(&L, "robot", "missing (the robot file, relative to the scenario)");
  }
  join(s->robot, sizeof s->robot, s->dir, robot);
  snprintf(s->load, sizeof s->load, "%s", s->robot);
  char servos[SCN_PATH_MAX] = "";
  if (sim_json_read_string(&L, root, "", "servos", servos, sizeof servos)) {
    return -1;
  }
  if (servos[0]) { /* the robot with its servos, as `achilles run --servos` reads it */
    join(s->servos, sizeof s->servos, s->dir, servos);
    if (scn_pin_robot(s, err, err_sz) != 0) {
      return -1;
    }
  }
  if (cJSON_GetObjectItemCaseSensitive(root, "seed")) {
    if (seed < 0 || seed != floor(seed) || seed > 9007199254740992.0) {
      return sim_json_fail(&L, "seed", "expected an integer from 0 to 2^53 (got %g)", seed);
    }
    s->has_seed = 1, s->seed = (uint64_t)seed;
  }
  hil_options_default(&s->opt);
  if (hil_options_parse(&s->opt, s->load, err, err_sz) != HIL_OK ||
      parse_runtime(&L, cJSON_GetObjectItemCaseSensitive(root, "runtime"), s) ||
      parse_firmware(&L, cJSON_GetObjectItemCaseSensitive(root, "firmware"), s) ||
      parse_list(&L, root, "model_overrides", SCN_MAX_CHANGES, &s->nstart, one_change, s->start,
                 sizeof s->start[0]) ||
      parse_list(&L, root, "timeline", SCN_MAX_EVENTS, &s->nevents, one_event, s->events,
                 sizeof s->events[0]) ||
      parse_list(&L, root, "checks", SCN_MAX_CHECKS - 2, &s->nchecks, one_check, s->checks,
                 sizeof s->checks[0])) {
    return -1;
  }
  sort_events(s);
  const int realtime = s->opt.mode == HIL_MODE_REALTIME;
  s->time_limit_s = limit > 0 ? limit : 10 + (realtime ? 2 : 20) * s->duration_s;
  return check_names(&L, root, s);
}

/* --- public ----------------------------------------------------------------------------------- */

/* RFC 7386 merge patch: objects merge key by key, null removes, anything else replaces */
static void merge_patch(cJSON *target, const cJSON *patch) {
  for (const cJSON *p = patch->child; p; p = p->next) {
    cJSON *t = cJSON_GetObjectItemCaseSensitive(target, p->string);
    if (cJSON_IsNull(p)) {
      cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
    } else if (cJSON_IsObject(p) && cJSON_IsObject(t)) {
      merge_patch(t, p);
    } else if (t) {
      cJSON_ReplaceItemInObjectCaseSensitive(target, p->string, cJSON_Duplicate(p, 1));
    } else {
      cJSON_AddItemToObject(target, p->string, cJSON_Duplicate(p, 1));
    }
  }
}

/* a base's own paths made absolute, so that they keep meaning the files next to the base */
static void absolute_paths(cJSON *base, const char *dir) {
  cJSON *fw = cJSON_GetObjectItemCaseSensitive(base, "firmware");
  cJSON *items[] = {cJSON_GetObjectItemCaseSensitive(base, "robot"),
                    cJSON_GetObjectItemCaseSensitive(base, "servos"),
                    cJSON_GetObjectItemCaseSensitive(base, "sensors"),
                    fw ? cJSON_GetObjectItemCaseSensitive(fw, "replay") : NULL};
  char cwd[SCN_PATH_MAX], from[SCN_PATH_MAX];
  if (dir[0] == '/' || !getcwd(cwd, sizeof cwd)) {
    snprintf(from, sizeof from, "%s", dir);
  } else {
    snprintf(from, sizeof from, "%s/%s", cwd, dir);
  }
  for (int i = 0; i < 4; i++) {
    if (cJSON_IsString(items[i]) && items[i]->valuestring[0] != '/') {
      char abs[SCN_PATH_MAX];
      join(abs, sizeof abs, from, items[i]->valuestring);
      cJSON_SetValuestring(items[i], abs);
    }
  }
}

/* The scenario at path, "extends" resolved: this file merged over its base (and the base's over
 * its own, at most four deep). NULL with a message. */
static cJSON *read_scenario(const char *path, int depth, char *err, size_t err_sz);

cJSON *hil_scenario_read(const char *path, char *err, size_t err_sz) {
  return read_scenario(path, 0, err, err_sz);
}

static cJSON *read_scenario(const char *path, int depth, char *err, size_t err_sz) {
  char *text = sim_json_read_file(path, err, err_sz);
  cJSON *root = text ? sim_json_parse_text(text, path, err, err_sz) : NULL;
  free(text);
  const cJSON *ext = root ? cJSON_GetObjectItemCaseSensitive(root, "extends") : NULL;
  if (!ext) {
    return root;
  }
  char dir[SCN_PATH_MAX], base_path[SCN_PATH_MAX];
  dir_of(dir, sizeof dir, path);
  if (!cJSON_IsString(ext) || depth >= 4) {
    snprintf(err, err_sz, "%s: extends: %s", path,
             depth >= 4 ? "more than four scenarios deep" : "expected a scenario file name");
    cJSON_Delete(root);
    return NULL;
  }
  join(base_path, sizeof base_path, dir, ext->valuestring);
  cJSON *base = read_scenario(base_path, depth + 1, err, err_sz);
  if (!base) {
    cJSON_Delete(root);
    return NULL;
  }
  char base_dir[SCN_PATH_MAX];
  dir_of(base_dir, sizeof base_dir, base_path);
  absolute_paths(base, base_dir);
  cJSON_DeleteItemFromObjectCaseSensitive(root, "extends");
  cJSON_DeleteItemFromObjectCaseSensitive(base, "name"); /* a twin is a scenario of its own */
  merge_patch(base, root);
  cJSON_Delete(root);
  return base;
}

int hil_scenario_load(hil_scenario **out, const char *path, char *err, size_t err_sz) {
  *out = NULL;
  hil_scenario *s = calloc(1, sizeof *s);
  if (s) {
    s->events = calloc(SCN_MAX_EVENTS, sizeof *s->events);
    s->checks = calloc(SCN_MAX_CHECKS, sizeof *s->checks);
  }
  if (!s || !s->events || !s->checks) {
    hil_scenario_free(&s);
    snprintf(err, err_sz, "out of memory");
    return HIL_ENOMEM;
  }
  snprintf(s->source, sizeof s->source, "%s", path);
  dir_of(s->dir, sizeof s->dir, path);
  cJSON *root = read_scenario(path, 0, err, err_sz);
  s->text = root ? cJSON_PrintUnformatted(root) : NULL; /* the effective scenario: its digest */
  int rc = root && s->text && scn_parse(s, root, err, err_sz) == 0 ? HIL_OK : HIL_ECONFIG;
  cJSON_Delete(root);
  if (rc == HIL_OK && !s->name[0]) { /* the file's name without folder and extension */
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    snprintf(s->name, sizeof s->name, "%.*s", (int)strcspn(base, "."), base);
  }
  if (rc != HIL_OK) {
    hil_scenario_free(&s);
    return rc;
  }
  *out = s;
  return HIL_OK;
}

static void free_argv(hil_scenario *s) {
  for (int i = 0; i < s->argc; i++) {
    free(s->argv[i]);
    s->argv[i] = NULL;
  }
  s->argc = 0;
}

void hil_scenario_free(hil_scenario **ps) {
  hil_scenario *s = ps ? *ps : NULL;
  if (!s) {
    return;
  }
  free_argv(s);
  free(s->events);
  free(s->checks);
  free(s->sensors_text);
  free(s->text);
  free(s);
  *ps = NULL;
}

int hil_scenario_set_command(hil_scenario *s, int argc, char *const *argv, char *err,
                             size_t err_sz) {
  if (argc < 1 || argc > SCN_MAX_ARGS || !argv[0][0]) {
    snprintf(err, err_sz, "the firmware command: expected 1 to %d words", SCN_MAX_ARGS);
    return HIL_EINVAL;
  }
  free_argv(s);
  for (int i = 0; i < argc; i++) {
    if (!(s->argv[i] = strdup(argv[i]))) {
      snprintf(err, err_sz, "out of memory");
      return HIL_ENOMEM;
    }
    s->argc = i + 1;
  }
  s->argv_from_cli = 1;
  if (s->link == SCN_LINK_NONE) {
    s->link = SCN_LINK_SERIAL;
  }
  s->replay[0] = '\0';
  return HIL_OK;
}

const char *hil_scenario_name(const hil_scenario *s) {
  return s->name;
}

double hil_scenario_time_limit(const hil_scenario *s) {
  return s->time_limit_s;
}
