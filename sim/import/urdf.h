/* sim/import/urdf.h: the URDF converter behind sim_import_file (import.c). Internal to
 * sim/import. */
#ifndef ACHILLES_SIM_IMPORT_URDF_H
#define ACHILLES_SIM_IMPORT_URDF_H

#include <cjson/cJSON.h>
#include <libxml/tree.h>

#include "sim/import/xml_read.h"

/* The root element <robot> into a native robot JSON tree; NULL with c->err set. */
cJSON *imp__urdf(imp_ctx *c, const xmlNode *top);

#endif
