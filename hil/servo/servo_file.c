/* hil/servo/servo_file.c: a servos file turned into "servo" actuators and a servo bus section
 * of the robot's JSON tree. */
#include "hil/servo/servo_file.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hil/servo/servo_bus.h"
#include "hil/servo/servo_internal.h"
#include "sim/import/import.h"
#include "sim/json_read.h"
#include "sim/servo_spec.h"

#define MAX_FILE_SERVOS 32 /* as many as one bus holds */

/* The joint object named `name` among the bodies' "joint" and "joints"; NULL when none. */
static const cJSON *find_joint(const cJSON *robot, const char *name) {
  const cJSON *body;
  cJSON_ArrayForEach(body, cJSON_GetObjectItemCaseSensitive(robot, "bodies")) {
    const cJSON *one = cJSON_GetObjectItemCaseSensitive(body, "joint");
    const cJSON *jn = cJSON_GetObjectItemCaseSensitive(one, "name");
    if (cJSON_IsString(jn) && strcmp(jn->valuestring, name) == 0) {
      return one;
    }
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(body, "joints")) {
      jn = cJSON_GetObjectItemCaseSensitive(j, "name");
      if (cJSON_IsString(jn) && strcmp(jn->valuestring, name) == 0) {
        return j;
      }
    }
  }
  return NULL;
}

/* The robot's hinge and slide joints, for a message: "a, b, c" (cut when long). */
static void joint_names(char *out, size_t out_sz, const cJSON *robot) {
  size_t used = 0;
  out[0] = '\0';
  const cJSON *body;
  cJSON_ArrayForEach(body, cJSON_GetObjectItemCaseSensitive(robot, "bodies")) {
    const cJSON *jn = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(body, "joint"), "name");
    if (cJSON_IsString(jn) && used + strlen(jn->valuestring) + 8 < out_sz) {
      used += (size_t)snprintf(out + used, out_sz - used, "%s%s", used ? ", " : "",
                               jn->valuestring);
    }
  }
}

static int is_moving_joint(const cJSON *joint) {
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(joint, "type");
  return cJSON_IsString(type) &&
         (strcmp(type->valuestring, "hinge") == 0 || strcmp(type->valuestring, "slide") == 0);
}

/* Drops the robot file's actuators on `joint`: the servo drives it now. */
static void drop_actuators_on(cJSON *robot, const char *joint) {
  cJSON *list = cJSON_GetObjectItemCaseSensitive(robot, "actuators");
  for (cJSON *a = cJSON_IsArray(list) ? list->child : NULL; a;) {
    cJSON *next = a->next;
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(a, "joint");
    if (cJSON_IsString(j) && strcmp(j->valuestring, joint) == 0) {
      cJSON_Delete(cJSON_DetachItemViaPointer(list, a));
    }
    a = next;
  }
}

typedef struct file_servo {
  const char *joint;
  int id;
  int protocol;
} file_servo;

/* One servo's block (servo__read_block), its ID unique and its protocol the bus's and the
 * others'. */
static int check_servo(const sim_json_ctx *L, const cJSON *block, const char *path,
                       const file_servo *seen, int nseen, int bus_protocol, file_servo *out) {
  char p[SIM_JSON_PATH_MAX];
  int id = 0;
  const int model = servo__read_block(L, block, path, &id);
  if (model < 0) {
    return -1;
  }
  for (int k = 0; k < nseen; k++) {
    if (seen[k].id == id) {
      sim_json_path_join(p, path, "id");
      return sim_json_fail(L, p, "ID %d is servos.%s's too (each servo on a bus needs its own)",
                           id, seen[k].joint);
    }
  }
  const int protocol = servo__model_protocol(model);
  const int want = bus_protocol >= 0 ? bus_protocol : nseen > 0 ? seen[0].protocol : protocol;
  if (protocol != want) {
    sim_json_path_join(p, path, "model");
    return sim_json_fail(L, p, "%s speaks %s, but %s %s", servo__model_name(model),
                         servo_bus_protocol_name((servo_protocol)protocol),
                         bus_protocol >= 0 ? "the bus speaks" : "the servos before it speak",
                         servo_bus_protocol_name((servo_protocol)want));
  }
  out->id = id, out->protocol = protocol;
  return 0;
}

/* The actuator of one servo, appended to the robot's list. */
static int add_actuator(const sim_json_ctx *L, cJSON *robot, const cJSON *entry,
                        const char *path) {
  cJSON *list = cJSON_GetObjectItemCaseSensitive(robot, "actuators");
  if (!list) {
    list = cJSON_AddArrayToObject(robot, "actuators");
  }
  char name[SIM_NAME_MAX + 8];
  snprintf(name, sizeof name, "%s_servo", entry->string);
  const cJSON *a;
  cJSON_ArrayForEach(a, list) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(a, "name");
    if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) {
      return sim_json_fail(L, path, "the robot file has an actuator named \"%s\" already", name);
    }
  }
  cJSON *act = cJSON_CreateObject(), *block = cJSON_Duplicate(entry, 1);
  if (!cJSON_IsArray(list) || !act || !block) {
    cJSON_Delete(act), cJSON_Delete(block);
    return sim_json_fail(L, path, cJSON_IsArray(list) ? "out of memory"
                                                      : "the robot's \"actuators\" is no array");
  }
  cJSON_AddStringToObject(act, "name", name);
  cJSON_AddStringToObject(act, "joint", entry->string);
  cJSON_AddStringToObject(act, "type", "servo");
  cJSON_AddItemToObject(act, "servo", block);
  cJSON_AddItemToArray(list, act);
  return 0;
}

