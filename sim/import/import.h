/* sim/import/import.h: robot files users already have (MJCF, URDF), turned into the native
 * robot JSON (docs/robot-format.md) that sim_model_load_* validates and loads.
 *
 * Converting to the native format, rather than building a sim_model directly, keeps one
 * validation path for every robot and lets `achilles convert` write the file a user then extends
 * with sensors and runtime sections. What the importers read is listed in docs/import.md.
 *
 * Everything in a file that has no counterpart in the model (an unsupported element or
 * attribute, a visual-only element, contact settings while contacts are not modelled) is
 * reported with file and line through the caller's report callback, never silently dropped;
 * with `strict` set, the first such report is an error instead.
 *
 * Ownership: sim_import_file returns a cJSON tree the caller frees with cJSON_Delete;
 * sim_import_load_file returns a model the caller frees with sim_model_free.
 */
#ifndef ACHILLES_SIM_IMPORT_H
#define ACHILLES_SIM_IMPORT_H

#include <stddef.h>

#include "sim/model.h"

struct cJSON;

typedef enum sim_import_format {
  SIM_IMPORT_JSON = 0, /* the native format: loaded as it is */
  SIM_IMPORT_MJCF = 1, /* MuJoCo's XML (.xml, .mjcf) */
  SIM_IMPORT_URDF = 2, /* ROS's Unified Robot Description Format (.urdf) */
} sim_import_format;

/* Called once per distinct report, e.g. "arm.xml:12: <light> ignored: visual only (3 times)". */
typedef void (*sim_import_report_fn)(void *ctx, const char *message);

typedef struct sim_import_options {
  int strict;                  /* 1: anything reported is an error */
  sim_import_report_fn report; /* NULL: reports are discarded (still errors when strict) */
  void *report_ctx;
} sim_import_options;

/* The format of a file, from its name (.urdf, .xml/.mjcf) and, for .xml, its root element. */
sim_import_format sim_import_detect(const char *path);

/* Converts an MJCF or URDF file into a robot JSON tree. NULL with a message naming the file and
 * line on failure. A JSON file is read and parsed as it is. */
struct cJSON *sim_import_file(const char *path, const sim_import_options *o, char *err,
                              size_t err_sz);

/* sim_import_file, then sim_model_load_string: a model from any of the three formats. Errors
 * found by the loader in a converted file name the original file and the JSON path. The model
 * loaded (a JSON file too), each pair of its own bodies that already overlaps at the initial
 * pose is reported (at most SIM_IMPORT_OVERLAPS_MAX; sim_overlaps_at_rest), as a note only,
 * never an error, strict or not. */
#define SIM_IMPORT_OVERLAPS_MAX 64
sim_model *sim_import_load_file(const char *path, const sim_import_options *o, char *err,
                                size_t err_sz);

#endif
