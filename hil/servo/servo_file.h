/* hil/servo/servo_file.h: a servos file beside any robot file (JSON, MJCF, URDF): which joint
 * each smart servo drives, its model, its ID and the few settings a user changes, and the bus
 * they share. `achilles run ROBOT --servos FILE` and `achilles convert ROBOT --servos FILE` read
 * it (docs/servo-bus.md, "A servos file"):
 *
 *   {"bus": {"protocol": "feetech", "baud": 1000000},
 *    "servos": {"shoulder_pan": {"model": "STS3215", "id": 1}, ...}}
 *
 * Each servo becomes an actuator of type "servo" on its joint (replacing an actuator the robot
 * file had there); "bus" becomes the robot's transports.servo_bus. Errors name the servos file,
 * the joint and what was wrong: an unknown or non-hinge joint, a duplicate ID, an unknown model,
 * a model of another protocol than the bus's or the other servos'.
 *
 * Ownership: the caller owns the cJSON tree and frees the text servo_file_robot_text returns.
 */
#ifndef ACHILLES_HIL_SERVO_SERVO_FILE_H
#define ACHILLES_HIL_SERVO_SERVO_FILE_H

#include <stddef.h>

struct cJSON;

/* Adds the servos of servos_path to robot (a robot JSON tree, e.g. from sim_import_file).
 * 0, or -1 with a message naming the servos file in err. */
int servo_file_apply(struct cJSON *robot, const char *servos_path, char *err, size_t err_sz);

/* The robot file (any format, converted as sim_import_file does) with the servos file applied,
 * as JSON text; NULL with a message in err. */
char *servo_file_robot_text(const char *robot_path, const char *servos_path, char *err,
                            size_t err_sz);

/* servo_file_robot_text, pinned (sim_json_pin_text) under servo_file_source_name(robot_path),
 * which it writes into name: every later reader of that name (the model loader, the runtime's
 * sections, the servo bus) reads the robot with its servos. 0, or -1 with a message. */
int servo_file_pin(char *name, size_t name_sz, const char *robot_path, const char *servos_path,
                   char *err, size_t err_sz);

/* The name under which a command pins that text (sim_json_pin_text): the robot's path and
 * " (with servos)", read as JSON and naming the robot's folder for relative mesh files. */
void servo_file_source_name(char *out, size_t out_sz, const char *robot_path);

#endif
