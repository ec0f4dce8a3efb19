/* sim/state_check.c: is the state finite; see sim.h. */
#include <math.h>

#include "sim/sim.h"

int sim_state_nonfinite(const sim_model *m, const sim_data *d) {
  for (int j = 0; j < m->njnt; j++) {
    const sim_joint *jt = &m->joints[j];
    const int nq = jt->qposadr >= 0 ? sim_joint_nq(jt->type) : 0;
    const int nv = jt->dofadr >= 0 ? sim_joint_nv(jt->type) : 0;
    for (int c = 0; c < nq; c++) {
      if (!isfinite(d->qpos[jt->qposadr + c])) {
        return j;
      }
    }
    for (int c = 0; c < nv; c++) {
      if (!isfinite(d->qvel[jt->dofadr + c])) {
        return j;
      }
    }
  }
  return -1;
}
