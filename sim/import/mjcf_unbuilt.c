/* sim/import/mjcf_unbuilt.c: the MJCF elements Achilles does not build, and their refusal —
 * shared by the top-level sections (mjcf.c) and the bodies (mjcf_body.c). */
#include <libxml/tree.h>
#include <stddef.h>

#include "sim/import/mjcf_state.h"

/* Elements of MuJoCo that make bodies, joints or forces we do not build: ignoring one would
 * move the robot otherwise than MuJoCo does (a deformable body missing, a tendon's spring not
 * acting), so the file is refused, naming it. (<tendon> is converted: mjcf_tendon.c;
 * <equality>: mjcf_equality.c; a <composite> is expanded before, sim/import/mjcf_composite.c.) */
static const struct {
  const char *name, *why;
} unbuilt[] = {
    {"flexcomp", "a deformable body"},
    {"flex", "a deformable body"},
    {"deformable", "deformable bodies"},
    {"plugin", "an engine plugin"},
    {"extension", "engine plugins"},
    {"replicate", "MuJoCo makes bodies of it"},
    {"frame", "a frame of newer MuJoCo holding bodies and geoms"},
    {"attach", "a model attached from another file"},
};

int mjcf__unbuilt(const xmlNode *k) {
  for (size_t i = 0; i < sizeof unbuilt / sizeof unbuilt[0]; i++) {
    if (imp__is(k, unbuilt[i].name)) {
      return (int)i + 1;
    }
  }
  return 0;
}

int mjcf__refuse_unbuilt(mjcf *m, const xmlNode *k) {
  const int i = mjcf__unbuilt(k) - 1;
  const int section = imp__is(k, "equality");
  const xmlNode *first = section ? xmlFirstElementChild((xmlNode *)k) : k;
  if (i < 0 || !first) {
    return 0;
  }
  return imp__fail(m->c, first, "<%s%s%s> is not imported (%s): the file is refused (remove "
                                "it to import the rest)",
                   imp__name(k), section ? "><" : "", section ? imp__name(first) : "",
                   unbuilt[i].why);
}
