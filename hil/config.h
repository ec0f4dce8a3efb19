/* hil/config.h: the robot file's JSON tree, for the parsers of its "runtime" and "transports"
 * sections (hil/runtime/options.c and each transport). An MJCF or URDF robot (sim/import) has no
 * such sections: the tree is NULL and every parser keeps its defaults. */
#ifndef ACHILLES_HIL_CONFIG_H
#define ACHILLES_HIL_CONFIG_H

#include <stddef.h>

struct cJSON;

/* HIL_OK with *root the parsed file (the caller frees it with cJSON_Delete), or NULL for MJCF and
 * URDF; HIL_ECONFIG with the parser's message in err. */
int hil_config_parse(struct cJSON **root, const char *config_path, char *err, size_t err_sz);

#endif
