/* sim/import/urdf.c: URDF (the subset in docs/import.md) into the native robot JSON.
 *
 * A URDF joint's origin is its child link's frame in the parent link's frame, and its axis is in
 * that frame: exactly a native body's placement, with the joint at the body origin. A root link
 * without mass (the usual "world" or "base_footprint") is the world itself; a link without mass
 * on a fixed joint (a tool frame, a mounting plate) is merged into its parent, so the links below
 * it keep their places.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/import/urdf.h"
#include "sim/json_read.h"
#include "sim/import/xml_read.h"

/* a transform from a native body's frame: x = t + R·x_urdf */
typedef struct frame {
  double t[3], R[9];
} frame;

#define child imp__child

/* attribute numbers with a default text when absent */
static int numbers(urdf *u, const xmlNode *el, const char *attr, const char *dflt, double *out,
                   int n) {
  const char *v = el ? imp__attr(el, attr) : NULL;
  return imp__numbers(u->c, el, attr, v ? v : dflt, out, n, n) < 0 ? -1 : 0;
}

/* <origin xyz rpy>: R = Rz(yaw)·Ry(pitch)·Rx(roll), fixed axes */
static int origin_of(urdf *u, const xmlNode *el, frame *f) {
  static const char *const read[] = {"xyz", "rpy", NULL};
  const xmlNode *o = el ? child(el, "origin") : NULL;
  double rpy[3];
  if ((o && imp__check_attrs(u->c, o, read, "not URDF")) || numbers(u, o, "xyz", "0 0 0", f->t, 3) ||
      numbers(u, o, "rpy", "0 0 0", rpy, 3)) {
    return -1;
  }
  const double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]);
  const double cy = cos(rpy[2]), sy = sin(rpy[2]);
  const double R[9] = {cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,
                       sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,
                       -sp,     cp * sr,                cp * cr};
  memcpy(f->R, R, sizeof R);
  return 0;
}

/* a after b: x = a.t + a.R·(b.t + b.R·x) */
static void compose(frame *out, const frame *a, const frame *b) {
  frame r;
  imp__rotate(r.t, a->R, b->t);
  for (int i = 0; i < 3; i++) {
    r.t[i] += a->t[i];
    for (int j = 0; j < 3; j++) {
      r.R[3 * i + j] = a->R[3 * i] * b->R[j] + a->R[3 * i + 1] * b->R[3 + j] + a->R[3 * i + 2] * b->R[6 + j];
    }
  }
  *out = r;
}

static const char *attr_link(const xmlNode *joint, const char *which) {
  const xmlNode *el = child(joint, which);
  return el ? imp__attr(el, "link") : NULL;
}

/* A token mass, below what a native body takes (sim/json_read.h; CAD exporters give dummy
 * frame links 1e-9 kg): none at all on a fixed joint, said in a report (MuJoCo fuses such a
 * link into its parent), an error naming the link on a moving one. Clears *inertial when it
 * drops it; returns -1 on an error. */
static int drop_token_mass(urdf *u, const xmlNode *link, const char *name, int fixed,
                           cJSON **inertial) {
  const double mass = *inertial ? cJSON_GetObjectItem(*inertial, "mass")->valuedouble : 0;
  if (!*inertial || mass >= SIM_JSON_MASS_MIN) {
    return 0;
  }
  cJSON_Delete(*inertial);
  *inertial = NULL;
  if (!fixed) {
    return imp__fail(u->c, link, "<link name=\"%s\">: mass %g kg on a moving joint (at least "
                                 "%g kg)", name, mass, SIM_JSON_MASS_MIN);
  }
  return imp__report(u->c, link, "<link name=\"%s\">: mass %g kg on a fixed joint, below the "
                                 "%g kg a body needs: taken as a massless frame of its parent",
                     name, mass, SIM_JSON_MASS_MIN) != 0 ? -1 : 0;
}

