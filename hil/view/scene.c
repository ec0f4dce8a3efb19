/* hil/view/scene.c: the robot's geometry as Foxglove's 3D panel draws it: the well-known
 * foxglove.SceneUpdate (github.com/foxglove/schemas), as JSON, on two channels (docs/view.md
 * section 4): /robot, one entity per geom in the frame of its body (the /tf child frames), and
 * /contacts, the contact points and their normal forces. Meshes travel as their convex hull's
 * triangles (the shape the simulator collides with), found here once at attach. */
#include "hil/view/view_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hil/error.h"
#include "sim/mesh.h"

#define PLANE_HALF 1.0       /* m: an infinite plane is drawn as a 2 m square, as on the page */
#define PLANE_THICK 0.001    /* m: its slab, top face on the plane */
#define CONTACT_RADIUS 0.01  /* m */

/* --- the schema ----------------------------------------------------------------------------------- */

/* The fields of foxglove.SceneUpdate that the view sends, with their names and types (a subset:
 * the 3D panel fills what is missing with its defaults). Written so that Foxglove's and
 * Lichtblick's parseJsonSchema accept it: one type per property, `properties` on every object,
 * `items` on every array. */
#define S_NUM "{\"type\":\"number\"}"
#define S_UINT "{\"type\":\"integer\",\"minimum\":0}"
#define S_STR "{\"type\":\"string\"}"
#define S_BOOL "{\"type\":\"boolean\"}"
#define S_OBJ(props) "{\"type\":\"object\",\"properties\":{" props "}}"
#define S_ARR(item) "{\"type\":\"array\",\"items\":" item "}"
#define S_TIME S_OBJ("\"sec\":" S_UINT ",\"nsec\":" S_UINT)
#define S_XYZ S_OBJ("\"x\":" S_NUM ",\"y\":" S_NUM ",\"z\":" S_NUM)
#define S_POSE                                                                                  \
  S_OBJ("\"position\":" S_XYZ ",\"orientation\":" S_OBJ(                                          \
      "\"x\":" S_NUM ",\"y\":" S_NUM ",\"z\":" S_NUM ",\"w\":" S_NUM))
#define S_COLOR S_OBJ("\"r\":" S_NUM ",\"g\":" S_NUM ",\"b\":" S_NUM ",\"a\":" S_NUM)
#define S_SIZED S_OBJ("\"pose\":" S_POSE ",\"size\":" S_XYZ ",\"color\":" S_COLOR)

const char view__scene_schema[] = S_OBJ(
    "\"deletions\":" S_ARR(S_OBJ("\"timestamp\":" S_TIME ",\"type\":" S_UINT ",\"id\":" S_STR))
    ",\"entities\":" S_ARR(S_OBJ(
        "\"timestamp\":" S_TIME ",\"frame_id\":" S_STR ",\"id\":" S_STR ",\"lifetime\":" S_TIME
        ",\"frame_locked\":" S_BOOL
        ",\"metadata\":" S_ARR(S_OBJ("\"key\":" S_STR ",\"value\":" S_STR))
        ",\"arrows\":" S_ARR(S_OBJ("\"pose\":" S_POSE ",\"shaft_length\":" S_NUM
                                   ",\"shaft_diameter\":" S_NUM ",\"head_length\":" S_NUM
                                   ",\"head_diameter\":" S_NUM ",\"color\":" S_COLOR))
        ",\"cubes\":" S_ARR(S_SIZED) ",\"spheres\":" S_ARR(S_SIZED)
        ",\"cylinders\":" S_ARR(S_OBJ("\"pose\":" S_POSE ",\"size\":" S_XYZ
                                      ",\"bottom_scale\":" S_NUM ",\"top_scale\":" S_NUM
                                      ",\"color\":" S_COLOR))
        ",\"triangles\":" S_ARR(S_OBJ("\"pose\":" S_POSE ",\"points\":" S_ARR(S_XYZ)
                                      ",\"color\":" S_COLOR ",\"indices\":" S_ARR(S_UINT))))));

/* --- hull triangles ------------------------------------------------------------------------------- */

