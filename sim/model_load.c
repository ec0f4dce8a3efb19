/* sim/model_load.c: builds a sim_model from a JSON robot description (format: docs/robot-format.md).
 *
 * Everything is validated before anything is built: on the first error the loader writes one
 * message naming the source, the JSON path and what was expected, and returns NULL. No partial
 * model ever escapes. Each section has its loader (sim/load_internal.h); this file reads them in
 * order and assembles the bodies into the model's arrays.
 */
#include "sim/inverse_weights.h"
#include "sim/load_internal.h"
#include "sim/name_index.h"
#include "sim/spatial.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- assembly ----------------------------------------------------------------------------- */

static int allocate_model(sim_model *m, const raw_body *rb, int n) {
  int njnt = 0, nq = 0, nv = 0;
  for (int i = 0; i < n; i++) {
    njnt += rb[i].njoint;
    for (int k = 0; k < rb[i].njoint; k++) {
      nq += sim_joint_nq(rb[i].joints[k].type);
      nv += sim_joint_nv(rb[i].joints[k].type);
    }
  }
  m->nbody = n + 1;
  m->njnt = njnt;
  m->bodies = calloc((size_t)n + 1, sizeof *m->bodies);
  m->joints = calloc((size_t)njnt + 1, sizeof *m->joints);
  m->dof_joint = calloc((size_t)nv + 1, sizeof *m->dof_joint);
  m->dof_body = calloc((size_t)nv + 1, sizeof *m->dof_body);
  m->qpos0 = calloc((size_t)nq + 1, sizeof *m->qpos0);
  return m->bodies && m->joints && m->dof_joint && m->dof_body && m->qpos0 ? 0 : -1;
}

/* joint k of src as model joint `index` on body `body`: coordinates appended */
static void assemble_joint(sim_model *m, const raw_body *src, int k, int index, int body) {
  sim_joint *j = &m->joints[index];
  *j = src->joints[k];
  j->body = body;
  j->qposadr = j->dofadr = -1;
  if (j->name[0]) {
    sim_name_index_add(&m->names[1], j->name, index);
  }
  int nq = sim_joint_nq(j->type), nv = sim_joint_nv(j->type);
  if (nv == 0) {
    return;
  }
  j->qposadr = m->nq;
  j->dofadr = m->nv;
  memcpy(m->qpos0 + m->nq, src->initial[k], (size_t)nq * sizeof(double));
  for (int v = 0; v < nv; v++) {
    m->dof_joint[m->nv + v] = index;
    m->dof_body[m->nv + v] = body;
  }
  m->nq += nq;
  m->nv += nv;
}

static void assemble(sim_model *m, const raw_body *rb, const int *order, int n) {
  sim_body *world = &m->bodies[0];
  strcpy(world->name, "world");
  sim_name_index_add(&m->names[0], world->name, 0);
  world->parent = -1;
  world->joint = -1;
  world->dofadr = -1;
  world->described = -1;
  world->quat[0] = 1;
  sim_quat_to_mat(world->mat, world->quat);
  int njnt = 0;
  for (int k = 0; k < n; k++) {
    const raw_body *src = &rb[order[k]];
    sim_body *b = &m->bodies[k + 1];
    *b = src->body;
    b->parent = strcmp(src->parent, "world") == 0 ? 0 : sim_model_body(m, src->parent);
    sim_name_index_add(&m->names[0], b->name, k + 1); /* after: its parent came before it */
    b->joint = njnt;
    b->jntnum = src->njoint;
    b->described = order[k];
    int nv0 = m->nv;
    for (int a = 0; a < src->njoint; a++) {
      assemble_joint(m, src, a, njnt++, k + 1);
    }
    b->dofnum = m->nv - nv0;
    b->dofadr = b->dofnum > 0 ? nv0 : -1;
    b->multi_dof = b->dofnum > 1 || b->jntnum > 1; /* else one hinge or slide, or welded */
    sim_quat_to_mat(b->mat, b->quat);
    b->identity_quat = b->quat[0] == 1 && b->quat[1] == 0 && b->quat[2] == 0 && b->quat[3] == 0;
    b->diagonal_inertia = b->inertia[1] == 0 && b->inertia[2] == 0 && b->inertia[5] == 0;
  }
  for (int i = 0; i <= n; i++) { /* parents come first: the last child wins */
    m->bodies[i].last_child = -1;
  }
  for (int i = 1; i <= n; i++) {
    m->bodies[m->bodies[i].parent].last_child = i;
  }
}

