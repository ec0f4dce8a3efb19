/* sensors/sensor_config.c: builds a sensor set from JSON (format: docs/sensors.md).
 *
 * Everything is validated before the set is returned: the first error produces one message
 * "<source>: <json path>: <what was expected>" and no set escapes. Unknown keys are errors
 * (typos would otherwise silently leave a parameter at its default); "comment" is allowed in
 * every object.
 */
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensors/quantize.h"
#include "sensors/set_internal.h"
#include "sim/file_read.h"
#include "sim/json_read.h"

#define CFG_PATH_MAX 192
#define CFG_TWO_PI 6.28318530717958647692
/* names go into CSV headers, log lines and stream names: no commas, no control characters */
#define CFG_NAME_FORBIDDEN ",\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11" \
                           "\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f"

typedef struct cfg_ctx {
  const char *source;
  const sim_model *m;
  char *err;
  size_t err_sz;
} cfg_ctx;

static int cfg_fail(const cfg_ctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int cfg_fail(const cfg_ctx *c, const char *path, const char *fmt, ...) {
  if (c->err && c->err_sz > 0) {
    int n = snprintf(c->err, c->err_sz, "%s: %s%s", c->source, path, path[0] ? ": " : "");
    if (n >= 0 && (size_t)n < c->err_sz) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(c->err + n, c->err_sz - (size_t)n, fmt, ap);
      va_end(ap);
    }
  }
  return SENS_EINVAL;
}

static void cfg_join(char out[CFG_PATH_MAX], const char *path, const char *key) {
  /* paths are short; a truncated one still names the place well enough */
  if (snprintf(out, CFG_PATH_MAX, "%s%s%s", path, path[0] ? "." : "", key) >= CFG_PATH_MAX) {
    out[CFG_PATH_MAX - 1] = '\0';
  }
}

/* every key of obj must be in the NULL-terminated list (or be "comment") */
static int cfg_keys(const cfg_ctx *c, const cJSON *obj, const char *path,
                    const char *const *allowed) {
  for (const cJSON *it = obj->child; it; it = it->next) {
    int known = strcmp(it->string, "comment") == 0;
    for (const char *const *k = allowed; *k && !known; k++) {
      known = strcmp(it->string, *k) == 0;
    }
    if (!known) {
      char p[CFG_PATH_MAX], list[320] = "";
      cfg_join(p, path, it->string);
      for (const char *const *k = allowed; *k; k++) {
        strncat(list, *k, sizeof list - strlen(list) - 3);
        if (k[1]) {
          strncat(list, ", ", sizeof list - strlen(list) - 1);
        }
      }
      return cfg_fail(c, p, "unknown key (expected one of: %s)", list);
    }
  }
  return 0;
}

/* --- typed getters: absent keys keep the default ------------------------------------------- */

static int cfg_number(const cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
                      double *out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it) {
    return 0;
  }
  char p[CFG_PATH_MAX];
  cfg_join(p, path, key);
  if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble)) {
    return cfg_fail(c, p, "expected a finite number");
  }
  *out = it->valuedouble;
  return 0;
}

static int cfg_bool(const cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
                    int *out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it) {
    return 0;
  }
  char p[CFG_PATH_MAX];
  cfg_join(p, path, key);
  if (!cJSON_IsBool(it)) {
    return cfg_fail(c, p, "expected true or false");
  }
  *out = cJSON_IsTrue(it);
  return 0;
}

static int cfg_string(const cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
                      const char **out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it) {
    return 0;
  }
  char p[CFG_PATH_MAX];
  cfg_join(p, path, key);
  if (!cJSON_IsString(it) || !it->valuestring[0]) {
    return cfg_fail(c, p, "expected a non-empty string");
  }
  *out = it->valuestring;
  return 0;
}

static int cfg_object(const cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
                      const cJSON **out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  *out = NULL;
  if (!it) {
    return 0;
  }
  char p[CFG_PATH_MAX];
  cfg_join(p, path, key);
  if (!cJSON_IsObject(it)) {
    return cfg_fail(c, p, "expected an object");
  }
  *out = it;
  return 0;
}

/* --- chains: noise, filter, fault, resolution ---------------------------------------------- */

/* numbers of a sub-object, looked up in the chain's parameter table */
static int cfg_chain_numbers(const cfg_ctx *c, const cJSON *obj, const char *path,
                             const char *rel, const char *const *keys, sens_chain_params *p) {
  if (cfg_keys(c, obj, path, keys) != 0) {
    return SENS_EINVAL;
  }
  for (const char *const *k = keys; *k; k++) {
    char relk[CFG_PATH_MAX];
    cfg_join(relk, rel, *k);
    double *field = sens_chain_field(p, relk);
    if (field && cfg_number(c, obj, path, *k, field) != 0) {
      return SENS_EINVAL;
    }
  }
  return 0;
}

