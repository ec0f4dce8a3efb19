/* tools/cli/sysid_servo.h: `achilles sysid --servo-goals` — the servos a robot file's servo blocks
 * name, for the series actuators that are servos (docs/sysid.md section 10). */
#ifndef ACHILLES_TOOLS_CLI_SYSID_SERVO_H
#define ACHILLES_TOOLS_CLI_SYSID_SERVO_H

#include <stddef.h>

#include "sensors/sensors.h"
#include "sysid/sysid.h"

/* Every actuator of series s that is of type servo in m, with the model its "servo" block in the
 * robot JSON at robot_path names, into *out (malloc'd, *n entries; free it); the joint's encoder
 * in set (the robot's sensors, NULL for none), which the bus feeds the servo, gives sensor_step.
 * 0, or -1 with a message: the robot is not JSON, a servo not of the X-series, no servo in the
 * series. */
int sysid_servo_goals(const char *robot_path, const sim_model *m, const sens_set *set,
                      const sysid_series *s, sysid_servo **out, int *n, char *err,
                      size_t err_sz);

#endif