/* The load-time constants cost the sum over dofs of their depth squared (sim/inverse_weights.c):
 * a deep chain is refused at the body where the sum passes SIM_TREE_WORK_MAX, not loaded for
 * minutes. depth: scratch for a body's dofs from the root. */
static int check_tree_work(const sim_json_ctx *L, const sim_model *m) {
  int *depth = calloc((size_t)m->nbody + 1, sizeof *depth);
  if (!depth) {
    return sim_json_fail(L, "", "out of memory");
  }
  double work = 0;
  for (int i = 1; i < m->nbody; i++) { /* parents first */
    const sim_body *b = &m->bodies[i];
    const int above = depth[b->parent];
    for (int k = 1; k <= b->dofnum; k++) {
      work += (double)(above + k) * (double)(above + k);
    }
    depth[i] = above + b->dofnum;
    if (work > SIM_TREE_WORK_MAX) {
      char p[SIM_JSON_PATH_MAX];
      sim_json_path_index(p, "bodies", b->described);
      const int d = depth[i];
      free(depth);
      return sim_json_fail(L, p, "the tree is too deep: %d dofs above this body's last, and the "
                           "sum over dofs of their depth squared passes %.0e here (a chain of "
                           "about 1 060 dofs; docs/robot-format.md, \"Limits\")",
                           d - 1, SIM_TREE_WORK_MAX);
    }
  }
  free(depth);
  return 0;
}

static size_t njoints(const raw_body *rb, int n) {
  size_t total = 0;
  for (int i = 0; i < n; i++) {
    total += (size_t)rb[i].njoint;
  }
  return total;
}

static const char *const root_keys[] = {
    "name", "comment", "timestep", "integrator", "midpoint_iterations", "solver_iterations",
    "solver_tolerance", "solver", "cone", "impratio", "viscosity", "wind", "max_contacts", "gravity", "bodies",
    "geoms", "exclude",
    "sites", "actuators", "tendons",
    "equality",
    /* sections owned by other modules, validated there */
    "sensors", "runtime", "transports", NULL};

static sim_model *build_model(const sim_json_ctx *L, const cJSON *root) {
  if (sim_json_expect_object(L, root, "") || sim_json_check_keys(L, root, "", root_keys)) {
    return NULL;
  }
  const cJSON *bodies = cJSON_GetObjectItemCaseSensitive(root, "bodies");
  if (!cJSON_IsArray(bodies) || cJSON_GetArraySize(bodies) < 1) {
    sim_json_fail(L, "bodies", "missing or empty (expected an array of body objects)");
    return NULL;
  }
  int n = cJSON_GetArraySize(bodies);
  if (n > SIM_BODIES_MAX) { /* before anything is allocated for them */
    sim_json_fail(L, "bodies", "%d bodies, more than the limit of %d (docs/robot-format.md, "
                  "\"Limits\")", n, SIM_BODIES_MAX);
    return NULL;
  }
  sim_model *m = calloc(1, sizeof *m);
  raw_body *rb = calloc((size_t)n, sizeof *rb);
  int *order = calloc((size_t)n, sizeof *order);
  int ok = m && rb && order;
  if (!ok) {
    sim_json_fail(L, "", "out of memory");
  }
  ok = ok && sim_bodies_parse(L, bodies, rb, n, order) == 0 &&
       sim_options_parse(L, root, &m->opt) == 0;
  if (ok && (allocate_model(m, rb, n) || sim__model_names_init(m, (size_t)n + 1, njoints(rb, n)))) {
    ok = sim_json_fail(L, "", "out of memory") == 0;
  }
  if (ok) {
    assemble(m, rb, order, n);
    free(rb); /* copied into the model: its memory is not held through the rest of the load */
    rb = NULL;
    snprintf(m->name, sizeof m->name, "robot");
    /* tendons name sites, joints and geoms; actuators name joints and tendons */
    ok = sim_json_read_name(L, root, "", "name", m->name, 0) == 0 && sim_sites_parse(L, root, m) == 0 &&
         sim_geoms_parse(L, root, m) == 0 && sim_tendons_parse(L, root, m) == 0 &&
         sim_actuators_parse(L, root, m) == 0;
  }
  ok = ok && check_tree_work(L, m) == 0 && sim_excludes_parse(L, root, m) == 0;
  ok = ok && sim_equalities_parse(L, root, m) == 0;
  free(rb);
  free(order);
  if (!ok) {
    sim_model_free(m);
    return NULL;
  }
  return m;
}