int view__scene_build(view_shared *sh) {
  const sim_model *m = sh->m;
  sh->meshes = calloc((size_t)(m->ngeom > 0 ? m->ngeom : 1), sizeof *sh->meshes);
  if (!sh->meshes) {
    return HIL_ENOMEM;
  }
  for (int g = 0; g < m->ngeom; g++) {
    const sim_geom *geom = &m->geoms[g];
    char err[256];
    if (geom->type != SIM_GEOM_MESH ||
        sim_hull_faces(&sh->meshes[g].tri, &sh->meshes[g].ntri,
                       m->hull_vert + 3 * geom->hull_adr, geom->hull_nvert, err,
                       sizeof err) == 0) {
      continue;
    }
    /* a hull the loader accepted has faces; should Qhull still fail, the geom is not drawn */
    fprintf(stderr, "[achilles] view: mesh geom %s is not drawn: %s\n", geom->name, err);
  }
  return HIL_OK;
}

void view__scene_free(view_shared *sh) {
  for (int g = 0; sh->meshes && sh->m && g < sh->m->ngeom; g++) {
    free(sh->meshes[g].tri);
  }
  free(sh->meshes);
  sh->meshes = NULL;
}

size_t view__scene_robot_size(const view_shared *sh) {
  const sim_model *m = sh->m;
  size_t n = 1024;
  for (int g = 0; m && g < m->ngeom; g++) {
    n += 2048 + (size_t)m->geoms[g].hull_nvert * 96 +
         (sh->meshes ? (size_t)sh->meshes[g].ntri * 36 : 0);
  }
  return n;
}

/* --- writing -------------------------------------------------------------------------------------- */

static void xyz(hil_jw *w, const char *key, double x, double y, double z) {
  hil_jw_key(w, key);
  hil_jw_begin_object(w);
  hil_jw_key(w, "x");
  hil_jw_number(w, x);
  hil_jw_key(w, "y");
  hil_jw_number(w, y);
  hil_jw_key(w, "z");
  hil_jw_number(w, z);
  hil_jw_end_object(w);
}

static void stamp(hil_jw *w, const char *key, uint64_t ns) {
  hil_jw_key(w, key);
  hil_jw_begin_object(w);
  hil_jw_key(w, "sec");
  hil_jw_uint(w, ns / 1000000000u);
  hil_jw_key(w, "nsec");
  hil_jw_uint(w, ns % 1000000000u);
  hil_jw_end_object(w);
}

/* pose: position p, orientation q ([w x y z], the simulator's order) */
static void pose(hil_jw *w, const double p[3], const double q[4]) {
  hil_jw_key(w, "pose");
  hil_jw_begin_object(w);
  xyz(w, "position", p[0], p[1], p[2]);
  hil_jw_key(w, "orientation");
  hil_jw_begin_object(w);
  static const char *const k[4] = {"w", "x", "y", "z"};
  for (int i = 1; i <= 4; i++) {
    hil_jw_key(w, k[i % 4]);
    hil_jw_number(w, q[i % 4]);
  }
  hil_jw_end_object(w);
  hil_jw_end_object(w);
}

static void color(hil_jw *w, double r, double g, double b, double a) {
  const double c[4] = {r, g, b, a};
  static const char *const k[4] = {"r", "g", "b", "a"};
  hil_jw_key(w, "color");
  hil_jw_begin_object(w);
  for (int i = 0; i < 4; i++) {
    hil_jw_key(w, k[i]);
    hil_jw_number(w, c[i]);
  }
  hil_jw_end_object(w);
}

static void geom_color(hil_jw *w, const sim_geom *g) {
  if (g->type == SIM_GEOM_PLANE) {
    color(w, 0.23, 0.25, 0.28, 0.8);
  } else {
    color(w, 0.37, 0.61, 0.84, 1.0); /* the page's colours */
  }
}

/* a point along the geom's own axes, in its body's frame */
static void geom_point(double out[3], const sim_geom *g, double x, double y, double z) {
  const double *r = g->mat;
  for (int i = 0; i < 3; i++) {
    out[i] = g->pos[i] + r[3 * i] * x + r[3 * i + 1] * y + r[3 * i + 2] * z;
  }
}

