/* sim/collision.h: narrow-phase collision of primitive shapes (sim/collision.c).
 *
 * The geometry half of the contact stage: given the world poses of two shapes, the contacts
 * between them, with MuJoCo 2.2.2's conventions so that contact rows made from them match
 * MuJoCo's (engine_collision_primitive.c, mju_makeFrame):
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
 * sim_collide (sim.h) runs these for every plane against every other shape and for every pair
 * of other shapes that the filter (sim_collision_filtered) lets touch, after a bounding-sphere
 * test. Box against box is not detected (the loader
 * reports such pairs, docs/robot-format.md).
 */
#ifndef ACHILLES_SIM_COLLISION_H
#define ACHILLES_SIM_COLLISION_H

typedef struct sim_contact {
  double dist;     /* signed distance between the surfaces, m (< 0: penetration) */
  double pos[3];   /* midway between the surfaces, world, m */
  double frame[9]; /* rows: normal (first shape → second), tangent 1, tangent 2 */
} sim_contact;

/* Most contacts any pair below reports. */
#define SIM_COLLIDE_MAX 4

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

struct sim_model;
/* 1 when geoms g1 and g2 never touch (MuJoCo's filter): their contact groups do not meet
 * ((contype₁ & conaffinity₂) | (contype₂ & conaffinity₁) == 0), they are on the same weld body
 * (bodies joined by fixed joints), on a weld body and its parent's (unless that is the world),
 * or on a body pair listed in the model's `exclude`. */
int sim_collision_filtered(const struct sim_model *m, int g1, int g2);

/* Completes a contact frame from its normal (frame[0..2], normalized here) and an optional
 * first tangent hint (frame[3..5], zero for none): MuJoCo's mju_makeFrame. Returns -1 when the
 * normal has length below 0.5 (undefined), else 0. */
int sim_contact_frame(double frame[9]);

#endif
