/* sysid/sensor_meas.c: an encoder's deterministic part as a sysid_meas (sensor_meas.h). */
#include "sysid/sensor_meas.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* the first encoder of set reading the joint named `joint` with an angle or counts output */
static const sens_sensor *encoder_of(const sens_set *set, const sim_model *m, const char *joint) {
  const int jid = sim_model_joint(m, joint);
  for (int i = 0; set && jid >= 0 && i < sens_set_count(set); i++) {
    const sens_sensor *e = sens_set_sensor(set, i);
    if (e->type == SENS_ENCODER && e->u.enc.joint == jid &&
        (e->u.enc.ch_angle >= 0 || e->u.enc.ch_counts >= 0)) {
      return e;
    }
  }
  return NULL;
}

static sysid_meas meas_of(const sens_sensor *e) {
  const sens_chain_params *p = &e->chain[0].p;
  const double white = e->chain[0].white_k, step = e->u.enc.step;
  sysid_meas m;
  m.latency = e->delay_s;
  m.scale = 1.0 + p->scale_error;
  m.offset = p->offset + p->bias - e->u.enc.origin;
  m.sigma = sqrt(white * white + p->gm_sigma * p->gm_sigma + p->turn_on_sigma * p->turn_on_sigma +
                 step * step / 12.0);
  return m;
}

int sysid_meas_from_sensors(sysid_meas *meas, char (*sensor)[SENS_NAME_MAX],
                            const sysid_series *s, const sim_model *m, const sens_set *set) {
  int found = 0;
  for (int j = 0; j < s->njoint; j++) {
    const sens_sensor *e = encoder_of(set, m, s->joint_name[j]);
    if (e) {
      meas[j] = meas_of(e);
      found++;
    } else {
      sysid_meas_default(&meas[j]);
    }
    if (sensor) {
      snprintf(sensor[j], SENS_NAME_MAX, "%s", e ? e->name : "");
    }
  }
  return found;
}
