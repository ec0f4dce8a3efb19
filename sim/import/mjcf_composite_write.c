/* sim/import/mjcf_composite_write.c: the elements a <composite> expands into (bodies, geoms,
 * sites, joints, tendons, equalities, excludes), written into the document for the layouts of
 * mjcf_composite_make.c (see mjcf_composite.h).
 *
 * MuJoCo gives a composite's elements its own defaults (the built-in ones with the type's
 * changes, then the templates), never the file's <default> classes: every attribute that moves
 * the model is therefore written on the element, so no class of the file reaches it. Numbers
 * are written with 17 digits, so what MuJoCo and the converters read back is the same double. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/import/mjcf_composite.h"
#include "sim/import/mjcf_state.h"

/* --- writing --------------------------------------------------------------------------------- */

xmlNode *comp__node(comp *k, xmlNode *parent, const char *name) {
  xmlNode *n = xmlNewDocNode(k->doc, NULL, (const xmlChar *)name, NULL);
  if (!n) {
    return NULL;
  }
  n->line = k->el->line; /* messages about it name the composite's line and file */
  n->_private = k->el->_private;
  /* in the composite's own body, where the composite stands (MuJoCo adds them while reading
   * it, before the body's later children) */
  if (parent && parent != k->parent) {
    xmlAddChild(parent, n);
  } else {
    xmlAddPrevSibling(k->el, n);
  }
  return n;
}

void comp__text(xmlNode *n, const char *attr, const char *value) {
  if (n) {
    xmlNewProp(n, (const xmlChar *)attr, (const xmlChar *)value);
  }
}

void comp__numbers(xmlNode *n, const char *attr, const double *v, int count) {
  char text[256];
  size_t at = 0;
  for (int i = 0; i < count; i++) {
    at += (size_t)snprintf(text + at, sizeof text - at, "%s%.17g", i ? " " : "",
                           v[i] == 0 ? 0.0 : v[i]);
  }
  comp__text(n, attr, text);
}

static void comp_int(xmlNode *n, const char *attr, int v) {
  char text[32];
  snprintf(text, sizeof text, "%d", v);
  comp__text(n, attr, text);
}

/* the attributes written only when they differ from MuJoCo's defaults (what the converters do
 * not model, or what a default would otherwise reach): unless a <default> of the file sets
 * them, so a note about one is one that matters */
static const struct {
  const char *kind, *attr;
} optional[] = {{"geom", "priority"},    {"geom", "solmix"},  {"geom", "margin"},
                {"geom", "gap"},         {"joint", "margin"}, {"joint", "range"},
                {"tendon", "margin"},    {"tendon", "range"}, {"tendon", "springlength"}};

/* which of them a <default> class of the file gives, as bits */
unsigned comp__defaults_set(xmlDoc *doc) {
  unsigned bits = 0;
  const xmlNode *root = xmlDocGetRootElement(doc);
  for (xmlNode *n = xmlFirstElementChild((xmlNode *)root); n; n = xmlNextElementSibling(n)) {
    if (!imp__is(n, "default")) {
      continue;
    }
    for (xmlNode *d = n; d && d != n->next; d = imp__next_in_order(d)) { /* nested classes */
      for (size_t i = 0; i < sizeof optional / sizeof optional[0]; i++) {
        if (d->type == XML_ELEMENT_NODE && imp__is(d, optional[i].kind) &&
            imp__is(d->parent, "default") && imp__attr(d, optional[i].attr)) {
          bits |= 1u << i;
        }
      }
    }
  }
  return bits;
}

static int default_sets(const comp *k, const char *kind, const char *attr) {
  for (size_t i = 0; i < sizeof optional / sizeof optional[0]; i++) {
    if (strcmp(optional[i].kind, kind) == 0 && strcmp(optional[i].attr, attr) == 0) {
      return (k->defaults_set >> i) & 1u;
    }
  }
  return 0;
}

xmlNode *comp__body(comp *k, xmlNode *parent, const char *name, const double pos[3],
                    const double *q) {
  xmlNode *b = comp__node(k, parent, "body");
  if (name) {
    comp__text(b, "name", name);
  }
  comp__numbers(b, "pos", pos, 3);
  if (q) {
    comp__numbers(b, "quat", q, 4);
  }
  return b;
}

xmlNode *comp__geom(comp *k, xmlNode *body, const char *name, int type, const double pos[3],
                    const double q[4], const double *size) {
  static const char *const types[] = {"sphere", "capsule", "ellipsoid"};
  const comp_geom *g = &k->geom;
  xmlNode *n = comp__node(k, body, "geom");
  if (name) {
    comp__text(n, "name", name);
  }
  comp__text(n, "type", types[type >= 0 ? type : g->type]);
  comp__numbers(n, "size", size ? size : g->size, 3);
  comp__numbers(n, "pos", pos, 3);
  comp__numbers(n, "quat", q, 4);
  comp_int(n, "contype", g->contype);
  comp_int(n, "conaffinity", g->conaffinity);
  comp_int(n, "condim", g->condim);
  comp_int(n, "group", g->group);
  comp__numbers(n, "friction", g->friction, 3);
  comp__numbers(n, "solref", g->solref, 2);
  comp__numbers(n, "solimp", g->solimp, 5);
  comp__numbers(n, g->has_mass ? "mass" : "density", g->has_mass ? &g->mass : &g->density, 1);
  /* written only when needed (`optional` above) */
  if (g->priority != 0 || default_sets(k, "geom", "priority")) {
    comp_int(n, "priority", g->priority);
  }
  if (g->solmix != 1 || default_sets(k, "geom", "solmix")) {
    comp__numbers(n, "solmix", &g->solmix, 1);
  }
  if (g->margin != 0 || default_sets(k, "geom", "margin")) {
    comp__numbers(n, "margin", &g->margin, 1);
  }
  if (g->gap != 0 || default_sets(k, "geom", "gap")) {
    comp__numbers(n, "gap", &g->gap, 1);
  }
  return n;
}

