/* sim/servo_spec.h: the smart servos Achilles models, as figures: the motor at the output
 * (stall torque, stall current, no-load speed at the rated voltage) and the gearbox behind it
 * (gear ratio, the rotor's inertia, the gear train's friction). docs/servo-bus.md names the
 * source of every figure.
 *
 * A servo brings its gearbox to the joint it drives: the model loader adds the rotor's
 * inertia through the gear (reflected inertia = rotor inertia × ratio²) to the joint's
 * armature, the gear train's Coulomb friction to its frictionloss and its viscous friction to
 * its damping (sim/actuator_load.c). The firmware loop and the motor live in hil/servo.
 *
 * A table of constants and the reader of a servo block: no allocation, no state.
 */
#ifndef ACHILLES_SIM_SERVO_SPEC_H
#define ACHILLES_SIM_SERVO_SPEC_H

#include "sim/json_read.h"

typedef struct sim_servo_spec {
  const char *name;      /* as a robot file names it: "XL430-W250", "XM430-W350", "STS3215" */
  double stall_torque;   /* N·m at the output, rated voltage */
  double stall_current;  /* A */
  double no_load_speed;  /* rad/s at the output */
  double gear_ratio;     /* motor turns per output turn */
  double rotor_inertia;  /* kg·m² at the motor shaft (rotor and the gears that turn with it) */
  double gear_friction;  /* N·m at the output: the gear train's Coulomb friction */
  double gear_damping;   /* N·m·s/rad at the output: its viscous friction */
} sim_servo_spec;

/* The figures of a model by name; NULL when Achilles does not know it. */
const sim_servo_spec *sim_servo_spec_find(const char *name);

/* The names known, for messages: "\"XL430-W250\", \"XM430-W350\" or \"STS3215\"". */
const char *sim_servo_spec_names(void);

/* The keys an actuator's "servo" block may hold (NULL-terminated): "id", "model", the motor's
 * and the gearbox's figures to override, "comment". */
extern const char *const sim_servo_block_keys[];

/* An actuator's "servo" block at path: an object of those keys naming a known model. The
 * model's figures, or NULL with the message ("SOURCE: PATH.model: unknown model ..."). */
const sim_servo_spec *sim_servo_block_read(const sim_json_ctx *L, const cJSON *block,
                                           const char *path);

/* The inertia the gearbox adds at the output: rotor inertia × ratio². */
double sim_servo_reflected_inertia(const sim_servo_spec *s);

#endif