static int cfg_noise(const cfg_ctx *c, const cJSON *noise, const char *path,
                     sens_chain_params *p) {
  static const char *const keys[] = {"scale_error", "offset", "bias", "turn_on_bias_sigma",
                                     "white", "gauss_markov", "random_walk", NULL};
  static const char *const white[] = {"sigma", "density", NULL};
  static const char *const gm[] = {"sigma", "tau_s", NULL};
  static const char *const rw[] = {"density", NULL};
  static const char *const *const subkeys[] = {white, gm, rw};
  static const char *const subnames[] = {"white", "gauss_markov", "random_walk"};
  if (cfg_chain_numbers(c, noise, path, "noise", keys, p) != 0) {
    return SENS_EINVAL;
  }
  for (int i = 0; i < 3; i++) {
    const cJSON *sub;
    char sp[CFG_PATH_MAX], rel[CFG_PATH_MAX];
    cfg_join(sp, path, subnames[i]);
    cfg_join(rel, "noise", subnames[i]);
    if (cfg_object(c, noise, path, subnames[i], &sub) != 0 ||
        (sub && cfg_chain_numbers(c, sub, sp, rel, subkeys[i], p) != 0)) {
      return SENS_EINVAL;
    }
  }
  return 0;
}

static int cfg_filter(const cfg_ctx *c, const cJSON *filter, const char *path,
                      sens_chain_params *p) {
  static const char *const keys[] = {"type", "cutoff_hz", NULL};
  const char *type = "first_order";
  if (cfg_keys(c, filter, path, keys) != 0 || cfg_string(c, filter, path, "type", &type) != 0 ||
      cfg_number(c, filter, path, "cutoff_hz", &p->cutoff_hz) != 0) {
    return SENS_EINVAL;
  }
  const int t = sens_filter_parse(type);
  if (t < 0) {
    char tp[CFG_PATH_MAX];
    cfg_join(tp, path, "type");
    return cfg_fail(c, tp, "expected \"none\", \"first_order\" or \"butterworth2\" (got \"%s\")",
                    type);
  }
  p->filter_type = (sens_filter_type)t;
  if (t != SENS_FILTER_NONE && !cJSON_GetObjectItemCaseSensitive(filter, "cutoff_hz")) {
    char cp[CFG_PATH_MAX];
    cfg_join(cp, path, "cutoff_hz");
    return cfg_fail(c, cp, "required for a %s filter", type);
  }
  return 0;
}

static int cfg_fault(const cfg_ctx *c, const cJSON *fault, const char *path,
                     sens_chain_params *p) {
  static const char *const keys[] = {"mode", "probability", "size", "offset", NULL};
  const char *mode = "none";
  if (cfg_chain_numbers(c, fault, path, "fault", keys, p) != 0 ||
      cfg_string(c, fault, path, "mode", &mode) != 0) {
    return SENS_EINVAL;
  }
  const int f = sens_fault_parse(mode);
  if (f < 0 || f == SENS_FAULT_DEAD) {
    char mp[CFG_PATH_MAX];
    cfg_join(mp, path, "mode");
    return cfg_fail(c, mp,
                    "expected \"none\", \"stuck\", \"spike\" or \"offset\" (got \"%s\"; a dead "
                    "sensor is switched at run time)",
                    mode);
  }
  p->fault.mode = (sens_fault_mode)f;
  return 0;
}

/* the chain keys found in obj ("noise", "filter", "fault", and "resolution" if allowed) */
static int cfg_chain(const cfg_ctx *c, const cJSON *obj, const char *path, int with_resolution,
                     double rate_hz, sens_chain_params *p) {
  const cJSON *noise, *filter, *fault;
  char np[CFG_PATH_MAX], fp[CFG_PATH_MAX], xp[CFG_PATH_MAX];
  cfg_join(np, path, "noise");
  cfg_join(fp, path, "filter");
  cfg_join(xp, path, "fault");
  if (cfg_object(c, obj, path, "noise", &noise) != 0 || (noise && cfg_noise(c, noise, np, p)) ||
      cfg_object(c, obj, path, "filter", &filter) != 0 ||
      (filter && cfg_filter(c, filter, fp, p)) || cfg_object(c, obj, path, "fault", &fault) ||
      (fault && cfg_fault(c, fault, xp, p))) {
    return SENS_EINVAL;
  }
  if (with_resolution && cfg_number(c, obj, path, "resolution", &p->resolution) != 0) {
    return SENS_EINVAL;
  }
  char msg[512];
  if (sens_chain_check(p, rate_hz, path, msg, sizeof msg) != 0) {
    return cfg_fail(c, "", "%s", msg);
  }
  return 0;
}

