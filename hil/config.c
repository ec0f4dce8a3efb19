/* hil/config.c: the robot file's JSON tree for the section parsers (config.h). */
#include "hil/config.h"

#include <cjson/cJSON.h>

#include "hil/error.h"
#include "sim/import/import.h"
#include "sim/json_read.h"

int hil_config_parse(cJSON **root, const char *config_path, char *err, size_t err_sz) {
  *root = NULL;
  if (sim_import_detect(config_path) != SIM_IMPORT_JSON) {
    return HIL_OK;
  }
  *root = sim_json_parse_file(config_path, err, err_sz);
  return *root ? HIL_OK : HIL_ECONFIG;
}
