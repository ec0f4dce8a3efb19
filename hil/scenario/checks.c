/* hil/scenario/checks.c: what a scenario judges — each check reads every state of the run (the
 * state the sensors read, after its samples) or the firmware's output, and ends with a measured
 * value, a bound and a verdict. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hil/scenario/scenario_internal.h"

static const char *const kind_names[] = {"settle",  "overshoot", "range",     "contact_force",
                                         "stall",   "command",   "watchdog",  "output",
                                         "exit_code", "overruns", "firmware_alive", "time_limit"};

const char *scn_check_kind_name(scn_check_kind k) {
  return kind_names[k];
}

/* --- parsing ---------------------------------------------------------------------------------- */

static int window(const sim_json_ctx *L, const cJSON *o, const char *path, scn_check *c) {
  c->from = 0, c->to = INFINITY;
  double to = -1;
  if (sim_json_read_number(L, o, path, "from", &c->from, 0) ||
      sim_json_check_min(L, path, "from", c->from, 0, 0) ||
      sim_json_read_number(L, o, path, "to", &to, 0)) {
    return -1;
  }
  if (cJSON_GetObjectItemCaseSensitive(o, "to")) {
    if (to < c->from) {
      char p[SIM_JSON_PATH_MAX];
      sim_json_path_join(p, path, "to");
      return sim_json_fail(L, p, "must not be before \"from\" (%g s)", c->from);
    }
    c->to = to;
  }
  return 0;
}

static int parse_settle(const sim_json_ctx *L, const cJSON *o, const char *path, scn_check *c) {
  char of[16] = "position", p[SIM_JSON_PATH_MAX];
  if (sim_json_read_name(L, o, path, "joint", c->target, 1) ||
      sim_json_read_number(L, o, path, "value", &c->value, 1) ||
      sim_json_read_number(L, o, path, "tolerance", &c->tolerance, 1) ||
      sim_json_check_min(L, path, "tolerance", c->tolerance, 0, 0) ||
      sim_json_read_string(L, o, path, "of", of, sizeof of)) {
    return -1;
  }
  if (strcmp(of, "position") != 0 && strcmp(of, "velocity") != 0) {
    sim_json_path_join(p, path, "of");
    return sim_json_fail(L, p, "expected \"position\" or \"velocity\"");
  }
  c->velocity = strcmp(of, "velocity") == 0;
  c->bound = c->tolerance;
  return 0;
}

static int parse_range(const sim_json_ctx *L, const cJSON *o, const char *path, scn_check *c) {
  if (sim_json_read_name(L, o, path, "joint", c->target, 1) ||
      sim_json_read_number(L, o, path, "min", &c->min, 0) ||
      sim_json_read_number(L, o, path, "max", &c->max, 0)) {
    return -1;
  }
  c->has_min = cJSON_GetObjectItemCaseSensitive(o, "min") != NULL;
  c->has_max = cJSON_GetObjectItemCaseSensitive(o, "max") != NULL;
  if (!c->has_min && !c->has_max) {
    return sim_json_fail(L, path, "expected \"min\" and/or \"max\"");
  }
  if (c->has_min && c->has_max && c->min > c->max) {
    return sim_json_fail(L, path, "\"min\" above \"max\"");
  }
  return 0;
}

static int parse_output(const sim_json_ctx *L, const cJSON *o, const char *path, scn_check *c) {
  const cJSON *absent = cJSON_GetObjectItemCaseSensitive(o, "absent");
  if (sim_json_read_string(L, o, path, "match", c->match, sizeof c->match) ||
      sim_json_read_number(L, o, path, "by", &c->by, 0)) {
    return -1;
  }
  if (!c->match[0]) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_join(p, path, "match");
    return sim_json_fail(L, p, "missing (text a line of the firmware's output contains)");
  }
  if (absent && !cJSON_IsBool(absent)) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_join(p, path, "absent");
    return sim_json_fail(L, p, "expected true or false");
  }
  c->absent = cJSON_IsTrue(absent);
  c->has_by = cJSON_GetObjectItemCaseSensitive(o, "by") != NULL;
  return 0;
}

