/* sim/import/import_internal.h: the two converters behind sim_import_file. Internal. */
#ifndef ACHILLES_SIM_IMPORT_INTERNAL_H
#define ACHILLES_SIM_IMPORT_INTERNAL_H

#include <cjson/cJSON.h>
#include <libxml/tree.h>

#include "sim/import/xml_read.h"

/* The root element <mujoco> or <robot> into a native robot JSON tree; NULL with c->err set. */
cJSON *imp__mjcf(imp_ctx *c, const xmlNode *top);
cJSON *imp__urdf(imp_ctx *c, const xmlNode *top);

#endif
