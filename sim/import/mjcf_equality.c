/* sim/import/mjcf_equality.c: MJCF <equality> (connect, weld, joint) into the native "equality"
 * array (docs/import.md). MuJoCo 2.2.2's attributes and defaults: every number list complete
 * (anchor 3, relpose 7, polycoef 5), solref and solimp from the element or its class
 * (<default><equality>), active true unless said. Anchors and a weld's relative position are
 * moved from the MJCF body frames into the native ones, which sit at each body's first joint
 * (mjcf_body.c); what MuJoCo's compiler derives at qpos0 (a connect's point on body2, a weld's
 * relative pose when relpose is absent or its quaternion 0) the loader derives the same way.
 * <tendon> couples two tendons' lengths as <joint> couples joints (the tendons converted by
 * mjcf_tendon.c); <distance> is refused as MuJoCo 2.2.2 refuses it. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "sim/import/mjcf_state.h"

const char *const mjcf__equality_read[] = {"name",     "class",  "body1",       "body2",
                                           "anchor",   "relpose", "torquescale", "joint1",
                                           "joint2",   "polycoef", "active",     "solref",
                                           "solimp",   "tendon1", "tendon2",     NULL};

/* the native frame of MJCF body `name` as an offset p (native origin = MJCF origin + p, same
 * axes); the world's is 0. -1 with an error for a body that is not built as one. */
static int body_offset(mjcf *m, const xmlNode *el, const char *attr, const char *name,
                       double p[3]) {
  p[0] = p[1] = p[2] = 0;
  if (strcmp(name, "world") == 0) {
    return 0;
  }
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(m->frames, name);
  if (cJSON_IsNull(f)) {
    return imp__fail(m->c, el, "<%s %s=\"%s\">: that body has neither a joint nor mass, so it "
                     "is merged into its parent here; give it an <inertial> to constrain it",
                     imp__name(el), attr, name);
  }
  if (!cJSON_IsArray(f)) {
    return imp__fail(m->c, el, "<%s %s=\"%s\">: unknown body", imp__name(el), attr, name);
  }
  for (int i = 0; i < 3; i++) {
    p[i] = cJSON_GetArrayItem(f, i)->valuedouble;
  }
  return 0;
}

/* the type of native joint `name` ("hinge", "slide", ...), or NULL when no body has it */
static const char *joint_type(const mjcf *m, const char *name) {
  for (const cJSON *b = m->bodies->child; b; b = b->next) {
    const cJSON *one = cJSON_GetObjectItemCaseSensitive(b, "joint");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(b, "joints");
    for (const cJSON *j = one ? one : list ? list->child : NULL; j; j = one ? NULL : j->next) {
      const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, "name");
      if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "type");
        return cJSON_IsString(t) ? t->valuestring : "?";
      }
    }
  }
  return NULL;
}

/* tendon1 (required) or tendon2: a converted tendon's name */
static int add_tendon(mjcf *m, const xmlNode *el, cJSON *o, const char *attr, int required) {
  const char *name = mjcf__attr(m, el, "equality", NULL, attr);
  if (!name) {
    return required ? imp__fail(m->c, el, "<tendon>: %s is required", attr) : 0;
  }
  int found = 0;
  for (const cJSON *t = m->tendons ? m->tendons->child : NULL; t && !found; t = t->next) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(t, "name");
    found = cJSON_IsString(n) && strcmp(n->valuestring, name) == 0;
  }
  if (!found) {
    return imp__fail(m->c, el, "<tendon %s=\"%s\">: unknown tendon", attr, name);
  }
  cJSON_AddStringToObject(o, attr, name);
  return 0;
}

/* attribute `name` of exactly n numbers (element or class); 0 absent, n read, -1 */
static int exact(mjcf *m, const xmlNode *el, const char *name, double *v, int n) {
  return mjcf__numbers(m, el, "equality", NULL, name, v, n, n);
}