/* the link's <inertial> as a native inertial object in the frame given; NULL: no mass */
static int inertial_of(urdf *u, const xmlNode *link, cJSON **out) {
  static const char *const inertia_keys[] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz", NULL};
  const xmlNode *in = child(link, "inertial");
  *out = NULL;
  if (!in) {
    return 0;
  }
  frame f;
  double mass, v[6];
  const xmlNode *me = child(in, "mass"), *ie = child(in, "inertia");
  if (!me || !ie) {
    return imp__fail(u->c, in, "<inertial>: needs <mass value> and <inertia ixx ... izz>");
  }
  if (origin_of(u, in, &f) || numbers(u, me, "value", "", &mass, 1) ||
      imp__check_attrs(u->c, ie, inertia_keys, "not URDF")) {
    return -1;
  }
  for (int i = 0; i < 6; i++) {
    if (!imp__attr(ie, inertia_keys[i])) {
      return imp__fail(u->c, ie, "<inertia>: %s is required", inertia_keys[i]);
    }
    if (numbers(u, ie, inertia_keys[i], "", &v[i], 1)) {
      return -1;
    }
  }
  if (mass == 0) {
    return 0;
  }
  const double I[9] = {v[0], v[1], v[2], v[1], v[3], v[4], v[2], v[4], v[5]};
  double Ib[9];
  imp__rotate_inertia(Ib, f.R, I);
  const double six[6] = {Ib[0], Ib[4], Ib[8], Ib[1], Ib[2], Ib[5]};
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "mass", mass);
  cJSON_AddItemToObject(o, "com", imp__json_vector(f.t, 3));
  cJSON_AddItemToObject(o, "inertia", imp__json_vector(six, 6));
  *out = o;
  return 0;
}

static int report_link_parts(urdf *u, const xmlNode *link) {
  for (const xmlNode *k = link->children; k; k = k->next) {
    int rc = 0;
    if (imp__is(k, "visual")) {
      rc = imp__report(u->c, k, "<visual> ignored: visual only");
    } else if (k->type == XML_ELEMENT_NODE && !imp__is(k, "inertial") &&
               !imp__is(k, "collision")) {
      rc = imp__report(u->c, k, "<link><%s> ignored: not modelled", imp__name(k));
    }
    if (rc != 0) {
      return -1;
    }
  }
  return 0;
}

/* a <mesh filename scale>'s file (STL only) into the geom: 1 when it is skipped (reported) */
static int mesh_geom(urdf *u, const xmlNode *k, const xmlNode *mesh, cJSON *o) {
  const char *given = imp__attr(mesh, "filename");
  double scale[3];
  char path[4096];
  if (!given) {
    return imp__fail(u->c, mesh, "<mesh>: no filename");
  }
  if (numbers(u, mesh, "scale", "1 1 1", scale, 3)) {
    return -1;
  }
  const size_t len = strlen(given);
  if (len < 4 || strcasecmp(given + len - 4, ".stl") != 0) {
    return imp__report(u->c, k, "<collision> not converted: only STL meshes are read (\"%s\")",
                       given) != 0 ? -1 : 1;
  }
  if (imp__mesh_file(path, sizeof path, u->c->file, NULL, given) != 0) {
    return imp__report(u->c, k, "<collision> not converted: mesh file \"%s\" not found",
                       given) != 0 ? -1 : 1;
  }
  cJSON_AddStringToObject(o, "file", path);
  if (scale[0] != 1 || scale[1] != 1 || scale[2] != 1) {
    cJSON_AddItemToObject(o, "scale", imp__json_vector(scale, 3));
  }
  return 0;
}

