/* sim/import/urdf.h: the URDF converter behind sim_import_file (import.c), and the state its
 * files share (urdf.c: links and joints into bodies; urdf_transmission.c: transmissions into
 * actuators). Internal to sim/import. */
#ifndef ACHILLES_SIM_IMPORT_URDF_H
#define ACHILLES_SIM_IMPORT_URDF_H

#include <cjson/cJSON.h>
#include <libxml/tree.h>

#include "sim/import/xml_read.h"
#include "sim/model.h"
#include "sim/name_index.h"

/* Links, joints and transmissions a URDF may hold (docs/robot-format.md, "Limits"): a body per
 * link and a root world link; counted before anything is converted, so a file far over it is
 * refused at its first element too many. */
#define URDF_LINKS_MAX (SIM_BODIES_MAX + 1)

typedef struct urdf {
  imp_ctx *c;
  const xmlNode **links, **joints, **transmissions;
  int nlinks, njoints, ntransmissions;
  sim_name_index link_ix, joint_ix;   /* names to indices into links and joints */
  int *parent_link, *child_link;      /* [njoints]: the links a joint connects */
  int *first_below, *next_below;      /* a link's first child joint, a joint's next sibling */
  int *parent_joint;                  /* [nlinks]: the joint whose child the link is, or -1 */
  unsigned char *driven;              /* [njoints]: a transmission makes an actuator for it */
  cJSON *bodies, *geoms, *actuators;
} urdf;

/* <transmission> elements into native actuators (u->actuators), marking the joints they drive
 * in u->driven: a SimpleTransmission of a joint through an effort interface (or none named) is a
 * `motor` with gear = mechanicalReduction and force_limit = the joint's <limit effort>; what
 * cannot be converted (position or velocity interfaces, other transmission types, a fixed or
 * planar joint) is reported with its line. 0, or -1 on an error. */
int urdf__transmissions(urdf *u);

/* The root element <robot> into a native robot JSON tree; NULL with c->err set. */
cJSON *imp__urdf(imp_ctx *c, const xmlNode *top);

#endif
