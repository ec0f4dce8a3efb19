/* sim/import/mjcf.c: MuJoCo's MJCF (the subset in docs/import.md) into the native robot JSON.
 *
 * Frames. An MJCF joint may sit anywhere in its body (attribute pos); a native joint sits at the
 * body frame origin. The converter therefore moves each body's frame to its joint, a pure
 * translation p in the body's axes, and expresses everything inside the body (inertial, sites,
 * child bodies) in the moved frame: x_native = x_mjcf − p. A body without joint and without mass
 * (a frame for sites or children) is merged into its parent, its children and sites carried over
 * with the composed transform.
 *
 * Attribute values come from the element, else from its class's defaults, walking up the
 * nested <default> classes; the class is the element's `class`, else the nearest enclosing
 * body's `childclass`, else the top-level default ("main").
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sim/import/mjcf.h"
#include "sim/import/mjcf_state.h"

/* a converted body's name, or "world" */
static int has_body(const mjcf *m, const char *name) {
  if (strcmp(name, "world") == 0) {
    return 1;
  }
  for (const cJSON *b = m->bodies->child; b; b = b->next) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(b, "name");
    if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) {
      return 1;
    }
  }
  return 0;
}

/* <contact>: each <exclude body1 body2> into the native "exclude" list when both bodies are
 * native ones (a body merged into its parent is reported); <pair> is reported */
static int convert_contact(mjcf *m, const xmlNode *contact, cJSON *root) {
  static const char *const attrs[] = {"name", "body1", "body2", NULL};
  for (const xmlNode *k = contact->children; k; k = k->next) {
    if (k->type != XML_ELEMENT_NODE) {
      continue;
    }
    if (!imp__is(k, "exclude")) {
      if (imp__report(m->c, k, "<contact><%s> ignored: not modelled", imp__name(k)) != 0) {
        return -1;
      }
      continue;
    }
    const char *b1 = imp__attr(k, "body1"), *b2 = imp__attr(k, "body2");
    if (!b1 || !b2) {
      return imp__fail(m->c, k, "<exclude>: body1 and body2 are required");
    }
    if (imp__check_attrs(m->c, k, attrs, "not modelled") != 0) {
      return -1;
    }
    if (!has_body(m, b1) || !has_body(m, b2)) {
      if (imp__report(m->c, k, "<exclude body1=\"%s\" body2=\"%s\"> not converted: \"%s\" has "
                               "no joint and no mass and was merged into its parent", b1, b2,
                      has_body(m, b1) ? b2 : b1) != 0) {
        return -1;
      }
      continue;
    }
    cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "exclude");
    list = list ? list : cJSON_AddArrayToObject(root, "exclude");
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "body1", b1);
    cJSON_AddStringToObject(o, "body2", b2);
    cJSON_AddItemToArray(list, o);
  }
  return 0;
}

static int read_assets(mjcf *m, const xmlNode *asset) {
  for (const xmlNode *k = asset->children; k; k = k->next) {
    int rc = 0;
    if (k->type != XML_ELEMENT_NODE) {
      continue;
    } else if (imp__is(k, "mesh")) {
      rc = mjcf__read_mesh(m, k);
    } else if (imp__is(k, "texture") || imp__is(k, "material") || imp__is(k, "skin")) {
      rc = imp__report(m->c, k, "<asset><%s> ignored: visual only", imp__name(k));
    } else {
      rc = imp__report(m->c, k, "<asset><%s> ignored: not modelled", imp__name(k));
    }
    if (rc != 0) {
      return -1;
    }
  }
  return 0;
}

/* The sections a file (with what it includes) may hold several of: MuJoCo reads each in turn,
 * so a scene file included beside the robot's own <worldbody> adds its floor and lights. */
#define MJCF_SECTIONS 32
typedef struct sections {
  const xmlNode *world[MJCF_SECTIONS], *actuator[MJCF_SECTIONS], *contact[MJCF_SECTIONS],
      *asset[MJCF_SECTIONS], *tendon[MJCF_SECTIONS], *equality[MJCF_SECTIONS];
  int nworld, nactuator, ncontact, nasset, ntendon, nequality;
} sections;

static int keep(mjcf *m, const xmlNode *k, const xmlNode **list, int *n) {
  if (*n == MJCF_SECTIONS) {
    return imp__fail(m->c, k, "<%s>: at most %d such sections", imp__name(k), MJCF_SECTIONS);
  }
  list[(*n)++] = k;
  return 0;
}

