/* sim/import/mjcf_option.c: the MJCF file's settings: <compiler> (angles, Euler sequence,
 * inertia from geoms, autolimits, meshdir) and <option> (timestep, gravity, integrator, the
 * constraint solver: solver, iterations, tolerance, cone, impratio; flags). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/import/mjcf_state.h"

/* <compiler><lengthrange>: the muscles' length ranges are found with MuJoCo 2.2.2's default
 * settings only (sim/muscle_range.c); another setting is refused by name, never ignored */
static int read_lengthrange(mjcf *m, const xmlNode *el) {
  static const char *const names[] = {"mode", "useexisting", "uselimit", "accel", "maxforce",
                                      "timeconst", "timestep", "inttotal", "inteval", "tolrange",
                                      NULL};
  static const char *const words[] = {"muscle", "true", "false"};
  static const double numbers[] = {20, 0, 1, 0.01, 10, 2, 0.05};
  if (imp__check_attrs(m->c, el, names, "not used") != 0) {
    return -1;
  }
  for (int k = 0; k < 10; k++) {
    const char *v = imp__attr(el, names[k]);
    double x;
    if (!v) {
      continue;
    }
    const int same = k < 3 ? strcmp(v, words[k]) == 0
                           : imp__numbers(m->c, el, names[k], v, &x, 1, 1) == 1 && x == numbers[k - 3];
    if (!same) {
      return imp__fail(m->c, el, "<lengthrange %s=\"%s\">: muscles' length ranges are found with "
                       "MuJoCo's default settings only (give a muscle its lengthrange instead)",
                       names[k], v);
    }
  }
  return 0;
}

int mjcf__read_compiler(mjcf *m, const xmlNode *el) {
  for (const xmlNode *k = el->children; k; k = k->next) {
    if (k->type == XML_ELEMENT_NODE &&
        (imp__is(k, "lengthrange") ? read_lengthrange(m, k)
                                   : imp__report(m->c, k, "<compiler><%s> ignored: not used",
                                                 imp__name(k))) != 0) {
      return -1;
    }
  }
  static const char *const read[] = {"angle", "inertiafromgeom", "eulerseq", "autolimits",
                                     "meshdir", "exactmeshinertia", NULL};
  if (imp__check_attrs(m->c, el, read, "not used") != 0) {
    return -1;
  }
  const char *meshdir = imp__attr(el, "meshdir");
  if (meshdir) {
    snprintf(m->meshdir, sizeof m->meshdir, "%s", meshdir);
  }
  const char *angle = imp__attr(el, "angle"), *geom = imp__attr(el, "inertiafromgeom");
  const char *seq = imp__attr(el, "eulerseq"), *autolimits = imp__attr(el, "autolimits");
  if (angle) {
    m->degree = strcmp(angle, "radian") != 0;
  }
  if (geom) {
    m->geom_inertia = strcmp(geom, "true") == 0 ? 1 : strcmp(geom, "false") == 0 ? 0 : 2;
  }
  if (autolimits) {
    m->autolimits = strcmp(autolimits, "false") != 0;
  }
  const char *exact = imp__attr(el, "exactmeshinertia");
  if (exact) {
    m->exact_mesh = strcmp(exact, "true") == 0;
  }
  if (seq) {
    if (strlen(seq) != 3 || strspn(seq, "xyzXYZ") != 3) {
      return imp__fail(m->c, el, "<compiler eulerseq=\"%s\">: expected three of x, y, z, X, Y, Z",
                       seq);
    }
    memcpy(m->eulerseq, seq, 4);
  }
  return 0;
}

/* one number of <option>, when given; 1 when read, 0 when absent, -1 on an error */
static int option_number(mjcf *m, const xmlNode *el, const char *name, double *v) {
  const char *text = imp__attr(el, name);
  if (!text) {
    return 0;
  }
  return imp__numbers(m->c, el, name, text, v, 1, 1) < 0 ? -1 : 1;
}

/* iterations, tolerance, solver, cone, impratio (MuJoCo's defaults are already in root);
 * noslip_iterations > 0 is refused: its solver is not built */
static int read_solver(mjcf *m, const xmlNode *el, cJSON *root) {
  double v;
  int rc;
  if ((rc = option_number(m, el, "noslip_iterations", &v)) < 0) {
    return -1;
  }
  if (rc && v != 0) {
    return imp__fail(m->c, el, "<option noslip_iterations=\"%g\">: the noslip solver is not "
                     "built (set 0 or remove it)", v);
  }
  if ((rc = option_number(m, el, "iterations", &v)) < 0) {
    return -1;
  }
  if (rc) {
    double used = fmin(1000, fmax(1, floor(v)));
    if (used != v && imp__report(m->c, el, "<option iterations=\"%g\"> read as %g (1 to 1000)",
                                 v, used)) {
      return -1;
    }
    cJSON_ReplaceItemInObject(root, "solver_iterations", cJSON_CreateNumber(used));
  }
  if ((rc = option_number(m, el, "tolerance", &v)) < 0) {
    return -1;
  }
  if (rc) {
    if (!(v >= 0)) {
      return imp__fail(m->c, el, "<option tolerance=\"%g\">: expected >= 0", v);
    }
    cJSON_ReplaceItemInObject(root, "solver_tolerance", cJSON_CreateNumber(v));
  }
  if ((rc = option_number(m, el, "impratio", &v)) < 0) {
    return -1;
  }
  if (rc) {
    if (!(v > 0)) {
      return imp__fail(m->c, el, "<option impratio=\"%g\">: expected > 0", v);
    }
    cJSON_ReplaceItemInObject(root, "impratio", cJSON_CreateNumber(v));
  }
  const char *solver = imp__attr(el, "solver"), *cone = imp__attr(el, "cone");
  if (solver) {
    const int cg = strcmp(solver, "CG") == 0;
    if (!cg && strcmp(solver, "Newton") != 0 &&
        imp__report(m->c, el, "<option solver=\"%s\"> read as Newton (PGS is not built; run to "
                    "convergence both give the same forces)", solver)) {
      return -1;
    }
    cJSON_ReplaceItemInObject(root, "solver", cJSON_CreateString(cg ? "cg" : "newton"));
  }
  if (cone) {
    if (strcmp(cone, "pyramidal") != 0 && strcmp(cone, "elliptic") != 0) {
      return imp__fail(m->c, el, "<option cone=\"%s\">: expected pyramidal or elliptic", cone);
    }
    cJSON_ReplaceItemInObject(root, "cone", cJSON_CreateString(cone));
  }
  return 0;
}