static int parse_watchdog(const sim_json_ctx *L, const cJSON *o, const char *path, scn_check *c) {
  double trips = -1, max_trips = -1;
  if (sim_json_read_number(L, o, path, "trips", &trips, 0) ||
      sim_json_read_number(L, o, path, "max_trips", &max_trips, 0)) {
    return -1;
  }
  const int has_trips = cJSON_GetObjectItemCaseSensitive(o, "trips") != NULL;
  const int has_max = cJSON_GetObjectItemCaseSensitive(o, "max_trips") != NULL;
  if (has_trips == has_max) {
    return sim_json_fail(L, path, "expected one of \"trips\" (exactly) or \"max_trips\" (at most)");
  }
  c->exact = has_trips;
  c->bound = has_trips ? trips : max_trips;
  if (c->bound < 0 || c->bound != floor(c->bound)) {
    return sim_json_fail(L, path, "a number of trips: an integer >= 0 (got %g)", c->bound);
  }
  return 0;
}

/* the keys each type takes, besides name, type, comment and the window */
static const char *const *keys_of(scn_check_kind k) {
  static const char *const settle[] = {"joint", "value", "tolerance", "of", NULL};
  static const char *const overshoot[] = {"joint", "target", "max", NULL};
  static const char *const range[] = {"joint", "min", "max", NULL};
  static const char *const force[] = {"geom", "max", NULL};
  static const char *const stall[] = {"actuator", "current", "for_s", NULL};
  static const char *const command[] = {"actuator", "max_abs", NULL};
  static const char *const watchdog[] = {"trips", "max_trips", NULL};
  static const char *const output[] = {"match", "by", "absent", NULL};
  static const char *const exit_code[] = {"equals", NULL};
  static const char *const overruns[] = {"max", NULL};
  static const char *const *const all[] = {settle, overshoot, range,     force,    stall,
                                           command, watchdog, output, exit_code, overruns};
  return all[k];
}

static int check_keys(const sim_json_ctx *L, const cJSON *o, const char *path, scn_check_kind k) {
  const char *allowed[24] = {"name", "type", "comment", "from", "to"};
  int n = 5;
  for (const char *const *key = keys_of(k); *key; key++) {
    allowed[n++] = *key;
  }
  allowed[n] = NULL;
  return sim_json_check_keys(L, o, path, allowed);
}

static int parse_kind(const sim_json_ctx *L, const cJSON *o, const char *path, scn_check *c) {
  switch (c->kind) {
  case SCN_CK_SETTLE:
    return parse_settle(L, o, path, c);
  case SCN_CK_OVERSHOOT:
    return sim_json_read_name(L, o, path, "joint", c->target, 1) ||
           sim_json_read_number(L, o, path, "target", &c->value, 1) ||
           sim_json_read_number(L, o, path, "max", &c->bound, 1) ||
           sim_json_check_min(L, path, "max", c->bound, 0, 0);
  case SCN_CK_RANGE:
    return parse_range(L, o, path, c);
  case SCN_CK_CONTACT_FORCE:
    return sim_json_read_string(L, o, path, "geom", c->target, sizeof c->target) ||
           sim_json_read_number(L, o, path, "max", &c->bound, 1) ||
           sim_json_check_min(L, path, "max", c->bound, 0, 0);
  case SCN_CK_STALL:
    return sim_json_read_name(L, o, path, "actuator", c->target, 1) ||
           sim_json_read_number(L, o, path, "current", &c->bound, 1) ||
           sim_json_check_min(L, path, "current", c->bound, 0, 0) ||
           sim_json_read_number(L, o, path, "for_s", &c->for_s, 1) ||
           sim_json_check_min(L, path, "for_s", c->for_s, 0, 0);
  case SCN_CK_COMMAND:
    snprintf(c->target, sizeof c->target, "*");
    return sim_json_read_string(L, o, path, "actuator", c->target, sizeof c->target) ||
           sim_json_read_number(L, o, path, "max_abs", &c->bound, 1) ||
           sim_json_check_min(L, path, "max_abs", c->bound, 0, 0);
  case SCN_CK_WATCHDOG:
    return parse_watchdog(L, o, path, c);
  case SCN_CK_OUTPUT:
    return parse_output(L, o, path, c);
  case SCN_CK_EXIT_CODE:
    c->bound = 0;
    return sim_json_read_number(L, o, path, "equals", &c->bound, 0);
  default:
    c->bound = 0;
    return sim_json_read_number(L, o, path, "max", &c->bound, 0) ||
           sim_json_check_min(L, path, "max", c->bound, 0, 0);
  }
}

