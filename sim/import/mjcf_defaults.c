/* sim/import/mjcf_defaults.c: MJCF <default> classes: the value an element's class chain gives
 * an attribute it does not set, and the check of what the classes set. */
#include <math.h>
#include <string.h>

#include "sim/import/mjcf_state.h"

/* the <default class=name> at or below d (a top-level <default> is class "main") */
static xmlNode *find_class_below(xmlNode *d, const char *name) {
  const char *cls = imp__attr(d, "class");
  if ((cls && strcmp(cls, name) == 0) || (!cls && strcmp(name, "main") == 0)) {
    return d;
  }
  for (xmlNode *k = d->children; k; k = k->next) {
    if (imp__is(k, "default")) {
      xmlNode *hit = find_class_below(k, name);
      if (hit) {
        return hit;
      }
    }
  }
  return NULL;
}

static xmlNode *find_class(const mjcf *m, const char *name) {
  for (int i = 0; i < m->ndefaults; i++) {
    xmlNode *hit = find_class_below(m->defaults[i], name);
    if (hit) {
      return hit;
    }
  }
  return NULL;
}

/* the value a <default> element gives attribute `name` of elements of this kind, or NULL */
static const char *default_attr(const xmlNode *d, const char *kind, const char *name) {
  for (xmlNode *k = d->children; k; k = k->next) {
    const char *v;
    if (imp__is(k, kind) && (v = imp__attr(k, name)) != NULL) {
      return v;
    }
  }
  return NULL;
}

/* The element's attribute, else its class chain's default for elements of this kind; the chain
 * ends in class "main", which every top-level <default> sets (the last one that sets a value
 * wins, as in MuJoCo). */
const char *mjcf__attr(const mjcf *m, const xmlNode *el, const char *kind, const char *cls,
                       const char *name) {
  const char *v = imp__attr(el, name);
  if (v) {
    return v;
  }
  const char *own = imp__attr(el, "class");
  xmlNode *d = find_class(m, own ? own : cls ? cls : "main");
  for (; d && imp__is(d, "default") && imp__is(d->parent, "default"); d = d->parent) {
    if ((v = default_attr(d, kind, name)) != NULL) {
      return v;
    }
  }
  for (int i = d ? m->ndefaults - 1 : -1; i >= 0; i--) {
    if ((v = default_attr(m->defaults[i], kind, name)) != NULL) {
      return v;
    }
  }
  return NULL;
}

/* numbers of an attribute (element or defaults); returns the count read, 0 when absent */
int mjcf__numbers(mjcf *m, const xmlNode *el, const char *kind, const char *cls,
                  const char *name, double *out, int min_n, int max_n) {
  const char *v = mjcf__attr(m, el, kind, cls, name);
  return v ? imp__numbers(m->c, el, name, v, out, min_n, max_n) : 0;
}

/* A solref (2 numbers) or solimp (5) given in part, as MuJoCo reads it: the numbers not given
 * keep MuJoCo's defaults (solref 0.02 1, solimp 0.9 0.95 0.001 0.5 2). Values are kept as
 * written: the constraint stage uses them as MuJoCo does (engine_core_constraint.c's
 * getsolparam, after a contact mixes its two geoms'): a solref mixing its two forms becomes the
 * default, solimp's dmin, dmax and midpoint are clamped to [0.0001, 0.9999], its width to >= 0
 * and its power to >= 1. A value those rules change beyond the usual [0, 1] ends (MuJoCo's own
 * models write dmin 0) gets a note saying what is used. Returns want, or -1 when a note is an
 * error (strict). */
int mjcf__soft_values(mjcf *m, const xmlNode *el, const char *attr, double *v, int n, int want) {
  static const double solref[2] = {0.02, 1}, solimp[5] = {0.9, 0.95, 0.001, 0.5, 2};
  for (int i = n; i < want; i++) {
    v[i] = want == 2 ? solref[i] : solimp[i];
  }
  double used[5];
  memcpy(used, v, (size_t)want * sizeof(double));
  int unusual;
  if (want == 2) {
    unusual = (used[0] > 0) != (used[1] > 0);
    if (unusual) {
      memcpy(used, solref, sizeof solref);
    }
  } else {
    unusual = !(used[2] >= 0 && used[4] >= 1);
    for (int i = 0; i < 4; i += i == 1 ? 2 : 1) { /* dmin, dmax, midpoint */
      unusual |= !(used[i] >= 0 && used[i] <= 1);
      used[i] = fmin(0.9999, fmax(0.0001, used[i]));
    }
    used[2] = fmax(0, used[2]);
    used[4] = fmax(1, used[4]);
  }
  if (unusual) {
    char given[160], taken[160];
    size_t a = 0, b = 0;
    for (int i = 0; i < want; i++) {
      a += (size_t)snprintf(given + a, sizeof given - a, "%s%g", i ? " " : "", v[i]);
      b += (size_t)snprintf(taken + b, sizeof taken - b, "%s%g", i ? " " : "", used[i]);
    }
    const int geom = imp__is(el, "geom");
    if (imp__report(m->c, el, "<%s %s=\"%s\"> used as MuJoCo uses it: \"%s\"%s", imp__name(el),
                    attr, given, taken,
                    want == 2 ? " (its two forms mixed: the default)"
                    : geom    ? " (clamped; a contact mixes its two geoms' values first)"
                              : " (clamped)")) {
      return -1;
    }
  }
  return want;
}

/* the attributes a <default> class sets are checked like the elements' own */
int mjcf__check_defaults(mjcf *m, const xmlNode *d) {
  for (const xmlNode *k = d->children; k; k = k->next) {
    int rc = 0;
    if (k->type != XML_ELEMENT_NODE) {
      continue;
    } else if (imp__is(k, "default")) {
      rc = mjcf__check_defaults(m, k);
    } else if (imp__is(k, "joint")) {
      rc = imp__check_attrs(m->c, k, mjcf__joint_read, "not modelled");
    } else if (imp__is(k, "geom")) {
      rc = imp__check_attrs(m->c, k, mjcf__geom_read, "not modelled");
    } else if (imp__is(k, "site")) {
      rc = imp__check_attrs(m->c, k, mjcf__site_read, "a site is a point here (no size, frame or look)");
    } else if (imp__is(k, "motor") || imp__is(k, "position") || imp__is(k, "velocity")) {
      rc = imp__check_attrs(m->c, k, mjcf__actuator_read, "not modelled");
    } else if (imp__is(k, "tendon")) {
      rc = imp__check_attrs(m->c, k, mjcf__tendon_read, "not modelled");
    } else if (imp__is(k, "muscle") || imp__is(k, "general")) {
      rc = imp__check_attrs(m->c, k, mjcf__muscle_read, "not modelled");
    } else {
      rc = imp__report(m->c, k, "<default><%s> ignored: not modelled", imp__name(k));
    }
    if (rc != 0) {
      return -1;
    }
  }
  return 0;
}
