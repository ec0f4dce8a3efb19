/* sim/collision.h: narrow-phase collision of shapes, and the contact filter.
 *
 * The geometry half of the contact stage: given the world poses of two shapes, the contacts
 * between them, with MuJoCo 2.2.2's conventions so that contact rows made from them match
 * MuJoCo's (engine_collision_primitive.c, engine_collision_box.c, mju_makeFrame):
 *  - a plane is the z = 0 plane of its frame (normal = its frame's z axis), infinite;
 *  - a sphere has size[0] = radius; a capsule size[0] = radius and size[1] = half-length of
 *    its segment along its frame's z axis; a box size[0..2] = half-extents along its axes;
 *  - a contact is reported when the signed distance is at most `margin`: dist < 0 is
 *    penetration; pos is the point midway between the two surfaces; frame[0..2] is the normal
 *    pointing from the first shape (the plane) into the second, frame[3..5] and frame[6..8] the
 *    tangents (sim_contact_frame).
 * Poses are a position and a row-major rotation matrix (body axes in world coordinates), as
 * in sim_data's xpos/xmat. Nothing allocates: the caller passes room for the contacts.
 *
 * Files, each depending only on the ones after it: collision.c (sim_collide: broad phase,
 * filter, dispatch), collision_primitive.c (planes, spheres, capsules, round shapes on boxes),
 * collision_box.c (box–box), collision_convex.c (cylinders and meshes), contact_frame.c.
 *
 * sim_collide (sim.h) runs these for every plane against every other shape and for every pair
 * of other shapes that the filter (sim_collision_filtered) lets touch, after a bounding-sphere
 * test. A cylinder has size[0] = radius, size[1] = half-length along its z axis; a mesh is the
 * convex hull of its file's vertices.
 */
#ifndef ACHILLES_SIM_COLLISION_H
#define ACHILLES_SIM_COLLISION_H

typedef struct sim_contact {
  double dist;     /* signed distance between the surfaces, m (< 0: penetration) */
  double pos[3];   /* midway between the surfaces, world, m */
  double frame[9]; /* rows: normal (first shape → second), tangent 1, tangent 2 */
} sim_contact;

/* Most contacts any pair below reports (box–box: the clipped corners and crossings of a face). */
#define SIM_COLLIDE_MAX 24

/* Each returns the number of contacts written to con (0 when farther apart than margin). */
int sim_collide_plane_sphere(sim_contact *con, double margin, const double plane_pos[3],
                             const double plane_mat[9], const double pos[3], double radius);
/* up to 2: the two end spheres of the segment */
int sim_collide_plane_capsule(sim_contact *con, double margin, const double plane_pos[3],
                              const double plane_mat[9], const double pos[3],
                              const double mat[9], const double size[2]);
/* up to 4: the lowest corners, in corner order (x bit 0, y bit 1, z bit 2), skipping corners
 * that point away from the plane */
int sim_collide_plane_box(sim_contact *con, double margin, const double plane_pos[3],
                          const double plane_mat[9], const double pos[3], const double mat[9],
                          const double size[3]);

/* Pairs of round shapes: each reduces to two spheres at the nearest points of the shapes'
 * segments (a sphere's is its centre). The normal points from the first shape to the second;
 * coincident centres take z1 × z2. */
int sim_collide_sphere_sphere(sim_contact *con, double margin, const double pos1[3],
                              const double mat1[9], double r1, const double pos2[3],
                              const double mat2[9], double r2);
int sim_collide_sphere_capsule(sim_contact *con, double margin, const double pos1[3],
                               const double mat1[9], double r1, const double pos2[3],
                               const double mat2[9], const double size2[2]);
/* up to 2 when the segments are parallel */
int sim_collide_capsule_capsule(sim_contact *con, double margin, const double pos1[3],
                                const double mat1[9], const double size1[2],
                                const double pos2[3], const double mat2[9],
                                const double size2[2]);

/* Round shapes against a box (the box second; the normal points from the round shape into the
 * box). A sphere meets the box at the box point nearest its centre; a centre inside the box is
 * pushed out through the nearest face, with dist = −radius (MuJoCo's rule). */
int sim_collide_sphere_box(sim_contact *con, double margin, const double pos1[3], double r1,
                           const double pos2[3], const double mat2[9], const double size2[3]);
/* up to 2: the capsule's sphere at the segment point nearest the box, and a second one along the
 * segment chosen by MuJoCo 2.2.2's rule for the nearest face, edge or corner */
