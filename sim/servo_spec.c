/* sim/servo_spec.c: the figures of the smart servos (docs/servo-bus.md, "Motor and gearbox",
 * names each source and how the unpublished ones were derived). */
#include "sim/servo_spec.h"

#include <string.h>

#define RPM (6.283185307179586 / 60.0)
#define KGCM 0.0980665 /* N·m per kg·cm */

/* Rotor inertias: neither maker publishes one. The STS3215's is its identified output inertia
 * (0.0284 kg·m², Duclusaud & Passault's BAM, Feetech STS3215 7.4 V) divided by 345²; the
 * XL430's cored motor is taken to be of the same class; the XM430's coreless motor is given the
 * mechanical time constant of the coreless MX-64 and MX-106 (BAM: 14.2 ms), times its stall
 * torque over no-load speed, divided by 353.5². Friction: the STS3215's identified (BAM m1);
 * the others scaled from the STS3215 (XL430) and the MX-106 (XM430) by stall torque (Coulomb)
 * and by stall torque over no-load speed (viscous). */
static const sim_servo_spec specs[] = {
    /* ROBOTIS e-manual, 12 V: 1.5 N·m at 1.4 A, 61 rpm, 258.5:1 */
    {"XL430-W250", 1.5, 1.4, 61.0 * RPM, 258.5, 2.386e-7, 0.041, 0.034},
    /* ROBOTIS e-manual, 12 V: 4.1 N·m at 2.3 A, 46 rpm, 353.5:1 */
    {"XM430-W350", 4.1, 2.3, 46.0 * RPM, 353.5, 9.68e-8, 0.050, 0.017},
    /* Feetech STS3215 (C001), 7.4 V: 19.5 kg·cm at 2.7 A, 0.222 s/60°, 1:345 */
    {"STS3215", 19.5 * KGCM, 2.7, (6.283185307179586 / 6.0) / 0.222, 345.0, 2.386e-7, 0.052,
     0.059},
};
#define NSPECS (sizeof specs / sizeof specs[0])

const sim_servo_spec *sim_servo_spec_find(const char *name) {
  for (size_t i = 0; name && i < NSPECS; i++) {
    if (strcmp(specs[i].name, name) == 0) {
      return &specs[i];
    }
  }
  return NULL;
}

const char *const sim_servo_block_keys[] = {
    "id",         "model",         "stall_torque",  "stall_current", "no_load_speed",
    "gear_ratio", "rotor_inertia", "gear_friction", "gear_damping",  "comment",
    NULL};

const char *sim_servo_spec_names(void) { return "\"XL430-W250\", \"XM430-W350\" or \"STS3215\""; }

double sim_servo_reflected_inertia(const sim_servo_spec *s) {
  return s->rotor_inertia * s->gear_ratio * s->gear_ratio;
}

const sim_servo_spec *sim_servo_block_read(const sim_json_ctx *L, const cJSON *block,
                                           const char *path) {
  char name[32] = "", p[SIM_JSON_PATH_MAX];
  if (sim_json_expect_object(L, block, path) ||
      sim_json_check_keys(L, block, path, sim_servo_block_keys) ||
      sim_json_read_string(L, block, path, "model", name, sizeof name)) {
    return NULL;
  }
  const sim_servo_spec *spec = sim_servo_spec_find(name);
  if (!spec) {
    sim_json_path_join(p, path, "model");
    sim_json_fail(L, p, "%s model \"%s\" (expected %s)", name[0] ? "unknown" : "missing", name,
                  sim_servo_spec_names());
  }
  return spec;
}