/* one sized primitive (cube, sphere, cylinder) at p, the geom's orientation, full extents s */
static void sized(hil_jw *w, const sim_geom *g, const double p[3], double sx, double sy,
                  double sz, int cylinder) {
  hil_jw_begin_object(w);
  pose(w, p, g->quat);
  xyz(w, "size", sx, sy, sz);
  if (cylinder) {
    hil_jw_key(w, "bottom_scale");
    hil_jw_number(w, 1);
    hil_jw_key(w, "top_scale");
    hil_jw_number(w, 1);
  }
  geom_color(w, g);
  hil_jw_end_object(w);
}

static void begin_list(hil_jw *w, const char *key) {
  hil_jw_key(w, key);
  hil_jw_begin_array(w);
}

/* the triangles of a mesh geom's hull: its vertices once, the faces as indices */
static void hull_triangles(hil_jw *w, const view_shared *sh, int gi) {
  const sim_geom *g = &sh->m->geoms[gi];
  const view_mesh *mesh = &sh->meshes[gi];
  const double *v = sh->m->hull_vert + 3 * g->hull_adr;
  begin_list(w, "triangles");
  hil_jw_begin_object(w);
  pose(w, g->pos, g->quat);
  begin_list(w, "points");
  for (int i = 0; i < g->hull_nvert; i++) {
    hil_jw_begin_object(w);
    hil_jw_key(w, "x");
    hil_jw_number(w, v[3 * i]);
    hil_jw_key(w, "y");
    hil_jw_number(w, v[3 * i + 1]);
    hil_jw_key(w, "z");
    hil_jw_number(w, v[3 * i + 2]);
    hil_jw_end_object(w);
  }
  hil_jw_end_array(w);
  geom_color(w, g);
  begin_list(w, "indices");
  for (int i = 0; i < 3 * mesh->ntri; i++) {
    hil_jw_uint(w, (uint64_t)mesh->tri[i]);
  }
  hil_jw_end_array(w);
  hil_jw_end_object(w);
  hil_jw_end_array(w);
}

static const char *type_name(sim_geom_type t) {
  static const char *const names[] = {"plane", "sphere", "capsule", "box", "cylinder", "mesh"};
  return (int)t >= 0 && (int)t < 6 ? names[t] : "box";
}

/* the primitives of one geom, in its body's frame */
static void primitives(hil_jw *w, const view_shared *sh, int gi) {
  const sim_geom *g = &sh->m->geoms[gi];
  const double r = g->size[0], h = g->size[1];
  double p[3];
  switch (g->type) {
  case SIM_GEOM_SPHERE:
    begin_list(w, "spheres");
    sized(w, g, g->pos, 2 * r, 2 * r, 2 * r, 0);
    hil_jw_end_array(w);
    break;
  case SIM_GEOM_CAPSULE: /* no capsule primitive: a cylinder and a sphere at each end */
    begin_list(w, "cylinders");
    sized(w, g, g->pos, 2 * r, 2 * r, 2 * h, 1);
    hil_jw_end_array(w);
    begin_list(w, "spheres");
    for (int end = -1; end <= 1; end += 2) {
      geom_point(p, g, 0, 0, end * h);
      sized(w, g, p, 2 * r, 2 * r, 2 * r, 0);
    }
    hil_jw_end_array(w);
    break;
  case SIM_GEOM_CYLINDER:
    begin_list(w, "cylinders");
    sized(w, g, g->pos, 2 * r, 2 * r, 2 * h, 1);
    hil_jw_end_array(w);
    break;
  case SIM_GEOM_MESH:
    if (sh->meshes[gi].ntri > 0) {
      hull_triangles(w, sh, gi);
    }
    break;
  case SIM_GEOM_PLANE: { /* its z = 0, drawn as a thin square slab under it */
    const double hx = g->size[0] > 0 ? g->size[0] : PLANE_HALF;
    const double hy = g->size[1] > 0 ? g->size[1] : PLANE_HALF;
    geom_point(p, g, 0, 0, -PLANE_THICK / 2);
    begin_list(w, "cubes");
    sized(w, g, p, 2 * hx, 2 * hy, PLANE_THICK, 0);
    hil_jw_end_array(w);
    break;
  }
  case SIM_GEOM_BOX:
  default:
    begin_list(w, "cubes");
    sized(w, g, g->pos, 2 * g->size[0], 2 * g->size[1], 2 * g->size[2], 0);
    hil_jw_end_array(w);
    break;
  }
}

