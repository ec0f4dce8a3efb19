/* tools/cli/sysid_servo.c: the servos of --servo-goals from the robot file's servo blocks. */
#include "sysid_servo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

/* the X-series the fit's loop models (hil/servo/dxl_device.h's model numbers) */
static int model_number(const char *name) {
  return !name                            ? -1
         : strcmp(name, "XL430-W250") == 0 ? 1060
         : strcmp(name, "XM430-W350") == 0 ? 1020
                                           : -1;
}

static cJSON *read_json(const char *path, char *err, size_t err_sz) {
  FILE *f = fopen(path, "rb");
  char *text = NULL;
  long len = -1;
  if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    text = malloc((size_t)len + 1);
    if (text && fread(text, 1, (size_t)len, f) == (size_t)len) {
      text[len] = '\0';
    } else {
      free(text), text = NULL;
    }
  }
  if (f) {
    fclose(f);
  }
  cJSON *doc = text ? cJSON_Parse(text) : NULL;
  free(text);
  if (!doc) {
    snprintf(err, err_sz, "--servo-goals: %s: not a robot JSON (its actuators' servo blocks name "
             "the servos' models)", path);
  }
  return doc;
}

static const cJSON *servo_block(const cJSON *doc, const char *actuator) {
  const cJSON *a;
  cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(doc, "actuators")) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(a, "name");
    if (cJSON_IsString(name) && strcmp(name->valuestring, actuator) == 0) {
      return cJSON_GetObjectItemCaseSensitive(a, "servo");
    }
  }
  return NULL;
}

/* the resolution of the first encoder on joint (as hil/servo/servo_bus.c's find_encoder) */
static double encoder_step(const sens_set *set, int joint) {
  for (int i = 0; set && i < sens_set_count(set); i++) {
    const sens_sensor *e = sens_set_sensor(set, i);
    if (e->type == SENS_ENCODER && e->u.enc.joint == joint && e->u.enc.ch_angle >= 0) {
      return e->u.enc.step;
    }
  }
  return 0;
}

int sysid_servo_goals(const char *robot_path, const sim_model *m, const sens_set *set,
                      const sysid_series *s, sysid_servo **out, int *n, char *err,
                      size_t err_sz) {
  *out = NULL, *n = 0;
  cJSON *doc = read_json(robot_path, err, err_sz);
  if (!doc) {
    return -1;
  }
  sysid_servo *list = calloc((size_t)s->nact + 1, sizeof *list);
  int rc = list ? 0 : -1;
  if (!list) {
    snprintf(err, err_sz, "out of memory");
  }
  for (int i = 0; rc == 0 && i < s->nact; i++) {
    const int a = sim_model_actuator(m, s->act_name[i]);
    if (a < 0 || m->actuators[a].type != SIM_ACT_SMART_SERVO) {
      continue;
    }
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(servo_block(doc, s->act_name[i]), "model");
    const int number = model_number(cJSON_GetStringValue(model));
    if (number < 0) {
      snprintf(err, err_sz,
               "--servo-goals: actuator '%s': servo model '%s' — the fit models the Dynamixel "
               "X-series' loop only (XL430-W250, XM430-W350)",
               s->act_name[i], cJSON_IsString(model) ? model->valuestring : "?");
      rc = -1;
      break;
    }
    snprintf(list[*n].actuator, sizeof list[*n].actuator, "%s", s->act_name[i]);
    list[*n].sensor_step = encoder_step(set, m->actuators[a].joint);
    list[(*n)++].model = number;
  }
  if (rc == 0 && *n == 0) {
    snprintf(err, err_sz, "--servo-goals: no actuator of the log is a servo of %s", robot_path);
    rc = -1;
  }
  cJSON_Delete(doc);
  if (rc < 0) {
    free(list);
    *n = 0;
    return -1;
  }
  *out = list;
  return 0;
}
