/* sim/import/mjcf_composite.c: reading MuJoCo 2.2.2's <composite> (its attributes, the
 * templates of its children, the defaults of its type) and expanding it in the document; the
 * layouts are mjcf_composite_make.c's, the elements they write mjcf_composite_write.c's (see
 * mjcf_composite.h).
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

static const char *const type_names[COMP_NTYPES] = {"particle", "grid",     "rope",
                                                    "loop",     "cloth",    "box",
                                                    "cylinder", "ellipsoid"};

/* --- reading --------------------------------------------------------------------------------- */

/* MuJoCo's attributes of each element (its schema, xml_native_reader.cc): another is its error */
static const char *const composite_attrs[] = {"prefix", "type", "count", "spacing", "offset",
                                              "flatinertia", "solrefsmooth", "solimpsmooth",
                                              NULL};
static const char *const joint_attrs[] = {"kind", "group", "stiffness", "damping", "armature",
                                          "solreffix", "solimpfix", "limited", "range",
                                          "margin", "solreflimit", "solimplimit",
                                          "frictionloss", "solreffriction", "solimpfriction",
                                          NULL};
static const char *const tendon_attrs[] = {"kind", "group", "stiffness", "damping", "solreffix",
                                           "solimpfix", "limited", "range", "margin",
                                           "solreflimit", "solimplimit", "frictionloss",
                                           "solreffriction", "solimpfriction", "material",
                                           "rgba", "width", NULL};
static const char *const skin_attrs[] = {"texcoord", "material", "group", "rgba", "inflate",
                                         "subgrid", NULL};
static const char *const geom_attrs[] = {"type", "contype", "conaffinity", "condim", "group",
                                         "priority", "size", "material", "rgba", "friction",
                                         "mass", "density", "solmix", "solref", "solimp",
                                         "margin", "gap", NULL};
static const char *const site_attrs[] = {"group", "size", "material", "rgba", NULL};
static const char *const pin_attrs[] = {"coord", NULL};

static int check_attrs(imp_ctx *c, const xmlNode *n, const char *const *known) {
  for (const xmlAttr *a = n->properties; a; a = a->next) {
    int ok = 0;
    for (const char *const *k = known; *k && !ok; k++) {
      ok = strcmp(*k, (const char *)a->name) == 0;
    }
    if (!ok) {
      return imp__fail(c, n, "<%s %s>: not an attribute of MuJoCo 2.2.2's composite %s",
                       imp__name(n), (const char *)a->name, imp__name(n));
    }
  }
  return 0;
}

/* up to max numbers of attribute name over out (the rest keep their values); exact: all max */
static int numbers(comp *k, const xmlNode *n, const char *name, double *out, int max,
                   int exact) {
  const char *text = imp__attr(n, name);
  if (!text) {
    return 0;
  }
  double v[5];
  const int got = imp__numbers(k->c, n, name, text, v, exact ? max : 1, max);
  for (int i = 0; i < got; i++) {
    out[i] = v[i];
  }
  return got < 0 ? -1 : 0;
}

static int integer(comp *k, const xmlNode *n, const char *name, int *out) {
  double v = *out;
  if (numbers(k, n, name, &v, 1, 1) != 0) {
    return -1;
  }
  if (v != floor(v) || fabs(v) > 1e9) {
    return imp__fail(k->c, n, "<%s %s=\"%s\">: expected an integer", imp__name(n), name,
                     imp__attr(n, name));
  }
  *out = (int)v;
  return 0;
}

/* "true" or "false" into *out (1, 0); absent leaves it */
static int boolean(comp *k, const xmlNode *n, const char *name, int *out) {
  const char *v = imp__attr(n, name);
  if (!v) {
    return 0;
  }
  if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0) {
    return imp__fail(k->c, n, "<%s %s=\"%s\">: expected true or false", imp__name(n), name, v);
  }
  *out = strcmp(v, "true") == 0;
  return 0;
}

static void default_soft(double solref[2], double solimp[5]) {
  static const double ref[2] = {0.02, 1}, imp[5] = {0.9, 0.95, 0.001, 0.5, 2};
  memcpy(solref, ref, sizeof ref);
  memcpy(solimp, imp, sizeof imp);
}

/* MuJoCo's AdjustSoft: level 0 hard, level 1 soft */
static void adjust_soft(double solref[2], double solimp[5], int level) {
  solref[0] = level == 0 ? 0.01 : 0.02;
  solimp[0] = solimp[1] = level == 0 ? 0.99 : 0.9;
}

/* the built-in defaults (mjCJoint, mjCTendon, mjCEquality, mjCGeom constructors), then the
 * type's own (MuJoCo's SetDefault) */
