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
#include "sim/sim.h"

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

/* Self-contact at rest (sim_overlaps_at_rest): a note per body pair, never an error (the robot
 * loads as described; the user decides). */
static void report_overlaps(const sim_model *m, const char *path, const sim_import_options *o) {
  if (!m || !o || !o->report) {
    return;
  }
  sim_overlap pairs[SIM_IMPORT_OVERLAPS_MAX];
  const int n = sim_overlaps_at_rest(m, pairs, SIM_IMPORT_OVERLAPS_MAX);
  for (int k = 0; k < n; k++) {
    char message[512];
    snprintf(message, sizeof message,
             "%s: bodies \"%s\" and \"%s\" overlap by %.3g mm at the initial pose (geoms \"%s\" "
             "and \"%s\"): they push each other apart from the first step; exclude the pair if "
             "the robot is built so (achilles convert --exclude-overlapping)",
             path, m->bodies[pairs[k].body1].name, m->bodies[pairs[k].body2].name,
             1e3 * pairs[k].depth, m->geoms[pairs[k].geom1].name, m->geoms[pairs[k].geom2].name);
    o->report(o->report_ctx, message);
  }
}

sim_model *sim_import_load_file(const char *path, const sim_import_options *o, char *err,
                                size_t err_sz) {
  if (sim_import_detect(path) == SIM_IMPORT_JSON) {
    sim_model *m = sim_model_load_file(path, err, err_sz);
    report_overlaps(m, path, o);
    return m;
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
  report_overlaps(m, path, o);
  return m;
}
