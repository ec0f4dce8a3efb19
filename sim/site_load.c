/* sim/site_load.c: the "sites" of a robot description: named points fixed to bodies, where
 * sensors read (docs/robot-format.md). */
#include "sim/load_internal.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static int parse_site(const sim_json_ctx *L, const cJSON *obj, const char *path, const sim_model *m,
                      sim_site *s) {
  static const char *const keys[] = {"name", "body", "pos", "comment", NULL};
  char body[SIM_NAME_MAX] = "", p[SIM_JSON_PATH_MAX];
  if (sim_json_expect_object(L, obj, path) || sim_json_check_keys(L, obj, path, keys) ||
      sim_json_read_name(L, obj, path, "name", s->name, 1) || sim_json_read_name(L, obj, path, "body", body, 1) ||
      sim_json_read_vector(L, obj, path, "pos", s->pos, 3, 0)) {
    return -1;
  }
  s->body = sim_model_body(m, body);
  if (s->body < 0) {
    sim_json_path_join(p, path, "body");
    return sim_json_fail(L, p, "unknown body \"%s\"", body);
  }
  return 0;
}

int sim_sites_parse(const sim_json_ctx *L, const cJSON *root, sim_model *m) {
  const cJSON *sites = cJSON_GetObjectItemCaseSensitive(root, "sites");
  if (!sites) {
    return 0;
  }
  if (!cJSON_IsArray(sites)) {
    return sim_json_fail(L, "sites", "expected an array");
  }
  m->nsite = cJSON_GetArraySize(sites);
  m->sites = calloc((size_t)m->nsite + 1, sizeof *m->sites);
  if (!m->sites) {
    return sim_json_fail(L, "sites", "out of memory");
  }
  int i = 0;
  for (const cJSON *s = sites->child; s; s = s->next, i++) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_index(p, "sites", i);
    if (parse_site(L, s, p, m, &m->sites[i])) {
      return -1;
    }
    for (int k = 0; k < i; k++) {
      if (strcmp(m->sites[k].name, m->sites[i].name) == 0) {
        return sim_json_fail(L, p, "duplicate site name \"%s\" (also sites[%d])", m->sites[i].name, k);
      }
    }
  }
  return 0;
}
