/* hil/serial/serial_codec.c: sensor id table, samples to wire entries, command checks. */
#include "hil/serial/serial_codec.h"

#include <math.h>
#include <string.h>

void hil_serial_table_clear(hil_serial_table *t) {
  memset(t, 0, sizeof *t);
  for (int i = 0; i <= HIL_SERIAL_MAX_IDS; i++) {
    t->first_id[i] = -1;
  }
}

void hil_serial_table_add(hil_serial_table *t, int sensor, int channel, int kind) {
  if (t->n >= HIL_SERIAL_MAX_IDS || sensor < 0 || sensor >= HIL_SERIAL_MAX_IDS) {
    t->omitted++;
    return;
  }
  if (t->first_id[sensor] < 0) {
    t->first_id[sensor] = (int16_t)t->n;
    t->nsensors++;
  }
  hil_serial_channel *ch = &t->id[t->n++];
  ch->sensor = (int16_t)sensor;
  ch->channel = (uint8_t)channel;
  ch->kind = (uint8_t)kind;
}

void hil_serial_table_build(hil_serial_table *t, const sens_set *s) {
  hil_serial_table_clear(t);
  int count = s ? sens_set_count(s) : 0;
  for (int i = 0; i < count; i++) {
    const sens_sensor *sn = sens_set_sensor(s, i);
    for (int c = 0; c < sn->nch; c++) {
      /* the encoder's counter is an integer register; everything else is a measured value */
      hil_serial_table_add(t, i, c,
                           sn->type == SENS_ENCODER && c == sn->u.enc.ch_counts ? ACH_KIND_COUNTS
                                                                                 : ACH_KIND_VALUE);
    }
  }
}

void hil_serial_table_print(const hil_serial_table *t, const sens_set *s, FILE *out) {
  for (int i = 0; i < t->n;) {
    const sens_sensor *sn = sens_set_sensor(s, t->id[i].sensor);
    int first = i;
    char line[512];
    size_t used = 0;
    line[0] = '\0';
    for (; i < t->n && t->id[i].sensor == t->id[first].sensor; i++) {
      used += (size_t)snprintf(line + used, used < sizeof line ? sizeof line - used : 0, " %d=%s%s",
                               i, sn->channel[t->id[i].channel],
                               t->id[i].kind == ACH_KIND_COUNTS ? "(int32)" : "");
      if (used >= sizeof line) {
        used = sizeof line - 1;
      }
    }
    /* what a board needs to read the values: rate, the latency actually applied (whole
     * samples), an encoder's counts per turn (also in DESCRIBE's SENSOR_INFO) */
    char extra[96];
    int k = snprintf(extra, sizeof extra, "  (%g Hz, latency %g ms", sn->rate_hz, 1e3 * sn->delay_s);
    if (sn->type == SENS_ENCODER && k > 0 && (size_t)k < sizeof extra) {
      snprintf(extra + k, sizeof extra - (size_t)k, ", %lld counts/rev",
               (long long)sn->u.enc.counts_per_turn);
    }
    fprintf(out, "serial:   %-16s %s%s%s)\n", sn->name, sens_type_name(sn->type), line, extra);
  }
  if (t->omitted) {
    fprintf(out, "serial:   %d channels have no id (at most %d ids)\n", t->omitted,
            HIL_SERIAL_MAX_IDS);
  }
}

uint64_t hil_serial_time_ns(double t) {
  if (!(t > 0)) {
    return 0;
  }
  return (uint64_t)llround(t * 1e9);
}

/* age of the measurement relative to the frame, ns, saturated to the field */
static uint32_t age_ns(double frame_time, double t_truth) {
  double age = (frame_time - t_truth) * 1e9;
  if (!(age > 0)) {
    return 0;
  }
  return age >= 4294967295.0 ? UINT32_MAX : (uint32_t)llround(age);
}

/* the wire bits of one measured value of a channel */
static uint32_t value_bits(uint8_t kind, double v) {
  if (kind == ACH_KIND_COUNTS) {
    /* the counter is already a wrapping signed 32-bit register; keep its low 32 bits */
    return (uint32_t)(int64_t)v;
  }
  float f = (float)v;
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return bits;
}