static void set_defaults(comp *k) {
  for (int i = 0; i < KIND_N; i++) {
    comp_dof *d = &k->kind[i];
    memset(d, 0, sizeof *d);
    default_soft(d->solreflimit, d->solimplimit);
    default_soft(d->solreffriction, d->solimpfriction);
    default_soft(d->solreffix, d->solimpfix);
  }
  comp_geom *g = &k->geom;
  memset(g, 0, sizeof *g);
  g->contype = g->conaffinity = 1;
  g->condim = 3;
  g->friction[0] = 1, g->friction[1] = 0.005, g->friction[2] = 0.0001;
  g->solmix = 1;
  g->density = 1000;
  default_soft(g->solref, g->solimp);
  default_soft(k->solrefsmooth, k->solimpsmooth);
  /* hidden under a skin (group 3) unless the type shows its geoms */
  int tmpdim = 0;
  for (int i = 0; i < 3; i++) {
    tmpdim += k->count[i] > 1;
  }
  const int shown = !k->skin || k->type == COMP_PARTICLE || k->type == COMP_ROPE ||
                    k->type == COMP_LOOP || (k->type == COMP_GRID && tmpdim == 1);
  g->group = shown ? 0 : 3;
  switch (k->type) {
  case COMP_PARTICLE: /* no friction with anything */
    g->condim = 1;
    g->priority = 1;
    break;
  case COMP_GRID:
    adjust_soft(k->kind[KIND_TENDON].solreffix, k->kind[KIND_TENDON].solimpfix, 0);
    break;
  case COMP_LOOP:
    adjust_soft(k->solrefsmooth, k->solimpsmooth, 0);
    break;
  case COMP_BOX:
  case COMP_CYLINDER:
  case COMP_ELLIPSOID:
    g->contype = 0; /* no self-collisions */
    adjust_soft(k->solrefsmooth, k->solimpsmooth, 1);
    for (int i = 0; i < KIND_N; i++) {
      adjust_soft(k->kind[i].solreffix, k->kind[i].solimpfix, 1);
    }
    adjust_soft(k->kind[KIND_TENDON].solreffix, k->kind[KIND_TENDON].solimpfix, 0);
    break;
  default:
    break;
  }
}

static int read_geom(comp *k, const xmlNode *e) {
  static const char *const types[] = {"sphere", "capsule", "ellipsoid", "plane", "hfield",
                                      "cylinder", "box", "mesh", "sdf", NULL};
  comp_geom *g = &k->geom;
  if (check_attrs(k->c, e, geom_attrs) != 0) {
    return -1;
  }
  const char *type = imp__attr(e, "type");
  if (type) {
    int t = -2;
    for (int i = 0; types[i]; i++) {
      t = strcmp(type, types[i]) == 0 ? i : t;
    }
    if (t == -2) {
      return imp__fail(k->c, e, "<geom type=\"%s\">: not a geom type", type);
    }
    g->type = t > 2 ? -1 : t;
  }
  double mass = 0;
  g->has_mass = imp__attr(e, "mass") != NULL;
  if (numbers(k, e, "size", g->size, 3, 0) || integer(k, e, "contype", &g->contype) ||
      integer(k, e, "conaffinity", &g->conaffinity) || integer(k, e, "condim", &g->condim) ||
      integer(k, e, "group", &g->group) || integer(k, e, "priority", &g->priority) ||
      numbers(k, e, "friction", g->friction, 3, 0) || numbers(k, e, "solmix", &g->solmix, 1, 1) ||
      numbers(k, e, "solref", g->solref, 2, 0) || numbers(k, e, "solimp", g->solimp, 5, 0) ||
      numbers(k, e, "margin", &g->margin, 1, 1) || numbers(k, e, "gap", &g->gap, 1, 1) ||
      numbers(k, e, "mass", &mass, 1, 1) || numbers(k, e, "density", &g->density, 1, 1)) {
    return -1;
  }
  g->mass = mass;
  return 0;
}