static int add_body(mjcf *m, const xmlNode *el, cJSON *o, const char *attr, int required,
                    double p[3]) {
  const char *name = mjcf__attr(m, el, "equality", NULL, attr);
  p[0] = p[1] = p[2] = 0;
  if (!name) {
    return required ? imp__fail(m->c, el, "<%s>: %s is required", imp__name(el), attr) : 0;
  }
  if (body_offset(m, el, attr, name, p) != 0) {
    return -1;
  }
  cJSON_AddStringToObject(o, attr, name);
  return 0;
}

static int add_joint(mjcf *m, const xmlNode *el, cJSON *o, const char *attr, int required) {
  const char *name = mjcf__attr(m, el, "equality", NULL, attr);
  if (!name) {
    return required ? imp__fail(m->c, el, "<joint>: %s is required", attr) : 0;
  }
  const char *type = joint_type(m, name);
  if (!type) {
    return imp__fail(m->c, el, "<joint %s=\"%s\">: unknown joint", attr, name);
  }
  if (strcmp(type, "hinge") != 0 && strcmp(type, "slide") != 0) {
    return imp__fail(m->c, el, "<joint %s=\"%s\">: a joint equality couples hinges and slides, "
                     "not a %s joint", attr, name, type);
  }
  cJSON_AddStringToObject(o, attr, name);
  return 0;
}

/* connect: body1, body2, anchor (body1's frame) */
static int connect_of(mjcf *m, const xmlNode *el, cJSON *o) {
  double p1[3], p2[3], anchor[3];
  if (add_body(m, el, o, "body1", 1, p1) || add_body(m, el, o, "body2", 0, p2)) {
    return -1;
  }
  const int n = exact(m, el, "anchor", anchor, 3);
  if (n <= 0) {
    return n < 0 ? -1 : imp__fail(m->c, el, "<connect>: anchor is required");
  }
  for (int i = 0; i < 3; i++) {
    anchor[i] -= p1[i];
  }
  cJSON_AddItemToObject(o, "anchor", imp__json_vector(anchor, 3));
  return 0;
}

/* weld: anchor in body2's frame, relpose (position in body1's frame, orientation) */
static int weld_of(mjcf *m, const xmlNode *el, cJSON *o) {
  double p1[3], p2[3], anchor[3] = {0, 0, 0}, relpose[7], ts = 1;
  if (add_body(m, el, o, "body1", 1, p1) || add_body(m, el, o, "body2", 0, p2)) {
    return -1;
  }
  const int na = exact(m, el, "anchor", anchor, 3), nr = exact(m, el, "relpose", relpose, 7);
  const int nt = mjcf__numbers(m, el, "equality", NULL, "torquescale", &ts, 1, 1);
  if (na < 0 || nr < 0 || nt < 0) {
    return -1;
  }
  for (int i = 0; i < 3; i++) {
    anchor[i] -= p2[i];
  }
  cJSON_AddItemToObject(o, "anchor", imp__json_vector(anchor, 3));
  /* a relpose whose quaternion is 0 is MuJoCo's "not given": both parts derived at qpos0 */
  if (nr == 7 && (relpose[3] != 0 || relpose[4] != 0 || relpose[5] != 0 || relpose[6] != 0)) {
    for (int i = 0; i < 3; i++) {
      relpose[i] -= p1[i];
    }
    mjcf__normalize(relpose + 3, 4);
    cJSON_AddItemToObject(o, "relpose", imp__json_vector(relpose, 7));
  }
  cJSON_AddNumberToObject(o, "torquescale", ts);
  return 0;
}

/* joint: joint1, joint2, polycoef (in the joints' own units: MuJoCo converts no angle here) */
static int joint_of(mjcf *m, const xmlNode *el, cJSON *o) {
  double c[5] = {0, 1, 0, 0, 0};
  if (add_joint(m, el, o, "joint1", 1) || add_joint(m, el, o, "joint2", 0) ||
      exact(m, el, "polycoef", c, 5) < 0) {
    return -1;
  }
  cJSON_AddItemToObject(o, "polycoef", imp__json_vector(c, 5));
  return 0;
}

