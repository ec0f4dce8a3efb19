/* tests/sim/tendon_scenes.h: MJCF scenes with tendons, loaded by our importer and by MuJoCo 2.2.2
 * from the same text (test_tendon.c, test_muscle.c). */
#ifndef ACHILLES_TESTS_SIM_TENDON_SCENES_H
#define ACHILLES_TESTS_SIM_TENDON_SCENES_H

#include <stddef.h>

#include "sim/model.h"

/* paths of every kind: sites only, sphere and cylinder wraps with and without side sites, the
 * inside wrap, a pulley, a fixed tendon (the joints: j1, j2 hinges, j3 a slide) */
extern const char tendon_scene_paths[];
/* a two-link arm under gravity with a fixed and a spatial tendon (springs, dampers, limits,
 * friction loss) and actuators on both */
extern const char tendon_scene_dynamics[];

/* Our model of the MJCF text (through a file in a temporary folder and sim_import_load_file);
 * NULL with the message in err. */
sim_model *tendon_scene_load(const char *xml, char *err, size_t err_sz);

#endif