xmlNode *comp__site(comp *k, xmlNode *body, const char *name) {
  static const double zero[3] = {0, 0, 0};
  xmlNode *n = comp__node(k, body, "site");
  comp__text(n, "name", name);
  comp__numbers(n, "pos", zero, 3);
  return n;
}

/* the dynamics of a joint or tendon of this kind */
static void dof_attrs(comp *k, xmlNode *n, const comp_dof *d, int joint) {
  static const double zero = 0;
  if (!d->has_range) {
    comp__text(n, "limited", "false"); /* MuJoCo's "auto" without a range */
  }
  if (d->has_range || default_sets(k, joint ? "joint" : "tendon", "range")) {
    comp__numbers(n, "range", d->range, 2);
  }
  comp__numbers(n, "stiffness", &d->stiffness, 1);
  comp__numbers(n, "damping", &d->damping, 1);
  comp__numbers(n, "frictionloss", &d->frictionloss, 1);
  if (joint) {
    comp__numbers(n, "armature", &d->armature, 1);
    comp__numbers(n, "ref", &zero, 1);
    comp__numbers(n, "springref", &zero, 1);
  }
  if (d->margin != 0 || default_sets(k, joint ? "joint" : "tendon", "margin")) {
    comp__numbers(n, "margin", &d->margin, 1);
  }
  if (!joint && default_sets(k, "tendon", "springlength")) {
    static const double automatic = -1; /* MuJoCo's: the length at qpos0 */
    comp__numbers(n, "springlength", &automatic, 1);
  }
  comp__numbers(n, "solreflimit", d->solreflimit, 2);
  comp__numbers(n, "solimplimit", d->solimplimit, 5);
  comp__numbers(n, "solreffriction", d->solreffriction, 2);
  comp__numbers(n, "solimpfriction", d->solimpfriction, 5);
}

xmlNode *comp__joint(comp *k, xmlNode *body, comp_kind kind, const char *name,
                     const char *type, const double pos[3], const double axis[3]) {
  xmlNode *n = comp__node(k, body, "joint");
  if (name) {
    comp__text(n, "name", name);
  }
  comp__text(n, "type", type);
  comp__numbers(n, "pos", pos, 3);
  comp__numbers(n, "axis", axis, 3);
  dof_attrs(k, n, &k->kind[kind], 1);
  return n;
}

/* a section of the root: the one made before, else a new one before the file's first of that
 * name (MuJoCo reads the worldbody, and so the composites, before it), else at the end */
static xmlNode *section(comp *k, xmlNode **made, const char *name) {
  if (*made) {
    return *made;
  }
  xmlNode *root = xmlDocGetRootElement(k->doc);
  xmlNode *first = NULL;
  for (xmlNode *n = xmlFirstElementChild(root); n && !first; n = xmlNextElementSibling(n)) {
    first = imp__is(n, name) ? n : NULL;
  }
  xmlNode *s = xmlNewDocNode(k->doc, NULL, (const xmlChar *)name, NULL);
  s->line = k->el->line;
  s->_private = k->el->_private;
  if (first) {
    xmlAddPrevSibling(first, s);
  } else {
    xmlAddChild(root, s);
  }
  return *made = s;
}

xmlNode *comp__tendon(comp *k, comp_kind kind, const char *type, const char *name) {
  xmlNode *n = comp__node(k, section(k, k->tendons, "tendon"), type);
  comp__text(n, "name", name);
  dof_attrs(k, n, &k->kind[kind], 0);
  k->spatial += strcmp(type, "spatial") == 0;
  k->fixed += strcmp(type, "fixed") == 0;
  return n;
}

void comp__fix(comp *k, comp_kind kind, const char *what, const char *name) {
  static const double poly[5] = {0, 1, 0, 0, 0};
  xmlNode *n = comp__node(k, section(k, k->equalities, "equality"), what);
  const int tendon = strcmp(what, "tendon") == 0;
  comp__text(n, tendon ? "tendon1" : "joint1", name);
  comp__numbers(n, "polycoef", poly, 5);
  comp__text(n, "active", "true"); /* the composite's own default, not the file's */
  comp__numbers(n, "solref", k->kind[kind].solreffix, 2);
  comp__numbers(n, "solimp", k->kind[kind].solimpfix, 5);
  k->eq_tendon += tendon;
  k->eq_joint += !tendon;
}

void comp__smooth(comp *k, const char *what, const char *name1, const char *name2,
                  const double *anchor) {
  static const double poly[5] = {0, 1, 0, 0, 0};
  xmlNode *n = comp__node(k, section(k, k->equalities, "equality"), what);
  const int connect = strcmp(what, "connect") == 0;
  comp__text(n, connect ? "body1" : "joint1", name1);
  comp__text(n, connect ? "body2" : "joint2", name2);
  if (connect) {
    comp__numbers(n, "anchor", anchor, 3);
  } else {
    comp__numbers(n, "polycoef", poly, 5);
  }
  comp__numbers(n, "solref", k->solrefsmooth, 2);
  comp__numbers(n, "solimp", k->solimpsmooth, 5);
  k->eq_connect += connect;
  k->eq_joint += !connect;
}

void comp__exclude(comp *k, const char *body1, const char *body2) {
  xmlNode *n = comp__node(k, section(k, k->contact, "contact"), "exclude");
  comp__text(n, "body1", body1);
  comp__text(n, "body2", body2);
  k->excludes++;
}