/* tendon: tendon1, tendon2, polycoef (on the lengths minus their lengths at qpos0) */
static int tendon_of(mjcf *m, const xmlNode *el, cJSON *o) {
  double c[5] = {0, 1, 0, 0, 0};
  if (add_tendon(m, el, o, "tendon1", 1) || add_tendon(m, el, o, "tendon2", 0) ||
      exact(m, el, "polycoef", c, 5) < 0) {
    return -1;
  }
  cJSON_AddItemToObject(o, "polycoef", imp__json_vector(c, 5));
  return 0;
}

static int convert_one(mjcf *m, const xmlNode *el, cJSON *list) {
  if (imp__is(el, "distance")) { /* as MuJoCo 2.2.2's parser */
    return imp__fail(m->c, el, "<equality><distance>: support for distance equality "
                     "constraints was removed in MuJoCo 2.2.2");
  }
  const int type = imp__is(el, "connect") ? 0
                   : imp__is(el, "weld")  ? 1
                   : imp__is(el, "joint") ? 2
                   : imp__is(el, "tendon") ? 3
                                           : -1;
  if (type < 0) {
    return imp__fail(m->c, el, "<equality><%s>: unknown equality constraint (connect, weld, "
                     "joint or tendon)", imp__name(el));
  }
  if (imp__check_attrs(m->c, el, mjcf__equality_read, "not an equality attribute") != 0) {
    return -1;
  }
  static const char *const types[] = {"connect", "weld", "joint", "tendon"};
  cJSON *o = cJSON_CreateObject();
  cJSON_AddItemToArray(list, o);
  cJSON_AddStringToObject(o, "type", types[type]);
  const char *name = imp__attr(el, "name");
  if (name) {
    cJSON_AddStringToObject(o, "name", name);
  }
  const int rc = type == 0 ? connect_of(m, el, o)
                 : type == 1 ? weld_of(m, el, o)
                 : type == 2 ? joint_of(m, el, o)
                             : tendon_of(m, el, o);
  if (rc != 0) {
    return -1;
  }
  const char *active = mjcf__attr(m, el, "equality", NULL, "active");
  if (active && strcmp(active, "true") != 0 && strcmp(active, "false") != 0) {
    return imp__fail(m->c, el, "<%s active=\"%s\">: expected true or false", imp__name(el), active);
  }
  if (active && strcmp(active, "false") == 0) {
    cJSON_AddFalseToObject(o, "active");
  }
  double ref[2], imp[5];
  int nref = mjcf__numbers(m, el, "equality", NULL, "solref", ref, 1, 2);
  int nimp = mjcf__numbers(m, el, "equality", NULL, "solimp", imp, 1, 5);
  if (nref < 0 || nimp < 0) {
    return -1;
  }
  if (nref > 0) {
    if (mjcf__soft_values(m, el, "solref", ref, nref, 2) < 0) {
      return -1;
    }
    cJSON_AddItemToObject(o, "solref", imp__json_vector(ref, 2));
  }
  if (nimp > 0) {
    if (mjcf__soft_values(m, el, "solimp", imp, nimp, 5) < 0) {
      return -1;
    }
    cJSON_AddItemToObject(o, "solimp", imp__json_vector(imp, 5));
  }
  return 0;
}

int mjcf__convert_equality(mjcf *m, const xmlNode *section, cJSON *root) {
  cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "equality");
  if (!list) {
    list = cJSON_AddArrayToObject(root, "equality");
  }
  for (const xmlNode *k = section->children; k; k = k->next) {
    if (k->type == XML_ELEMENT_NODE && convert_one(m, k, list) != 0) {
      return -1;
    }
  }
  return 0;
}