int scn_check_parse(const sim_json_ctx *L, const cJSON *obj, const char *path, scn_check *c) {
  char type[24] = "", p[SIM_JSON_PATH_MAX];
  memset(c, 0, sizeof *c);
  snprintf(c->path, sizeof c->path, "%s", path);
  if (sim_json_expect_object(L, obj, path) ||
      sim_json_read_string(L, obj, path, "type", type, sizeof type)) {
    return -1;
  }
  int kind = -1;
  for (int k = 0; k <= SCN_CK_OVERRUNS; k++) {
    kind = strcmp(type, kind_names[k]) == 0 ? k : kind;
  }
  if (kind < 0) {
    sim_json_path_join(p, path, "type");
    return sim_json_fail(L, p, "%s: expected one of \"settle\", \"overshoot\", \"range\", "
                               "\"contact_force\", \"stall\", \"command\", \"watchdog\", "
                               "\"output\", \"exit_code\", \"overruns\"",
                         type[0] ? "unknown type" : "missing");
  }
  c->kind = (scn_check_kind)kind;
  if (check_keys(L, obj, path, c->kind) || window(L, obj, path, c) ||
      sim_json_read_string(L, obj, path, "name", c->name, sizeof c->name) ||
      parse_kind(L, obj, path, c)) {
    return -1;
  }
  if (!c->name[0]) { /* a name for the reports: its type and what it looks at */
    snprintf(c->name, sizeof c->name, "%s%s%s", type, c->target[0] ? " " : "", c->target);
  }
  return 0;
}

/* --- names against the model ------------------------------------------------------------------ */

static int fail(char *err, size_t err_sz, const char *source, const scn_check *c,
                const char *what, const char *name) {
  snprintf(err, err_sz, "%s: %s: unknown %s \"%s\"", source, c->path, what, name);
  return -1;
}

int scn_check_resolve(scn_check *c, const sim_model *m, const char *source, char *err,
                      size_t err_sz) {
  c->index = -1;
  if (c->kind == SCN_CK_SETTLE || c->kind == SCN_CK_OVERSHOOT || c->kind == SCN_CK_RANGE) {
    c->index = sim_model_joint(m, c->target);
    if (c->index < 0 || m->joints[c->index].dofadr < 0 ||
        sim_joint_nv(m->joints[c->index].type) != 1) {
      return fail(err, err_sz, source, c, "hinge or slide joint", c->target);
    }
    snprintf(c->unit, sizeof c->unit, "%s%s",
             m->joints[c->index].type == SIM_JOINT_SLIDE ? "m" : "rad", c->velocity ? "/s" : "");
  } else if (c->kind == SCN_CK_STALL || (c->kind == SCN_CK_COMMAND && strcmp(c->target, "*"))) {
    c->index = sim_model_actuator(m, c->target);
    if (c->index < 0) {
      return fail(err, err_sz, source, c, "actuator", c->target);
    }
    if (c->kind == SCN_CK_STALL && m->actuators[c->index].type != SIM_ACT_DC_MOTOR) {
      snprintf(err, err_sz, "%s: %s: actuator \"%s\" is not a DC motor: it has no current",
               source, c->path, c->target);
      return -1;
    }
  } else if (c->kind == SCN_CK_CONTACT_FORCE && c->target[0]) {
    for (int g = 0; g < m->ngeom; g++) {
      c->index = strcmp(m->geoms[g].name, c->target) == 0 ? g : c->index;
    }
    if (c->index < 0) {
      return fail(err, err_sz, source, c, "geom", c->target);
    }
  }
  const char *units[] = {NULL, "rad", NULL, "N", "s", "", "trips", "s", "", "", "s", "s"};
  if (units[c->kind]) {
    snprintf(c->unit, sizeof c->unit, "%s", units[c->kind]);
  }
  if (c->kind == SCN_CK_OVERSHOOT) {
    snprintf(c->unit, sizeof c->unit, "%s",
             m->joints[c->index].type == SIM_JOINT_SLIDE ? "m" : "rad");
  }
  c->worst = c->kind == SCN_CK_RANGE ? NAN : 0;
  c->at = NAN;
  return 0;
}

/* --- every state ------------------------------------------------------------------------------ */

static void keep_max(scn_check *c, double v, double t) {
  if (!c->seen || v > c->worst) {
    c->worst = v, c->at = t;
  }
  c->seen = 1;
}

static void observe_range(scn_check *c, double q, double t) {
  /* the side with less room left (or further past): its position is the measured value */
  const double over = c->has_max ? q - c->max : -INFINITY;
  const double under = c->has_min ? c->min - q : -INFINITY;
  const double margin = fmax(over, under);
  if (!c->seen || margin > c->q0) {
    c->q0 = margin, c->worst = q, c->at = t;
  }
  c->seen = 1;
}

static double max_contact_force(const scn_check *c, const sim_model *m, const sim_data *d) {
  double most = 0;
  for (int k = 0; k < d->ncon; k++) {
    if (c->index >= 0 && d->con_geom[2 * k] != c->index && d->con_geom[2 * k + 1] != c->index) {
      continue;
    }
    double f[3];
    sim_contact_force(m, d, k, f);
    most = fmax(most, f[0]);
  }
  return most;
}

