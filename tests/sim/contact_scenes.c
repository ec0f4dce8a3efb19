/* tests/sim/contact_scenes.c: the scenes of contact_scenes.h. */
#include "contact_scenes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/json_read.h"

#define SCENE_JSON_MAX 8192

const char *const scene_names[SCENE_COUNT] = {"sphere", "stick", "slip", "gripper", "chain",
                                               "tumble", "pendulum", "stack", "club arm"};

/* a free box of half-sizes s and mass m resting on a plane tilted by a about x, 0.2 mm deep */
static void incline(char *out, size_t n, double a) {
  const double s[3] = {0.05, 0.04, 0.03}, mass = 0.5, depth = 0.0002;
  const double q[4] = {cos(a / 2), sin(a / 2), 0, 0};
  const double nrm[3] = {0, -sin(a), cos(a)}, h = s[2] - depth;
  snprintf(out, n,
           "{ \"name\": \"incline\", \"timestep\": 0.002,\n"
           "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\",\n"
           "      \"quat\": [%.17g, %.17g, 0, 0], \"friction\": [0.5, 0.005, 0.0001] },\n"
           "    { \"name\": \"box\", \"body\": \"box\", \"type\": \"box\", \"size\": [%g, %g, %g],\n"
           "      \"friction\": [0.5, 0.005, 0.0001] } ],\n"
           "  \"bodies\": [ { \"name\": \"box\", \"parent\": \"world\", \"pos\": [0, %.17g, %.17g],\n"
           "    \"quat\": [%.17g, %.17g, 0, 0], \"joint\": { \"name\": \"root\", \"type\": \"free\" },\n"
           "    \"inertial\": { \"mass\": %g, \"inertia\": [%.17g, %.17g, %.17g, 0, 0, 0] } } ] }\n",
           q[0], q[1], s[0], s[1], s[2], nrm[1] * h, nrm[2] * h, q[0], q[1], mass,
           mass / 3 * (s[1] * s[1] + s[2] * s[2]), mass / 3 * (s[0] * s[0] + s[2] * s[2]),
           mass / 3 * (s[0] * s[0] + s[1] * s[1]));
}

static const char sphere_json[] =
    "{ \"name\": \"sphere\", \"timestep\": 0.002,\n"
    "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },\n"
    "    { \"name\": \"ball\", \"body\": \"ball\", \"type\": \"sphere\", \"size\": [0.05] } ],\n"
    "  \"bodies\": [ { \"name\": \"ball\", \"parent\": \"world\", \"pos\": [0, 0, 0.12],\n"
    "    \"joint\": { \"name\": \"root\", \"type\": \"free\" },\n"
    "    \"inertial\": { \"mass\": 0.2, \"inertia\": [2e-4, 2e-4, 2e-4, 0, 0, 0] } } ] }\n";

/* the lift (a slide along z) carries two fingers (slides along x), each a box on a position
 * servo; the capsule lies across them on the plane */
static const char gripper_json[] =
    "{ \"name\": \"gripper\", \"timestep\": 0.002,\n"
    "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },\n"
    "    { \"name\": \"fl\", \"body\": \"left\", \"type\": \"box\", \"size\": [0.01, 0.03, 0.04] },\n"
    "    { \"name\": \"fr\", \"body\": \"right\", \"type\": \"box\", \"size\": [0.01, 0.03, 0.04] },\n"
    "    { \"name\": \"cap\", \"body\": \"object\", \"type\": \"capsule\", \"size\": [0.02, 0.04] } ],\n"
    "  \"exclude\": [ { \"body1\": \"left\", \"body2\": \"right\" } ],\n"
    "  \"bodies\": [\n"
    "  { \"name\": \"lift\", \"parent\": \"world\", \"pos\": [0, 0, 0.058],\n"
    "    \"joint\": { \"name\": \"lift\", \"type\": \"slide\", \"axis\": [0, 0, 1] },\n"
    "    \"inertial\": { \"mass\": 0.5, \"inertia\": [1e-3, 1e-3, 1e-3, 0, 0, 0] } },\n"
    "  { \"name\": \"left\", \"parent\": \"lift\", \"pos\": [-0.06, 0, 0],\n"
    "    \"joint\": { \"name\": \"left\", \"type\": \"slide\", \"axis\": [1, 0, 0] },\n"
    "    \"inertial\": { \"mass\": 0.1, \"inertia\": [1e-5, 1e-5, 1e-5, 0, 0, 0] } },\n"
    "  { \"name\": \"right\", \"parent\": \"lift\", \"pos\": [0.06, 0, 0],\n"
    "    \"joint\": { \"name\": \"right\", \"type\": \"slide\", \"axis\": [1, 0, 0] },\n"
    "    \"inertial\": { \"mass\": 0.1, \"inertia\": [1e-5, 1e-5, 1e-5, 0, 0, 0] } },\n"
    "  { \"name\": \"object\", \"parent\": \"world\", \"pos\": [0, 0, 0.0199],\n"
    "    \"quat\": [0.7071067811865476, 0.7071067811865476, 0, 0],\n"
    "    \"joint\": { \"name\": \"root\", \"type\": \"free\" },\n"
    "    \"inertial\": { \"mass\": 0.05, \"inertia\": [2e-5, 2e-5, 1e-5, 0, 0, 0] } } ],\n"
    "  \"actuators\": [\n"
    "    { \"name\": \"lift\", \"joint\": \"lift\", \"type\": \"position_servo\", \"kp\": 3000, \"kd\": 100 },\n"
    "    { \"name\": \"left\", \"joint\": \"left\", \"type\": \"position_servo\", \"kp\": 500, \"kd\": 8 },\n"
    "    { \"name\": \"right\", \"joint\": \"right\", \"type\": \"position_servo\", \"kp\": 500, \"kd\": 8 } ] }\n";

