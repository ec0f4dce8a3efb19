/* tests/sim/contact_scenes.h: the contact scenes the solver comparisons run beside MuJoCo
 * (test_newton.c, test_elliptic.c): what a club or a lab simulates first.
 *
 *  0 sphere     a sphere dropped spinning onto a plane
 *  1 stick      a box resting on an incline below its slipping angle (tan 0.3 < μ 0.5)
 *  2 slip       the same box above it (tan 0.6 > μ), sliding down
 *  3 gripper    two slide fingers (position servos) close on a capsule lying on the plane, and a
 *               lift raises the three
 *  4 chain      three hinges with stops and joint friction thrown into their stops
 *  5 tumble     a free box tumbling onto a plane
 *  6 pendulum   a ball-joint pendulum striking a sphere fixed to the world
 *  7 stack      a box dropped onto a box resting on the plane (box–box, face on face)
 *  8 club arm   configs/club_arm.json released from horizontal onto its table
 * Each is a JSON robot text (our format) plus its initial velocities and the commands over
 * time. */
#ifndef ACHILLES_TESTS_SIM_CONTACT_SCENES_H
#define ACHILLES_TESTS_SIM_CONTACT_SCENES_H

#include "sim/sim.h"

#define SCENE_COUNT 9

extern const char *const scene_names[SCENE_COUNT];

typedef struct contact_scene {
  const char *name;
  char *json;  /* the robot (owned: scene_free) */
} contact_scene;

/* Scene k (0 <= k < SCENE_COUNT); returns -1 with a message when a shipped file is missing. */
int scene_make(contact_scene *s, int k, char *err, size_t err_sz);
void scene_free(contact_scene *s);

/* The scene's initial state: positions that differ from its qpos0 into qpos, its velocities
 * into qvel; and its commands at time t into ctrl (nu entries). */
void scene_start(int k, const sim_model *m, double *qpos, double *qvel);
void scene_control(int k, const sim_model *m, double t, double *ctrl);

#endif
