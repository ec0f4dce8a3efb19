/* sim/tendon_load.c: the "tendons" section of a robot description (docs/robot-format.md), and
 * the tendon constants derived once the model is assembled.
 *
 * A tendon is fixed ("joints": coefficients of hinge and slide joints) or spatial ("path":
 * sites, wrapping geoms with an optional side site, and pulleys), with MuJoCo's rules for a
 * path: it starts and ends at a site, every branch (the path between pulleys) has at least two
 * sites, a wrapping geom (a sphere or a cylinder) sits between two sites, and a pulley's divisor
 * is positive. */
#include "sim/load_internal.h"
#include "sim/tendon.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* a named object's index by a lookup, failing at PATH.KEY when unknown */
static int find_named(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                      const char *what, int (*lookup)(const sim_model *, const char *),
                      const sim_model *m, int *out) {
  char name[SIM_NAME_MAX] = "", p[SIM_JSON_PATH_MAX];
  if (sim_json_read_name(L, obj, path, key, name, 1)) {
    return -1;
  }
  *out = lookup(m, name);
  if (*out < 0) {
    sim_json_path_join(p, path, key);
    return sim_json_fail(L, p, "unknown %s \"%s\"", what, name);
  }
  return 0;
}

/* one term {"joint", "coef"} of a fixed tendon: a hinge or a slide, each joint once */
static int parse_term(const sim_json_ctx *L, const cJSON *obj, const char *path, sim_model *m,
                      int first, sim_wrap *w) {
  static const char *const keys[] = {"joint", "coef", "comment", NULL};
  char p[SIM_JSON_PATH_MAX];
  w->type = SIM_WRAP_JOINT;
  w->sidesite = -1;
  w->prm = 1;
  if (sim_json_expect_object(L, obj, path) || sim_json_check_keys(L, obj, path, keys) ||
      find_named(L, obj, path, "joint", "joint", sim_model_joint, m, &w->id) ||
      sim_json_read_number(L, obj, path, "coef", &w->prm, 1)) {
    return -1;
  }
  sim_json_path_join(p, path, "joint");
  const sim_joint *j = &m->joints[w->id];
  if (j->type != SIM_JOINT_HINGE && j->type != SIM_JOINT_SLIDE) {
    return sim_json_fail(L, p, "joint \"%s\" is not a hinge or a slide (a fixed tendon couples "
                               "scalar joints)", j->name);
  }
  for (int k = first; k < m->nwrap; k++) {
    if (m->wraps[k].id == w->id) {
      return sim_json_fail(L, p, "joint \"%s\" appears twice in this tendon", j->name);
    }
  }
  return 0;
}

/* one element of a spatial path: {"site"}, {"geom", "sidesite"} or {"pulley": divisor} */
static int parse_element(const sim_json_ctx *L, const cJSON *obj, const char *path, sim_model *m,
                         sim_wrap *w) {
  static const char *const keys[] = {"site", "geom", "sidesite", "pulley", "comment", NULL};
  char p[SIM_JSON_PATH_MAX];
  w->sidesite = -1;
  w->id = -1;
  if (sim_json_expect_object(L, obj, path) || sim_json_check_keys(L, obj, path, keys)) {
    return -1;
  }
  const int site = cJSON_HasObjectItem(obj, "site"), geom = cJSON_HasObjectItem(obj, "geom");
  const int pulley = cJSON_HasObjectItem(obj, "pulley");
  if (site + geom + pulley != 1 || (cJSON_HasObjectItem(obj, "sidesite") && !geom)) {
    return sim_json_fail(L, path, "expected one of {\"site\"}, {\"geom\" (, \"sidesite\")} or "
                                  "{\"pulley\": divisor}");
  }
  if (site) {
    w->type = SIM_WRAP_SITE;
    return find_named(L, obj, path, "site", "site", sim_model_site, m, &w->id);
  }
  if (pulley) {
    w->type = SIM_WRAP_PULLEY;
    return sim_json_read_number(L, obj, path, "pulley", &w->prm, 1) ||
                   sim_json_check_min(L, path, "pulley", w->prm, 0, 1)
               ? -1
               : 0;
  }
  if (find_named(L, obj, path, "geom", "geom", sim_model_geom, m, &w->id) ||
      (cJSON_HasObjectItem(obj, "sidesite") &&
       find_named(L, obj, path, "sidesite", "site", sim_model_site, m, &w->sidesite))) {
    return -1;
  }
  const sim_geom_type t = m->geoms[w->id].type;
  if (t != SIM_GEOM_SPHERE && t != SIM_GEOM_CYLINDER) {
    sim_json_path_join(p, path, "geom");
    return sim_json_fail(L, p, "geom \"%s\" is not a sphere or a cylinder (a tendon wraps "
                               "around those)", m->geoms[w->id].name);
  }
  w->type = t == SIM_GEOM_SPHERE ? SIM_WRAP_SPHERE : SIM_WRAP_CYLINDER;
  return 0;
}