static const char chain_json[] =
    "{ \"name\": \"chain\", \"timestep\": 0.002, \"bodies\": [\n"
    "  { \"name\": \"l1\", \"parent\": \"world\", \"pos\": [0, 0, 0.5],\n"
    "    \"joint\": { \"name\": \"j1\", \"type\": \"hinge\", \"axis\": [0, 1, 0], \"limited\": true,\n"
    "      \"range\": [-0.6, 0.6], \"frictionloss\": 0.05, \"damping\": 0.01 },\n"
    "    \"inertial\": { \"mass\": 0.5, \"com\": [0.1, 0, 0], \"inertia\": [1e-4, 2e-3, 2e-3, 0, 0, 0] } },\n"
    "  { \"name\": \"l2\", \"parent\": \"l1\", \"pos\": [0.2, 0, 0],\n"
    "    \"joint\": { \"name\": \"j2\", \"type\": \"hinge\", \"axis\": [0, 1, 0], \"limited\": true,\n"
    "      \"range\": [-0.6, 0.6], \"frictionloss\": 0.05, \"damping\": 0.01 },\n"
    "    \"inertial\": { \"mass\": 0.4, \"com\": [0.1, 0, 0], \"inertia\": [1e-4, 1.5e-3, 1.5e-3, 0, 0, 0] } },\n"
    "  { \"name\": \"l3\", \"parent\": \"l2\", \"pos\": [0.2, 0, 0],\n"
    "    \"joint\": { \"name\": \"j3\", \"type\": \"hinge\", \"axis\": [0, 0, 1], \"limited\": true,\n"
    "      \"range\": [-0.6, 0.6], \"frictionloss\": 0.05, \"damping\": 0.01 },\n"
    "    \"inertial\": { \"mass\": 0.3, \"com\": [0.1, 0, 0], \"inertia\": [1e-4, 1e-3, 1e-3, 0, 0, 0] } } ] }\n";

static const char tumble_json[] =
    "{ \"name\": \"tumble\", \"timestep\": 0.002,\n"
    "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\",\n"
    "      \"friction\": [0.7, 0.005, 0.0001], \"solref\": [0.01, 0.5] },\n"
    "    { \"name\": \"box\", \"body\": \"box\", \"type\": \"box\", \"size\": [0.06, 0.04, 0.02] } ],\n"
    "  \"bodies\": [ { \"name\": \"box\", \"parent\": \"world\", \"pos\": [0, 0, 0.2],\n"
    "    \"quat\": [0.9233805168766387, 0.3077935056255462, 0.20519567041703082,\n"
    "      0.10259783520851541], \"joint\": { \"name\": \"root\", \"type\": \"free\" },\n"
    "    \"inertial\": { \"mass\": 0.4, \"inertia\": [2.6666666666666668e-4, 5.3333333333333336e-4,\n"
    "      6.9333333333333338e-4, 0, 0, 0] } } ] }\n";

/* the pivot 0.6 m up, the bob 0.3 m below it, started 1 rad to the side; the target sphere
 * sits beside the bob's lowest point */
