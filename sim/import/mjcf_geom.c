/* sim/import/mjcf_geom.c: an MJCF <geom>: its mass properties (for a body without <inertial>)
 * and its native collision shape. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/import/mjcf_state.h"

const char *const mjcf__geom_read[] = {"name", "class", "type", "size", "fromto", "pos",
                                       "quat", "axisangle", "euler", "xyaxes", "zaxis",
                                       "mass", "density", "group", "friction", "solref",
                                       "solimp", "contype", "conaffinity", "condim", "mesh",
                                       "margin", "gap", "priority", NULL};

static int shape_of(mjcf *m, const xmlNode *g, const char *cls, imp_shape *shape, int *massless) {
  const char *type = mjcf__attr(m, g, "geom", cls, "type");
  static const char *const names[] = {"sphere", "capsule", "cylinder", "ellipsoid", "box"};
  *massless = 0;
  if (!type) {
    type = "sphere";
  }
  for (int i = 0; i < 5; i++) {
    if (strcmp(type, names[i]) == 0) {
      *shape = (imp_shape)i;
      return 0;
    }
  }
  if (strcmp(type, "plane") == 0) {
    *massless = 1;
    return 0;
  }
  if (strcmp(type, "mesh") == 0) {
    *massless = 2; /* mjcf_mesh.c */
    return 0;
  }
  return imp__fail(m->c, g, "<geom type=\"%s\">: its mass is not computed here (hfield, sdf): "
                            "give the body an <inertial>", type);
}

/* adds one geom's mass to the sum, in the body's MJCF frame */
int mjcf__geom_mass(mjcf *m, const xmlNode *g, const char *cls, imp_mass *sum) {
  imp_shape shape = IMP_SHAPE_SPHERE;
  int massless;
  if (shape_of(m, g, cls, &shape, &massless) != 0) {
    return -1;
  }
  if (massless == 1) {
    return 0;
  }
  double size[3] = {0, 0, 0}, pos[3] = {0, 0, 0}, q[4], ft[6], v[1];
  if (massless == 2) {
    if (mjcf__numbers(m, g, "geom", cls, "pos", pos, 3, 3) < 0 ||
        mjcf__orientation(m, g, "geom", cls, q) != 0) {
      return -1;
    }
    if (mjcf__numbers(m, g, "geom", cls, "fromto", ft, 6, 6) > 0) {
      return imp__fail(m->c, g, "<geom type=\"mesh\" fromto>: fromto cannot be used with a "
                                "mesh (MuJoCo's error too)");
    }
    return mjcf__mesh_mass(m, g, cls, pos, q, sum);
  }
  int nsize = mjcf__numbers(m, g, "geom", cls, "size", size, 1, 3);
  if (nsize < 0 || mjcf__numbers(m, g, "geom", cls, "pos", pos, 3, 3) < 0 ||
      mjcf__orientation(m, g, "geom", cls, q) != 0) {
    return -1;
  }
  if (mjcf__numbers(m, g, "geom", cls, "fromto", ft, 6, 6) == 6) {
    double d[3] = {ft[3] - ft[0], ft[4] - ft[1], ft[5] - ft[2]};
    double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (len < 1e-14) {
      return imp__fail(m->c, g, "<geom fromto>: the two points coincide");
    }
    for (int i = 0; i < 3; i++) {
      pos[i] = (ft[i] + ft[i + 3]) / 2;
      d[i] /= len;
    }
    if (shape == IMP_SHAPE_BOX || shape == IMP_SHAPE_ELLIPSOID) {
      size[2] = len / 2, size[1] = size[0];
    } else {
      size[1] = len / 2;
    }
    mjcf__z_to_quat(q, d);
  }
  double volume = imp__shape_volume(shape, size);
  if (!(volume > 0)) {
    return imp__fail(m->c, g, "<geom>: its size gives no volume");
  }
  double mass = 1000 * volume; /* density default 1000 kg/m³ (water) */
  if (mjcf__numbers(m, g, "geom", cls, "mass", v, 1, 1) == 1) {
    mass = v[0];
  } else if (mjcf__numbers(m, g, "geom", cls, "density", v, 1, 1) == 1) {
    mass = v[0] * volume;
  }
  if (m->c->failed || !(mass >= 0)) {
    return m->c->failed ? -1 : imp__fail(m->c, g, "<geom>: mass must not be negative");
  }
  double diag[3], R[9];
  imp__shape_inertia(diag, shape, size, mass);
  imp__quat_to_mat(R, q);
  imp__mass_add(sum, mass, pos, R, diag);
  return 0;
}

