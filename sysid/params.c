/* sysid/params.c: the fitted parameters by name (KIND.NAME.FIELD with fnmatch wildcards), their
 * bounds, and the map between a value θ and the fit's unconstrained coordinate φ (sysid.h). */
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysid/internal.h"

static const char *const kind_names[3] = {"body", "joint", "actuator"};

static const char *const field_names[SIM_PARAM_NFIELD] = {
#define SYSID_FIELD_NAME(kind, field, unit) #field,
    SIM_PARAM_FIELDS(SYSID_FIELD_NAME)
#undef SYSID_FIELD_NAME
};

/* quantities the loader wants positive (or >= 0): fitted as logarithms, so they stay so */
static int positive(sim_param_field f) {
  switch (f) {
  case SIM_PARAM_BODY_mass: case SIM_PARAM_BODY_ixx: case SIM_PARAM_BODY_iyy:
  case SIM_PARAM_BODY_izz: case SIM_PARAM_JOINT_damping: case SIM_PARAM_JOINT_stiffness:
  case SIM_PARAM_JOINT_armature: case SIM_PARAM_JOINT_frictionloss: case SIM_PARAM_ACTUATOR_kp:
  case SIM_PARAM_ACTUATOR_kd: case SIM_PARAM_ACTUATOR_kv: case SIM_PARAM_ACTUATOR_resistance:
  case SIM_PARAM_ACTUATOR_kt: case SIM_PARAM_ACTUATOR_ke: case SIM_PARAM_ACTUATOR_inductance:
    return 1;
  default:
    return 0;
  }
}

/* where a positive quantity typed as 0 starts (it has no logarithm): small beside what arms of
 * a few kilograms have, so that the first steps grow it */
static double small_start(sim_param_field f) {
  switch (f) {
  case SIM_PARAM_JOINT_damping: return 1e-3;
  case SIM_PARAM_JOINT_armature: return 1e-5;
  case SIM_PARAM_JOINT_stiffness: return 1e-2;
  default: return 1e-3;
  }
}

static const char *element_name(const sim_model *m, sim_param_kind kind, int i) {
  return kind == SIM_PARAM_BODY    ? m->bodies[i].name
         : kind == SIM_PARAM_JOINT ? m->joints[i].name
                                   : m->actuators[i].name;
}

static int element_count(const sim_model *m, sim_param_kind kind) {
  return kind == SIM_PARAM_BODY ? m->nbody : kind == SIM_PARAM_JOINT ? m->njnt : m->nu;
}

static int has_wildcard(const char *s) {
  return strpbrk(s, "*?[") != NULL;
}

/* --- one entry KIND.NAME.FIELD, expanded --------------------------------------------------- */

typedef struct entry {
  char text[3 * SIM_NAME_MAX + 32];
  int kind;
  char name[2 * SIM_NAME_MAX];   /* pattern */
  char field[64];                /* pattern or alias */
} entry;

/* splits "joint.elbow.damping" (NAME may hold dots: KIND ends at the first, FIELD starts after
 * the last) */
static int entry_split(entry *e, const char *text, size_t len, char *err, size_t err_sz) {
  if (len >= sizeof e->text) {
    snprintf(err, err_sz, "parameter '%.40s...': too long", text);
    return -1;
  }
  memcpy(e->text, text, len);
  e->text[len] = '\0';
  const char *dot1 = strchr(e->text, '.'), *dot2 = strrchr(e->text, '.');
  if (!dot1 || dot1 == dot2 || dot2[1] == '\0' || dot2 == dot1 + 1) {
    snprintf(err, err_sz,
             "parameter '%s': expected KIND.NAME.FIELD (joint.*.damping, body.forearm.mass, ...)",
             e->text);
    return -1;
  }
  e->kind = -1;
  for (int k = 0; k < 3; k++) {
    if ((size_t)(dot1 - e->text) == strlen(kind_names[k]) &&
        strncmp(e->text, kind_names[k], (size_t)(dot1 - e->text)) == 0) {
      e->kind = k;
    }
  }
  if (e->kind < 0) {
    snprintf(err, err_sz, "parameter '%s': unknown kind '%.*s' (expected body, joint or actuator)",
             e->text, (int)(dot1 - e->text), e->text);
    return -1;
  }
  snprintf(e->name, sizeof e->name, "%.*s", (int)(dot2 - dot1 - 1), dot1 + 1);
  snprintf(e->field, sizeof e->field, "%s", dot2 + 1);
  return 0;
}

