/* hil/servo/servo_internal.h: what the bus (servo_bus.c) and the servos file (servo_file.c)
 * share; not for use outside hil/servo. */
#ifndef ACHILLES_HIL_SERVO_SERVO_INTERNAL_H
#define ACHILLES_HIL_SERVO_SERVO_INTERNAL_H

#include "sim/json_read.h"

/* A servo block's keys, its model (known) and its ID (an integer from 0 to 252), the errors
 * named at path: the model's index in the bus's model table, or -1 with the message. */
int servo__read_block(const sim_json_ctx *L, const cJSON *block, const char *path, int *id);

/* The protocol (servo_protocol) of the model at that index. */
int servo__model_protocol(int model);
const char *servo__model_name(int model);

#endif
