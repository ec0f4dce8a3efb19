/* sim/import/mjcf_tendon.c: MJCF <tendon> (<fixed> and <spatial>) into native tendons
 * (docs/robot-format.md, "Tendons"), and the geoms their paths wrap around.
 *
 * A tendon's attributes come from it or its class's <default><tendon>; what the native tendon
 * keeps: stiffness, springlength, damping, limited/range, margin, solreflimit/solimplimit,
 * frictionloss, solreffriction/solimpfriction. Its look (width, rgba, material, group) is
 * noted as visual only. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "sim/import/mjcf_state.h"

const char *const mjcf__tendon_read[] = {
    "name",         "class",          "limited",        "range",        "margin",
    "solreflimit",  "solimplimit",    "solreffriction", "solimpfriction", "frictionloss",
    "springlength", "stiffness",      "damping",        "width",        "rgba",
    "material",     "group",          NULL};
static const char *const visual[] = {"width", "rgba", "material", "group"};

/* the geoms the tendons wrap around, by name: converted even when they touch nothing */
int mjcf__collect_wrap_geoms(mjcf *m, const xmlNode *tendon) {
  for (const xmlNode *t = tendon->children; t; t = t->next) {
    for (const xmlNode *e = t->type == XML_ELEMENT_NODE ? t->children : NULL; e; e = e->next) {
      const char *g = imp__is(e, "geom") ? imp__attr(e, "geom") : NULL;
      if (g && !cJSON_GetObjectItemCaseSensitive(m->wrap_geoms, g)) {
        cJSON_AddTrueToObject(m->wrap_geoms, g);
      }
    }
  }
  return 0;
}

int mjcf__is_wrap_geom(const mjcf *m, const char *name) {
  return name && m->wrap_geoms && cJSON_GetObjectItemCaseSensitive(m->wrap_geoms, name) != NULL;
}

/* one number attribute into o under key when set (element or class) */
static int number_into(mjcf *m, const xmlNode *t, const char *attr, const char *key, cJSON *o) {
  double v;
  const int n = mjcf__numbers(m, t, "tendon", NULL, attr, &v, 1, 1);
  if (n == 1) {
    cJSON_AddNumberToObject(o, key, v);
  }
  return n < 0 ? -1 : 0;
}

/* limits, friction and the spring: MuJoCo's meaning and defaults kept */
static int tendon_properties(mjcf *m, const xmlNode *t, cJSON *o) {
  double range[2];
  const int nrange = mjcf__numbers(m, t, "tendon", NULL, "range", range, 2, 2);
  if (nrange < 0 || number_into(m, t, "stiffness", "stiffness", o) ||
      number_into(m, t, "damping", "damping", o) ||
      number_into(m, t, "springlength", "springlength", o) ||
      number_into(m, t, "margin", "margin", o) ||
      (!m->no_friction && number_into(m, t, "frictionloss", "frictionloss", o))) {
    return -1;
  }
  const char *limited = mjcf__attr(m, t, "tendon", NULL, "limited");
  const int is_limited = limited ? strcmp(limited, "true") == 0 : (nrange == 2 && m->autolimits);
  if (nrange == 2 && is_limited && !m->no_limits) {
    cJSON_AddBoolToObject(o, "limited", 1);
    cJSON_AddItemToObject(o, "range", imp__json_vector(range, 2));
  } else if (is_limited && nrange != 2 && !m->no_limits) {
    return imp__fail(m->c, t, "<%s limited=\"true\">: a range is needed", imp__name(t));
  }
  static const char *const soft[4][2] = {{"solreflimit", "solref_limit"},
                                         {"solimplimit", "solimp_limit"},
                                         {"solreffriction", "solref_friction"},
                                         {"solimpfriction", "solimp_friction"}};
  for (int k = 0; k < 4; k++) {
    double v[5];
    const int want = k % 2 == 0 ? 2 : 5;
    int n = mjcf__numbers(m, t, "tendon", NULL, soft[k][0], v, 1, want);
    if (n > 0) {
      n = mjcf__soft_values(m, t, soft[k][0], v, n, want);
    }
    if (n < 0) {
      return -1;
    }
    if (n == want) {
      cJSON_AddItemToObject(o, soft[k][1], imp__json_vector(v, want));
    }
  }
  return 0;
}

