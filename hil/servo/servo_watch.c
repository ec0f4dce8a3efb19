/* hil/servo/servo_watch.c: the fields that decide what a servo does, and their changes between
 * two looks (servo_watch.h). Addresses as the e-manual's and Feetech's tables (docs/servo-bus.md
 * section 5). */
#include "hil/servo/servo_watch.h"

#include <string.h>

/* X-series: what servo_model.c's loop reads (dxl_servo_step) and what the device enforces on
   the goals (limits); the hardware error status is the loop's own, not a write */
static const servo_watch_field dxl_fields[] = {
    {"drive_mode", DXL_DRIVE_MODE, 1, 0},
    {"operating_mode", DXL_OPERATING_MODE, 1, 0},
    {"homing_offset", DXL_HOMING_OFFSET, 4, 0},
    {"pwm_limit", DXL_PWM_LIMIT, 2, 0},
    {"current_limit", DXL_CURRENT_LIMIT, 2, 1},
    {"velocity_limit", DXL_VELOCITY_LIMIT, 4, 0},
    {"max_position_limit", DXL_MAX_POSITION_LIMIT, 4, 0},
    {"min_position_limit", DXL_MIN_POSITION_LIMIT, 4, 0},
    {"shutdown", DXL_SHUTDOWN, 1, 0},
    {"torque_enable", DXL_TORQUE_ENABLE, 1, 0},
    {"velocity_i_gain", 76, 2, 0},
    {"velocity_p_gain", 78, 2, 0},
    {"position_d_gain", DXL_POSITION_D_GAIN, 2, 0},
    {"position_i_gain", DXL_POSITION_I_GAIN, 2, 0},
    {"position_p_gain", DXL_POSITION_P_GAIN, 2, 0},
    {"goal_pwm", DXL_GOAL_PWM, 2, 0},
    {"goal_current", DXL_GOAL_CURRENT, 2, 1},
    {"goal_velocity", DXL_GOAL_VELOCITY, 4, 0},
    {"profile_acceleration", DXL_PROFILE_ACCELERATION, 4, 0},
    {"profile_velocity", DXL_PROFILE_VELOCITY, 4, 0},
    {"goal_position", DXL_GOAL_POSITION, 4, 0},
};

/* STS: what ft_servo_step reads */
static const servo_watch_field sts_fields[] = {
    {"min_position_limit", FT_MIN_POSITION_LIMIT, 2, 0},
    {"max_position_limit", FT_MAX_POSITION_LIMIT, 2, 0},
    {"max_torque", FT_MAX_TORQUE, 2, 0},
    {"phase", FT_PHASE, 1, 0},
    {"p_gain", FT_P_GAIN, 1, 0},
    {"d_gain", FT_D_GAIN, 1, 0},
    {"i_gain", FT_I_GAIN, 1, 0},
    {"offset", FT_OFFSET, 2, 0},
    {"operating_mode", FT_OPERATING_MODE, 1, 0},
    {"speed_p_gain", FT_SPEED_P_GAIN, 1, 0},
    {"speed_i_gain", FT_SPEED_I_GAIN, 1, 0},
    {"torque_enable", FT_TORQUE_ENABLE, 1, 0},
    {"acceleration", FT_ACCELERATION, 1, 0},
    {"goal_position", FT_GOAL_POSITION, 2, 0},
    {"goal_time", FT_GOAL_TIME, 2, 0},
    {"goal_speed", FT_GOAL_SPEED, 2, 0},
    {"torque_limit", FT_TORQUE_LIMIT, 2, 0},
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

const servo_watch_field *servo_watch_fields(servo_watch_table table, int *n) {
  *n = table == SERVO_WATCH_DXL ? COUNT(dxl_fields) : COUNT(sts_fields);
  return table == SERVO_WATCH_DXL ? dxl_fields : sts_fields;
}

const servo_watch_field *servo_watch_find(servo_watch_table table, const char *name) {
  int n;
  const servo_watch_field *f = servo_watch_fields(table, &n);
  for (int i = 0; i < n; i++) {
    if (strcmp(f[i].name, name) == 0) {
      return &f[i];
    }
  }
  return NULL;
}

uint32_t servo_watch_value(const uint8_t *mem, const servo_watch_field *f) {
  uint32_t v = 0;
  for (int i = 0; i < f->size; i++) {
    v |= (uint32_t)mem[f->address + i] << (8 * i);
  }
  return v;
}

void servo_watch_take(servo_taken *tk, servo_watch_table table, int model, const uint8_t *mem,
                      uint8_t *seen, int first) {
  int n;
  const servo_watch_field *f = servo_watch_fields(table, &n);
  const int xl = table == SERVO_WATCH_DXL && model == DXL_MODEL_XL430_W250;
  tk->n = 0;
  for (int i = 0; i < n && tk->n < SERVO_WATCH_MAX; i++) {
    if (xl && f[i].xm_only) {
      continue; /* the XL430 has no such field */
    }
    if (first || memcmp(mem + f[i].address, seen + f[i].address, f[i].size) != 0) {
      tk->name[tk->n] = f[i].name;
      tk->value[tk->n++] = servo_watch_value(mem, &f[i]);
      memcpy(seen + f[i].address, mem + f[i].address, f[i].size);
    }
  }
}