static void begin_entity(hil_jw *w, uint64_t ns, const char *frame, const char *id, int locked) {
  hil_jw_begin_object(w);
  stamp(w, "timestamp", ns);
  hil_jw_key(w, "frame_id");
  hil_jw_string(w, frame);
  hil_jw_key(w, "id");
  hil_jw_string(w, id);
  stamp(w, "lifetime", 0); /* 0: until replaced */
  hil_jw_key(w, "frame_locked");
  hil_jw_bool(w, locked);
}

/* a SceneUpdate that deletes nothing, up to its list of entities */
static void begin_update(hil_jw *w, char *out, size_t cap) {
  hil_jw_init(w, out, cap);
  hil_jw_begin_object(w);
  begin_list(w, "deletions");
  hil_jw_end_array(w);
  begin_list(w, "entities");
}

int view__scene_encode_robot(char *out, size_t cap, const view_shared *sh, double t) {
  const sim_model *m = sh->m;
  const uint64_t ns = view__ns(t);
  hil_jw w;
  begin_update(&w, out, cap);
  for (int g = 0; m && g < m->ngeom; g++) {
    const sim_geom *geom = &m->geoms[g];
    char id[SIM_NAME_MAX + 8];
    snprintf(id, sizeof id, "geom/%s", geom->name);
    begin_entity(&w, ns, geom->body == 0 ? "world" : m->bodies[geom->body].name, id, 1);
    begin_list(&w, "metadata");
    hil_jw_begin_object(&w);
    hil_jw_key(&w, "key");
    hil_jw_string(&w, "type");
    hil_jw_key(&w, "value");
    hil_jw_string(&w, type_name(geom->type));
    hil_jw_end_object(&w);
    hil_jw_end_array(&w);
    primitives(&w, sh, g);
    hil_jw_end_object(&w);
  }
  hil_jw_end_array(&w);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}

/* orientation [w x y z] turning +x (an arrow's direction) onto the unit vector n */
static void arrow_quat(double q[4], const double n[3]) {
  const double w = 1 + n[0];
  if (w < 1e-9) { /* n = -x: half a turn about z */
    q[0] = 0, q[1] = 0, q[2] = 0, q[3] = 1;
    return;
  }
  const double len = sqrt(w * w + n[2] * n[2] + n[1] * n[1]);
  q[0] = w / len, q[1] = 0, q[2] = -n[2] / len, q[3] = n[1] / len;
}

int view__scene_encode_contacts(char *out, size_t cap, const view_shared *sh,
                                const view_frame *f) {
  (void)sh;
  hil_jw w;
  begin_update(&w, out, cap);
  begin_entity(&w, view__ns(f->t), "world", "contacts", 0);
  static const double identity[4] = {1, 0, 0, 0};
  begin_list(&w, "spheres");
  for (int c = 0; c < f->ncon; c++) {
    hil_jw_begin_object(&w);
    pose(&w, f->con[c], identity);
    xyz(&w, "size", 2 * CONTACT_RADIUS, 2 * CONTACT_RADIUS, 2 * CONTACT_RADIUS);
    color(&w, 1, 0.25, 0.25, 1);
    hil_jw_end_object(&w);
  }
  hil_jw_end_array(&w);
  begin_list(&w, "arrows");
  for (int c = 0; c < f->ncon; c++) {
    const double len = fmin(0.4, fmax(0.02, 0.01 * f->con[c][6])); /* 1 cm per newton */
    double q[4];
    arrow_quat(q, f->con[c] + 3);
    hil_jw_begin_object(&w);
    pose(&w, f->con[c], q);
    hil_jw_key(&w, "shaft_length");
    hil_jw_number(&w, len - 0.02);
    hil_jw_key(&w, "shaft_diameter");
    hil_jw_number(&w, 0.004);
    hil_jw_key(&w, "head_length");
    hil_jw_number(&w, 0.02);
    hil_jw_key(&w, "head_diameter");
    hil_jw_number(&w, 0.012);
    color(&w, 1, 0.25, 0.25, 1);
    hil_jw_end_object(&w);
  }
  hil_jw_end_array(&w);
  hil_jw_end_object(&w);
  hil_jw_end_array(&w);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}