/* <fixed>'s <joint joint coef> terms */
static int fixed_terms(mjcf *m, const xmlNode *t, cJSON *o) {
  static const char *const read[] = {"joint", "coef", NULL};
  cJSON *list = cJSON_AddArrayToObject(o, "joints");
  for (const xmlNode *e = t->children; e; e = e->next) {
    if (e->type != XML_ELEMENT_NODE) {
      continue;
    }
    const char *joint = imp__attr(e, "joint");
    if (!imp__is(e, "joint") || !joint) {
      return imp__fail(m->c, e, "<fixed><%s>: a fixed tendon lists <joint joint=... coef=...>",
                       imp__name(e));
    }
    double coef = 1;
    const char *text = imp__attr(e, "coef");
    if (imp__check_attrs(m->c, e, read, "not modelled") != 0 ||
        (text && imp__numbers(m->c, e, "coef", text, &coef, 1, 1) < 0)) {
      return -1;
    }
    cJSON *term = cJSON_CreateObject();
    cJSON_AddStringToObject(term, "joint", joint);
    cJSON_AddNumberToObject(term, "coef", coef);
    cJSON_AddItemToArray(list, term);
  }
  return 0;
}

/* <spatial>'s path: <site site>, <geom geom sidesite>, <pulley divisor> */
static int spatial_path(mjcf *m, const xmlNode *t, cJSON *o) {
  cJSON *list = cJSON_AddArrayToObject(o, "path");
  for (const xmlNode *e = t->children; e; e = e->next) {
    if (e->type != XML_ELEMENT_NODE) {
      continue;
    }
    static const char *const site_read[] = {"site", NULL}, *const geom_read[] = {"geom", "sidesite", NULL};
    static const char *const pulley_read[] = {"divisor", NULL};
    cJSON *el = cJSON_CreateObject();
    cJSON_AddItemToArray(list, el);
    if (imp__is(e, "site") && imp__attr(e, "site")) {
      cJSON_AddStringToObject(el, "site", imp__attr(e, "site"));
      if (imp__check_attrs(m->c, e, site_read, "not modelled") != 0) {
        return -1;
      }
    } else if (imp__is(e, "geom") && imp__attr(e, "geom")) {
      cJSON_AddStringToObject(el, "geom", imp__attr(e, "geom"));
      if (imp__attr(e, "sidesite")) {
        cJSON_AddStringToObject(el, "sidesite", imp__attr(e, "sidesite"));
      }
      if (imp__check_attrs(m->c, e, geom_read, "not modelled") != 0) {
        return -1;
      }
    } else if (imp__is(e, "pulley")) {
      double divisor = 0;
      const char *text = imp__attr(e, "divisor");
      if (imp__check_attrs(m->c, e, pulley_read, "not modelled") != 0 ||
          (text && imp__numbers(m->c, e, "divisor", text, &divisor, 1, 1) < 0)) {
        return -1;
      }
      cJSON_AddNumberToObject(el, "pulley", divisor);
    } else {
      return imp__fail(m->c, e, "<spatial><%s>: a spatial tendon's path lists <site site>, "
                       "<geom geom [sidesite]> and <pulley divisor>", imp__name(e));
    }
  }
  return 0;
}

static int convert_tendon(mjcf *m, const xmlNode *t, int index) {
  const int fixed = imp__is(t, "fixed");
  if (!fixed && !imp__is(t, "spatial")) {
    return imp__fail(m->c, t, "<tendon><%s>: expected <fixed> or <spatial>", imp__name(t));
  }
  if (imp__check_attrs(m->c, t, mjcf__tendon_read, "not modelled") != 0) {
    return -1;
  }
  for (int k = 0; k < 4; k++) {
    if (mjcf__attr(m, t, "tendon", NULL, visual[k]) &&
        imp__report(m->c, t, "<%s %s> ignored: visual only", imp__name(t), visual[k]) != 0) {
      return -1;
    }
  }
  cJSON *o = cJSON_CreateObject();
  cJSON_AddItemToArray(m->tendons, o);
  const char *name = imp__attr(t, "name");
  char generated[32];
  if (!name) {
    snprintf(generated, sizeof generated, "tendon%d", index);
    name = generated;
  }
  cJSON_AddStringToObject(o, "name", name);
  return (fixed ? fixed_terms(m, t, o) : spatial_path(m, t, o)) != 0 ||
                 tendon_properties(m, t, o) != 0
             ? -1
             : 0;
}

int mjcf__convert_tendons(mjcf *m, const xmlNode *tendon, int *index) {
  for (const xmlNode *t = tendon->children; t; t = t->next) {
    if (t->type == XML_ELEMENT_NODE && convert_tendon(m, t, (*index)++) != 0) {
      return -1;
    }
  }
  return 0;
}