/* --- sensors ------------------------------------------------------------------------------- */

static int cfg_add_channel(sens_sensor *s, const char *name) {
  snprintf(s->channel[s->nch], SENS_CHANNEL_NAME_MAX, "%s", name);
  return s->nch++;
}

static int cfg_joint(const cfg_ctx *c, const cJSON *obj, const char *path, int *joint) {
  const char *name = NULL;
  char jp[CFG_PATH_MAX];
  cfg_join(jp, path, "joint");
  if (cfg_string(c, obj, path, "joint", &name) != 0) {
    return SENS_EINVAL;
  }
  if (!name) {
    return cfg_fail(c, jp, "required: the name of a joint of model \"%s\"", c->m->name);
  }
  *joint = sim_model_joint(c->m, name);
  if (*joint < 0) {
    return cfg_fail(c, jp, "no joint named \"%s\" in model \"%s\"", name, c->m->name);
  }
  if (c->m->joints[*joint].type == SIM_JOINT_FIXED) {
    return cfg_fail(c, jp, "joint \"%s\" is fixed: it has no coordinate to measure", name);
  }
  if (sim_joint_nv(c->m->joints[*joint].type) != 1) {
    return cfg_fail(c, jp, "joint \"%s\" has several degrees of freedom (a joint sensor needs a "
                           "hinge or slide)", name);
  }
  return 0;
}

static int cfg_encoder_outputs(const cfg_ctx *c, const cJSON *obj, const char *path,
                               sens_sensor *s) {
  sens_encoder *e = &s->u.enc;
  const char *output = "both";
  int velocity = 0, index = 0;
  if (cfg_string(c, obj, path, "output", &output) != 0 ||
      cfg_bool(c, obj, path, "velocity", &velocity) != 0 ||
      cfg_bool(c, obj, path, "index", &index) != 0 ||
      cfg_bool(c, obj, path, "wrap", &e->wrap) != 0) {
    return SENS_EINVAL;
  }
  const int counts = strcmp(output, "counts") == 0 || strcmp(output, "both") == 0;
  const int angle = strcmp(output, "angle") == 0 || strcmp(output, "both") == 0;
  if (!counts && !angle) {
    char op[CFG_PATH_MAX];
    cfg_join(op, path, "output");
    return cfg_fail(c, op, "expected \"counts\", \"angle\" or \"both\" (got \"%s\")", output);
  }
  e->ch_counts = counts ? cfg_add_channel(s, "counts") : -1;
  e->ch_angle = angle ? cfg_add_channel(s, "angle") : -1;
  e->ch_velocity = velocity ? cfg_add_channel(s, "velocity") : -1;
  e->ch_index = index ? cfg_add_channel(s, "index") : -1;
  return 0;
}

/* "mode": absolute (the default: counts from the joint angle "zero_offset") or incremental
 * (counts from 0 at start and reset, index mark at the joint angle "index_angle"); each origin
 * key belongs to its own mode, so a misplaced one is an error rather than silently ignored. */
static int cfg_encoder_mode(const cfg_ctx *c, const cJSON *obj, const char *path,
                            sens_encoder *e) {
  const char *mode = "absolute";
  char p[CFG_PATH_MAX];
  if (cfg_string(c, obj, path, "mode", &mode) != 0) {
    return SENS_EINVAL;
  }
  e->incremental = strcmp(mode, "incremental") == 0;
  if (!e->incremental && strcmp(mode, "absolute") != 0) {
    cfg_join(p, path, "mode");
    return cfg_fail(c, p, "expected \"absolute\" or \"incremental\" (got \"%s\")", mode);
  }
  const char *key = e->incremental ? "index_angle" : "zero_offset";
  const char *other = e->incremental ? "zero_offset" : "index_angle";
  if (cJSON_GetObjectItemCaseSensitive(obj, other)) {
    cfg_join(p, path, other);
    return cfg_fail(c, p, "only for an %s encoder (this one is %s; use \"%s\")",
                    e->incremental ? "absolute" : "incremental", mode, key);
  }
  e->origin = 0.0;
  if (cfg_number(c, obj, path, key, &e->origin) != 0) {
    return SENS_EINVAL;
  }
  if (!(fabs(e->origin) <= 1e3)) {
    cfg_join(p, path, key);
    return cfg_fail(c, p, "must be a joint angle in rad within ±1000 (got %g)", e->origin);
  }
  return 0;
}