/* a collision's shape into o (type, size or file): 0, 1 when skipped (reported), -1 */
static int collision_shape(urdf *u, const xmlNode *k, cJSON *o) {
  const xmlNode *geometry = child(k, "geometry");
  static const char *const kinds[] = {"sphere", "box", "cylinder", "mesh"};
  const xmlNode *shape = NULL;
  int kind = 0;
  for (int i = 0; i < 4 && geometry && !shape; i++) {
    shape = child(geometry, kinds[i]);
    kind = i;
  }
  if (!shape) {
    return imp__report(u->c, k, "<collision> not converted: no sphere, box, cylinder or mesh") != 0
               ? -1
               : 1;
  }
  double size[3];
  cJSON_AddStringToObject(o, "type", kinds[kind]);
  switch (kind) {
  case 0:
    if (numbers(u, shape, "radius", "", size, 1)) {
      return -1;
    }
    cJSON_AddItemToObject(o, "size", imp__json_vector(size, 1));
    return 0;
  case 1: /* URDF box sizes are full lengths */
    if (numbers(u, shape, "size", "", size, 3)) {
      return -1;
    }
    for (int i = 0; i < 3; i++) {
      size[i] /= 2;
    }
    cJSON_AddItemToObject(o, "size", imp__json_vector(size, 3));
    return 0;
  case 2: /* radius and full length along z */
    if (numbers(u, shape, "radius", "", size, 1) || numbers(u, shape, "length", "", size + 1, 1)) {
      return -1;
    }
    size[1] /= 2;
    cJSON_AddItemToObject(o, "size", imp__json_vector(size, 2));
    return 0;
  default:
    return mesh_geom(u, k, shape, o);
  }
}

/* <collision> elements into native geoms on `body`, placed through f (the body's native frame to
 * the link's): sphere, box, cylinder and (STL) mesh convert; a mesh file that is not found, or
 * not STL, is reported and its collision skipped */
static int convert_collisions(urdf *u, const xmlNode *link, const char *body, const frame *f) {
  int index = 0;
  for (const xmlNode *k = link->children; k; k = k->next) {
    if (!imp__is(k, "collision")) {
      continue;
    }
    frame origin, at;
    if (origin_of(u, k, &origin)) {
      return -1;
    }
    compose(&at, f, &origin);
    double q[4];
    imp__mat_to_quat(q, at.R);
    char name[160];
    const char *given = imp__attr(k, "name");
    if (given) {
      snprintf(name, sizeof name, "%s", given);
    } else {
      snprintf(name, sizeof name, "%s_collision%d", imp__attr(link, "name"), index);
    }
    index++;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddStringToObject(o, "body", body);
    const int rc = collision_shape(u, k, o);
    if (rc != 0) {
      cJSON_Delete(o);
      if (rc < 0) {
        return -1;
      }
      continue;
    }
    cJSON_AddItemToObject(o, "pos", imp__json_vector(at.t, 3));
    cJSON_AddItemToObject(o, "quat", imp__json_vector(q, 4));
    cJSON_AddItemToArray(u->geoms, o);
  }
  return 0;
}

/* planar: slides along two in-plane axes e1, e2 and a hinge about the normal n, one body.
 * e1 is the axis of x, y, z least aligned with n (the first on ties) made normal to n, and
 * e2 = e1 × n, so a normal y gives slides along x and z and a hinge about y (the seed's
 * planar root); the joints are named NAME_t1, NAME_t2 and NAME_r. */
static cJSON *planar_joints(const char *name, const double n[3], double damping) {
  double e1[3] = {0, 0, 0}, e2[3];
  int best = 0;
  for (int i = 1; i < 3; i++) {
    best = fabs(n[i]) < fabs(n[best]) ? i : best;
  }
  e1[best] = 1;
  double d = n[best], len = 0;
  for (int i = 0; i < 3; i++) {
    e1[i] -= d * n[i];
    len += e1[i] * e1[i];
  }
  for (int i = 0; i < 3; i++) {
    e1[i] /= sqrt(len);
  }
  e2[0] = e1[1] * n[2] - e1[2] * n[1];
  e2[1] = e1[2] * n[0] - e1[0] * n[2];
  e2[2] = e1[0] * n[1] - e1[1] * n[0];
  static const char *const suffix[3] = {"_t1", "_t2", "_r"};
  const double *axes[3] = {e1, e2, n};
  cJSON *list = cJSON_CreateArray();
  for (int k = 0; k < 3; k++) {
    char jn[SIM_NAME_MAX + 8];
    snprintf(jn, sizeof jn, "%s%s", name, suffix[k]);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", jn);
    cJSON_AddStringToObject(o, "type", k < 2 ? "slide" : "hinge");
    cJSON_AddItemToObject(o, "axis", imp__json_vector(axes[k], 3));
    if (damping != 0) {
      cJSON_AddNumberToObject(o, "damping", damping);
    }
    cJSON_AddItemToArray(list, o);
  }
  return list;
}