int hil_serial_sample_entries(ach_sample *out, int max, hil_serial_table *t, int sensor_index,
                              const sens_sensor *s, const sens_sample *smp, double frame_time) {
  if (sensor_index < 0 || sensor_index >= HIL_SERIAL_MAX_IDS || t->first_id[sensor_index] < 0) {
    return 0;
  }
  int n = 0;
  uint8_t bad = s->dead ? ACH_SAMPLE_FAULT : ACH_SAMPLE_DROPPED;
  for (int id = t->first_id[sensor_index]; id < t->n && t->id[id].sensor == sensor_index && n < max;
       id++) {
    const hil_serial_channel *ch = &t->id[id];
    double v = smp->meas[ch->channel];
    int good = smp->valid && isfinite(v);
    if (good) {
      t->last_good[id] = value_bits(ch->kind, v);
    }
    ach_sample *e = &out[n++];
    memset(e, 0, sizeof *e);
    e->sensor_id = (uint8_t)id;
    e->flags = good ? 0 : bad;
    e->kind = ch->kind;
    e->sample_seq = (uint32_t)smp->seq;
    e->age_ns = age_ns(frame_time, smp->t_truth);
    e->v.raw = t->last_good[id];
  }
  return n;
}

ach_motor_mode hil_serial_actuator_mode(const sim_actuator *a) {
  switch (a->type) {
  case SIM_ACT_DC_MOTOR:
    return a->dc_input_voltage ? ACH_MODE_VOLTAGE : ACH_MODE_DUTY;
  case SIM_ACT_POSITION_SERVO:
    return ACH_MODE_POSITION;
  case SIM_ACT_VELOCITY_SERVO:
    return ACH_MODE_VELOCITY;
  case SIM_ACT_MOTOR:
  default:
    return ACH_MODE_TORQUE;
  }
}

ach_error_code hil_serial_check_command(const sim_model *m, const ach_joint_command *c) {
  if (c->joint_id >= m->nu) {
    return ACH_ERRC_BAD_JOINT;
  }
  if (c->mode != (uint8_t)hil_serial_actuator_mode(&m->actuators[c->joint_id])) {
    return ACH_ERRC_BAD_MODE;
  }
  return ACH_ERRC_NONE;
}

const char *hil_serial_mode_name(int mode) {
  switch (mode) {
  case ACH_MODE_TORQUE:
    return "torque";
  case ACH_MODE_DUTY:
    return "duty";
  case ACH_MODE_VOLTAGE:
    return "voltage";
  case ACH_MODE_POSITION:
    return "position";
  case ACH_MODE_VELOCITY:
    return "velocity";
  default:
    return "unknown";
  }
}

/* --- DESCRIBE ------------------------------------------------------------------------------- */

/* the joint a sensor measures, -1 for none (an IMU measures a body) */
static int measured_joint(const sens_sensor *s) {
  switch (s->type) {
  case SENS_ENCODER:
    return s->u.enc.joint;
  case SENS_TORQUE:
    return s->u.trq.joint;
  default:
    return -1;
  }
}

static int joint_is_slide(const sim_model *m, int joint) {
  return joint >= 0 && joint < m->njnt && m->joints[joint].type == SIM_JOINT_SLIDE;
}

const char *hil_serial_channel_units(const sens_sensor *s, const sim_model *m, int c) {
  int slide = joint_is_slide(m, measured_joint(s));
  const char *name = s->channel[c];
  switch (s->type) {
  case SENS_ENCODER:
    if (c == s->u.enc.ch_counts) {
      return "count";
    }
    if (c == s->u.enc.ch_index) {
      return "1";
    }
    if (c == s->u.enc.ch_velocity) {
      return slide ? "m/s" : "rad/s";
    }
    return slide ? "m" : "rad";
  case SENS_IMU:
    return strncmp(name, "gyro", 4) == 0 ? "rad/s" : "m/s^2";
  case SENS_TOUCH:
    return "N";
  case SENS_TORQUE:
  default:
    if (strcmp(name, "current") == 0) {
      return "A";
    }
    return slide ? "N" : "N*m";
  }
}

