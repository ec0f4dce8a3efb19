/* sysid/robot_patch.h: the fitted values written into a robot's JSON document (`achilles sysid
 * --out`, docs/sysid.md section 5).
 *
 * The document is the one the loader reads (a robot JSON) or converts (an MJCF or URDF through
 * sim/import): every other key is kept as it is. Each fitted parameter goes where the loader
 * took it from:
 *   joint.J.damping | armature | frictionloss | stiffness | springref → the "joint" (or the
 *       entry of "joints") named J: that key
 *   body.B.mass → bodies[B].inertial.mass; com_x/y/z → inertial.com[0..2];
 *       ixx, iyy, izz, ixy, ixz, iyz → inertial.inertia[0..5]
 *   actuator.A.FIELD → the actuator named A: that key (gear, kp, kd, kv, resistance, kt, ke,
 *       inductance)
 * A smart servo's joint holds the servo's gearbox besides its own figures (the loader adds the
 * reflected rotor inertia to the armature and the gear friction to the frictionloss,
 * sim/servo_spec.h): its fitted armature, damping or frictionloss (named joint.J.* or actuator.A.rotor_inertia /
 * gear_friction) keeps the joint's own key and writes the rest into the servo block (gear_damping, gear_friction, rotor_inertia
 * in the motor's units: ÷ ratio²), so the file loads back to the fitted model.
 */
#ifndef ACHILLES_SYSID_ROBOT_PATCH_H
#define ACHILLES_SYSID_ROBOT_PATCH_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "sysid/sysid.h"

/* Writes r's fitted values into doc (a robot JSON tree). m0: the model as loaded before the fit
 * (for the servo gearbox's share). Returns 0, or -1 with a message naming the parameter the
 * document has no place for. */
int sysid_robot_patch(cJSON *doc, const sysid_report *r, const sim_model *m0, char *err,
                      size_t err_sz);

#endif