static int cfg_encoder(const cfg_ctx *c, const cJSON *obj, const char *path, sens_sensor *s) {
  static const char *const keys[] = {
      "name",     "type",     "rate_hz", "latency_s", "drop_probability", "joint", "counts_per_rev",
      "quadrature", "output", "velocity", "index",    "wrap",             "noise", "filter",
      "fault",    "mode",   "zero_offset", "index_angle", NULL};
  sens_encoder *e = &s->u.enc;
  double cpr = 0.0;
  char cp[CFG_PATH_MAX];
  cfg_join(cp, path, "counts_per_rev");
  if (cfg_keys(c, obj, path, keys) != 0 || cfg_joint(c, obj, path, &e->joint) != 0 ||
      cfg_number(c, obj, path, "counts_per_rev", &cpr) != 0 ||
      cfg_bool(c, obj, path, "quadrature", &e->quadrature) != 0) {
    return SENS_EINVAL;
  }
  if (c->m->joints[e->joint].type != SIM_JOINT_HINGE) {
    char jp[CFG_PATH_MAX];
    cfg_join(jp, path, "joint");
    return cfg_fail(c, jp, "an encoder needs a hinge joint (\"%s\" is not one)",
                    c->m->joints[e->joint].name);
  }
  if (!(cpr >= 1.0 && cpr <= 1e8 && cpr == floor(cpr))) {
    return cfg_fail(c, cp, "required: an integer number of lines per revolution in [1, 1e8] "
                           "(got %g)", cpr);
  }
  e->counts_per_rev = (int)cpr;
  e->counts_per_turn = (int64_t)e->counts_per_rev * (e->quadrature ? 4 : 1);
  e->step = CFG_TWO_PI / (double)e->counts_per_turn;
  e->inv_step = (double)e->counts_per_turn / CFG_TWO_PI;
  e->qposadr = c->m->joints[e->joint].qposadr;
  e->dofadr = c->m->joints[e->joint].dofadr;
  if (cfg_encoder_mode(c, obj, path, e) != 0 || cfg_encoder_outputs(c, obj, path, s) != 0) {
    return SENS_EINVAL;
  }
  sens_chain_params p;
  sens_chain_params_default(&p);
  if (cfg_chain(c, obj, path, 0, s->rate_hz, &p) != 0) {
    return SENS_EINVAL;
  }
  /* quantization is the encoder's counting (encoder.c); the chain stays continuous */
  snprintf(s->group[0], SENS_CHANNEL_NAME_MAX, "angle");
  s->nchain = 1;
  sens_chain_init(&s->chain[0], &p, s->rate_hz, 0, 0);
  return 0;
}

static int cfg_imu_place(const cfg_ctx *c, const cJSON *obj, const char *path, sens_imu *imu) {
  const char *body = NULL, *site = NULL;
  if (cfg_string(c, obj, path, "body", &body) != 0 ||
      cfg_string(c, obj, path, "site", &site) != 0) {
    return SENS_EINVAL;
  }
  if ((body != NULL) == (site != NULL)) {
    return cfg_fail(c, path, "give exactly one of \"body\" or \"site\"");
  }
  char p[CFG_PATH_MAX];
  cfg_join(p, path, body ? "body" : "site");
  imu->site = -1;
  memset(imu->pos, 0, sizeof imu->pos);
  if (body) {
    imu->body = sim_model_body(c->m, body);
    if (imu->body <= 0) {
      return cfg_fail(c, p, "no moving body named \"%s\" in model \"%s\"", body, c->m->name);
    }
    return 0;
  }
  imu->site = sim_model_site(c->m, site);
  if (imu->site < 0) {
    return cfg_fail(c, p, "no site named \"%s\" in model \"%s\"", site, c->m->name);
  }
  imu->body = c->m->sites[imu->site].body;
  memcpy(imu->pos, c->m->sites[imu->site].pos, sizeof imu->pos);
  return 0;
}