int sim_collide_capsule_box(sim_contact *con, double margin, const double pos1[3],
                            const double mat1[9], const double size1[2], const double pos2[3],
                            const double mat2[9], const double size2[3]);

/* --- box against box (sim/collision_box.c) ------------------------------------------------- */

/* MuJoCo 2.2.2's mjc_BoxBox: up to 24 (a face on a face gives the corners of the overlap,
 * usually 4 to 8); every contact has the same normal, from box 1 into box 2. A face contact
 * reports half the incident point's depth as dist (MuJoCo 2.2.2's figure); positions may
 * repeat, and sim_collide keeps one of each as MuJoCo's driver does. */
int sim_collide_box_box(sim_contact *con, double margin, const double pos1[3],
                        const double mat1[9], const double size1[3], const double pos2[3],
                        const double mat2[9], const double size2[3]);

/* --- cylinders and convex meshes (sim/collision_convex.c) ---------------------------------- */

/* A convex shape in the world for the general routine: its type (sim_geom_type), pose and size;
 * a mesh also its hull (vertices in the geom frame, the hull graph of sim/mesh.h) and an
 * interior point (geom frame). The pointers are borrowed. */
typedef struct sim_shape {
  int type;
  const double *pos, *mat, *size;
  const double *vert;  /* mesh: [3·nvert] */
  int nvert;
  const int *graph;    /* mesh: nvert edge addresses, then −1-terminated neighbour lists */
  const double *center; /* mesh: interior point */
  double inflate;       /* the shape pushed out by this along every direction (sim_collide_convex:
                           half the pair's margin, as MuJoCo's mjccd_support adds) */
} sim_shape;

/* The farthest point of a shape along dir (world; a sphere or capsule assumes a unit dir). */
void sim_shape_support(double out[3], const sim_shape *s, const double dir[3]);

/* up to 4 (MuJoCo 2.2.2's mjc_PlaneCylinder): the lowest rim point of each cap, and two more on
 * the lower cap's rim when that cap is at least half in contact */
int sim_collide_plane_cylinder(sim_contact *con, double margin, const double plane_pos[3],
                               const double plane_mat[9], const double pos[3],
                               const double mat[9], const double size[2]);
/* up to 3 (MuJoCo 2.2.2's mjc_PlaneConvex): the deepest hull vertex, then hull neighbours of it
 * within margin that are at least 0.3·rbound away from it (rbound about the hull's centroid) */
int sim_collide_plane_mesh(sim_contact *con, double margin, const double plane_pos[3],
                           const double plane_mat[9], const sim_shape *mesh, double rbound);
/* Any two convex shapes by libccd's MPR (MuJoCo 2.2.2's mjc_Convex): at most one contact, when
 * they are nearer than margin (each shape inflated by margin/2, dist = margin − the inflated
 * shapes' depth, as MuJoCo); the normal points from a into b, corrected on round surfaces
 * (sphere, capsule, a cylinder's side) as MuJoCo's mjc_fixNormal does. */
int sim_collide_convex(sim_contact *con, double margin, const sim_shape *a, const sim_shape *b);

/* The rank of a geom type in MuJoCo's order (plane, sphere, capsule, cylinder, box, mesh): a pair
 * is worked with the lower rank first, and its normal points from that one to the other. */
int sim_geom_order(int type);

struct sim_model;
/* 1 when geoms g1 and g2 never touch (MuJoCo's filter): their contact groups do not meet
 * ((contype₁ & conaffinity₂) | (contype₂ & conaffinity₁) == 0), they are on the same weld body
 * (bodies joined by fixed joints), on a weld body and its parent's (unless that is the world),
 * or on a body pair listed in the model's `exclude`. */
int sim_collision_filtered(const struct sim_model *m, int g1, int g2);

struct sim_data;
/* The contacts of geoms g1 and g2 (neither a plane; within the larger of their margins) at the poses of d (after
 * sim_kinematics), the pair worked in MuJoCo's order as sim_collide does, the filter not
 * applied; returns their number (at most SIM_COLLIDE_MAX). */
int sim_collide_geom_pair(const struct sim_model *m, const struct sim_data *d, int g1, int g2,
                          sim_contact *con);

/* Completes a contact frame from its normal (frame[0..2], normalized here) and an optional
 * first tangent hint (frame[3..5], zero for none): MuJoCo's mju_makeFrame. Returns -1 when the
 * normal has length below 0.5 (undefined), else 0. */
int sim_contact_frame(double frame[9]);

#endif