/* condim: 1 (frictionless) is written, 3 (MuJoCo's default) needs nothing; 4 and 6 (torsional
 * and rolling friction, not modelled) are read as 3 with a note; anything else is MuJoCo's
 * error too */
static int geom_condim(mjcf *m, const xmlNode *g, const char *cls, cJSON *o) {
  double condim = 3, margin = 0, gap = 0;
  if (mjcf__numbers(m, g, "geom", cls, "condim", &condim, 1, 1) < 0 ||
      mjcf__numbers(m, g, "geom", cls, "margin", &margin, 1, 1) < 0 ||
      mjcf__numbers(m, g, "geom", cls, "gap", &gap, 1, 1) < 0) {
    return -1;
  }
  if (margin != 0) { /* contacts within it; those farther than margin − gap make no rows */
    cJSON_AddNumberToObject(o, "margin", margin);
  }
  if (gap != 0) {
    cJSON_AddNumberToObject(o, "gap", gap);
  }
  if (condim == 1) {
    cJSON_AddNumberToObject(o, "condim", 1);
  } else if (condim == 4 || condim == 6) {
    return imp__report(m->c, g, "<geom condim=\"%g\"> read as 3: torsional and rolling friction "
                       "are not modelled", condim);
  } else if (condim != 3) {
    return imp__fail(m->c, g, "<geom condim=\"%g\">: expected 1, 3, 4 or 6", condim);
  }
  return 0;
}

/* A geom as a native collision shape (docs/robot-format.md, "Geoms"), placed in the native frame
 * of `body` through f. Plane, sphere, capsule, box, cylinder and (STL) mesh convert; a geom that
 * collides with nothing (contype and conaffinity 0, MuJoCo's visual geoms) and the other types
 * are reported. */