/* MuJoCo's rules for a path (its compiler's): sites at both ends, a geom between two sites, a
 * pulley between two sites, at least two sites in each branch */
static int check_path(const sim_json_ctx *L, const char *path, const sim_wrap *w, int n) {
  char p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, "path");
  if (n < 2 || w[0].type != SIM_WRAP_SITE || w[n - 1].type != SIM_WRAP_SITE) {
    return sim_json_fail(L, p, "a spatial tendon's path starts and ends at a site (and has at "
                               "least two elements)");
  }
  int sites = 0;
  for (int i = 0; i < n; i++) {
    const int geom = w[i].type == SIM_WRAP_SPHERE || w[i].type == SIM_WRAP_CYLINDER;
    sites += w[i].type == SIM_WRAP_SITE;
    if ((geom || w[i].type == SIM_WRAP_PULLEY) &&
        (w[i - 1].type != SIM_WRAP_SITE || w[i + 1].type != SIM_WRAP_SITE)) {
      char q[SIM_JSON_PATH_MAX];
      sim_json_path_index(q, p, i);
      return sim_json_fail(L, q, "a %s sits between two sites", geom ? "wrapping geom" : "pulley");
    }
    if (w[i].type == SIM_WRAP_PULLEY || i == n - 1) {
      if (sites < 2) {
        char q[SIM_JSON_PATH_MAX];
        sim_json_path_index(q, p, i);
        return sim_json_fail(L, q, "each branch of the path (between pulleys) needs two sites");
      }
      sites = 0;
    }
  }
  return 0;
}

/* "joints" or "path": the tendon's elements appended to m->wraps */
static int parse_elements(const sim_json_ctx *L, const cJSON *obj, const char *path, sim_model *m,
                          sim_tendon *t, int capacity) {
  const cJSON *joints = cJSON_GetObjectItemCaseSensitive(obj, "joints");
  const cJSON *elems = cJSON_GetObjectItemCaseSensitive(obj, "path");
  if (!joints == !elems || !cJSON_IsArray(joints ? joints : elems) ||
      cJSON_GetArraySize(joints ? joints : elems) < 1) {
    return sim_json_fail(L, path, "expected \"joints\" (a fixed tendon: [{\"joint\", \"coef\"}]) "
                                  "or \"path\" (a spatial tendon: sites, geoms, pulleys), one of "
                                  "them, not empty");
  }
  t->spatial = elems != NULL;
  t->wrapadr = m->nwrap;
  char p[SIM_JSON_PATH_MAX];
  int i = 0;
  for (const cJSON *e = (joints ? joints : elems)->child; e; e = e->next, i++) {
    sim_json_path_join(p, path, joints ? "joints" : "path");
    char q[SIM_JSON_PATH_MAX];
    sim_json_path_index(q, p, i);
    if (m->nwrap >= capacity) {
      return sim_json_fail(L, q, "out of memory");
    }
    sim_wrap *w = &m->wraps[m->nwrap];
    if (joints ? parse_term(L, e, q, m, t->wrapadr, w) : parse_element(L, e, q, m, w)) {
      return -1;
    }
    m->nwrap++;
  }
  t->wrapnum = m->nwrap - t->wrapadr;
  return t->spatial ? check_path(L, path, m->wraps + t->wrapadr, t->wrapnum) : 0;
}

/* stiffness, springlength, damping, limits, friction */
static int parse_properties(const sim_json_ctx *L, const cJSON *obj, const char *path,
                            sim_tendon *t) {
  char p[SIM_JSON_PATH_MAX];
  t->springlength = -1;
  const cJSON *limited = cJSON_GetObjectItemCaseSensitive(obj, "limited");
  if (limited && !cJSON_IsBool(limited)) {
    sim_json_path_join(p, path, "limited");
    return sim_json_fail(L, p, "expected true or false");
  }
  t->limited = cJSON_IsTrue(limited);
  if (sim_json_read_number(L, obj, path, "stiffness", &t->stiffness, 0) ||
      sim_json_check_min(L, path, "stiffness", t->stiffness, 0, 0) ||
      sim_json_read_number(L, obj, path, "springlength", &t->springlength, 0) ||
      sim_json_read_number(L, obj, path, "damping", &t->damping, 0) ||
      sim_json_check_min(L, path, "damping", t->damping, 0, 0) ||
      sim_json_read_vector(L, obj, path, "range", t->range, 2, t->limited) ||
      sim_json_read_number(L, obj, path, "margin", &t->margin, 0) ||
      sim_json_check_min(L, path, "margin", t->margin, 0, 0) ||
      sim_json_read_solref(L, obj, path, "solref_limit", t->solref_limit) ||
      sim_json_read_solimp(L, obj, path, "solimp_limit", t->solimp_limit) ||
      sim_json_read_number(L, obj, path, "frictionloss", &t->frictionloss, 0) ||
      sim_json_check_min(L, path, "frictionloss", t->frictionloss, 0, 0) ||
      sim_json_read_solref(L, obj, path, "solref_friction", t->solref_friction) ||
      sim_json_read_solimp(L, obj, path, "solimp_friction", t->solimp_friction)) {
    return -1;
  }
  if (t->limited && !(t->range[0] < t->range[1])) {
    sim_json_path_join(p, path, "range");
    return sim_json_fail(L, p, "lower bound %g must be below upper bound %g", t->range[0],
                         t->range[1]);
  }
  return 0;
}