/* the JSON path of joint j, for messages: bodies[i].joint or bodies[i].joints[a] */
static void joint_path(char p[SIM_JSON_PATH_MAX], const sim_model *m, int j) {
  const sim_body *b = &m->bodies[m->joints[j].body];
  if (b->jntnum > 1) {
    snprintf(p, SIM_JSON_PATH_MAX, "bodies[%d].joints[%d]", b->described, j - b->joint);
  } else {
    snprintf(p, SIM_JSON_PATH_MAX, "bodies[%d].joint", b->described);
  }
}

/* A model whose joint-space inertia is singular at the initial pose steps to NaN at once: it is
 * refused here, naming the joints (sim__singular_dof). */
static int check_regular(const sim_json_ctx *L, sim_model *m) {
  int no_inertia = 0, partner = -1;
  const int k = sim__singular_dof(m, &no_inertia, &partner);
  if (k == -2) {
    return sim_json_fail(L, "", "out of memory");
  }
  if (k < 0) {
    return 0;
  }
  char p[SIM_JSON_PATH_MAX];
  const int j = m->dof_joint[k];
  joint_path(p, m, j);
  if (no_inertia) {
    return sim_json_fail(L, p, "joint \"%s\" moves no inertia (the bodies it carries have none "
                         "about its motion), so the joint-space inertia is singular and the "
                         "first step would be NaN: give the joint an armature, or its bodies "
                         "inertia", m->joints[j].name);
  }
  const char *other = partner >= 0 ? m->joints[m->dof_joint[partner]].name : "?";
  return sim_json_fail(L, p, "joints \"%s\" and \"%s\" move the same way at the initial pose "
                       "(their motion subspaces are dependent), so the joint-space inertia is "
                       "singular and the first step would be NaN: remove one, change an axis, or "
                       "give them an armature", m->joints[j].name, other);
}

/* The constants derived from the assembled model, once the JSON tree is gone (it is the largest
 * part of a load's memory): the constraint stage's (sim_constraint_setconst), then the check
 * that the joint-space inertia is regular at the initial pose. NULL, with the model freed, on
 * failure. */
static sim_model *finish_model(const sim_json_ctx *L, sim_model *m) {
  if (!m) {
    return NULL;
  }
  int ok = 1;
  if (sim_constraint_setconst(m)) {
    ok = sim_json_fail(L, "", "out of memory") == 0;
  }
  ok = ok && check_regular(L, m) == 0;
  /* tendon lengths at qpos0 and at the springs' rest, muscles' acc0 and length ranges */
  ok = ok && sim__tendon_setconst(L, m) == 0 && sim__muscle_setconst(L, m) == 0;
  if (!ok) {
    sim_model_free(m);
    return NULL;
  }
  return m;
}

sim_model *sim_model_load_string(const char *json, const char *source, char *err,
                                 size_t err_sz) {
  const sim_json_ctx L = {source ? source : "<string>", err, err_sz};
  if (err && err_sz) {
    err[0] = '\0';
  }
  cJSON *root = sim_json_parse_text(json, L.source, err, err_sz);
  if (!root) {
    return NULL;
  }
  sim_model *m = build_model(&L, root);
  cJSON_Delete(root);
  return finish_model(&L, m);
}

sim_model *sim_model_load_file(const char *path, char *err, size_t err_sz) {
  char scratch[8];
  if (!err || err_sz == 0) {
    err = scratch, err_sz = sizeof scratch;
  }
  char *text = sim_json_read_file(path, err, err_sz);
  if (!text) {
    return NULL;
  }
  sim_model *m = sim_model_load_string(text, path, err, err_sz);
  free(text);
  return m;
}