int mjcf__convert_geom(mjcf *m, const xmlNode *g, const char *cls, const char *body,
                       const mjcf_frame *f) {
  static const char *const types[] = {"plane", "sphere", "capsule", "box", "cylinder", "mesh"};
  const char *type = mjcf__attr(m, g, "geom", cls, "type");
  type = type ? type : "sphere";
  double ct = 1, ca = 1, size[3] = {0, 0, 0}, pos[3] = {0, 0, 0}, q[4], ft[6], v[5];
  if (mjcf__numbers(m, g, "geom", cls, "contype", &ct, 1, 1) < 0 ||
      mjcf__numbers(m, g, "geom", cls, "conaffinity", &ca, 1, 1) < 0) {
    return -1;
  }
  const int wraps = mjcf__is_wrap_geom(m, imp__attr(g, "name"));
  if (m->no_contact && wraps) { /* a tendon wraps around it: kept, touching nothing */
    ct = ca = 0;
  } else if (m->no_contact || (ct == 0 && ca == 0 && !wraps)) {
    return 0; /* collides with nothing: its mass (if any) was taken in body_mass */
  }
  int t = -1;
  for (int k = 0; k < 6; k++) {
    t = strcmp(type, types[k]) == 0 ? k : t;
  }
  if (t < 0) {
    return imp__report(m->c, g, "<geom type=\"%s\"> not converted to a collision shape (plane, "
                                "sphere, capsule, box, cylinder and mesh are)", type);
  }
  const char *mesh_name = t == 5 ? mjcf__attr(m, g, "geom", cls, "mesh") : NULL;
  const cJSON *mesh = mesh_name ? cJSON_GetObjectItemCaseSensitive(m->meshes, mesh_name) : NULL;
  if (t == 5 && !mesh) {
    return imp__report(m->c, g, "<geom type=\"mesh\" mesh=\"%s\"> not converted: no such STL "
                                "mesh among the assets read", mesh_name ? mesh_name : "");
  }
  if (t == 5 && cJSON_GetObjectItemCaseSensitive(mesh, "obj")) {
    return imp__report(m->c, g, "<geom type=\"mesh\" mesh=\"%s\"> not converted to a collision "
                                "shape: only STL meshes collide (its mass is taken)", mesh_name);
  }
  if (mjcf__numbers(m, g, "geom", cls, "size", size, 1, 3) < 0 ||
      mjcf__numbers(m, g, "geom", cls, "pos", pos, 3, 3) < 0 ||
      mjcf__orientation(m, g, "geom", cls, q) != 0) {
    return -1;
  }
  if ((t == 2 || t == 4) && mjcf__numbers(m, g, "geom", cls, "fromto", ft, 6, 6) == 6) {
    double d[3] = {ft[3] - ft[0], ft[4] - ft[1], ft[5] - ft[2]};
    const double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    for (int i = 0; i < 3; i++) {
      pos[i] = (ft[i] + ft[i + 3]) / 2;
      d[i] /= len > 0 ? len : 1;
    }
    size[1] = len / 2;
    mjcf__z_to_quat(q, d);
  } else if (t == 3 && mjcf__numbers(m, g, "geom", cls, "fromto", ft, 6, 6) == 6) {
    return imp__report(m->c, g, "<geom type=\"box\" fromto> not converted to a collision shape");
  }
  mjcf_frame at;
  mjcf__frame_child(&at, f, pos, q);
  cJSON *o = cJSON_CreateObject();
  const char *name = imp__attr(g, "name");
  char generated[32];
  if (!name) {
    snprintf(generated, sizeof generated, "geom%d", m->unnamed_geoms++);
    name = generated;
  }
  cJSON_AddStringToObject(o, "name", name);
  cJSON_AddStringToObject(o, "body", body ? body : "world");
  cJSON_AddStringToObject(o, "type", types[t]);
  if (t == 5) {
    cJSON_AddItemToObject(o, "file", cJSON_Duplicate(cJSON_GetObjectItem(mesh, "file"), 1));
    const cJSON *scale = cJSON_GetObjectItem(mesh, "scale");
    if (scale) {
      cJSON_AddItemToObject(o, "scale", cJSON_Duplicate(scale, 1));
    }
  } else if (t > 0) {
    cJSON_AddItemToObject(o, "size",
                          imp__json_vector(size, t == 1 ? 1 : t == 2 || t == 4 ? 2 : 3));
  }
  cJSON_AddItemToObject(o, "pos", imp__json_vector(at.t, 3));
  cJSON_AddItemToObject(o, "quat", imp__json_vector(at.q, 4));
  static const char *const soft[3] = {"friction", "solref", "solimp"};
  static const int counts[3] = {3, 2, 5};
  for (int k = 0; k < 3; k++) {
    int n = mjcf__numbers(m, g, "geom", cls, soft[k], v, 1, counts[k]);
    if (n < 0) {
      cJSON_Delete(o);
      return -1;
    }
    if (k == 0 && n > 0 && n < 3) { /* MuJoCo fills the rest of friction with its defaults */
      const double dflt[3] = {1, 0.005, 0.0001};
      for (int i = n; i < 3; i++) {
        v[i] = dflt[i];
      }
      n = 3;
    } else if (k > 0 && n > 0) {
      n = mjcf__soft_values(m, g, soft[k], v, n, counts[k]);
    }
    if (n < 0) {
      cJSON_Delete(o);
      return -1;
    }
    if (n == counts[k]) {
      cJSON_AddItemToObject(o, soft[k], imp__json_vector(v, n));
    }
  }
  if (geom_condim(m, g, cls, o) != 0) {
    cJSON_Delete(o);
    return -1;
  }
  double priority = 0;
  if (mjcf__numbers(m, g, "geom", cls, "priority", &priority, 1, 1) < 0 ||
      priority != floor(priority) || fabs(priority) > 1e6) {
    cJSON_Delete(o);
    return m->c->failed ? -1 : imp__fail(m->c, g, "<geom priority>: expected an integer");
  }
  if (priority != 0) {
    cJSON_AddNumberToObject(o, "priority", priority);
  }
  if (ct != 1 || ca != 1) { /* contact groups other than MuJoCo's default */
    cJSON_AddNumberToObject(o, "contype", ct);
    cJSON_AddNumberToObject(o, "conaffinity", ca);
  }
  cJSON_AddItemToArray(m->geoms, o);
  return 0;
}
