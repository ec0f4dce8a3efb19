/* tools/cli/cmd_convert.c: `achilles convert`, an MJCF or URDF file into the native robot JSON. */
#define _DEFAULT_SOURCE /* realpath */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "hil/servo/servo_file.h"
#include "sim/import/import.h"
#include "sim/sim.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: achilles convert FILE.xml|FILE.urdf [--out robot.json] [--strict]\n"
          "                        [--exclude-overlapping] [--servos FILE]\n\n"
          "Converts a MuJoCo MJCF or a URDF robot description into the native robot JSON\n"
          "(docs/robot-format.md), checks that it loads, and writes it. Everything in the file\n"
          "that the model does not take (visual elements, contact settings, unsupported\n"
          "attributes) is listed on stderr with its line; what is read: docs/import.md.\n\n"
          "options:\n"
          "  --out FILE|-   where to write the JSON (default -, standard output); mesh files are\n"
          "                 named relative to FILE's folder (absolute on standard output)\n"
          "  --strict       anything that would be listed is an error instead\n"
          "  --exclude-overlapping\n"
          "                 write an exclude for each pair of the robot's bodies that overlap at\n"
          "                 the initial pose (listed as notes either way)\n"
          "  --servos FILE  put smart servos on the joints (a servos file: joint -> model,\n"
          "                 ID; docs/servo-bus.md): \"servo\" actuators and a servo bus\n"
          "  --quiet        do not list what was ignored\n"
          "  -h, --help     this text\n\n"
          "`achilles sim` reads MJCF and URDF files directly too.\n");
}

/* `to` (absolute, canonical) as a path relative to the directory `from` (absolute, canonical):
 * the leading components they share dropped, a "../" for each of from's others. */
static void relative_path(char *out, size_t out_sz, const char *from, const char *to) {
  if (strcmp(from, "/") == 0) {
    snprintf(out, out_sz, "%s", to + 1);
    return;
  }
  size_t i = 0;
  while (from[i] && from[i] == to[i]) {
    i++;
  }
  size_t common = i; /* from[common] and to[common]: '/' or the end, after the shared part */
  if (!(from[i] == '\0' && to[i] == '/')) {
    while (common > 0 && from[common - 1] != '/') {
      common--;
    }
    common = common > 0 ? common - 1 : 0;
  }
  size_t used = 0;
  out[0] = '\0';
  for (const char *c = from + common; *c && used + 4 < out_sz; c++) {
    if (*c == '/') {
      used += (size_t)snprintf(out + used, out_sz - used, "../");
    }
  }
  snprintf(out + used, out_sz - used, "%s", to + common + (to[common] == '/'));
}

/* Mesh geoms name their files by absolute paths (the importer resolves them): written beside the
 * JSON's folder instead, so that a folder holding both can move. Kept absolute when either path
 * cannot be resolved. */
static void relative_meshes(cJSON *json, const char *out_path) {
  char dir[PATH_MAX], here[PATH_MAX], target[PATH_MAX], rel[2 * PATH_MAX];
  snprintf(dir, sizeof dir, "%s", out_path);
  char *slash = strrchr(dir, '/');
  if (slash) {
    *slash = '\0';
  }
  if (!realpath(slash ? (dir[0] ? dir : "/") : ".", here)) {
    return;
  }
  const cJSON *g;
  cJSON_ArrayForEach(g, cJSON_GetObjectItem(json, "geoms")) {
    cJSON *file = cJSON_GetObjectItem(g, "file");
    if (cJSON_IsString(file) && file->valuestring[0] == '/' && realpath(file->valuestring, target)) {
      relative_path(rel, sizeof rel, here, target);
      cJSON_SetValuestring(file, rel);
    }
  }
}

