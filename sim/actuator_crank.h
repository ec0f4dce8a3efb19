/* sim/actuator_crank.h: the slider-crank transmission of actuators (sim/actuator_crank.c;
 * internal to sim/). */
#ifndef ACHILLES_SIM_ACTUATOR_CRANK_H
#define ACHILLES_SIM_ACTUATOR_CRANK_H

#include <cjson/cJSON.h>

#include "sim/data.h"
#include "sim/json_read.h"
#include "sim/model.h"

/* Actuator `index` (crank_site >= 0): its length and rate at the current kinematics, and its
 * moment ∂length/∂q into d->trn_moment's row `index` (uses d->con_jac as scratch). */
void sim__crank_transmission(const sim_model *m, sim_data *d, int index, double *length,
                             double *velocity);

/* The actuator's "slider_crank" block at PATH (in place of "joint"), on the parsed sites. */
int sim__crank_parse(const sim_json_ctx *L, const cJSON *obj, const char *path,
                     const sim_model *m, sim_actuator *a);

/* Adhesion actuator `index` (adhesion_body >= 0): its moment, minus the mean over the body's
 * contacts (after sim_collide) of their normal Jacobians (0 without contacts), into
 * d->trn_moment's row `index` (uses d->con_jac as scratch). */
void sim__adhesion_transmission(const sim_model *m, sim_data *d, int index);

/* The actuator's "adhesion" block at PATH ({"body"}, in place of "joint"; motors only). */
int sim__adhesion_parse(const sim_json_ctx *L, const cJSON *obj, const char *path,
                        const sim_model *m, sim_actuator *a);

#endif