static int read_sections(mjcf *m, const xmlNode *top, cJSON *root, sections *s) {
  for (const xmlNode *k = top->children; k; k = k->next) {
    int rc = 0;
    if (k->type != XML_ELEMENT_NODE) {
      continue;
    } else if (imp__is(k, "compiler")) {
      rc = mjcf__read_compiler(m, k);
    } else if (imp__is(k, "option")) {
      rc = mjcf__read_option(m, k, root);
    } else if (imp__is(k, "size")) {
      rc = mjcf__read_size(m, k, root);
    } else if (imp__is(k, "default")) {
      if (m->ndefaults == MJCF_TOP_DEFAULTS) {
        rc = imp__fail(m->c, k, "<default>: at most %d top-level defaults", MJCF_TOP_DEFAULTS);
      } else {
        m->defaults[m->ndefaults++] = (xmlNode *)k;
      }
    } else if (imp__is(k, "worldbody")) {
      rc = keep(m, k, s->world, &s->nworld);
    } else if (imp__is(k, "actuator")) {
      rc = keep(m, k, s->actuator, &s->nactuator);
    } else if (imp__is(k, "contact")) {
      rc = keep(m, k, s->contact, &s->ncontact);
    } else if (imp__is(k, "tendon")) {
      rc = keep(m, k, s->tendon, &s->ntendon);
    } else if (imp__is(k, "equality")) {
      rc = keep(m, k, s->equality, &s->nequality); /* after the bodies it names */
    } else if (imp__is(k, "asset")) {
      rc = keep(m, k, s->asset, &s->nasset); /* read once compiler meshdir is known */
    } else if (mjcf__unbuilt(k)) {
      rc = mjcf__refuse_unbuilt(m, k);
    } else if (imp__is(k, "visual") || imp__is(k, "statistic")) {
      rc = imp__report(m->c, k, "<%s> ignored: visual only", imp__name(k));
    } else {
      rc = imp__report(m->c, k, "<%s> ignored: not modelled", imp__name(k));
    }
    if (rc != 0) {
      return -1;
    }
  }
  return 0;
}

static int read_top(mjcf *m, const xmlNode *top, cJSON *root) {
  static sections s; /* the importer is not re-entrant (import.c) */
  memset(&s, 0, sizeof s);
  if (read_sections(m, top, root, &s) != 0) {
    return -1;
  }
  if (s.nworld == 0) {
    return imp__fail(m->c, top, "<mujoco>: no <worldbody>");
  }
  for (int a = 0; a < s.nasset; a++) {
    if (read_assets(m, s.asset[a]) != 0) {
      return -1;
    }
  }
  for (int i = 0; i < m->ndefaults; i++) {
    if (mjcf__check_defaults(m, m->defaults[i]) != 0) {
      return -1;
    }
  }
  for (int t = 0; t < s.ntendon; t++) {
    mjcf__collect_wrap_geoms(m, s.tendon[t]);
  }
  for (int w = 0; w < s.nworld; w++) {
    if (mjcf__convert_children(m, s.world[w], NULL, &mjcf__identity_frame, NULL) != 0) {
      return -1;
    }
  }
  int ntendon = 0;
  for (int t = 0; t < s.ntendon; t++) {
    if (mjcf__convert_tendons(m, s.tendon[t], &ntendon) != 0) {
      return -1;
    }
  }
  int index = 0;
  for (int a = 0; a < s.nactuator; a++) {
    for (const xmlNode *k = s.actuator[a]->children; k; k = k->next) {
      if (k->type != XML_ELEMENT_NODE) {
        continue;
      }
      /* muscles (mjcf_muscle.c) and the rest (mjcf_actuator.c) */
      const int muscle = imp__is(k, "muscle") || imp__is(k, "general");
      if ((muscle ? mjcf__convert_muscle(m, k, index) : mjcf__convert_actuator(m, k, index)) != 0) {
        return -1;
      }
      index++;
    }
  }
  for (int i = 0; i < s.ncontact; i++) {
    if (convert_contact(m, s.contact[i], root) != 0) {
      return -1;
    }
  }
  for (int i = 0; i < s.nequality; i++) {
    if (mjcf__convert_equality(m, s.equality[i], root) != 0) {
      return -1;
    }
  }
  return 0;
}

cJSON *imp__mjcf(imp_ctx *c, const xmlNode *top) {
  mjcf m;
  memset(&m, 0, sizeof m);
  m.c = c;
  m.degree = 1;
  m.geom_inertia = 2;
  m.autolimits = 1;
  memcpy(m.eulerseq, "xyz", 4);
  cJSON *root = cJSON_CreateObject();
  const char *model = imp__attr(top, "model");
  cJSON_AddStringToObject(root, "name", model ? model : "robot");
  char comment[600];
  snprintf(comment, sizeof comment, "converted from MJCF %s by achilles", c->file);
  cJSON_AddStringToObject(root, "comment", comment);
  imp__mujoco_options(root); /* <option> writes over them */
  m.bodies = cJSON_AddArrayToObject(root, "bodies");
  m.sites = cJSON_AddArrayToObject(root, "sites");
  m.actuators = cJSON_AddArrayToObject(root, "actuators");
  m.geoms = cJSON_AddArrayToObject(root, "geoms");
  m.tendons = cJSON_AddArrayToObject(root, "tendons");
  m.meshes = cJSON_CreateObject();
  m.wrap_geoms = cJSON_CreateObject();
  m.frames = cJSON_CreateObject();
  m.site_axes = cJSON_CreateObject();
  const int rc = read_top(&m, top, root);
  cJSON_Delete(m.meshes);
  cJSON_Delete(m.wrap_geoms);
  cJSON_Delete(m.frames);
  cJSON_Delete(m.site_axes);
  if (rc == 0 && cJSON_GetArraySize(m.tendons) == 0) {
    cJSON_DeleteItemFromObject(root, "tendons"); /* a file without tendons: no empty section */
  }
  if (rc != 0) {
    cJSON_Delete(root);
    return NULL;
  }
  if (cJSON_GetArraySize(m.bodies) == 0) {
    imp__fail(c, top, "no moving body with mass in <worldbody>");
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}
