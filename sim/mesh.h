/* sim/mesh.h: mesh files turned into the convex hulls that mesh geoms collide with (sim/mesh.c).
 *
 * A mesh geom stands for the convex hull of its file's vertices (the documented approximation,
 * and what MuJoCo does for collisions). At load: the STL file (binary or ASCII) is read, repeated
 * vertices are merged, Qhull (libqhull_r, options "Qt", as MuJoCo 2.2.2's compiler) finds the
 * hull, and only the hull's vertices are kept, with its graph: for each hull vertex, the others
 * it shares a (triangulated) face with, in Qhull's order, which the support function climbs and
 * the plane contacts walk (sim/collision_convex.c). Load time only: this allocates.
 *
 * Graph layout (ints): nvert edge addresses (offsets past them), then for each vertex its
 * neighbours' indices, each list ended by −1.
 */
#ifndef ACHILLES_SIM_MESH_H
#define ACHILLES_SIM_MESH_H

#include <stddef.h>

/* Most triangles an STL file may hold (100 MB as binary). */
#define SIM_STL_TRIANGLES_MAX 2000000

typedef struct sim_hull {
  double *vert;       /* [3·nvert] hull vertices, scale applied, the file's frame */
  int nvert;
  int *graph;         /* [ngraph] see above */
  int ngraph;
  double center[3];   /* the mesh's centre (MuJoCo's): an interior point of the hull */
  double rbound;      /* largest vertex distance from the file's origin */
  double rbound_center; /* largest vertex distance from center */
} sim_hull;

/* The triangles of an STL file held in memory (binary, or ASCII starting with "solid"): *tri is
 * malloc'ed [9·ntri] floats (three vertices each), freed by the caller. `name` names the file
 * in messages. Returns 0, or -1 with a message saying what is wrong (and where, for ASCII: the
 * line). */
int sim_stl_parse(float **tri, int *ntri, const unsigned char *data, size_t size,
                  const char *name, char *err, size_t err_sz);

/* The convex hull of triangles' vertices (repeated ones merged, the first kept; Qhull on the
 * unscaled vertices, which are then scaled, as MuJoCo does) and the mesh's centre (MuJoCo's
 * construction: pyramids from the faces' area centre, unsigned volumes). Returns 0, or -1 with
 * a message (fewer than 4 distinct vertices, all in one plane, more than SIM_HULL_VERT_MAX hull
 * vertices, no volume, out of memory). */
int sim_hull_build(sim_hull *h, const float *tri, int ntri, const double scale[3],
                   const char *name, char *err, size_t err_sz);

/* Reads an STL file and builds its hull: the two above. */
int sim_hull_from_stl(sim_hull *h, const char *path, const double scale[3], char *err,
                      size_t err_sz);

/* The faces of the convex hull of vert[3·nvert] (a hull's own vertices: model.hull_vert), for
 * drawing: *tri is malloc'ed [3·ntri] vertex indices, each triangle wound counter-clockwise
 * seen from outside; freed by the caller. Returns 0, or -1 with a message. */
int sim_hull_faces(int **tri, int *ntri, const double *vert, int nvert, char *err,
                   size_t err_sz);

/* The triangles of a Wavefront OBJ text (NUL-terminated, changed in place): as sim_stl_parse,
 * `name` naming the file in messages with the line. Read as MuJoCo reads OBJ (tinyobjloader,
 * the first shape): `v` lines, `f` lines of 3 or 4 corners (a quad is 0 1 2 and 0 2 3; more
 * corners are an error), negative indices counted back; a second `o` or `g` after faces ends
 * the shape. */
int sim_obj_parse(float **tri, int *ntri, char *text, const char *name, char *err,
                  size_t err_sz);

/* The triangles of a mesh file, STL (binary or ASCII) or Wavefront OBJ (triangles and quads,
 * the first object, as MuJoCo reads it), chosen by the name's extension: *tri as for
 * sim_stl_parse. Returns 0, or -1 with a message naming the file (and the line, for OBJ). */
int sim_mesh_read(float **tri, int *ntri, const char *path, char *err, size_t err_sz);

/* What MuJoCo 2.2.2's compiler makes of a mesh for a mesh geom's mass (sim/mesh_inertia.c says
 * how): with scale applied, the centre of mass in the file's frame, the volume the geom's mass
 * comes from (by default MuJoCo's: that of the mesh's equivalent inertia box, not the mesh's
 * own, which is `volume`; with `exact`, <compiler exactmeshinertia="true">, the mesh's own), and
 * the inertia about the centre of mass per unit mass, in the file's axes. */
typedef struct sim_mesh_mass {
  double com[3];
  double box_volume;
  double volume;
  double inertia[9];
} sim_mesh_mass;
/* 0, or -1 with a message (no area, no volume, an inertia no body has: MuJoCo's refusals). */
int sim_mesh_inertia(sim_mesh_mass *out, const float *tri, int ntri, const double scale[3],
                     int exact, const char *name, char *err, size_t err_sz);

/* Internal (mesh_inertia.c): the principal moments of a symmetric 3×3 inertia, as MuJoCo's
 * mju_eig3 finds them (sim/fluid.c's inertia box). */
void sim__principal_moments(double e[3], const double I[9]);

/* Internal (mesh.c, mesh_inertia.c): a triangle's area, unit normal and centre (float sums, as
 * MuJoCo's compiler); 0 when degenerate. */
double sim__mesh_triangle(double nrm[3], double cen[3], const float *a, const float *b,
                          const float *c);

/* Frees a hull's arrays (accepts a zeroed hull). */
void sim_hull_free(sim_hull *h);

#endif