static int cfg_imu(const cfg_ctx *c, const cJSON *obj, const char *path, sens_sensor *s) {
  static const char *const keys[] = {"name", "type", "rate_hz", "latency_s", "drop_probability",
                                     "body", "site", "gyro", "accel", NULL};
  static const char *const group_keys[] = {"noise", "filter", "fault", "resolution", NULL};
  static const char *const groups[] = {"gyro", "accel"};
  static const char *const axes[] = {"x", "y", "z"};
  if (cfg_keys(c, obj, path, keys) != 0 || cfg_imu_place(c, obj, path, &s->u.imu) != 0) {
    return SENS_EINVAL;
  }
  for (int g = 0; g < 2; g++) {
    const cJSON *gobj;
    char gp[CFG_PATH_MAX];
    cfg_join(gp, path, groups[g]);
    sens_chain_params p;
    sens_chain_params_default(&p);
    if (cfg_object(c, obj, path, groups[g], &gobj) != 0 ||
        (gobj && (cfg_keys(c, gobj, gp, group_keys) != 0 ||
                  cfg_chain(c, gobj, gp, 1, s->rate_hz, &p) != 0))) {
      return SENS_EINVAL;
    }
    snprintf(s->group[g], SENS_CHANNEL_NAME_MAX, "%s", groups[g]);
    for (int k = 0; k < 3; k++) {
      char ch[SENS_CHANNEL_NAME_MAX];
      snprintf(ch, sizeof ch, "%s.%s", groups[g], axes[k]);
      const int idx = cfg_add_channel(s, ch);
      s->group_of_chain[idx] = g;
      sens_chain_init(&s->chain[idx], &p, s->rate_hz, 0, 0);
    }
  }
  s->nchain = 6;
  return 0;
}

/* "actuator": a DC motor whose modelled winding current the sensor reads. */
static int cfg_current_actuator(const cfg_ctx *c, const cJSON *obj, const char *path,
                                sens_torque *t) {
  const char *name = NULL;
  char ap[CFG_PATH_MAX];
  cfg_join(ap, path, "actuator");
  if (cfg_string(c, obj, path, "actuator", &name) != 0) {
    return SENS_EINVAL;
  }
  t->actuator = name ? sim_model_actuator(c->m, name) : -1;
  if (name && t->actuator < 0) {
    return cfg_fail(c, ap, "no actuator named \"%s\" in model \"%s\"", name, c->m->name);
  }
  if (name && c->m->actuators[t->actuator].type != SIM_ACT_DC_MOTOR) {
    return cfg_fail(c, ap, "actuator \"%s\" is not a dc_motor: it has no current", name);
  }
  if (name && cJSON_GetObjectItemCaseSensitive(obj, "torque_constant_nm_per_a")) {
    return cfg_fail(c, ap, "give either an actuator or torque_constant_nm_per_a, not both");
  }
  return 0;
}

static int cfg_torque(const cfg_ctx *c, const cJSON *obj, const char *path, sens_sensor *s) {
  static const char *const keys[] = {"name",      "type",  "rate_hz", "latency_s",
                                     "drop_probability",   "joint",   "torque_constant_nm_per_a",
                                     "gear_ratio", "noise", "filter", "fault",
                                     "resolution", "actuator", NULL};
  sens_torque *t = &s->u.trq;
  t->gear_ratio = 1.0;
  t->torque_constant = 0.0;
  t->actuator = -1;
  if (cfg_keys(c, obj, path, keys) != 0 || cfg_current_actuator(c, obj, path, t) != 0) {
    return SENS_EINVAL;
  }
  if (t->actuator >= 0 && !cJSON_GetObjectItemCaseSensitive(obj, "joint")) {
    t->joint = c->m->actuators[t->actuator].joint; /* the motor's joint */
    if (t->joint < 0) {
      return cfg_fail(c, path, "actuator \"%s\" drives a slider-crank, not a joint: name the "
                      "joint (\"joint\")", c->m->actuators[t->actuator].name);
    }
  } else if (cfg_joint(c, obj, path, &t->joint) != 0) {
    return SENS_EINVAL;
  }
  if (cfg_number(c, obj, path, "torque_constant_nm_per_a", &t->torque_constant) != 0 ||
      cfg_number(c, obj, path, "gear_ratio", &t->gear_ratio) != 0) {
    return SENS_EINVAL;
  }
  char p1[CFG_PATH_MAX];
  if (cJSON_GetObjectItemCaseSensitive(obj, "torque_constant_nm_per_a") &&
      !(t->torque_constant > 0.0)) {
    cfg_join(p1, path, "torque_constant_nm_per_a");
    return cfg_fail(c, p1, "must be > 0 N·m/A (got %g)", t->torque_constant);
  }
  if (!(t->gear_ratio > 0.0)) {
    cfg_join(p1, path, "gear_ratio");
    return cfg_fail(c, p1, "must be > 0 (got %g)", t->gear_ratio);
  }
  t->dofadr = c->m->joints[t->joint].dofadr;
  sens_chain_params p;
  sens_chain_params_default(&p);
  if (cfg_chain(c, obj, path, 1, s->rate_hz, &p) != 0) {
    return SENS_EINVAL;
  }
  snprintf(s->group[0], SENS_CHANNEL_NAME_MAX, "%s",
           t->torque_constant > 0.0 || t->actuator >= 0 ? "current" : "torque");
  cfg_add_channel(s, s->group[0]);
  s->nchain = 1;
  sens_chain_init(&s->chain[0], &p, s->rate_hz, 0, 0);
  return 0;
}