static const char pendulum_json[] =
    "{ \"name\": \"pendulum\", \"timestep\": 0.002,\n"
    "  \"geoms\": [ { \"name\": \"target\", \"body\": \"world\", \"type\": \"sphere\", \"size\": [0.05],\n"
    "      \"pos\": [0.005, 0.1, 0.305], \"solref\": [0.005, 1] },\n"
    "    { \"name\": \"bob\", \"body\": \"bob\", \"type\": \"sphere\", \"size\": [0.04],\n"
    "      \"pos\": [0, 0, -0.3] } ],\n"
    "  \"bodies\": [ { \"name\": \"bob\", \"parent\": \"world\", \"pos\": [0, 0, 0.6],\n"
    "    \"quat\": [0.87758256189037276, -0.47942553860420301, 0, 0],\n"
    "    \"joint\": { \"name\": \"pivot\", \"type\": \"ball\", \"damping\": 0.002 },\n"
    "    \"inertial\": { \"mass\": 0.3, \"com\": [0, 0, -0.3], \"inertia\": [1e-4, 1e-4, 1e-4, 0, 0, 0] } } ] }\n";

/* the lower box resting on the plane, the upper one dropped 1 cm onto it, turned and tilted */
static const char stack_json[] =
    "{ \"name\": \"stack\", \"timestep\": 0.002,\n"
    "  \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },\n"
    "    { \"name\": \"lower\", \"body\": \"lower\", \"type\": \"box\", \"size\": [0.08, 0.08, 0.04] },\n"
    "    { \"name\": \"upper\", \"body\": \"upper\", \"type\": \"box\", \"size\": [0.05, 0.04, 0.03] } ],\n"
    "  \"bodies\": [\n"
    "  { \"name\": \"lower\", \"parent\": \"world\", \"pos\": [0, 0, 0.0398],\n"
    "    \"joint\": { \"name\": \"lower\", \"type\": \"free\" },\n"
    "    \"inertial\": { \"mass\": 1.0, \"inertia\": [2.6666666666666668e-3, 2.6666666666666668e-3,\n"
    "      4.2666666666666669e-3, 0, 0, 0] } },\n"
    "  { \"name\": \"upper\", \"parent\": \"world\", \"pos\": [0.01, -0.005, 0.12],\n"
    "    \"quat\": [0.9947587803473391, 0.009997575681882805,\n"
    "      -0.01999515136376561, 0.0997758053051904], \"joint\": { \"name\": \"upper\", \"type\": \"free\" },\n"
    "    \"inertial\": { \"mass\": 0.4, \"inertia\": [3.3333333333333335e-4, 4.5333333333333332e-4,\n"
    "      5.4666666666666671e-4, 0, 0, 0] } } ] }\n";

int scene_make(contact_scene *s, int k, char *err, size_t err_sz) {
  s->name = scene_names[k];
  if (k == 8) {
    s->json = sim_json_read_file(ACHILLES_SOURCE_DIR "/configs/club_arm.json", err, err_sz);
    return s->json ? 0 : -1;
  }
  s->json = malloc(SCENE_JSON_MAX);
  if (!s->json) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  const char *fixed[] = {sphere_json, NULL, NULL, gripper_json, chain_json, tumble_json,
                         pendulum_json, stack_json};
  if (k == 1 || k == 2) {
    incline(s->json, SCENE_JSON_MAX, k == 1 ? 0.3 : 0.6);
  } else {
    snprintf(s->json, SCENE_JSON_MAX, "%s", fixed[k]);
  }
  return 0;
}

void scene_free(contact_scene *s) {
  free(s->json);
  s->json = NULL;
}

void scene_start(int k, const sim_model *m, double *qpos, double *qvel) {
  memset(qvel, 0, (size_t)m->nv * sizeof(double));
  switch (k) {
  case 0: { /* thrown sideways with backspin */
    const double v[6] = {0.4, -0.2, 0, 0, 6, 2};
    memcpy(qvel, v, sizeof v);
    break;
  }
  case 4: { /* each joint flung towards a stop */
    const double v[3] = {4, -5, 6};
    memcpy(qvel, v, sizeof v);
    break;
  }
  case 5: {
    const double v[6] = {0.3, 0, 0, 4, -3, 5};
    memcpy(qvel, v, sizeof v);
    break;
  }
  case 6: /* swinging a little out of its plane */
    qvel[2] = 1.5;
    break;
  case 8: { /* released from horizontal, elbow bent, the base turning (duty 0: motors brake) */
    const double q[4] = {0.3, 0, 0.6, 0.2};
    memcpy(qpos, q, sizeof q);
    qvel[0] = 0.5;
    break;
  }
  default:
    break;
  }
}

void scene_control(int k, const sim_model *m, double t, double *ctrl) {
  memset(ctrl, 0, (size_t)m->nu * sizeof(double));
  if (k == 3) { /* close the fingers 10 mm past the capsule, then lift 5 cm after 0.6 s */
    ctrl[0] = t < 0.6 ? 0 : 0.05 * fmin(1, (t - 0.6) / 0.5);
    ctrl[1] = 0.04;
    ctrl[2] = -0.04;
  }
}