int mjcf__read_option(mjcf *m, const xmlNode *el, cJSON *root) {
  /* jacobian (dense or sparse) changes how MuJoCo stores the matrices, not the motion */
  static const char *const read[] = {"timestep", "gravity", "integrator", "iterations",
                                     "tolerance", "solver", "cone", "impratio",
                                     "noslip_iterations", "jacobian", "viscosity", "wind",
                                     NULL};
  double v[3];
  if (imp__check_attrs(m->c, el, read, "not used") != 0 || read_solver(m, el, root) != 0) {
    return -1;
  }
  if (imp__attr(el, "timestep")) {
    if (imp__numbers(m->c, el, "timestep", imp__attr(el, "timestep"), v, 1, 1) < 0) {
      return -1;
    }
    cJSON_ReplaceItemInObject(root, "timestep", cJSON_CreateNumber(v[0]));
  }
  if (imp__attr(el, "gravity")) {
    if (imp__numbers(m->c, el, "gravity", imp__attr(el, "gravity"), v, 3, 3) < 0) {
      return -1;
    }
    cJSON_ReplaceItemInObject(root, "gravity", imp__json_vector(v, 3));
  }
  if (imp__attr(el, "viscosity")) { /* the medium's Stokes drag (sim/fluid.c) */
    if (imp__numbers(m->c, el, "viscosity", imp__attr(el, "viscosity"), v, 1, 1) < 0) {
      return -1;
    }
    if (!(v[0] >= 0)) {
      return imp__fail(m->c, el, "<option viscosity=\"%g\">: expected >= 0", v[0]);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(root, "viscosity"); /* no default key in root */
    cJSON_AddItemToObject(root, "viscosity", cJSON_CreateNumber(v[0]));
  }
  if (imp__attr(el, "wind")) {
    if (imp__numbers(m->c, el, "wind", imp__attr(el, "wind"), v, 3, 3) < 0) {
      return -1;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(root, "wind");
    cJSON_AddItemToObject(root, "wind", imp__json_vector(v, 3));
  }
  const char *integrator = imp__attr(el, "integrator");
  if (integrator) {
    if (strcmp(integrator, "RK4") == 0) {
      cJSON_ReplaceItemInObject(root, "integrator", cJSON_CreateString("rk4"));
    } else if (strcmp(integrator, "Euler") != 0 &&
               imp__report(m->c, el, "<option integrator=\"%s\"> read as Euler", integrator)) {
      return -1;
    }
  }
  for (const xmlNode *k = el->children; k; k = k->next) {
    if (imp__is(k, "flag")) {
      const char *limit = imp__attr(k, "limit"), *friction = imp__attr(k, "frictionloss");
      const char *contact = imp__attr(k, "contact");
      m->no_limits = limit && strcmp(limit, "disable") == 0;
      m->no_friction = friction && strcmp(friction, "disable") == 0;
      m->no_contact = contact && strcmp(contact, "disable") == 0;
      static const char *const flags[] = {"limit", "frictionloss", "contact", NULL};
      if (imp__check_attrs(m->c, k, flags, "not modelled") != 0) {
        return -1;
      }
    } else if (k->type == XML_ELEMENT_NODE &&
               imp__report(m->c, k, "<option><%s> ignored: not modelled", imp__name(k)) != 0) {
      return -1;
    }
  }
  return 0;
}

/* <size nconmax>: MuJoCo's cap on contacts is the native max_contacts (the data is sized for
 * it at load); the other sizes are MuJoCo's memory (njmax, nstack) or user data */
int mjcf__read_size(mjcf *m, const xmlNode *el, cJSON *root) {
  static const char *const read[] = {"nconmax", NULL};
  double n = -1;
  if (imp__check_attrs(m->c, el, read, "not used") != 0 ||
      (imp__attr(el, "nconmax") &&
       imp__numbers(m->c, el, "nconmax", imp__attr(el, "nconmax"), &n, 1, 1) < 0)) {
    return -1;
  }
  if (n < 0) { /* absent, or MuJoCo's -1: its own choice */
    return 0;
  }
  if (n != floor(n) || n > 100000) {
    return imp__fail(m->c, el, "<size nconmax=\"%g\">: expected an integer up to 100000", n);
  }
  cJSON_DeleteItemFromObject(root, "max_contacts");
  cJSON_AddNumberToObject(root, "max_contacts", n);
  return 0;
}