/* the fields FIELD names for the entry's kind (aliases com, inertia; else a pattern) */
static int entry_fields(const entry *e, sim_param_field *out) {
  static const sim_param_field com[3] = {SIM_PARAM_BODY_com_x, SIM_PARAM_BODY_com_y,
                                         SIM_PARAM_BODY_com_z};
  static const sim_param_field inertia[3] = {SIM_PARAM_BODY_ixx, SIM_PARAM_BODY_iyy,
                                             SIM_PARAM_BODY_izz};
  if (e->kind == SIM_PARAM_BODY && (!strcmp(e->field, "com") || !strcmp(e->field, "inertia"))) {
    memcpy(out, e->field[0] == 'c' ? com : inertia, sizeof com);
    return 3;
  }
  int n = 0;
  for (int f = 0; f < SIM_PARAM_NFIELD; f++) {
    if ((int)sim_param_kind_of((sim_param_field)f) == e->kind &&
        fnmatch(e->field, field_names[f], 0) == 0) {
      out[n++] = (sim_param_field)f;
    }
  }
  return n;
}

/* a smart servo's gearbox figures, which the loader folded into its joint */
static int servo_alias(const entry *e) {
  return e->kind == SIM_PARAM_ACTUATOR &&
         (!strcmp(e->field, "gear_friction") || !strcmp(e->field, "rotor_inertia"));
}

typedef int (*visit_fn)(void *ctx, sim_param sp);

/* calls visit for each parameter the entry names; -1 with a message when it names none or a
 * named element lacks the field; else the number visited */
static int entry_expand(const sim_model *m, const entry *e, visit_fn visit, void *ctx, char *err,
                        size_t err_sz) {
  sim_param_field fields[SIM_PARAM_NFIELD];
  int alias = servo_alias(e), nf = alias ? 1 : entry_fields(e, fields);
  int exact = !has_wildcard(e->name) && !has_wildcard(e->field), found = 0, visited = 0;
  if (nf == 0) {
    char list[512] = "";
    for (int f = 0; f < SIM_PARAM_NFIELD; f++) {
      if ((int)sim_param_kind_of((sim_param_field)f) == e->kind) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", field_names[f]);
      }
    }
    snprintf(err, err_sz, "parameter '%s': unknown field '%s' (expected one of: %s%s)", e->text,
             e->field, list,
             e->kind == SIM_PARAM_BODY       ? ", com, inertia"
             : e->kind == SIM_PARAM_ACTUATOR ? ", gear_friction, rotor_inertia"
                                             : "");
    return -1;
  }
  for (int i = e->kind == SIM_PARAM_BODY ? 1 : 0; i < element_count(m, e->kind); i++) {
    const char *name = element_name(m, e->kind, i);
    if (fnmatch(e->name, name, 0) != 0) {
      continue;
    }
    found = 1;
    int index = i, kind = e->kind;
    if (alias) {
      const sim_actuator *a = &m->actuators[i];
      if (a->type != SIM_ACT_SMART_SERVO) {
        if (exact) {
          snprintf(err, err_sz,
                   "parameter '%s': only a smart servo (an actuator with a \"servo\" block) has "
                   "a gearbox; fit joint.%s.%s instead",
                   e->text, a->joint >= 0 ? m->joints[a->joint].name : a->name,
                   e->field[0] == 'g' ? "frictionloss" : "armature");
          return -1;
        }
        continue;
      }
      fields[0] = e->field[0] == 'g' ? SIM_PARAM_JOINT_frictionloss : SIM_PARAM_JOINT_armature;
      index = a->joint, kind = SIM_PARAM_JOINT;
    }
    for (int f = 0; f < nf; f++) {
      /* the deriv module's own list parser says whether the element has the field */
      char one[3 * SIM_NAME_MAX + 32], why[512];
      sim_param sp;
      snprintf(one, sizeof one, "%s/%s/%s", kind_names[kind], element_name(m, kind, index),
               field_names[fields[f]]);
      if (sim_param_parse(m, one, &sp, 1, why, sizeof why) != 1) {
        if (exact) {
          const char *colon = strstr(why, "': ");
          snprintf(err, err_sz, "parameter '%s': %s", e->text, colon ? colon + 3 : why);
          return -1;
        }
        continue;
      }
      sp.index = index; /* the element matched, should two share a name */
      if (visit(ctx, sp) < 0) {
        snprintf(err, err_sz, "out of memory");
        return -1;
      }
      visited++;
    }
  }
  if (!found || visited == 0) {
    char list[512] = "";
    for (int i = e->kind == SIM_PARAM_BODY ? 1 : 0; i < element_count(m, e->kind); i++) {
      size_t len = strlen(list);
      snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "",
               element_name(m, e->kind, i));
    }
    static const char *const plural[3] = {"bodies", "joints", "actuators"};
    snprintf(err, err_sz, "parameter '%s': %s (the model's %s: %s)", e->text,
             !found ? "no element of that name" : "none of the elements named has that field",
             plural[e->kind], list[0] ? list : "none");
    return -1;
  }
  return visited;
}