static int parse_tendon(const sim_json_ctx *L, const cJSON *obj, const char *path, sim_model *m,
                        sim_tendon *t, int capacity) {
  static const char *const keys[] = {
      "name",         "comment", "joints",       "path",         "stiffness",
      "springlength", "damping", "limited",      "range",        "margin",
      "solref_limit", "solimp_limit", "frictionloss", "solref_friction", "solimp_friction",
      NULL};
  return sim_json_expect_object(L, obj, path) || sim_json_check_keys(L, obj, path, keys) ||
                 sim_json_read_name(L, obj, path, "name", t->name, 1) ||
                 parse_elements(L, obj, path, m, t, capacity) || parse_properties(L, obj, path, t)
             ? -1
             : 0;
}

/* the number of elements all tendons list, for one allocation */
static int count_elements(const cJSON *list) {
  int n = 0;
  for (const cJSON *t = list->child; t; t = t->next) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(t, "joints");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(t, "path");
    n += (cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0) + (cJSON_IsArray(b) ? cJSON_GetArraySize(b) : 0);
  }
  return n;
}

int sim_tendons_parse(const sim_json_ctx *L, const cJSON *root, sim_model *m) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "tendons");
  if (!list) {
    return 0;
  }
  if (!cJSON_IsArray(list)) {
    return sim_json_fail(L, "tendons", "expected an array of tendon objects");
  }
  const int n = cJSON_GetArraySize(list), capacity = count_elements(list);
  m->tendons = calloc((size_t)n + 1, sizeof *m->tendons);
  m->wraps = calloc((size_t)capacity + 1, sizeof *m->wraps);
  if (!m->tendons || !m->wraps) {
    return sim_json_fail(L, "tendons", "out of memory");
  }
  int i = 0;
  for (const cJSON *item = list->child; item; item = item->next, i++) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_index(p, "tendons", i);
    if (parse_tendon(L, item, p, m, &m->tendons[i], capacity)) {
      return -1;
    }
    m->ntendon = i + 1;
    for (int k = 0; k < i; k++) {
      if (strcmp(m->tendons[k].name, m->tendons[i].name) == 0) {
        return sim_json_fail(L, p, "duplicate tendon name \"%s\" (also tendons[%d])",
                             m->tendons[i].name, k);
      }
    }
  }
  return 0;
}

/* --- constants ------------------------------------------------------------------------------- */

/* MuJoCo's set0 and setSpring: at qpos0 each tendon's length0 and invweight0 = J·M⁻¹·Jᵀ; at
 * the springs' rest pose (each hinge's and slide's springref, the quaternions' qpos0) the rest
 * length of a spring given none (springlength < 0). */
int sim__tendon_setconst(const sim_json_ctx *L, sim_model *m) {
  if (m->ntendon == 0) {
    return 0;
  }
  sim_data *d = sim__data_alloc(m);
  if (!d) {
    return sim_json_fail(L, "tendons", "out of memory");
  }
  memcpy(d->qpos, m->qpos0, (size_t)m->nq * sizeof(double));
  sim_kinematics(m, d);
  sim_tendons(m, d);
  sim_crba(m, d);
  sim_factor_m(m, d);
  for (int t = 0; t < m->ntendon; t++) {
    const double *J = d->ten_J + (size_t)t * m->nv;
    memcpy(d->scratch, J, (size_t)m->nv * sizeof(double));
    sim_solve_m(m, d, d->scratch);
    double w = 0;
    for (int k = 0; k < m->nv; k++) {
      w += J[k] * d->scratch[k];
    }
    m->tendons[t].length0 = d->ten_length[t];
    m->tendons[t].invweight0 = w;
  }
  for (int j = 0; j < m->njnt; j++) {
    const sim_joint *jt = &m->joints[j];
    if (jt->type == SIM_JOINT_HINGE || jt->type == SIM_JOINT_SLIDE) {
      d->qpos[jt->qposadr] = jt->springref;
    }
  }
  sim_kinematics(m, d);
  sim_tendons(m, d);
  for (int t = 0; t < m->ntendon; t++) {
    if (m->tendons[t].springlength < 0) {
      m->tendons[t].springlength = d->ten_length[t];
    }
  }
  sim_data_free(d);
  return 0;
}
