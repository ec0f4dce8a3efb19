/* sim/contact_frame.c: the frame of a contact from its normal (MuJoCo's mju_makeFrame), the one
 * piece of geometry every narrow-phase file shares (collision.h). It calls nothing else in sim/:
 * the collision files depend on it, never the other way. */
#include "sim/collision.h"
#include "sim/spatial.h"

#include <math.h>

int sim_contact_frame(double f[9]) {
  if (sim_normalize3(f) < 0.5) {
    return -1;
  }
  /* no tangent hint: world y, or world z when the normal is close to y */
  if (sqrt(sim_dot3(f + 3, f + 3)) < 0.5) {
    f[3] = f[4] = f[5] = 0;
    if (f[1] < 0.5 && f[1] > -0.5) {
      f[4] = 1;
    } else {
      f[5] = 1;
    }
  }
  /* tangent 1 ⟂ normal (Gram–Schmidt), tangent 2 = normal × tangent 1 */
  double s = sim_dot3(f, f + 3);
  for (int k = 0; k < 3; k++) {
    f[3 + k] -= f[k] * s;
  }
  sim_normalize3(f + 3);
  f[6] = f[1] * f[5] - f[2] * f[4];
  f[7] = f[2] * f[3] - f[0] * f[5];
  f[8] = f[0] * f[4] - f[1] * f[3];
  return 0;
}
