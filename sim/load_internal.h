/* sim/load_internal.h: the section loaders of a robot description, called by sim/model_load.c.
 * Internal to the loader (format: docs/robot-format.md).
 *
 * Each loader reads one section of the JSON root, checks it and writes it into the model (or, for
 * the bodies, into raw bodies that sim/model_load.c assembles); on the first error it writes one
 * message naming the source, the JSON path and what was expected, and returns -1.
 */
#ifndef ACHILLES_SIM_LOAD_INTERNAL_H
#define ACHILLES_SIM_LOAD_INTERNAL_H

#include <cjson/cJSON.h>

#include "sim/json_read.h"
#include "sim/model.h"

/* One body as described, before topological ordering. */
typedef struct raw_body {
  sim_body body;
  sim_joint joints[SIM_BODY_DOF_MAX]; /* every listed joint has at least one dof */
  int njoint;
  char parent[SIM_NAME_MAX];
  double initial[SIM_BODY_DOF_MAX][7]; /* each joint's initial qpos (its nq values) */
} raw_body;

/* "bodies" (sim/body_load.c): n raw bodies, their names unique, and order[k] = the description
 * index of model body k + 1, each parent before its children. */
int sim_bodies_parse(const sim_json_ctx *L, const cJSON *bodies, raw_body *rb, int n, int *order);
/* "joint" or "joints" of the body at PATH (sim/joint_load.c), after its placement is read (a
 * free joint starts there); neither: one fixed joint. */
int sim_joints_parse(const sim_json_ctx *L, const cJSON *obj, const char *path, raw_body *rb);
/* timestep, integrator, gravity, the solver's settings (sim/option_load.c) */
int sim_options_parse(const sim_json_ctx *L, const cJSON *root, sim_option *opt);
/* "sites" (sim/site_load.c), on the assembled bodies */
int sim_sites_parse(const sim_json_ctx *L, const cJSON *root, sim_model *m);
/* "actuators" (sim/actuator_load.c), on the assembled joints */
int sim_actuators_parse(const sim_json_ctx *L, const cJSON *root, sim_model *m);
/* "tendons" (sim/tendon_load.c), on the assembled joints, sites and geoms */
int sim_tendons_parse(const sim_json_ctx *L, const cJSON *root, sim_model *m);
/* tendon constants (length0, invweight0, springlength < 0 resolved; sim/tendon_load.c) and the
 * muscles' acc0 and length ranges (sim/muscle_range.c), once the model is assembled */
int sim__tendon_setconst(const sim_json_ctx *L, sim_model *m);
int sim__muscle_setconst(const sim_json_ctx *L, sim_model *m);
/* "max_contacts" and "geoms", meshes with their hulls (sim/geom_load.c) */
int sim_geoms_parse(const sim_json_ctx *L, const cJSON *root, sim_model *m);
/* "exclude" (sim/geom_load.c): body pairs whose geoms never touch */
int sim_excludes_parse(const sim_json_ctx *L, const cJSON *root, sim_model *m);
/* the model's name indices for nbody bodies and njnt joints (sim/model_names.c): the loader adds
 * each body and named joint as it places them. 0, or -1 when out of memory. */
int sim__model_names_init(sim_model *m, size_t nbody, size_t njnt);

#endif