/* floating: a native free joint (its child must hang from the world); limits and dynamics
 * other than damping are not modelled on it */
static int floating_joint(urdf *u, const xmlNode *j, const char *name, cJSON **out) {
  const xmlNode *dyn = child(j, "dynamics");
  double damping = 0;
  if (dyn && numbers(u, dyn, "damping", "0", &damping, 1)) {
    return -1;
  }
  for (const xmlNode *k = j->children; k; k = k->next) {
    if (k->type == XML_ELEMENT_NODE && !imp__is(k, "origin") && !imp__is(k, "parent") &&
        !imp__is(k, "child") && !imp__is(k, "dynamics") &&
        imp__report(u->c, k, "<joint type=\"floating\"><%s> ignored: not modelled",
                    imp__name(k)) != 0) {
      return -1;
    }
  }
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", name);
  cJSON_AddStringToObject(o, "type", "free");
  if (damping != 0) {
    cJSON_AddNumberToObject(o, "damping", damping);
  }
  *out = o;
  return 0;
}

/* What becomes of <limit effort velocity>: effort is the force_limit of the actuator a
 * transmission makes (urdf_transmission.c); a joint speed limit is not modelled. */
static int limit_notes(urdf *u, const xmlNode *j, const xmlNode *lim, const char *name) {
  const int driven = u->driven[sim_name_index_find(&u->joint_ix, name)];
  const int effort = imp__attr(lim, "effort") != NULL, velocity = imp__attr(lim, "velocity") != NULL;
  (void)j;
  if (driven && velocity) {
    return imp__report(u->c, lim, "<limit velocity> ignored: joint speed limits are not modelled "
                                  "(effort is the force_limit of its actuator)");
  }
  if (!driven && (effort || velocity)) {
    return imp__report(u->c, lim, "<limit effort/velocity> ignored: no <transmission> makes an "
                                  "actuator for this joint, and joint speed limits are not "
                                  "modelled");
  }
  return 0;
}

