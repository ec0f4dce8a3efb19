/* sim/import/import.c: which format a file is in, and the one entry that loads any of them. */
#include "sim/import/import.h"

#include <cjson/cJSON.h>
#include <libxml/parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/file_read.h"
#include "sim/import/mjcf.h"
#include "sim/import/mjcf_composite.h"
#include "sim/import/urdf.h"
#include "sim/json_read.h"
#include "sim/sim.h"

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

/* Skips what may stand before the root element: the XML declaration and processing
 * instructions, comments, a DOCTYPE with its internal subset, whitespace. NULL when the text
 * ends first. */
static const char *skip_prolog(const char *s) {
  for (;;) {
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
      s++;
    }
    const char *end = NULL;
    if (strncmp(s, "\xef\xbb\xbf", 3) == 0) { /* a UTF-8 byte order mark */
      s += 3;
      continue;
    }
    if (strncmp(s, "<?", 2) == 0) {
      end = strstr(s, "?>");
      s = end ? end + 2 : NULL;
    } else if (strncmp(s, "<!--", 4) == 0) {
      end = strstr(s + 4, "-->");
      s = end ? end + 3 : NULL;
    } else if (strncmp(s, "<!", 2) == 0) { /* <!DOCTYPE name [ ... ]> */
      int depth = 0;
      for (s += 2; *s && !(*s == '>' && depth == 0); s++) {
        depth += *s == '[' ? 1 : *s == ']' ? -1 : 0;
      }
      s = *s ? s + 1 : NULL;
    } else {
      return *s == '<' ? s : NULL;
    }
    if (!s) {
      return NULL;
    }
  }
}

/* 1 when the root element of the text is <name> */
static int root_is(const char *text, const char *name) {
  const char *root = skip_prolog(text);
  const size_t n = strlen(name);
  return root && strncmp(root + 1, name, n) == 0 &&
         strchr(" \t\r\n/>", root[1 + n]) != NULL && root[1 + n] != '\0';
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
  /* .xml: ROS tools write URDF as .xml too; the root element tells (not a mention of <robot in
   * a comment: what comes before the root is skipped, in the first 64 KiB) */
  enum { HEAD = 64 * 1024 };
  char why[16], *head = malloc(HEAD);
  FILE *f = head ? sim_file_open(path, 0, 0, why, sizeof why) : NULL; /* the reader says why */
  size_t n = f ? fread(head, 1, HEAD - 1, f) : 0;
  sim_file_close(f);
  if (head) {
    head[n] = '\0';
  }
  const int is_urdf = head && root_is(head, "robot");
  free(head);
  return is_urdf ? SIM_IMPORT_URDF : SIM_IMPORT_MJCF;
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
  } else if (format == SIM_IMPORT_URDF) {
    json = imp__urdf(&c, top);
  } else if (imp__expand_includes(&c, doc) == 0 && imp__expand_composites(&c, doc) == 0) {
    json = imp__mjcf(&c, top);
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
