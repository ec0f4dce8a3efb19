/* sim/import/mjcf_mesh.c: MJCF meshes — <asset><mesh> (an STL or OBJ file, found as MuJoCo finds
 * it) and the mass a mesh geom gives its body, as MuJoCo 2.2.2's compiler computes it from the
 * mesh (sim/mesh_inertia.c). Only STL meshes become collision shapes (mjcf_geom.c). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/import/mjcf_state.h"
#include "sim/mesh.h"

/* <asset><mesh name file scale>: its name is the file's without directory and extension when
 * not given (MuJoCo's rule). A mesh that is not found, or neither STL nor OBJ, is reported, and
 * geoms using it are not converted (and give no mass: an error where the mass is needed). */
int mjcf__read_mesh(mjcf *m, const xmlNode *el) {
  static const char *const read[] = {"name", "file", "scale", NULL};
  if (imp__check_attrs(m->c, el, read, "not modelled") != 0) {
    return -1;
  }
  const char *file = imp__attr(el, "file"), *name = imp__attr(el, "name");
  double scale[3] = {1, 1, 1};
  if (mjcf__numbers(m, el, "mesh", NULL, "scale", scale, 3, 3) < 0) {
    return -1;
  }
  if (!file) {
    return imp__report(m->c, el, "<mesh> without a file (vertices given inline) not converted");
  }
  char stem[256], path[4096];
  if (!name) { /* MuJoCo's default name: the file's stem */
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    const char *dot = strrchr(base, '.');
    snprintf(stem, sizeof stem, "%.*s", dot ? (int)(dot - base) : (int)strlen(base), base);
    name = stem;
  }
  const size_t len = strlen(file);
  const int stl = len >= 4 && strcasecmp(file + len - 4, ".stl") == 0;
  const int obj = len >= 4 && strcasecmp(file + len - 4, ".obj") == 0;
  if (!stl && !obj) {
    return imp__report(m->c, el, "<mesh file=\"%s\"> not converted: only STL and OBJ meshes "
                                 "are read", file);
  }
  if (imp__mesh_file(path, sizeof path, m->c->file, m->meshdir[0] ? m->meshdir : NULL, file)) {
    return imp__report(m->c, el, "<mesh file=\"%s\"> not converted: file not found", file);
  }
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "file", path);
  if (scale[0] != 1 || scale[1] != 1 || scale[2] != 1) {
    cJSON_AddItemToObject(o, "scale", imp__json_vector(scale, 3));
  }
  if (obj) { /* its mass is taken; the native collision shapes read STL only */
    cJSON_AddTrueToObject(o, "obj");
  }
  if (imp__attr(el, "refpos") || imp__attr(el, "refquat")) { /* moves the mesh's frame */
    cJSON_AddTrueToObject(o, "ref");
  }
  cJSON_AddItemToObject(m->meshes, name, o);
  return 0;
}

/* A mesh geom's mass, centre and inertia (pos, q: the geom's frame in the body's MJCF frame)
 * added to the body's sum: the centre of mass of the mesh moved into the body, MuJoCo's mass
 * (density times its equivalent box's volume, or the mass given) and inertia rotated by q. */
int mjcf__mesh_mass(mjcf *m, const xmlNode *g, const char *cls, const double pos[3],
                    const double q[4], imp_mass *sum) {
  const char *name = mjcf__attr(m, g, "geom", cls, "mesh");
  const cJSON *mesh = name ? cJSON_GetObjectItemCaseSensitive(m->meshes, name) : NULL;
  if (!mesh) {
    return imp__fail(m->c, g, "<geom type=\"mesh\" mesh=\"%s\">: no such mesh among the assets "
                              "read, so its mass is not known (give the body an <inertial>)",
                     name ? name : "");
  }
  const char *shell = mjcf__attr(m, g, "geom", cls, "shellinertia");
  if (shell && strcmp(shell, "false") != 0) {
    return imp__fail(m->c, g, "<geom shellinertia=\"%s\">: a mesh's mass on its surface is not "
                              "imported (give the body an <inertial>)", shell);
  }
  if (cJSON_GetObjectItemCaseSensitive(mesh, "ref")) {
    return imp__fail(m->c, g, "<geom type=\"mesh\" mesh=\"%s\">: its <mesh> has refpos or "
                              "refquat, which are not imported (give the body an <inertial>)", name);
  }
  double scale[3] = {1, 1, 1};
  const cJSON *sc = cJSON_GetObjectItemCaseSensitive(mesh, "scale");
  for (int k = 0; sc && k < 3; k++) {
    scale[k] = cJSON_GetArrayItem(sc, k)->valuedouble;
  }
  const char *file = cJSON_GetObjectItemCaseSensitive(mesh, "file")->valuestring;
  float *tri = NULL;
  int ntri = 0;
  char why[600];
  sim_mesh_mass mm;
  if (sim_mesh_read(&tri, &ntri, file, why, sizeof why) != 0 ||
      sim_mesh_inertia(&mm, tri, ntri, scale, m->exact_mesh, file, why, sizeof why) != 0) {
    free(tri);
    return imp__fail(m->c, g, "<geom type=\"mesh\" mesh=\"%s\">: its mass: %s", name, why);
  }
  free(tri);
  double v[1], mass = 1000 * mm.box_volume; /* density default 1000 kg/m³ */
  if (mjcf__numbers(m, g, "geom", cls, "mass", v, 1, 1) == 1) {
    mass = v[0];
  } else if (mjcf__numbers(m, g, "geom", cls, "density", v, 1, 1) == 1) {
    mass = v[0] * mm.box_volume;
  }
  if (m->c->failed || !(mass >= 0)) {
    return m->c->failed ? -1 : imp__fail(m->c, g, "<geom>: mass must not be negative");
  }
  double R[9], at[3], I[9];
  imp__quat_to_mat(R, q);
  imp__rotate(at, R, mm.com);
  for (int k = 0; k < 3; k++) {
    at[k] += pos[k];
  }
  for (int k = 0; k < 9; k++) {
    I[k] = mass * mm.inertia[k];
  }
  double rotated[9];
  imp__rotate_inertia(rotated, R, I);
  imp__mass_add_full(sum, mass, at, rotated);
  return 0;
}