/* <joint> into a native joint object (NULL for fixed), or a list of them (planar) */
static int joint_of(urdf *u, const xmlNode *j, cJSON **out, int *fixed) {
  static const char *const read[] = {"name", "type", NULL};
  const char *type = imp__attr(j, "type"), *name = imp__attr(j, "name");
  *out = NULL;
  *fixed = 0;
  if (imp__check_attrs(u->c, j, read, "not URDF") != 0) {
    return -1;
  }
  if (!type || !name) {
    return imp__fail(u->c, j, "<joint>: name and type are required");
  }
  if (strcmp(type, "fixed") == 0) {
    *fixed = 1;
    return 0;
  }
  if (strcmp(type, "floating") == 0) {
    return floating_joint(u, j, name, out);
  }
  int revolute = strcmp(type, "revolute") == 0, continuous = strcmp(type, "continuous") == 0;
  int prismatic = strcmp(type, "prismatic") == 0, planar = strcmp(type, "planar") == 0;
  if (!revolute && !continuous && !prismatic && !planar) {
    return imp__fail(u->c, j, "<joint type=\"%s\">: unknown joint type", type);
  }
  double axis[3], range[2] = {0, 0}, damping = 0, friction = 0;
  const xmlNode *ax = child(j, "axis"), *lim = child(j, "limit"), *dyn = child(j, "dynamics");
  if (numbers(u, ax, "xyz", "1 0 0", axis, 3)) {
    return -1;
  }
  double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
  if (!(n > 0)) {
    return imp__fail(u->c, ax, "<axis xyz>: must not be zero");
  }
  for (int i = 0; i < 3; i++) {
    axis[i] /= n;
  }
  if (planar) { /* limits would bound a plane position: not modelled */
    if ((lim || (dyn && imp__attr(dyn, "friction"))) &&
        imp__report(u->c, lim ? lim : dyn, "<joint type=\"planar\"> limits and friction "
                                            "ignored: not modelled") != 0) {
      return -1;
    }
    if (dyn && numbers(u, dyn, "damping", "0", &damping, 1)) {
      return -1;
    }
    *out = planar_joints(name, axis, damping);
    return 0;
  }
  if (!continuous && lim) {
    if (numbers(u, lim, "lower", "0", &range[0], 1) || numbers(u, lim, "upper", "0", &range[1], 1)) {
      return -1;
    }
    if (range[0] > range[1]) { /* MJCF and the native format refuse it too */
      return imp__fail(u->c, lim, "<limit lower=\"%g\" upper=\"%g\">: lower is above upper",
                       range[0], range[1]);
    }
    if (range[0] == range[1] &&
        imp__report(u->c, lim, "<limit lower=upper> ignored: no range, the joint has no stops") != 0) {
      return -1;
    }
  }
  if (lim && limit_notes(u, j, lim, name) != 0) {
    return -1;
  }
  if (dyn && (numbers(u, dyn, "damping", "0", &damping, 1) ||
              numbers(u, dyn, "friction", "0", &friction, 1))) {
    return -1;
  }
  for (const xmlNode *k = j->children; k; k = k->next) {
    if (k->type == XML_ELEMENT_NODE && !imp__is(k, "origin") && !imp__is(k, "axis") &&
        !imp__is(k, "limit") && !imp__is(k, "dynamics") && !imp__is(k, "parent") &&
        !imp__is(k, "child") &&
        imp__report(u->c, k, "<joint><%s> ignored: not modelled", imp__name(k)) != 0) {
      return -1;
    }
  }
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", name);
  cJSON_AddStringToObject(o, "type", prismatic ? "slide" : "hinge");
  cJSON_AddItemToObject(o, "axis", imp__json_vector(axis, 3));
  if (!continuous && lim && range[0] < range[1]) { /* URDF limits are hard stops */
    cJSON_AddItemToObject(o, "range", imp__json_vector(range, 2));
    cJSON_AddBoolToObject(o, "limited", 1);
  }
  if (friction != 0) {
    cJSON_AddNumberToObject(o, "frictionloss", friction);
  }
  if (damping != 0) {
    cJSON_AddNumberToObject(o, "damping", damping);
  }
  *out = o;
  return 0;
}

/* A link to convert: the native body it hangs from, its frame there, the joint above it. */
typedef struct pending {
  int link, joint;    /* joint -1 for the root */
  const char *parent; /* the native parent body's name ("world" for the root) */
  frame f;
} pending;

/* Link p.link into a native body (or merged into p.parent when massless on a fixed joint); its
 * child joints are pushed on the stack, the first on top, so bodies come in the file's depth-first
 * order. 0, or -1 on an error. */
