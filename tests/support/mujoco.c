/* tests/support/mujoco.c: MuJoCo loaded beside our model (mujoco.h). */
#include "support/mujoco.h"

#include <stdlib.h>
#include <string.h>

mjModel *ts_mj_load(const char *path) {
  char err[1000] = "";
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
  if (!mm) {
    fail_msg("MuJoCo: %s", err);
  }
  return mm;
}

mjModel *ts_mj_load_xml(const char *xml) {
  static const char name[] = "model.xml";
  mjVFS *vfs = malloc(sizeof *vfs); /* about 2 MB in 2.2.2: not on the stack */
  assert_non_null(vfs);
  mj_defaultVFS(vfs);
  assert_int_equal(mj_makeEmptyFileVFS(vfs, name, (int)strlen(xml)), 0);
  memcpy(vfs->filedata[mj_findFileVFS(vfs, name)], xml, strlen(xml));
  char err[1000] = "";
  mjModel *mm = mj_loadXML(name, vfs, err, sizeof err);
  mj_deleteVFS(vfs);
  free(vfs);
  if (!mm) {
    fail_msg("MuJoCo: %s", err);
  }
  return mm;
}

mjData *ts_mj_data(const mjModel *mm) {
  mjData *md = mj_makeData(mm);
  assert_non_null(md);
  return md;
}

int ts_mj_joint(const sim_model *m, const mjModel *mm, int j) {
  const int id = mj_name2id(mm, mjOBJ_JOINT, m->joints[j].name);
  if (id < 0) {
    fail_msg("MuJoCo has no joint '%s'", m->joints[j].name);
  }
  return id;
}

void ts_mj_maps(const sim_model *m, const mjModel *mm, int *qmap, int *vmap) {
  for (int j = 0; j < m->njnt; j++) {
    const sim_joint *jt = &m->joints[j];
    if (jt->dofadr < 0) { /* fixed: nothing to map */
      continue;
    }
    const int id = ts_mj_joint(m, mm, j);
    for (int k = 0; qmap && k < sim_joint_nq(jt->type); k++) {
      qmap[jt->qposadr + k] = mm->jnt_qposadr[id] + k;
    }
    for (int k = 0; vmap && k < sim_joint_nv(jt->type); k++) {
      vmap[jt->dofadr + k] = mm->jnt_dofadr[id] + k;
    }
  }
}

void ts_mj_free(mjModel *mm, mjData *md) {
  mj_deleteData(md);
  mj_deleteModel(mm);
}