/* splits a comma-separated list, trimming blanks; calls fn(entry text, len) */
static int for_each_entry(const char *list, int (*fn)(void *, const char *, size_t), void *ctx) {
  for (const char *s = list; s && *s;) {
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    while (len > 0 && (*s == ' ' || *s == '\t')) {
      s++, len--;
    }
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t')) {
      len--;
    }
    if (len > 0 && fn(ctx, s, len) < 0) {
      return -1;
    }
    s = comma ? comma + 1 : NULL;
  }
  return 0;
}

/* --- the parameter list ------------------------------------------------------------------ */

typedef struct parse_ctx {
  sysid_problem *p;
  char *err;
  size_t err_sz;
  int cap;
} parse_ctx;

static int add_param(void *vctx, sim_param sp) {
  parse_ctx *c = vctx;
  sysid_problem *p = c->p;
  for (int k = 0; k < p->np; k++) {
    if (p->ps[k].sp.field == sp.field && p->ps[k].sp.index == sp.index) {
      return 0; /* named twice: kept once */
    }
  }
  if (p->np == c->cap) {
    int cap = c->cap ? 2 * c->cap : 16;
    sysid_pspec *ps = realloc(p->ps, (size_t)cap * sizeof *ps);
    if (!ps) {
      return -1;
    }
    p->ps = ps, c->cap = cap;
  }
  sysid_pspec *s = &p->ps[p->np++];
  memset(s, 0, sizeof *s);
  s->sp = sp;
  sim_param_kind kind = sim_param_kind_of(sp.field);
  snprintf(s->name, sizeof s->name, "%s.%s.%s", kind_names[kind],
           element_name(p->m, kind, sp.index), field_names[sp.field]);
  s->initial = sim_param_get(p->m, sp);
  s->lo = positive(sp.field) ? 0 : -INFINITY;
  s->hi = INFINITY;
  return 0;
}

static int parse_param(void *vctx, const char *text, size_t len) {
  parse_ctx *c = vctx;
  entry e;
  if (entry_split(&e, text, len, c->err, c->err_sz) < 0) {
    return -1;
  }
  return entry_expand(c->p->m, &e, add_param, c, c->err, c->err_sz) < 0 ? -1 : 0;
}

/* --- bounds ------------------------------------------------------------------------------- */

typedef struct bound_ctx {
  parse_ctx *pc;
  double lo, hi;
  const char *text;
  int matched;
} bound_ctx;

static int apply_bound(void *vctx, sim_param sp) {
  bound_ctx *b = vctx;
  sysid_problem *p = b->pc->p;
  for (int k = 0; k < p->np; k++) {
    if (p->ps[k].sp.field == sp.field && p->ps[k].sp.index == sp.index) {
      /* an empty LO of a positive quantity is 0, not −∞ */
      p->ps[k].lo = isinf(b->lo) && positive(sp.field) ? 0 : b->lo, p->ps[k].hi = b->hi;
      b->matched++;
    }
  }
  return 0;
}

static int read_bound(const char *s, size_t len, double *v, double none) {
  if (len == 0) {
    *v = none;
    return 0;
  }
  char buf[64], *end;
  if (len >= sizeof buf) {
    return -1;
  }
  memcpy(buf, s, len);
  buf[len] = '\0';
  *v = strtod(buf, &end);
  return *end == '\0' && isfinite(*v) ? 0 : -1;
}