static int convert_link(urdf *u, const pending *p, pending *stack, int *top) {
  const xmlNode *link = u->links[p->link], *joint = p->joint >= 0 ? u->joints[p->joint] : NULL;
  const char *name = imp__attr(link, "name");
  cJSON *inertial = NULL, *jo = NULL;
  int fixed = 1;
  if (report_link_parts(u, link) || inertial_of(u, link, &inertial) ||
      (joint && joint_of(u, joint, &jo, &fixed))) {
    cJSON_Delete(inertial);
    return -1;
  }
  if (drop_token_mass(u, link, name, fixed, &inertial) != 0) {
    cJSON_Delete(jo);
    return -1;
  }
  const char *body = name; /* the native body the link's children hang from */
  frame here = {{0, 0, 0}, {1, 0, 0, 0, 1, 0, 0, 0, 1}};
  if (!inertial) {
    if (!fixed) {
      cJSON_Delete(jo);
      return imp__fail(u->c, link, "<link name=\"%s\">: a link on a moving joint needs an "
                                   "<inertial> with mass", name);
    }
    /* a frame only: merged into the parent, with its collision shapes */
    body = p->parent, here = p->f;
  } else {
    if (jo && cJSON_IsObject(jo) && strcmp(cJSON_GetObjectItem(jo, "type")->valuestring, "free") == 0 &&
        strcmp(p->parent, "world") != 0) {
      cJSON_Delete(jo);
      cJSON_Delete(inertial);
      return imp__fail(u->c, joint, "<joint type=\"floating\">: its parent link must be the "
                                    "world (a root link without inertia)");
    }
    double q[4];
    imp__mat_to_quat(q, p->f.R);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddStringToObject(o, "parent", p->parent);
    cJSON_AddItemToObject(o, "pos", imp__json_vector(p->f.t, 3));
    cJSON_AddItemToObject(o, "quat", imp__json_vector(q, 4));
    if (jo) {
      cJSON_AddItemToObject(o, cJSON_IsArray(jo) ? "joints" : "joint", jo);
    }
    cJSON_AddItemToObject(o, "inertial", inertial);
    cJSON_AddItemToArray(u->bodies, o);
  }
  if (convert_collisions(u, link, body, &here)) {
    return -1;
  }
  /* the child joints in reverse, so that the first is converted next */
  int n = 0;
  for (int j = u->first_below[p->link]; j >= 0; j = u->next_below[j]) {
    n++;
  }
  *top += n;
  int k = *top - 1;
  for (int j = u->first_below[p->link]; j >= 0; j = u->next_below[j], k--) {
    frame origin;
    if (origin_of(u, u->joints[j], &origin)) {
      return -1;
    }
    pending *c = &stack[k];
    c->link = u->child_link[j], c->joint = j, c->parent = body;
    compose(&c->f, &here, &origin);
  }
  return 0;
}

/* the tree from the root link, depth first without recursion (a chain of 10 000 links) */
static int convert_tree(urdf *u, int root) {
  pending *stack = malloc((size_t)(u->njoints + 1) * sizeof *stack);
  if (!stack) {
    return imp__fail(u->c, NULL, "out of memory");
  }
  int top = 1, visited = 0, rc = 0;
  stack[0] = (pending){root, -1, "world", {{0, 0, 0}, {1, 0, 0, 0, 1, 0, 0, 0, 1}}};
  while (top > 0 && rc == 0) {
    const pending p = stack[--top];
    visited++;
    rc = convert_link(u, &p, stack, &top);
  }
  free(stack);
  if (rc == 0 && visited < u->nlinks) { /* links in a loop of joints, apart from the root */
    for (int i = 0; i < u->nlinks; i++) {
      if (u->parent_joint[i] >= 0) {
        int steps = 0, l = i; /* climb: a loop never reaches the root */
        while (l >= 0 && l != root && steps++ <= u->nlinks) {
          l = u->parent_joint[l] >= 0 ? u->parent_link[u->parent_joint[l]] : -1;
        }
        if (l != root) {
          return imp__fail(u->c, u->links[i], "<link name=\"%s\">: not reached from the root "
                                              "link \"%s\": the joints form a cycle",
                           imp__attr(u->links[i], "name"), imp__attr(u->links[root], "name"));
        }
      }
    }
  }
  return rc;
}

/* how many <link>, <joint> and <transmission> elements top holds; -1 past the limits (the
 * element one too many named), before anything is allocated for them */
