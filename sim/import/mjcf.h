/* sim/import/mjcf.h: the MJCF converter behind sim_import_file (import.c). Internal to
 * sim/import. */
#ifndef ACHILLES_SIM_IMPORT_MJCF_H
#define ACHILLES_SIM_IMPORT_MJCF_H

#include <cjson/cJSON.h>
#include <libxml/tree.h>

#include "sim/import/xml_read.h"

/* The root element <mujoco> into a native robot JSON tree; NULL with c->err set. */
cJSON *imp__mjcf(imp_ctx *c, const xmlNode *top);

#endif
