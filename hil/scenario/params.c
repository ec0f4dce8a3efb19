/* hil/scenario/params.c: parameter changes of the robot (friction up 50 %, a heavier link).
 *
 * A change never writes to the model the loop is stepping: the run loads the robot again, applies
 * the change (and those before it) to that copy, and hands it to the runtime, which swaps it in
 * before the step it is due at (hil_runtime_swap_model). Changes at the start (model_overrides)
 * make the first model. */
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hil/scenario/scenario_internal.h"

/* every field, the targets it belongs to, and whether it needs a pair or the start */
typedef struct field_spec {
  const char *name;
  scn_target target;
  int pair;       /* value is [lo, hi] */
  int start_only; /* only before the first step */
  int scalable;
} field_spec;

static const field_spec fields[] = {
    {"damping", SCN_TARGET_JOINT, 0, 0, 1},      {"frictionloss", SCN_TARGET_JOINT, 0, 0, 1},
    {"armature", SCN_TARGET_JOINT, 0, 0, 1},     {"stiffness", SCN_TARGET_JOINT, 0, 0, 1},
    {"range", SCN_TARGET_JOINT, 1, 0, 0},        {"initial", SCN_TARGET_JOINT, 0, 1, 0},
    {"mass", SCN_TARGET_BODY, 0, 0, 1},          {"friction", SCN_TARGET_GEOM, 0, 0, 1},
};

static const char *const target_names[] = {"joint", "body", "geom"};

static const field_spec *find_field(scn_target target, const char *name) {
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    if (fields[i].target == target && strcmp(fields[i].name, name) == 0) {
      return &fields[i];
    }
  }
  return NULL;
}

static void list_fields(scn_target target, char *out, size_t out_sz) {
  out[0] = '\0';
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    if (fields[i].target == target) {
      size_t used = strlen(out);
      snprintf(out + used, out_sz - used, "%s\"%s\"", used ? ", " : "", fields[i].name);
    }
  }
}

int scn_change_parse(const sim_json_ctx *L, const cJSON *obj, const char *path, int start,
                     scn_change *out) {
  static const char *const keys[] = {"joint", "body", "geom", "field", "scale", "value",
                                     "comment", NULL};
  char p[SIM_JSON_PATH_MAX], field[24] = "";
  memset(out, 0, sizeof *out);
  snprintf(out->path, sizeof out->path, "%s", path);
  if (sim_json_expect_object(L, obj, path) || sim_json_check_keys(L, obj, path, keys)) {
    return -1;
  }
  int targets = 0;
  for (int t = 0; t < 3; t++) {
    if (cJSON_GetObjectItemCaseSensitive(obj, target_names[t])) {
      targets++;
      out->target = (scn_target)t;
    }
  }
  if (targets != 1) {
    return sim_json_fail(L, path, "expected exactly one of \"joint\", \"body\", \"geom\" (a name "
                                  "or a pattern such as \"*\")");
  }
  if (sim_json_read_name(L, obj, path, target_names[out->target], out->pattern, 1) ||
      sim_json_read_string(L, obj, path, "field", field, sizeof field)) {
    return -1;
  }
  const field_spec *f = find_field(out->target, field);
  if (!f) {
    char list[160];
    list_fields(out->target, list, sizeof list);
    sim_json_path_join(p, path, "field");
    return sim_json_fail(L, p, "%s field of a %s: expected one of %s",
                         field[0] ? "unknown" : "missing", target_names[out->target], list);
  }
  snprintf(out->field, sizeof out->field, "%s", field);
  if (f->start_only && !start) {
    sim_json_path_join(p, path, "field");
    return sim_json_fail(L, p, "\"%s\" only in model_overrides (before the first step)", field);
  }
  const cJSON *scale = cJSON_GetObjectItemCaseSensitive(obj, "scale");
  const cJSON *value = cJSON_GetObjectItemCaseSensitive(obj, "value");
  if (!scale == !value) {
    return sim_json_fail(L, path, "expected one of \"scale\" (a factor) or \"value\"");
  }
  if (scale) {
    sim_json_path_join(p, path, "scale");
    if (!f->scalable) {
      return sim_json_fail(L, p, "\"%s\" takes a \"value\", not a scale", field);
    }
    out->has_scale = 1;
    return sim_json_number_value(L, scale, p, &out->scale) ||
           sim_json_check_min(L, path, "scale", out->scale, 0, 0);
  }
  sim_json_path_join(p, path, "value");
  out->nvalue = f->pair ? 2 : 1;
  if (f->pair) {
    if (sim_json_array_values(L, value, p, out->value, 2)) {
      return -1;
    }
    return out->value[0] <= out->value[1] ? 0 : sim_json_fail(L, p, "expected [low, high]");
  }
  return sim_json_number_value(L, value, p, out->value);
}