/* the joint id of the board (actuator index) driving model joint j, ACH_NO_JOINT if none */
static uint8_t command_joint(const sim_model *m, int j) {
  for (int a = 0; j >= 0 && a < m->nu && a < (int)ACH_NO_JOINT; a++) {
    if (m->actuators[a].joint == j) {
      return (uint8_t)a;
    }
  }
  return ACH_NO_JOINT;
}

static uint8_t sensor_type_code(sens_type type) {
  switch (type) {
  case SENS_ENCODER:
    return ACH_SENSOR_ENCODER;
  case SENS_IMU:
    return ACH_SENSOR_IMU;
  case SENS_TORQUE:
    return ACH_SENSOR_TORQUE;
  case SENS_TOUCH:
    return ACH_SENSOR_TOUCH;
  default:
    return ACH_SENSOR_OTHER;
  }
}

int hil_serial_sensor_info(ach_sensor_info *out, const hil_serial_table *t, const sens_set *s,
                           const sim_model *m, int id) {
  memset(out, 0, sizeof *out);
  if (!s || id < 0 || id >= t->n) {
    return -1;
  }
  const hil_serial_channel *ch = &t->id[id];
  const sens_sensor *sn = sens_set_sensor(s, ch->sensor);
  out->sensor_id = (uint8_t)id;
  out->kind = ch->kind;
  out->sensor_type = sensor_type_code(sn->type);
  out->joint = command_joint(m, measured_joint(sn));
  if (sn->type == SENS_ENCODER && sn->u.enc.counts_per_turn > 0 &&
      sn->u.enc.counts_per_turn <= (int64_t)UINT32_MAX) {
    out->counts_per_rev = (uint32_t)sn->u.enc.counts_per_turn;
  }
  out->rate_hz = (float)sn->rate_hz;
  snprintf(out->units, sizeof out->units, "%s", hil_serial_channel_units(sn, m, ch->channel));
  /* "sensor.channel", cut at the field's length (the id stays the reference) */
  char name[SENS_NAME_MAX + SENS_CHANNEL_NAME_MAX + 2] = {0};
  snprintf(name, sizeof name, "%s.%s", sn->name, sn->channel[ch->channel]);
  memcpy(out->name, name, ACH_INFO_NAME_LEN);
  out->name[ACH_INFO_NAME_LEN] = '\0';
  /* the latency applied (whole samples), as the console's table prints it */
  const double latency_ns = sn->delay_s * 1e9;
  out->latency_ns = latency_ns >= 4294967295.0 ? UINT32_MAX : (uint32_t)llround(latency_ns);
  return 0;
}

int hil_serial_joint_info(ach_joint_info *out, const sim_model *m, int id) {
  memset(out, 0, sizeof *out);
  if (id < 0 || id >= m->nu || id >= (int)ACH_DESCRIBE_ALL) {
    return -1;
  }
  const sim_actuator *a = &m->actuators[id];
  /* an actuator on a tendon describes the tendon, a length: linear */
  const sim_joint *j = a->joint >= 0 ? &m->joints[a->joint] : NULL;
  out->joint_id = (uint8_t)id;
  out->mode = (uint8_t)hil_serial_actuator_mode(a);
  out->joint_type = !j || j->type == SIM_JOINT_SLIDE ? ACH_JOINT_LINEAR : ACH_JOINT_ROTARY;
  out->ctrl_min = (float)a->ctrlrange[0];
  out->ctrl_max = (float)a->ctrlrange[1];
  snprintf(out->name, sizeof out->name, "%.*s", ACH_INFO_NAME_LEN,
           j ? j->name : m->tendons[a->tendon].name);
  snprintf(out->actuator, sizeof out->actuator, "%.*s", ACH_ACTUATOR_NAME_LEN, a->name);
  return 0;
}
