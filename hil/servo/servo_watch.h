/* hil/servo/servo_watch.h: the control-table fields that decide what a servo does — its goals,
 * torque and mode, its profile, gains, limits and direction — and the changes to them that a
 * servo's loop takes at a step. The bus (servo_bus.c) looks at them after each loop step and hands
 * the changes to the runtime's recording (a "servo" record, docs/logs.md), so that a log holds
 * every write that changed a servo's behaviour at the very step the loop took it; `achilles
 * sysid --servo-goals` reads them back (docs/sysid.md section 10.1).
 *
 * Fields not listed (ID, baud rate, return delay, LED, status return level, moving threshold,
 * the present values) change what the servo answers or reports, not how it moves.
 *
 * Plain data: no allocation, no I/O.
 */
#ifndef ACHILLES_HIL_SERVO_SERVO_WATCH_H
#define ACHILLES_HIL_SERVO_SERVO_WATCH_H

#include <stdint.h>

#include "hil/servo/dxl_device.h"
#include "hil/servo/ft_device.h"

/* Which control table: the Dynamixel X-series' or the Feetech STS's. */
typedef enum servo_watch_table {
  SERVO_WATCH_DXL = 0,
  SERVO_WATCH_STS = 1,
} servo_watch_table;

#define SERVO_WATCH_MAX 24     /* fields watched per table, at most */
#define SERVO_WATCH_NAME_MAX 24 /* longest name, with its NUL */
#define SERVO_WATCH_MEM_MAX DXL_TABLE_SIZE /* the larger table */

typedef struct servo_watch_field {
  const char *name; /* snake case of the manual's name: "goal_position", "torque_enable" */
  uint16_t address;
  uint8_t size;     /* bytes, little-endian */
  uint8_t xm_only;  /* X-series: a field of the XM430 only (current limit, goal current) */
} servo_watch_field;

/* The watched fields of a table (*n of them), in address order. */
const servo_watch_field *servo_watch_fields(servo_watch_table table, int *n);

/* The field of that name, or NULL. */
const servo_watch_field *servo_watch_find(servo_watch_table table, const char *name);

/* A field's value as the table holds it: its bytes as one unsigned little-endian integer (a
 * signed or sign-magnitude field as its raw bits). */
uint32_t servo_watch_value(const uint8_t *mem, const servo_watch_field *f);

/* What a servo's loop took at a step: the watched fields of mem that differ from seen, or every
 * field the model has when first is 1, by name and value; seen is then updated to mem. model: the
 * X-series' model number (dxl_model) for SERVO_WATCH_DXL, ignored for the STS. seen holds
 * SERVO_WATCH_MEM_MAX bytes. The caller fills id. */
typedef struct servo_taken {
  int id, n;
  const char *name[SERVO_WATCH_MAX];
  uint32_t value[SERVO_WATCH_MAX];
} servo_taken;

void servo_watch_take(servo_taken *tk, servo_watch_table table, int model, const uint8_t *mem,
                      uint8_t *seen, int first);

#endif