/* an "exclude" entry for each body pair that overlaps at the initial pose */
static int add_excludes(cJSON *json, const sim_model *m) {
  sim_overlap pairs[SIM_IMPORT_OVERLAPS_MAX];
  const int n = sim_overlaps_at_rest(m, pairs, SIM_IMPORT_OVERLAPS_MAX);
  if (n < 0) {
    return -1;
  }
  cJSON *list = cJSON_GetObjectItemCaseSensitive(json, "exclude");
  if (!list && n > 0) {
    list = cJSON_AddArrayToObject(json, "exclude");
  }
  for (int k = 0; k < n; k++) {
    cJSON *e = cJSON_CreateObject();
    if (!e || !cJSON_AddStringToObject(e, "body1", m->bodies[pairs[k].body1].name) ||
        !cJSON_AddStringToObject(e, "body2", m->bodies[pairs[k].body2].name) ||
        !cJSON_AddStringToObject(e, "comment", "overlapping at the initial pose")) {
      cJSON_Delete(e);
      return -1;
    }
    cJSON_AddItemToArray(list, e);
  }
  return 0;
}

/* The servos file's servos on the converted robot, which must still load. */
static int with_servos(cJSON *json, const char *path, const char *servos, char *err,
                       size_t err_sz) {
  if (servo_file_apply(json, servos, err, err_sz) != 0) {
    return -1;
  }
  char *text = cJSON_PrintUnformatted(json), source[PATH_MAX + 32];
  servo_file_source_name(source, sizeof source, path);
  sim_model *m = text ? sim_model_load_string(text, source, err, err_sz) : NULL;
  if (!text) {
    snprintf(err, err_sz, "%s: out of memory", path);
  }
  free(text);
  const int rc = m ? 0 : -1;
  sim_model_free(m);
  return rc;
}

static void print_report(void *ctx, const char *message) {
  (void)ctx;
  fprintf(stderr, "achilles convert: note: %s\n", message);
}

int achilles_cmd_convert(int argc, char **argv) {
  static const struct option options[] = {{"out", required_argument, NULL, 'o'},
                                          {"strict", no_argument, NULL, 's'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"exclude-overlapping", no_argument, NULL, 'x'},
                                          {"servos", required_argument, NULL, 'S'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  const char *out_path = "-", *servos = NULL;
  sim_import_options o = {0, print_report, NULL};
  int opt, exclude_overlapping = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
    switch (opt) {
    case 'o':
      out_path = optarg;
      break;
    case 's':
      o.strict = 1;
      break;
    case 'q':
      o.report = NULL;
      break;
    case 'x':
      exclude_overlapping = 1;
      break;
    case 'S':
      servos = optarg;
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }
  if (optind != argc - 1) {
    usage(stderr);
    return 2;
  }
  const char *path = argv[optind];
  if (sim_import_detect(path) == SIM_IMPORT_JSON) {
    fprintf(stderr, "achilles convert: %s: expected an MJCF (.xml, .mjcf) or URDF (.urdf) file\n",
            path);
    return 2;
  }
  char err[1024];
  /* load once through the model loader, so a file that converts but would not load fails here */
  sim_model *m = sim_import_load_file(path, &o, err, sizeof err);
  if (!m) {
    fprintf(stderr, "achilles convert: %s\n", err);
    return 1;
  }
  sim_import_options quiet = o;
  quiet.report = NULL; /* the notes were printed by the load above */
  cJSON *json = sim_import_file(path, &quiet, err, sizeof err);
  if (json && exclude_overlapping && add_excludes(json, m) != 0) {
    cJSON_Delete(json);
    json = NULL;
    snprintf(err, sizeof err, "out of memory");
  }
  sim_model_free(m);
  if (json && servos && with_servos(json, path, servos, err, sizeof err) != 0) {
    fprintf(stderr, "achilles convert: %s\n", err);
    cJSON_Delete(json);
    return 1;
  }
  if (json && strcmp(out_path, "-") != 0) {
    relative_meshes(json, out_path);
  }
  char *text = json ? cJSON_Print(json) : NULL;
  cJSON_Delete(json);
  if (!text) {
    fprintf(stderr, "achilles convert: %s\n", json ? "out of memory" : err);
    return 1;
  }
  FILE *out = cli_open_output(out_path, err, sizeof err);
  int status = 0;
  if (!out) {
    fprintf(stderr, "achilles convert: %s\n", err);
    status = 1;
  } else {
    fputs(text, out);
    fputc('\n', out);
    if (ferror(out) || (out != stdout && fclose(out) != 0)) {
      fprintf(stderr, "achilles convert: write error on %s\n", out_path);
      status = 1;
    }
  }
  free(text);
  return status;
}