/* the new value of a scaled or set number */
static double changed(const scn_change *c, double old) {
  return c->has_scale ? old * c->scale : c->value[0];
}

static int apply_joint(sim_model *m, sim_joint *j, const scn_change *c, char *err,
                       size_t err_sz) {
  const char *f = c->field;
  if (strcmp(f, "range") == 0) {
    j->range[0] = c->value[0], j->range[1] = c->value[1];
    return 0;
  }
  if (strcmp(f, "initial") == 0) {
    if (j->qposadr < 0 || sim_joint_nq(j->type) != 1) {
      snprintf(err, err_sz, "%s: joint \"%s\" is not a hinge or slide", c->path, j->name);
      return -1;
    }
    m->qpos0[j->qposadr] = c->value[0];
    return 0;
  }
  double *v = strcmp(f, "damping") == 0        ? &j->damping
              : strcmp(f, "frictionloss") == 0 ? &j->frictionloss
              : strcmp(f, "armature") == 0     ? &j->armature
                                               : &j->stiffness;
  const double to = changed(c, *v);
  if (!(to >= 0 && to <= SIM_JSON_JOINT_COEF_MAX)) {
    snprintf(err, err_sz, "%s: joint \"%s\": %s would be %g (expected 0 to %g)", c->path,
             j->name, f, to, SIM_JSON_JOINT_COEF_MAX);
    return -1;
  }
  *v = to;
  return 0;
}

/* a body's mass, its inertia scaled with it (the same shape, denser) */
static int apply_body(sim_body *b, const scn_change *c, char *err, size_t err_sz) {
  const double to = changed(c, b->mass);
  if (!(to >= SIM_JSON_MASS_MIN && to <= SIM_JSON_MASS_MAX) || !(b->mass > 0)) {
    snprintf(err, err_sz, "%s: body \"%s\": mass would be %g kg (expected %g to %g)", c->path,
             b->name, to, SIM_JSON_MASS_MIN, SIM_JSON_MASS_MAX);
    return -1;
  }
  const double k = to / b->mass;
  for (int i = 0; i < 9; i++) {
    b->inertia[i] *= k;
  }
  b->mass = to;
  return 0;
}

static int apply_geom(sim_geom *g, const scn_change *c, char *err, size_t err_sz) {
  const double to = changed(c, g->friction[0]);
  if (!(to >= 0 && to <= 1e3)) {
    snprintf(err, err_sz, "%s: geom \"%s\": friction would be %g (expected 0 to 1000)", c->path,
             g->name, to);
    return -1;
  }
  g->friction[0] = to;
  return 0;
}

static int matches(const char *pattern, const char *name) {
  return fnmatch(pattern, name, 0) == 0;
}

int scn_change_apply(sim_model *m, const scn_change *c, char *err, size_t err_sz) {
  const int nefc_before = m->nefc_max;
  int hits = 0, rc = 0;
  if (c->target == SCN_TARGET_JOINT) {
    for (int j = 0; j < m->njnt && rc == 0; j++) {
      if (m->joints[j].type != SIM_JOINT_FIXED && matches(c->pattern, m->joints[j].name)) {
        hits++;
        rc = apply_joint(m, &m->joints[j], c, err, err_sz);
      }
    }
  } else if (c->target == SCN_TARGET_BODY) {
    for (int b = 1; b < m->nbody && rc == 0; b++) {
      if (matches(c->pattern, m->bodies[b].name)) {
        hits++;
        rc = apply_body(&m->bodies[b], c, err, err_sz);
      }
    }
  } else {
    for (int g = 0; g < m->ngeom && rc == 0; g++) {
      if (matches(c->pattern, m->geoms[g].name)) {
        hits++;
        rc = apply_geom(&m->geoms[g], c, err, err_sz);
      }
    }
  }
  if (rc != 0) {
    return -1;
  }
  if (hits == 0) {
    snprintf(err, err_sz, "%s: no %s of %s matches \"%s\"", c->path, target_names[c->target],
             m->name, c->pattern);
    return -1;
  }
  if (sim_constraint_setconst(m) != 0) {
    snprintf(err, err_sz, "%s: out of memory", c->path);
    return -1;
  }
  if (m->nefc_max != nefc_before) { /* the data of a running loop could not hold the rows */
    snprintf(err, err_sz, "%s: this change adds constraint rows (friction on a joint without "
                          "any): give the joints some frictionloss in the robot file first",
             c->path);
    return -1;
  }
  return 0;
}
