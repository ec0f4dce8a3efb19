/* sim/import/import.c: which format a file is in, and the one entry that loads any of them. */
#include "sim/import/import.h"

#include <cjson/cJSON.h>
#include <libxml/parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/import/mjcf.h"
#include "sim/import/urdf.h"
#include "sim/json_read.h"

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

sim_import_format sim_import_detect(const char *path) {
  if (ends_with(path, ".urdf")) {
    return SIM_IMPORT_URDF;
  }
  if (ends_with(path, ".mjcf")) {
    return SIM_IMPORT_MJCF;
  }
  if (!ends_with(path, ".xml")) {
    return SIM_IMPORT_JSON;
  }
  /* .xml: ROS tools write URDF as .xml too; the root element tells */
  FILE *f = fopen(path, "rb");
  char head[4096] = "";
  if (f) {
    size_t n = fread(head, 1, sizeof head - 1, f);
    head[n] = '\0';
    fclose(f);
  }
  return strstr(head, "<robot") && !strstr(head, "<mujoco") ? SIM_IMPORT_URDF : SIM_IMPORT_MJCF;
}

static cJSON *convert_xml(const char *path, sim_import_format format,
                          const sim_import_options *o, char *err, size_t err_sz) {
  static imp_ctx c; /* holds the report table; the importer is not re-entrant */
  imp__init(&c, path, o, err, err_sz);
  xmlDoc *doc = imp__parse(&c);
  if (!doc) {
    return NULL;
  }
  const xmlNode *top = xmlDocGetRootElement(doc);
  const char *want = format == SIM_IMPORT_URDF ? "robot" : "mujoco";
  cJSON *json = NULL;
  if (!imp__is(top, want)) {
    imp__fail(&c, top, "the root element is <%s>, expected <%s>", top ? imp__name(top) : "",
              want);
  } else {
    json = format == SIM_IMPORT_URDF ? imp__urdf(&c, top) : imp__mjcf(&c, top);
  }
  if (json) {
    imp__flush_reports(&c);
  }
  xmlFreeDoc(doc);
  return json;
}

cJSON *sim_import_file(const char *path, const sim_import_options *o, char *err,
                       size_t err_sz) {
  sim_import_format format = sim_import_detect(path);
  if (format != SIM_IMPORT_JSON) {
    return convert_xml(path, format, o, err, err_sz);
  }
  char *text = sim_json_read_file(path, err, err_sz);
  if (!text) {
    return NULL;
  }
  cJSON *json = cJSON_Parse(text);
  free(text);
  if (!json) {
    snprintf(err, err_sz, "%s: invalid JSON", path);
  }
  return json;
}

sim_model *sim_import_load_file(const char *path, const sim_import_options *o, char *err,
                                size_t err_sz) {
  if (sim_import_detect(path) == SIM_IMPORT_JSON) {
    return sim_model_load_file(path, err, err_sz);
  }
  cJSON *json = sim_import_file(path, o, err, err_sz);
  if (!json) {
    return NULL;
  }
  char *text = cJSON_PrintUnformatted(json);
  cJSON_Delete(json);
  if (!text) {
    snprintf(err, err_sz, "%s: out of memory", path);
    return NULL;
  }
  char source[1024];
  snprintf(source, sizeof source, "%s (converted)", path);
  sim_model *m = sim_model_load_string(text, source, err, err_sz);
  free(text);
  return m;
}