/* "geom": the geom whose contacts the sensor sums; "force": true adds the force.x/y/z channels.
 * One set of chain parameters serves every channel (all are forces, N). */
static int cfg_touch(const cfg_ctx *c, const cJSON *obj, const char *path, sens_sensor *s) {
  static const char *const keys[] = {"name",  "type",   "rate_hz", "latency_s", "drop_probability",
                                     "geom",  "force",  "noise",   "filter",    "fault",
                                     "resolution", NULL};
  static const char *const axes[] = {"force.x", "force.y", "force.z"};
  sens_touch *t = &s->u.tch;
  const char *name = NULL;
  char gp[CFG_PATH_MAX];
  cfg_join(gp, path, "geom");
  t->force3 = 0;
  if (cfg_keys(c, obj, path, keys) != 0 || cfg_string(c, obj, path, "geom", &name) != 0 ||
      cfg_bool(c, obj, path, "force", &t->force3) != 0) {
    return SENS_EINVAL;
  }
  if (!name) {
    return cfg_fail(c, gp, "required: the name of a geom of model \"%s\"", c->m->name);
  }
  t->geom = -1;
  for (int g = 0; g < c->m->ngeom && t->geom < 0; g++) {
    t->geom = strcmp(c->m->geoms[g].name, name) == 0 ? g : -1;
  }
  if (t->geom < 0) {
    return cfg_fail(c, gp, "no geom named \"%s\" in model \"%s\"", name, c->m->name);
  }
  sens_chain_params p;
  sens_chain_params_default(&p);
  if (cfg_chain(c, obj, path, 1, s->rate_hz, &p) != 0) {
    return SENS_EINVAL;
  }
  snprintf(s->group[0], SENS_CHANNEL_NAME_MAX, "normal");
  cfg_add_channel(s, "normal");
  for (int k = 0; t->force3 && k < 3; k++) {
    s->group_of_chain[cfg_add_channel(s, axes[k])] = 0;
  }
  s->nchain = s->nch;
  for (int k = 0; k < s->nchain; k++) {
    sens_chain_init(&s->chain[k], &p, s->rate_hz, 0, 0);
  }
  return 0;
}

/* rate, latency and drops; the divisor when the rate divides the physics rate */
static int cfg_timing(const cfg_ctx *c, const cJSON *obj, const char *path, sens_sensor *s) {
  const double physics_hz = 1.0 / c->m->opt.timestep;
  double latency = 0.0;
  s->rate_hz = physics_hz;
  s->drop_probability = 0.0;
  if (cfg_number(c, obj, path, "rate_hz", &s->rate_hz) != 0 ||
      cfg_number(c, obj, path, "latency_s", &latency) != 0 ||
      cfg_number(c, obj, path, "drop_probability", &s->drop_probability) != 0) {
    return SENS_EINVAL;
  }
  char p[CFG_PATH_MAX];
  if (!(s->rate_hz > 0.0 && s->rate_hz <= 1e7)) {
    cfg_join(p, path, "rate_hz");
    return cfg_fail(c, p, "must be > 0 and <= 1e7 Hz (got %g)", s->rate_hz);
  }
  if (!(latency >= 0.0 && latency * s->rate_hz <= 1e6)) {
    cfg_join(p, path, "latency_s");
    return cfg_fail(c, p, "must be >= 0 s and at most 1e6 samples (got %g)", latency);
  }
  if (!(s->drop_probability >= 0.0 && s->drop_probability <= 1.0)) {
    cfg_join(p, path, "drop_probability");
    return cfg_fail(c, p, "must be in [0, 1] (got %g)", s->drop_probability);
  }
  s->delay_samples = (int)lround(latency * s->rate_hz);
  s->delay_s = s->delay_samples / s->rate_hz;
  const double k = round(physics_hz / s->rate_hz);
  s->divisor = (k >= 1.0 && fabs(k * s->rate_hz / physics_hz - 1.0) < 1e-9) ? (int)k : 0;
  return 0;
}