static double max_command(const scn_check *c, const sim_model *m, const sim_data *d) {
  double most = 0;
  for (int a = 0; a < m->nu; a++) {
    if (c->index < 0 || a == c->index) {
      most = fmax(most, fabs(d->ctrl[a]));
    }
  }
  return most;
}

void scn_check_observe(scn_check *c, const sim_model *m, const sim_data *d,
                       const hil_command_counters *counters, double h) {
  const double t = d->time, eps = 0.5 * h;
  if (c->kind == SCN_CK_WATCHDOG) { /* a trip: one or more actuators timing out at one step */
    const int rose = counters->watchdog_trips > c->trips_from;
    c->trips_from = counters->watchdog_trips;
    if (t < c->from - eps || t > c->to + eps) {
      return;
    }
    c->seen = 1;
    c->worst += rose;
    return;
  }
  if (t < c->from - eps || t > c->to + eps) {
    return;
  }
  const sim_joint *j = c->index >= 0 && c->kind <= SCN_CK_RANGE ? &m->joints[c->index] : NULL;
  const double q = j ? (c->velocity ? d->qvel[j->dofadr] : d->qpos[j->qposadr]) : 0;
  switch (c->kind) {
  case SCN_CK_SETTLE:
    keep_max(c, fabs(q - c->value), t);
    break;
  case SCN_CK_OVERSHOOT:
    if (!c->seen) { /* the step goes from where the joint is at `from` towards the target */
      c->q0 = q;
      c->sign = c->value >= q ? 1 : -1;
    }
    keep_max(c, fmax(0, c->sign * (q - c->value)), t);
    break;
  case SCN_CK_RANGE:
    observe_range(c, q, t);
    break;
  case SCN_CK_CONTACT_FORCE:
    keep_max(c, max_contact_force(c, m, d), t);
    break;
  case SCN_CK_STALL: {
    const int above = fabs(d->actuator_current[c->index]) > c->bound;
    if (!above) {
      c->above_since = NAN;
    } else if (isnan(c->above_since) || !c->seen) {
      c->above_since = t;
    }
    keep_max(c, above ? t - c->above_since : 0, t);
    break;
  }
  case SCN_CK_COMMAND:
    keep_max(c, max_command(c, m, d), t);
    break;
  default:
    break;
  }
}

void scn_check_output(scn_check *c, const char *line, double t) {
  if (c->kind == SCN_CK_OUTPUT && !c->seen && strstr(line, c->match)) {
    c->seen = 1;
    c->worst = c->at = t;
  }
}

/* --- the verdict ------------------------------------------------------------------------------ */

static void finish_output(scn_check *c) {
  c->measured = c->seen ? c->at : NAN;
  if (c->absent) {
    c->pass = !c->seen;
    if (c->seen) {
      snprintf(c->message, sizeof c->message, "\"%s\" appeared at %.3f s", c->match, c->at);
    } else {
      snprintf(c->message, sizeof c->message, "\"%s\" never appeared", c->match);
    }
    return;
  }
  c->pass = c->seen && (!c->has_by || c->at <= c->by + 1e-9);
  if (!c->seen) {
    snprintf(c->message, sizeof c->message, "\"%s\" never appeared", c->match);
  } else if (c->has_by) {
    snprintf(c->message, sizeof c->message, "\"%s\" at %.3f s %s %g s", c->match, c->at,
             c->pass ? "<=" : ">", c->by);
  } else {
    snprintf(c->message, sizeof c->message, "\"%s\" at %.3f s", c->match, c->at);
  }
}

static void finish_state(scn_check *c) {
  const char *what = c->kind == SCN_CK_SETTLE     ? (c->velocity ? "|velocity error|" : "|error|")
                     : c->kind == SCN_CK_OVERSHOOT ? "overshoot"
                     : c->kind == SCN_CK_CONTACT_FORCE ? "largest contact force"
                     : c->kind == SCN_CK_STALL     ? "longest stretch above the current"
                                                   : "largest |command|";
  c->measured = c->worst;
  if (!c->seen) {
    c->pass = 0;
    snprintf(c->message, sizeof c->message, "the run ended before the window [%g, %g] s", c->from,
             c->to);
    return;
  }
  const double bound = c->kind == SCN_CK_STALL ? c->for_s : c->bound;
  c->pass = c->worst <= bound;
  snprintf(c->message, sizeof c->message, "%s %.6g %s %s %g%s%s (at %.3f s)", what, c->worst,
           c->unit, c->pass ? "<=" : ">", bound, c->unit[0] ? " " : "", c->unit, c->at);
}