static int count_elements(urdf *u, const xmlNode *top, int n[3]) {
  static const char *const kinds[3] = {"link", "joint", "transmission"};
  n[0] = n[1] = n[2] = 0;
  for (const xmlNode *k = top->children; k; k = k->next) {
    for (int i = 0; i < 3; i++) {
      if (imp__is(k, kinds[i]) && ++n[i] > URDF_LINKS_MAX) {
        return imp__fail(u->c, k, "more than %d <%s> elements (docs/robot-format.md, \"Limits\")",
                         URDF_LINKS_MAX, kinds[i]);
      }
    }
  }
  return 0;
}

static int allocate(urdf *u, const int n[3]) {
  const size_t L = (size_t)n[0] + 1, J = (size_t)n[1] + 1, T = (size_t)n[2] + 1;
  u->links = calloc(L, sizeof *u->links);
  u->joints = calloc(J, sizeof *u->joints);
  u->transmissions = calloc(T, sizeof *u->transmissions);
  u->parent_link = calloc(J, sizeof(int));
  u->child_link = calloc(J, sizeof(int));
  u->next_below = calloc(J, sizeof(int));
  u->first_below = calloc(L, sizeof(int));
  u->parent_joint = calloc(L, sizeof(int));
  u->driven = calloc(J, 1);
  if (!u->links || !u->joints || !u->transmissions || !u->parent_link || !u->child_link ||
      !u->next_below || !u->first_below || !u->parent_joint || !u->driven ||
      sim_name_index_init(&u->link_ix, L) || sim_name_index_init(&u->joint_ix, J)) {
    return imp__fail(u->c, NULL, "out of memory");
  }
  return 0;
}

static void release(urdf *u) {
  free(u->links), free(u->joints), free(u->transmissions);
  free(u->parent_link), free(u->child_link), free(u->next_below);
  free(u->first_below), free(u->parent_joint), free(u->driven);
  sim_name_index_free(&u->link_ix);
  sim_name_index_free(&u->joint_ix);
}

/* a link or joint into its list and its name index: a second of one name is an error */
static int add_named(urdf *u, const xmlNode *k, int is_link) {
  const char *name = imp__attr(k, "name");
  if (!name) {
    return imp__fail(u->c, k, "<%s>: name is required", imp__name(k));
  }
  const xmlNode **list = is_link ? u->links : u->joints;
  int *n = is_link ? &u->nlinks : &u->njoints;
  const int first = sim_name_index_add(is_link ? &u->link_ix : &u->joint_ix, name, *n);
  if (first >= 0) {
    return imp__fail(u->c, k, "<%s name=\"%s\">: a second %s of this name (the first is at "
                              "line %ld)", imp__name(k), name, imp__name(k),
                     (long)xmlGetLineNo(list[first]));
  }
  list[(*n)++] = k;
  return 0;
}

static int collect(urdf *u, const xmlNode *top) {
  for (const xmlNode *k = top->children; k; k = k->next) {
    int rc = 0;
    if (imp__is(k, "link") || imp__is(k, "joint")) {
      rc = add_named(u, k, imp__is(k, "link"));
    } else if (imp__is(k, "transmission")) {
      u->transmissions[u->ntransmissions++] = k;
    } else if (imp__is(k, "material")) {
      rc = imp__report(u->c, k, "<material> ignored: visual only");
    } else if (k->type == XML_ELEMENT_NODE) {
      rc = imp__report(u->c, k, "<%s> ignored: not modelled", imp__name(k));
    }
    if (rc != 0) {
      return -1;
    }
  }
  return 0;
}

/* each joint's two links found by name (a joint naming a link that does not exist is an error,
 * not a joint and a link left out), each link the child of one joint at most, and each link's
 * child joints in file order */