/* The servos file's "bus", validated as a servo bus section, becomes transports.servo_bus
 * (its keys over the robot file's); without one the section is made, empty: the servos' bus
 * runs with its defaults. */
static int apply_bus(const sim_json_ctx *L, cJSON *robot, const cJSON *bus, int *protocol) {
  servo_bus_options o;
  servo_bus_options_default(&o);
  if (bus && servo_bus_options_read(&o, bus, L->source, "bus", L->err, L->err_sz) != 0) {
    return -1;
  }
  *protocol = o.has_protocol ? (int)o.protocol : -1;
  cJSON *tr = cJSON_GetObjectItemCaseSensitive(robot, "transports");
  if (!tr) {
    tr = cJSON_AddObjectToObject(robot, "transports");
  }
  cJSON *section = cJSON_IsObject(tr) ? cJSON_GetObjectItemCaseSensitive(tr, "servo_bus") : NULL;
  if (!section && cJSON_IsObject(tr)) {
    section = cJSON_AddObjectToObject(tr, "servo_bus");
  }
  if (!cJSON_IsObject(section)) {
    return sim_json_fail(L, "bus", "the robot's transports.servo_bus is no object");
  }
  const cJSON *item;
  cJSON_ArrayForEach(item, bus) { /* NULL: nothing */
    cJSON_DeleteItemFromObjectCaseSensitive(section, item->string);
    cJSON_AddItemToObject(section, item->string, cJSON_Duplicate(item, 1));
  }
  return 0;
}

static int apply_servos(const sim_json_ctx *L, cJSON *robot, const cJSON *root) {
  static const char *const keys[] = {"servos", "bus", "comment", NULL};
  if (sim_json_expect_object(L, root, "") || sim_json_check_keys(L, root, "", keys)) {
    return -1;
  }
  int bus_protocol = -1;
  if (apply_bus(L, robot, cJSON_GetObjectItemCaseSensitive(root, "bus"), &bus_protocol)) {
    return -1;
  }
  const cJSON *servos = cJSON_GetObjectItemCaseSensitive(root, "servos");
  if (!cJSON_IsObject(servos) || !servos->child) {
    return sim_json_fail(L, "servos", "missing or empty (expected {\"JOINT\": {\"model\": ..., "
                                      "\"id\": ...}, ...})");
  }
  file_servo seen[MAX_FILE_SERVOS];
  int n = 0;
  const cJSON *entry;
  cJSON_ArrayForEach(entry, servos) {
    char path[SIM_JSON_PATH_MAX], names[256];
    sim_json_path_join(path, "servos", entry->string);
    const cJSON *joint = find_joint(robot, entry->string);
    if (!joint) {
      joint_names(names, sizeof names, robot);
      return sim_json_fail(L, path, "unknown joint \"%s\" (the robot's joints: %s)",
                           entry->string, names);
    }
    if (!is_moving_joint(joint)) {
      return sim_json_fail(L, path, "joint \"%s\" is no hinge or slide (a servo turns one)",
                           entry->string);
    }
    if (n == MAX_FILE_SERVOS) {
      return sim_json_fail(L, path, "more than %d servos on one bus", MAX_FILE_SERVOS);
    }
    seen[n].joint = entry->string;
    if (check_servo(L, entry, path, seen, n, bus_protocol, &seen[n])) {
      return -1;
    }
    n++;
    drop_actuators_on(robot, entry->string);
    if (add_actuator(L, robot, entry, path)) {
      return -1;
    }
  }
  return 0;
}

int servo_file_apply(cJSON *robot, const char *servos_path, char *err, size_t err_sz) {
  const sim_json_ctx L = {servos_path, err, err_sz};
  cJSON *root = sim_json_parse_file(servos_path, err, err_sz);
  if (!root) {
    return -1;
  }
  const int rc = apply_servos(&L, robot, root);
  cJSON_Delete(root);
  return rc;
}

char *servo_file_robot_text(const char *robot_path, const char *servos_path, char *err,
                            size_t err_sz) {
  const sim_import_options quiet = {0, NULL, NULL}; /* `achilles convert` lists the notes */
  if (err_sz) {
    err[0] = '\0';
  }
  cJSON *robot = sim_import_file(robot_path, &quiet, err, err_sz);
  if (!robot) {
    return NULL;
  }
  char *text = servo_file_apply(robot, servos_path, err, err_sz) == 0
                   ? cJSON_PrintUnformatted(robot)
                   : NULL;
  if (!text && err[0] == '\0') {
    snprintf(err, err_sz, "%s: out of memory", servos_path);
  }
  cJSON_Delete(robot);
  return text;
}

void servo_file_source_name(char *out, size_t out_sz, const char *robot_path) {
  snprintf(out, out_sz, "%s (with servos)", robot_path);
}

int servo_file_pin(char *name, size_t name_sz, const char *robot_path, const char *servos_path,
                   char *err, size_t err_sz) {
  char *text = servo_file_robot_text(robot_path, servos_path, err, err_sz);
  if (!text) {
    return -1;
  }
  servo_file_source_name(name, name_sz, robot_path);
  const int rc = sim_json_pin_text(name, text, strlen(text));
  free(text);
  if (rc != 0) {
    snprintf(err, err_sz, "%s: out of memory", servos_path);
  }
  return rc;
}