static int parse_bound(void *vctx, const char *text, size_t len) {
  parse_ctx *c = vctx;
  const char *eq = memchr(text, '=', len), *colon = eq ? memchr(eq, ':', len - (size_t)(eq - text)) : NULL;
  bound_ctx b = {c, 0, 0, text, 0};
  if (!eq || !colon) {
    snprintf(c->err, c->err_sz, "bounds '%.*s': expected ENTRY=LO:HI (joint.*.damping=0:1)",
             (int)len, text);
    return -1;
  }
  const char *end = text + len;
  if (read_bound(eq + 1, (size_t)(colon - eq - 1), &b.lo, -INFINITY) < 0 ||
      read_bound(colon + 1, (size_t)(end - colon - 1), &b.hi, INFINITY) < 0 || !(b.lo < b.hi)) {
    snprintf(c->err, c->err_sz,
             "bounds '%.*s': LO and HI must be numbers (or empty for none) with LO < HI",
             (int)len, text);
    return -1;
  }
  entry e;
  if (entry_split(&e, text, (size_t)(eq - text), c->err, c->err_sz) < 0 ||
      entry_expand(c->p->m, &e, apply_bound, &b, c->err, c->err_sz) < 0) {
    if (strncmp(c->err, "parameter", 9) == 0) {
      memmove(c->err + 6, c->err + 9, strlen(c->err + 9) + 1); /* "bounds '...': ..." */
      memcpy(c->err, "bounds", 6);
    }
    return -1;
  }
  if (b.matched == 0) {
    snprintf(c->err, c->err_sz, "bounds '%.*s': names no parameter being fitted", (int)len, text);
    return -1;
  }
  return 0;
}

/* --- the coordinates ------------------------------------------------------------------------ */

double sysid__value(const sysid_pspec *s, double phi, double *dtheta) {
  double e, g;
  switch (s->map) {
  case SYSID_MAP_LOWER:
    e = exp(phi);
    *dtheta = e;
    return s->lo + e;
  case SYSID_MAP_UPPER:
    e = exp(phi);
    *dtheta = -e;
    return s->hi - e;
  case SYSID_MAP_BOX:
    g = 1 / (1 + exp(-phi));
    *dtheta = (s->hi - s->lo) * g * (1 - g);
    return s->lo + (s->hi - s->lo) * g;
  case SYSID_MAP_FREE:
    break;
  }
  *dtheta = 1;
  return phi;
}

double sysid__coordinate(const sysid_pspec *s, double theta) {
  switch (s->map) {
  case SYSID_MAP_LOWER: return log(theta - s->lo);
  case SYSID_MAP_UPPER: return log(s->hi - theta);
  case SYSID_MAP_BOX: {
    double g = (theta - s->lo) / (s->hi - s->lo);
    return log(g / (1 - g));
  }
  case SYSID_MAP_FREE: break;
  }
  return theta;
}

/* the map, the start inside the bounds and the column scale of one parameter */
static int settle(sysid_pspec *s, char *err, size_t err_sz) {
  if (positive(s->sp.field) && s->lo < 0) {
    snprintf(err, err_sz, "bounds of %s: LO %g < 0 (the quantity must stay positive)", s->name,
             s->lo);
    return -1;
  }
  s->map = isfinite(s->lo) && isfinite(s->hi) ? SYSID_MAP_BOX
           : isfinite(s->lo)                  ? SYSID_MAP_LOWER
           : isfinite(s->hi)                  ? SYSID_MAP_UPPER
                                              : SYSID_MAP_FREE;
  s->start = s->initial;
  if (s->map == SYSID_MAP_LOWER && s->start <= s->lo) {
    if (s->lo != 0 || s->start < 0) {
      snprintf(err, err_sz, "%s = %g: at or below its lower bound %g", s->name, s->initial, s->lo);
      return -1;
    }
    s->start = small_start(s->sp.field); /* a positive quantity typed as 0 */
  }
  if ((s->map == SYSID_MAP_UPPER || s->map == SYSID_MAP_BOX) && s->start >= s->hi) {
    snprintf(err, err_sz, "%s = %g: at or above its upper bound %g", s->name, s->initial, s->hi);
    return -1;
  }
  if (s->map == SYSID_MAP_BOX && s->start <= s->lo) {
    snprintf(err, err_sz, "%s = %g: at or below its lower bound %g", s->name, s->initial, s->lo);
    return -1;
  }
  s->scale = fabs(s->start) > 0 ? fabs(s->start) : 1;
  return 0;
}

int sysid__params_parse(sysid_problem *p, const char *params, const char *bounds, char *err,
                        size_t err_sz) {
  parse_ctx c = {p, err, err_sz, 0};
  if (params == NULL || strspn(params, " ,\t") == strlen(params)) {
    snprintf(err, err_sz, "no parameters to fit (give a list such as joint.*.damping)");
    return -1;
  }
  if (for_each_entry(params, parse_param, &c) < 0 ||
      (bounds && for_each_entry(bounds, parse_bound, &c) < 0)) {
    return -1;
  }
  for (int k = 0; k < p->np; k++) {
    if (settle(&p->ps[k], err, err_sz) < 0) {
      return -1;
    }
  }
  return 0;
}