static int connect(urdf *u) {
  for (int i = 0; i < u->nlinks; i++) {
    u->first_below[i] = -1, u->parent_joint[i] = -1;
  }
  int *tail = calloc((size_t)u->nlinks + 1, sizeof *tail);
  if (!tail) {
    return imp__fail(u->c, NULL, "out of memory");
  }
  for (int j = 0; j < u->njoints; j++) {
    const xmlNode *jn = u->joints[j];
    const char *name = imp__attr(jn, "name"), *pl = attr_link(jn, "parent"),
               *cl = attr_link(jn, "child");
    int rc = 0;
    if (!pl || !cl) {
      rc = imp__fail(u->c, jn, "<joint name=\"%s\">: needs <parent link> and <child link>", name);
    } else if ((u->parent_link[j] = sim_name_index_find(&u->link_ix, pl)) < 0) {
      rc = imp__fail(u->c, jn, "<joint name=\"%s\">: parent link \"%s\" not found", name, pl);
    } else if ((u->child_link[j] = sim_name_index_find(&u->link_ix, cl)) < 0) {
      rc = imp__fail(u->c, jn, "<joint name=\"%s\">: child link \"%s\" not found", name, cl);
    } else if (u->parent_joint[u->child_link[j]] >= 0) {
      const xmlNode *first = u->joints[u->parent_joint[u->child_link[j]]];
      rc = imp__fail(u->c, jn, "<joint name=\"%s\">: link \"%s\" is already the child of joint "
                               "\"%s\" (line %ld): a URDF robot is one tree", name, cl,
                     imp__attr(first, "name"), (long)xmlGetLineNo(first));
    }
    if (rc != 0) {
      free(tail);
      return -1;
    }
    const int p = u->parent_link[j];
    u->parent_joint[u->child_link[j]] = j;
    u->next_below[j] = -1;
    if (u->first_below[p] < 0) {
      u->first_below[p] = j;
    } else {
      u->next_below[tail[p]] = j;
    }
    tail[p] = j;
  }
  free(tail);
  return 0;
}

/* the link that is no joint's child */
static int root_link(urdf *u) {
  int root = -1;
  for (int i = 0; i < u->nlinks; i++) {
    if (u->parent_joint[i] >= 0) {
      continue;
    }
    if (root >= 0) {
      imp__fail(u->c, u->links[i], "<link name=\"%s\">: a second root link (\"%s\" is one): "
                                   "a URDF robot is one tree",
                imp__attr(u->links[i], "name"), imp__attr(u->links[root], "name"));
      return -1;
    }
    root = i;
  }
  if (root < 0) {
    imp__fail(u->c, NULL, "no root link (every link is some joint's child)");
  }
  return root;
}

cJSON *imp__urdf(imp_ctx *c, const xmlNode *top) {
  urdf u;
  memset(&u, 0, sizeof u);
  u.c = c;
  cJSON *root = cJSON_CreateObject();
  const char *model = imp__attr(top, "name");
  cJSON_AddStringToObject(root, "name", model ? model : "robot");
  char comment[600];
  snprintf(comment, sizeof comment, "converted from URDF %s by achilles", c->file);
  cJSON_AddStringToObject(root, "comment", comment);
  imp__mujoco_options(root); /* what MuJoCo gives a URDF: it has no options of its own */
  u.bodies = cJSON_AddArrayToObject(root, "bodies");
  u.geoms = cJSON_AddArrayToObject(root, "geoms");
  u.actuators = cJSON_CreateArray();
  int n[3], base = -1;
  const int failed = count_elements(&u, top, n) || allocate(&u, n) || collect(&u, top) ||
                     connect(&u) || (base = root_link(&u)) < 0 || urdf__transmissions(&u) ||
                     convert_tree(&u, base);
  release(&u);
  if (failed) {
    cJSON_Delete(u.actuators);
    cJSON_Delete(root);
    return NULL;
  }
  if (cJSON_GetArraySize(u.actuators) > 0) {
    cJSON_AddItemToObject(root, "actuators", u.actuators);
  } else {
    cJSON_Delete(u.actuators);
  }
  if (cJSON_GetArraySize(u.bodies) == 0) {
    imp__fail(c, top, "no link with mass");
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}