/* a <joint kind> or <tendon kind> template */
static int read_dof(comp *k, const xmlNode *e, int tendon) {
  static const char *const joints[] = {"main", "twist", "stretch"};
  static const char *const tendons[] = {"main", "shear"};
  if (check_attrs(k->c, e, tendon ? tendon_attrs : joint_attrs) != 0) {
    return -1;
  }
  const char *kind = imp__attr(e, "kind");
  int i = -1;
  for (int j = 0; kind && j < (tendon ? 2 : 3); j++) {
    i = strcmp(kind, tendon ? tendons[j] : joints[j]) == 0 ? j : i;
  }
  if (i < 0) {
    return imp__fail(k->c, e, "<composite><%s kind=\"%s\">: expected %s", imp__name(e),
                     kind ? kind : "", tendon ? "main or shear" : "main, twist or stretch");
  }
  i += tendon ? KIND_TENDON : 0;
  k->add[i] = 1;
  comp_dof *d = &k->kind[i];
  d->has_range |= imp__attr(e, "range") != NULL;
  /* MuJoCo 2.2.2 reads `limited` here into its "auto" (the range decides, under autolimits)
   * whatever it says: measured with its compiler, limited="false" and a range limit the joint */
  int limited = -1;
  if (boolean(k, e, "limited", &limited) != 0 ||
      (limited >= 0 && imp__report(k->c, e, "<composite><%s limited> ignored, as MuJoCo 2.2.2 "
                                            "ignores it: a range limits (under autolimits)",
                                   imp__name(e)) != 0)) {
    return -1;
  }
  return numbers(k, e, "solreffix", d->solreffix, 2, 0) ||
                 numbers(k, e, "solimpfix", d->solimpfix, 5, 0) ||
                 numbers(k, e, "solreflimit", d->solreflimit, 2, 0) ||
                 numbers(k, e, "solimplimit", d->solimplimit, 5, 0) ||
                 numbers(k, e, "solreffriction", d->solreffriction, 2, 0) ||
                 numbers(k, e, "solimpfriction", d->solimpfriction, 5, 0) ||
                 numbers(k, e, "stiffness", &d->stiffness, 1, 1) ||
                 numbers(k, e, "range", d->range, 2, 1) ||
                 numbers(k, e, "margin", &d->margin, 1, 1) ||
                 numbers(k, e, "armature", &d->armature, 1, 1) ||
                 numbers(k, e, "damping", &d->damping, 1, 1) ||
                 numbers(k, e, "frictionloss", &d->frictionloss, 1, 1)
             ? -1
             : 0;
}

static int read_pin(comp *k, const xmlNode *e) {
  double v[2] = {0, 0};
  if (check_attrs(k->c, e, pin_attrs) != 0) {
    return -1;
  }
  if (!imp__attr(e, "coord")) {
    return imp__fail(k->c, e, "<pin>: the attribute coord is required");
  }
  if (numbers(k, e, "coord", v, 2, 0) != 0) {
    return -1;
  }
  if (v[0] != floor(v[0]) || v[1] != floor(v[1]) || fabs(v[0]) > 1e6 || fabs(v[1]) > 1e6) {
    return imp__fail(k->c, e, "<pin coord=\"%s\">: expected integers", imp__attr(e, "coord"));
  }
  int *grown = realloc(k->pin, (size_t)(k->npin + 1) * 2 * sizeof(int));
  if (!grown) {
    return imp__fail(k->c, e, "out of memory");
  }
  k->pin = grown;
  k->pin[2 * k->npin] = (int)v[0];
  k->pin[2 * k->npin + 1] = (int)v[1];
  k->npin++;
  return 0;
}

/* the composite's own attributes (before the type's defaults: they depend on count and skin) */
static int read_top(comp *k) {
  xmlNode *e = k->el;
  const char *type = imp__attr(e, "type");
  int t = -1;
  for (int i = 0; type && i < COMP_NTYPES; i++) {
    t = strcmp(type, type_names[i]) == 0 ? i : t;
  }
  if (t < 0) {
    return imp__fail(k->c, e, "<composite type=\"%s\">: expected particle, grid, rope, loop, "
                              "cloth, box, cylinder or ellipsoid", type ? type : "");
  }
  k->type = (comp_type)t;
  const char *prefix = imp__attr(e, "prefix");
  snprintf(k->prefix, sizeof k->prefix, "%s", prefix ? prefix : "");
  if (!imp__attr(e, "count") || !imp__attr(e, "spacing")) {
    return imp__fail(k->c, e, "<composite>: count and spacing are required");
  }
  double count[3] = {1, 1, 1};
  if (check_attrs(k->c, e, composite_attrs) != 0 || numbers(k, e, "count", count, 3, 0) ||
      numbers(k, e, "spacing", &k->spacing, 1, 1) || numbers(k, e, "offset", k->offset, 3, 1) ||
      numbers(k, e, "flatinertia", &k->flatinertia, 1, 1)) {
    return -1;
  }
  for (int i = 0; i < 3; i++) {
    if (count[i] != floor(count[i]) || fabs(count[i]) > 1e6) {
      return imp__fail(k->c, e, "<composite count>: expected integers");
    }
    k->count[i] = (int)count[i];
  }
  return 0;
}