static int cfg_sensor(const cfg_ctx *c, const cJSON *obj, const char *path, sens_sensor *s) {
  const char *name = NULL, *type = NULL;
  char p[CFG_PATH_MAX];
  if (!cJSON_IsObject(obj)) {
    return cfg_fail(c, path, "expected a sensor object");
  }
  if (cfg_string(c, obj, path, "name", &name) != 0 || cfg_string(c, obj, path, "type", &type)) {
    return SENS_EINVAL;
  }
  if (!name || !name[0] || strlen(name) >= SENS_NAME_MAX || strpbrk(name, CFG_NAME_FORBIDDEN)) {
    cfg_join(p, path, "name");
    return cfg_fail(c, p, "required: a name of 1 to %d bytes without commas or control characters",
                    SENS_NAME_MAX - 1);
  }
  snprintf(s->name, sizeof s->name, "%s", name);
  s->stream = sens__stream_base(name);
  if (cfg_timing(c, obj, path, s) != 0) {
    return SENS_EINVAL;
  }
  cfg_join(p, path, "type");
  if (!type) {
    return cfg_fail(c, p, "required: \"encoder\", \"imu\", \"torque\" or \"touch\"");
  }
  if (strcmp(type, "encoder") == 0) {
    s->type = SENS_ENCODER;
    return cfg_encoder(c, obj, path, s);
  }
  if (strcmp(type, "imu") == 0) {
    s->type = SENS_IMU;
    return cfg_imu(c, obj, path, s);
  }
  if (strcmp(type, "torque") == 0) {
    s->type = SENS_TORQUE;
    return cfg_torque(c, obj, path, s);
  }
  if (strcmp(type, "touch") == 0) {
    s->type = SENS_TOUCH;
    return cfg_touch(c, obj, path, s);
  }
  return cfg_fail(c, p, "expected \"encoder\", \"imu\", \"torque\" or \"touch\" (got \"%s\")",
                  type);
}

/* --- the set ------------------------------------------------------------------------------- */

static int cfg_seed(const cfg_ctx *c, const cJSON *block, uint64_t *seed) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(block, "seed");
  *seed = 0;
  if (!it) {
    return 0;
  }
  const double v = cJSON_IsNumber(it) ? it->valuedouble : -1.0;
  if (!(v >= 0.0 && v <= 9007199254740992.0 && v == floor(v))) {
    return cfg_fail(c, "seed", "expected an integer in [0, 2^53]");
  }
  *seed = (uint64_t)v;
  return 0;
}

static int cfg_delays(sens_set *set) {
  size_t total = 0;
  for (int i = 0; i < set->n; i++) {
    total += (size_t)set->sensors[i].delay_samples * (size_t)(2 + set->sensors[i].nch);
  }
  set->delay_storage = total ? malloc(total * sizeof(double)) : NULL;
  if (total && !set->delay_storage) {
    return SENS_ENOMEM;
  }
  /* an offset, not a pointer: with no latency anywhere the storage is NULL, and NULL + 0 is
   * undefined behaviour in C */
  size_t next = 0;
  for (int i = 0; i < set->n; i++) {
    sens_sensor *s = &set->sensors[i];
    sens_delay_init(&s->delay, s->delay_samples ? set->delay_storage + next : NULL,
                    s->delay_samples, 2 + s->nch);
    next += (size_t)s->delay_samples * (size_t)(2 + s->nch);
  }
  return 0;
}

static int cfg_list(const cfg_ctx *c, const cJSON *list, sens_set *set) {
  for (int i = 0; i < set->n; i++) {
    char p[CFG_PATH_MAX];
    snprintf(p, sizeof p, "list[%d]", i);
    if (cfg_sensor(c, cJSON_GetArrayItem(list, i), p, &set->sensors[i]) != 0) {
      return SENS_EINVAL;
    }
    for (int j = 0; j < i; j++) {
      if (strcmp(set->sensors[j].name, set->sensors[i].name) == 0) {
        snprintf(p, sizeof p, "list[%d].name", i);
        return cfg_fail(c, p, "\"%s\" is already the name of list[%d]", set->sensors[i].name, j);
      }
    }
  }
  return 0;
}

