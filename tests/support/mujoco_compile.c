/* tests/support/mujoco_compile.c: our model compiled by MuJoCo through the MJCF writer
 * (mujoco.h). A file of its own: only the tests that compile tests/sim/mjcf_writer.c in call it,
 * so only they pull it out of the library. */
#include "support/mujoco.h"

#include "mjcf_writer.h"

mjModel *ts_mj_compile(const sim_model *m) {
  char err[1024];
  mjModel *mm = (mjModel *)mjcf_load(m, err, sizeof err);
  if (!mm) {
    fail_msg("%s", err);
  }
  return mm;
}