/* the skin: visual only, dropped with a note (its attributes still checked as MuJoCo does) */
static int read_skin(comp *k, const xmlNode *s) {
  int group = 0;
  k->skin = 1;
  if (check_attrs(k->c, s, skin_attrs) != 0 || integer(k, s, "group", &group) != 0 ||
      integer(k, s, "subgrid", &k->skin_subgrid) != 0) {
    return -1;
  }
  if (group < 0 || group >= 6) {
    return imp__fail(k->c, s, "skin group must be between 0 and 5");
  }
  return imp__report(k->c, s, "<composite type=\"%s\"><skin> ignored: visual only (its "
                              "bodies, joints and geoms are built)", type_names[k->type]);
}

static int read_composite(comp *k) {
  if (read_top(k) != 0) {
    return -1;
  }
  const xmlNode *skin = imp__child(k->el, "skin");
  if (skin && read_skin(k, skin) != 0) {
    return -1;
  }
  set_defaults(k);
  if (numbers(k, k->el, "solrefsmooth", k->solrefsmooth, 2, 0) ||
      numbers(k, k->el, "solimpsmooth", k->solimpsmooth, 5, 0)) {
    return -1;
  }
  const xmlNode *geom = imp__child(k->el, "geom"), *site = imp__child(k->el, "site");
  if ((geom && read_geom(k, geom) != 0) || (site && check_attrs(k->c, site, site_attrs) != 0)) {
    return -1;
  }
  for (xmlNode *n = xmlFirstElementChild(k->el); n; n = xmlNextElementSibling(n)) {
    int rc = 0;
    if (imp__is(n, "joint") || imp__is(n, "tendon")) {
      rc = read_dof(k, n, imp__is(n, "tendon"));
    } else if (imp__is(n, "pin")) {
      rc = read_pin(k, n);
    } else if (!imp__is(n, "skin") && !imp__is(n, "geom") && !imp__is(n, "site")) {
      rc = imp__fail(k->c, n, "<composite><%s>: not an element of MuJoCo 2.2.2's composite",
                     imp__name(n));
    }
    if (rc != 0) {
      return -1;
    }
  }
  return 0;
}

/* --- the document ---------------------------------------------------------------------------- */

/* 2.2.2's error for a composite in a file of global coordinates */
static int global_coordinates(const xmlNode *root) {
  for (const xmlNode *n = xmlFirstElementChild((xmlNode *)root); n;
       n = xmlNextElementSibling((xmlNode *)n)) {
    const char *v = imp__is(n, "compiler") ? imp__attr(n, "coordinate") : NULL;
    if (v && strcmp(v, "global") == 0) {
      return 1;
    }
  }
  return 0;
}

static int expand_one(imp_ctx *c, xmlDoc *doc, xmlNode *el, xmlNode **sections) {
  comp k;
  memset(&k, 0, sizeof k);
  k.c = c;
  k.doc = doc;
  k.el = el;
  k.parent = el->parent;
  k.tendons = &sections[0], k.equalities = &sections[1], k.contact = &sections[2];
  k.defaults_set = comp__defaults_set(doc);
  if (!imp__is(k.parent, "body") && !imp__is(k.parent, "worldbody")) {
    return imp__fail(c, el, "<composite> must be inside a <body> or the <worldbody>");
  }
  const char *name = imp__is(k.parent, "body") ? imp__attr(k.parent, "name") : "world";
  k.parent_name = name ? name : "";
  if (global_coordinates(xmlDocGetRootElement(doc))) {
    return imp__fail(c, el, "Composite requires local coordinates (MuJoCo's error)");
  }
  int rc = read_composite(&k);
  if (rc == 0) {
    rc = comp__make(&k);
  }
  free(k.pin);
  return rc;
}

int imp__expand_composites(imp_ctx *c, xmlDoc *doc) {
  xmlNode *sections[3] = {NULL, NULL, NULL}; /* tendon, equality, contact */
  xmlNode *n = xmlDocGetRootElement(doc);
  while (n) {
    if (!imp__is(n, "composite")) {
      n = imp__next_in_order(n);
      continue;
    }
    /* the elements go in before it; the walk goes on after it */
    xmlNode *el = n;
    if (expand_one(c, doc, el, sections) != 0) {
      return -1;
    }
    xmlNode *up = el;
    while (up && !up->next) {
      up = up->parent;
    }
    n = up ? up->next : NULL;
    xmlUnlinkNode(el);
    xmlFreeNode(el);
  }
  return 0;
}