static void finish_range(scn_check *c) {
  c->measured = c->worst;
  if (!c->seen) {
    c->pass = 0;
    snprintf(c->message, sizeof c->message, "the run ended before the window");
    return;
  }
  c->pass = c->q0 <= 0;
  snprintf(c->message, sizeof c->message, "%s %.6g %s at %.3f s (allowed [%g, %g])",
           c->pass ? "closest to the limits:" : "beyond the limits:", c->worst, c->unit, c->at,
           c->has_min ? c->min : -INFINITY, c->has_max ? c->max : INFINITY);
}

void scn_check_finish(scn_check *c, const scn_outcome *o) {
  switch (c->kind) {
  case SCN_CK_RANGE:
    finish_range(c);
    return;
  case SCN_CK_WATCHDOG:
    c->measured = c->worst;
    c->pass = c->exact ? c->worst == c->bound : c->worst <= c->bound;
    snprintf(c->message, sizeof c->message, "%.0f watchdog trip%s, %s %.0f", c->worst,
             c->worst == 1 ? "" : "s", c->exact ? "expected" : "at most", c->bound);
    return;
  case SCN_CK_OUTPUT:
    finish_output(c);
    return;
  case SCN_CK_EXIT_CODE:
    c->measured = o->exited ? (double)o->exit_code : NAN;
    c->pass = o->exited && o->exit_code == (int)c->bound;
    if (o->exited) {
      snprintf(c->message, sizeof c->message, "exit code %d, expected %.0f", o->exit_code,
               c->bound);
    } else {
      snprintf(c->message, sizeof c->message, "no firmware exited");
    }
    return;
  case SCN_CK_OVERRUNS:
    c->measured = (double)o->overruns;
    c->pass = c->measured <= c->bound;
    snprintf(c->message, sizeof c->message, "%llu overruns, at most %.0f",
             (unsigned long long)o->overruns, c->bound);
    return;
  case SCN_CK_FIRMWARE_ALIVE:
    c->measured = o->exited && !o->stopped_by_scenario ? o->exited_at : o->end_time;
    c->pass = !(o->exited && !o->stopped_by_scenario && o->exited_at < o->end_time - 1e-9);
    if (c->pass) {
      snprintf(c->message, sizeof c->message, "ran to the end (%.3f s)", o->end_time);
    } else {
      snprintf(c->message, sizeof c->message, "exited at %.3f s with code %d, before the end "
               "(%.3f s)", o->exited_at, o->exit_code, o->end_time);
    }
    return;
  case SCN_CK_TIME_LIMIT: /* simulation time: a result holds no wall-clock figure */
    c->measured = o->end_time;
    c->pass = !o->hung;
    snprintf(c->message, sizeof c->message, o->hung ? "hung: stopped at the limit of %g s of "
             "wall time, at simulation time %.3f s" : "ended within the limit of %g s of wall "
             "time (at %.3f s)", o->time_limit_s, o->end_time);
    return;
  default:
    finish_state(c);
    return;
  }
}

cJSON *scn_check_json(const scn_check *c) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "name", c->name);
  cJSON_AddStringToObject(j, "type", scn_check_kind_name(c->kind));
  cJSON_AddBoolToObject(j, "pass", c->pass);
  if (isfinite(c->measured)) {
    cJSON_AddNumberToObject(j, "measured", c->measured);
  } else {
    cJSON_AddNullToObject(j, "measured");
  }
  const double bound = c->kind == SCN_CK_STALL ? c->for_s : c->bound;
  if (c->kind == SCN_CK_RANGE) {
    if (c->has_min) {
      cJSON_AddNumberToObject(j, "min", c->min);
    }
    if (c->has_max) {
      cJSON_AddNumberToObject(j, "max", c->max);
    }
  } else if (c->kind == SCN_CK_OUTPUT) {
    if (c->has_by) {
      cJSON_AddNumberToObject(j, "bound", c->by);
    }
  } else if (c->kind != SCN_CK_FIRMWARE_ALIVE && c->kind != SCN_CK_TIME_LIMIT) {
    cJSON_AddNumberToObject(j, "bound", bound);
  }
  cJSON_AddStringToObject(j, "unit", c->unit);
  if (isfinite(c->at)) {
    cJSON_AddNumberToObject(j, "at", c->at);
  }
  cJSON_AddStringToObject(j, "message", c->message);
  return j;
}