int sens_set_load_json(sens_set **out, const sim_model *m, const cJSON *block, const char *source,
                       char *err, size_t err_sz) {
  static const char *const keys[] = {"seed", "list", NULL};
  const cfg_ctx c = {source ? source : "sensors", m, err, err_sz};
  *out = NULL;
  if (!cJSON_IsObject(block)) {
    return cfg_fail(&c, "", "expected an object {\"seed\": N, \"list\": [sensors]}");
  }
  const sim_json_ctx text_ctx = {c.source, err, err_sz};
  if (sim_json_check_text(&text_ctx, block, "")) {
    return SENS_EINVAL; /* names reach logs and JSON messages: UTF-8 only */
  }
  uint64_t seed;
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(block, "list");
  if (cfg_keys(&c, block, "", keys) != 0 || cfg_seed(&c, block, &seed) != 0) {
    return SENS_EINVAL;
  }
  if (!cJSON_IsArray(list)) {
    return cfg_fail(&c, "list", "required: an array of sensor objects");
  }
  sens_set *set = calloc(1, sizeof *set);
  const int n = cJSON_GetArraySize(list);
  if (!set || !(set->sensors = calloc(n > 0 ? (size_t)n : 1, sizeof *set->sensors))) {
    free(set);
    return sens_fail(err, err_sz, SENS_ENOMEM, "%s: out of memory", c.source);
  }
  set->n = n;
  set->physics_dt = m->opt.timestep;
  int rc = cfg_list(&c, list, set);
  if (rc == 0 && (rc = cfg_delays(set)) != 0) {
    sens_fail(err, err_sz, rc, "%s: out of memory for delay lines", c.source);
  }
  if (rc != 0) {
    sens_set_free(&set);
    return rc;
  }
  sens_set_reset(set, seed);
  *out = set;
  return 0;
}

/* --- files ----------------------------------------------------------------------------------- */

/* parsed JSON of a file (read by the robot loader's reader: regular files or standard input up
 * to SIM_JSON_FILE_MAX, nothing after the value, UTF-8 strings), or NULL with a message */
static cJSON *cfg_parse_file(const char *path, char *err, size_t err_sz, int *rc) {
  char *text = sim_json_read_file(path, err, err_sz);
  *rc = SENS_EIO;
  if (!text) {
    return NULL;
  }
  cJSON *json = sim_json_parse_text(text, path, err, err_sz);
  if (!json) {
    *rc = SENS_EJSON;
  }
  free(text);
  return json;
}

int sens_set_load_file(sens_set **out, const sim_model *m, const char *path, char *err,
                       size_t err_sz) {
  int rc;
  *out = NULL;
  cJSON *json = cfg_parse_file(path, err, err_sz, &rc);
  if (!json) {
    return rc;
  }
  rc = sens_set_load_json(out, m, json, path, err, err_sz);
  cJSON_Delete(json);
  return rc;
}

/* `name` relative to the directory of `base` (absolute names stay as they are; a robot file read
 * from standard input has the current directory) */
static void cfg_relative(char *out, size_t out_sz, const char *base, const char *name) {
  const char *slash = sim_file_is_stdin_name(base) ? NULL : strrchr(base, '/');
  if (name[0] == '/' || !slash) {
    snprintf(out, out_sz, "%s", name);
  } else {
    snprintf(out, out_sz, "%.*s/%s", (int)(slash - base), base, name);
  }
}

/* err becomes "ROBOT: sensors: err" */
static void cfg_prefix(char *err, size_t err_sz, const char *robot_path) {
  char inner[1024];
  if (err && err_sz) {
    snprintf(inner, sizeof inner, "%s", err);
    snprintf(err, err_sz, "%s: sensors: %s", robot_path, inner);
  }
}

int sens_set_load_robot(sens_set **out, const sim_model *m, const char *robot_path, char *err,
                        size_t err_sz) {
  int rc;
  *out = NULL;
  cJSON *json = cfg_parse_file(robot_path, err, err_sz, &rc);
  if (!json) {
    return rc;
  }
  const cJSON *block = cJSON_GetObjectItemCaseSensitive(json, "sensors");
  char source[1024];
  if (!block) {
    rc = sens_fail(err, err_sz, SENS_ENOTFOUND, "%s: sensors: no \"sensors\" key", robot_path);
  } else if (cJSON_IsString(block) && sim_file_is_stdin_name(block->valuestring)) {
    /* standard input is for the CONFIG named on the command line, on purpose */
    rc = sens_fail(err, err_sz, SENS_EINVAL, "%s: sensors: \"%s\" is standard input (expected a file)",
                   robot_path, block->valuestring);
  } else if (cJSON_IsString(block)) {
    cfg_relative(source, sizeof source, robot_path, block->valuestring);
    rc = sens_set_load_file(out, m, source, err, err_sz);
    if (rc != 0) {
      cfg_prefix(err, err_sz, robot_path); /* which robot file named the sensors file */
    }
  } else {
    snprintf(source, sizeof source, "%s: sensors", robot_path);
    rc = sens_set_load_json(out, m, block, source, err, err_sz);
  }
  cJSON_Delete(json);
  return rc;
}
